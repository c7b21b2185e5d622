"""The PPO update: clipped surrogate, clipped value loss and masked entropy over the learner's decisions.

Only the learner's decisions up to each session's cut are learned from (the snapshots' and baselines'
decisions are stored with them, but not theirs to learn). The mask stored with every decision is applied
again here, so the probability ratio uses the support the action was sampled from, and the entropy bonus
is the masked entropy. With a magnet, ``magnet_coef`` x KL(policy || magnet) over the legal actions is added
to each minibatch's loss (magnetic mirror descent's regulariser).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from agents.learned import PolicyNet, masked_distribution
from train.ppo.distributed import World

if TYPE_CHECKING:
    from train.ppo.options import Args
    from train.ppo.rollout import Rollout
    from train.ppo.storage import Storage


@dataclass
class UpdateStats:
    """What an update logs: the last epoch's mean losses, the last minibatch's KL estimates, the clip fraction
    over every minibatch, and how well the values explained the returns."""

    policy_loss: float
    value_loss: float
    entropy: float
    magnet_kl: float
    approx_kl: float
    old_approx_kl: float
    clipfrac: float
    explained_variance: float
    learner_decisions: int


def learning_rate(args: Args, update: int, num_updates: int, imitation: bool) -> float:
    """The learning rate of ``update``: constant while imitating, else annealed linearly to 0 (``anneal_lr``)."""
    if imitation:
        return args.imitate_learning_rate
    return args.learning_rate * ((1.0 - update / num_updates) if args.anneal_lr else 1.0)


def ppo_update(net: PolicyNet, optimizer: torch.optim.Optimizer, magnet: PolicyNet | None, args: Args,
               storage: Storage, rollout: Rollout, advantages: torch.Tensor, returns: torch.Tensor,
               gen: torch.Generator, world: World | None = None) -> UpdateStats:
    """``update_epochs`` epochs of ``num_minibatches`` minibatches (order drawn from ``gen``) over the learner's
    kept decisions; stops early when the approximate KL passes ``target_kl``.

    On several ranks (``world``) each rank splits its own decisions into as many minibatches as the rank with the
    most (so every rank takes the same steps) and each step uses the gradient averaged over the ranks
    (:meth:`~train.ppo.distributed.World.gradient_step`); the early stop uses the KL averaged over the ranks.
    The logged losses are this rank's."""
    world = world or World()
    steps, B = rollout.steps, storage.obs.shape[1]
    device = advantages.device
    prof = world.profile or (lambda part: contextlib.nullcontext())
    net.train()
    # The learner's decisions, as rows of the flattened buffers: each minibatch gathers its rows straight
    # from the storage (no copy of every learner row first); the small per-decision columns are taken once.
    sel = (storage.learner[:steps] & rollout.kept_steps()).reshape(-1).nonzero().squeeze(-1)
    flat_obs = storage.obs[:steps].view(-1, storage.obs.shape[-1])
    flat_mask = storage.mask[:steps].view(-1, storage.mask.shape[-1])
    flat_critic = storage.critic[:steps].view(steps * B, -1) if args.central_critic else None
    b_trump = storage.trump[:steps].reshape(-1)[sel] if args.trump_first else None
    b_act, b_logp = storage.act[:steps].reshape(-1)[sel], storage.logp[:steps].reshape(-1)[sel]
    b_adv, b_ret = advantages.reshape(-1)[sel], returns.reshape(-1)[sel]
    b_val = storage.val[:steps].reshape(-1)[sel]
    size = int(sel.numel())
    most = world.most(size)  # the most learner decisions of any rank (this rank's, on one)
    # Exactly num_minibatches nearly equal minibatches (no tiny remainder batch with its own full step);
    # the logged losses are means over the last epoch's minibatches.
    chunks = min(args.num_minibatches, max(most, 1))
    clipfracs: list[torch.Tensor] = []
    approx_kl, old_kl, kl_rows = torch.zeros((), device=device), torch.zeros((), device=device), 0
    pg_loss = v_loss = entropy_loss = magnet_kl = 0.0
    for _epoch in range(args.update_epochs if most else 0):  # no learner decision: nothing to learn
        order = torch.randperm(size, generator=gen).to(device)
        epoch_losses = []
        for idx in torch.tensor_split(order, chunks):
            if not idx.numel():  # (several ranks) this rank has no decision left for this step: it adds nothing
                world.gradient_step(net, optimizer, None, 0, args.max_grad_norm)
                continue
            with prof("update"):
                rows = sel[idx]
                mb_obs, mb_mask = flat_obs.index_select(0, rows), flat_mask.index_select(0, rows)
                mb_trump = None if b_trump is None else b_trump[idx]
                logits = net.logits_of(mb_obs, mb_trump, mb_mask)
                logp_all, entropy = masked_distribution(logits, mb_mask)
                new_logp = logp_all.gather(1, b_act[idx].unsqueeze(1)).squeeze(1)
                ratio = (new_logp - b_logp[idx]).exp()
                with torch.no_grad():
                    old_kl = (-(new_logp - b_logp[idx])).mean()
                    approx_kl = ((ratio - 1) - (new_logp - b_logp[idx])).mean()
                    kl_rows = int(idx.numel())
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean())
                adv = b_adv[idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8) if adv.numel() > 1 else adv
                pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                new_v = net.value_of(flat_critic.index_select(0, rows) if flat_critic is not None else mb_obs)
                if args.clip_vloss:
                    v_clipped = b_val[idx] + (new_v - b_val[idx]).clamp(-args.clip_coef, args.clip_coef)
                    vl = 0.5 * torch.max((new_v - b_ret[idx]) ** 2, (v_clipped - b_ret[idx]) ** 2).mean()
                else:
                    vl = 0.5 * ((new_v - b_ret[idx]) ** 2).mean()
                ent = entropy.mean()
                loss = pg - args.ent_coef * ent + args.vf_coef * vl
                mkl = torch.zeros((), device=device)
                if magnet is not None:  # KL(policy || magnet) over the legal actions
                    with torch.no_grad():
                        magnet_logp = torch.log_softmax(magnet.logits_of(mb_obs, mb_trump, mb_mask), dim=-1)
                    p = torch.where(mb_mask, logp_all, 0.0).exp()
                    mkl = torch.where(mb_mask, p * (logp_all - magnet_logp), 0.0).sum(-1).mean()
                    loss = loss + args.magnet_coef * mkl
                world.gradient_step(net, optimizer, loss, int(idx.numel()), args.max_grad_norm)
                # kept on the device: one read-back per epoch, not per minibatch
                epoch_losses.append(torch.stack([pg.detach(), vl.detach(), ent.detach(), mkl.detach()]))
        if epoch_losses:
            pg_loss, v_loss, entropy_loss, magnet_kl = torch.stack(epoch_losses).double().mean(0).tolist()
        if args.target_kl is not None and world.mean_of(approx_kl, kl_rows) > args.target_kl:
            break
    with torch.no_grad():
        var_y = b_ret.var()
        explained = float("nan") if var_y == 0 else float(1 - (b_ret - b_val).var() / var_y)
    return UpdateStats(policy_loss=pg_loss, value_loss=v_loss, entropy=entropy_loss, magnet_kl=magnet_kl,
                       approx_kl=float(approx_kl), old_approx_kl=float(old_kl),
                       clipfrac=float(torch.stack(clipfracs).double().mean()) if clipfracs else 0.0,
                       explained_variance=explained, learner_decisions=size)
