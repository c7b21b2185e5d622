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

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from agents.learned import PolicyNet, masked_distribution, sample_actions
from mauscheln_env.batched import BatchedMauscheln
from mauscheln_env.vector import DEAL_MOUCHE, DEAL_NO_PLAY, DEAL_SETTLED
from train.ppo.distributed import World
from train.ppo.opponents import assign, baseline_actions
from train.ppo.phases import PhaseStats
from train.ppo.seeds import device_generator, seed_for

if TYPE_CHECKING:
    import numpy as np

    from train.ppo.options import Args
    from train.ppo.setup import Run


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


@dataclass
class RolloutTotals:
    """A rollout's figures summed over the ranks (this rank's alone in one process)."""

    kept: int
    """Decisions kept (inside each session's rollout)."""
    stepped: int
    """Decisions stepped (``steps x sessions``)."""
    chips_per_seat: float
    """The mean over sessions and seats of the chips received in the kept steps."""
    pool_won: torch.Tensor
    pool_deals: torch.Tensor


def rollout_totals(rollout: Rollout, world: World) -> RolloutTotals:
    """The rollout's figures over every rank, from one all-reduce: every rank then holds the same pool results
    (and so the same pool scores)."""
    kept = rollout.kept_steps().sum()
    sessions = rollout.cut_at.shape[0]
    if world.size == 1:
        return RolloutTotals(int(kept), rollout.steps * sessions, float(rollout.chips_won.mean()), rollout.pool_won,
                             rollout.pool_deals)
    P = rollout.pool_won.shape[0]
    chips = rollout.chips_won.to(torch.float64)
    buf = torch.cat([rollout.pool_won.to(torch.float64), rollout.pool_deals.to(torch.float64),
                     torch.stack([kept.to(torch.float64), torch.tensor(float(rollout.steps * sessions), dtype=torch.float64,
                                                                       device=chips.device),
                                  chips.sum(), torch.tensor(float(chips.numel()), dtype=torch.float64,
                                                            device=chips.device)])])
    world.sum_(buf)
    kept_all, stepped, chips_sum, cells = buf[2 * P:].tolist()
    return RolloutTotals(int(kept_all), int(stepped), chips_sum / max(cells, 1.0), buf[:P], buf[P:2 * P])


def collect_rollout(run: Run, update: int, gen: torch.Generator, rng: np.random.Generator) -> Rollout:
    """Play fresh sessions (deals from ``(seed, update)``, opponents seated by ``rng``, the learner sampling
    from ``gen``) into ``run.storage``; each session's rollout is cut where the deal running at ``num_steps``
    ended.

    Everything stays on the run's device: per step, a CUDA run reads back only whether sessions ended (their
    new opponents are drawn from ``rng``, in session order, as on the CPU), the sizes of the groups of sessions
    each pool snapshot or baseline plays (their forward passes run on those rows only), and, in the steps that
    finish the deals, whether deals are still running."""
    args, envs, net, st, device, prof = run.args, run.envs, run.net, run.storage, run.device, run.profile
    opponent_nets, baselines, pool_scores = run.pool.nets, run.baselines, run.pool.scores
    B, n, T = run.num_envs, envs.num_players, args.num_steps
    TE = T + args.finish_steps
    P = len(opponent_nets)
    on_device = device_generator(run.seed, update, device)
    sampler = gen if on_device is None else on_device
    with prof("engine"):
        obs, mask, to_act = envs.reset(seed=seed_for(run.seed, update, 3))
    controllers = assign(rng, B, n, args, P, len(baselines), pool_scores).to(device)
    chips_won = torch.zeros(B, n, device=device)
    pool_won = torch.zeros(P + 1, device=device)  # learner chips against snapshot k (index k)
    pool_deals = torch.zeros(P + 1, device=device)
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
                with prof("forward"):
                    boot[rows] = boot_values(net, envs, args, n, rows)
        if t >= T and (not running.any() or t == TE):
            break
        kept = torch.ones(B, dtype=torch.bool, device=device) if t < T else running
        seat = to_act.to(device)
        ctrl = controllers.gather(1, seat.long()[:, None]).squeeze(1)
        if t < T:
            rows = None
            x, trump, critic_in, action, logp, value = policy_step(
                net, opponent_nets, baselines, envs, args, obs, mask, seat, ctrl, sampler, None, prof)
        else:
            # Finishing the deals still running: only those sessions' decisions are kept, so only they ask
            # the players; every other session (its rollout cut already) takes its first legal action.
            rows = running.nonzero().squeeze(-1)
            action = mask.to(torch.uint8).argmax(1)
            st.val[t] = 0.0
            x, trump, critic_in, action[rows], logp, value = policy_step(
                net, opponent_nets, baselines, envs, args, obs[rows], mask[rows], seat[rows], ctrl[rows], sampler,
                rows, prof)
        at = t if rows is None else (t, rows)
        st.obs[at], st.val[at], st.logp[at] = x, value, logp
        if trump is not None:
            st.trump[at] = trump
        if args.central_critic:
            st.critic[at] = critic_in
        st.mask[t], st.act[t], st.seat[t] = mask, action, seat
        st.learner[t] = (ctrl == 0) & kept
        phase_stats.record(obs, action, seat, (ctrl == 0) & kept)
        with prof("engine"):
            step = envs.step(action)
            obs, mask, to_act = step.obs.to(device), step.mask.to(device), step.to_act
        st.rew[t] = step.rewards.to(device) * kept[:, None]
        ended = (step.terminated | step.truncated).to(device)
        st.done[t] = ended
        deal_kind = step.info["deal_kind"].to(device)
        last_kind, last_ended = deal_kind, ended
        chips_won += st.rew[t]
        if t >= T:  # a deal that was running at T ended: cut its session here
            cut = running & (ended | (last_kind == DEAL_SETTLED) | (last_kind == DEAL_NO_PLAY)
                             | (last_kind == DEAL_MOUCHE))
            if cut.any():
                cut_at[cut] = t
                running &= ~cut
                goes_on = cut & ~ended  # a session of several deals: bootstrap at the next deal
                if goes_on.any():
                    rows = goes_on.nonzero().squeeze(-1)
                    with prof("forward"):
                        boot[rows] = boot_values(net, envs, args, n, rows)
        if opponent_nets:  # the learner's result (chips per learner seat) against each snapshot it met
            opp = controllers.max(dim=1).values
            is_learner = (controllers == 0).float()
            vs_pool = (opp >= 1) & (opp <= P) & (deal_kind > 0) & kept
            per_seat = (st.rew[t] * is_learner).sum(1) / is_learner.sum(1)
            against = torch.where(vs_pool, opp, 0)  # sessions not against a snapshot add 0 at index 0
            pool_won.index_add_(0, against, torch.where(vs_pool, per_seat, 0.0))
            pool_deals.index_add_(0, against, vs_pool.float())
        if ended.any():  # new sessions get new opponents
            idx = ended.nonzero().squeeze(-1)
            controllers[idx] = assign(rng, len(idx), n, args, P, len(baselines), pool_scores).to(device)
        t += 1
    if running.any():  # deals still running after finish_steps: bootstrap from the seats' observations
        cut_at[running] = t - 1
        rows = running.nonzero().squeeze(-1)
        with prof("forward"):
            boot[rows] = boot_values(net, envs, args, n, rows)
    return Rollout(steps=t, cut_at=cut_at, boot=boot, chips_won=chips_won, pool_won=pool_won, pool_deals=pool_deals,
                   phase_stats=phase_stats)


def policy_step(net: PolicyNet, opponent_nets: list[PolicyNet], baselines: list[Any], envs: Any, args: Args,
                obs: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor, ctrl: torch.Tensor,
                gen: torch.Generator, rows: torch.Tensor | None, prof: Any = None
                ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One decision in each of the given sessions (``rows`` of the batch, or all when None): the learner's
    input ``x``, trump suits, critic input, the actions (learner, snapshots and baselines by ``ctrl``), the
    log-probability of each action under the learner and the learner's value. ``gen`` samples on its device
    (on another device, the device's default generator)."""
    sampler = gen if gen.device == obs.device else None
    prof = prof or _no_profile
    n = envs.num_players
    with torch.inference_mode():  # no autograd bookkeeping in the rollout
        with prof("forward"):
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
        with prof("opponents"):
            for k, opp in enumerate(opponent_nets, start=1):
                mine = (ctrl == k).nonzero().squeeze(-1)
                if mine.numel():
                    opp_trump = None if trump is None else trump[mine]
                    action[mine] = sample_actions(opp.logits_of(x[mine], opp_trump, mask[mine]), sampler)
            if baselines:
                baseline_actions(envs, baselines, ctrl, seat, obs, mask, action, len(opponent_nets), rows)
        logp = logp_all.gather(1, action.unsqueeze(1)).squeeze(1)
    return x, trump, critic_in, action, logp, value


def _no_profile(part: str) -> Any:
    return contextlib.nullcontext()


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
