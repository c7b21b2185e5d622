"""Run agents in the PettingZoo AEC loop.

:func:`play_env` plays one episode of a ``mauscheln_env.env(...)`` (wrapped or
raw) with one :class:`~agents.base.Agent` per PettingZoo agent and returns the
cumulative rewards. :class:`EnvPolicy` wraps a single agent as a callable
``policy(observation_dict, info) -> action`` for loops written by hand. The
same agents run in the engine-level match runner (:mod:`agents.evaluation.match`), which
gives them the very same observation, mask and info.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.base import Agent


class EnvPolicy:
    """An agent bound to one PettingZoo agent name of an environment.

    ``policy(obs, info)`` takes what ``env.last()`` returns for that agent
    (the ``{"observation", "action_mask"}`` dict and ``infos[agent]``) and
    returns an action id. A new deal (the dealer moved on) resets the agent.
    """

    def __init__(self, agent: Agent, env: Any, agent_name: str, seed: int | None = None) -> None:
        unwrapped = env.unwrapped
        if agent_name not in unwrapped.possible_agents:
            raise ValueError(f"unknown agent name {agent_name!r}; allowed: {', '.join(unwrapped.possible_agents)}")
        self.agent = agent
        self.seat = unwrapped.possible_agents.index(agent_name)
        agent.setup(unwrapped.game, self.seat)
        agent.reset(seed)
        self._dealer: int | None = None
        self._deal = 0
        self._seed = seed

    def __call__(self, obs: Mapping[str, np.ndarray], info: Mapping[str, Any]) -> int:
        dealer = info.get("dealer")
        if self._dealer is not None and dealer != self._dealer:
            self._deal += 1
            self.agent.reset(None if self._seed is None else self._seed + 7919 * self._deal)
        self._dealer = dealer
        return int(self.agent.act(obs["observation"], obs["action_mask"], info))


def play_env(env: Any, agents: Mapping[str, Agent] | Sequence[Agent], *, seed: int | None = None,
             options: dict[str, Any] | None = None, agent_seeds: Mapping[str, int] | None = None) -> dict[str, float]:
    """Reset ``env`` and play one episode; returns the cumulative reward of every agent.

    ``agents`` maps PettingZoo agent names to agents, or lists one agent per
    seat. ``agent_seeds`` reseeds the agents (default: ``seed + seat`` when a
    ``seed`` is given).
    """
    env.reset(seed=seed, options=options)
    names = list(env.unwrapped.possible_agents)
    if isinstance(agents, Mapping):
        missing = sorted(set(names) - set(agents))
        if missing:
            raise ValueError(f"no agent for {', '.join(missing)}; every one of {', '.join(names)} needs one")
        by_name = dict(agents)
    else:
        if len(agents) != len(names):
            raise ValueError(f"{len(agents)} agents for {len(names)} seats; allowed: one per seat")
        by_name = dict(zip(names, agents))
    policies = {}
    for i, name in enumerate(names):
        s = None
        if agent_seeds is not None and name in agent_seeds:
            s = agent_seeds[name]
        elif seed is not None:
            s = seed + i
        policies[name] = EnvPolicy(by_name[name], env, name, seed=s)
    totals = dict.fromkeys(names, 0.0)
    for name in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        totals[name] += float(reward)
        if termination or truncation:
            env.step(None)
            continue
        env.step(policies[name](obs, info))
    return totals
