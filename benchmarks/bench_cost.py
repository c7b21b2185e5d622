"""What a full benchmark run costs: ``mauscheln bench run expert`` against the full field of every 4-player default table.

    nice -n 10 python benchmarks/bench_cost.py                          # measure, estimate, write the page
    nice -n 10 python benchmarks/bench_cost.py --run mauscheln mousel   # also play the run at these rulesets
    nice -n 10 python benchmarks/bench_cost.py --run mousel --run-deals 100   # ... on its first 100 deals
    nice -n 10 python benchmarks/bench_cost.py --without-replay         # also pimc with no decision replayed

The full field of a table is its reference field (:func:`agents.bench.run.reference_field`: ``random``,
``beginner``, ``expert``, ``pimc``, the table's shipped policy and the search agent on that policy,
``pimc:model=<policy>,phases=play``). For each opponent this plays ``--sample`` deals spread evenly over the
suite's deal set, each as ``bench run`` plays it (both duplicate formats, every rotation of the seats, the
suite's seeds), in this one process, and takes the CPU seconds per deal: the work, whatever else the machine
runs meanwhile. The estimate of the run is the sum over the pairings of that times the deals, over the workers:
its wall time on a machine with a free core per worker, without the workers' start-up. With ``--run``, the
``bench run`` itself (:func:`agents.bench.run.run_bench`, ``--workers`` processes, the first ``--run-deals``
deals) is played at those rulesets and its wall time measured (a shared machine's other jobs are in that
figure: the page gives the load average around each measurement).

Writes ``docs/results/bench-cost.md`` (``--out``) with the command, date, commit and machine, after every table
(a run stopped early leaves the tables it finished, and says which were not measured yet).
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.bench.run import (  # noqa: E402
    deal_set_for,
    machine_info,
    reference_field,
    run_bench,
    settings_for,
)
from agents.evaluation.duplicate import play_block  # noqa: E402
from agents.evaluation.pages import header  # noqa: E402
from agents.evaluation.progress import duration  # noqa: E402
from agents.search.pimc import PIMCAgent  # noqa: E402
from mauscheln_env.files import atomic_write_text  # noqa: E402
from mauscheln_env.rulesets import RULESETS  # noqa: E402

CANDIDATE = "expert"
GOAL = 30 * 60
"""The wall time a researcher should wait for the run, in seconds."""


def full_field(ruleset: str) -> list[str]:
    """The reference field of the ruleset's default table of the v1 suite (with the search agent on its policy)."""
    return reference_field(deal_set_for("v1", ruleset, None))


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f}/{five:.1f}"


def measure(ruleset: str, opponent: str, sample: int) -> tuple[float, float]:
    """CPU and wall seconds per deal of ``expert`` against ``opponent`` over ``sample`` deals of the suite."""
    deal_set = deal_set_for("v1", ruleset, None)
    settings = settings_for(deal_set, 1)
    picks = sorted({round(i * len(deal_set) / sample) for i in range(sample)})
    play_block(settings, CANDIDATE, opponent, 1, 2, deals=deal_set.deals[1:2])  # builds the agents, warms caches
    cpu = wall = 0.0
    for d in picks:
        c0, t0 = time.process_time(), time.perf_counter()
        play_block(settings, CANDIDATE, opponent, d, d + 1, deals=deal_set.deals[d:d + 1])
        cpu += time.process_time() - c0
        wall += time.perf_counter() - t0
    return cpu / len(picks), wall / len(picks)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rulesets", nargs="+", default=sorted(RULESETS), choices=sorted(RULESETS))
    p.add_argument("--sample", type=int, default=8, help="deals measured per pairing (default 8)")
    p.add_argument("--deals", type=int, default=1000, help="deals of the run (default 1000: the whole suite)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--run", nargs="*", default=[], choices=sorted(RULESETS),
                   help="rulesets at which the run is also played and timed")
    p.add_argument("--run-deals", type=int, default=None, help="deals per pairing of those runs (default: --deals)")
    p.add_argument("--without-replay", action="store_true",
                   help="also measure the pimc pairings with no decision replayed (PIMCAgent.memo_size = 0)")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "bench-cost.md")
    args = p.parse_args(argv)
    args.run_deals = args.deals if args.run_deals is None else args.run_deals
    if min(args.sample, args.deals, args.workers, args.run_deals) < 1:
        print("error: --sample, --deals, --run-deals and --workers are whole numbers >= 1", file=sys.stderr)
        return 2
    try:
        import torch

        torch.set_num_threads(1)  # as `bench run` does: one thread per process, parallel games from the workers
    except ImportError:
        pass
    command = " ".join(["nice -n 10 python benchmarks/bench_cost.py",
                        *(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))])
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for ruleset in args.rulesets:
        field = [s for s in full_field(ruleset) if s != CANDIDATE]
        before = load()
        costs = {}
        for opponent in field:
            costs[opponent] = measure(ruleset, opponent, args.sample)
            print(f"{ruleset} {CANDIDATE} vs {opponent}: {costs[opponent][0]:.3f} CPU s/deal "
                  f"({costs[opponent][1]:.3f} s wall), load {load()}", flush=True)
        plain = {}
        if args.without_replay:
            memo = PIMCAgent.memo_size
            PIMCAgent.memo_size = 0
            try:
                for opponent in field:
                    if opponent.startswith("pimc"):
                        plain[opponent] = measure(ruleset, opponent, args.sample)
                        print(f"{ruleset} {CANDIDATE} vs {opponent} without replay: {plain[opponent][0]:.3f} CPU s/deal",
                              flush=True)
            finally:
                PIMCAgent.memo_size = memo
        estimate = sum(cpu for cpu, _ in costs.values()) * args.deals / args.workers
        measured = None
        if ruleset in args.run:
            run_load = load()
            t0 = time.perf_counter()
            run_bench(CANDIDATE, deal_set_for("v1", ruleset, None), field=field, deals=args.run_deals,
                      workers=args.workers, progress=True)
            measured = (time.perf_counter() - t0, run_load, load())
            print(f"{ruleset}: the run took {duration(measured[0])} (load {run_load} -> {measured[2]})", flush=True)
        rows.append({"table": deal_set_for("v1", ruleset, None).table, "field": field, "costs": costs,
                     "plain": plain, "estimate": estimate, "measured": measured, "load": f"{before} → {load()}"})
        # after every table, so that a run stopped before the end leaves the tables it finished on the page
        write_page(args, command, started, rows, pending=args.rulesets[len(rows):])
        print(f"wrote {args.out}", flush=True)
    return 0


def write_page(args: argparse.Namespace, command: str, started: datetime.datetime, rows: list,
               pending: list[str] | None = None) -> None:
    machine = machine_info()
    lines = header("What a full benchmark run costs", command, date=f"{started:%Y-%m-%d %H:%M} UTC", notes=[
        f"processor: {machine.get('cpu') or '?'}, numpy {machine.get('numpy')}, torch {machine.get('torch', '-')}; "
        "one torch thread per process",
        "the machine is shared with other engineers' jobs: the load average (1 min / 5 min) before and after each "
        "table's measurement is in the last column"])
    lines += [
        f"The run: `mauscheln bench run {CANDIDATE} --ruleset R --workers {args.workers}` against the full field of "
        f"the 4-player default table (its reference field, the search agent `pimc:model=<policy>,phases=play` "
        f"included), {args.deals} "
        "deals per pairing, each played in both duplicate formats with every rotation of the seats (8 games).",
        "",
        f"**CPU seconds per deal** of one process (mean over {args.sample} deals of the suite spread over it), and the "
        f"**estimated wall time** of the run: their sum times {args.deals} deals over {args.workers} workers (a free "
        "core per worker, without the workers' start-up). The goal is 30 minutes.",
        "",
    ]
    def short(spec: str) -> str:
        return "pimc:model=…,phases=play" if spec.startswith("pimc:model=") else \
            "learned" if spec.startswith("learned:") else spec

    opponents = list(dict.fromkeys(short(spec) for row in rows for spec in row["field"]))
    head = ["table", *(f"vs `{o}`" for o in opponents), "sum", "estimated wall", "within 30 min", "load"]
    lines += ["| " + " | ".join(head) + " |",
              "| --- | " + " | ".join("---:" for _ in range(len(opponents) + 2)) + " | --- | --- |"]
    for row in rows:
        cells = {short(spec): f"{cpu:.3f}" for spec, (cpu, _) in row["costs"].items()}
        total = sum(cpu for cpu, _ in row["costs"].values())
        lines.append("| " + " | ".join([row["table"], *(cells.get(o, "-") for o in opponents), f"{total:.3f}",
                                         duration(row["estimate"]), "yes" if row["estimate"] <= GOAL else "no",
                                         row["load"]]) + " |")
    searches = [f"`{spec}` at {row['table']}" for row in rows for spec in row["field"] if spec.startswith("pimc:model=")]
    if searches:
        lines += ["", "The search agent plays the table's shipped policy: " + ", ".join(searches) + "."]
    if any(row["plain"] for row in rows):
        lines += ["", "**Replayed decisions.** `pimc` keeps the decisions it made and replays one that comes again "
                      "(the same seeds and the same view: the games of one duplicate deal often agree up to a "
                      "decision). CPU seconds per deal with and without (`PIMCAgent.memo_size = 0`), measured in "
                      "the same run:", "",
                  "| table | opponent | replayed | none replayed | ratio |", "| --- | --- | ---: | ---: | ---: |"]
        for row in rows:
            for spec, (cpu, _) in row["plain"].items():
                kept = row["costs"][spec][0]
                lines.append(f"| {row['table']} | `{spec}` | {kept:.3f} | {cpu:.3f} | {cpu / kept:.2f} |")
    runs = [row for row in rows if row["measured"] is not None]
    if runs:
        n = args.run_deals
        lines += ["", f"**Measured wall time** of the run itself (`run_bench` as `bench run` calls it, {args.workers} "
                      f"workers, the first {n} deals of the suite per pairing, with the progress line and its probe "
                      "of each pairing), beside the estimate for as many deals from the CPU seconds above, and the "
                      "load average when it started and ended:", "",
                  "| table | deals | wall time | estimated | load |", "| --- | ---: | ---: | ---: | --- |"]
        for row in runs:
            wall, start_load, end_load = row["measured"]
            estimate = row["estimate"] * n / args.deals
            lines.append(f"| {row['table']} | {n} | {duration(wall)} | {duration(estimate)} | "
                         f"{start_load} → {end_load} |")
    else:
        lines += ["", "No whole run was played for this page: the wall times above are estimates from the measured "
                      "CPU seconds per deal."]
    if pending:
        lines += ["", f"Written while the command was still running; not measured yet: {', '.join(pending)}."]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, "\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
