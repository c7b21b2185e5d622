"""Run the reference field of every table of a suite through ``mauscheln bench run`` and submit the records.

This is how the leaderboard in the README was made::

    python benchmarks/bench_suite.py --suite v1 --workers 2 --out bench-results/v1

For every table, ``pimc`` runs first against the field (the first ``--pimc-deals`` deals of the suite
at the tables where it is slow, see :data:`PIMC_DEALS`); then every other agent runs against the whole
field with ``--cap pimc=N`` and ``--reuse`` of the records made before it at that table, so that each
pairing is played once (the other side's record mirrors it: with common random numbers A against B are
the same games as B against A). Every command is printed before it runs; a record that exists already is
submitted again (a no-op) instead of played again, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from agents.bench import cli
from agents.bench.run import reference_field
from agents.bench.suite import load_deal_set, tables_of

PIMC_DEALS = {"mauscheln_3p": 60, "mauscheln_4p": 100, "mauscheln_5p": 30, "mauscheln_6p": 20, "mauscheln_7p": 20}
"""Deals against pimc where it is slow (about 2 s per deal and opponent at 3 players, 18 s at 7, on this
project's 2-core machine); elsewhere it plays the whole suite."""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default="v1")
    p.add_argument("--out", type=Path, default=Path("bench-results/v1"))
    p.add_argument("--db", type=Path, default=None, help="default: OUT/leaderboard.sqlite")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--deals", type=int, default=None, help="deals per pairing (default: the whole suite)")
    p.add_argument("--tables", nargs="+", default=None)
    args = p.parse_args(argv)
    db = args.db or args.out / "leaderboard.sqlite"
    for table in args.tables or tables_of(args.suite):
        deal_set = load_deal_set(args.suite, table)
        field = reference_field(deal_set)
        order = ["pimc", *[s for s in field if s != "pimc"]]
        pimc_deals = PIMC_DEALS.get(table, len(deal_set))
        if args.deals is not None:
            pimc_deals = min(pimc_deals, args.deals)
        done: list[Path] = []
        for agent in order:
            slug = "".join(ch if ch.isalnum() or ch in "-_.=" else "_" for ch in agent)
            out = args.out / table / f"{slug}.json"
            if out.exists():
                command = ["submit", str(out), "--db", str(db)]
            else:
                command = ["run", agent, "--suite", args.suite, "--ruleset", deal_set.ruleset, "--players",
                           str(deal_set.players), "--workers", str(args.workers), "--out", str(out), "--submit",
                           "--db", str(db), "--no-progress"]
                if agent == "pimc":
                    command += ["--deals", str(pimc_deals)]
                else:
                    if args.deals is not None:
                        command += ["--deals", str(args.deals)]
                    command += ["--cap", f"pimc={pimc_deals}"]
                if done:
                    command += ["--reuse", *map(str, done)]
            print("$ mauscheln bench " + " ".join(shlex.quote(c) for c in command), flush=True)
            code = cli.main(command)
            if code:
                return code
            done.append(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
