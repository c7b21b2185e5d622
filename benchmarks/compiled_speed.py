"""The compiled build against pure Python: the searching agents' time per deal, and the same games.

    python benchmarks/compiled_speed.py                      # pimc and the search agent, every default table
    python benchmarks/compiled_speed.py --rulesets muschka --deals 8 --rounds 3
    python benchmarks/compiled_speed.py --page docs/results/compiled-speed.md

For each ruleset's 4-player table, each agent (``pimc`` and the search agent on the table's shipped policy)
plays a duplicate evaluation against ``expert`` (``mauscheln eval --pair AGENT expert``, one worker) on the same
deals twice per round, each in a fresh process: once with the compiled build (``mauscheln compile build``) and
once with ``MAUSCHELN_PURE=1``, the order alternating from round to round. A figure is the CPU seconds of the
pairing in its process (the games, without the imports), which another job on the machine moves far less than
wall time. Every pure and compiled run of a pairing must give the same result of every game, else the script
stops.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.evaluation.pages import Transcript, commit, cpu_model  # noqa: E402
from mauscheln_env import compiled  # noqa: E402

RULESETS = ("mauscheln", "mauscheln_classic", "mousel", "mouche", "muschka")
AGENTS = ("pimc", "pimc:model={policy},phases=play")
POLICIES = {"mauscheln": "mauscheln4", "mauscheln_classic": "mauscheln_classic4", "mousel": "mousel4",
            "mouche": "mouche4", "muschka": "muschka4"}


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f}/{five:.1f}"


PAIRING = """
import json, sys, time
import torch
from agents.evaluation.duplicate import Settings, evaluate_pair
torch.set_num_threads(1)
agent, ruleset, deals, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
settings = Settings(ruleset=ruleset, players=4, deals=deals, seed=seed)
cpu = time.process_time()
result = evaluate_pair(agent, "expert", settings)
print(json.dumps({"cpu": time.process_time() - cpu, "per_deal": result.per_deal.tolist()}))
"""
"""The pairing in a fresh process: its CPU seconds (the games, without the imports) and its per-deal results."""


def pairing(ruleset: str, agent: str, deals: int, seed: int, pure: bool) -> tuple[float, list]:
    """One duplicate evaluation of ``agent`` against ``expert``: its CPU seconds and its per-deal results."""
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_ENV}
    if pure:
        env[compiled.PURE_ENV] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = "1"  # one compute thread, as a bench run's workers
    argv = [sys.executable, "-c", PAIRING, agent, ruleset, str(deals), str(seed)]
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"compiled_speed: {agent} at {ruleset} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return float(out["cpu"]), out["per_deal"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rulesets", nargs="+", default=list(RULESETS), choices=RULESETS)
    parser.add_argument("--deals", type=int, default=6, help="duplicate deals per pairing")
    parser.add_argument("--seed", type=int, default=20261207, help="seed of the deals")
    parser.add_argument("--rounds", type=int, default=2, help="pairs of runs per pairing, the order alternating")
    parser.add_argument("--page", type=Path, default=None,
                        help="also write the run as a results page here (docs/results/compiled-speed.md)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.deals < 1:
        parser.error("--rounds and --deals take whole numbers >= 1")
    state = compiled.status()
    if set(state.values()) != {"compiled"}:
        parser.error("no current compiled build (" + ", ".join(f"{m}: {s}" for m, s in state.items()
                                                              if s != "compiled") + "); run: mauscheln compile build")
    out = Transcript()
    out.line(f"# compiled_speed: {args.deals} duplicate deals per pairing against expert (seed {args.seed}), "
             f"{args.rounds} round(s), one worker; commit {commit()}; "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    out.line(f"# {os.cpu_count()} CPUs, {cpu_model()}, load average before: {load()}")
    rows = []
    for ruleset in args.rulesets:
        for template in AGENTS:
            agent = template.format(policy=POLICIES[ruleset])
            times: dict[bool, list[float]] = {True: [], False: []}
            games: dict[bool, list] = {}
            for round_ in range(args.rounds):
                for pure in ((True, False) if round_ % 2 == 0 else (False, True)):
                    seconds, per_deal = pairing(ruleset, agent, args.deals, args.seed, pure)
                    times[pure].append(seconds)
                    if games.setdefault(pure, per_deal) != per_deal or games.get(not pure, per_deal) != per_deal:
                        sys.exit(f"compiled_speed: {agent} at {ruleset} played other games compiled than pure")
                    out.line(f"{ruleset}, {agent}: round {round_ + 1}, {'pure' if pure else 'compiled'}: "
                             f"{seconds:.1f} CPU s (load average {load()})")
            rows.append((ruleset, agent, statistics.mean(times[True]), statistics.mean(times[False])))
    out.line()
    out.line("| table | agent | pure Python (CPU s per deal) | compiled (CPU s per deal) | speed-up | same games |")
    out.line("|---|---|---:|---:|---:|---|")
    for ruleset, agent, pure_s, fast_s in rows:
        out.line(f"| {ruleset}_4p | `{agent}` | {pure_s / args.deals:.2f} | {fast_s / args.deals:.2f} | "
                 f"{pure_s / fast_s:.2f}x | yes |")
    out.line()
    out.line(f"# load average after: {load()}")
    if args.page is not None:
        out.write_run(args.page, "The compiled build's speed", "compiled_speed.py", argv, intro=(
            "The searching agents against `expert`, each pairing played with the compiled build (`mauscheln "
            "compile build`) and with `MAUSCHELN_PURE=1` on the same deals, the order alternating; the figures "
            "are the CPU seconds of the pairing's process (the games, not its imports) per duplicate deal (8 "
            "games, one worker). The two "
            "runs of a pairing played the same games (the script stops otherwise). See "
            "[performance](../performance.md)."))


if __name__ == "__main__":
    main()
