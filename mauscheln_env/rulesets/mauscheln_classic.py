"""`mauscheln_classic`: classic Mauscheln ([000]) — RULES.md §2.3, with the cap of §3.2.

Read beside RULES.md §2.3. The deal procedure (:func:`rules`), in its order:

1. DEALER_OFFER / ANTE — :class:`ClassicStakes`: the dealer pays S, or with ``schieben`` the seat due to deal
   pays S and chooses ``deal`` or ``push`` (D16); then the cap normalisation (§3.2, D17); *new pot* (D15).
2. DEAL — pattern 2,T,2 from forehand (:class:`~mauscheln_env.engine.DealCards`).
3. FORCED KNOCK (option ``forced_knock_new_pot``, on a new pot) — :class:`ForcedKnock` (D10): everyone plays.
4. VOLUNTARY KNOCK (option ``knock``, default on; D9) — :class:`ClassicKnock`: go with (4a), the dealer's blind
   draw (4b, :class:`ClassicBlindTurn`), the goers (4c), the dealer's final swap for the trump card (4d, D10,
   :class:`ClassicFinalTurn`); the trump card stays out of any reshuffle (D11).
5. DECLARE — as in mauscheln (:class:`~mauscheln_env.rulesets.mauscheln.Declare`), with :class:`Mauschelzwang`
   (D13) as an option; a pass round voids the deal and the next dealer stakes again.
6. GO_WITH — as in mauscheln (D7), with :class:`Mitgehzwang` (D14) as an option; no late joining.
7. EXCHANGE — 0-4 cards each; shortage policy RESHUFFLE+TRUMP (§1.7).
8. PLAY — 4 tricks, profile M.
9. SETTLE — §3.1 with per-missing-trick bêtes (:class:`~mauscheln_env.rulesets.mauscheln.PerTrickBete`).
10. NEXT — dealer := succ(actual dealer) (D16; the core).
"""

from __future__ import annotations

from dataclasses import dataclass

from mauscheln_env.cards import SUITS, Deck
from mauscheln_env.engine import (
    Bidding,
    Deal,
    DealCards,
    DealResult,
    Exchange,
    ExchangeTurn,
    Game,
    Phase,
    Play,
    Role,
    Rules,
    Scoring,
    Settle,
    Stage,
    State,
    StockPolicy,
)
from mauscheln_env.errors import ConfigError
from mauscheln_env.observation import Numbers, Piece
from mauscheln_env.options import (
    MAX_AMOUNT,
    Options,
    bankroll_option,
    check_session_bound,
    deck_size_option,
    max_deals_option,
    max_session_deals_option,
    max_throw_ins_option,
    multiple_of,
    option,
    stake_option,
)
from mauscheln_env.rulesets.base import RulesetSpec
from mauscheln_env.rulesets.mauscheln import (
    DECLARE_ROLES,
    NORMAL,
    Declare,
    GoWith,
    ModernKnock,
    PerTrickBete,
    knock_rank_option,
)
from mauscheln_env.tricks import TrickProfile


@dataclass(frozen=True)
class ClassicOptions(Options):
    stake: int = stake_option(4, 4)
    bankroll: int = bankroll_option(200)
    deck_size: int | None = deck_size_option("24 for 3-4 players, 32 for 5-6 (or 32 always with classic_always_32)")
    classic_always_32: bool = option(False, "True or False", "Play every table with 32 cards (D2).")
    knock: bool = option(True, "True or False", "The classic voluntary knock (§2.3 step 4).")
    knock_min_rank: str = knock_rank_option()
    cap: int | None = option(None, f"None or a multiple of 4 >= stake, at most {MAX_AMOUNT}",
                             "Pot cap C with its reserve (§3.2).", check=multiple_of(4))
    mauschelzwang: bool = option(False, "True or False", "The trump-ace holder must declare (D13).")
    mitgehzwang: bool = option(False, "True or False", "The last seat must go with when everyone before passed (D14).")
    forced_knock_new_pot: bool = option(False, "True or False",
                                        "On a new pot the dealer is mauschler and everyone plays (§2.3 step 3).")
    schieben: bool = option(False, "True or False", "The seat due to deal may push the deal on (§2.3 step 1).")
    max_deals: int | None = max_deals_option()
    max_throw_ins: int = max_throw_ins_option()
    max_session_deals: int = max_session_deals_option()

    def check(self, num_players: int) -> None:
        if self.cap is not None and self.cap < self.stake:
            raise ConfigError(f"option cap={self.cap} is below the stake {self.stake}; "
                              "allowed: a multiple of 4 >= stake")
        check_session_bound(self)


def deck(num_players: int, opts: ClassicOptions) -> Deck:
    """§1.2 (D2): 24 cards (A-9) for 3-4 players, 32 (A-7) for 5-6; ``classic_always_32`` gives 32 to every table."""
    derived = 32 if num_players >= 5 or opts.classic_always_32 else 24
    if opts.deck_size is not None and opts.deck_size != derived:
        raise ConfigError(
            f"deck_size={opts.deck_size} is not allowed with {num_players} players in mauscheln_classic: 3-4 players "
            "play with 24 cards (A-9), 5-6 with 32 (A-7); classic_always_32=True gives 32 to every table (D2)"
        )
    return Deck("AKQJT9") if derived == 24 else Deck("AKQJT987")


@dataclass(slots=True, eq=False)
class ClassicDeal(Deal):
    """A classic deal: the core deal plus the stakes (pushes, whether the pot is new)."""

    pushes: int = 0
    """Times the deal was pushed on (Schieben)."""
    pot_was_empty: bool = False
    """Pot and reserve were empty when the deal began (before any stake)."""
    new_pot: bool = False
    """D15: the pot holds exactly the dealer's single stake (no carry-over, no push, no top-up)."""


# ---------------------------------------------------------------------- step 1: stakes, offer, cap


class ClassicStakes(Stage):
    """§2.3 step 1: the dealer pays S, or with ``schieben`` the offer to deal or push; then §3.2's cap.

    Schieben: the seat due to deal pays S and chooses ``deal`` or ``push``; on
    ``push`` the offer passes to succ, who pays S and chooses in turn; when the
    offer would return to the first seat, that seat pays S again and must deal.
    The pack is not dealt during the offer.
    """

    section = "§2.3 step 1 (D15, D16, D17)"
    phases = (Phase.OFFER,)
    actions = {Phase.OFFER: "`deal`, `push` (the seat due to deal, with `schieben`)"}

    def __init__(self, schieben: bool, cap: int | None) -> None:
        self.schieben = schieben
        self.cap = cap

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        session, d = st.session, st.deal
        if d.stakes_paid:
            # Rebuilt after the stakes (a search): a new pot holds exactly one stake and no reserve (D15;
            # a short ante on a carried pot could look the same, which the stakes alone cannot tell).
            d.new_pot = session.pot == g.stake and session.reserve == 0
            return True
        d.pot_was_empty = session.pot == 0 and session.reserve == 0
        g.ante(st, session.dealer)
        if self.schieben:
            g.ask(st, Phase.OFFER, [session.dealer])
            return False
        self._normalise(st)
        return True

    def legal(self, g: Game, st: State, seat: int) -> list[int]:
        if st.deal.pushes >= sum(st.session.alive):
            return [g.DEAL]  # the offer would return to the first seat: he must deal
        return [g.DEAL, g.PUSH]

    def act(self, g: Game, st: State, seat: int, action: int, results: list[DealResult]) -> None:
        if action == g.PUSH:
            st.deal.pushes += 1
            nxt = g.succ(st, seat)
            g.ante(st, nxt)  # back at the first seat after a full round: he pays again and must deal
            g.ask(st, Phase.OFFER, [nxt])
            return
        st.session.dealer = seat
        self._normalise(st)
        g.proceed(st, results)

    def _normalise(self, st: State) -> None:
        """§3.2 (D17): above the cap the overflow goes to the reserve; below it the reserve tops the pot up."""
        session, d = st.session, st.deal
        topped = False
        if self.cap is not None:
            if session.pot > self.cap:
                session.reserve += session.pot - self.cap
                session.pot = self.cap
            elif session.reserve:
                x = min(session.reserve, self.cap - session.pot)
                topped = x > 0
                session.pot += x
                session.reserve -= x
        d.new_pot = d.pot_was_empty and d.pushes == 0 and not topped


# ---------------------------------------------------------------------- steps 3-4: the knocks


class ClassicBlindTurn(ExchangeTurn):
    """4b: the knocking dealer sees his 4 cards, discards 0-4 and takes as many from the stock, blind."""

    def open(self, g: Game, st: State, seat: int) -> None:
        d = st.deal
        d.seen[seat] = True
        d.xmin = 0
        d.xcap = g.exchange_limit

    def finish(self, g: Game, st: State, seat: int, k: int) -> None:
        d = st.deal
        d.exchanged[seat] = k
        blind = g.draw(st, k)
        d.hands[seat] |= blind
        d.drawn[seat] |= blind
        d.blind[seat] = blind


class ClassicFinalTurn(ExchangeTurn):
    """4d / forced knock (D10): the dealer picks up, discards exactly 1 card and takes the trump card."""

    def open(self, g: Game, st: State, seat: int) -> None:
        d = st.deal
        d.seen[seat] = True
        d.blind[seat] = 0  # 4d: he picks up and sees his cards
        d.xmin = d.xcap = 1

    def finish(self, g: Game, st: State, seat: int, k: int) -> None:
        g.take_trump_card(st, seat)


BLIND_TURN = ClassicBlindTurn()
FINAL_TURN = ClassicFinalTurn()


class ForcedKnock(Stage):
    """§2.3 step 3: on a new pot the dealer is mauschler whatever the trump card, every other seat plays
    (no go-with decisions) and nobody exchanges; he discards exactly 1 card and takes the trump card (D10)."""

    section = "§2.3 step 3 forced knock (D10, D15)"

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        d = st.deal
        if not d.new_pot:
            return True
        dealer = st.session.dealer
        d.mauschler = dealer
        d.knocked = True
        for s in g.order_from(st, dealer):
            d.roles[s] = Role.MAUSCHLER if s == dealer else Role.GOER
        d.participants = g.order_from(st, dealer)
        d.plan = [(dealer, FINAL_TURN)]
        d.leader = dealer
        g.goto(st, Exchange, results)
        return False


class ClassicKnock(ModernKnock):
    """§2.3 step 4: the voluntary knock, blind, on a trump card of at least ``knock_min_rank`` (D9).

    A knocking dealer becomes mauschler (DECLARE and Mauschelzwang are
    skipped); the others go with from forehand (4a); then 4b-4d as the
    exchange plan, and the dealer leads (4e).
    """

    section = "§2.3 step 4 voluntary knock (D9, D10, D11)"

    def exchange_plan(self, mauschler: int, goers: list[int]) -> list[tuple[int, ExchangeTurn]]:
        """4b: the knocker draws blind; 4c: the goers; 4d: the knocker discards one and takes the trump card."""
        return [(mauschler, BLIND_TURN), *((s, NORMAL) for s in goers), (mauschler, FINAL_TURN)]


# ---------------------------------------------------------------------- the compulsions


class Mauschelzwang:
    """D13: a seat holding the trump ace may only declare, while nobody has (the first declaration ends the phase)."""

    def binds(self, g: Game, st: State, seat: int) -> bool:
        d = st.deal
        ace = g.deck.index.get("A" + SUITS[d.trump_suit])
        return ace is not None and bool(d.hands[seat] >> ace & 1)


class Mitgehzwang:
    """D14: the last seat of the go-with order must go with if every earlier seat passed (even without trumps)."""

    def binds(self, g: Game, st: State, seat: int) -> bool:
        d = st.deal
        return st.qpos == len(st.queue) - 1 and not any(d.roles[s] is Role.GOER for s in st.queue[:-1])


# ---------------------------------------------------------------------- the rules


def _pieces(o: ClassicOptions) -> list:
    pieces = [Piece("trump_face_up", (1,), "1 while the trump card lies face up", "(float(d.trump_face_up),)",
                    Numbers((1.0,)))]
    if o.cap is not None:
        pieces.append(Piece("reserve", (1,), "reserve of the pot cap / bankroll", "(s.reserve,)",
                            Numbers((1.0 / o.bankroll,))))
    if o.schieben:
        pieces.append(Piece("pushes", (1,), "times the deal was pushed this deal / seats", "(d.pushes / s.n,)",
                            Numbers((1.0,))))
    return pieces


def rules(g: Game) -> Rules:
    o: ClassicOptions = g.options
    knock = ClassicKnock(o.knock_min_rank) if o.knock else None
    scoring = PerTrickBete()
    stages = [
        ClassicStakes(o.schieben, o.cap),
        DealCards(),
        *([ForcedKnock()] if o.forced_knock_new_pot else []),
        *([knock] if knock else []),
        Declare(compulsion=Mauschelzwang() if o.mauschelzwang else None),
        GoWith(knock=knock, compulsion=Mitgehzwang() if o.mitgehzwang else None),
        Exchange(),
        Play(),
        Settle(scoring),
    ]
    return Rules(
        stages=stages,
        scoring=scoring,
        deal_pattern=SPEC.deal_pattern,
        stake=o.stake,
        deal_class=ClassicDeal,
        pieces=_pieces(o),
    )


BRIEF = """\
Classic Mauscheln ([000], RULES.md §2.3). 24 cards for 3-4 players (A-9), 32 for
5-6; dealt 2, trump card, 2; a bank of 200 chips and a stake S (multiple of 4).
The dealer may **knock** blind on a trump card of at least `knock_min_rank`: the
others decide whether to go with him; he then discards any number of cards and
draws as many blind, the goers exchange, and he finally picks up, discards
exactly one card and takes the trump card. Otherwise seats declare and go with
as in the modern game; a pass round voids the deal and the next dealer stakes
again. When the stock runs out, the discard pile and the face-up trump card are
reshuffled (the trump card stays out after a knock).

Options: **Mauschelzwang** (the trump-ace holder must declare), **Mitgehzwang**
(the last seat must go with if everyone before passed), the **forced knock** on
a new pot (the dealer plays against everyone, swapping one card for the trump
card), the **pot cap** C with its reserve, and **Schieben** (the seat due to deal
stakes and may push the deal on; after a full round he stakes again and deals)."""
"""The rules in brief, for the ruleset's documentation page."""

SPEC = RulesetSpec(
    name="mauscheln_classic",
    section="§2.3, §3.2",
    min_players=3,
    max_players=6,
    direction=+1,
    hand_size=4,
    deal_pattern=(2, "T", 2),
    rank_order="AKQJT98765432",
    trick_profile=TrickProfile.M,
    stock_policy=StockPolicy.RESHUFFLE_TRUMP,
    bidding=Bidding.DECLARE,
    scoring=Scoring.PER_TRICK,
    phases=("offer", "knock", "declare", "go_with", "exchange", "play"),
    roles=DECLARE_ROLES,
    named_actions=("knock", "no_knock", "mauscheln", "pass", "go", "done", "deal", "push"),
    options_class=ClassicOptions,
    deck_for=deck,
    rules=rules,
    brief=BRIEF,
    showcase={"cap": 40, "schieben": True, "forced_knock_new_pot": True, "mauschelzwang": True, "mitgehzwang": True},
    doc="Classic Mauscheln ([000]): 2,T,2 deal, voluntary knock with blind draws, compulsions, cap, pushing.",
)
