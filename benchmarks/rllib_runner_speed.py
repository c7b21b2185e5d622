"""Env steps per second of RLlib's env runners: the batched one against the stock one, head to head.

    python benchmarks/rllib_runner_speed.py                     # defaults of python -m train.rllib_ppo
    python benchmarks/rllib_runner_speed.py --rounds 6 --ruleset mouche --tables 1024

Builds both env runners of ``python -m train.rllib_ppo`` from its own config
(:func:`train.rllib_ppo.build_config`: ``--env-runner batched`` with
``--tables`` tables, ``--env-runner stock`` with ``--stock-envs`` envs, the
same ruleset, opponents and train batch), hands both the same snapshot pool
(copies of the initial weights), samples once each to warm up, then lets them
take turns for ``--rounds`` rounds, the order alternating (batched first in
even rounds, stock first in odd ones), each ``sample()`` as RLlib's PPO calls
it (one train batch of env steps per env runner and iteration). No Ray, no
learner: what is timed is each runner's ``sample()``, the figure that
``python -m train.rllib_ppo`` reports as ``env steps/s per env runner``. One
torch thread. Prints each round, the rates over all rounds (per wall-clock
second, and per CPU second of this process), their ratio, and the load average
before and after (other jobs on a shared machine slow both runners; the turns
spread that over both).
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.evaluation.pages import Transcript, cpu_model  # noqa: E402


def make_runner(kind: str, envs: int, flags: list[str]):
    from agents.learned import NetSpec
    from train.rllib_batched import BatchedEnvRunner, TimedMultiAgentEnvRunner
    from train.rllib_env import push_snapshots
    from train.rllib_ppo import build_config, parse_args

    args = parse_args(["--env-runner", kind, "--num-envs-per-env-runner", str(envs), *flags])
    cls = BatchedEnvRunner if kind == "batched" else TimedMultiAgentEnvRunner
    runner = cls(config=build_config(args))
    net = runner.module["main"].net
    spec = NetSpec(net.spec.obs_size, net.spec.num_actions, tuple(args.hidden))
    pool = [{k: v.clone() for k, v in net.state_dict().items()} for _ in range(args.pool_size)]
    push_snapshots(runner, spec, pool)
    return runner


def timed_sample(runner) -> tuple[int, float, float]:
    """One ``sample()``: env steps, wall-clock seconds, CPU seconds of this process."""
    t0, c0 = time.perf_counter(), time.process_time()
    runner.sample()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return int(runner.get_metrics()["num_env_steps_sampled"].peek()), seconds, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--tables", type=int, default=None, help="batched tables (default: train.rllib_ppo's)")
    parser.add_argument("--stock-envs", type=int, default=None, help="stock envs (default: train.rllib_ppo's)")
    parser.add_argument("--ruleset", default="mauscheln")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--train-batch", type=int, default=4000)
    parser.add_argument("--page", type=Path, default=None, help="also write the run as a results page here")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    import torch

    from train.rllib_batched import freeze_heap
    from train.rllib_ppo import DEFAULT_ENVS

    torch.set_num_threads(1)
    flags = ["--ruleset", args.ruleset, "--num-players", str(args.players), "--train-batch", str(args.train_batch)]
    envs = {"batched": args.tables or DEFAULT_ENVS["batched"], "stock": args.stock_envs or DEFAULT_ENVS["stock"]}
    out = Transcript()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    out.line(f"{time.strftime('%Y-%m-%d %H:%M')} commit {commit} on {platform.node()} ({os.cpu_count()} CPUs, {cpu_model()}), "
             f"{args.ruleset} {args.players} players, train batch {args.train_batch}, batched {envs['batched']} "
             f"tables, stock {envs['stock']} envs; load average before {os.getloadavg()}")
    runners = {kind: make_runner(kind, envs[kind], flags) for kind in ("batched", "stock")}
    # As in a remote env runner of a real run (BatchedEnvRunner.__init__ calls it there): the heap built so far
    # is left out of the collector's full passes, for both runners alike.
    freeze_heap()
    for runner in runners.values():  # warm up: first sessions, allocations
        timed_sample(runner)
    total = {kind: [0, 0.0, 0.0] for kind in runners}
    for r in range(args.rounds):
        order = ("batched", "stock") if r % 2 == 0 else ("stock", "batched")
        for kind in order:
            steps, seconds, cpu = timed_sample(runners[kind])
            for i, x in enumerate((steps, seconds, cpu)):
                total[kind][i] += x
            out.line(f"round {r + 1} {kind:7s}: {steps:6d} env steps in {seconds:6.2f} s = {steps / seconds:9,.0f} "
                     f"env steps/s ({steps / cpu:9,.0f} per CPU second)")
    rate = {kind: steps / seconds for kind, (steps, seconds, _) in total.items()}
    cpu_rate = {kind: steps / cpu for kind, (steps, _, cpu) in total.items()}
    for kind in runners:
        out.line(f"{kind:7s}: {rate[kind]:9,.0f} env steps/s per env runner ({cpu_rate[kind]:,.0f} per CPU second) "
                 f"over {total[kind][0]:,} env steps")
    out.line(f"load average after {os.getloadavg()}")
    out.line(f"ratio batched/stock: {rate['batched'] / rate['stock']:.1f}x "
             f"({cpu_rate['batched'] / cpu_rate['stock']:.1f}x per CPU second)")
    if args.page is not None:
        command = "python benchmarks/rllib_runner_speed.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        out.write(args.page, 'RLlib env runners: batched against stock', command, intro=(
            "Env steps per second of `python -m train.rllib_ppo`'s two env runners, head to head in one process, "
            "their `sample()` calls taking turns with the order alternating. See [RLlib](../pipelines/rllib.md)."))


if __name__ == "__main__":
    main()
