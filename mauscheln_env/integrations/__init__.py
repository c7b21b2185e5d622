"""Glue for the RL pipelines researchers run: each module imports its library only when used.

* :mod:`mauscheln_env.integrations.numeric` — the infos as fixed-shape numbers (TorchRL, Tianshou buffers).
* :mod:`mauscheln_env.integrations.torchrl` — TorchRL's ``PettingZooWrapper`` with masks and a shared group.
* :mod:`mauscheln_env.integrations.rllib` — RLlib's new API stack: a ``MultiAgentEnv``, the masked RLModule.
* :mod:`mauscheln_env.integrations.openspiel` — the registered OpenSpiel game ``python_mauscheln``.

Tianshou's ``PettingZooEnv`` and Stable-Baselines3 (through :class:`agents.single_agent.SingleAgentEnv`)
need no glue; ``docs/integrations.md`` shows each pipeline.
"""
