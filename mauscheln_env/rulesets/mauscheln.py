"""`mauscheln`: modern Mauscheln ([001]) — RULES.md §2.1, with the options of §2.2.

Read beside RULES.md §2.1 and §2.2. The deal procedure (:func:`rules`), in the
order of §2.1:

1. ANTE — the dealer pays min(4, chips) (:class:`~mauscheln_env.engine.Ante`).
2. DEAL — pattern 1,1,T,1,1 from forehand (:class:`~mauscheln_env.engine.DealCards`).
3. VIERLING (option ``vierling``, §2.2, D19) — :class:`Vierling`.
4. KNOCK (option ``knock``, §2.2, D9, D23) — :class:`ModernKnock`; a knock goes to step 6.
5. DECLARE — :class:`Declare`: the first ``mauscheln`` makes the mauschler; all ``pass``: a throw-in.
6. GO_WITH — :class:`GoWith` (D7): every other seat once, from the mauschler's left; nobody: he takes the pot.
7. EXCHANGE — 0..min(4, stock) cards each (policy CAP, D3); a knocker takes the trump card
   (:class:`ModernKnockTurn`).
8. PLAY — 4 tricks, profile M, the mauschler leads.
9. SETTLE — §3.1 (:class:`PerTrickBete`, D4, D6), with the Belli penalty (D20, :class:`BelliPenalty`).
10. NEXT — the core: eliminations, the next dealer, the end of the session (§3.5).

Options: Belli (7D or the seven of trumps, D20) and Weli (6D, D21, D22) are
permanent trumps directly below the trump ace (:func:`special_trump_order`).
:class:`Declare`, :class:`GoWith`, :class:`PerTrickBete` and :class:`ModernKnockTurn`
are shared with ``mauscheln_classic`` and ``mousel``, whose rules build on these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mauscheln_env.cards import RANKS, SUITS, Deck, iter_bits
from mauscheln_env.engine import (
    Ante,
    Bidding,
    Deal,
    DealCards,
    DealKind,
    DealResult,
    Exchange,
    ExchangeTurn,
    Game,
    Phase,
    Play,
    Role,
    Rules,
    Scoring,
    ScoringRule,
    Settle,
    Stage,
    State,
    StockPolicy,
    TrickHook,
)
from mauscheln_env.errors import ConfigError
from mauscheln_env.observation import Cards, Piece
from mauscheln_env.options import (
    Options,
    bankroll_option,
    check_session_bound,
    deck_size_option,
    max_deals_option,
    max_session_deals_option,
    max_throw_ins_option,
    one_of,
    option,
    stake_option,
)
from mauscheln_env.rulesets.base import RulesetSpec
from mauscheln_env.tricks import TrickProfile


def knock_rank_option() -> Any:
    return option("Q", f"one rank letter of {RANKS!r} that the deck holds",
                  "Lowest trump-card rank on which the dealer may knock (D9).",
                  check=lambda v: len(v) == 1 and v in RANKS)


@dataclass(frozen=True)
class MauschelnOptions(Options):
    stake: int = stake_option(4, 4)
    bankroll: int = bankroll_option(40)
    deck_size: int | None = deck_size_option("32 for 3-5 players (33 with the Weli), 52 for 6-7 players")
    knock: bool = option(False, "True or False",
                         "Klopfen (RULES.md §2.2): the dealer may knock blind on a high trump card.")
    knock_min_rank: str = knock_rank_option()
    vierling: bool = option(False, "True or False",
                            "Vierling (§2.2): four of a rank dealt are shown, paid for and replaced.")
    belli: str | None = option(None, "None, '7D' or 'trump7'",
                               "Belli (§2.2): a permanent trump directly below the trump ace.",
                               check=one_of("7D", "trump7"))
    belli_penalty: str = option("pot", "'pot' or 'ace'",
                                "Who receives the Belli penalty when Belli and trump ace meet in a trick (D20).",
                                check=one_of("pot", "ace"))
    weli: bool = option(False, "True or False (3-5 players only)",
                        "Weli (§2.2): 6D added as a 33rd card, a permanent trump below the trump ace.")
    max_deals: int | None = max_deals_option()
    max_throw_ins: int = max_throw_ins_option()
    max_session_deals: int = max_session_deals_option()

    def check(self, num_players: int) -> None:
        if self.belli is not None and self.weli:
            raise ConfigError("options belli and weli are mutually exclusive (D21); choose one")
        check_session_bound(self)


def deck(num_players: int, opts: MauschelnOptions) -> Deck:
    """§1.2: 32 cards (A-7) for 3-5 players, 52 for 6-7; the Weli makes 33 (3-5 players only)."""
    derived = 32 if num_players <= 5 else 52
    if opts.weli:
        if num_players > 5:
            raise ConfigError(f"option weli=True is not allowed with {num_players} players: "
                              "the Weli needs the 32-card deck (3-5 players)")
        derived = 33
    if opts.deck_size is not None and opts.deck_size != derived:
        raise ConfigError(
            f"deck_size={opts.deck_size} is not allowed with {num_players} players in mauscheln: "
            "3-5 players play with 32 cards (A-7; 33 with the Weli), 6-7 players with 52"
        )
    if derived == 33:
        return Deck("AKQJT987", extra=("6D",))
    return Deck("AKQJT987") if derived == 32 else Deck(RANKS)


@dataclass(slots=True, eq=False)
class MauschelnDeal(Deal):
    """A deal of ``mauscheln``: the core deal plus the Vierling quartets shown and the Belli penalties due."""

    revealed: int = 0
    """Cards shown to everyone (Vierling quartets)."""
    belli_owed: list[tuple[int, int | None]] = field(default_factory=list)
    """Belli penalties due at settlement: (payer, receiver or None for the pot)."""

    def shown(self) -> int:
        return self.revealed


# ---------------------------------------------------------------------- step 3: Vierling


class Vierling(Stage):
    """§2.2 VIERLING: four of a rank dealt are shown and discarded, the stake paid, four new cards drawn.

    Checked from forehand, again on the new cards. D19: a stock too short for a
    replacement voids the deal; the same dealer redeals, without a new ante,
    and the quartet payments stay in the pot.
    """

    section = "§2.2 Vierling (D19)"

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        while not self._replace_quartets(g, st):
            g.redeal(st)
        return True

    def _replace_quartets(self, g: Game, st: State) -> bool:
        d = st.deal
        codes = g.deck.codes
        for s in g.order_from(st, g.forehand(st)):
            while True:
                hand = d.hands[s]
                if len({codes[c][0] for c in iter_bits(hand)}) != 1:
                    break
                if len(d.stock) < 4:
                    return False
                d.revealed |= hand
                d.discard_pile |= hand
                d.discards[s] |= hand
                d.hands[s] = 0
                g.ante(st, s)
                got = 0
                for _ in range(4):
                    got |= 1 << d.stock.pop()
                d.hands[s] = got
                d.drawn[s] |= got
        return True


# ---------------------------------------------------------------------- step 4: the knock


def may_knock(g: Game, st: State, min_rank: str) -> bool:
    """D9: the trump card ranks at least ``min_rank``."""
    return g.rank_pos[st.deal.trump_card] <= g.spec.rank_order.index(min_rank)


class BlindKnock(Stage):
    """The dealer's blind knock decision, when the trump card ranks at least ``min_rank`` (D9).

    :meth:`knocks` says what a knock does in the ruleset (here and in
    ``mauscheln_classic``: the dealer becomes mauschler; in ``mousel``: the
    committed player); declining lets the dealer see his hand.
    """

    section = "§2.2 Klopfen (D9)"
    phases = (Phase.KNOCK,)
    actions = {Phase.KNOCK: "`knock`, `no_knock` (the dealer, blind)"}

    def __init__(self, min_rank: str) -> None:
        self.min_rank = min_rank

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        if not may_knock(g, st, self.min_rank):
            return True
        st.deal.seen[st.session.dealer] = False  # the knock decision is blind
        g.ask(st, Phase.KNOCK, [st.session.dealer])
        return False

    def legal(self, g: Game, st: State, seat: int) -> list[int]:
        return [g.KNOCK, g.NO_KNOCK]

    def act(self, g: Game, st: State, seat: int, action: int, results: list[DealResult]) -> None:
        d = st.deal
        d.knocked = action == g.KNOCK
        if d.knocked:
            self.knocks(g, st, seat, results)
            return
        d.seen[seat] = True
        g.proceed(st, results)

    def knocks(self, g: Game, st: State, seat: int, results: list[DealResult]) -> None:
        raise NotImplementedError


class ModernKnock(BlindKnock):
    """§2.2 KNOCK, modern form: blind, right after the deal; a knocking dealer becomes mauschler (step 6 next)."""

    section = "§2.2 Klopfen (D9, D23)"

    def knocks(self, g: Game, st: State, seat: int, results: list[DealResult]) -> None:
        d = st.deal
        d.mauschler = seat
        d.roles[seat] = Role.MAUSCHLER
        g.goto(st, GoWith, results)

    def exchange_plan(self, mauschler: int, goers: list[int]) -> list[tuple[int, ExchangeTurn]]:
        """§2.2 step 3-4: the knocker exchanges first (taking the trump card), then the goers."""
        return [(mauschler, MODERN_KNOCK_TURN), *((s, NORMAL) for s in goers)]


class ModernKnockTurn(ExchangeTurn):
    """§2.2 KNOCK step 3 (D23): the knocker sees his hand, discards 1 <= |D| <= 4 (|D| - 1 <= stock) and
    receives the trump card plus |D| - 1 stock cards, which stay hidden from him until every goer has exchanged."""

    def open(self, g: Game, st: State, seat: int) -> None:
        d = st.deal
        d.seen[seat] = True  # he now looks at his hand
        d.xmin = 1
        d.xcap = g.stock.cap(len(d.stock), g.exchange_limit, extra=1)

    def finish(self, g: Game, st: State, seat: int, k: int) -> None:
        d = st.deal
        d.exchanged[seat] = k
        g.take_trump_card(st, seat)
        blind = g.draw(st, k - 1)
        d.hands[seat] |= blind
        d.drawn[seat] |= blind
        d.blind[seat] = blind


NORMAL = ExchangeTurn()
MODERN_KNOCK_TURN = ModernKnockTurn()


# ---------------------------------------------------------------------- steps 5-6: declare, go with


class Declare(Stage):
    """§2.1 step 5 DECLARE: from forehand to the dealer, ``mauscheln`` or ``pass``.

    The first ``mauscheln`` makes that seat the mauschler and ends the phase;
    if every seat passes it is a throw-in: the pot stays and the next dealer
    antes on top (§3.1 special cases). ``compulsion`` (classic Mauschelzwang)
    may leave a seat only ``mauscheln``.
    """

    section = "§2.1 step 5 declare"
    phases = (Phase.DECLARE,)
    actions = {Phase.DECLARE: "`mauscheln`, `pass`"}

    def __init__(self, compulsion: Any = None) -> None:
        self.compulsion = compulsion

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        g.ask(st, Phase.DECLARE, g.order_from(st, g.forehand(st)))
        return False

    def legal(self, g: Game, st: State, seat: int) -> list[int]:
        if self.compulsion is not None and self.compulsion.binds(g, st, seat):
            return [g.MAUSCHELN]
        return [g.MAUSCHELN, g.PASS]

    def act(self, g: Game, st: State, seat: int, action: int, results: list[DealResult]) -> None:
        d = st.deal
        if action == g.MAUSCHELN:
            d.mauschler = seat
            d.roles[seat] = Role.MAUSCHLER
            g.proceed(st, results)
            return
        d.roles[seat] = Role.DECLINED
        if not g.advance(st):
            results.append(g.throw_in(st))


class GoWith(Stage):
    """§2.1 step 6 GO_WITH (D7): from the mauschler's left over every other seat, ``go`` or ``pass``, once.

    A passer's hand is dead. Nobody goes: the mauschler takes the pot without
    play (step 10). Otherwise the exchange follows in the order ``knock``
    decides (a knocker first, with his special exchange), the mauschler leads.
    ``compulsion`` (classic Mitgehzwang, D14) may leave a seat only ``go``.
    """

    section = "§2.1 step 6 go with (D7)"
    phases = (Phase.GO_WITH,)
    actions = {Phase.GO_WITH: "`go`, `pass`"}

    def __init__(self, knock: Any = None, compulsion: Any = None) -> None:
        self.knock = knock
        self.compulsion = compulsion

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        m = st.deal.mauschler
        g.ask(st, Phase.GO_WITH, g.order_from(st, g.succ(st, m))[:-1])
        return False

    def legal(self, g: Game, st: State, seat: int) -> list[int]:
        if self.compulsion is not None and self.compulsion.binds(g, st, seat):
            return [g.GO]
        return [g.PASS, g.GO]

    def act(self, g: Game, st: State, seat: int, action: int, results: list[DealResult]) -> None:
        d = st.deal
        if action == g.GO:
            d.roles[seat] = Role.GOER
        else:
            g.fold(st, seat)
        if g.advance(st):
            return
        m = d.mauschler
        goers = [s for s in g.order_from(st, g.succ(st, m)) if d.roles[s] is Role.GOER]
        if not goers:
            results.append(g.settle_no_play(st, m))
            return
        d.participants = [m, *goers]
        if d.knocked and self.knock is not None:
            d.plan = self.knock.exchange_plan(m, goers)
        else:
            d.plan = [(m, NORMAL), *((s, NORMAL) for s in goers)]
        d.leader = m
        g.proceed(st, results)


# ---------------------------------------------------------------------- step 9: settlement


class BelliPenalty(TrickHook):
    """D20: the Belli and the trump ace in one trick cost the Belli's player min(S, chips) at settlement,
    paid into the pot (``belli_penalty='pot'``) or to the player of the ace (``'ace'``); not part of P."""

    def __init__(self, to_ace: bool) -> None:
        self.to_ace = to_ace

    def trick_done(self, g: Game, st: State, trick: list[tuple[int, int]]) -> None:
        d = st.deal
        belli = g.rules.belli_card[d.trump_suit]
        ace = g.rules.trump_ace[d.trump_suit]
        seat_of = {c: s for s, c in trick}
        if belli in seat_of and ace in seat_of:
            d.belli_owed.append((seat_of[belli], seat_of[ace] if self.to_ace else None))

    def settle(self, g: Game, st: State, credits: list[int], debits: list[int]) -> None:
        """After the bêtes: each penalty due is paid (what the payer has) to the pot or to the ace's player."""
        session = st.session
        for payer, receiver in st.deal.belli_owed:
            paid = g.pay(st, payer, g.stake)
            debits[payer] += paid
            if receiver is None:
                session.pot += paid
            else:
                session.chips[receiver] += paid
                credits[receiver] += paid


class PerTrickBete(ScoringRule):
    """§3.1: each participant receives ⌊P/4⌋ per trick (D4); then (D6) the mauschler owes P per trick short
    of 2, each goer P per trick short of 1, each paying what he has (D5); plus the Belli penalty (D20)."""

    kind = Scoring.PER_TRICK

    def __init__(self, penalty: BelliPenalty | None = None) -> None:
        self.penalty = penalty

    def owed(self, pot: int, need: int, tricks: int) -> int:
        return pot * max(0, need - tricks)

    def settle(self, g: Game, st: State) -> DealResult:
        session, d = st.session, st.deal
        n = g.n
        pot = session.pot
        credits = [0] * n
        debits = [0] * n
        g.credit_tricks(st, pot // g.num_tricks, credits)
        for s in d.participants:
            need = 2 if d.roles[s] in (Role.MAUSCHLER, Role.COMMITTED) else 1
            paid = g.pay(st, s, self.owed(pot, need, d.tricks_won[s]))
            debits[s] = paid
            session.pot += paid
        if self.penalty is not None:  # the Belli penalty is not part of P
            self.penalty.settle(g, st, credits, debits)
        return g.finish(st, DealKind.SETTLED, pot, credits, debits, d.mauschler)


# ---------------------------------------------------------------------- the rules


def special_trump_order(g: Game, trump_suit: int, suit_cards: list[int]) -> tuple[int, list[int]]:
    """§2.2 Belli / Weli: a permanent trump directly below the trump ace (D21, D22)."""
    special = g.rules.belli_card[trump_suit]
    if special is None:
        return 0, suit_cards
    rest = [c for c in suit_cards if c != special]
    ace = g.deck.index.get("A" + SUITS[trump_suit])
    top = [ace] if ace in rest else []
    return 1 << special, top + [special] + [c for c in rest if c not in top]


@dataclass
class MauschelnRules(Rules):
    belli_card: tuple[int | None, ...] = ()
    """The Belli or Weli card under each trump suit (None without them)."""
    trump_ace: tuple[int | None, ...] = ()


def _belli_cards(deck: Deck, opts: MauschelnOptions) -> tuple[int | None, ...]:
    if opts.weli:
        return (deck.index["6D"],) * 4
    if opts.belli == "7D":
        return (deck.index["7D"],) * 4
    if opts.belli == "trump7":
        return tuple(deck.index["7" + s] for s in SUITS)
    return (None,) * 4


def revealed_piece(g: Game, frame: str) -> Piece:
    return Piece("revealed", (g.num_cards,), "cards shown to everyone (Vierling quartets)", "d.revealed", Cards())


def rules(g: Game) -> Rules:
    o: MauschelnOptions = g.options
    knock = ModernKnock(o.knock_min_rank) if o.knock else None
    stages = [
        Ante(),
        DealCards(),
        *([Vierling()] if o.vierling else []),
        *([knock] if knock else []),
        Declare(),
        GoWith(knock=knock),
        Exchange(),
        Play(),
    ]
    belli = BelliPenalty(o.belli_penalty == "ace") if o.belli is not None else None
    scoring = PerTrickBete(belli)
    stages.append(Settle(scoring))
    return MauschelnRules(
        stages=stages,
        scoring=scoring,
        deal_pattern=SPEC.deal_pattern,
        stake=o.stake,
        trick_hooks=[belli] if belli else [],
        deal_class=MauschelnDeal,
        trump_order=special_trump_order,
        pieces=[revealed_piece] if o.vierling else [],
        belli_card=_belli_cards(g.deck, o),
        trump_ace=tuple(g.deck.index.get("A" + s) for s in SUITS),
    )


BRIEF = """\
Modern Mauscheln ([001], RULES.md §2.1). The dealer antes 4 and deals 1,1, turns
the trump card, then 1,1. From the dealer's left, seats declare in turn: the
first to say `mauscheln` becomes the *mauschler* and must take two of the four
tricks; if all say `pass` the deal is thrown in and the pot grows. Then every
other seat decides once whether to `go` with him (needing one trick) or `pass`
(the hand is dead). Players exchange up to four cards from the stock (never
more than it holds), and four tricks are played: follow suit and beat if you
can, else trump (and beat if you can). Each trick pays a quarter of the pot;
whoever misses his target pays the pot once per missing trick into the next pot.

Options: the dealer's blind **knock** on a high trump card (he becomes mauschler,
then swaps cards for the trump card plus blind stock cards); **Vierling** (four
of a rank dealt are shown, paid for and replaced); **Belli** (7D, or the seven of
trumps, is a trump just below the trump ace; meeting the ace costs its player
the stake); **Weli** (6D as a 33rd card and a permanent trump)."""
"""The rules in brief, for the ruleset's documentation page."""

DECLARE_ROLES = ("undecided", "declined", "mauschler", "goer", "out")

SPEC = RulesetSpec(
    name="mauscheln",
    section="§2.1, §2.2",
    min_players=3,
    max_players=7,
    direction=+1,
    hand_size=4,
    deal_pattern=(1, 1, "T", 1, 1),
    rank_order="AKQJT98765432",
    trick_profile=TrickProfile.M,
    stock_policy=StockPolicy.CAP,
    bidding=Bidding.DECLARE,
    scoring=Scoring.PER_TRICK,
    phases=("knock", "declare", "go_with", "exchange", "play"),
    roles=DECLARE_ROLES,
    named_actions=("knock", "no_knock", "mauscheln", "pass", "go", "done"),
    options_class=MauschelnOptions,
    deck_for=deck,
    rules=rules,
    brief=BRIEF,
    showcase={"knock": True, "vierling": True, "belli": "7D"},
    doc="Modern Mauscheln ([001]): 4 cards, four tricks, declare / go with / exchange / play.",
)
