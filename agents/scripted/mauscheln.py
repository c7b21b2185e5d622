"""``beginner`` and ``expert`` for ``mauscheln`` (modern rules, every option: knock, Vierling, Belli, Weli).

* ``beginner`` follows the tips for beginners of the modern rules ([001], "Tipps
  für Einsteiger"): declare with the trump ace, the trump king or two high
  trumps; drop out with no trump and no ace; exchange everything except trumps
  and aces; in the tricks play the highest card that wins, else the lowest.
* ``expert`` follows the finer advice of the classic text ([000],
  "Spielregeln") and the Mousel strategy section ([004]):

  - declare with an accompanied top trump (the trump ace, or the king when the
    ace is the face-up trump card); K+Q, or K with two more trumps, "may risk
    it" when the table is small, the pot is not large against the own chips
    and few seats may still join;
  - go with two trumps or a bare top-but-one trump (the bare trump king), a
    sure trick always; with one trump or only side aces only when few
    opponents remain (count who has dropped and who went with) and the pot is
    small;
  - exchange everything except trumps and side aces; with a bare trump king
    throw the side aces too, to find a companion for the king;
  - knock on the trump ace, on the king only at a small table with a small pot;
  - play: cash sure tricks while a trick is still needed, win cheaply (the
    cheapest card that wins when last to play or when it cannot be beaten),
    save trumps otherwise; with the own trick secured and several others still
    in, pull trumps; a mauschler without the top trump leads side suits.

Both judge cards with the engine's own trick tables (``game.tables[trump_suit]``: which cards
beat which) and read everything else from the observation and the info dict.
``agents/tensor/batched_expert.py`` mirrors :class:`MauschelnExpert` decision for decision
(``tests/test_batched_expert.py``); change the two together.
"""

from __future__ import annotations

from typing import Any

from agents.knowledge import Knowledge
from agents.scripted.common import Strategy, next_mark, play_high_or_low
from mauscheln_env.cards import iter_bits
from mauscheln_env.engine import Game, Role

MAUSCHELN_ACTIONS = frozenset({"knock", "no_knock", "mauscheln", "pass", "go", "done"})
"""The named actions whose meaning these strategies know (ruleset ``mauscheln``)."""


class MauschelnStrategy(Strategy):
    """The trick requirements of Mauscheln: the mauschler two tricks, a goer one (RULES.md §2.1)."""

    required_actions = MAUSCHELN_ACTIONS

    @staticmethod
    def requirement(role: Role) -> int:
        """Tricks a participant must take: the mauschler two, a goer one (RULES.md §2.1)."""
        return 2 if role is Role.MAUSCHLER else 1

    def need(self, k: Knowledge, seat: int | None = None) -> int:
        seat = self.seat if seat is None else seat
        return max(0, self.requirement(k.roles[seat]) - k.tricks_won[seat])


class MauschelnBeginner(MauschelnStrategy):
    """The beginners' tips of the modern rules ([001] "Tipps für Einsteiger")."""

    def _on_knock(self, k: Knowledge, legal: list[int]) -> int:
        return self._ids["knock"] if self.is_ace(k.trump_card) else self._ids["no_knock"]

    def _on_declare(self, k: Knowledge, legal: list[int]) -> int:
        trumps = self.trumps_in(k, k.hand)
        high = [c for c in trumps if self._rank_pos[c] <= 3]  # A K Q J
        strong = any(self._rank_pos[c] <= 1 for c in trumps) or len(high) >= 2
        return self._ids["mauscheln"] if strong else self._ids["pass"]

    def _on_go_with(self, k: Knowledge, legal: list[int]) -> int:
        trumps = self.trumps_in(k, k.hand)
        aces = [c for c in iter_bits(k.hand) if self.is_ace(c)]
        return self._ids["go"] if trumps or aces else self._ids["pass"]

    def discard_plan(self, k: Knowledge) -> list[int]:
        """The cards of the hand this agent means to throw in the exchange (weakest first)."""
        t = self.tables(k)
        throw = [c for c in iter_bits(k.hand) if not (t.trump_mask >> c & 1) and not self.is_ace(c)]
        return sorted(throw, key=lambda c: (self.power(k, c), c))

    def _on_exchange(self, k: Knowledge, legal: list[int]) -> int:
        return next_mark(self, k, legal, self.discard_plan(k))

    def _on_play(self, k: Knowledge, legal: list[int]) -> int:
        return play_high_or_low(self, k, legal)


class MauschelnExpert(MauschelnStrategy):
    """The classic "Spielregeln" ([000]) and the Mousel strategy ([004]); see the module docstring."""

    def __init__(self, game: Game, *, risk: float = 0.0) -> None:
        super().__init__(game)
        self.risk = float(risk)

    # ------------------------------------------------------------------ context
    def _pot_pressure(self, k: Knowledge) -> float:
        """How large the pot (the bête) is against the stake: 0 for a bare ante, higher for carried bêtes."""
        stake = self.game.stake
        return max(0.0, (k.pot - stake) / (2.0 * stake))

    def _hand_facts(self, k: Knowledge, hand: int | None = None) -> dict[str, Any]:
        hand = k.hand if hand is None else hand
        unseen = self.unseen(k)
        trumps = self.trumps_in(k, hand)
        above = [self.live_above(k, c, unseen) for c in trumps]
        return {
            "trumps": trumps,
            "above": above,
            "top": bool(trumps) and above[0] == 0,
            "sure": sum(1 for i, a in enumerate(above) if a <= i),
            "side_tops": self.side_tops(k, hand, unseen),
            "unseen": unseen,
        }

    # ------------------------------------------------------------------ decisions
    def _on_knock(self, k: Knowledge, legal: list[int]) -> int:
        rank = self._rank_pos[k.trump_card]
        small_table = self.game.n <= 4
        if rank == 0 or (rank == 1 and small_table and self._pot_pressure(k) <= 0.5 + self.risk):
            return self._ids["knock"]
        return self._ids["no_knock"]

    def _on_declare(self, k: Knowledge, legal: list[int]) -> int:
        f = self._hand_facts(k)
        trumps, above = f["trumps"], f["above"]
        n_tr = len(trumps)
        if f["top"] and n_tr >= 2:
            return self._ids["mauscheln"]  # "Wer das besetzte Trumpfas hat, mauschelt stets."
        risky = (n_tr >= 2 and above[0] == 1 and above[1] <= 1) or (n_tr >= 3 and above[0] <= 1)
        if f["top"] and n_tr == 1 and f["side_tops"]:
            risky = True
        if not risky:
            return self._ids["pass"]
        # "Auch mit König und Dame oder dreifach besetztem König darf man es riskieren":
        # more readily at a small table, from a late seat, and with a small pot.
        behind = self._seats_still_to_declare(k)
        boldness = self.risk + (1.0 if self.game.n <= 4 else 0.0) + (0.5 if behind <= 1 else 0.0)
        boldness -= self._pot_pressure(k)
        return self._ids["mauscheln"] if boldness >= 0.5 else self._ids["pass"]

    def _seats_still_to_declare(self, k: Knowledge) -> int:
        return sum(1 for s in range(k.n) if s != k.seat and k.live[s] and k.roles[s] is Role.UNDECIDED)

    def _on_go_with(self, k: Knowledge, legal: list[int]) -> int:
        f = self._hand_facts(k)
        trumps, above, side_tops = f["trumps"], f["above"], f["side_tops"]
        n_tr = len(trumps)
        goers = sum(1 for s in range(k.n) if k.roles[s] is Role.GOER)
        dropped = sum(1 for s in range(k.n) if k.roles[s] is Role.OUT)
        undecided = sum(
            1 for s in range(k.n)
            if s != k.seat and k.live[s] and k.roles[s] in (Role.UNDECIDED, Role.DECLINED)
        )
        # Opponents that will fight for the tricks: the mauschler, who went with, half of who may still.
        rivals = 1 + goers + 0.5 * undecided
        pressure = self._pot_pressure(k)
        loose = self.risk + (1.0 if rivals <= 1.5 else 0.0) + 0.25 * dropped - pressure
        go, stay_out = self._ids["go"], self._ids["pass"]
        if f["top"] or f["sure"] >= 1:
            return go  # a sure trick
        if n_tr >= 2:
            # "Wer zwei Trümpfe hat ... geht in der Regel mit"; two low trumps against a crowd are thin.
            return go if above[0] <= 3 or rivals <= 2.5 or loose >= 0.5 else stay_out
        if n_tr == 1 and above[0] == 1:
            return go  # "... oder den blanken Trumpfkönig"
        if n_tr == 1:
            return go if (side_tops and loose >= 0.5) or loose >= 1.0 else stay_out
        if len(side_tops) >= 2 and loose >= 1.0:
            return go
        return stay_out

    def _on_exchange(self, k: Knowledge, legal: list[int]) -> int:
        return next_mark(self, k, legal, self.discard_plan(k))

    def discard_plan(self, k: Knowledge) -> list[int]:
        """The cards of the hand this agent means to throw in the exchange (weakest first)."""
        t = self.tables(k)
        knocker = k.knocked and k.seat == k.dealer
        hand_after = k.hand | ((1 << k.trump_card) if knocker else 0)
        f = self._hand_facts(k, hand_after)
        keep = set(f["trumps"])
        bare_king = len(f["trumps"]) == 1 and f["above"][0] == 1
        if not bare_king:
            keep.update(f["side_tops"])  # "Fremde Asse behält man besser"
        throw = [c for c in iter_bits(k.hand) if c not in keep and not (t.trump_mask >> c & 1)]
        return sorted(throw, key=lambda c: (self.power(k, c), c))

    def _on_play(self, k: Knowledge, legal: list[int]) -> int:
        t = self.tables(k)
        unseen = self.unseen(k)
        need = self.need(k)
        beats = t.beats
        win = self.winning_card(k)
        if win is None:
            return self._lead(k, legal, need, unseen)
        winners = [c for c in legal if beats[win] >> c & 1]
        if not winners:
            return self.weakest(k, legal)
        last = len(k.current_trick) == len(k.participants) - 1
        sure = [c for c in winners if not (beats[c] & unseen)]
        if last:
            return self.weakest(k, winners)  # win cheaply
        if sure:
            return self.weakest(k, sure)
        if need > 0:
            return self.strongest(k, winners)
        cheap = self.weakest(k, winners)
        if not (t.trump_mask >> cheap & 1):
            return cheap
        return self.weakest(k, legal)  # save trumps once the own trick is secured

    def _lead(self, k: Knowledge, legal: list[int], need: int, unseen: int) -> int:
        t = self.tables(k)
        beats = t.beats
        sure = [c for c in legal if not (beats[c] & unseen)]
        if need > 0 and sure:
            return self.strongest(k, sure)  # cash a sure trick (the trump ace draws trumps)
        trumps = [c for c in legal if t.trump_mask >> c & 1]
        side = [c for c in legal if not (t.trump_mask >> c & 1)]
        others_in_need = sum(1 for s in k.participants if s != k.seat and self.need(k, s) > 0)
        if need == 0 and trumps and others_in_need >= 2:
            return self.strongest(k, trumps)  # "Trumpf nachzuziehen, wenn mehrere Spieler mitgehen"
        if sure:
            return self.strongest(k, sure)
        side_tops = self.side_tops(k, sum(1 << c for c in side), unseen)
        if side_tops and k.tricks_done <= 1:
            return self.strongest(k, side_tops)  # cash a side ace before the others are void
        if side:
            return self.weakest(k, side)  # "Man spielt dann die Fehlfarbe auf": save the trumps
        return self.weakest(k, trumps)
