"""`muschka`: Russian Muschka ([003], variants) — RULES.md §2.7, §3.4 and decision D35.

Read beside RULES.md §2.7. Everything not stated here is inherited from Mouche (D35): the deciding
(:class:`~mauscheln_env.rulesets.mouche.Decide`), the exchange and the reshuffle. The deal procedure
(:func:`rules`), in its order:

1. DEAL — clockwise from forehand (the dealer's left), 3 then 2 cards, then the trump card; no ante: no chips.
2. DECIDE — as Mouche step 3, clockwise; the holder of the ace of spades may not pass (:class:`AceOfSpades`);
   a lone seat is credited with all 5 tricks and nothing is played; no mouche (flush) hand.
3. PLAY — 5 tricks, profile R (no duty to beat); the first seat still in from forehand leads. The AS rule
   (:class:`AceOfSpades`): if spades are not trump and the led card is the trump ace, an AS played to that
   trick beats it.
4. SCORE — §3.4 (:class:`PointsScoring`): a seat in play scores −1 per trick, or +5 with none; the holder of
   the AS when play starts loses 5 more (10 when spades are trump), or scores +10 without a trick; a score
   below 0 restarts at 25; exactly 0 wins and ends the session (ties share the win).
5. NEXT — dealer := succ(dealer). Every session ends: ``max_session_deals`` (default 500) truncates one that
   no seat has won by then (at 6-7 seats scores tend to drift upwards and random play may never reach 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mauscheln_env.cards import RANKS, SUITS, Deck
from mauscheln_env.engine import (
    Bidding,
    Deal,
    DealCards,
    DealKind,
    DealResult,
    Game,
    Play,
    Rules,
    Scoring,
    ScoringRule,
    Session,
    Settle,
    State,
    StockPolicy,
    TrickHook,
)
from mauscheln_env.errors import ConfigError
from mauscheln_env.options import (
    MAX_AMOUNT,
    Options,
    at_least,
    check_session_bound,
    deck_size_option,
    max_deals_option,
    max_session_deals_option,
    max_throw_ins_option,
    option,
)
from mauscheln_env.rulesets.base import RulesetSpec
from mauscheln_env.rulesets.mouche import DECIDE_ROLES, Decide
from mauscheln_env.tricks import TrickProfile


@dataclass(frozen=True)
class MuschkaOptions(Options):
    deck_size: int | None = deck_size_option("32/36/52 for 3/4/5-7 players")
    start_score: int = option(25, f"a whole number from 1 to {MAX_AMOUNT}",
                              "Every score starts here and counts down to 0.", check=at_least(1))
    max_deals: int | None = max_deals_option()
    max_throw_ins: int = max_throw_ins_option()
    max_session_deals: int = max_session_deals_option(500)

    def check(self, num_players: int) -> None:
        check_session_bound(self)


def deck(num_players: int, opts: MuschkaOptions) -> Deck:
    """§1.2: 32 cards (A-7) for 3 players, 36 (A-6) for 4, 52 for 5-7; the ace is high (D35)."""
    derived = 32 if num_players == 3 else 36 if num_players == 4 else 52
    if opts.deck_size is not None and opts.deck_size != derived:
        raise ConfigError(f"deck_size={opts.deck_size} is not allowed with {num_players} players in muschka: "
                          "3/4/5-7 players use 32/36/52 cards")
    return Deck("AKQJT987" if derived == 32 else "AKQJT9876" if derived == 36 else RANKS)


@dataclass(slots=True, eq=False)
class MuschkaDeal(Deal):
    """A Muschka deal: the core deal plus who held the ace of spades when play started, and the AS rule's lock."""

    as_holder: int | None = None
    """D35: "holder" = holds the AS when play starts."""
    trick_locked: bool = False
    """The AS has beaten a led trump ace in the current trick: nothing beats it after."""


class AceOfSpades(TrickHook):
    """§2.7: the holder of the AS may not pass; the AS beats a led trump ace when spades are not trump (D35)."""

    note = "; the holder of the ace of spades may not `pass`"

    def __init__(self, g: Game) -> None:
        self.ace_of_spades = g.deck.index["AS"]
        self.spades = SUITS.index("S")

    def forbids_pass(self, g: Game, st: State, seat: int) -> bool:
        return bool(st.deal.hands[seat] >> self.ace_of_spades & 1)

    def extra_actions(self, g: Game, st: State, seat: int) -> list[int]:
        return []

    def start(self, g: Game, st: State) -> None:
        d = st.deal
        d.as_holder = next((s for s in d.participants if d.hands[s] >> self.ace_of_spades & 1), None)

    def beats(self, g: Game, st: State, seat: int, card: int) -> bool:
        d = st.deal
        if d.trick_locked:
            return True
        if card == self.ace_of_spades and d.trump_suit != self.spades \
                and d.trick[0][1] == g.deck.index.get("A" + SUITS[d.trump_suit]):
            d.win_card = card
            d.win_seat = seat
            d.trick_locked = True
            return True
        return False

    def trick_done(self, g: Game, st: State, trick: list[tuple[int, int]]) -> None:
        st.deal.trick_locked = False


class PointsScoring(ScoringRule):
    """§3.4 (D35): scores count down from the start score to exactly 0; scored once, at the end of the deal."""

    kind = Scoring.POINTS
    uses_chips = False

    def __init__(self, g: Game) -> None:
        self.ace_of_spades = g.deck.index["AS"]
        self.spades = SUITS.index("S")
        self.start_score = g.options.start_score

    def open_session(self, g: Game, session: Session, chips: Sequence[int] | None,
                     scores: Sequence[int] | None) -> None:
        session.chips = [0] * g.n
        session.scores = list(scores) if scores is not None else [self.start_score] * g.n
        session.start_scores = list(session.scores)

    def unit(self, g: Game) -> int:
        return self.start_score

    def settle(self, g: Game, st: State, lone: int | None = None) -> DealResult:
        session, d = st.session, st.deal
        old = list(session.scores)
        spades_trump = d.trump_suit == self.spades
        for s in d.participants:
            t = d.tricks_won[s]
            delta = -t if t else 5
            if s == d.as_holder:
                if t >= 1:
                    delta -= 10 if spades_trump else 5
                else:
                    delta = 10
            new = session.scores[s] + delta
            session.scores[s] = self.start_score if new < 0 else new
        deltas = [old[s] - session.scores[s] for s in range(g.n)]
        return g.finish(st, DealKind.NO_PLAY if lone is not None else DealKind.SETTLED, 0, [0] * g.n, [0] * g.n,
                        lone, deltas=deltas, scores=list(session.scores))

    def settle_lone(self, g: Game, st: State, seat: int) -> DealResult:
        """D35: a sole remaining seat is credited with all 5 tricks; nothing is played."""
        st.deal.participants = [seat]
        st.deal.tricks_won[seat] = g.num_tricks
        return self.settle(g, st, lone=seat)

    def check(self, g: Game, st: State) -> list[str]:
        replay = list(st.session.start_scores)
        for r in st.session.results:
            replay = [replay[s] - r.deltas[s] for s in range(g.n)]
        if replay != st.session.scores or any(x < 0 for x in st.session.scores):
            return [f"scores {st.session.scores} do not follow from the deals' deltas ({replay})"]
        return []


def someone_at_zero(g: Game, st: State) -> bool:
    """§2.7 step 5: the session ends as soon as a seat reaches exactly 0."""
    return any(score == 0 for score in st.session.scores)


def rules(g: Game) -> Rules:
    ace = AceOfSpades(g)
    scoring = PointsScoring(g)
    return Rules(
        stages=[DealCards(), Decide(hooks=[ace]), Play(), Settle(scoring)],
        scoring=scoring,
        deal_pattern=SPEC.deal_pattern,
        trick_hooks=[ace],
        end_hooks=[someone_at_zero],
        deal_class=MuschkaDeal,
    )


BRIEF = """\
Russian Muschka (RULES.md §2.7, §3.4). Scores start at 25 and count down; the
first seat to reach exactly 0 wins. Five cards, dealt 3 and 2, clockwise; the
deck depends on the table (32, 36 or 52). Each seat decides as in Mouche, except
that the holder of the ace of spades may not pass. Tricks follow suit, else
trump, with no duty to beat; if the trump ace is led and spades are not trump,
the ace of spades beats it. A seat in play scores minus one per trick, or +5
with no trick; the holder of the ace of spades loses 5 more (10 when spades are
trump), or scores +10 without a trick. A score below 0 restarts at 25. A lone
seat is credited with all five tricks."""
"""The rules in brief, for the ruleset's documentation page."""

SPEC = RulesetSpec(
    name="muschka",
    section="§2.7, §3.4",
    min_players=3,
    max_players=7,
    direction=+1,
    hand_size=5,
    deal_pattern=(3, 2, "T"),
    rank_order="AKQJT98765432",
    trick_profile=TrickProfile.R,
    stock_policy=StockPolicy.RESHUFFLE,
    bidding=Bidding.DECIDE,
    scoring=Scoring.POINTS,
    phases=("decide", "exchange", "play"),
    roles=DECIDE_ROLES,
    named_actions=("pass", "done", "stay"),
    options_class=MuschkaOptions,
    deck_for=deck,
    rules=rules,
    brief=BRIEF,
    showcase={},
    doc="Russian Muschka: five cards, points from 25 down to exactly 0, the ace of spades.",
)
