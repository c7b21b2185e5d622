"""Masked PPO self-play for the Mauscheln family, CleanRL-style: the options, then the loop that reads top to bottom.

    mauscheln train --config configs/train/quick.yaml
    python -m train.ppo_selfplay --total-decisions 2000000 --num-envs 512 --seed 1
    python -m train.ppo_selfplay --resume runs/mauscheln__ppo_selfplay__1__1764470000

One policy network plays every seat from the egocentric observation. Illegal
actions are masked when sampling, the mask is stored with every transition and
applied again at update time (so the probability ratio uses the same support),
and the entropy bonus is the masked entropy. The value head sees the
observation, or with ``central_critic`` the full hidden state plus the seat
(a centralised critic, training only).

Each update (:func:`train`) is one of:

* behaviour cloning of a teacher, for the first ``imitate_decisions``
  decisions (:mod:`train.ppo.imitation`);
* a PPO update: a rollout of fresh sessions, each played until the deal
  running at ``num_steps`` has ended, so that every decision's return is real
  chips, not a guess (:mod:`train.ppo.rollout`); advantages by GAE along each
  seat's own decisions, a seat's reward being everything it received until its
  next decision (:mod:`train.ppo.advantages`); the clipped update over the
  learner's decisions (:mod:`train.ppo.update`); a snapshot into the opponent
  pool every ``pool_every`` updates (:mod:`train.ppo.opponents`);

then the logs (:mod:`train.ppo.logs`), a checkpoint every ``checkpoint_every``
updates (:mod:`train.ppo.checkpoint`) and a duplicate evaluation every
``eval_every`` (:mod:`train.ppo.evaluation`). Every draw of an update comes
from (seed, update) (:mod:`train.ppo.seeds`), so an update is a pure function
of (parameters, optimiser state, seed, update index) and a killed run resumed
from its last checkpoint repeats exactly the updates it would have made.

Opponents: in a share of the sessions every seat is the current policy; in the
others the learner holds between one and n-1 seats (so both duplicate formats,
one against a field and a field against one, are trained) and the rest are one
opponent: a scripted baseline or a frozen past snapshot from the pool,
preferring those the learner beats least.

Everything a researcher looks at goes to TensorBoard under ``runs/<name>``:
``charts/`` (rewards, decisions/s, how often the policy declares, goes with and
exchanges by seat and by pot size), ``losses/`` (policy, value, entropy, KL,
clip fraction) and ``eval/`` (duplicate evaluation against the baselines).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import torch

from agents.learned import CheckpointError
from mauscheln_env.errors import ConfigError
from train.cli import run_job
from train.ppo import PROG
from train.ppo.advantages import rollout_advantages
from train.ppo.args import SYNTAX, check_args, check_device, options_from, parse_command_line, read_config, rules_config
from train.ppo.checkpoint import check_world_size, recorded_world_size, save_checkpoint, save_final_policy
from train.ppo.distributed import launch_local, launched, rank_main, shard
from train.ppo.evaluation import final_evaluation, periodic_evaluation
from train.ppo.imitation import imitation_round
from train.ppo.interrupt import StopOnInterrupt, resume_hint
from train.ppo.logs import log_imitation, log_ppo_update, print_throughput
from train.ppo.opponents import reseed_baselines
from train.ppo.options import Args
from train.ppo.profile import report_profile
from train.ppo.rollout import collect_rollout, rollout_totals
from train.ppo.seeds import update_generators
from train.ppo.setup import Run, new_run_dir, resumed, shared_magnet, start_run
from train.ppo.update import learning_rate, ppo_update

__all__ = ["PROG", "Args", "check_args", "load_config", "main", "make_args", "parse_args", "rules_config",
           "run_job", "train"]


def parse_args(argv: list[str] | None = None) -> Args:
    """The :class:`Args` of a command line: ``--config FILE`` first, then the flags, validated.

    A bad value raises :class:`~mauscheln_env.errors.ConfigError` with one line saying what is allowed;
    ``--help`` prints the options with their defaults (those of ``--config`` when given) and exits.
    """
    description = "Masked PPO self-play for the Mauscheln family (train/ppo_selfplay.py). " + SYNTAX
    return parse_command_line(Args, argv, description)


def load_config(path: str | Path, source: str = "training config") -> Args:
    """The :class:`Args` of a YAML file (``--config`` or a run's ``config.yaml``) and its bases, checked."""
    return read_config(Args, path, source)


def make_args(values: dict[str, Any]) -> Args:
    """Validate a mapping of field values into :class:`Args` (unknown keys and bad values raise)."""
    return options_from(Args, values)


def train(args: Args) -> dict[str, Any]:
    """Train (or, with ``args.resume``, continue) a run in this process (one rank of it in a launched
    data-parallel run); returns a summary. Ctrl-C during the updates finishes the update, writes a checkpoint and
    returns with ``summary["interrupted"]``; a second Ctrl-C stops at once."""
    with StopOnInterrupt() as stop:
        try:
            return _train(args, stop)
        except KeyboardInterrupt:
            raise stop.interrupted() from None


def _train(args: Args, stop: StopOnInterrupt) -> dict[str, Any]:
    """Each update imitates the teacher or collects a rollout and learns from it, then logs; then come the
    checkpoint, a requested stop, the periodic evaluation and the time budget; at the end the final evaluation.
    With several ranks, each steps its own sessions and they share every step (:mod:`train.ppo.distributed`):
    rank 0 alone logs, writes checkpoints and evaluates."""
    run = start_run(args, stop)  # run directory, engine, network, optimizer, opponents, storage; joins the ranks
    args, world, prof = run.args, run.world, run.profile  # a resumed run's options are those of its config.yaml
    for update in range(run.start_update, run.num_updates):
        if args.max_updates is not None and update - run.start_update >= args.max_updates:
            break
        started = time.perf_counter()
        imitating = update < run.imitation_updates
        run.optimizer.param_groups[0]["lr"] = learning_rate(args, update, run.num_updates, imitating)
        if imitating:  # behaviour cloning of the teacher before self-play
            student = args.imitate_student * update / max(1, run.imitation_updates - 1)
            with prof("imitation"):
                kept, losses = imitation_round(run.net, run.teacher, run.envs, args, run.optimizer, update,
                                               run.storage, student=student, seed=run.seed, world=world)
            kept = int(world.total(kept)[0])
            run.decisions += kept
            if world.main:
                with prof("logging"):
                    log_imitation(run, update, kept, losses, student, time.perf_counter() - started)
        else:
            gen, rng = update_generators(run.seed, update)
            reseed_baselines(run.baselines, run.seed, update)
            with prof("rollout"):
                rollout = collect_rollout(run, update, gen, rng)
            with prof("advantages"):
                advantages, returns = rollout_advantages(run.storage, rollout, args)
            if args.magnet is not None and run.magnet is None:  # "imitation": the learner as cloning left it
                run.magnet = shared_magnet(world, args, run.net, run.game, run.run_dir, run.device)
            stats = ppo_update(run.net, run.optimizer, run.magnet, args, run.storage, rollout, advantages, returns,
                               gen, world)
            totals = rollout_totals(rollout, world)  # summed over the ranks
            pool_scores = run.pool.learn_scores(totals.pool_won[1:], totals.pool_deals[1:])
            if args.pool_size and (update + 1) % args.pool_every == 0:
                run.pool.add(run.net, args.pool_size)
            run.decisions += totals.kept
            if world.main:
                with prof("logging"):
                    log_ppo_update(run, update, rollout, stats, pool_scores, totals, time.perf_counter() - started)
        out_of_time = args.max_minutes is not None and time.perf_counter() - run.started >= 60 * args.max_minutes
        out_of_time, stopping = world.anyone(out_of_time, stop.requested)  # every rank stops after the same update
        last = update + 1 == run.num_updates or out_of_time
        if world.main and ((update + 1) % args.checkpoint_every == 0 or last or stopping):
            with prof("checkpoint"):
                save_checkpoint(run.run_dir, update + 1, run.net, run.optimizer, run.game, args, run.pool.snapshots,
                                run.stats(), world_size=world.size)
        if args.check_sync:
            world.check_same_parameters(run.net, update + 1)
        report_profile(run, update + 1, time.perf_counter() - started)
        if stopping:  # Ctrl-C: the update is finished and saved
            if world.main:
                run.writer.close()
                stop.stopped(run.run_dir, update + 1, run.num_updates)
            world.close()
            return {"run_dir": str(run.run_dir), "interrupted": True, "update": update + 1}
        if world.main and args.eval_every and (update + 1) % args.eval_every == 0 and not last:
            with prof("evaluation"):
                periodic_evaluation(run, update)
        if out_of_time:
            if world.main:
                print(f"stopped after update {update + 1}/{run.num_updates}: --max-minutes {args.max_minutes:g} "
                      f"reached ({run.decisions:,} decisions; {resume_hint(run.run_dir)})", flush=True)
            break
    summary = finish(run)
    world.close()
    if not world.main:
        return summary
    if args.final_eval_deals and args.max_updates is None:
        stop.__exit__()  # the training is saved: Ctrl-C now stops the evaluation at once
        summary["evaluation"] = final_evaluation(run)
    run.writer.close()
    print_throughput(run, summary)
    return summary


def finish(run: Run) -> dict[str, Any]:
    """The run's summary (decisions, seconds, decisions per second over every rank and per CPU second of every
    rank) and, from rank 0, its final policy."""
    elapsed = time.perf_counter() - run.started
    done = run.decisions - run.decisions_at_start
    cpu_seconds = run.world.total(time.process_time() - run.cpu_started)[0]  # every rank's, every thread's
    return {"run_dir": str(run.run_dir), "decisions": run.decisions, "seconds": elapsed,
            "decisions_per_second": done / max(elapsed, 1e-9),
            # CPU seconds (every thread): on a shared machine the wall clock also counts the waits
            "decisions_per_cpu_second": done / max(cpu_seconds, 1e-9), "ranks": run.world.size,
            "threads": run.threads,
            "policy": (str(save_final_policy(run.run_dir, run.net, run.game, run.args, run.decisions))
                       if run.world.main else None)}


def run(args: Args, argv: list[str]) -> dict[str, Any]:
    """Train as ``args`` says: in this process; as ``nproc`` ranks started on this machine or, with
    ``--ray-address`` (or ``$RAY_ADDRESS``), by Ray Train on a cluster (:func:`launch_ranks`); or, when a
    launcher (torchrun, ``--nproc``, Ray Train) started this process, as one rank of the run."""
    if launched():
        # A rank stopped by Ctrl-C exits 0 once its checkpoint is written: a rank that fails would make the
        # launcher stop the others, perhaps while rank 0 writes (the launcher says it was interrupted).
        return {**train(args), "interrupted": False}
    address = args.ray_address or os.environ.get("RAY_ADDRESS")
    nproc = ranks_to_launch(args)
    if nproc == 1 and not address:
        return train(args)
    return launch_ranks(args, argv, nproc, address)


def ranks_to_launch(args: Args) -> int:
    """The ranks of the run: ``--nproc``, or for ``--resume`` without it the number the run was trained with
    (another number is refused: :class:`~train.ppo.checkpoint.WorldSizeError`)."""
    if not args.resume:
        return args.nproc or 1
    run_dir = Path(str(args.resume))
    try:
        recorded = recorded_world_size(run_dir)
    except CheckpointError as exc:
        if not (run_dir / "config.yaml").is_file():
            return args.nproc or 1  # start_run says what is wrong with the directory
        raise CheckpointError(f"{exc}; allowed: a checkpoint written by {PROG} for this run") from None
    nproc = args.nproc or recorded
    if nproc != recorded:
        from agents.learned import latest_checkpoint

        check_world_size(run_dir, latest_checkpoint(run_dir), {"world_size": recorded}, nproc)
    return nproc


def rank_run(argv: list[str]) -> dict[str, Any]:
    """One rank of a run launched on a Ray cluster: this command line, trained in this process."""
    return train(parse_args(argv))


def launch_ranks(args: Args, argv: list[str], nproc: int, address: str | None = None) -> dict[str, Any]:
    """Check what the ranks would refuse, name the run directory, and start ``nproc`` ranks of this command: on
    this machine (:func:`train.ppo.distributed.launch_local`) or as Ray Train workers on the cluster at
    ``address`` (:func:`train.ppo.cluster.train_on_ray`)."""
    resumed_args, run_dir = resumed(args) if args.resume else (args, new_run_dir(args))
    shard(resumed_args.num_envs, nproc)
    device = check_device(resumed_args.device, here=address is None)
    if address is None and device.type == "cuda" and nproc > torch.cuda.device_count():
        raise ConfigError(f"--nproc {nproc} on device={resumed_args.device!r}: one GPU per rank, and this machine has "
                          f"{torch.cuda.device_count()}; allowed: --nproc {torch.cuda.device_count()} or fewer")
    threads = resumed_args.threads or 1
    ranks_argv = list(argv)
    if address is not None:
        run_dir = run_dir.resolve()  # the workers start elsewhere
    if not args.resume:
        ranks_argv += ["--run-dir", str(run_dir)]  # one name for every rank
    if args.nproc is None:
        ranks_argv += ["--nproc", str(nproc)]
    if address is not None:
        from train import ppo_selfplay  # by its module name, also under `python -m`: Ray workers import it
        from train.ppo.cluster import train_on_ray

        summary = train_on_ray(ranks_argv, nproc, run_dir, device.type == "cuda", threads, address,
                               ppo_selfplay.rank_run)
        if "decisions_per_second" in summary:
            print(f"\ntraining throughput: {summary['decisions_per_second']:,.0f} decisions/s end to end "
                  f"({resumed_args.backend} backend, {resumed_args.num_envs} sessions, {threads} threads on each of "
                  f"{nproc} Ray workers; {summary['decisions_per_cpu_second']:,.0f} per CPU second)\n"
                  f"run directory: {run_dir}\ntensorboard --logdir {run_dir}")
        return {**summary, "run_dir": str(run_dir), "ranks": nproc}
    code = launch_local(ranks_argv, nproc, run_dir, threads)
    return {"run_dir": str(run_dir), "interrupted": code == 130, "ranks": nproc}


def main(argv: list[str] | None = None) -> int:
    return run_job(PROG, lambda: run(parse_args(argv), list(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    if launched():
        rank_main(main)
    sys.exit(main())
