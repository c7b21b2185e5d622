"""Behaviour cloning before self-play: the first ``imitate_decisions`` decisions teach the network a teacher's play.

In each imitation update the teacher (an agent that runs batched) plays every seat of fresh sessions, or, in
a DAgger share of them, the network plays and the teacher only names its choice, so that the network also
learns the teacher's play in the positions its own play reaches. The actor learns the teacher's choices by
masked cross-entropy and the critic the acting seat's return.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from agents.learned import PolicyNet, masked_distribution, sample_actions
from train.ppo.distributed import World
from train.ppo.rollout import critic_input
from train.ppo.seeds import device_generator, seed_for
from train.ppo.storage import Storage

if TYPE_CHECKING:
    from train.ppo.options import Args


def imitation_round(net: PolicyNet, teacher: Any, envs: Any, args: Args, optimizer: torch.optim.Optimizer,
                    update: int, storage: Storage, student: float = 0.0, seed: int | None = None,
                    world: World | None = None) -> tuple[int, dict[str, float]]:
    """One update of behaviour cloning: fresh sessions in which ``teacher`` plays every seat for ``num_steps``
    steps (in a ``student`` share of them, drawn per session, the network plays instead, sampling its policy,
    and the teacher only names its choice: DAgger), then ``update_epochs`` epochs of ``num_minibatches``
    minibatches over every decision. The actor learns the teacher's choice (masked cross-entropy over the
    decisions with a choice), the critic the acting seat's return from that decision to its session's end
    (``reward_scale``, undiscounted) wherever the session ended within the update. Returns the decisions stepped and the last epoch's losses and agreement (the share
    of decisions with a choice where the network's likeliest action is the teacher's).

    ``seed`` is the root of this rank's streams (default ``args.seed``); on several ranks (``world``) each rank
    plays its own sessions (``storage`` holds this rank's) and every step uses the gradient averaged over the
    ranks; the returned losses are this rank's."""
    st, world = storage, world or World()
    seed = args.seed if seed is None else seed
    B, T, device = st.obs.shape[1], args.num_steps, st.obs.device
    gen = torch.Generator(device="cpu").manual_seed(seed_for(seed, update, 1))
    on_device = device_generator(seed, update, device)
    sampler = gen if on_device is None else on_device  # the network's own samples (DAgger)
    if hasattr(teacher, "generator"):
        teacher.generator.manual_seed(seed_for(seed, update, 7))
    obs, mask, to_act = envs.reset(seed=seed_for(seed, update, 3))
    by_student = (torch.rand(B, generator=gen) < student).to(device) if student > 0 else None  # sessions it plays
    net.eval()
    for t in range(T):
        with torch.inference_mode():
            x, trump = net.prepare(obs)
            action = teacher.act(obs, mask)
            played = action
            if by_student is not None:
                own = sample_actions(net.logits_of(x, trump, mask), sampler)
                played = torch.where(by_student, own, action)
        st.obs[t], st.mask[t], st.act[t], st.seat[t] = x, mask, action, to_act.to(device)
        if trump is not None:
            st.trump[t] = trump
        if args.central_critic:
            st.critic[t] = critic_input(envs, obs, st.seat[t], envs.num_players)
        step = envs.step(played)
        st.rew[t] = step.rewards.to(device)
        st.done[t] = (step.terminated | step.truncated).to(device)
        obs, mask, to_act = step.obs.to(device), step.mask.to(device), step.to_act
    # each seat's return to its session's end, backwards; a session still running at T teaches no value
    n = st.rew.shape[-1]
    ret, ended = torch.zeros(B, n, device=device), torch.zeros(B, dtype=torch.bool, device=device)
    ret_buf, has_ret = torch.zeros(T, B, device=device), torch.zeros(T, B, dtype=torch.bool, device=device)
    for t in reversed(range(T)):
        done = st.done[t]
        ret = st.rew[t] * args.reward_scale + ret * (~done)[:, None]
        ended |= done
        ret_buf[t], has_ret[t] = ret.gather(1, st.seat[t][:, None]).squeeze(1), ended
    net.train()
    flat_x, flat_mask = st.obs[:T].view(T * B, -1), st.mask[:T].view(T * B, -1)
    flat_act, flat_trump = st.act[:T].reshape(-1), st.trump[:T].reshape(-1) if net.spec.trump_first else None
    flat_ret, flat_has = ret_buf.reshape(-1), has_ret.reshape(-1)
    flat_critic = st.critic[:T].view(T * B, -1) if args.central_critic else flat_x
    choice = flat_mask.sum(1) > 1
    out: dict[str, float] = {}
    for _epoch in range(args.update_epochs):
        order = torch.randperm(T * B, generator=gen).to(device)
        losses = []
        for idx in torch.tensor_split(order, args.num_minibatches):
            mb_mask, mb_choice, mb_has = flat_mask[idx], choice[idx].float(), flat_has[idx].float()
            logits = net.logits_of(flat_x[idx], None if flat_trump is None else flat_trump[idx], mb_mask)
            logp_all, entropy = masked_distribution(logits, mb_mask)
            logp = logp_all.gather(1, flat_act[idx].unsqueeze(1)).squeeze(1)
            pl = -(logp * mb_choice).sum() / mb_choice.sum().clamp(min=1)
            value = net.value_of(flat_critic[idx])
            vl = 0.5 * (((value - flat_ret[idx]) ** 2) * mb_has).sum() / mb_has.sum().clamp(min=1)
            loss = pl + args.vf_coef * vl
            world.gradient_step(net, optimizer, loss, int(idx.numel()), args.max_grad_norm)
            with torch.no_grad():
                agree = ((logits.argmax(1) == flat_act[idx]).float() * mb_choice).sum() / mb_choice.sum().clamp(min=1)
                ent = (entropy * mb_choice).sum() / mb_choice.sum().clamp(min=1)
            losses.append(torch.stack([pl.detach(), vl.detach(), agree, ent]))  # read back once per epoch
        out = dict(zip(("policy_loss", "value_loss", "agreement", "entropy"),
                       torch.stack(losses).double().mean(0).tolist()))
    return T * B, out
