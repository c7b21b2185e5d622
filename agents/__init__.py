"""Agents for the Mauscheln environment, the match runner and the evaluation tools.

>>> from agents import make_agent, play_env
>>> import mauscheln_env
>>> env = mauscheln_env.env(num_players=4)
>>> rewards = play_env(env, [make_agent("expert", seed=s) for s in range(4)], seed=0)

* :mod:`agents.base` — the :class:`Agent` interface and the registry (:func:`make_agent`).
* :mod:`agents.baselines` — ``random``, ``beginner``, ``expert``.
* :mod:`agents.pimc` — ``pimc``, determinized search.
* :mod:`agents.knowledge` — what a seat knows, decoded from its observation and info.
* :mod:`agents.views` — observation, mask and info from the environment's own code for any engine state.
* :mod:`agents.adapters` — agents in the PettingZoo loop.
* :mod:`agents.match` — agents on the engine directly; duplicate deals.
* :mod:`agents.evaluate` — ``mauscheln eval``: duplicate evaluation, cross-table, Bradley–Terry ratings.
* :mod:`agents.play` — ``mauscheln play``: a human against the bots.
"""

from agents.adapters import EnvPolicy, play_env
from agents.base import Agent, agent_from_spec, available_agents, make_agent, parse_agent_spec, register_agent
from agents.knowledge import Knowledge, KnowledgeReader
from agents.match import MatchRunner, SessionRecord, agent_seed, make_deal
from agents.views import EnvView

__all__ = [
    "Agent",
    "EnvPolicy",
    "EnvView",
    "Knowledge",
    "KnowledgeReader",
    "MatchRunner",
    "SessionRecord",
    "agent_from_spec",
    "agent_seed",
    "available_agents",
    "make_agent",
    "make_deal",
    "parse_agent_spec",
    "play_env",
    "register_agent",
]
