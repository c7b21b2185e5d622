"""What a full benchmark run costs: ``mauscheln bench run expert`` against the full field of every 4-player default table.

    nice -n 10 python benchmarks/bench_cost.py                          # measure, estimate, write the page
    nice -n 10 python benchmarks/bench_cost.py --run mauscheln mousel   # also play the run at these rulesets
    nice -n 10 python benchmarks/bench_cost.py --run mousel --run-deals 100   # ... on its first 100 deals
    nice -n 10 python benchmarks/bench_cost.py --without-replay         # also pimc with no decision replayed
    python benchmarks/bench_cost.py --page                              # the page again, from the data file

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

Each table's figures go to ``benchmarks/bench_cost.json`` (``--data``) with the command, date, commit, machine and
load of their own measurement, replacing that table's earlier figures and keeping the other tables'; then
``docs/results/bench-cost.md`` (``--out``) is written from the file, after every table, so a run stopped early
keeps the tables it finished. ``--page`` rewrites the page from the file alone.
"""

from __future__ import annotations

import argparse
import datetime
import json
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
from agents.evaluation.pages import commit, header, machine  # noqa: E402
from agents.evaluation.progress import duration  # noqa: E402
from agents.search.pimc import PIMCAgent  # noqa: E402
from mauscheln_env.files import atomic_write_text, strict_json  # noqa: E402
from mauscheln_env.rulesets import RULESETS  # noqa: E402

CANDIDATE = "expert"
GOAL = 30 * 60
"""The wall time a researcher should wait for the run, in seconds."""
FULL = 1000
"""Deals per pairing of a full run: the whole deal set of the v1 suite (the estimates are for as many)."""


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
    p.add_argument("--deals", type=int, default=FULL, help=f"deals of the run (default {FULL}: the whole suite)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--run", nargs="*", default=[], choices=sorted(RULESETS),
                   help="rulesets at which the run is also played and timed")
    p.add_argument("--run-deals", type=int, default=None, help="deals per pairing of those runs (default: --deals)")
    p.add_argument("--without-replay", action="store_true",
                   help="also measure the pimc pairings with no decision replayed (PIMCAgent.memo_size = 0)")
    p.add_argument("--page", action="store_true", help="only rewrite the page from the data file")
    p.add_argument("--data", type=Path, default=ROOT / "benchmarks" / "bench_cost.json")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "bench-cost.md")
    args = p.parse_args(argv)
    args.run_deals = args.deals if args.run_deals is None else args.run_deals
    if min(args.sample, args.deals, args.workers, args.run_deals) < 1:
        print("error: --sample, --deals, --run-deals and --workers are whole numbers >= 1", file=sys.stderr)
        return 2
    try:
        data = json.loads(args.data.read_text()) if args.data.exists() else {"estimates": {}, "runs": {}}
        if not (isinstance(data, dict) and all(isinstance(data.get(k), dict) for k in ("estimates", "runs"))):
            raise ValueError("it holds no 'estimates' and 'runs' tables")
        if args.page:
            write_page(args, data)
            print(f"wrote {args.out}", flush=True)
            return 0
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {args.data} is not this script's data file ({exc!s:.120}); allowed: a file it wrote, or none",
              file=sys.stderr)
        return 2
    try:
        import torch

        torch.set_num_threads(1)  # as `bench run` does: one thread per process, parallel games from the workers
    except ImportError:
        pass
    command = " ".join(["nice -n 10 python benchmarks/bench_cost.py",
                        *(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))])
    done = []
    for ruleset in args.rulesets:
        field = [s for s in full_field(ruleset) if s != CANDIDATE]
        table = deal_set_for("v1", ruleset, None).table
        before, started = load(), stamp()
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
                        plain[opponent] = measure(ruleset, opponent, args.sample)[0]
                        print(f"{ruleset} {CANDIDATE} vs {opponent} without replay: {plain[opponent]:.3f} CPU s/deal",
                              flush=True)
            finally:
                PIMCAgent.memo_size = memo
        per_deal = sum(cpu for cpu, _ in costs.values())
        data["estimates"][table] = {
            **provenance(command, started), "load": f"{before} → {load()}", "sample": args.sample,
            "workers": args.workers, "cpu_sum": round(per_deal, 4),
            "estimate_seconds": round(per_deal * FULL / args.workers, 1),
            "cpu_per_deal": {spec: round(cpu, 4) for spec, (cpu, _) in costs.items()},
            "plain_cpu_per_deal": {spec: round(cpu, 4) for spec, cpu in plain.items()}}
        if ruleset in args.run:
            run_load, started = load(), stamp()
            t0 = time.perf_counter()
            run_bench(CANDIDATE, deal_set_for("v1", ruleset, None), field=field, deals=args.run_deals,
                      workers=args.workers, progress=True)
            wall = time.perf_counter() - t0
            data["runs"][table] = {
                **provenance(command, started), "load": f"{run_load} → {load()}", "deals": args.run_deals,
                "workers": args.workers, "wall_seconds": round(wall, 1),
                "estimate_seconds": round(per_deal * args.run_deals / args.workers, 1)}
            print(f"{ruleset}: the run took {duration(wall)} (load {run_load} -> {load()})", flush=True)
        done.append(ruleset)
        # after every table, so that a run stopped before the end keeps the tables it finished
        atomic_write_text(args.data, strict_json(data, indent=1, ensure_ascii=False) + "\n")
        write_page(args, data, pending=[r for r in args.rulesets if r not in done])
        print(f"wrote {args.data} and {args.out}", flush=True)
    return 0


def stamp() -> str:
    return f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"


def provenance(command: str, date: str) -> dict[str, str]:
    """Where a table's figures come from: the command, its start, the commit and the machine."""
    info = machine_info()
    return {"command": command, "date": date, "commit": commit(), "machine": machine(),
            "processor": f"{info.get('cpu') or '?'}, numpy {info.get('numpy')}, torch {info.get('torch', '-')}"}


def short(spec: str) -> str:
    return "pimc:model=…,phases=play" if spec.startswith("pimc:model=") else \
        "learned" if spec.startswith("learned:") else spec


def write_page(args: argparse.Namespace, data: dict, pending: list[str] | None = None) -> None:
    estimates, runs = data.get("estimates", {}), data.get("runs", {})
    rel = args.data.resolve().relative_to(ROOT) if args.data.resolve().is_relative_to(ROOT) else args.data
    lines = header("What a full benchmark run costs", "python benchmarks/bench_cost.py --page", data=[str(rel)],
                   notes=["each table's figures come from their own measurement: its command, date, commit and "
                          "the load average (1 min / 5 min) before and after are in its row, and its machine and "
                          "processor under the tables",
                          "one torch thread per process; the machine is shared with other engineers' jobs"])
    lines += [
        f"The run: `mauscheln bench run {CANDIDATE} --ruleset R --workers 2` against the full field of "
        "the 4-player default table (its reference field, the search agent `pimc:model=<policy>,phases=play` "
        "included), each pairing played in both duplicate formats with every rotation of the seats (8 games per "
        f"deal). The goal: the whole suite's {FULL:,} deals per pairing within {GOAL // 60} minutes.",
        "",
        "**CPU seconds per deal** of one process (mean over the deals of the suite spread over it that the "
        f"command's `--sample` names), and the **estimated wall time** of the {FULL:,}-deal run: their sum times "
        f"{FULL:,} deals over the workers (a free core per worker, without the workers' start-up).",
        "",
    ]
    opponents = list(dict.fromkeys(short(spec) for row in estimates.values() for spec in row["cpu_per_deal"]))
    lines += ["| table | " + " | ".join(f"vs `{o}`" for o in opponents) + f" | sum | estimated wall | within {GOAL // 60} min "
              "| load | measured | commit |",
              "| --- | " + " | ".join("---:" for _ in range(len(opponents) + 2)) + " | --- | --- | --- | --- |"]
    for table, row in sorted(estimates.items()):
        cells = {short(spec): f"{cpu:.3f}" for spec, cpu in row["cpu_per_deal"].items()}
        total, estimate = row["cpu_sum"], row["estimate_seconds"]  # from the unrounded figures
        lines.append("| " + " | ".join([table, *(cells.get(o, "-") for o in opponents), f"{total:.3f}",
                                         duration(estimate), "yes" if estimate <= GOAL else "no", row["load"],
                                         row["date"], row["commit"]]) + " |")
    searches = sorted({f"`{spec}` at {table}" for table, row in estimates.items() for spec in row["cpu_per_deal"]
                       if spec.startswith("pimc:model=")})
    if searches:
        lines += ["", "The search agent plays the table's shipped policy: " + ", ".join(searches) + "."]
    plain = [(table, spec, cpu) for table, row in sorted(estimates.items())
             for spec, cpu in row.get("plain_cpu_per_deal", {}).items()]
    if plain:
        lines += ["", "**Replayed decisions.** `pimc` keeps the decisions it made and replays one that comes again "
                      "(the same seeds and the same view: the games of one duplicate deal often agree up to a "
                      "decision). CPU seconds per deal with and without (`PIMCAgent.memo_size = 0`), measured in "
                      "the same run:", "",
                  "| table | opponent | replayed | none replayed | ratio |", "| --- | --- | ---: | ---: | ---: |"]
        for table, spec, cpu in plain:
            kept = estimates[table]["cpu_per_deal"][spec]
            lines.append(f"| {table} | `{spec}` | {kept:.3f} | {cpu:.3f} | {cpu / kept:.2f} |")
    if runs:
        lines += ["", "**Measured wall time** of the run itself (`run_bench` as `bench run` calls it, with the "
                      "progress line and its probe of each pairing), beside the estimate from the CPU seconds "
                      "measured by the same command just before:", "",
                  f"| table | deals per pairing | workers | wall time | estimated | within {GOAL // 60} min | load | measured "
                  "| commit |", "| --- | ---: | ---: | ---: | ---: | --- | --- | --- | --- |"]
        for table, run in sorted(runs.items()):
            whole = run["deals"] == FULL
            lines.append(f"| {table} | {run['deals']} | {run['workers']} | {duration(run['wall_seconds'])} | "
                         f"{duration(run['estimate_seconds'])} | "
                         f"{('yes' if run['wall_seconds'] <= GOAL else 'no') if whole else '-'} | {run['load']} | "
                         f"{run['date']} | {run['commit']} |")
    missing = sorted(set(deal_set_for("v1", r, None).table for r in RULESETS) - set(runs))
    if missing:
        lines += ["", f"No whole run measured yet at: {', '.join(missing)}."]
    lines += ["", "The measurements' commands:", ""]
    for command in sorted({row["command"] for row in [*estimates.values(), *runs.values()]}):
        tables = sorted({t for t, row in [*estimates.items(), *runs.items()] if row["command"] == command})
        lines.append(f"- `{command}`: {', '.join(tables)}")
    machines = sorted({f"{row['machine']}; {row['processor']}" for row in [*estimates.values(), *runs.values()]})
    lines += ["", "Machine: " + " / ".join(machines) + "."]
    if pending:
        lines += ["", f"Written while the command was still running; not measured yet: {', '.join(pending)}."]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, "\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
