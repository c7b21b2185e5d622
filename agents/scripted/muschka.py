"""``beginner`` and ``expert`` for ``muschka`` (Russian Muschka, [003] "Varianten"; RULES.md §2.7, §3.4).

The seed ([003], Muschka):

    "Man tauscht, bleibt oder passt – passen darf aber nicht, wer das A♠ hat.
    Bedienen; wer nicht bedienen kann, muss trumpfen. Das A♠ schlägt das
    Trumpf-Ass, wenn dieses ausgespielt wird, und nur dann. Statt mit Chips
    schreibt sich jeder 25 Punkte auf und zählt herunter: −1 pro Stich, +5 für
    keinen Stich und −5 für das A♠ auf der Hand (−10, wenn Pik Trumpf ist) –
    aber +10, wenn du es hattest und keinen Stich gemacht hast. Wer als Erster
    genau 0 erreicht, gewinnt ...; wer einen Stich zu viel macht, fängt wieder
    bei 25 an."

So a trick is worth a point down while the score is high, no trick costs five
(ten for the holder of the ace of spades, who gains five more with a trick),
and near 0 every trick beyond the score is a disaster: the score starts again
at 25. The agents play for the score going down (the reward).

``beginner`` (the Mouche beginners' rules with the ace high): stay with two
trumps, exchange around a trump or an ace, pass with nothing — the holder of
the ace of spades keeps it and plays; play the strongest card that wins the
trick, else the weakest. It does not look at the score.

``expert`` weighs every choice by the payoff of the number of tricks it ends
with, from its own score (the trick model of
:class:`agents.scripted.common.TrickStrategy`):

* stay, exchange or pass by the expected fall of the score against the seats
  in and about half of those still to decide; the ace of spades stays in the
  hand (+5 with a trick) unless the hand is too weak to make one, when it is
  exchanged away; with spades trump it is the trump ace and always kept;
* a score near 0 wants few tricks: exactly the score is the target, one more
  starts again at 25 — so a low score stays only with a hand that can stop
  short, and the holder of the ace of spades with a score of 5 or less, for
  whom any trick overshoots (−1 and −5), plays to take none (+10 is better
  than 25 again);
* the lone rule: a seat left alone is credited five tricks; a pass that leaves
  a single seat in counts against the field;
* play: the card with the best expected payoff of winning or losing this
  trick with the rest kept — without a duty to beat, ducking is a choice when
  tricks hurt; a led trump ace is not a sure trick while the ace of spades may
  sit behind it in a hand void in trumps (the A♠ rule), and the ace of spades
  played to it takes that trick for sure; count trumps and voids.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.knowledge import Knowledge
from agents.scripted.common import DealView
from agents.scripted.mouche import DecideBeginner, DecideExpert
from mauscheln_env.cards import SUITS
from mauscheln_env.tricks import TrumpTables

SPADES = SUITS.index("S")


class MuschkaBeginner(DecideBeginner):
    """The Mouche beginners' rules with the ace high; see the module docstring."""


class MuschkaExpert(DecideExpert):
    """[003] Muschka, played for the score; see the module docstring."""

    trump_weight = 1.5
    ruff_value = 0.35  # a void seat must trump (profile R)
    side_discount = 0.7
    chance_power = 1.0
    stock_weight = 1.0  # a big stock: what a blind draw finds is much like any unseen card

    def __init__(self, game, *, risk: float = 0.0) -> None:
        super().__init__(game, risk=risk)
        self.ace = self.rules.ace_of_spades
        self.start = int(self.rules.start_score)

    # ------------------------------------------------------------------ scoring (RULES.md §3.4)
    def score(self, seat: int) -> int:
        return int(self.info["scores"][seat])

    def holds_ace(self, k: Knowledge, seat: int) -> bool:
        """Whether ``seat`` holds (or held when play started) the ace of spades, as far as this seat knows."""
        if self.ace is None:
            return False
        if seat == k.seat:
            return bool((k.hand | k.played_by(seat)) >> self.ace & 1)
        return bool(k.played_by(seat) >> self.ace & 1)

    def payoff(self, k: Knowledge, seat: int, tricks: int, holder: bool | None = None) -> float:
        """How far ``seat``'s score falls for ``tricks`` tricks; a score below 0 starts again."""
        holder = self.holds_ace(k, seat) if holder is None else holder
        delta = -tricks if tricks else 5
        if holder:
            delta = delta - (10 if k.trump_suit == SPADES else 5) if tricks else 10
        old = self.score(seat)
        new = old + delta
        return old - (self.start if new < 0 else new)

    def payoff_for(self, k: Knowledge, seat: int, holder: bool | None = None) -> list[float]:
        return self.payoff_table(k, seat, holder=holder)

    def lone_value(self, k: Knowledge, seat: int) -> float:
        return self.payoff(k, seat, self.rules.num_tricks, holder=False)  # credited five tricks, no play

    def trick_unit(self, k: Knowledge) -> float:
        return 1.0

    # ------------------------------------------------------------------ the A♠ rule
    def _as_rule(self, t: TrumpTables, first: int) -> bool:
        return self.ace is not None and t.trump_suit != SPADES and first == self.rules.trump_ace[t.trump_suit]

    def beaters(self, t: TrumpTables, win: int, first: int) -> int:
        if self._as_rule(t, first):
            return 0 if win == self.ace else t.beats[win] | 1 << self.ace
        return t.beats[win]

    def wins_over(self, t: TrumpTables, cards: Sequence[int], win: int, card: int) -> bool:
        if self._as_rule(t, cards[0]):
            return win != self.ace and (card == self.ace or bool(t.beats[win] >> card & 1))
        return bool(t.beats[win] >> card & 1)

    def locks(self, t: TrumpTables, first: int, card: int) -> bool:
        return card == self.ace and self._as_rule(t, first)

    # ------------------------------------------------------------------ choices with the ace of spades
    def choices(self, k: Knowledge, v: DealView, legal: list[int]) -> dict[str, tuple[float, list[int]]]:
        if self.ace is None or not k.hand >> self.ace & 1:
            return super().choices(k, v, legal)
        opp = self.rivals(k)
        out: dict[str, tuple[float, list[int]]] = {}
        if self._ids["stay"] in legal:
            chances = self.hand_chances(v, k.hand, opp)
            out["stay"] = (self.with_alone(k, self.stay_value(k, v, self.payoff_for(k, k.seat, True), chances)), [])
        if any(a < self.rules.num_cards for a in legal):
            throw, ev = self._ace_plan(k, v, opp, draws_done=0, min_throw=1)
            out["exchange"] = (self.with_alone(k, ev), throw)
        if self._ids["pass"] in legal:
            out["pass"] = (self.pass_value(k), [])
        return out

    def _ace_plan(self, k: Knowledge, v: DealView, opp: float, draws_done: int, min_throw: int
                  ) -> tuple[list[int], float]:
        """The best exchange of a hand with the ace of spades: keeping it (and its bonus) or throwing it."""
        ace = 1 << self.ace
        rest = k.hand & ~ace
        size = self.rules.hand_size
        keep_throw, keep_ev = self.exchange_plan(v, rest, self.payoff_for(k, k.seat, True), opp=opp, extra=ace,
                                                 limit=size - draws_done, draws_done=draws_done, min_throw=min_throw)
        if k.trump_suit == SPADES:
            return keep_throw, keep_ev  # the trump ace: a sure trick and ten points
        drop_throw, drop_ev = self.exchange_plan(v, rest, self.payoff_for(k, k.seat, False), opp=opp,
                                                 limit=size - draws_done - 1, draws_done=draws_done + 1)
        if drop_ev > keep_ev:
            return [self.ace, *drop_throw], drop_ev
        return keep_throw, keep_ev

    def _on_exchange(self, k: Knowledge, legal: list[int]) -> int:
        if self.ace is None or not k.hand >> self.ace & 1:
            return super()._on_exchange(k, legal)
        v = self.view(k)
        throw, _ = self._ace_plan(k, v, float(self.rivals(k)), draws_done=self._marked(k), min_throw=0)
        return self.mark(k, legal, throw)

    def mark(self, k: Knowledge, legal: list[int], throw: list[int]) -> int:
        if self.ace in throw and self.ace in legal:
            # Throw the ace first: the rest of the plan was made without it.
            self._plan = (k.hand & ~(1 << self.ace), [c for c in throw if c != self.ace], k.trump_suit)
            return self.ace
        return super().mark(k, legal, throw)

