"""Learned policies: the network, its file format, and the agents that play it.

* :mod:`agents.learned.network` — :class:`PolicyNet` (actor and critic MLPs) and masked sampling.
* :mod:`agents.learned.checkpoint` — the ``.safetensors`` policy format: save, read, check, the shipped policies.
* :mod:`agents.learned.agent` — ``learned`` (:class:`LearnedAgent`) and its batched form (:class:`BatchedLearned`).
* :mod:`agents.learned.sb3` — a Stable-Baselines3 model as an agent (``sb3``).
* :mod:`agents.learned.portable` — ``onnx`` and ``torchscript``: a network file from any framework, observation -> logits.
* :mod:`agents.learned.export` — ``mauscheln export``: a policy written as such a file.

The shipped policies lie in ``agents/learned/policies/``, one per table they were trained for.
"""

from agents.learned.agent import BatchedLearned, LearnedAgent, NumpyActor
from agents.learned.checkpoint import (
    FORMAT,
    MAX_LAYERS,
    MAX_WIDTH,
    POLICY_DIR,
    SESSION_LENGTH_OPTIONS,
    CheckpointError,
    available_policies,
    check_compatible,
    check_finite,
    expected_shapes,
    latest_checkpoint,
    layout_of,
    load_policy,
    net_spec_from_meta,
    read_policy,
    resolve_checkpoint,
    rules_of,
    save_policy,
    shipped_policy_name,
    trained_for,
)
from agents.learned.network import (
    CARD_PIECES,
    NetSpec,
    PolicyNet,
    masked_distribution,
    sample_actions,
    sample_by_uniform,
    trump_first_tables,
)

__all__ = [
    "CARD_PIECES",
    "FORMAT",
    "MAX_LAYERS",
    "MAX_WIDTH",
    "POLICY_DIR",
    "SESSION_LENGTH_OPTIONS",
    "BatchedLearned",
    "CheckpointError",
    "LearnedAgent",
    "NetSpec",
    "NumpyActor",
    "PolicyNet",
    "available_policies",
    "check_compatible",
    "check_finite",
    "expected_shapes",
    "latest_checkpoint",
    "layout_of",
    "load_policy",
    "masked_distribution",
    "net_spec_from_meta",
    "read_policy",
    "resolve_checkpoint",
    "rules_of",
    "sample_actions",
    "sample_by_uniform",
    "save_policy",
    "shipped_policy_name",
    "trained_for",
    "trump_first_tables",
]
