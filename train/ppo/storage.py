"""Where a rollout keeps its decisions: tensors ``[step, session, ...]`` allocated once per run
(:mod:`train.ppo.setup`), filled by :mod:`train.ppo.rollout`, read by the advantages and the update."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class Storage:
    """The decisions of a rollout, ``[step, session, ...]``, with room for the steps that finish the deals."""

    obs: torch.Tensor
    """The network's input (``net.prepare``), not the raw observation."""
    trump: torch.Tensor
    """The trump suit the input was relabelled by (with ``trump_first``)."""
    mask: torch.Tensor
    critic: torch.Tensor
    """The centralised critic's input (width 0 without ``central_critic``)."""
    act: torch.Tensor
    logp: torch.Tensor
    """The log-probability of the action under the learner."""
    val: torch.Tensor
    """The learner's value of the decision."""
    seat: torch.Tensor
    learner: torch.Tensor
    """Whether the learner took the decision and the rollout keeps it."""
    rew: torch.Tensor
    """``[step, session, seat]``: what each seat received in the step."""
    done: torch.Tensor
    """The session ended with the step."""

    @classmethod
    def allocate(cls, steps: int, B: int, D: int, A: int, n: int, critic_size: int | None,
                 device: torch.device) -> Storage:
        return cls(obs=torch.zeros(steps, B, D, device=device),
                   trump=torch.zeros(steps, B, dtype=torch.long, device=device),
                   mask=torch.zeros(steps, B, A, dtype=torch.bool, device=device),
                   critic=torch.zeros(steps, B, critic_size or 0, device=device),
                   act=torch.zeros(steps, B, dtype=torch.long, device=device),
                   logp=torch.zeros(steps, B, device=device),
                   val=torch.zeros(steps, B, device=device),
                   seat=torch.zeros(steps, B, dtype=torch.long, device=device),
                   learner=torch.zeros(steps, B, dtype=torch.bool, device=device),
                   rew=torch.zeros(steps, B, n, device=device),
                   done=torch.zeros(steps, B, dtype=torch.bool, device=device))
