"""Data-parallel speed-up: ``--nproc 2`` (one torch thread per rank) against ``--nproc 1``, every ruleset.

    python benchmarks/ddp_speed.py                                   # every ruleset, 2 rounds, 4 updates per run
    nice -n 10 python benchmarks/ddp_speed.py --rulesets mousel --rounds 1 --updates 3

Each run is ``mauscheln train --config configs/train/fast.yaml --ruleset R --threads 1 --nproc N --max-updates
U`` in a fresh process (no evaluation, the run directory in a temporary folder), and its figure is the last
line every run prints, ``training throughput: X decisions/s end to end``: the decisions of every rank over the
wall time of the updates (the first, warming up, included; process start and setup not). For each ruleset the
rounds alternate the order of the two runs (1 then 2 ranks, then 2 then 1, ...) so that a drift in the other
load on the machine does not favour one; the ratio is the mean of the 2-rank figures over the mean of the
1-rank ones. The goal on a two-core machine is a ratio of at least 1.8. Every run's figure is printed as it
comes, with the load average (a busy machine makes the figures meaningless: run it on an idle one).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.evaluation.pages import Transcript, cpu_model  # noqa: E402

RULESETS = ("mauscheln", "mauscheln_classic", "mousel", "mouche", "muschka")
THROUGHPUT = re.compile(r"^training throughput: ([\d,]+) decisions/s end to end", re.MULTILINE)
GOAL = 1.8


def decisions_per_second(config: str, ruleset: str, nproc: int, updates: int, extra: list[str],
                         timeout: float) -> float:
    """One run's ``training throughput`` figure."""
    with tempfile.TemporaryDirectory(prefix="ddp_speed_") as tmp:
        argv = [sys.executable, "-m", "train.ppo_selfplay", "--config", config, "--ruleset", ruleset,
                "--threads", "1", "--nproc", str(nproc), "--max-updates", str(updates), "--final-eval-deals", "0",
                "--checkpoint-every", str(10 ** 6), "--run-dir", str(Path(tmp) / "run"), *extra]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        env.pop("RAY_ADDRESS", None)
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    found = THROUGHPUT.findall(proc.stdout)
    if proc.returncode != 0 or not found:
        sys.exit(f"ddp_speed: {' '.join(argv[2:])} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return float(found[-1].replace(",", ""))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "train" / "fast.yaml"))
    parser.add_argument("--rulesets", nargs="+", default=list(RULESETS), choices=RULESETS)
    parser.add_argument("--rounds", type=int, default=2, help="pairs of runs per ruleset, the order alternating")
    parser.add_argument("--updates", type=int, default=4, help="updates per run")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds a run may take")
    parser.add_argument("--page", type=Path, default=None,
                        help="also write the run as a results page here (docs/results/ddp-speed.md)")
    parser.add_argument("extra", nargs="*", help="more training flags, after --")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.updates < 1:
        parser.error("--rounds and --updates take whole numbers >= 1")
    out = Transcript()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    out.line(f"# ddp_speed: {Path(args.config).name}, {args.updates} updates per run, {args.rounds} round(s) per "
             f"ruleset, one torch thread per rank; commit {commit}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    out.line(f"# {os.cpu_count()} CPUs, {cpu_model()}, load average before: {load()}")
    results: dict[str, dict[int, list[float]]] = {}
    for ruleset in args.rulesets:
        figures: dict[int, list[float]] = {1: [], 2: []}
        for round_ in range(args.rounds):
            for nproc in ((1, 2) if round_ % 2 == 0 else (2, 1)):
                rate = decisions_per_second(args.config, ruleset, nproc, args.updates, args.extra, args.timeout)
                figures[nproc].append(rate)
                out.line(f"{ruleset}: round {round_ + 1}, --nproc {nproc}: {rate:,.0f} decisions/s "
                         f"(load average {load()})")
        results[ruleset] = figures
    out.line()
    out.line("| ruleset | --nproc 1 (decisions/s) | --nproc 2 (decisions/s) | ratio | goal |")
    out.line("|---|---:|---:|---:|---|")
    for ruleset, figures in results.items():
        one, two = statistics.mean(figures[1]), statistics.mean(figures[2])
        ratio = two / one
        out.line(f"| {ruleset} | {one:,.0f} | {two:,.0f} | {ratio:.2f}x | {'met' if ratio >= GOAL else 'not met'} "
                 f"(>= {GOAL}x) |")
    out.line()
    out.line(f"# load average after: {load()}")
    if args.page is not None:
        out.write_run(args.page, "Data-parallel speed-up", "ddp_speed.py", argv, intro=(
            "`mauscheln train --nproc 2` (one torch thread per rank) against `--nproc 1` on the same machine, "
            "each figure the run's own last line (`training throughput: X decisions/s end to end`); the rounds "
            "alternate the order of the two runs. See [distributed training](../training/distributed.md)."))


if __name__ == "__main__":
    main()
