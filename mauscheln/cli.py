"""The ``mauscheln`` command: one entry point, one subcommand per job.

``mauscheln demo`` plays and renders a short session between any agents;
``mauscheln train`` trains a policy by self-play; ``mauscheln exploit`` trains
a best response against a frozen agent and measures its gain; ``mauscheln distill``
fits a policy to a search agent's choices; ``mauscheln export`` writes a policy as an ONNX or
TorchScript file; ``mauscheln eval`` runs
duplicate-deal evaluations; ``mauscheln play`` sits a human at the table;
``mauscheln bench`` runs the standard benchmark (suites of fixed deals, the
leaderboard, the HTML report) and ``mauscheln replay`` prints one of its deals;
``mauscheln serve`` puts the table and the replays in the browser; ``mauscheln compile`` builds the
compiled modules of the search and the scripted agents.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from mauscheln_env.ruleargs import ArgumentParser

# Subcommands that live in other packages are imported only when used.
SUBCOMMANDS = {
    "bench": ("agents.bench.cli", "The standard benchmark: suite runs, the leaderboard, the HTML report."),
    "compile": ("mauscheln_env.compiled", "Compile the search's and the scripted agents' modules with Cython (the "
                                          "compiled extra): the same games, faster."),
    "demo": ("agents.play.demo", "Play and render a short session between any agents."),
    "eval": ("agents.evaluation.cli", "Duplicate-deal evaluation of agents: pairings, cross-table, ratings; --suite: "
                             "the cross-table of every ruleset."),
    "distill": ("train.distill", "Distil a search agent into a learned policy: record its choices, fit the actor."),
    "export": ("agents.learned.export", "Write a learned policy as an ONNX or TorchScript file (observation -> "
                                        "logits) for the onnx and torchscript agents."),
    "exploit": ("train.exploit", "Approximate exploitability: a best response trained against a frozen agent."),
    "league": ("train.league", "League training: a main agent, a main exploiter and a league exploiter (PFSP)."),
    "play": ("agents.play.terminal", "Play against the bots in a terminal."),
    "replay": ("agents.bench.replay", "Print a deal of a benchmark result, decision by decision."),
    "serve": ("mauscheln.web.serve", "Play against the bots and watch games in the browser (the web extra)."),
    "train": ("train.ppo_selfplay", "Masked PPO self-play training, ending with a duplicate evaluation."),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    available = {name: spec for name, spec in SUBCOMMANDS.items() if _importable(spec[0])}
    parser = ArgumentParser(prog="mauscheln", description="Mauscheln RL environment and tools.")
    parser.add_argument("command", choices=sorted(available), help="; ".join(f"{k}: {v[1]}" for k, v in available.items()))
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0
    args, rest = parser.parse_known_args(argv[:1])
    module = importlib.import_module(available[args.command][0])
    try:
        return int(module.main(argv[1:]) or 0)
    except BrokenPipeError:  # the reader went away (``mauscheln demo | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return 141  # 128 + SIGPIPE, as a shell reports a command cut off by a closed pipe


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module.rsplit(".", 1)[0]) is not None


if __name__ == "__main__":
    raise SystemExit(main())
