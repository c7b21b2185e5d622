"""Advantages: GAE along each seat's own decisions, each session up to its cut.

A seat's reward for a decision is everything it received until its next decision (settlements land during
other seats' turns), and its advantage chain runs over its own decisions only. A session's chains end at its
cut (later steps belong to no decision of this rollout) and continue from the bootstrap value of what each
seat gets after the cut: 0 where the session ended there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from train.ppo.options import Args
    from train.ppo.rollout import Rollout
    from train.ppo.storage import Storage


def rollout_advantages(storage: Storage, rollout: Rollout, args: Args) -> tuple[torch.Tensor, torch.Tensor]:
    """``(advantages, returns)``, each ``[steps, sessions]``, of a rollout (rewards scaled by ``reward_scale``)."""
    steps = rollout.steps
    return seat_gae(storage.rew[:steps] * args.reward_scale, storage.val[:steps], storage.seat[:steps],
                    storage.done[:steps], rollout.boot, rollout.cut_at, args.gamma, args.gae_lambda)


def seat_gae(rewards: torch.Tensor, values: torch.Tensor, seats: torch.Tensor, dones: torch.Tensor,
             boot: torch.Tensor, cut_at: torch.Tensor, gamma: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE along each seat's own decisions.

    ``rewards[t, b, s]`` is what seat s received in step t; a decision's reward is
    everything its seat received until its next decision. Session b's chains are
    cut after step ``cut_at[b]`` (later steps are ignored) and continue with
    ``boot[b, s]``, the value of what seat s gets after the cut (0 when the
    session ended there).
    """
    T, B, n = rewards.shape
    rows = torch.arange(B, device=rewards.device)
    next_value = boot.clone()
    next_adv = torch.zeros(B, n, device=rewards.device)
    pending = torch.zeros(B, n, device=rewards.device)
    advantages = torch.zeros(T, B, device=rewards.device)
    for t in range(T - 1, -1, -1):  # selections by torch.where, not by mask: no read-back per step on CUDA
        ended = dones[t][:, None]  # the session ended with action t: later steps belong to the next session
        cut = (cut_at == t)[:, None]  # the session's chains end after this step (anything later is not this rollout's)
        restart = ended | cut
        next_value = torch.where(ended, 0.0, torch.where(cut, boot, next_value))
        next_adv = torch.where(restart, 0.0, next_adv)
        pending = torch.where(restart, 0.0, pending)
        pending += rewards[t]
        s = seats[t]
        r = pending[rows, s]
        pending[rows, s] = 0.0
        delta = r + gamma * next_value[rows, s] - values[t]
        adv = delta + gamma * lam * next_adv[rows, s]
        advantages[t] = adv
        next_value[rows, s] = values[t]
        next_adv[rows, s] = adv
    return advantages, advantages + values
