"""What a seat sees, produced by the environment's own code for a state the caller owns.

The match runner and the search agent step the engine directly (no PettingZoo
wrappers) for speed, but an agent must see exactly what the environment would
give it. :class:`EnvView` therefore keeps one :class:`mauscheln_env.env.raw_env`
and points it at the caller's :class:`~mauscheln_env.engine.State` with
``raw_env.attach``: the observation comes from ``raw_env.observe`` and the info
dict from ``raw_env.infos``, so there is one encoder and one info builder in
the project. A scripted player of the search reads its view from the bound state
(:meth:`~agents.scripted.baselines.ExpertAgent.act_state`): the pieces' own
readers, in the form the observation decodes to
(:meth:`~mauscheln_env.observation.Observer.values`), without the vector.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mauscheln_env.config import RuleConfig
from mauscheln_env.engine import Game, State
from mauscheln_env.env import raw_env


def env_for(config: RuleConfig) -> raw_env:
    """A ``raw_env`` with exactly the rules of ``config``."""
    options = dict(config.to_dict())
    ruleset = options.pop("ruleset")
    num_players = options.pop("num_players")
    return raw_env(ruleset=ruleset, num_players=num_players, **options)


class EnvView:
    """Observation, mask and info of one seat for a state owned by the caller.

    Call :meth:`bind` once per state and :meth:`refresh` after every change of
    that state (every ``Game.apply``); then :meth:`seat_view` returns
    ``(observation, action_mask, info)`` as ``env.observe``/``env.infos`` would.
    The returned info dict is the environment's: treat it as read-only.
    """

    def __init__(self, config: RuleConfig) -> None:
        self.env = env_for(config)
        self.game: Game = self.env.game
        self.agents = list(self.env.possible_agents)
        self._state: State | None = None
        self._fresh = False
        self._attached = False
        self._infos: dict[int, dict[str, Any]] = {}

    def bind(self, state: State) -> None:
        """Point the view at ``state`` (not copied; it may change between refreshes)."""
        if not isinstance(state, State):
            raise ValueError(f"bind needs an engine State, got {type(state).__name__}")
        self._state = state
        self._fresh = False
        self._attached = False

    def refresh(self) -> None:
        """Re-point the environment after the bound state changed (legal actions now, infos on demand).

        The first refresh after :meth:`bind` attaches the state; later ones recompute only what a change of the
        state changes for ``observe`` and ``seat_info`` (the legal actions): this view never steps its
        environment, so the rest of what ``attach`` resets (rewards, terminations) stays as attached."""
        if self._state is None:
            raise ValueError("bind a state before refresh()")
        if self._attached:
            self.env._legal = self.game.legal_actions(self._state)
        else:
            self.env.attach(self._state, infos=False)
            self._attached = True
        self._infos.clear()
        self._fresh = True

    def legal(self) -> list[int]:
        """The legal action ids of the seat to act in the bound state (treat as read-only)."""
        if not self._fresh:
            self.refresh()
        return self.env._legal

    def seat_view(self, seat: int) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """``(observation, action_mask, info)`` of ``seat`` for the bound state."""
        if not self._fresh:
            self.refresh()
        out = self.env.observe(self.agents[seat])
        return out["observation"], out["action_mask"], self.seat_info(seat)

    def observation(self, seat: int) -> np.ndarray:
        """The observation of ``seat`` alone, as :meth:`seat_view` gives it (for a player that reads nothing
        else, such as a policy network)."""
        if not self._fresh:
            self.refresh()
        return self.env.observe(self.agents[seat])["observation"]

    def seat_info(self, seat: int) -> dict[str, Any]:
        """The info dict of ``seat`` for the bound state (as :meth:`seat_view` gives it)."""
        if not self._fresh:
            self.refresh()
        info = self._infos.get(seat)
        if info is None:
            info = self._infos[seat] = self.env.seat_info(seat)
        return info

    def invalidate(self) -> None:
        """Mark the bound state as changed (the next :meth:`seat_view` refreshes)."""
        self._fresh = False
