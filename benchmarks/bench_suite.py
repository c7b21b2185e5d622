"""Run the reference field of every table of a suite through ``mauscheln bench run`` and submit the records.

This is how the shipped records (package data, ``agents/bench/records/v1``) are made (docs/results/leaderboard.md
shows them; ``python benchmarks/results_pages.py leaderboard`` rewrites that page), a table at a time, from a
clean clone of the commit to measure and into a folder outside it::

    git clone . /tmp/field && cd /tmp/field
    nice -n 10 python benchmarks/bench_suite.py --suite v1 --workers 2 --tables mousel_4p --out /tmp/field-out
    # then, in the checkout: replace agents/bench/records/v1/mousel_4p/ by /tmp/field-out/mousel_4p/*.json.gz

First, at every table, every agent of the field that does not search runs against the field without the
searching agents (``--exclude pimc --exclude pimc:model=...``) on the first ``DEALS[table]`` deals (default:
the whole suite), with ``--reuse`` of the records made before it at that table, so that each pairing is played
once (the other side's record mirrors it: with common random numbers A against B are the same games as B
against A). Then the searching agents (``pimc``, then the search agent on each shipped policy) run against the
whole field on the first ``--slow-deals`` deals (default :data:`SLOW_DEALS`), at the tables whose field they
join; the second reuses the first's pairing with it. Every command is printed before it runs; a record that
exists already is submitted again (a no-op) instead of played again, and a ``bench run`` that was stopped goes
on from the pairings it kept (``<record>.partial.json``), so an interrupted run resumes. Records are ``OUT/<table>/<agent>.json.gz``
and the leaderboard ``OUT/leaderboard.sqlite`` (``--db``). Pairings are mirrored only between records of one
clean commit (``--reuse``): a checkout whose shipped records were deleted or edited first is not clean, and
would play every pairing twice; hence the clone.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from agents.bench import cli
from agents.bench.decks import load_deal_set, tables_of
from agents.bench.run import FIELD_DEALS, reference_field

DEALS = {"mauscheln_5p": 500, "mauscheln_6p": 500, "mauscheln_7p": 500}
"""Deals per pairing where the whole suite would take too long on this project's busy 2-core machine (the
scripted agents take about 0.03-0.08 s per deal and pairing at 4 players, 0.18 s at 7, one worker); elsewhere
the whole suite (1,000 deals)."""
SLOW_DEALS = FIELD_DEALS
"""Deals per pairing of the searching agents (``pimc`` and the search agents on the shipped policies): the
benchmark's floor for a complete field (:data:`agents.bench.run.FIELD_DEALS`). They cost far more per deal than the others (docs/results/bench-cost.md
measures it), so a whole table's field takes hours of a 2-core machine."""


def slow(spec: str) -> bool:
    """Whether an agent of the field searches (``pimc``, ``pimc:...``): it runs last, on :data:`SLOW_DEALS` deals."""
    return spec == "pimc" or spec.startswith("pimc:")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default="v1")
    p.add_argument("--out", type=Path, default=Path("bench-results/v1"))
    p.add_argument("--db", type=Path, default=None, help="default: OUT/leaderboard.sqlite")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--deals", type=int, default=None, help="deals per pairing (default: the whole suite)")
    p.add_argument("--tables", nargs="+", default=None)
    p.add_argument("--slow-deals", type=int, default=SLOW_DEALS,
                   help=f"deals per pairing of the searching agents (default {SLOW_DEALS})")
    args = p.parse_args(argv)
    db = args.db or args.out / "leaderboard.sqlite"
    tables = args.tables or tables_of(args.suite)
    done: dict[str, list[Path]] = {t: [] for t in tables}
    fields = {t: reference_field(load_deal_set(args.suite, t)) for t in tables}
    plan = [(t, spec) for t in tables for spec in fields[t] if not slow(spec)]
    plan += [(t, spec) for t in tables for spec in fields[t] if slow(spec)]
    for table, agent in plan:
        deal_set = load_deal_set(args.suite, table)
        slug = "".join(ch if ch.isalnum() or ch in "-_.=" else "_" for ch in agent)
        out = args.out / table / f"{slug}.json.gz"
        if out.exists():
            command = ["submit", str(out), "--db", str(db)]
        else:
            command = ["run", agent, "--suite", args.suite, "--ruleset", deal_set.ruleset, "--players",
                       str(deal_set.players), "--workers", str(args.workers), "--out", str(out), "--submit",
                       "--db", str(db), "--no-progress"]
            deals = args.deals if args.deals is not None else DEALS.get(table)
            if slow(agent):
                deals = min(args.slow_deals, deals or len(deal_set))
            else:
                searching = [spec for spec in fields[table] if slow(spec)]
                command += ["--exclude", *searching] if searching else []
            if deals is not None:
                command += ["--deals", str(deals)]
            if done[table]:
                command += ["--reuse", *map(str, done[table])]
        print("$ mauscheln bench " + " ".join(shlex.quote(c) for c in command), flush=True)
        code = cli.main(command)
        if code:
            return code
        done[table].append(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
