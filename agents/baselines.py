"""Scripted baselines: ``random``, ``beginner`` and ``expert``.

* ``random`` plays uniformly over the legal actions.
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

Both heuristic agents judge cards with the engine's own trick tables
(``game.tables[trump_suit]``: which cards beat which) and read everything else
from the observation and the info dict. On a ruleset or phase they do not know
(an action vocabulary other than Mauscheln's) they fall back to a uniformly
random legal action, so they never crash and never play an illegal move.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent, Info, legal_ids
from agents.knowledge import Knowledge, KnowledgeReader
from mauscheln_env.cards import iter_bits
from mauscheln_env.engine import Game, Role
from mauscheln_env.tricks import TrumpTables

MAUSCHELN_ACTIONS = frozenset({"knock", "no_knock", "mauscheln", "pass", "go", "done"})
"""The named actions whose meaning the heuristic agents know (ruleset ``mauscheln``)."""


class RandomAgent(Agent):
    """Uniformly random over the legal actions."""

    name = "random"

    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        legal = legal_ids(action_mask)
        return int(legal[self.rng.integers(legal.size)])


class _HeuristicAgent(Agent):
    """Shared plumbing of the rule-of-thumb agents: knowledge, card strength, dispatch by phase."""

    def setup(self, game: Game, seat: int) -> None:
        same = self.game is game
        super().setup(game, seat)
        if same and hasattr(self, "_reader"):
            return
        self._reader = KnowledgeReader(game)
        self._supported = MAUSCHELN_ACTIONS.issubset(game.action_ids)
        self._ids = dict(game.action_ids)
        self._power: list[tuple[int, ...]] = [
            tuple(-t.beats[c].bit_count() for c in range(game.num_cards)) for t in game.tables
        ]
        ranks = game.config.spec.rank_order
        self._rank_pos = tuple(ranks.index(code[0]) for code in game.deck.codes)
        self._full = game.deck.full_mask
        self._suit_mask = game.deck.suit_mask

    # ------------------------------------------------------------------ dispatch
    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        if self.game is None:
            raise ValueError(f"{self.name}: call setup(game, seat) before act()")
        legal = legal_ids(action_mask).tolist()
        if len(legal) == 1:
            return legal[0]
        phase = info.get("phase")
        handler = getattr(self, f"_on_{phase}", None) if self._supported else None
        if handler is None:
            return int(legal[self.rng.integers(len(legal))])
        k = self._reader.read(observation, info, self.seat, action_mask)
        action = handler(k, legal)
        if action not in legal:  # a rule of thumb that does not fit this position
            return int(legal[self.rng.integers(len(legal))])
        return int(action)

    # ------------------------------------------------------------------ card sense
    def tables(self, k: Knowledge) -> TrumpTables:
        return self.game.tables[k.trump_suit]

    def power(self, k: Knowledge, card: int) -> int:
        """Higher is stronger: minus the number of cards that would beat ``card`` winning a trick."""
        return self._power[k.trump_suit][card]

    def trumps_in(self, k: Knowledge, mask: int) -> list[int]:
        """Trumps of ``mask``, strongest first."""
        t = self.tables(k)
        return sorted(iter_bits(mask & t.trump_mask), key=lambda c: -self._power[k.trump_suit][c])

    def unseen(self, k: Knowledge) -> int:
        """Cards that another seat may hold (not in own hand, discards, played, or the face-up trump)."""
        return self._full & ~k.known_out_of_play()

    def live_above(self, k: Knowledge, card: int, unseen: int) -> int:
        """How many cards that another seat may hold would beat ``card``."""
        return (self.tables(k).beats[card] & unseen).bit_count()

    def side_tops(self, k: Knowledge, mask: int, unseen: int) -> list[int]:
        """Non-trumps of ``mask`` that no unseen card of their suit beats (side aces, in effect)."""
        t = self.tables(k)
        return [c for c in iter_bits(mask & ~t.trump_mask) if not (t.beats[c] & unseen & ~t.trump_mask)]

    def is_ace(self, card: int) -> bool:
        return self._rank_pos[card] == 0

    def weakest(self, k: Knowledge, cards: list[int]) -> int:
        return min(cards, key=lambda c: (self.power(k, c), c))

    def strongest(self, k: Knowledge, cards: list[int]) -> int:
        return max(cards, key=lambda c: (self.power(k, c), -c))

    def winning_card(self, k: Knowledge) -> int | None:
        """The card currently winning the trick in progress (None when it is empty)."""
        if not k.current_trick:
            return None
        beats = self.tables(k).beats
        win = k.current_trick[0][1]
        for _, c in k.current_trick[1:]:
            if beats[win] >> c & 1:
                win = c
        return win

    @staticmethod
    def requirement(role: Role) -> int:
        """Tricks a participant must take: the mauschler two, a goer one (RULES.md §2.1)."""
        return 2 if role is Role.MAUSCHLER else 1

    def need(self, k: Knowledge, seat: int | None = None) -> int:
        seat = self.seat if seat is None else seat
        return max(0, self.requirement(k.roles[seat]) - k.tricks_won[seat])


class BeginnerAgent(_HeuristicAgent):
    """The beginners' tips of the modern rules ([001] "Tipps für Einsteiger")."""

    name = "beginner"

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
        return _next_mark(self, k, legal, self.discard_plan(k))

    def _on_play(self, k: Knowledge, legal: list[int]) -> int:
        win = self.winning_card(k)
        if win is None:
            return self.strongest(k, legal)
        beats = self.tables(k).beats[win]
        winners = [c for c in legal if beats >> c & 1]
        if winners:
            return self.strongest(k, winners)
        return self.weakest(k, legal)


class ExpertAgent(_HeuristicAgent):
    """The classic "Spielregeln" ([000]) and the Mousel strategy ([004]); see the module docstring."""

    name = "expert"

    def __init__(self, seed: int | None = None, *, risk: float = 0.0) -> None:
        super().__init__(seed)
        if not isinstance(risk, (int, float)) or isinstance(risk, bool) or not -2.0 <= risk <= 2.0:
            raise ValueError(f"risk={risk!r} is not allowed; allowed: a number from -2 (cautious) to 2 (bold)")
        self.risk = float(risk)
        self.params = {"risk": self.risk}

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
        return _next_mark(self, k, legal, self.discard_plan(k))

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


def _next_mark(agent: _HeuristicAgent, k: Knowledge, legal: list[int], throw: list[int]) -> int:
    """One exchange step: mark the weakest card still to throw, else ``done``.

    A knocking dealer must discard at least one card; when ``done`` is not yet
    legal and nothing is left to throw he discards his weakest card.
    """
    done = agent._ids["done"]
    marks = [c for c in throw if c in legal]
    if marks:
        return agent.weakest(k, marks)
    if done in legal:
        return done
    cards = [a for a in legal if a < agent.game.num_cards]
    return agent.weakest(k, cards)
