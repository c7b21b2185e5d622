"""``mauscheln bench``: the standard benchmark.

    mauscheln bench run AGENT [--suite v1] [--ruleset R] [--players N] [--deals N] [--cap SPEC=N]
                               [--workers W] [--out FILE] [--submit] [--db PATH]
    mauscheln bench submit RESULT... [--db PATH]
    mauscheln bench leaderboard [--suite v1] [--ruleset R] [--players N] [--db PATH] [--only WHOSE] [--json]
    mauscheln bench report --out DIR [--suite v1] [--db PATH] [--only WHOSE] [--replay-deals N]
    mauscheln bench tables [--suite v1]
    mauscheln bench generate --suite v1 [--out DIR]

``run`` plays AGENT (an agent spec such as ``expert``, ``pimc:samples=8``,
``learned:checkpoint=runs/x``, or an agent of your own, ``path/to/my_agent.py:MyAgent``,
``mypkg.bots:MyBot:depth=3``; docs/agents/writing.md) against the reference field of a table of the
suite on its fixed deals and writes a result record; ``submit`` stores records
in the user's leaderboard database; ``leaderboard`` prints the ratings of every
table (or one) from the shipped records and the user's, the user's marked;
``report`` writes the static HTML report with the replay viewer;
``tables`` lists the suite's tables and hashes; ``generate`` writes a suite's
deal sets (the shipped ``v1`` was made by ``mauscheln bench generate --suite v1``).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from agents.base import available_agents, display_spec
from mauscheln_env.config import RULESETS
from mauscheln_env.errors import MauschelnError
from mauscheln_env.files import strict_json
from mauscheln_env.ruleargs import ArgumentParser, newline_after_ctrl_c, parse_value, report

PROG = "mauscheln bench"


def _add_table(p: argparse.ArgumentParser, *, optional: bool = False) -> None:
    p.add_argument("--suite", default="v1", help="the suite of deal sets (default: v1)")
    p.add_argument("--ruleset", default=None if optional else "mauscheln", choices=list(RULESETS),
                   help="the ruleset of the table" + (" (default: every table)" if optional else " (default: mauscheln)"))
    p.add_argument("--players", type=int, default=None,
                   help="players at the table (default: the ruleset's default table)")


def _add_db(p: argparse.ArgumentParser, *, reads: bool = False) -> None:
    p.add_argument("--db", type=Path, default=None,
                   help="your leaderboard database, which submit fills (default: "
                        "~/.local/share/mauscheln/leaderboard.sqlite, or $XDG_DATA_HOME/mauscheln/)"
                        + ("; shown beside the shipped records" if reads else ""))
    if reads:
        p.add_argument("--only", choices=("shipped", "yours"), default=None,
                       help="only the records shipped with mauscheln, or only yours (default: both)")


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog=PROG, description="The standard benchmark: suites of fixed deals, runs, leaderboard, "
                                              "report.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    run = sub.add_parser("run", help="play an agent against the reference field on a suite's deals",
                         description="Play AGENT against the reference field of a table (random, beginner, expert, "
                                     "pimc and the shipped policies of that table) on the suite's deals, both "
                                     "duplicate formats, and write a result record.")
    run.add_argument("agent", metavar="AGENT", help=f"agent spec, e.g. expert, pimc:samples=8, "
                                                    f"path/to/my_agent.py:MyAgent or mypkg.bots:MyBot:depth=3; "
                                                    f"known names: {', '.join(available_agents())}")
    _add_table(run)
    run.add_argument("--deals", type=int, default=None, help="play the first N deals of the suite (default: all)")
    run.add_argument("--cap", action="extend", nargs="+", default=[], metavar="SPEC=N",
                     help="at most N deals against this opponent, e.g. --cap pimc=100 (for slow opponents)")
    run.add_argument("--field", nargs="+", default=None, metavar="SPEC",
                     help="the opponents instead of the reference field")
    run.add_argument("--exclude", nargs="+", default=[], metavar="SPEC", help="leave these opponents out")
    run.add_argument("--reuse", nargs="+", type=Path, default=[], metavar="RESULT",
                     help="earlier result records whose pairings against AGENT are mirrored instead of played "
                          "(only those measured by the same clean git commit on the same deals)")
    run.add_argument("--replays", type=int, default=10,
                     help="keep the games of the first N deals of every pairing for replays (default: 10)")
    run.add_argument("--workers", type=int, default=1, help="parallel processes (default: 1)")
    run.add_argument("--out", type=Path, default=None,
                     help="the result file (default: bench-results/<suite>/<table>/<agent>.json)")
    run.add_argument("--submit", action="store_true", help="also submit the record to the leaderboard")
    _add_db(run)
    run.add_argument("--no-progress", action="store_true", help="no progress bar")

    submit = sub.add_parser("submit", help="store result records in the leaderboard",
                            description="Check result records and store them in the leaderboard database.")
    submit.add_argument("results", nargs="+", type=Path, metavar="RESULT")
    _add_db(submit)

    board = sub.add_parser("leaderboard", help="print the leaderboard",
                           description="Ratings (Bradley-Terry over the shared deal sets, 95% intervals) and "
                                       "cross-tables from the records shipped with mauscheln and yours (--db).")
    _add_table(board, optional=True)
    _add_db(board, reads=True)
    board.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    board.add_argument("--brief", action="store_true", help="the ratings only, without the cross-tables")

    rep = sub.add_parser("report", help="write the static HTML report",
                         description="Write a self-contained HTML page (leaderboard, charts, replay viewer) and "
                                     "the same data as JSON.")
    rep.add_argument("--out", type=Path, required=True, help="the folder for index.html and report.json")
    _add_table(rep, optional=True)
    _add_db(rep, reads=True)
    rep.add_argument("--replay-deals", type=int, default=3,
                     help="replays of the first N deals of the suite in every recorded pairing (default: 3)")
    rep.add_argument("--deal", type=int, action="append", default=[], metavar="K",
                     help="also replay suite deal K (re-played with the agents when no record holds its games)")

    tables = sub.add_parser("tables", help="list a suite's tables and their deal-set hashes")
    tables.add_argument("--suite", default="v1")

    gen = sub.add_parser("generate", help="write a suite's deal sets (the shipped v1 was made with it)")
    gen.add_argument("--suite", default="v1")
    gen.add_argument("--out", type=Path, default=None, help="the folder (default: the shipped agents/bench/decks/SUITE)")
    gen.add_argument("--deals", type=int, default=None, help="deals per table (default: the suite's)")
    return p


def parse_caps(items: Sequence[str]) -> dict[str, int]:
    caps = {}
    for item in items:
        spec, eq, value = item.rpartition("=")
        n = parse_value(value) if eq else None
        if not eq or not spec or not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise MauschelnError(f"--cap {item!r} is not SPEC=N with N a whole number >= 1, e.g. --cap pimc=100")
        caps[spec] = n
    return caps


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    command = "mauscheln bench " + " ".join(shlex.quote(a) for a in argv)
    try:
        return int(COMMANDS[args.command](args, command) or 0)
    except MauschelnError as exc:
        return report(f"{PROG} {args.command}", exc)
    except KeyboardInterrupt:
        print(f"{newline_after_ctrl_c()}{PROG} {args.command}: interrupted; nothing was written", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace, command: str) -> int:
    from agents.bench.leaderboard import read_record, submit, summary_line
    from agents.bench.run import deal_set_for, run_bench, write_record

    deal_set = deal_set_for(args.suite, args.ruleset, args.players)
    reuse = [read_record(p) for p in args.reuse]
    slug = "".join(ch if ch.isalnum() or ch in "-_.=" else "_" for ch in display_spec(args.agent))
    out = args.out or Path("bench-results") / args.suite / deal_set.table / f"{slug}.json"
    if out.exists() and out.is_dir():
        raise MauschelnError(f"--out {out} is a directory; allowed: a file path")
    _single_threaded_torch()
    record = run_bench(args.agent, deal_set, field=args.field, exclude=args.exclude, deals=args.deals,
                       caps=parse_caps(args.cap), workers=args.workers, replays=args.replays, reuse=reuse,
                       progress=not args.no_progress and sys.stderr.isatty(), command=command,
                       log=lambda text: print(text, flush=True))
    write_record(record, out)
    print(f"wrote {out} ({record['wall_seconds']:.0f}s, {len(record['pairs'])} pairing(s) on {deal_set.table})")
    if args.submit:
        print(summary_line(submit(record, args.db, source=str(out)), str(out)))
    return 0


def _single_threaded_torch() -> None:
    """One torch thread: a policy evaluates one observation at a time, where torch's thread pool only costs
    (many times slower on a busy machine); parallel games come from --workers."""
    import importlib.util

    if importlib.util.find_spec("torch") is not None:
        import torch

        torch.set_num_threads(1)


def _submit(args: argparse.Namespace, command: str) -> int:
    from agents.bench.leaderboard import read_record, submit, summary_line

    records = [(str(p), read_record(p)) for p in args.results]
    for source, record in records:
        print(summary_line(submit(record, args.db, source=source), source))
    return 0


def _tables_wanted(args: argparse.Namespace) -> list[str] | None:
    from agents.bench.decks import find_table

    if args.ruleset is None:
        if args.players is not None:
            raise MauschelnError("--players needs --ruleset")
        return None
    return [find_table(args.suite, args.ruleset, args.players)]


def _sources(args: argparse.Namespace) -> dict[str, bool]:
    return {"shipped": args.only != "yours", "yours": args.only != "shipped"}


def _leaderboard(args: argparse.Namespace, command: str) -> int:
    from agents.bench.leaderboard import board_markdown, boards, default_db, open_view

    tables, sources = _tables_wanted(args), _sources(args)
    with open_view(args.db, args.suite, **sources) as view:
        found = boards(view, tables)
    for note in view.notes:
        print(f"{PROG} leaderboard: note: {note}", file=sys.stderr)
    if args.json:
        print(strict_json([b.to_dict() for b in found], indent=1))
        return 0
    if not found:
        read = ["the shipped records"] * sources["shipped"] + [str(args.db or default_db())] * sources["yours"]
        print(f"no results for suite {args.suite} in {' or '.join(read)}; submit some with "
              "mauscheln bench submit RESULT")
        return 0
    print("\n\n".join(board_markdown(b, crosstable=not args.brief) for b in found))
    return 0


def _report(args: argparse.Namespace, command: str) -> int:
    from agents.bench.report import write_report

    _single_threaded_torch()
    written = write_report(args.out, db=args.db, suite=args.suite, tables=_tables_wanted(args),
                           replay_deals=args.replay_deals, extra_deals=args.deal, log=print, **_sources(args))
    print("wrote " + ", ".join(str(w) for w in written))
    return 0


def _tables(args: argparse.Namespace, command: str) -> int:
    from agents.bench.decks import load_deal_set, tables_of

    for table in tables_of(args.suite):
        ds = load_deal_set(args.suite, table)
        print(f"{table:<22} {len(ds):>5} deals  {ds.hash}")
    return 0


def _generate(args: argparse.Namespace, command: str) -> int:
    from agents.bench.decks import check_suite, write_suite

    check_suite(args.suite)
    if args.deals is not None and args.deals < 1:
        raise MauschelnError(f"--deals {args.deals} is not allowed; allowed: a whole number >= 1")
    hashes = write_suite(args.suite, args.out, deals=args.deals)
    for table, digest in hashes.items():
        print(f"{table:<22} {digest}")
    return 0


COMMANDS = {"run": _run, "submit": _submit, "leaderboard": _leaderboard, "report": _report, "tables": _tables,
            "generate": _generate}


if __name__ == "__main__":
    raise SystemExit(main())
