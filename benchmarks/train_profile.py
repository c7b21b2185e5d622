"""Where a training update's time goes, for 1 and 2 ranks: the trainer's ``--profile`` lines, averaged.

    python benchmarks/train_profile.py                       # configs/train/fast.yaml, mauscheln, 1 and 2 ranks
    python benchmarks/train_profile.py --ruleset mousel --updates 5 --nproc 1 2 4
    python benchmarks/train_profile.py --device cuda --nproc 1

Each run is ``mauscheln train --config CONFIG --ruleset R --profile --max-updates U --nproc N`` in a fresh
process (no final evaluation, the run directory in a temporary folder). ``--profile`` makes every rank time
the parts of each update (:mod:`train.ppo.profile`): the learner's forward passes in the rollout, the engine's
steps, the opponents' choices, the rest of the rollout, advantages, the PPO update's computation, the
collectives across ranks (on several ranks this includes waiting for the slowest), logging and checkpoints.
The table gives seconds per update (the mean over the updates after the first, which warms up), per rank,
and each part's share of the update; below it, the decisions per second each run reports end to end (its
first update included). On a shared machine the figures move with the other load: the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.evaluation.pages import Transcript, cpu_model  # noqa: E402
from train.ppo.profile import PARTS  # noqa: E402

LINE = re.compile(r"^profile update (\d+) rank (\d+): (.*)$")
THROUGHPUT = re.compile(r"^training throughput: ([\d,]+) decisions/s end to end")


def profile_run(config: str, ruleset: str, updates: int, nproc: int, device: str, extra: list[str],
                timeout: float) -> tuple[dict[int, dict[str, list[float]]], float | None]:
    """One training run with ``--profile``: per rank, per part, the seconds of each update; and the run's
    decisions/s end to end."""
    with tempfile.TemporaryDirectory(prefix="train_profile_") as tmp:
        argv = [sys.executable, "-m", "train.ppo_selfplay", "--config", config, "--ruleset", ruleset, "--profile",
                "--max-updates", str(updates), "--nproc", str(nproc), "--device", device, "--final-eval-deals", "0",
                "--run-dir", str(Path(tmp) / "run"), *extra]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        env.pop("RAY_ADDRESS", None)
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        sys.exit(f"train_profile: {' '.join(argv[2:])} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    ranks: dict[int, dict[str, list[float]]] = {}
    rate = None
    for line in proc.stdout.splitlines():
        m = LINE.match(line)
        if m:
            values = dict(item.split("=") for item in m.group(3).split())
            per = ranks.setdefault(int(m.group(2)), {})
            for key, value in values.items():
                per.setdefault(key, []).append(float(value))
        m = THROUGHPUT.match(line)
        if m:
            rate = float(m.group(1).replace(",", ""))
    return ranks, rate


def steady(values: list[float]) -> float:
    """The mean over the updates after the first (all of them when there is one)."""
    return statistics.mean(values[1:] if len(values) > 1 else values)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "train" / "fast.yaml"))
    parser.add_argument("--ruleset", default="mauscheln")
    parser.add_argument("--updates", type=int, default=3, help="updates per run (the first is left out)")
    parser.add_argument("--nproc", type=int, nargs="+", default=[1, 2], help="ranks of each run")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a run may take")
    parser.add_argument("--page", type=Path, default=None, help="also write the run as a results page here")
    parser.add_argument("extra", nargs="*", help="more training flags, after --")
    args = parser.parse_args(argv)
    if args.updates < 1 or min(args.nproc) < 1:
        parser.error("--updates and --nproc take whole numbers >= 1")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    out = Transcript()
    out.line(f"# train_profile: {Path(args.config).name}, {args.ruleset}, {args.updates} updates per run, device "
             f"{args.device}; commit {commit}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    out.line(f"# {os.cpu_count()} CPUs, {cpu_model()}, load average before: "
             f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    columns: list[tuple[str, dict[str, float]]] = []
    rates: list[tuple[int, float | None]] = []
    for nproc in args.nproc:
        ranks, rate = profile_run(args.config, args.ruleset, args.updates, nproc, args.device, args.extra,
                                  args.timeout)
        rates.append((nproc, rate))
        for rank in sorted(ranks):
            columns.append((f"{nproc} rank{'s' if nproc > 1 else ''}: rank {rank}",
                            {key: steady(values) for key, values in ranks[rank].items()}))
    out.line()
    out.line("| part | " + " | ".join(name for name, _ in columns) + " |")
    out.line("|---|" + "---:|" * len(columns))
    for part in [*PARTS, "other", "total"]:
        cells = []
        for _, seconds in columns:
            value, total = seconds.get(part, 0.0), seconds.get("total", 0.0)
            share = f" ({100 * value / total:.0f} %)" if total and part != "total" else ""
            cells.append(f"{value:.3f} s{share}")
        out.line(f"| {part.replace('_', '-')} | " + " | ".join(cells) + " |")
    out.line()
    for nproc, rate in rates:
        shown = f"{rate:,.0f}" if rate is not None else "(no throughput line)"
        out.line(f"{nproc} rank{'s' if nproc > 1 else ''}: {shown} decisions/s end to end")
    out.line(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.page is not None:
        command = "python benchmarks/train_profile.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        out.write(args.page, "Where a training update's time goes", command, intro=(
            "The trainer's `--profile` timings per update, per rank, for each number of ranks, and the runs' "
            "decisions per second end to end. See [distributed training](../training/distributed.md)."))


if __name__ == "__main__":
    main()
