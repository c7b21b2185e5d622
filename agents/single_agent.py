"""A Gymnasium single-agent view: one learning seat, the other seats played by given agents.

For Stable-Baselines3 and any single-agent library::

    from agents.single_agent import SingleAgentEnv
    env = SingleAgentEnv(opponents="expert", num_players=4, max_deals=3)
    obs, info = env.reset(seed=0)
    mask = env.action_masks()          # what sb3-contrib's MaskablePPO asks for

The reward of a step is everything the learning seat received since its
previous action: settlements usually land while other seats act (the last
card of a trick may be someone else's), and none of them is lost. A deal can
even settle before the seat's first decision of a session (in mouche, muschka
and mousel a lone seat takes the deal without being asked); what it received
then is part of the reward of its first step. Over an episode (one session)
the rewards sum to the seat's chip change (in muschka, the decrease of its
score). The episode ends with the session, or early when the learning seat is
eliminated (it can receive nothing more). A session that ends before the
learning seat ever decides is no episode: ``reset`` starts another.

An action outside the mask ends the episode with ``illegal_reward`` (default
minus the bankroll, plus whatever the seat received since its previous action),
as PettingZoo's ``env()`` does, so that Gymnasium's and
SB3's environment checkers, which step with unmasked random actions, can run;
``illegal_action="raise"`` raises a ``ValueError`` instead. A masked learner
(MaskablePPO) never plays one.

``seat="random"`` (the default) draws the learning seat from the seeded
generator at every reset; an int fixes it. ``opponents`` is an agent name, an
:class:`agents.base.Agent`, or a list of them (one per other seat, in seat
order after the learner).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mauscheln_env.env import raw_env
from mauscheln_env.errors import ConfigError


class SingleAgentEnv(gym.Env):
    """One seat of a Mauscheln session as a Gymnasium environment with action masks."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, opponents: Any = "random", seat: int | str = "random", ruleset: str = "mauscheln",
                 num_players: int | None = None, render_mode: str | None = None, illegal_action: str = "terminate",
                 illegal_reward: float | None = None, **rule_options: Any) -> None:
        super().__init__()
        self.env = raw_env(ruleset=ruleset, num_players=num_players, render_mode=render_mode, **rule_options)
        self.game = self.env.game
        n = self.game.n
        if illegal_action not in ("terminate", "raise"):
            raise ConfigError(f"illegal_action={illegal_action!r} is not allowed; allowed: 'terminate', 'raise'")
        self.illegal_action = illegal_action
        cfg = self.game.config
        scale = cfg.options.get("bankroll", cfg.options.get("start_score", 1))
        self.illegal_reward = -float(scale) if illegal_reward is None else float(illegal_reward)
        if seat != "random" and (not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < n):
            raise ConfigError(f"seat={seat!r} is not allowed; allowed: 'random' or 0..{n - 1}")
        self.seat_choice = seat
        self.render_mode = render_mode
        self._opponent_specs = self._opponent_list(opponents, n)
        agent_space = self.env.observation_space("player_0")
        self.observation_space = agent_space["observation"]
        self.action_space = spaces.Discrete(self.game.num_actions)
        self.seat = 0 if seat == "random" else seat
        self._agents: dict[int, Any] = {}
        self._mask = np.zeros(self.game.num_actions, dtype=np.int8)
        self._pending = 0.0  # received before the seat's first decision of the episode; paid with its first step

    @staticmethod
    def _opponent_list(opponents: Any, n: int) -> list[Any]:
        if isinstance(opponents, (str,)) or not isinstance(opponents, Sequence):
            return [opponents] * (n - 1)
        if len(opponents) != n - 1:
            raise ConfigError(f"opponents must name {n - 1} agents (one per other seat), got {len(opponents)}")
        return list(opponents)

    def _make_opponents(self, seed: int) -> None:
        from agents.base import Agent, make_agent

        self._agents = {}
        others = [(self.seat + k) % self.game.n for k in range(1, self.game.n)]
        for i, (seat, spec) in enumerate(zip(others, self._opponent_specs)):
            agent = spec if isinstance(spec, Agent) else make_agent(spec, seed=seed + i + 1)
            agent.setup(self.game, seat)
            agent.reset(seed + 101 * (i + 1))
            self._agents[seat] = agent

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if self.seat_choice == "random":
            self.seat = int(self.np_random.integers(self.game.n))
        self._make_opponents(int(self.np_random.integers(2**31 - 1)))
        self.env.reset(seed=int(self.np_random.integers(2**31 - 1)), options=options)
        reward, done, truncated = self._advance()
        if done or truncated:  # the session ended before the learning seat acted (it was eliminated at once)
            return self.reset(seed=None, options=options)
        self._pending = reward
        return self._observation(), self._info(reward)

    def step(self, action: int):
        agent = f"player_{self.seat}"
        legal_action = 0 <= int(action) < len(self._mask) and bool(self._mask[int(action)])
        if self.env.agent_selection != agent or not legal_action:
            legal = ", ".join(self.env.action_to_str(a) for a in np.flatnonzero(self._mask))
            if self.illegal_action == "raise" or not self._mask.any():
                raise ValueError(f"action {action!r} is not legal for the learning seat; legal: {legal or 'none (reset)'}")
            self._mask[:] = 0
            reward = self.illegal_reward + self._pending
            self._pending = 0.0
            info = self._info(reward)
            info["illegal_action"] = True
            return self._observation(), reward, True, False, info
        self.env.step(int(action))
        reward = self._collect() + self._pending
        self._pending = 0.0
        more, done, truncated = self._advance()
        return self._observation(), reward + more, done, truncated, self._info(reward + more)

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learning seat (bool), as sb3-contrib's MaskablePPO expects."""
        return self._mask.astype(bool)

    def render(self):
        return self.env.render() if self.render_mode == "ansi" else None

    # ------------------------------------------------------------------ internals
    def _collect(self) -> float:
        """Rewards the learning seat received in the last step (the env reports them per step)."""
        return float(self.env.rewards.get(f"player_{self.seat}", 0.0))

    def _advance(self) -> tuple[float, bool, bool]:
        """Let the other seats act until the learning seat must decide or the episode ends."""
        me = f"player_{self.seat}"
        reward = 0.0
        env = self.env
        while True:
            state = env.engine_state
            if state.over:
                self._mask[:] = 0
                return reward, not state.session.truncated, state.session.truncated
            if not state.session.alive[self.seat]:
                self._mask[:] = 0
                return reward, True, False
            agent = env.agent_selection
            if agent == me:
                self._mask = env.observe(me)["action_mask"].copy()
                return reward, False, False
            seat = int(agent.rsplit("_", 1)[1])
            view = env.observe(agent)
            env.step(self._agents[seat].act(view["observation"], view["action_mask"], env.infos[agent]))
            reward += self._collect()

    def _observation(self) -> np.ndarray:
        return self.env.observe(f"player_{self.seat}")["observation"]

    def _info(self, reward: float) -> dict[str, Any]:
        info = dict(self.env.infos.get(f"player_{self.seat}", {}))
        info["seat"] = self.seat
        info["action_mask"] = self._mask.astype(bool)
        return info
