"""A rollout: fresh sessions, stepped ``num_steps`` times, then on until every deal still running has ended.

Each rollout starts fresh sessions from a seed derived from (seed, update) and steps them ``num_steps`` times;
then it steps on (at most ``finish_steps`` times) while some deal that was running at ``num_steps`` has not
ended. Each session's rollout is cut at that deal's end, so every decision's return is real chips, not a
guess. Bootstrapping a cut deal from the seats' observations would be badly biased here: a seat that passed
never acts again in its deal, so the critic never learns the value of its observations. Only a session of
several deals (cut between two deals) or a deal still running after ``finish_steps`` is bootstrapped.

The learner samples its actions; the snapshots and scripted baselines of :mod:`train.ppo.opponents` overwrite
the actions of the seats they hold. Every decision is stored (the network's input, the mask, the action, its
log-probability and value, the seat, whether the learner took it); :mod:`train.ppo.update` learns from the
learner's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from agents.learned import PolicyNet, masked_distribution, sample_actions
from mauscheln_env.batched import BatchedMauscheln
from mauscheln_env.vector import DEAL_MOUCHE, DEAL_NO_PLAY, DEAL_SETTLED
from train.ppo.logs import PhaseStats
from train.ppo.opponents import assign, baseline_actions
from train.ppo.seeds import seed_for

if TYPE_CHECKING:
    import numpy as np

    from train.ppo.setup import Run
    from train.ppo_selfplay import Args


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


@dataclass
class Rollout:
    """What a rollout leaves besides the stored decisions."""

    steps: int
    """Steps taken (``num_steps`` plus those that finished the deals)."""
    cut_at: torch.Tensor
    """``[session]``: the last step of each session's rollout."""
    boot: torch.Tensor
    """``[session, seat]``: each seat's value after its session's cut (0 where the session ended there)."""
    chips_won: torch.Tensor
    """``[session, seat]``: chips received in the kept steps."""
    pool_won: torch.Tensor
    """``[1 + snapshots]``: the learner's chips per learner seat against snapshot k (index k), summed over deals."""
    pool_deals: torch.Tensor
    """``[1 + snapshots]``: the deals those chips came from."""
    phase_stats: PhaseStats

    def kept_steps(self) -> torch.Tensor:
        """``bool[steps, session]``: the steps inside each session's rollout."""
        return torch.arange(self.steps, device=self.cut_at.device)[:, None] <= self.cut_at[None, :]


def collect_rollout(run: Run, update: int, gen: torch.Generator, rng: np.random.Generator) -> Rollout:
    """Play fresh sessions (deals from ``(seed, update)``, opponents seated by ``rng``, the learner sampling
    from ``gen``) into ``run.storage``; each session's rollout is cut where the deal running at ``num_steps``
    ended."""
    args, envs, net, st, device = run.args, run.envs, run.net, run.storage, run.device
    opponent_nets, baselines, pool_scores = run.pool.nets, run.baselines, run.pool.scores
    B, n, T = args.num_envs, envs.num_players, args.num_steps
    TE = T + args.finish_steps
    obs, mask, to_act = envs.reset(seed=seed_for(args.seed, update, 3))
    controllers = assign(rng, B, n, args, len(opponent_nets), len(baselines), pool_scores)
    chips_won = torch.zeros(B, n)
    pool_won = torch.zeros(len(opponent_nets) + 1)  # learner chips against snapshot k (index k)
    pool_deals = torch.zeros(len(opponent_nets) + 1)
    phase_stats = PhaseStats(run.game)
    net.eval()
    # Steps 0..T-1 for every session; then, while some deal that was running at T has not ended, step on
    # (at most finish_steps more). Session b's decisions count up to cut_at[b]: the step that ended that
    # deal (or T-1 when no deal was running); later steps of b are stepped but neither kept nor learned.
    running = torch.zeros(B, dtype=torch.bool, device=device)  # a deal running at T that has not ended yet
    cut_at = torch.full((B,), T - 1, dtype=torch.long, device=device)
    boot = torch.zeros(B, n, device=device)  # each seat's value after its session's cut
    last_kind = torch.zeros(B, dtype=torch.long, device=device)
    last_ended = torch.zeros(B, dtype=torch.bool, device=device)
    t = 0
    while True:
        if t == T:
            running = (last_kind == 0) & ~last_ended
            settled = ~running & ~last_ended  # a deal ended at T-1 and the session goes on
            if settled.any():
                rows = settled.nonzero().squeeze(-1)
                boot[rows] = boot_values(net, envs, args, n, rows)
        if t >= T and (not running.any() or t == TE):
            break
        kept = torch.ones(B, dtype=torch.bool, device=device) if t < T else running
        seat = to_act.to(device)
        ctrl = controllers[torch.arange(B), seat.cpu()].to(device)
        if t < T:
            rows = None
            x, trump, critic_in, action, logp, value = policy_step(
                net, opponent_nets, baselines, envs, args, obs, mask, seat, ctrl, gen, None)
        else:
            # Finishing the deals still running: only those sessions' decisions are kept, so only they ask
            # the players; every other session (its rollout cut already) takes its first legal action.
            rows = running.nonzero().squeeze(-1)
            action = mask.to(torch.uint8).argmax(1)
            st.val[t] = 0.0
            x, trump, critic_in, action[rows], logp, value = policy_step(
                net, opponent_nets, baselines, envs, args, obs[rows], mask[rows], seat[rows], ctrl[rows], gen, rows)
        at = t if rows is None else (t, rows)
        st.obs[at], st.val[at], st.logp[at] = x, value, logp
        if trump is not None:
            st.trump[at] = trump
        if args.central_critic:
            st.critic[at] = critic_in
        st.mask[t], st.act[t], st.seat[t] = mask, action, seat
        st.learner[t] = (ctrl == 0) & kept
        phase_stats.record(obs, action, seat, (ctrl == 0) & kept)
        step = envs.step(action)
        obs, mask, to_act = step.obs.to(device), step.mask.to(device), step.to_act
        st.rew[t] = step.rewards.to(device) * kept[:, None]
        ended = (step.terminated | step.truncated).to(device)
        st.done[t] = ended
        last_kind, last_ended = step.info["deal_kind"].to(device), ended
        rewards_cpu = st.rew[t].cpu()
        chips_won += rewards_cpu
        if t >= T:  # a deal that was running at T ended: cut its session here
            cut = running & (ended | (last_kind == DEAL_SETTLED) | (last_kind == DEAL_NO_PLAY)
                             | (last_kind == DEAL_MOUCHE))
            if cut.any():
                cut_at[cut] = t
                running &= ~cut
                goes_on = cut & ~ended  # a session of several deals: bootstrap at the next deal
                if goes_on.any():
                    rows = goes_on.nonzero().squeeze(-1)
                    boot[rows] = boot_values(net, envs, args, n, rows)
        if opponent_nets:  # the learner's result (chips per learner seat) against each snapshot it met
            opp = controllers.max(dim=1).values
            is_learner = (controllers == 0).float()
            vs_pool = ((opp >= 1) & (opp <= len(opponent_nets)) & (step.info["deal_kind"].cpu() > 0)
                       & kept.cpu())
            if vs_pool.any():
                rows = vs_pool.nonzero().squeeze(-1)
                per_seat = (rewards_cpu[rows] * is_learner[rows]).sum(1) / is_learner[rows].sum(1)
                pool_won.index_add_(0, opp[rows], per_seat)
                pool_deals.index_add_(0, opp[rows], torch.ones(len(rows)))
        if ended.any():  # new sessions get new opponents
            idx = ended.nonzero().squeeze(-1).cpu()
            controllers[idx] = assign(rng, len(idx), n, args, len(opponent_nets), len(baselines), pool_scores)
        t += 1
    if running.any():  # deals still running after finish_steps: bootstrap from the seats' observations
        cut_at[running] = t - 1
        rows = running.nonzero().squeeze(-1)
        boot[rows] = boot_values(net, envs, args, n, rows)
    return Rollout(steps=t, cut_at=cut_at, boot=boot, chips_won=chips_won, pool_won=pool_won, pool_deals=pool_deals,
                   phase_stats=phase_stats)


def policy_step(net: PolicyNet, opponent_nets: list[PolicyNet], baselines: list[Any], envs: Any, args: Args,
                obs: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor, ctrl: torch.Tensor,
                gen: torch.Generator, rows: torch.Tensor | None
                ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One decision in each of the given sessions (``rows`` of the batch, or all when None): the learner's
    input ``x``, trump suits, critic input, the actions (learner, snapshots and baselines by ``ctrl``), the
    log-probability of each action under the learner and the learner's value."""
    sampler = gen if obs.device.type == "cpu" else None
    n = envs.num_players
    with torch.inference_mode():  # no autograd bookkeeping in the rollout
        x, trump = net.prepare(obs)
        if args.central_critic:
            critic_in = (critic_input(envs, obs, seat, n) if rows is None
                         else critic_rows(envs, rows, seat, n).to(obs.device))
        else:
            critic_in = x
        logits = net.logits_of(x, trump, mask)
        action = sample_actions(logits, sampler)
        logp_all, _ = masked_distribution(logits, mask)
        value = net.value_of(critic_in)
        for k, opp in enumerate(opponent_nets, start=1):
            mine = (ctrl == k).nonzero().squeeze(-1)
            if mine.numel():
                opp_trump = None if trump is None else trump[mine]
                action[mine] = sample_actions(opp.logits_of(x[mine], opp_trump, mask[mine]), sampler)
        if baselines:
            baseline_actions(envs, baselines, ctrl, seat, obs, mask, action, len(opponent_nets), rows)
        logp = logp_all.gather(1, action.unsqueeze(1)).squeeze(1)
    return x, trump, critic_in, action, logp, value


def boot_values(net: PolicyNet, envs: Any, args: Args, n: int, rows: torch.Tensor) -> torch.Tensor:
    """``[len(rows), n]``: the value of every seat's current observation in sessions ``rows`` (the critic's guess
    of what each seat gets from here), one forward pass over all (session, seat) pairs."""
    R = rows.shape[0]
    pair_rows = rows.repeat(n)  # seat-major: seat 0 of every row, then seat 1, ...
    pair_seats = torch.arange(n, device=rows.device).repeat_interleave(R)
    obs = observe_rows(envs, pair_rows, pair_seats)
    with torch.inference_mode():
        values = net.value(critic_rows(envs, pair_rows, pair_seats, n) if args.central_critic else obs)
    return values.view(n, R).t()


def observe_rows(envs: Any, rows: torch.Tensor, seats: torch.Tensor) -> torch.Tensor:
    """``float32[len(rows), D]``: the observation of seat ``seats[i]`` in session ``rows[i]`` (rows may repeat).

    On the batched engine only those sessions are encoded (``envs.observe`` would encode every session);
    elsewhere one ``observe`` per seat, keeping the rows asked for.
    """
    if isinstance(envs, BatchedMauscheln):
        return envs.observe_rows(rows, seats)
    out = torch.empty(rows.shape[0], envs.obs_size)
    for s in seats.unique().tolist():
        at = (seats == s).nonzero().squeeze(-1)
        out[at] = envs.observe(s)[rows[at].cpu()].to(out.device)
    return out.to(rows.device)


def critic_input(envs: Any, obs: torch.Tensor, seat: torch.Tensor, n: int) -> torch.Tensor:
    """The centralised critic's input for every session: its full state and the acting seat."""
    state = envs.state().to(obs.device)
    return torch.cat([state, torch.nn.functional.one_hot(seat.long(), n).float()], dim=1)


def critic_rows(envs: Any, rows: torch.Tensor, seats: torch.Tensor, n: int) -> torch.Tensor:
    """The centralised critic's input (the full state of session ``rows[i]`` and seat ``seats[i]``)."""
    if isinstance(envs, BatchedMauscheln):
        state = envs.state_rows(rows)
    else:
        state = envs.state()[rows.cpu()].to(rows.device)
    return torch.cat([state, torch.nn.functional.one_hot(seats.long(), n).float()], dim=1)
