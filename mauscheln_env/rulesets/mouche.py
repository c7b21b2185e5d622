"""`mouche`: French Mouche (1718, Lalanne's reconstruction, [003]) — RULES.md §2.5, §2.6 and §3.3.

Read beside RULES.md §2.5-2.6. The deal procedure (:func:`rules`), in its order:

1. ANTE — the dealer pays 5 (:class:`~mauscheln_env.engine.Ante`); with the queue, the head of the queue
   enters the pot too (:class:`QueueIntoPot`, D32; Balzac's largest-first as ``queue_order='largest'``).
2. DEAL — counter-clockwise from forehand (the dealer's right), 3 then 2 cards (2 then 3 with ``deal_2_3``),
   then the trump card (:class:`~mauscheln_env.engine.DealCards`).
   Pamphile (option, §2.6): a turned-up JC lets the dealer name trump after seeing his hand
   (:class:`NameTrump`, D30); its holder may announce it for 1 chip from each other seat (:class:`PamphileBonus`,
   D29); JC is the highest trump (:func:`pamphile_trump_order`).
3. DECIDE — :class:`Decide`: from forehand to the dealer, once each, ``pass`` (dead hand), ``stay``, or a card
   to start an exchange of 1-5 cards, drawn at once (RESHUFFLE, D26); the lone rule. Béatrix (option, D31):
   the dealer may first ``swap`` a card for the trump card (:class:`Beatrix`).
4. MOUCHE CHECK — :class:`MoucheCheck`: a seat that stayed with five dealt cards of one suit takes the pot
   (trump suit first, then points, then the seat nearer the dealer's right); every other seat still in pays
   it (D27); no tricks.
5. PLAY — 5 tricks, profile F, from the first seat still in from forehand.
6. SETTLE — §3.3 (:class:`MoucheScoring`): ⌊P/5⌋ per trick; a seat without a trick "makes the mouche" and pays P
   (Méry's cap ``mery_cap``, D33; with the queue, into escrow).
7. NEXT — dealer := forehand (the right neighbour); ``rounds`` full rounds end the session (D34).

:class:`Decide` and :class:`DecideTurn` serve ``muschka`` too (RULES.md §2.7 inherits Mouche's deciding).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mauscheln_env.cards import RANKS, Deck, iter_bits
from mauscheln_env.engine import (
    PLAYING_ROLES,
    Ante,
    Bidding,
    Deal,
    DealCards,
    DealKind,
    DealResult,
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
    plain_trump_order,
)
from mauscheln_env.errors import ConfigError
from mauscheln_env.observation import Numbers, Piece, SeatOneHot
from mauscheln_env.options import (
    MAX_AMOUNT,
    Options,
    at_least,
    bankroll_option,
    check_session_bound,
    deck_size_option,
    max_deals_option,
    max_session_deals_option,
    max_throw_ins_option,
    multiple_of,
    one_of,
    option,
    stake_option,
)
from mauscheln_env.rulesets.base import RulesetSpec
from mauscheln_env.tricks import TrickProfile


@dataclass(frozen=True)
class MoucheOptions(Options):
    stake: int = stake_option(5, 5)
    bankroll: int = bankroll_option(50)
    deck_size: int | None = deck_size_option("28/36/48/52 for 3/4/5/6 players (D25)")
    deal_2_3: bool = option(False, "True or False", "Deal 2 then 3 cards instead of 3 then 2.")
    queue: bool = option(False, "True or False",
                         "One mouche after another: payments wait in escrow and enter one per deal (§2.6).")
    queue_order: str = option("fifo", "'fifo' or 'largest'", "Which queued item enters the pot first (Balzac: largest).",
                              check=one_of("fifo", "largest"))
    collect_1730: bool = option(True, "True or False", "A mouche-hand winner also takes the whole queue.")
    mery_cap: int | None = option(None, f"None or a positive multiple of 5, at most {MAX_AMOUNT}",
                                  "Méry's cap M on every mouche payment (D33).", check=multiple_of(5))
    pamphile: bool = option(False, "True or False", "JC is the highest trump (Pamphile/Mistigri).")
    pamphile_wild: bool = option(False, "True or False", "The Pamphile completes a mouche of any suit.")
    pamphile_bonus: bool = option(True, "True or False",
                                  "With pamphile: its holder may announce it for 1 chip from each other seat (D29).")
    beatrix: bool = option(False, "True or False", "The dealer may swap a card for the trump card (D31).")
    rounds: int | None = option(None, "None or a whole number >= 1",
                                "End the session after this many full rounds of dealers (D34).", check=at_least(1))
    max_deals: int | None = max_deals_option()
    max_throw_ins: int = max_throw_ins_option()
    max_session_deals: int = max_session_deals_option()

    def check(self, num_players: int) -> None:
        if self.pamphile_wild and not self.pamphile:
            raise ConfigError("option pamphile_wild=True needs pamphile=True")
        check_session_bound(self)


_RANKS_BY_PLAYERS = {3: "KQJAT98", 4: "KQJAT9876", 5: "KQJAT9876543", 6: "KQJAT98765432"}


def deck(num_players: int, opts: MoucheOptions) -> Deck:
    """D25: 28/36/48/52 cards for 3/4/5/6 players (K Q J A T 9 8 down to 7, 6, 3, 2)."""
    ranks = _RANKS_BY_PLAYERS[num_players]
    if opts.deck_size is not None and opts.deck_size != 4 * len(ranks):
        raise ConfigError(f"deck_size={opts.deck_size} is not allowed with {num_players} players in mouche: "
                          "3/4/5/6 players use 28/36/48/52 cards (D25)")
    return Deck("".join(r for r in RANKS if r in ranks))


@dataclass(slots=True, eq=False)
class MoucheDeal(Deal):
    """A Mouche deal: the core deal plus Béatrix's swap and the Pamphile announcement."""

    swapped: bool = False
    """The dealer swapped a card for the trump card (Béatrix); he can no longer have a mouche (D31)."""
    announced: int | None = None
    """The seat that announced the Pamphile (D29)."""


# ---------------------------------------------------------------------- step 1: the queue


class QueueIntoPot(Stage):
    """§2.6 queue (D32): at each ante one queued item (the oldest, or the largest) enters the pot."""

    section = "§2.6 queue (D32)"

    def __init__(self, largest: bool) -> None:
        self.largest = largest

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        escrow = st.session.escrow
        if escrow and not st.deal.stakes_paid:
            i = max(range(len(escrow)), key=lambda k: escrow[k]) if self.largest else 0
            st.session.pot += escrow.pop(i)
        return True


# ---------------------------------------------------------------------- step 2: Pamphile


def pamphile_trump_order(g: Game, trump_suit: int, suit_cards: list[int]) -> tuple[int, list[int]]:
    """§2.6 Pamphile: JC is the highest trump, above the trump K, whatever suit is trump."""
    jc = g.deck.index["JC"]
    return 1 << jc, [jc, *(c for c in suit_cards if c != jc)]


class NameTrump(Stage):
    """D30: a turned-up Pamphile (JC): the dealer looks at his hand and names the trump suit; JC stays out."""

    section = "§2.6 Pamphile turned up (D30)"
    phases = (Phase.NAME_TRUMP,)
    actions = {Phase.NAME_TRUMP: "`trump:C`, `trump:S`, `trump:H`, `trump:D` (dealer, Pamphile turned up)"}

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        if st.deal.trump_card != g.deck.index["JC"]:
            return True
        g.ask(st, Phase.NAME_TRUMP, [st.session.dealer])
        return False

    def legal(self, g: Game, st: State, seat: int) -> list[int]:
        return list(g.TRUMP_BY_SUIT)

    def act(self, g: Game, st: State, seat: int, action: int, results: list[DealResult]) -> None:
        suit = g.TRUMP_BY_SUIT.index(action)
        st.deal.trump_suit = suit
        st.deal.tables = g.tables[suit]
        g.proceed(st, results)


class PamphileBonus(Stage):
    """D29: after the deal, the Pamphile's holder may ``announce`` it (min(1, chips) from every other seat)."""

    section = "§2.6 Pamphile bonus (D29)"
    phases = (Phase.ANNOUNCE,)
    actions = {Phase.ANNOUNCE: "`announce`, `silent` (the Pamphile's holder)"}

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        jc = g.deck.index["JC"]
        holder = next((s for s in range(g.n) if st.deal.hands[s] >> jc & 1), None)
        if holder is None:
            return True
        g.ask(st, Phase.ANNOUNCE, [holder])
        return False

    def legal(self, g: Game, st: State, seat: int) -> list[int]:
        return [g.ANNOUNCE, g.SILENT]

    def act(self, g: Game, st: State, seat: int, action: int, results: list[DealResult]) -> None:
        if action == g.ANNOUNCE:
            st.deal.announced = seat
            chips = st.session.chips
            for s in range(g.n):
                if s != seat and st.session.alive[s]:
                    paid = g.pay(st, s, 1)
                    chips[seat] += paid
        g.proceed(st, results)


# ---------------------------------------------------------------------- step 3: deciding


class DecideTurn(ExchangeTurn):
    """An exchange chosen while deciding: 1-5 cards (the first marked already), drawn at once; back to deciding."""

    def after(self, g: Game, st: State, results: list[DealResult]) -> None:
        st.phase = Phase.DECIDE
        st.deal.xturns = []
        g.stage(st).next_seat(g, st, results)


DECIDE_TURN = DecideTurn()


class Beatrix:
    """D31: at his turn the dealer may ``swap`` a card for the face-up trump card (not a turned-up Pamphile),
    then ``stay`` or exchange; after a swap he may not pass, and he can no longer have a mouche."""

    note = "; the dealer with Béatrix: `swap`"

    def __init__(self, pamphile: bool) -> None:
        self.pamphile = pamphile

    def extra_actions(self, g: Game, st: State, seat: int) -> list[int]:
        d = st.deal
        if seat == st.session.dealer and not d.swapped and d.trump_face_up \
                and not (self.pamphile and d.trump_card == g.deck.index["JC"]):
            return [g.SWAP]
        return []

    def forbids_pass(self, g: Game, st: State, seat: int) -> bool:
        return st.deal.swapped


class Decide(Stage):
    """§2.5 step 3 DECIDE: from forehand to the dealer, once each: ``pass``, ``stay``, or a card to exchange.

    The lone rule: a seat whose turn comes when every other seat has passed
    takes the deal without deciding; a single seat left after the dealer's
    turn too. ``hooks`` add actions or forbid passing (Béatrix, Muschka's ace
    of spades): each has ``extra_actions(g, st, seat)`` and ``forbids_pass(g, st, seat)``.
    """

    section = "§2.5 step 3 decide"
    phases = (Phase.DECIDE, Phase.SWAP)

    def __init__(self, hooks: Sequence[Any] = ()) -> None:
        self.hooks = tuple(hooks)
        self.actions = {
            Phase.DECIDE: "`stay`, `pass`, or a card code to start an exchange by discarding it"
                          + "".join(h.note for h in self.hooks),
            Phase.SWAP: "a card code: the card the dealer gives for the trump card",
        }

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        g.ask(st, Phase.DECIDE, g.order_from(st, g.forehand(st)))  # nobody has passed: no lone seat yet
        return False

    def legal(self, g: Game, st: State, seat: int) -> list[int]:
        hand = st.deal.hands[seat]
        if st.phase is Phase.SWAP:
            return list(iter_bits(hand))
        acts = list(iter_bits(hand))  # a card starts an exchange by discarding it
        acts.append(g.STAY)
        if not any(h.forbids_pass(g, st, seat) for h in self.hooks):
            acts.append(g.PASS)
        for h in self.hooks:
            acts.extend(h.extra_actions(g, st, seat))
        return sorted(acts)

    def act(self, g: Game, st: State, seat: int, action: int, results: list[DealResult]) -> None:
        d = st.deal
        if st.phase is Phase.SWAP:
            bit = 1 << action
            d.hands[seat] ^= bit
            d.discards[seat] |= bit
            d.discard_pile |= bit
            g.take_trump_card(st, seat)
            d.swapped = True
            st.phase = Phase.DECIDE  # the dealer now stays or exchanges
            return
        if action == g.PASS:
            g.fold(st, seat)
        elif action == g.STAY:
            d.roles[seat] = Role.STAYED
        elif action == g.SWAP:
            st.phase = Phase.SWAP
            return
        else:
            d.roles[seat] = Role.EXCHANGED
            d.marked = 0
            g.mark(st, seat, action)
            st.phase = Phase.EXCHANGE
            d.xturns = [DECIDE_TURN] * len(st.queue)
            d.xmin = 1
            d.xcap = g.hand_size
            return
        self.next_seat(g, st, results)

    def next_seat(self, g: Game, st: State, results: list[DealResult]) -> None:
        """After a decision: the next seat (or the lone rule), else the deal goes on with the seats still in."""
        d = st.deal
        if g.advance(st):
            seat = st.to_act
            alive = st.session.alive
            if all(d.roles[s] is Role.OUT for s in range(g.n) if alive[s] and s != seat):
                d.roles[seat] = Role.STAYED
                results.append(g.scoring.settle_lone(g, st, seat))
            return
        players = [s for s in g.order_from(st, g.forehand(st)) if d.roles[s] in PLAYING_ROLES]
        if len(players) == 1:
            results.append(g.scoring.settle_lone(g, st, players[0]))
            return
        d.leader = players[0]
        g.proceed(st, results)


# ---------------------------------------------------------------------- step 4: the mouche check

POINTS = {"A": 10, "K": 10, "Q": 10, "J": 10, "T": 10}
"""Mouche hand points: A, K, Q, J (and the ten, by pip value) count 10, others their pip value."""


class MoucheCheck(Stage):
    """§2.5 step 4: the best mouche among the seats that stayed with five dealt cards of one suit wins."""

    section = "§2.5 step 4 mouche (D27)"

    def __init__(self, scoring: MoucheScoring, pamphile_wild: bool) -> None:
        self.scoring = scoring
        self.pamphile_wild = pamphile_wild

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        players = [s for s in g.order_from(st, g.forehand(st)) if st.deal.roles[s] in PLAYING_ROLES]
        best, best_key = None, None
        for rank, s in enumerate(players):  # players are in decision order from forehand
            m = self.mouche_of(g, st, s)
            if m is None:
                continue
            key = (m[0], m[1], -rank)
            if best_key is None or key > best_key:
                best, best_key = s, key
        if best is None:
            return True
        results.append(self.scoring.settle_mouche_hand(g, st, best, players))
        return False

    def mouche_of(self, g: Game, st: State, seat: int) -> tuple[bool, int, int] | None:
        """(is trump, points, suit) when ``seat`` stayed with a flush of dealt cards."""
        d = st.deal
        if d.roles[seat] is not Role.STAYED or (d.swapped and seat == st.session.dealer):
            return None
        jc = g.deck.index.get("JC")
        suits = set()
        points = 0
        for c in iter_bits(d.hands[seat]):
            code = g.deck.codes[c]
            points += POINTS.get(code[0], int(code[0]) if code[0].isdigit() else 10)
            if self.pamphile_wild and c == jc:
                continue
            suits.add(g.deck.suit[c])
        if len(suits) != 1:
            return None
        suit = suits.pop()
        return (suit == d.trump_suit, points, suit)


# ---------------------------------------------------------------------- step 6: settlement


class MoucheScoring(ScoringRule):
    """§3.3: a lone seat takes P; a mouche hand takes P (and the queue under 1730), every other seat still in
    pays; otherwise ⌊P/5⌋ per trick, and a seat in play without a trick pays P ("makes the mouche")."""

    kind = Scoring.MOUCHE

    def __init__(self, queue: bool, collect_1730: bool, mery_cap: int | None) -> None:
        self.queue = queue
        self.collect_1730 = collect_1730
        self.mery_cap = mery_cap

    def payment(self, g: Game, st: State, seat: int, pot: int) -> int:
        """One mouche payment: min(P, M, chips) (D33)."""
        return g.pay(st, seat, pot if self.mery_cap is None else min(pot, self.mery_cap))

    def collect(self, st: State, payments: list[int]) -> None:
        """Mouche payments go to the pot, or with the queue each becomes an escrow item (D32)."""
        for paid in payments:
            if not paid:
                continue
            if self.queue:
                st.session.escrow.append(paid)
            else:
                st.session.pot += paid

    def settle_mouche_hand(self, g: Game, st: State, winner: int, players: list[int]) -> DealResult:
        session = st.session
        pot = session.pot
        credits = [0] * g.n
        debits = [0] * g.n
        credits[winner] = pot
        session.pot = 0
        if self.queue and self.collect_1730 and session.escrow:
            credits[winner] += sum(session.escrow)
            session.escrow = []
        session.chips[winner] += credits[winner]
        payments = []
        for s in players:
            if s != winner:
                debits[s] = self.payment(g, st, s, pot)
                payments.append(debits[s])
        self.collect(st, payments)
        return g.finish(st, DealKind.MOUCHE, pot, credits, debits, winner)

    def settle(self, g: Game, st: State) -> DealResult:
        d = st.deal
        pot = st.session.pot
        credits = [0] * g.n
        debits = [0] * g.n
        g.credit_tricks(st, pot // g.num_tricks, credits)
        payments = []
        for s in g.order_from(st, g.forehand(st)):
            if s in d.participants and d.tricks_won[s] == 0:
                debits[s] = self.payment(g, st, s, pot)
                payments.append(debits[s])
        self.collect(st, payments)
        return g.finish(st, DealKind.SETTLED, pot, credits, debits, None)


# ---------------------------------------------------------------------- the rules


class RoundsOver:
    """D34: the session ends after ``rounds`` full rounds, every seat having dealt equally often (an end hook)."""

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds

    def __call__(self, g: Game, st: State) -> bool:
        return st.session.deals_settled >= self.rounds * g.n


def rounds_over(rounds: int) -> RoundsOver:
    """The end hook of ``rounds`` full rounds (D34)."""
    return RoundsOver(rounds)


def _pieces(o: MoucheOptions) -> list:
    pieces: list = []
    if o.queue:
        pieces.append(Piece("escrow", (2,), "[queued mouche payments / bankroll, queued items / seats]",
                            "(sum(s.escrow), len(s.escrow) / s.n)", Numbers((1.0 / o.bankroll, 1.0))))
    if o.pamphile and o.pamphile_bonus:
        pieces.append(lambda g, frame: Piece("announced", (g.n,), f"one-hot {frame} that announced the Pamphile",
                                             "d.announced", SeatOneHot()))
    return pieces


def rules(g: Game) -> Rules:
    o: MoucheOptions = g.options
    scoring = MoucheScoring(o.queue, o.collect_1730, o.mery_cap)
    stages = [
        Ante(),
        *([QueueIntoPot(o.queue_order == "largest")] if o.queue else []),
        DealCards(),
        *([NameTrump()] if o.pamphile else []),
        *([PamphileBonus()] if o.pamphile and o.pamphile_bonus else []),
        Decide(hooks=[Beatrix(o.pamphile)] if o.beatrix else []),
        MoucheCheck(scoring, o.pamphile and o.pamphile_wild),
        Play(),
        Settle(scoring),
    ]
    return Rules(
        stages=stages,
        scoring=scoring,
        deal_pattern=(2, 3, "T") if o.deal_2_3 else SPEC.deal_pattern,
        stake=o.stake,
        end_hooks=[rounds_over(o.rounds)] if o.rounds is not None else [],
        deal_class=MoucheDeal,
        trump_order=pamphile_trump_order if o.pamphile else plain_trump_order,
        pieces=_pieces(o),
    )


BRIEF = """\
French Mouche (1718, Lalanne's reconstruction; RULES.md §2.5-2.6). Play runs
counter-clockwise; the dealer antes 5 and deals 3 then 2 cards (2 then 3 with
`deal_2_3`), then turns the trump card. From the dealer's right each seat, once:
`pass` (dead hand, pays nothing), `stay`, or discards 1-5 cards (the first card
action starts the exchange, `done` draws; an empty stock is refilled from the
discards). A seat whose turn comes when all others passed takes the pot. A seat
that stayed with five cards of one suit has a **mouche** and takes the pot at
once (trump suit first, then points, then the seat nearer the dealer's right);
everyone else still in pays the pot. Otherwise five tricks: follow and beat,
else beat with a trump if you can, else anything (no duty to under-trump). Each
trick pays a fifth of the pot; a seat in play without a trick pays the pot.

Options: the **queue** (payments wait in escrow and enter one per deal;
`collect_1730` lets a mouche winner take them all), **Méry's cap**, **Pamphile**
(JC the highest trump; if turned up the dealer names trump; its holder may
`announce` it for 1 chip from each seat; `pamphile_wild` lets it complete any
flush), **Béatrix** (the dealer may `swap` a card for the trump card, losing his
mouche) and the number of **rounds**."""
"""The rules in brief, for the ruleset's documentation page."""

DECIDE_ROLES = ("undecided", "out", "stayed", "exchanged")

SPEC = RulesetSpec(
    name="mouche",
    section="§2.5, §2.6, §3.3",
    min_players=3,
    max_players=6,
    direction=-1,
    hand_size=5,
    deal_pattern=(3, 2, "T"),
    rank_order="KQJAT98765432",
    trick_profile=TrickProfile.F,
    stock_policy=StockPolicy.RESHUFFLE,
    bidding=Bidding.DECIDE,
    scoring=Scoring.MOUCHE,
    phases=("name_trump", "announce", "decide", "swap", "exchange", "play"),
    roles=DECIDE_ROLES,
    named_actions=("pass", "done", "stay", "announce", "silent", "trump:C", "trump:S", "trump:H", "trump:D", "swap"),
    options_class=MoucheOptions,
    deck_for=deck,
    rules=rules,
    brief=BRIEF,
    showcase={"queue": True, "pamphile": True, "beatrix": True, "rounds": 2},
    doc="French Mouche (1718): five cards, counter-clockwise, stay / pass / exchange, the flush called mouche.",
)
