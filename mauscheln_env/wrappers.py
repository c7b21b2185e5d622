"""PettingZoo's three classic wrappers in one layer: what ``mauscheln_env.env()`` returns.

``pettingzoo.utils.wrappers`` stacks ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
TerminateIllegalWrapper(raw_env)))``. Every attribute a loop reads (``agents``,
``agent_selection``, ``terminations``, ``infos``, ...) then travels through three
``__getattr__`` fallbacks, which cost more per decision than the whole rules step.
:class:`ClassicWrapper` has the same semantics in one layer with direct
properties:

* order enforcing: ``rewards``, ``terminations``, ``truncations``, ``infos``,
  ``agent_selection``, ``num_agents`` and ``agents`` raise ``AttributeError``
  before ``reset``; ``step``, ``observe``, ``state``, ``render`` and
  ``agent_iter`` raise PettingZoo's ``AssertionError`` before ``reset``; a
  ``step`` after every agent left logs PettingZoo's warning and does nothing;
  ``agent_iter`` insists on a ``step`` between two agents;
* bounds check: an action outside the action space (``None`` for a live agent
  included) raises ``AssertionError("action is not in action space")``;
* illegal actions: an action outside the mask of the agent's last observation
  terminates every agent, gives the offender ``illegal_reward`` and the others 0,
  and logs PettingZoo's warning, exactly as ``TerminateIllegalWrapper`` does.

It subclasses ``OrderEnforcingWrapper`` (so ``isinstance`` checks and
``pettingzoo.test.api_test`` accept it) but replaces each of its methods; the
PettingZoo sources it mirrors are ``pettingzoo/utils/wrappers/order_enforcing.py``,
``assert_out_of_bounds.py`` and ``terminate_illegal.py`` (pettingzoo 1.24-1.27).
``tests/test_wrappers.py`` plays the same seeded games, illegal actions and
out-of-order calls included, through both and compares everything observable.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Discrete
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from mauscheln_env.errors import MauschelnError

_BEFORE_RESET = "{} cannot be accessed before reset"


class ClassicWrapper(OrderEnforcingWrapper):
    """Terminate-on-illegal, bounds check and order enforcing over ``env`` in one layer."""

    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        if not isinstance(env, AECEnv):
            raise MauschelnError(f"ClassicWrapper wraps a PettingZoo AEC environment, got {type(env).__name__}")
        super().__init__(env)
        self._illegal_value = illegal_reward
        self._prev_obs: Any = None
        self._prev_info: Any = None
        self._terminated = False  # terminated by an illegal move
        # A plain int in [0, n) is in every agent's Discrete(n) space: that case skips gymnasium's
        # numpy round trip; anything else is asked of the agent's space itself.
        spaces = [env.action_space(a) for a in env.possible_agents]
        same = all(isinstance(s, Discrete) and int(s.start) == 0 and s.n == spaces[0].n for s in spaces)
        self._fast_n = int(spaces[0].n) if spaces and same else -1

    # ------------------------------------------------------------------ forwarded state
    def _live(self, name: str) -> AECEnv:
        if not self._has_reset:
            raise AttributeError(_BEFORE_RESET.format(name))
        return self.env

    @property
    def agents(self) -> list:
        return self._live("agents").agents

    @property
    def agent_selection(self) -> Any:
        return self._live("agent_selection").agent_selection

    @property
    def rewards(self) -> dict:
        return self._live("rewards").rewards

    @property
    def terminations(self) -> dict:
        return self._live("terminations").terminations

    @property
    def truncations(self) -> dict:
        return self._live("truncations").truncations

    @property
    def infos(self) -> dict:
        return self._live("infos").infos

    @property
    def num_agents(self) -> int:
        return len(self._live("num_agents").agents)

    @property
    def _cumulative_rewards(self) -> dict:
        return self.env._cumulative_rewards

    # ------------------------------------------------------------------ the AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._has_reset = True
        self._has_updated = True
        self._terminated = False
        self._prev_obs = None
        self._prev_info = None
        self.env.reset(seed=seed, options=options)

    def observe(self, agent: Any) -> Any:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        env = self.env
        obs = env.observe(agent)
        if agent == env.agent_selection:
            self._prev_obs = obs
            self._prev_info = env.infos[agent] if agent in env.infos else {}
        return obs

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        agent = self.agent_selection
        if agent is None:  # AECEnv.last asserts the same
            raise AssertionError
        env = self.env
        observation = self.observe(agent) if observe else None
        return (observation, env._cumulative_rewards[agent], env.terminations[agent], env.truncations[agent],
                env.infos[agent])

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        env = self.env
        if not env.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
            return
        self._has_updated = True
        agent = env.agent_selection
        # AssertOutOfBoundsWrapper
        if not (type(action) is int and 0 <= action < self._fast_n):
            dead = action is None and (env.terminations[agent] or env.truncations[agent])
            if not (dead or env.action_space(agent).contains(action)):
                raise AssertionError("action is not in action space")
        # TerminateIllegalWrapper
        if self._prev_obs is None:
            self.observe(agent)
        if isinstance(self._prev_obs, dict):
            if "action_mask" not in self._prev_obs:
                raise AssertionError(f"`action_mask` not found in dictionary observation: {self._prev_obs}")
            mask = self._prev_obs["action_mask"]
        else:
            if self._prev_info is None or "action_mask" not in self._prev_info:
                raise AssertionError(f"`action_mask` not found in info for non-dictionary observation: {self._prev_info}")
            mask = self._prev_info["action_mask"]
        self._prev_obs = None
        self._prev_info = None
        dead = env.terminations[agent] or env.truncations[agent]
        if self._terminated and dead:
            env._was_dead_step(action)
        elif not dead and not mask[action]:
            EnvLogger.warn_on_illegal_move()
            env._cumulative_rewards[agent] = 0
            env.terminations = dict.fromkeys(env.agents, True)
            env.truncations = dict.fromkeys(env.agents, True)
            env.rewards = dict.fromkeys(env.truncations, 0)
            env.rewards[agent] = float(self._illegal_value)
            env._accumulate_rewards()
            env._deads_step_first()
            self._terminated = True
        else:
            env.step(action)

    def state(self) -> np.ndarray:
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        return self.env.state()

    def render(self) -> Any:
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return self.env.render()

    def agent_iter(self, max_iter: int = 2**63) -> _AgentIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _AgentIterable(self, max_iter)

    def __str__(self) -> str:
        return str(self.env)


class _AgentIterable:
    """What ``agent_iter`` returns: each ``iter()`` starts a fresh count, as PettingZoo's ``AECIterable``."""

    __slots__ = ("wrapper", "max_iter")

    def __init__(self, wrapper: ClassicWrapper, max_iter: int) -> None:
        self.wrapper = wrapper
        self.max_iter = max_iter

    def __iter__(self) -> _OrderedAgents:
        return _OrderedAgents(self.wrapper, self.max_iter)


class _OrderedAgents:
    """The agent to act until every agent left (or ``max_iter``); a ``step`` (or ``reset``) between two."""

    __slots__ = ("wrapper", "left")

    def __init__(self, wrapper: ClassicWrapper, max_iter: int) -> None:
        self.wrapper = wrapper
        self.left = max_iter

    def __iter__(self) -> _OrderedAgents:
        return self

    def __next__(self) -> Any:
        wrapper = self.wrapper
        env = wrapper.env
        if not env.agents or self.left <= 0:
            raise StopIteration
        self.left -= 1
        if not wrapper._has_updated:
            raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
        wrapper._has_updated = False
        return env.agent_selection
