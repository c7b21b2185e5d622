"""Agents for the Mauscheln environment, the match runner and the evaluation tools.

>>> from agents import make_agent, play_env
>>> import mauscheln_env
>>> env = mauscheln_env.env(num_players=4)
>>> rewards = play_env(env, [make_agent("expert", seed=s) for s in range(4)], seed=0)

The interface, one module each:

* :mod:`agents.base` — the :class:`Agent` interface and the registry (:func:`make_agent`).
* :mod:`agents.knowledge` — what a seat knows, decoded from its observation and info.
* :mod:`agents.views` — observation, mask and info from the environment's own code for any engine state.
* :mod:`agents.adapters` — agents in the PettingZoo loop; :mod:`agents.single_agent` — in a Gymnasium loop.

The agents and the tools around them, one package per concern:

* :mod:`agents.scripted` — ``random``, ``beginner``, ``expert``: one strategy module per ruleset family.
* :mod:`agents.tensor` — the batched (tensor) forms of the agents, for the batched engine.
* :mod:`agents.search` — ``pimc`` and the OpenSpiel bots.
* :mod:`agents.learned` — the policy network, its file format, ``learned`` and ``sb3``; the shipped policies.
* :mod:`agents.evaluation` — the match runner, duplicate evaluation, tournaments and ratings (``mauscheln eval``).
* :mod:`agents.bench` — the standard benchmark: deal sets, runs, the leaderboard database, the HTML report.
* :mod:`agents.play` — a human at the table (``mauscheln play``) and rendered demos (``mauscheln demo``).
"""

import mauscheln_env  # noqa: F401  (first: it loads the compiled build of the hot modules, mauscheln_env.compiled)
from agents.adapters import EnvPolicy, play_env
from agents.base import Agent, agent_from_spec, available_agents, make_agent, parse_agent_spec, register_agent
from agents.evaluation.match import MatchRunner, SessionRecord, agent_seed, make_deal
from agents.knowledge import Knowledge, KnowledgeReader
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
