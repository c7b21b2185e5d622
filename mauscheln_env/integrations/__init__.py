"""Glue for the RL pipelines researchers run: each module imports its library only when used.

* :mod:`mauscheln_env.integrations.numeric` — the infos as fixed-shape numbers (TorchRL, Tianshou buffers).
* :mod:`mauscheln_env.integrations.torchrl` — TorchRL's ``PettingZooWrapper`` with masks and a shared group.
* :mod:`mauscheln_env.integrations.openspiel` — the registered OpenSpiel game ``python_mauscheln``.

Tianshou's ``PettingZooEnv`` and Stable-Baselines3 (through :class:`agents.single_agent.SingleAgentEnv`)
need no glue; RLlib's (a ``MultiAgentEnv`` with opponents from :mod:`agents`, the masked RLModule) lives
in :mod:`train.rllib_env`, beside the training script that uses it; ``docs/pipelines/`` shows each pipeline.
"""
