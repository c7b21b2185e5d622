"""``mauscheln bench``: the standard benchmark.

    mauscheln bench run AGENT [--suite v1] [--ruleset R] [--players N] [--deals N] [--cap SPEC=N]
                               [--workers W] [--out FILE [--overwrite]] [--submit] [--db PATH]
    mauscheln bench submit RESULT... [--db PATH]
    mauscheln bench leaderboard [--suite v1] [--ruleset R] [--players N] [--db PATH] [--only WHOSE] [--json]
    mauscheln bench report --out DIR [--overwrite] [--suite v1] [--db PATH] [--only WHOSE] [--replay-deals N]
    mauscheln bench tables [--suite v1]
    mauscheln bench generate --suite v1 [--out DIR] [--overwrite]

``run`` plays AGENT (an agent spec such as ``expert``, ``pimc:samples=8``,
``learned:checkpoint=runs/x``, or an agent of your own, ``path/to/my_agent.py:MyAgent``,
``mypkg.bots:MyBot:depth=3``; docs/agents/writing.md) against the reference field of a table of the
suite on its fixed deals and writes a result record; ``submit`` stores records
in the user's leaderboard database; ``leaderboard`` prints the ratings of every
table (or one) from the shipped records and the user's, the user's marked;
``report`` writes the static HTML report with the replay viewer;
``tables`` lists the suite's tables and hashes; ``generate`` writes a suite's
deal sets (the shipped ``v1`` was made by ``mauscheln bench generate --suite v1``).
Every flag is checked before anything is played or written; an existing result
file, report or deal set is replaced only with ``--overwrite``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from agents.base import available_agents, display_spec, same_agent
from mauscheln_env.config import RULESETS
from mauscheln_env.errors import MauschelnError, shown
from mauscheln_env.files import check_output_path, strict_json
from mauscheln_env.ruleargs import ArgumentParser, newline_after_ctrl_c, parse_value, path_arg, report

PROG = "mauscheln bench"


def _add_table(p: argparse.ArgumentParser, *, optional: bool = False) -> None:
    p.add_argument("--suite", default="v1", help="the suite of deal sets (default: v1)")
    p.add_argument("--ruleset", default=None if optional else "mauscheln", choices=list(RULESETS),
                   help="the ruleset of the table" + (" (default: every table)" if optional else " (default: mauscheln)"))
    p.add_argument("--players", type=int, default=None,
                   help="players at the table (default: the ruleset's default table)")


def _add_db(p: argparse.ArgumentParser, *, reads: bool = False) -> None:
    p.add_argument("--db", type=path_arg, default=None,
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
    run.add_argument("--field", action="extend", nargs="+", default=None, metavar="SPEC",
                     help="the opponents instead of the reference field (the flag may be repeated)")
    run.add_argument("--exclude", action="extend", nargs="+", default=[], metavar="SPEC",
                     help="leave these opponents out (the flag may be repeated)")
    run.add_argument("--reuse", action="extend", nargs="+", type=path_arg, default=[], metavar="RESULT",
                     help="earlier result records whose pairings against AGENT are mirrored instead of played "
                          "(only those measured by the same clean git commit on the same deals)")
    run.add_argument("--replays", type=int, default=10,
                     help="keep the games of the first N deals of every pairing for replays (default: 10)")
    run.add_argument("--workers", type=int, default=1, help="parallel processes (default: 1)")
    run.add_argument("--out", type=path_arg, default=None,
                     help="the result file (default: bench-results/<suite>/<table>/<agent>.json); the deals "
                          "played so far wait in <out>.partial.json, where the same command goes on after a stop")
    run.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    run.add_argument("--submit", action="store_true", help="also submit the record to the leaderboard")
    _add_db(run)
    run.add_argument("--no-progress", action="store_true",
                     help="no progress on stderr (else a bar on a terminal, a line every few seconds otherwise: "
                          "deals done per pairing and overall, elapsed time, time left)")

    submit = sub.add_parser("submit", help="store result records in the leaderboard",
                            description="Check result records and store them in the leaderboard database.")
    submit.add_argument("results", nargs="+", type=path_arg, metavar="RESULT")
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
    rep.add_argument("--out", type=path_arg, required=True, help="the folder for index.html and report.json")
    rep.add_argument("--overwrite", action="store_true", help="replace the index.html and report.json in --out")
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
    gen.add_argument("--out", type=path_arg, default=None,
                     help="the folder (default: the shipped agents/bench/decks/SUITE)")
    gen.add_argument("--deals", type=int, default=None, help="deals per table (default: the suite's)")
    gen.add_argument("--overwrite", action="store_true", help="replace the deal sets already in --out")
    return p


def parse_caps(items: Sequence[str]) -> dict[str, int]:
    caps: dict[str, int] = {}
    for item in items:
        spec, eq, value = item.rpartition("=")
        n = parse_value(value) if eq else None
        if not eq or not spec or not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise MauschelnError(f"--cap {shown(item)} is not SPEC=N with N a whole number >= 1, e.g. --cap pimc=100")
        if spec in caps:
            raise MauschelnError(f"--cap names {spec} twice ({spec}={caps[spec]} and {shown(item)}); allowed: one cap "
                                 "per opponent")
        caps[spec] = n
    return caps


def distinct(flag: str, specs: Sequence[str]) -> None:
    """Refuse a list of agent specs that names one agent twice (two spellings of it included)."""
    seen: dict[str, str] = {}
    for spec in specs:
        key = same_agent(spec)
        if key in seen:
            same = spec if spec == seen[key] else f"{seen[key]} and {spec} (both {key})"
            raise MauschelnError(f"{flag} names {same} more than once; allowed: each agent once")
        seen[key] = spec


def check_db(args: argparse.Namespace) -> None:
    """Refuse, before any work, a --db that is a folder or lies below a file (a command that writes to it)."""
    if args.db is not None:
        check_output_path(args.db, "--db")


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
        partial = getattr(args, "partial", None)
        if partial is not None and partial.exists():
            print(f"{newline_after_ctrl_c()}{PROG} {args.command}: interrupted; the record was not written; the "
                  f"deals played so far are kept in {partial}: the same command goes on from there",
                  file=sys.stderr)
        else:
            print(f"{newline_after_ctrl_c()}{PROG} {args.command}: interrupted; nothing was written", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace, command: str) -> int:
    from agents.bench.leaderboard import read_record, submit, summary_line
    from agents.bench.run import deal_set_for, run_bench, write_record

    deal_set = deal_set_for(args.suite, args.ruleset, args.players)
    paths = [str(p) for p in args.reuse]
    twice = sorted({p for p in paths if paths.count(p) > 1})
    if twice:
        raise MauschelnError(f"--reuse names {', '.join(twice)} more than once; allowed: each record once")
    reuse = [read_record(p) for p in args.reuse]
    slug = "".join(ch if ch.isalnum() or ch in "-_.=" else "_" for ch in display_spec(args.agent))
    out = args.out or Path("bench-results") / args.suite / deal_set.table / f"{slug}.json"
    check_output_path(out, "--out")
    if out.exists() and not args.overwrite:
        raise MauschelnError(f"--out {out} exists; allowed: a new path, or --overwrite to replace it")
    if args.submit:
        check_db(args)
    caps = parse_caps(args.cap)
    me = same_agent(args.agent)
    if args.field is not None:
        distinct("--field", args.field)
        for spec in args.field:
            if same_agent(spec) == me:
                raise MauschelnError(f"--field names {spec}, the agent itself; allowed: opponents other than "
                                     f"{args.agent}")
    distinct("--exclude", args.exclude)
    if args.exclude:
        from agents.bench.run import reference_field

        field = args.field if args.field is not None else reference_field(deal_set)
        keys = {same_agent(spec) for spec in field}
        for spec in args.exclude:
            if same_agent(spec) not in keys:
                raise MauschelnError(f"--exclude {spec} is not in the field; allowed: {', '.join(field)}")
    _single_threaded_torch()
    args.partial = out.with_name(out.name + ".partial.json")
    record = run_bench(args.agent, deal_set, field=args.field, exclude=args.exclude, deals=args.deals,
                       caps=caps, workers=args.workers, replays=args.replays, reuse=reuse,
                       progress=not args.no_progress, command=command,
                       log=lambda text: print(text, flush=True), partial=args.partial)
    write_record(record, out)
    args.partial.unlink(missing_ok=True)
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

    check_db(args)
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
    from agents.bench.decks import check_suite, load_deal_set, tables_of
    from agents.bench.report import write_report

    check_suite(args.suite)
    tables = _tables_wanted(args)
    check_output_path(args.out, "--out", folder=True)
    taken = [name for name in ("index.html", "report.json") if (args.out / name).exists()]
    if taken and not args.overwrite:
        raise MauschelnError(f"--out {args.out} already holds {', '.join(taken)}; allowed: a new or other folder, or "
                             "--overwrite to replace the report")
    size = min(len(load_deal_set(args.suite, t)) for t in (tables or tables_of(args.suite)))
    if not 0 <= args.replay_deals <= size:
        raise MauschelnError(f"--replay-deals {shown(args.replay_deals)} is not allowed; allowed: a whole number "
                             f"0..{size} (the deals of a table)")
    for k in args.deal:
        if not 0 <= k < size:
            raise MauschelnError(f"--deal {shown(k)} is not allowed; allowed: a suite deal 0..{size - 1}")
    twice = sorted({k for k in args.deal if args.deal.count(k) > 1})
    if twice:
        raise MauschelnError(f"--deal {twice[0]} is given twice; allowed: each deal once")
    _single_threaded_torch()
    written = write_report(args.out, db=args.db, suite=args.suite, tables=tables,
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
    from agents.bench.decks import DECKS, HASHES, check_suite, suite_tables, write_suite
    from agents.evaluation.duplicate import MAX_DEALS

    check_suite(args.suite)
    if args.deals is not None and not 1 <= args.deals <= MAX_DEALS:
        raise MauschelnError(f"--deals {shown(args.deals)} is not allowed; allowed: a whole number 1..{MAX_DEALS}")
    out = check_output_path(args.out if args.out is not None else DECKS / args.suite, "--out", folder=True)
    taken = [name for name in [f"{t}.json" for t, _, _ in suite_tables()] + [HASHES] if (out / name).exists()]
    if taken and not args.overwrite:
        raise MauschelnError(f"--out {out} already holds deal sets ({', '.join(taken[:3])}{', ...' if len(taken) > 3 else ''}); "
                             "allowed: a new folder, or --overwrite to replace them (the shipped deal sets are pinned: "
                             "every result record names their hashes)")
    hashes = write_suite(args.suite, out, deals=args.deals)
    for table, digest in hashes.items():
        print(f"{table:<22} {digest}")
    return 0


COMMANDS = {"run": _run, "submit": _submit, "leaderboard": _leaderboard, "report": _report, "tables": _tables,
            "generate": _generate}


if __name__ == "__main__":
    raise SystemExit(main())
