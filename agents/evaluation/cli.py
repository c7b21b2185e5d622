"""``mauscheln eval``: duplicate evaluation of agents from the command line.

Output: a Markdown cross-table on stdout, and with ``--out DIR``
``results.json``, ``results.csv``, ``crosstable.md`` and (if matplotlib is
installed) ``chart.png``. Matches run on the engine directly, optionally in
parallel processes (``--workers``), with progress and the time left on stderr (a tqdm bar on a terminal).

With ``--suite`` it plays the per-ruleset cross-tables instead (:mod:`agents.evaluation.crosstables`).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import replace

from agents.base import agent_from_spec, same_agent
from agents.evaluation.duplicate import BACKENDS, MAX_WORKERS, Settings
from agents.evaluation.tournament import (
    CHUNKS,
    check_out_dir,
    merge_results,
    pair_lines,
    play_in_chunks,
    run_tournament,
    write_outputs,
)
from mauscheln_env.engine import Game
from mauscheln_env.errors import ConfigError, MauschelnError, shown
from mauscheln_env.ruleargs import (
    ArgumentParser,
    add_rule_arguments,
    newline_after_ctrl_c,
    path_arg,
    report,
    rule_options,
)

PROG = "mauscheln eval"


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog=PROG,
        description="Duplicate-deal evaluation of agents: pairings, cross-table, Bradley-Terry ratings.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--agents", nargs="+", default=None, metavar="SPEC",
                   help="agents to compare, all pairs (e.g. random beginner expert pimc:samples=8 "
                        "learned:checkpoint=runs/<run> path/to/my_agent.py:MyAgent mypkg.bots:MyBot:depth=3)")
    p.add_argument("--pair", nargs=2, action="append", metavar=("CANDIDATE", "BASELINE"), default=None,
                   help="evaluate only these pairings (repeatable); agents named here join the table")
    p.add_argument("--candidate", help="shorthand for one pairing: --candidate X --baseline Y")
    p.add_argument("--baseline", help="the baseline of --candidate")
    add_rule_arguments(p)
    p.add_argument("--deals", type=int, default=1000, help="duplicate deals per pairing")
    p.add_argument("--seed", type=int, default=0, help="seed of the deal series and of the agents' random numbers")
    p.add_argument("--start", type=int, default=0, help="index of the first duplicate deal (to play a series in chunks)")
    p.add_argument("--session-deals", type=int, default=1,
                   help="settled deals per session (pot carried over); 1 = single deals")
    p.add_argument("--pot", type=int, default=0, help="pot before the first dealer's ante (>= 0)")
    p.add_argument("--no-crn", action="store_true", help="independent random numbers per agent (no CRN)")
    p.add_argument("--workers", type=int, default=1, help="parallel processes")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="where the games run: reference (the engine, game by game), batched (every game of a block "
                        "of deals at once, with the agents' tensor forms: random, beginner, expert, learned; single "
                        "deals), auto (batched where the pairing can, else reference)")
    p.add_argument("--out", type=path_arg, default=None,
                   help="a new or empty folder for results.json, results.csv, crosstable.md, chart.png")
    p.add_argument("--overwrite", action="store_true", help="write into an --out folder that already holds files")
    p.add_argument("--chunk", type=int, default=None, metavar="DEALS",
                   help="play the deals in chunks of this many, each kept in OUT/chunks/ once finished; the same "
                        "command run again (after a stop) plays only the missing chunks, then pools them all "
                        "(needs --out)")
    p.add_argument("--merge", nargs="+", type=path_arg, default=None, metavar="RESULTS_JSON",
                   help="combine earlier results.json files (plain or .json.gz) into one cross-table instead of playing")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress on stderr (else a bar on a terminal, a line every few seconds otherwise: "
                        "deals done per pairing and overall, elapsed time, time left)")
    g = p.add_argument_group("cross-table suite (agents/evaluation/crosstables.py)")
    g.add_argument("--suite", nargs="*", default=None, metavar="RULESET",
                   help="play the cross-table of each named ruleset (none or 'all': every ruleset) at its default "
                        "table and write <ruleset>.md and .png (--docs) and summary.md; --deals is per scripted pairing")
    g.add_argument("--search-deals", type=int, default=200, help="duplicate deals of each pimc pairing in the suite")
    g.add_argument("--search-against", nargs="+", default=["expert"], metavar="AGENT",
                   help="the agents pimc meets in the suite")
    g.add_argument("--reuse", nargs="+", type=path_arg, default=None, metavar="RESULTS_JSON",
                   help="earlier results.json files (plain or .json.gz) pooled into the suite (their pairings are not played "
                        "again)")
    g.add_argument("--docs", type=path_arg, default=None,
                   help="folder of the suite's pages and charts (default: the --out folder)")
    g.add_argument("--readme", type=path_arg, default=None,
                   help="a file whose results block gets the summary table (README.md)")
    g.add_argument("--no-learned", action="store_true", help="leave the shipped learned policies out of the suite")
    g.add_argument("--note", default=None, help="a line added to every page (e.g. what the machine was doing)")
    return p


def check_distinct(agents: Sequence[str], pairs: Sequence[tuple[str, str]] | None) -> None:
    """Refuse an agent named twice in ``--agents``, a pairing of an agent with itself, and a pairing given twice
    (either way round: a duplicate pairing plays both formats, so ``b`` vs ``a`` measures ``a`` vs ``b``)."""
    seen: dict[str, str] = {}
    for spec in agents:
        key = same_agent(spec)
        if key in seen:
            same = spec if spec == seen[key] else f"{seen[key]} and {spec} (both {key})"
            raise ConfigError(f"--agents names {same} more than once; allowed: distinct agents (an agent against "
                              "itself scores zero by construction)")
        seen[key] = spec
    played: dict[frozenset[str], tuple[str, str]] = {}
    for a, b in pairs or []:
        ka, kb = same_agent(a), same_agent(b)
        if ka == kb:
            raise ConfigError(f"the pairing {a} vs {b} names one agent twice; allowed: two distinct agents")
        key = frozenset((ka, kb))
        if key in played:
            raise ConfigError(f"the pairing {a} vs {b} is given twice (as {' vs '.join(played[key])} before; each "
                              "pairing plays both formats, so its reverse is the same pairing); allowed: each "
                              "pairing once")
        played[key] = (a, b)


def main(argv: Sequence[str] | None = None) -> int:
    """``mauscheln eval``: a tournament of the named agents, or with ``--suite`` the per-ruleset cross-tables."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = "mauscheln eval " + " ".join(shlex.quote(a) for a in argv)
    try:
        args = build_parser().parse_args(argv)
        if args.suite is not None:
            from agents.evaluation.crosstables import suite_main  # loads the shipped policies' metadata

            return suite_main(args, command)
        if args.chunk is not None:
            if args.chunk < 1 or args.out is None or args.merge:
                raise ConfigError(f"--chunk {args.chunk} is not allowed here; allowed: a whole number >= 1, with "
                                  "--out (where the chunks are kept) and without --merge")
        if args.out is not None:
            resuming = args.chunk is not None and (args.out / CHUNKS).is_dir()
            check_out_dir(args.out, args.overwrite or resuming)
        if args.merge:
            t = merge_results(args.merge)
        else:
            agents = list(args.agents or [])
            pairs = [tuple(p) for p in args.pair] if args.pair else None
            if args.candidate or args.baseline:
                if not (args.candidate and args.baseline):
                    raise ConfigError("--candidate and --baseline go together")
                pairs = (pairs or []) + [(args.candidate, args.baseline)]
            check_distinct(agents, pairs)
            if pairs is None and len(agents) < 2:
                raise ConfigError("name at least two --agents, or --pair CANDIDATE BASELINE")
            if not 1 <= args.workers <= MAX_WORKERS:
                raise ConfigError(f"--workers {shown(args.workers)} is not allowed; allowed: a whole number "
                                  f"1..{MAX_WORKERS}")
            settings = Settings(
                ruleset=args.ruleset, players=args.players, deals=args.deals, seed=args.seed, start=args.start,
                session_deals=args.session_deals, pot=args.pot, crn=not args.no_crn,
                rule_options=tuple(sorted(rule_options(args).items())), backend=args.backend,
            )
            config = settings.config()
            settings = replace(settings, players=config.num_players)  # what the table had, preset or flag
            for spec in {x for pair in (pairs or []) for x in pair} | set(agents):
                agent_from_spec(spec).setup(Game(config), 0)  # unknown agents or a policy for another game fail now
            t0 = time.perf_counter()
            progress = not args.no_progress
            if args.chunk is not None:
                t = play_in_chunks(agents, settings, pairs=pairs, chunk=args.chunk, out=args.out,
                                   workers=args.workers, progress=progress, command=command)
            else:
                t = run_tournament(agents, settings, pairs=pairs, workers=args.workers, progress=progress,
                                   command=command)
            elapsed = time.perf_counter() - t0
        for p in t.pairs:
            print("\n".join(pair_lines(p)))
        print()
        print(t.crosstable_markdown())
        if not args.merge:
            games = sum(p.games for p in t.pairs)
            print(f"\n{len(t.pairs)} pairing(s), {args.deals} duplicate deals each, {games} games "
                  f"in {elapsed:.1f}s ({games / max(elapsed, 1e-9):.0f} games/s, {args.workers} worker(s), "
                  f"{os.cpu_count()} CPU(s))")
        if args.out is not None:
            written = write_outputs(t, args.out)
            print("wrote " + ", ".join(written))
            if importlib.util.find_spec("matplotlib") is None:
                print("no chart: matplotlib is not installed (pip install -e '.[plot]')")
    except MauschelnError as exc:
        return report(PROG, exc)
    except KeyboardInterrupt:
        print(f"{newline_after_ctrl_c()}{PROG}: interrupted; the workers are stopped and no results were written", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

