"""Scripted baselines: ``random``, ``beginner`` and ``expert``, for every ruleset.

* ``random`` plays uniformly over the legal actions.
* ``beginner`` and ``expert`` play each ruleset by the advice of its original
  text; their rules are those of the strategy the ruleset's entry of
  :data:`agents.scripted.STRATEGIES` names (one module per ruleset family
  under :mod:`agents.scripted`, each documented with the passages it follows):

  ==================  ==========================================  =====================================
  ruleset             module                                      seed passage
  ==================  ==========================================  =====================================
  mauscheln           :mod:`agents.scripted.mauscheln`            [001] tips, [000] "Spielregeln", [004]
  mauscheln_classic   :mod:`agents.scripted.classic`              [000] "Spielregeln"
  mousel              :mod:`agents.scripted.mousel`               [004] "Strategi"
  mouche              :mod:`agents.scripted.mouche`               [003] Mouche, tips and variants
  muschka             :mod:`agents.scripted.muschka`              [003] Muschka
  ==================  ==========================================  =====================================

A strategy reads only what its seat knows (observation and info, through
:class:`agents.knowledge.KnowledgeReader`). Where it has no rule for a position
the agent plays a uniformly random legal action, so it never crashes and never
plays an illegal move.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from agents.base import Agent, Info, legal_ids
from agents.knowledge import Knowledge
from agents.scripted import strategy_class
from agents.scripted.common import Strategy
from agents.scripted.mauscheln import MAUSCHELN_ACTIONS
from mauscheln_env.engine import Game, State

__all__ = ["MAUSCHELN_ACTIONS", "BeginnerAgent", "ExpertAgent", "RandomAgent"]


class RandomAgent(Agent):
    """Uniformly random over the legal actions."""

    name = "random"
    reference = True

    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        legal = legal_ids(action_mask)
        return int(legal[self.rng.integers(legal.size)])


class _ScriptedAgent(Agent):
    """An agent that plays its ruleset's strategy of one level, random where the strategy has no rule."""

    level: ClassVar[str] = ""
    plays_forced_blind: ClassVar[bool] = True  # act() returns the only legal action first thing
    reference = True

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._brain: Strategy | None = None

    def setup(self, game: Game, seat: int) -> None:
        super().setup(game, seat)
        if self._brain is None or self._brain.game is not game:
            self._brain = self._build(game)
        self._brain.bind(self.seat)

    def _build(self, game: Game) -> Strategy:
        return strategy_class(game.config.ruleset, self.level)(game)

    @property
    def strategy(self) -> Strategy:
        """The strategy this agent plays (after :meth:`setup`)."""
        if self._brain is None:
            raise ValueError(f"{self.name}: call setup(game, seat) before using its strategy")
        return self._brain

    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        if self.game is None:
            raise ValueError(f"{self.name}: call setup(game, seat) before act()")
        legal = legal_ids(action_mask).tolist()
        if len(legal) == 1:
            return legal[0]
        return self._chosen(self._brain.decide(observation, action_mask, info, legal), legal)

    def act_state(self, state: State, info: Info, legal: list[int]) -> int:
        """:meth:`act` for this seat's view of an engine state it is to act in (``legal``: its legal actions,
        sorted), read without encoding the observation: the search's model players decide so in their
        rollouts (the same decision and random draws as :meth:`act` on the seat's observation)."""
        if self.game is None:
            raise ValueError(f"{self.name}: call setup(game, seat) before act_state()")
        if len(legal) == 1:
            return legal[0]
        return self._chosen(self._brain.decide_state(state, info, legal), legal)

    def _chosen(self, action: int | None, legal: list[int]) -> int:
        if action is None or action not in legal:  # no rule, or a rule of thumb that does not fit this position
            return int(legal[self.rng.integers(len(legal))])
        return int(action)


class BeginnerAgent(_ScriptedAgent):
    """Each ruleset's beginners' advice (see the module docstring)."""

    name = "beginner"
    level = "beginner"


class ExpertAgent(_ScriptedAgent):
    """Each ruleset's finer advice and strong play (see the module docstring).

    ``risk`` shifts every bidding threshold: negative is cautious, positive bold.
    """

    name = "expert"
    level = "expert"

    def __init__(self, seed: int | None = None, *, risk: float = 0.0) -> None:
        super().__init__(seed)
        if not isinstance(risk, (int, float)) or isinstance(risk, bool) or not -2.0 <= risk <= 2.0:
            raise ValueError(f"risk={risk!r} is not allowed; allowed: a number from -2 (cautious) to 2 (bold)")
        self.risk = float(risk)
        self.params = {"risk": self.risk}

    def _build(self, game: Game) -> Strategy:
        cls = strategy_class(game.config.ruleset, self.level)
        return cls(game, risk=self.risk) if cls is not Strategy else cls(game)

    # The search agent (agents/search/pimc.py) reuses these two pieces of the mauscheln expert's card sense.
    def power(self, k: Knowledge, card: int) -> int:
        return self.strategy.power(k, card)

    def discard_plan(self, k: Knowledge) -> list[Any]:
        return self.strategy.discard_plan(k)
