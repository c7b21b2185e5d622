"""Issue 11 as a table: every input a user can type gets a clear answer, and the layers around the env keep it.

Each error case asserts a ``ValueError`` subclass (a CLI: exit code 2 and exactly one ``PROG: error:`` line on
stderr), a message that names the bad value and what is allowed, and that the env (or the command) still works
afterwards. The CLIs are called in-process (``main(argv)``); only the two Ctrl-C cases start a subprocess.
Rule options are validated by the rulesets' typed options (``mauscheln_env/options.py``).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty, Queue

import numpy as np
import pettingzoo
import pytest

import mauscheln_env
from agents.base import AgentError, agent_from_spec, make_agent
from mauscheln_env import Game, make_config
from tests.tables import UNSHIPPED_PLAYERS, UNSHIPPED_REFUSAL, UNSHIPPED_RULESET

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "configs" / "train" / "smoke.yaml"
BIG = 10**400
RECORD = str(ROOT / "agents" / "bench" / "records" / "v1" / "mousel_4p" / "random.json.gz")
"""A shipped benchmark record (random against the mousel field; the games of deals 0..9 kept)."""
BENCH_RUN = ["run", "random", "--ruleset", "mousel", "--no-progress"]
EXPORT = ["learned:checkpoint=mousel4", "--format", "onnx"]
UNSHIPPED_ARGS = ["--ruleset", UNSHIPPED_RULESET, "--players", str(UNSHIPPED_PLAYERS)]
"""A table without a shipped policy."""


# ---------------------------------------------------------------------- helpers
def _main(command: str):
    if command == "sb3":
        from train.sb3_maskable import main

        return main
    from mauscheln.cli import SUBCOMMANDS

    return importlib.import_module(SUBCOMMANDS[command][0]).main


PROGS = {"sb3": "python -m train.sb3_maskable"}


def _prog(command: str, argv: list[str]) -> str:
    """The name a command's errors start with: ``mauscheln bench run`` for a bench subcommand."""
    if command == "bench":
        return f"mauscheln bench {argv[0]}"
    return PROGS.get(command, f"mauscheln {command}")


def run_cli(command: str, argv: list[str], capsys) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        rc = _main(command)(argv)
    except SystemExit as exc:  # argparse usage errors exit from inside parse_args
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def assert_refused(command: str, argv: list[str], needles: list[str], capsys) -> str:
    rc, out, err = run_cli(command, argv, capsys)
    lines = err.splitlines()
    assert rc == 2, (rc, err[-2000:])
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{_prog(command, argv)}: error: "), lines
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def env_still_works(env) -> None:
    env.reset(seed=1)
    agent = env.agent_selection
    env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))


# ---------------------------------------------------------------------- shared files
@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A tiny training run stopped after two of its three updates (reference backend, no final evaluation)."""
    from train.ppo_selfplay import main

    run = tmp_path_factory.mktemp("train") / "run"
    assert main(["--config", str(SMOKE), "--run-dir", str(run), "--total-decisions", "768", "--max-updates", "2"]) == 0
    return run


@pytest.fixture(scope="module")
def results_json(tmp_path_factory) -> Path:
    from agents.evaluation.cli import main

    out = tmp_path_factory.mktemp("eval") / "out"
    assert main(["--agents", "random", "beginner", "--deals", "3", "--out", str(out), "--no-progress"]) == 0
    return out / "results.json"


def _copy_run(run_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    return copy


# ---------------------------------------------------------------------- the CLI table
@dataclass
class Cli:
    command: str
    argv: list[str]
    needles: list[str]
    setup: object = None  # a function (tmp_path, files) -> extra argv, for cases that need files
    marks: list = field(default_factory=list)
    chdir: bool = False  # run in tmp_path, so that a write to the working directory shows
    withhold: bool = False  # run with the policy of tests.tables.UNSHIPPED_* withheld (fixture policy_withheld)


AS_ROOT = pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads and writes any file")
"""For the cases of a file or folder without permissions (chmod 000), which root may read and write anyway."""


def _file(tmp: Path, name: str, text: str) -> str:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return str(path)


TRAIN = ["--config", str(SMOKE)]
ONE_UPDATE = ["--total-decisions", "256", "--max-updates", "1"]
"""Keeps a case short while its check is missing (a smoke update: 8 sessions of 32 steps, a batch of 256)."""
TRAINER_XFAIL = pytest.mark.xfail(strict=True, reason="known: start_run reads a policy magnet after the run directory "
                                  "is written (train/ppo/setup.py); reading it first changes the order of the ranks' "
                                  "collective steps, not done yet")
CLI_CASES = {
    # demo: bad ruleset or player count, bad rule syntax
    "demo ruleset": Cli("demo", ["--ruleset", "nope"], ["'nope'", "mauscheln_classic"]),
    "demo players": Cli("demo", ["--players", "9"], ["num_players=9", "3-7 players"]),
    "demo players type": Cli("demo", ["--players", "four"], ["'four'", "int"]),
    "demo rule syntax": Cli("demo", ["--rule", "knock"], ["'knock'", "KEY=VALUE"]),
    "demo deals": Cli("demo", ["--deals", "0"], ["--deals 0", ">= 1"]),
    # eval: --merge files, --out, --pot, agent specs and parameters, a policy for another table
    "eval merge missing": Cli("eval", [], ["none.json", "no such file", "allowed"],
                              setup=lambda t, f: ["--merge", str(t / "none.json")]),
    "eval merge malformed": Cli("eval", [], ["bad.json", "not JSON", "allowed"],
                                setup=lambda t, f: ["--merge", _file(t, "bad.json", "{")]),
    "eval merge wrong shape": Cli("eval", [], ["shape.json", "not shaped like a results file", "allowed"],
                                  setup=lambda t, f: ["--merge", _file(t, "shape.json", "[1, 2]")]),
    "eval merge wrong per_deal": Cli("eval", [], ["rows.json", "per_deal has shape", "allowed"],
                                     setup=lambda t, f: ["--merge", _truncated_per_deal(f["results"], t)]),
    "eval out is a file": Cli("eval", ["--agents", "random", "expert", "--deals", "1000000000"],
                              ["taken.txt", "is an existing file", "allowed: a new or empty directory"],
                              setup=lambda t, f: ["--out", _file(t, "taken.txt", "x")]),
    "eval out not empty": Cli("eval", ["--agents", "random", "expert", "--deals", "1000000000"],
                              ["is not empty", "--overwrite"], setup=lambda t, f: ["--out", str(f["results"].parent)]),
    "eval pot": Cli("eval", ["--agents", "random", "expert", "--pot", "-1"], ["pot=-1", "allowed: a whole number 0..2147483647"]),
    "eval spec seed": Cli("eval", ["--agents", "random:seed=3", "expert"], ["seed", "allowed: no parameters"]),
    "eval learned without a shipped policy": Cli("eval", ["--agents", "learned", "random", *UNSHIPPED_ARGS],
                                                 [UNSHIPPED_REFUSAL, "allowed"], withhold=True),
    "eval learned checkpoint missing": Cli("eval", ["--agents", "learned:checkpoint=no/such.safetensors", "random"],
                                           ["no/such.safetensors", "neither a file", "shipped"]),
    "eval pimc confidence nan": Cli("eval", ["--agents", "pimc:confidence=nan", "random"],
                                    ["confidence=nan", "allowed: a finite number"]),
    "eval pimc time_limit nan": Cli("eval", ["--agents", "pimc:time_limit=nan", "random"],
                                    ["time_limit=nan", "allowed: None or a finite number"]),
    "eval pimc rollout_search text": Cli("eval", ["--agents", "pimc:rollout_search=no", "random"],
                                         ["rollout_search='no'", "allowed: True or False"]),
    "eval pimc epsilon bool": Cli("eval", ["--agents", "pimc:epsilon=true", "random"],
                                  ["epsilon=True", "allowed: a finite number"]),
    "eval unknown agent": Cli("eval", ["--agents", "nobody", "random"], ["'nobody'", "allowed: beginner"]),
    "eval policy for another table": Cli("eval", ["--agents", "learned:checkpoint=mauscheln4", "random", "--players", "5"],
                                         ["trained for mauscheln, 4 players", "5 players"]),
    "eval policy without knock": Cli("eval", ["--pair", "learned:checkpoint=mauscheln4", "random", "--rule", "knock=true"],
                                     ["knock: trained False, here True"]),
    "eval workers": Cli("eval", ["--agents", "random", "expert", "--workers", "0"], ["--workers 0", "1..1024"]),
    "eval agent named twice": Cli("eval", ["--agents", "random", "expert", "random"],
                                  ["random more than once", "allowed: distinct agents"]),
    "eval pairing with itself": Cli("eval", ["--pair", "expert", "expert"], ["expert vs expert", "two distinct"]),
    "eval rule clash": Cli("eval", ["--agents", "random", "expert", "--rule", "max_deals=2"],
                           ["max_deals", "--session-deals"]),
    # eval: siblings of the agent named twice (the same agent spelled two ways, a pairing given twice)
    "eval agent spelled twice": Cli("eval", ["--agents", "random", "random:"], ["random and random: (both random)",
                                                                                 "allowed: distinct agents"]),
    "eval agent with its defaults": Cli("eval", ["--agents", "pimc", "pimc:samples=16", "random"],
                                        ["pimc and pimc:samples=16", "distinct agents"]),
    "eval pairing twice": Cli("eval", ["--pair", "random", "expert", "--pair", "random", "expert"],
                              ["random vs expert is given twice", "allowed: each pairing once"]),
    "eval pairing and its reverse": Cli("eval", ["--pair", "random", "expert", "--pair", "expert", "random"],
                                        ["expert vs random is given twice", "its reverse is the same pairing"]),
    "eval candidate repeats a pairing": Cli("eval", ["--pair", "random", "expert", "--candidate", "random",
                                                     "--baseline", "expert"], ["is given twice"]),
    "eval candidate is its baseline": Cli("eval", ["--candidate", "expert", "--baseline", "expert:"],
                                          ["names one agent twice", "two distinct agents"]),
    # eval: numbers (huge, signed zero, a digit that is no decimal digit, empty, thousands of digits)
    "eval deals huge": Cli("eval", ["--agents", "random", "expert", "--deals", str(10**30)],
                           ["deals=1000000000000000000000000000000", "allowed: a whole number 1..10000000"]),
    "eval deals minus zero": Cli("eval", ["--agents", "random", "expert", "--deals", "-0"], ["deals=0", "1..10000000"]),
    "eval deals superscript": Cli("eval", ["--agents", "random", "expert", "--deals", "²"], ["invalid int value: '²'"]),
    "eval deals empty": Cli("eval", ["--agents", "random", "expert", "--deals", ""], ["invalid int value: ''"]),
    "eval deals nan": Cli("eval", ["--agents", "random", "expert", "--deals", "nan"], ["invalid int value: 'nan'"]),
    "eval deals thousands of digits": Cli("eval", ["--agents", "random", "expert", "--deals", "9" * 5000],
                                          ["invalid int value", "(5002 characters)"]),
    "eval seed negative": Cli("eval", ["--agents", "random", "expert", "--seed", "-1"], ["seed=-1", ">= 0"]),
    "eval start negative": Cli("eval", ["--agents", "random", "expert", "--start", "-1"], ["start=-1", ">= 0"]),
    "eval session deals huge": Cli("eval", ["--agents", "random", "expert", "--session-deals", str(10**30)],
                                   ["max_deals=1000000000000000000000000000000", "allowed: a whole number >= 1"]),
    "eval pot huge": Cli("eval", ["--agents", "random", "expert", "--pot", str(10**30)],
                         ["pot=1000000000000000000000000000000", "allowed: a whole number 0..2147483647"]),
    "eval workers huge": Cli("eval", ["--agents", "random", "expert", "--workers", str(10**30)],
                             ["--workers 1000000000000000000000000000000", "1..1024"]),
    "eval chunk zero": Cli("eval", ["--agents", "random", "expert", "--chunk", "0"], ["--chunk 0", ">= 1, with --out"],
                           setup=lambda t, f: ["--out", str(t / "o")]),
    "eval players huge": Cli("eval", ["--agents", "random", "expert", "--players", str(10**30)],
                             ["num_players=1000000000000000000000000000000", "3-7 players"]),
    "eval rule thousands of digits": Cli("eval", ["--agents", "random", "expert", "--rule", "stake=" + "9" * 5000],
                                         ["stake=inf", "allowed: a positive multiple of 4"]),
    "eval rule nan": Cli("eval", ["--agents", "random", "expert", "--rule", "stake=nan"], ["stake=nan", "multiple of 4"]),
    "eval rule given twice alike": Cli("eval", ["--agents", "random", "expert", "--rule", "knock=true", "knock=true"],
                                       ["--rule knock is given twice", "give each option once"]),
    "eval knock and rule": Cli("eval", ["--agents", "random", "expert", "--knock", "--rule", "knock=false"],
                               ["--knock contradicts --rule knock=False"]),
    "eval spec parameter huge": Cli("eval", ["--agents", "pimc:samples=" + "9" * 5000, "random"],
                                    ["samples=inf", "allowed: a whole number"]),
    "eval spec parameter bool": Cli("eval", ["--agents", "pimc:samples=true", "random"], ["samples=True", "whole number"]),
    "eval spec parameter minus zero": Cli("eval", ["--agents", "pimc:samples=-0", "random"], ["samples=0", ">= 1"]),
    "eval empty spec": Cli("eval", ["--agents", "", "random"], ["agent spec ''", "allowed: NAME"]),
    # eval: paths (an empty one, one below a file, a folder without permissions, unreadable files)
    "eval out empty": Cli("eval", ["--agents", "random", "expert", "--out", ""],
                          ["argument --out: an empty path", "allowed: a file or folder path"], chdir=True),
    "eval out below a file": Cli("eval", ["--agents", "random", "expert"], ["is a file", "a new or empty directory"],
                                 setup=lambda t, f: ["--out", str(Path(_file(t, "f", "x")) / "o")]),
    "eval out without permissions": Cli("eval", ["--agents", "random", "expert"], ["cannot be written here"],
                                        setup=lambda t, f: ["--out", str(_locked_dir(t) / "o")], marks=[AS_ROOT]),
    "eval merge a folder": Cli("eval", [], ["cannot be read", "Is a directory"], setup=lambda t, f: ["--merge", str(t)]),
    "eval merge not UTF-8": Cli("eval", [], ["cannot be read", "utf-8"],
                                setup=lambda t, f: ["--merge", _bytes(t, "r.json", b"\xff\xfe")]),
    "eval merge without permissions": Cli("eval", [], ["cannot be read", "Permission denied"],
                                          setup=lambda t, f: ["--merge", _locked_file(t, "r.json", "{}")], marks=[AS_ROOT]),
    "eval spec checkpoint a folder": Cli("eval", [], ["is a directory without a policy", "allowed"],
                                         setup=lambda t, f: ["--agents", f"learned:checkpoint={t}", "random"]),
    "eval spec checkpoint without permissions": Cli("eval", [], ["cannot be read", "Permission denied"],
                                                    setup=lambda t, f: ["--agents", "learned:checkpoint="
                                                                        + _locked_file(t, "p.safetensors", "x"),
                                                                        "random"],
                                                    marks=[AS_ROOT]),
    "eval agent file with a syntax error": Cli("eval", [], ["cannot be loaded", "SyntaxError"],
                                               setup=lambda t, f: ["--agents", _file(t, "a.py", "def (\n") + ":A",
                                                                   "random"]),
    # a rule preset that cannot be read, or that names a key twice (YAML and JSON keep the last one silently)
    "eval preset without permissions": Cli("eval", ["--agents", "random", "expert"], ["cannot be read", "Permission"],
                                           setup=lambda t, f: ["--ruleset", _locked_file(t, "r.yaml", "ruleset: mousel\n")],
                                           marks=[AS_ROOT]),
    "eval preset not UTF-8": Cli("eval", ["--agents", "random", "expert"], ["cannot be read", "utf-8",
                                                                          "allowed: a readable UTF-8 YAML or JSON file"],
                                 setup=lambda t, f: ["--ruleset", _bytes(t, "r.yaml", b"\xff\xfe")]),
    "eval preset a folder": Cli("eval", ["--agents", "random", "expert"], ["unknown ruleset", "available: mauscheln"],
                                setup=lambda t, f: ["--ruleset", str(t)]),
    "eval preset key twice": Cli("eval", ["--agents", "random", "expert"], ["key 'stake' is given twice", "line 3"],
                                 setup=lambda t, f: ["--ruleset", _file(t, "r.yaml", "ruleset: mousel\nstake: 4\nstake: 8\n")]),
    "eval preset nested key twice": Cli("eval", ["--agents", "random", "expert"], ["key 'a' is given twice"],
                                        setup=lambda t, f: ["--ruleset", _file(t, "r.yaml", "ruleset: mousel\nx: {a: 1, a: 2}\n")]),
    "eval JSON preset key twice": Cli("eval", ["--agents", "random", "expert"], ["key 'ruleset' is given twice"],
                                      setup=lambda t, f: ["--ruleset", _file(t, "r.json", '{"ruleset": "mousel", "ruleset": "mouche"}')]),
    # eval --suite: what would fail after hours of play fails first
    "eval suite ruleset twice": Cli("eval", ["--suite", "mousel", "mousel"], ["--suite names mousel more than once"]),
    "eval suite opponent twice": Cli("eval", ["--suite", "mousel", "--search-against", "expert", "expert"],
                                     ["--search-against names expert more than once"]),
    "eval suite pimc against itself": Cli("eval", ["--suite", "mousel", "--search-against", "pimc"],
                                          ["pairs pimc with itself"]),
    "eval suite search deals negative": Cli("eval", ["--suite", "mousel", "--search-deals", "-1"],
                                            ["--search-deals -1", "0..10000000"]),
    "eval suite deals zero": Cli("eval", ["--suite", "mousel", "--deals", "0"], ["--deals 0", "1..10000000"]),
    "eval suite workers huge": Cli("eval", ["--suite", "mousel", "--workers", str(10**30)], ["--workers 1000", "1..1024"]),
    "eval suite docs a file": Cli("eval", ["--suite", "mousel"], ["--docs", "is a file; allowed: a folder"],
                                  setup=lambda t, f: ["--docs", _file(t, "docs", "x")]),
    "eval suite readme missing": Cli("eval", ["--suite", "mousel"], ["--readme", "cannot be read", "results:start"],
                                     setup=lambda t, f: ["--readme", str(t / "README.md"), "--docs", str(t / "docs")]),
    "eval suite readme without its block": Cli("eval", ["--suite", "mousel"], ["has no", "block for the summary table"],
                                               setup=lambda t, f: ["--readme", _file(t, "README.md", "# x\n"),
                                                                   "--docs", str(t / "docs")]),
    # play: a checkpoint that does not fit the table, specs, seats (a preset keeps its player count)
    "play policy for another table": Cli("play", ["--agents", "learned:checkpoint=mauscheln4", "--players", "5"],
                                         ["trained for mauscheln, 4 players", "5 players"]),
    "play spec seed": Cli("play", ["--agents", "random:seed=3"], ["seed", "allowed"]),
    "play learned without a shipped policy": Cli("play", ["--agents", "learned", *UNSHIPPED_ARGS],
                                                 [UNSHIPPED_REFUSAL, "allowed"], withhold=True),
    "play seat": Cli("play", ["--seat", "9"], ["--seat 9", "allowed: 0..3"]),
    "play preset seat": Cli("play", ["--ruleset", "configs/rules/mouche_pamphile.yaml", "--seat", "5"],
                            ["--seat 5", "allowed: 0..4"]),
    # bench run: an opponent named twice or the agent itself in the field, caps and records given twice, the output
    "bench run field twice": Cli("bench", [*BENCH_RUN, "--field", "beginner", "beginner:"],
                                 ["--field names beginner and beginner: (both beginner)", "each agent once"]),
    "bench run field holds the agent": Cli("bench", [*BENCH_RUN, "--field", "random", "beginner"],
                                           ["--field names random, the agent itself", "opponents other than random"]),
    "bench run exclude twice": Cli("bench", [*BENCH_RUN, "--exclude", "pimc", "pimc"], ["--exclude names pimc more"]),
    "bench run exclude outside the field": Cli("bench", [*BENCH_RUN, "--exclude", "learned"],
                                               ["--exclude learned is not in the field",
                                                "allowed: random, beginner, expert, pimc, learned:checkpoint=mousel4"]),
    "bench run exclude all": Cli("bench", [*BENCH_RUN, "--field", "beginner", "--exclude", "beginner"],
                                 ["no opponent left in the field"]),
    "bench run cap twice": Cli("bench", [*BENCH_RUN, "--cap", "pimc=1", "--cap", "pimc=2"],
                               ["--cap names pimc twice", "one cap per opponent"]),
    "bench run cap thousands of digits": Cli("bench", [*BENCH_RUN, "--cap", "pimc=" + "9" * 5000],
                                             ["(5007 characters) is not SPEC=N"]),
    "bench run cap outside the field": Cli("bench", [*BENCH_RUN, "--field", "beginner", "--cap", "pimc=3"],
                                           ["--cap names pimc, not in the field", "allowed: beginner"]),
    "bench run reuse twice": Cli("bench", [*BENCH_RUN, "--reuse", RECORD, RECORD], ["more than once", "each record once"]),
    "bench run reuse a folder": Cli("bench", BENCH_RUN, ["cannot be read", "Is a directory"],
                                    setup=lambda t, f: ["--reuse", str(t)]),
    "bench run deals huge": Cli("bench", [*BENCH_RUN, "--deals", str(10**30)], ["holds 1000 deals"]),
    "bench run deals zero": Cli("bench", [*BENCH_RUN, "--deals", "0"], ["deals=0", ">= 1"]),
    "bench run replays negative": Cli("bench", [*BENCH_RUN, "--replays", "-1"], ["replays=-1", ">= 0"]),
    "bench run workers huge": Cli("bench", [*BENCH_RUN, "--deals", "1", "--field", "beginner", "--workers", str(10**30)],
                                  ["workers=1000000000000000000000000000000", "1..1024"]),
    "bench run players without a table": Cli("bench", [*BENCH_RUN, "--players", "6"], ["no table mousel with 6 players"]),
    "bench run suite a path": Cli("bench", [*BENCH_RUN, "--suite", "../../../etc"], ["unknown suite", "allowed: v1"]),
    "bench run out exists": Cli("bench", BENCH_RUN, ["exists", "--overwrite to replace it"],
                                setup=lambda t, f: ["--out", _file(t, "o.json", "keep")]),
    "bench run out a folder": Cli("bench", BENCH_RUN, ["is a folder", "allowed: a file path"],
                                  setup=lambda t, f: ["--out", str(t)]),
    "bench run out below a file": Cli("bench", BENCH_RUN, ["is a file, not a folder"],
                                      setup=lambda t, f: ["--out", str(Path(_file(t, "f", "x")) / "o.json")]),
    "bench run out empty": Cli("bench", [*BENCH_RUN, "--out", ""], ["argument --out: an empty path"], chdir=True),
    "bench run db a folder": Cli("bench", [*BENCH_RUN, "--submit"], ["--db", "is a folder"],
                                 setup=lambda t, f: ["--db", str(t), "--out", str(t / "o.json")]),
    "bench run db below a file": Cli("bench", [*BENCH_RUN, "--submit"], ["--db", "is a file, not a folder"],
                                     setup=lambda t, f: ["--db", str(Path(_file(t, "f", "x")) / "db"),
                                                         "--out", str(t / "o.json")]),
    # bench submit, leaderboard, report, tables, generate
    "bench submit db below a file": Cli("bench", ["submit", RECORD], ["--db", "is a file, not a folder"],
                                        setup=lambda t, f: ["--db", str(Path(_file(t, "f", "x")) / "db")]),
    "bench submit db not a database": Cli("bench", ["submit", RECORD], ["cannot be used as a leaderboard database"],
                                          setup=lambda t, f: ["--db", _file(t, "db", "not a database " * 100)]),
    "bench submit record a folder": Cli("bench", ["submit"], ["cannot be read", "Is a directory"],
                                        setup=lambda t, f: [str(t)]),
    "bench submit record not gzip": Cli("bench", ["submit"], ["cannot be read", "Not a gzipped file"],
                                        setup=lambda t, f: [_file(t, "r.json.gz", "not gzip"), "--db", str(t / "db")]),
    "bench submit record without permissions": Cli("bench", ["submit"], ["cannot be read", "Permission denied"],
                                                   setup=lambda t, f: [_locked_file(t, "r.json", "{}"),
                                                                       "--db", str(t / "db")], marks=[AS_ROOT]),
    "bench leaderboard db missing": Cli("bench", ["leaderboard"], ["no such file", "that mauscheln bench submit wrote"],
                                        setup=lambda t, f: ["--db", str(t / "typo.sqlite")]),
    "bench leaderboard db a folder": Cli("bench", ["leaderboard"], ["--db", "is not a file"],
                                         setup=lambda t, f: ["--db", str(t)]),
    "bench leaderboard suite unknown": Cli("bench", ["leaderboard", "--suite", "v9"], ["unknown suite 'v9'", "allowed: v1"]),
    "bench leaderboard players without ruleset": Cli("bench", ["leaderboard", "--players", "4"],
                                                     ["--players needs --ruleset"]),
    "bench leaderboard players huge": Cli("bench", ["leaderboard", "--ruleset", "mousel", "--players", str(10**30)],
                                          ["no table mousel with 1000000000000000000000000000000 players"]),
    "bench report out a file": Cli("bench", ["report"], ["--out", "is a file; allowed: a folder"],
                                   setup=lambda t, f: ["--out", _file(t, "f", "x")]),
    "bench report out holds a report": Cli("bench", ["report"], ["already holds index.html", "--overwrite"],
                                           setup=lambda t, f: ["--out", str(Path(_file(t, "index.html", "x")).parent)]),
    "bench report out empty": Cli("bench", ["report", "--out", ""], ["argument --out: an empty path"], chdir=True),
    "bench report replay deals negative": Cli("bench", ["report", "--replay-deals", "-1"], ["--replay-deals -1", "0..1000"],
                                              setup=lambda t, f: ["--out", str(t / "o")]),
    "bench report replay deals huge": Cli("bench", ["report", "--replay-deals", str(10**30)], ["0..1000"],
                                          setup=lambda t, f: ["--out", str(t / "o")]),
    "bench report deal negative": Cli("bench", ["report", "--deal", "-1"], ["--deal -1", "a suite deal 0..999"],
                                      setup=lambda t, f: ["--out", str(t / "o")]),
    "bench report deal huge": Cli("bench", ["report", "--deal", str(10**30)], ["a suite deal 0..999"],
                                  setup=lambda t, f: ["--out", str(t / "o")]),
    "bench report deal twice": Cli("bench", ["report", "--deal", "5", "--deal", "5"], ["--deal 5 is given twice"],
                                   setup=lambda t, f: ["--out", str(t / "o")]),
    "bench report db missing": Cli("bench", ["report"], ["no such file", "that mauscheln bench submit wrote"],
                                   setup=lambda t, f: ["--out", str(t / "o"), "--db", str(t / "typo.sqlite")]),
    "bench tables suite empty": Cli("bench", ["tables", "--suite", ""], ["unknown suite ''", "allowed: v1"]),
    "bench generate deals huge": Cli("bench", ["generate", "--deals", str(10**30)], ["1..10000000"],
                                     setup=lambda t, f: ["--out", str(t / "g")]),
    "bench generate deals zero": Cli("bench", ["generate", "--deals", "0"], ["--deals 0", "1..10000000"],
                                     setup=lambda t, f: ["--out", str(t / "g")]),
    "bench generate out a file": Cli("bench", ["generate", "--deals", "2"], ["--out", "is a file; allowed: a folder"],
                                     setup=lambda t, f: ["--out", _file(t, "f", "x")]),
    "bench generate out holds deal sets": Cli("bench", ["generate", "--deals", "2"],
                                              ["already holds deal sets (mousel_4p.json)", "--overwrite"],
                                              setup=lambda t, f: ["--out", str(Path(_file(t, "mousel_4p.json", "k")).parent)]),
    "bench generate into the shipped suite": Cli("bench", ["generate", "--deals", "2"],
                                                 ["already holds deal sets", "the shipped deal sets are pinned"]),
    # export: the output file (the policy itself included), the checkpoint
    "export out is the policy": Cli("export", ["--format", "onnx", "--overwrite"],
                                    ["is the policy being exported", "allowed: another path"],
                                    setup=lambda t, f: _export_onto_itself(t)),
    "export out exists": Cli("export", EXPORT, ["exists", "--overwrite to replace it"],
                             setup=lambda t, f: ["--out", _file(t, "p.onnx", "keep")]),
    "export out a folder": Cli("export", EXPORT, ["is a directory", "allowed: a file path"],
                               setup=lambda t, f: ["--out", str(t)]),
    "export out below a file": Cli("export", EXPORT, ["is a file, not a folder"],
                                   setup=lambda t, f: ["--out", str(Path(_file(t, "f", "x")) / "p.onnx")]),
    "export out in a missing folder": Cli("export", EXPORT, ["does not exist", "a file in an existing folder"],
                                          setup=lambda t, f: ["--out", str(t / "no" / "p.onnx")]),
    "export out empty": Cli("export", [*EXPORT, "--out", ""], ["argument --out: an empty path"], chdir=True),
    "export spec not learned": Cli("export", ["expert", "--format", "onnx", "--out", "x.onnx"],
                                   ["agent spec 'expert' is not allowed", "learned:checkpoint=NAME_OR_PATH"]),
    "export spec with more parameters": Cli("export", ["learned:checkpoint=mousel4,greedy=true", "--format", "onnx",
                                                       "--out", "x.onnx"], ["is not allowed"]),
    "export checkpoint not safetensors": Cli("export", ["--format", "onnx"], ["not a readable safetensors checkpoint"],
                                             setup=lambda t, f: ["learned:checkpoint=" + _file(t, "p.safetensors", "xx"),
                                                                 "--out", str(t / "p.onnx")]),
    # distill: numbers checked before the search plays, the output and the recorded decisions
    "distill seed negative": Cli("distill", ["mousel4", "--seed", "-1"], ["seed=-1", "allowed: a whole number >= 0"]),
    "distill threads huge": Cli("distill", ["mousel4", "--threads", str(10**30)], ["threads=1000", "1..1024"]),
    "distill deals huge": Cli("distill", ["mousel4", "--deals", str(10**30)], ["deals=1000", "10..10000000"]),
    "distill eval deals huge": Cli("distill", ["mousel4", "--eval-deals", str(10**30)], ["eval_deals=1000", "0..10000000"]),
    "distill kl nan": Cli("distill", ["mousel4", "--kl-coef", "nan"], ["kl_coef=nan", "[0, 1e6)"]),
    "distill learning rate minus zero": Cli("distill", ["mousel4", "--learning-rate", "-0"], ["learning_rate=-0.0", "(0, 1]"]),
    "distill teacher empty": Cli("distill", ["mousel4", "--teacher", ""], ["teacher=''", "an agent spec"]),
    "distill teacher for another table": Cli("distill", ["mousel4", "--teacher", "learned:checkpoint=mauscheln4"],
                                             ["trained for mauscheln, 4 players", "mousel"],
                                             setup=lambda t, f: ["--out", str(t / "o.safetensors")]),
    "distill out exists": Cli("distill", ["mousel4"], ["exists", "--overwrite to replace it"],
                              setup=lambda t, f: ["--out", _file(t, "o.safetensors", "keep")]),
    "distill summary exists": Cli("distill", ["mousel4"], ["o.json exists", "--overwrite"],
                                  setup=lambda t, f: ["--out", str(Path(_file(t, "o.json", "{}")).with_suffix(".safetensors"))]),
    "distill out below a file": Cli("distill", ["mousel4"], ["is a file, not a folder"],
                                    setup=lambda t, f: ["--out", str(Path(_file(t, "f", "x")) / "o.safetensors")]),
    "distill out empty": Cli("distill", ["mousel4", "--out", ""], ["--out is empty"], chdir=True),
    "distill data a folder": Cli("distill", ["mousel4"], ["--data", "is a folder"],
                                 setup=lambda t, f: ["--data", str(Path(t / "d.npz").mkdir() or t / "d.npz"),
                                                     "--out", str(t / "o.safetensors")]),
    "distill policy a folder": Cli("distill", [], ["is a directory without a policy"], setup=lambda t, f: [str(t)]),
    # exploit: the evaluation's numbers fail before the training
    "exploit deals huge": Cli("exploit", ["expert", "--deals", str(10**30)], ["deals=1000", "1..10000000"]),
    "exploit workers huge": Cli("exploit", ["expert", "--workers", str(10**30)], ["workers=1000", "1..1024"]),
    "exploit minutes nan": Cli("exploit", ["expert", "--minutes", "nan"], ["minutes=nan", "a number of minutes > 0"]),
    "exploit minutes minus zero": Cli("exploit", ["expert", "--minutes", "-0"], ["minutes=-0.0"]),
    "exploit hidden empty": Cli("exploit", ["expert", "--from-scratch", "--hidden"], ["hidden=[]", "a list of 1 to 16"],
                                setup=lambda t, f: ["--run-dir", str(t / "run")]),
    "exploit rule twice": Cli("exploit", ["expert", "--rule", "knock=true", "--rule", "knock=false"],
                              ["--rule knock is given twice"]),
    "exploit target for another table": Cli("exploit", ["learned:checkpoint=mauscheln4", "--ruleset", "mousel"],
                                            ["trained for mauscheln, 4 players"], setup=lambda t, f: ["--run-dir", str(t / "r")]),
    # league: numbers, the run directory and the state of a league to continue
    "league seed negative": Cli("league", ["--seed", "-1"], ["seed=-1", ">= 0"], setup=lambda t, f: _league(t)),
    "league eval deals huge": Cli("league", ["--eval-deals", str(10**30)], ["eval_deals=1000", "1..10000000"],
                                  setup=lambda t, f: _league(t)),
    "league run dir a file": Cli("league", [], ["--run-dir", "is a file; allowed: a folder"],
                                 setup=lambda t, f: _league(t, _file(t, "f", "x"))),
    "league state not JSON": Cli("league", [], ["league.json cannot be read as a league state", "another --run-dir"],
                                 setup=lambda t, f: _league(t, str(Path(_file(t, "league.json", "{")).parent))),
    "league state of the wrong shape": Cli("league", [], ["league.json is not a league state"],
                                           setup=lambda t, f: _league(t, str(Path(_file(t, "league.json", "[]")).parent))),
    "league config missing": Cli("league", [], ["does not exist"], setup=lambda t, f: ["--config", str(t / "x.yaml")]),
    "league config reference backend": Cli("league", ["--config", str(SMOKE)], ["backend='reference'", "backend: batched"],
                                           setup=lambda t, f: ["--run-dir", str(t / "run")]),
    "league start for another table": Cli("league", ["--init-from", "mousel4"], ["trained for mousel"],
                                          setup=lambda t, f: _league(t)),
    # replay: the seat to view, the deal and the lone seat, the record file
    "replay view thousands of digits": Cli("replay", [RECORD, "--deal", "0", "--view", "9" * 5000],
                                           ["--view '999", "(5002 characters)", "allowed: all or a seat 0..3"]),
    "replay view arabic digit": Cli("replay", [RECORD, "--deal", "0", "--view", "٣"], ["--view '٣'", "0..3"]),
    "replay view empty": Cli("replay", [RECORD, "--deal", "0", "--view", ""], ["--view ''", "0..3"]),
    "replay view beyond the table": Cli("replay", [RECORD, "--deal", "0", "--view", "4"], ["--view '4'", "0..3"]),
    "replay deal negative": Cli("replay", [RECORD, "--deal", "-1"], ["deal -1 was not played", "deals 0..999"]),
    "replay deal huge": Cli("replay", [RECORD, "--deal", str(10**30)], ["deal 1000000000000000000000000000000",
                                                                        "deals 0..999"]),
    "replay seat negative": Cli("replay", [RECORD, "--deal", "0", "--seat", "-1"], ["lone seat -1", "a seat 0..3"]),
    "replay opponent unknown": Cli("replay", [RECORD, "--deal", "0", "--opponent", "nobody"],
                                   ["no pairing against 'nobody'", "allowed: beginner"]),
    "replay record missing": Cli("replay", ["--deal", "0"], ["no such file", "allowed: a result file"],
                                 setup=lambda t, f: [str(t / "x.json")]),
    "replay record a folder": Cli("replay", ["--deal", "0"], ["cannot be read", "Is a directory"],
                                  setup=lambda t, f: [str(t)]),
    "replay record not JSON": Cli("replay", ["--deal", "0"], ["is not JSON", "allowed: a result file"],
                                  setup=lambda t, f: [_file(t, "r.json", "{")]),
    "replay record without permissions": Cli("replay", ["--deal", "0"], ["cannot be read", "Permission denied"],
                                             setup=lambda t, f: [_locked_file(t, "r.json", "{}")], marks=[AS_ROOT]),
    # train: every flag value that used to fail inside torch, numpy or yaml
    "train hidden list text": Cli("train", [*TRAIN, "--hidden", "[-1]"], ["'[-1]'", "allowed: --hidden [INT [INT"]),
    "train hidden negative": Cli("train", [*TRAIN, "--hidden", "-1"], ["hidden=[-1]", "allowed: a list of 1 to 16"]),
    "train learning rate": Cli("train", [*TRAIN, "--learning-rate", "-1"], ["learning_rate=-1.0", "(0, 1]"]),
    "train minibatches beyond the batch": Cli("train", [*TRAIN, "--num-envs", "8", "--num-steps", "4",
                                                        "--num-minibatches", "33"],
                                              ["num_minibatches=33", "32 decisions", "allowed: 1..32"]),
    "train threads": Cli("train", [*TRAIN, "--threads", "0"], ["threads=0", "allowed: None or a whole number 1..1024"]),
    "train device": Cli("train", [*TRAIN, "--device", "nonsense"], ["device='nonsense'", "allowed: 'cpu'"]),
    "train seed": Cli("train", [*TRAIN, "--seed", "-1"], ["seed=-1", "allowed: a whole number 0.."]),
    "train checkpoint every": Cli("train", [*TRAIN, "--checkpoint-every", "0"], ["checkpoint_every=0", ">= 1"]),
    "train clip coef": Cli("train", [*TRAIN, "--clip-coef", "-1"], ["clip_coef=-1.0", "allowed: a finite number > 0"]),
    "train ent coef": Cli("train", [*TRAIN, "--ent-coef", "nan"], ["ent_coef=nan", "allowed: a finite number >= 0"]),
    "train list syntax": Cli("train", [*TRAIN, "--hidden", "128", "abc"], ["'abc'", "allowed: --hidden [INT"]),
    "train rule syntax": Cli("train", [*TRAIN, "--rule", "knock"], ["'knock'", "KEY=VALUE"]),
    "train unknown flag": Cli("train", [*TRAIN, "--nonsense", "1"], ["--nonsense", "--help"]),
    "train config malformed": Cli("train", [], ["bad.yaml", "not valid YAML", "line 2"],
                                  setup=lambda t, f: ["--config", _file(t, "bad.yaml", "hidden: [1,\n")]),
    "train config not a mapping": Cli("train", [], ["list.yaml", "a YAML list", "allowed: a mapping"],
                                      setup=lambda t, f: ["--config", _file(t, "list.yaml", "- 1\n")]),
    "train config bad value": Cli("train", [], ["lr.yaml", "learning_rate='abc'", "allowed: a finite number"],
                                  setup=lambda t, f: ["--config", _file(t, "lr.yaml", "learning_rate: abc\n")]),
    "train config unknown key": Cli("train", [], ["foo", "allowed: anneal_lr"],
                                    setup=lambda t, f: ["--config", _file(t, "foo.yaml", "foo: 1\n")]),
    "train resume not a run": Cli("train", [], ["not a run directory", "allowed"],
                                  setup=lambda t, f: ["--resume", str(t)]),
    "train resume changes option": Cli("train", ["--seed", "4"], ["seed cannot be changed", "--max-updates"],
                                       setup=lambda t, f: ["--resume", str(f["run"])]),
    # train: siblings of the inputs that misbehaved (huge deal counts, agents twice, keys twice, unreadable files)
    "train final evaluation deals huge": Cli("train", [*TRAIN, *ONE_UPDATE, "--final-eval-deals", str(10**30)],
                                             ["final_eval_deals=1000", "0..10000000"]),
    "train evaluation deals huge": Cli("train", [*TRAIN, *ONE_UPDATE, "--eval-every", "1", "--eval-deals", str(10**30)],
                                       ["eval_deals=1000", "1..10000000"]),
    "train final evaluation agent twice": Cli("train", [*TRAIN, *ONE_UPDATE, "--final-eval-deals", "1",
                                                        "--final-eval-agents", "random", "random:"],
                                              ["final_eval_agents", "random", "more than once"]),
    "train config key twice": Cli("train", [], ["key 'seed' is given twice"],
                                  setup=lambda t, f: ["--config", _file(t, "c.yaml", f"base: {SMOKE}\nseed: 1\nseed: 2\n"),
                                                      *ONE_UPDATE]),
    "train config rule key twice": Cli("train", [], ["key 'knock' is given twice"],
                                       setup=lambda t, f: ["--config", _file(t, "c.yaml", f"base: {SMOKE}\nrules: "
                                                                             "{knock: true, knock: false}\n"), *ONE_UPDATE]),
    "train config without permissions": Cli("train", [], ["cannot be read", "Permission denied"],
                                            marks=[AS_ROOT],
                                            setup=lambda t, f: ["--config", _locked_file(t, "c.yaml", "seed: 1\n")]),
    "train magnet missing leaves no run directory": Cli("train", [*TRAIN, "--magnet-coef", "0.1"],
                                                        ["neither a file, a run directory nor a shipped policy"],
                                                        marks=[TRAINER_XFAIL],
                                                        setup=lambda t, f: ["--magnet", str(t / "x.safetensors")]),
    "league config without permissions": Cli("league", [], ["cannot be read", "Permission denied"],
                                             marks=[AS_ROOT],
                                             setup=lambda t, f: ["--config", _locked_file(t, "c.yaml", "seed: 1\n")]),
    # the SB3 script shares the rule arguments and the one-line errors
    "sb3 players": Cli("sb3", ["--players", "9"], ["num_players=9", "3-7 players"]),
    "sb3 timesteps": Cli("sb3", ["--timesteps", "0"], ["--timesteps 0", ">= 1"]),
    "sb3 opponents": Cli("sb3", ["--opponents", "nobody"], ["'nobody'", "allowed"]),
    "sb3 seed beyond 32 bits": Cli("sb3", ["--seed", str(2**32)], ["--seed 4294967296", "0..4294967295"]),
    "sb3 envs huge": Cli("sb3", ["--n-envs", str(10**30)], ["--n-envs 1000", "1..1024"]),
    "sb3 eval deals huge": Cli("sb3", ["--eval-deals", str(10**30)], ["--eval-deals 1000", "0..10000000"]),
    "sb3 eval agents twice": Cli("sb3", ["--eval-agents", "random", "random:"], ["random and random: more than once"]),
    "sb3 runs root a file": Cli("sb3", [], ["--runs-root", "is a file; allowed: a folder"],
                                setup=lambda t, f: ["--runs-root", _file(t, "f", "x")]),
}


def _bytes(tmp: Path, name: str, data: bytes) -> str:
    path = tmp / name
    path.write_bytes(data)
    return str(path)


def _locked_file(tmp: Path, name: str, text: str) -> str:
    """A file nobody but root may read (the test resets its mode before pytest cleans up)."""
    path = Path(_file(tmp, name, text))
    path.chmod(0)
    return str(path)


def _locked_dir(tmp: Path, name: str = "locked") -> Path:
    path = tmp / name
    path.mkdir()
    path.chmod(0o500)
    return path


def _export_onto_itself(tmp: Path) -> list[str]:
    policy = tmp / "p.safetensors"
    shutil.copyfile(ROOT / "agents" / "learned" / "policies" / "mousel4.safetensors", policy)
    return [f"learned:checkpoint={policy}", "--out", str(policy)]


def _league(tmp: Path, run_dir: str | None = None) -> list[str]:
    """A league of the smoke preset on the batched engine, in ``run_dir`` (default: a new folder)."""
    config = _file(tmp, "league.yaml", f"base: {SMOKE}\nbackend: batched\n")
    return ["--config", config, "--run-dir", run_dir or str(tmp / "league_run")]


def _truncated_per_deal(results: Path, tmp: Path) -> str:
    data = json.loads(results.read_text())
    data["pairs"][0]["per_deal"] = data["pairs"][0]["per_deal"][:1]
    return _file(tmp, "rows.json", json.dumps(data))


def _tree(root: Path) -> list[tuple[str, int]]:
    """Every path below ``root`` with its size (-1 for a folder): what a refused command must leave as it was."""
    return sorted((str(p.relative_to(root)), -1 if p.is_dir() else p.stat().st_size) for p in root.rglob("*"))


@pytest.mark.parametrize("name", [pytest.param(k, marks=v.marks) for k, v in CLI_CASES.items()])
def test_cli_refuses_with_one_line(name, tmp_path, capsys, results_json, run_dir, monkeypatch, request):
    case = CLI_CASES[name]
    if case.withhold:
        request.getfixturevalue("policy_withheld")
    extra = case.setup(tmp_path, {"results": results_json, "run": run_dir}) if case.setup else []
    before = _tree(tmp_path)
    argv = [*case.argv, *extra]
    if case.command == "train" and "--resume" not in argv and "--run-dir" not in argv:
        argv += ["--run-dir", str(tmp_path / "train_run")]
    if case.chdir:
        monkeypatch.chdir(tmp_path)
    try:
        assert_refused(case.command, argv, case.needles, capsys)
    finally:
        for p in tmp_path.rglob("*"):  # a case that took permissions away gives them back, for pytest's clean-up
            if not p.is_symlink():
                p.chmod(0o755)
    assert _tree(tmp_path) == before  # nothing half-made (no run or out directory) and nothing replaced


@pytest.mark.parametrize("argv", [[""], ["nope"], ["EVAL"]])
def test_an_unknown_command_is_one_line(argv, capsys):
    from mauscheln.cli import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err.splitlines()
    assert exc.value.code == 2 and len(err) == 1 and err[0].startswith("mauscheln: error: argument command: invalid")


def test_eval_takes_a_start_far_out_in_the_series_and_more_workers_than_deals(capsys):
    """Deal k of the series comes from the seed and k alone, so any start is a deal; surplus workers stay idle."""
    rc, out, err = run_cli("eval", ["--agents", "random", "beginner", "--deals", "1", "--start", str(10**30),
                                    "--workers", "3", "--no-progress"], capsys)
    assert rc == 0, err
    assert "1 pairing(s), 1 duplicate deals each" in out


def test_reading_the_leaderboard_creates_no_database(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    rc, out, err = run_cli("bench", ["leaderboard", "--only", "yours"], capsys)
    assert rc == 0 and "no results for suite v1" in out, err
    assert list(tmp_path.iterdir()) == []


def test_a_record_submitted_twice_is_stored_once(tmp_path, capsys):
    db = tmp_path / "db.sqlite"
    rc, out, err = run_cli("bench", ["submit", RECORD, RECORD, "--db", str(db)], capsys)
    assert rc == 0, err
    assert "stored as result 1" in out and "already in the leaderboard as result 1" in out


def test_the_same_commands_work_after_a_refusal(capsys, tmp_path):
    assert_refused("demo", ["--players", "9"], ["num_players=9"], capsys)
    rc, out, _ = run_cli("demo", ["--ruleset", "configs/rules/mouche_pamphile.yaml", "--deals", "1"], capsys)
    assert rc == 0 and "player_4" in out and "player_5" not in out  # the preset's five players


# ---------------------------------------------------------------------- checkpoints of a run: --resume checks every file
def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00" * 64)


RESUME_CASES = {
    "config.yaml malformed": (lambda r: (r / "config.yaml").write_text("hidden: [1,\n"), ["config.yaml", "not valid YAML"]),
    "config.yaml bad value": (lambda r: (r / "config.yaml").write_text(
        (r / "config.yaml").read_text().replace("learning_rate: 0.0003", "learning_rate: -2")),
        ["config.yaml", "learning_rate=-2"]),
    "latest outside the run": (lambda r: (r / "checkpoints" / "latest").write_text("../../elsewhere"),
                               ["latest names '../../elsewhere'", "allowed: the name of a checkpoint folder inside"]),
    "policy corrupt": (lambda r: _garbage(r / "checkpoints" / "update_000002" / "policy.safetensors"),
                       ["policy.safetensors", "not a readable safetensors", "allowed"]),
    "optimizer corrupt": (lambda r: _garbage(r / "checkpoints" / "update_000002" / "optimizer.safetensors"),
                          ["optimizer.safetensors", "not a readable safetensors", "allowed"]),
    "optimizer missing": (lambda r: (r / "checkpoints" / "update_000002" / "optimizer.safetensors").unlink(),
                          ["optimizer.safetensors is missing", "allowed"]),
    "pool corrupt": (lambda r: _garbage(r / "checkpoints" / "update_000002" / "pool.safetensors"),
                     ["pool.safetensors", "allowed"]),
    "trainer state corrupt": (lambda r: (r / "checkpoints" / "update_000002" / "trainer.json").write_text("{"),
                              ["trainer.json", "not JSON", "allowed"]),
    "trainer state wrong type": (lambda r: (r / "checkpoints" / "update_000002" / "trainer.json").write_text("[]"),
                                 ["trainer.json", "must be a mapping", "allowed"]),
}


@pytest.mark.parametrize("name", list(RESUME_CASES))
def test_resume_checks_every_file(name, run_dir, tmp_path, capsys):
    run = _copy_run(run_dir, tmp_path)
    spoil, needles = RESUME_CASES[name]
    spoil(run)
    assert_refused("train", ["--resume", str(run)], needles, capsys)


def test_resume_removes_what_an_interrupted_write_left_behind(run_dir, tmp_path, capsys):
    run = _copy_run(run_dir, tmp_path)
    (run / "checkpoints" / ".tmp_abc123").mkdir()
    (run / "checkpoints" / ".tmp_abc123" / "policy.safetensors").write_bytes(b"half")
    rc, out, err = run_cli("train", ["--resume", str(run), "--max-updates", "1"], capsys)
    assert rc == 0, err
    assert ".tmp_abc123" in out and not list((run / "checkpoints").glob(".tmp_*"))
    assert (run / "checkpoints" / "latest").read_text() == "update_000003"


def test_a_failed_start_leaves_no_run_directory(tmp_path, capsys, monkeypatch):
    import torch.utils.tensorboard

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch.utils.tensorboard, "SummaryWriter", broken)
    run = tmp_path / "runs" / "new"
    assert_refused("train", [*TRAIN, "--run-dir", str(run)], ["cannot write the run directory", "No space left"],
                   capsys)
    assert not run.exists()


def test_an_existing_run_is_not_overwritten(run_dir, capsys):
    assert_refused("train", [*TRAIN, "--run-dir", str(run_dir)], ["already holds a run", f"--resume {run_dir}"], capsys)


def test_train_help_shows_defaults_and_the_list_syntax(capsys):
    from train.ppo_selfplay import main

    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "usage: mauscheln train" in text
    assert "--hidden [INT [INT ...]]" in text and "(default: 256 256)" in text and "space-separated" in text
    assert "--rule KEY=VALUE" in text and "--resume" in text and "--config" in text


# ---------------------------------------------------------------------- checkpoints: the policy file
def _policy(tmp: Path, game: Game, name: str = "p.safetensors", hidden=(8,)) -> Path:
    from agents.learned import NetSpec, PolicyNet, save_policy
    from mauscheln_env.observation import Observer

    net = PolicyNet(NetSpec(Observer(game).size, game.num_actions, tuple(hidden)))
    return save_policy(tmp / name, net, game)


def _rewrite(path: Path, out: Path, meta_change=None, tensor_change=None) -> Path:
    from safetensors.torch import load_file, safe_open, save_file

    with safe_open(str(path), framework="pt") as f:
        meta = dict(f.metadata())
    tensors = load_file(str(path))
    if meta_change:
        meta_change(meta)
    if tensor_change:
        tensor_change(tensors)
    save_file(tensors, str(out), metadata=meta)
    return out


def _net_meta(**change):
    def apply(meta):
        net = json.loads(meta["net"])
        net.update(change)
        meta["net"] = json.dumps(net)
    return apply


POLICY_CASES = {
    "declared layer too large": (lambda m: _net_meta(hidden=[10**9])(m), None, ["hidden=[1000000000]", "allowed"]),
    "declared layers not the tensors": (lambda m: _net_meta(hidden=[16])(m), None, ["do not match the declared"]),
    "layout of the wrong JSON type": (lambda m: m.update(layout="[1, 2]"), None, ["'layout' is a JSON list",
                                                                                   "allowed: a dict"]),
    "net metadata not JSON": (lambda m: m.update(net="{"), None, ["'net' is not JSON"]),
    "layout rules of the wrong type": (lambda m: m.update(layout=json.dumps({"rules": 3, "observation": [],
                                                                             "actions": []})), None,
                                       ["layout 'rules' is 3", "allowed"]),
    "non-finite weights": (None, lambda t: t["actor.0.weight"].fill_(float("nan")), ["NaN or infinite", "allowed"]),
}


@pytest.mark.parametrize("name", list(POLICY_CASES))
def test_a_bad_policy_file_is_refused_before_it_is_used(name, tmp_path):
    from agents.learned import CheckpointError, LearnedAgent

    game = Game(make_config("mauscheln", 4))
    meta_change, tensor_change, needles = POLICY_CASES[name]
    bad = _rewrite(_policy(tmp_path, game), tmp_path / "bad.safetensors", meta_change, tensor_change)
    with pytest.raises(CheckpointError) as exc:
        LearnedAgent(checkpoint=str(bad))
    for needle in needles:
        assert needle in str(exc.value), (needle, str(exc.value))
    LearnedAgent(checkpoint=str(_policy(tmp_path, game, "good.safetensors"))).setup(game, 0)  # still usable


def test_a_policy_plays_only_the_game_it_was_trained_for(tmp_path):
    from agents.learned import CheckpointError, LearnedAgent

    knock = Game(make_config("mauscheln", 4, knock=True))
    agent = LearnedAgent(checkpoint=str(_policy(tmp_path, knock)))
    with pytest.raises(CheckpointError, match=r"trained for mauscheln, 4 players \(knock=True\).*knock: trained True"):
        agent.setup(Game(make_config("mauscheln", 4)), 0)
    agent.setup(Game(make_config("mauscheln", 4, knock=True, max_deals=7)), 0)  # a session length is not the game


def test_non_finite_weights_are_never_written(tmp_path):
    import torch

    from agents.learned import CheckpointError, NetSpec, PolicyNet, save_policy
    from mauscheln_env.observation import Observer

    game = Game(make_config("mauscheln", 4))
    net = PolicyNet(NetSpec(Observer(game).size, game.num_actions, (8,)))
    with torch.no_grad():
        net.critic[0].bias[0] = float("inf")
    with pytest.raises(CheckpointError, match="NaN or infinite"):
        save_policy(tmp_path / "p.safetensors", net, game)
    assert list(tmp_path.iterdir()) == []


def test_eval_accepts_a_run_directory_as_checkpoint(run_dir, capsys, tmp_path):
    rc, out, err = run_cli("eval", ["--pair", f"learned:checkpoint={run_dir}", "random", "--deals", "2",
                                    "--no-progress"], capsys)
    assert rc == 0, err
    assert "learned:checkpoint=" in out


def test_a_latest_pointer_outside_its_run_is_refused(run_dir, tmp_path):
    from agents.learned import CheckpointError, resolve_checkpoint

    run = _copy_run(run_dir, tmp_path)
    (run / "policy.safetensors").unlink()
    assert resolve_checkpoint(run).name == "policy.safetensors"  # the latest checkpoint's policy
    (run / "checkpoints" / "latest").write_text("/etc")
    with pytest.raises(CheckpointError, match="allowed: the name of a checkpoint folder inside"):
        resolve_checkpoint(run)


# ---------------------------------------------------------------------- eval outputs
def test_eval_outputs_are_labelled_atomic_and_titled(results_json, capsys):
    from agents.evaluation.duplicate import PER_DEAL_COLUMNS
    from agents.evaluation.tournament import Tournament, _settings_line, load_results

    data = json.loads(results_json.read_text())
    assert data["pairs"][0]["per_deal_columns"] == list(PER_DEAL_COLUMNS)
    legend = (results_json.parent / "crosstable.md").read_text()
    assert "Each cell: the row agent's mean advantage" in legend and "Elo (BT)" in legend
    assert (results_json.parent / "chart.png").stat().st_size > 1000  # matplotlib: the plot extra of test.sh
    assert not [p for p in results_json.parent.iterdir() if p.name.endswith(".tmp")]
    t = Tournament(data["agents"], load_results(results_json)["pair_results"], data["ratings_elo"], data["settings"])
    assert _settings_line(t) == "mauscheln, 4 players, 3 duplicate deals per pairing"  # the chart's title


def test_an_atomic_write_that_fails_leaves_the_old_file(tmp_path):
    from mauscheln_env.files import atomic_write, atomic_write_text

    target = atomic_write_text(tmp_path / "results.json", "old")

    def half(tmp: Path) -> None:
        tmp.write_text("ne")
        raise OSError("disk full")

    with pytest.raises(OSError):
        atomic_write(target, half)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_eval_overwrite_and_a_preset_player_count(results_json, capsys, tmp_path):
    out = tmp_path / "preset"
    rc, _, err = run_cli("eval", ["--ruleset", "configs/rules/mouche_pamphile.yaml", "--agents", "random", "expert",
                                  "--deals", "2", "--out", str(out), "--no-progress"], capsys)
    assert rc == 0, err
    assert json.loads((out / "results.json").read_text())["settings"]["players"] == 5
    rc, _, err = run_cli("eval", ["--agents", "random", "expert", "--deals", "2", "--out", str(out), "--overwrite",
                                  "--no-progress"], capsys)
    assert rc == 0, err


# ---------------------------------------------------------------------- the environment and the agents (API)
@dataclass
class Api:
    call: object
    needles: list[str]
    marks: list = field(default_factory=list)
    withhold: bool = False  # run with the policy of tests.tables.UNSHIPPED_* withheld (fixture policy_withheld)


def _reset(options=None, seed=0, **env_kw):
    env = mauscheln_env.env(**env_kw)
    env.reset(seed=seed, options=options)
    return env


API_CASES = {
    "reset pot too large": Api(lambda: _reset({"pot": BIG}), ["pot=1000", "allowed: a whole number 0..2147483647"]),
    "reset pot negative": Api(lambda: _reset({"pot": -1}), ["pot=-1", "0..2147483647"]),
    "reset chips too large": Api(lambda: _reset({"chips": [BIG] * 4}), ["chips=", "each 1..2147483647"]),
    "reset seed negative": Api(lambda: _reset(seed=-3), ["seed=-3", "allowed: None or a whole number >= 0"]),
    "observe an unknown agent": Api(lambda: _reset().observe("player_9"), ["'player_9'", "player_0, player_1"]),
    "illegal_reward nan": Api(lambda: mauscheln_env.env(illegal_reward=float("nan")), ["illegal_reward=nan",
                                                                                        "finite number"]),
    "illegal_reward text": Api(lambda: mauscheln_env.env(illegal_reward="x"), ["illegal_reward='x'", "finite number"]),
    "illegal_reward inf": Api(lambda: mauscheln_env.env(illegal_reward=float("-inf")), ["-inf", "finite number"]),
    "pimc confidence nan": Api(lambda: make_agent("pimc", confidence=float("nan")), ["confidence=nan", "finite"]),
    "pimc time_limit nan": Api(lambda: make_agent("pimc", time_limit=float("nan")), ["time_limit=nan", "None or"]),
    "pimc rollout_search text": Api(lambda: make_agent("pimc", rollout_search="no"), ["'no'", "True or False"]),
    "pimc epsilon bool": Api(lambda: make_agent("pimc", epsilon=True), ["epsilon=True", "a finite number"]),
    "learned greedy text": Api(lambda: make_agent("learned", greedy="yes"), ["greedy='yes'", "True or False"]),
    "spec seed": Api(lambda: agent_from_spec("random:seed=3"), ["seed", "allowed"]),
    "learned without a shipped policy": Api(lambda: make_agent("learned").setup(
                                                Game(make_config(UNSHIPPED_RULESET, UNSHIPPED_PLAYERS)), 0),
                                            [UNSHIPPED_REFUSAL, "allowed"], withhold=True),
    "spec twice": Api(lambda: agent_from_spec("pimc:samples=2,samples=3"), ["samples is given twice"]),
    "match runner pot": Api(lambda: _match_pot(-1), ["pot=-1", "allowed: a whole number >= 0"]),
    "bankroll too large": Api(lambda: mauscheln_env.env(bankroll=BIG), ["bankroll", "allowed"]),
    "mousel deck_size": Api(lambda: mauscheln_env.env(ruleset="mousel", deck_size=40), ["deck_size=40", "32", "52"]),
    # siblings: booleans, floats, text, nan and huge numbers where whole numbers are expected, the env and its reset
    "env players bool": Api(lambda: mauscheln_env.env(num_players=True), ["num_players must be a whole number"]),
    "env players float": Api(lambda: mauscheln_env.env(num_players=4.0), ["got 4.0"]),
    "env players numpy float": Api(lambda: mauscheln_env.env(num_players=np.float64(4)), ["whole number"]),
    "env players text": Api(lambda: mauscheln_env.env(num_players="4"), ["got '4'"]),
    "env players nan": Api(lambda: mauscheln_env.env(num_players=float("nan")), ["got nan"]),
    "env players huge": Api(lambda: mauscheln_env.env(num_players=BIG), ["num_players=", "3-7 players"]),
    "env ruleset empty": Api(lambda: mauscheln_env.env(ruleset=""), ["unknown ruleset ''", "available: mauscheln"]),
    "env ruleset with a space": Api(lambda: mauscheln_env.env(ruleset=" mousel"), ["unknown ruleset ' mousel'"]),
    "env ruleset in capitals": Api(lambda: mauscheln_env.env(ruleset="MOUSEL"), ["unknown ruleset 'MOUSEL'"]),
    "env ruleset None": Api(lambda: mauscheln_env.env(ruleset=None), ["unknown ruleset None"]),
    "env ruleset a folder": Api(lambda: mauscheln_env.env(ruleset=str(ROOT)), ["unknown ruleset"]),
    "env render mode": Api(lambda: mauscheln_env.env(render_mode="nope"), ["render_mode 'nope'", "allowed: None"]),
    "env unknown option": Api(lambda: mauscheln_env.env(nonsense=1), ["unknown option(s) nonsense", "allowed: bankroll"]),
    "env stake minus zero": Api(lambda: mauscheln_env.env(stake=-0.0), ["stake=-0.0 has type float"]),
    "env stake float": Api(lambda: mauscheln_env.env(stake=8.0), ["stake=8.0 has type float"]),
    "env stake bool": Api(lambda: mauscheln_env.env(stake=True), ["stake=True has type bool"]),
    "env knock one": Api(lambda: mauscheln_env.env(knock=1), ["knock=1 has type int", "True or False"]),
    "env knock text": Api(lambda: mauscheln_env.env(knock="true"), ["knock='true' has type str"]),
    "env max_deals huge": Api(lambda: mauscheln_env.env(max_deals=10**30), ["max_deals=1000", "allowed: a whole number >= 1"]),
    "env max_deals nan": Api(lambda: mauscheln_env.env(max_deals=float("nan")), ["max_deals=nan has type float"]),
    "env bankroll nan": Api(lambda: mauscheln_env.env(bankroll=float("nan")), ["bankroll=nan"]),
    "illegal_reward too large for a float": Api(lambda: mauscheln_env.env(illegal_reward=BIG),
                                                ["illegal_reward=1000", "characters)", "allowed: None or a finite number"]),
    "illegal_reward bool": Api(lambda: mauscheln_env.env(illegal_reward=True), ["illegal_reward=True", "finite number"]),
    "reset pot bool": Api(lambda: _reset({"pot": True}), ["pot=True", "0..2147483647"]),
    "reset pot float": Api(lambda: _reset({"pot": 1.0}), ["pot=1.0", "0..2147483647"]),
    "reset pot minus zero": Api(lambda: _reset({"pot": -0.0}), ["pot=-0.0"]),
    "reset pot nan": Api(lambda: _reset({"pot": float("nan")}), ["pot=nan"]),
    "reset pot text": Api(lambda: _reset({"pot": "3"}), ["pot='3'"]),
    "reset pot beyond int64": Api(lambda: _reset({"pot": np.uint64(2**63)}), ["pot=np.uint64(9223372036854775808)"]),
    "reset dealer bool": Api(lambda: _reset({"dealer": True}), ["dealer=True is not a seat", "allowed: 0..3"]),
    "reset dealer minus zero": Api(lambda: _reset({"dealer": -0.0}), ["dealer=-0.0 is not a seat"]),
    "reset dealer huge": Api(lambda: _reset({"dealer": BIG}), ["is not a seat", "0..3"]),
    "reset dealer nan": Api(lambda: _reset({"dealer": float("nan")}), ["dealer=nan"]),
    "reset chips too few": Api(lambda: _reset({"chips": [5, 5, 5]}), ["chips=[5, 5, 5]", "a list of 4 whole numbers"]),
    "reset chips text": Api(lambda: _reset({"chips": "abcd"}), ["chips='abcd'"]),
    "reset chips bools": Api(lambda: _reset({"chips": [True] * 4}), ["chips=[True, True, True, True]"]),
    "reset chips nested": Api(lambda: _reset({"chips": [[1, 2], [3, 4]]}), ["chips=[[1, 2], [3, 4]]"]),
    "reset options a list": Api(lambda: _reset([1, 2]), ["reset options must be a dict, got list"]),
    "reset seed bool": Api(lambda: _reset(seed=True), ["seed=True", "None or a whole number >= 0"]),
    "reset seed float": Api(lambda: _reset(seed=1.0), ["seed=1.0"]),
    "reset seed nan": Api(lambda: _reset(seed=float("nan")), ["seed=nan"]),
    "reset seed text": Api(lambda: _reset(seed="3"), ["seed='3'"]),
    "reset deal text": Api(lambda: _reset({"deal": "x"}), ["deal must be a dict with keys hands, trump, stock"]),
    "raw step bool": Api(lambda: _raw_step(True), ["must act with an action id (int), got True", "legal: mauscheln"]),
    "raw step nan": Api(lambda: _raw_step(float("nan")), ["got nan", "legal:"]),
    "raw step huge": Api(lambda: _raw_step(10**30), ["is not legal for seat 0", "legal:"]),
    "raw step negative": Api(lambda: _raw_step(-1), ["action -1 is not legal"]),
    "raw step text": Api(lambda: _raw_step("3"), ["got '3'"]),
    "raw step None for a live agent": Api(lambda: _raw_step(None), ["got None"]),
    "observe None": Api(lambda: _reset().observe(None), ["observe(None): no such agent", "player_0"]),
    # agents: names, parameters and specs
    "agent name with a space": Api(lambda: make_agent(" random"), ["unknown agent ' random'", "allowed: beginner"]),
    "agent name empty": Api(lambda: make_agent(""), ["unknown agent ''"]),
    "agent name None": Api(lambda: make_agent(None), ["unknown agent None"]),
    "pimc samples bool": Api(lambda: make_agent("pimc", samples=True), ["samples=True", "whole number"]),
    "pimc samples float": Api(lambda: make_agent("pimc", samples=2.0), ["samples=2.0"]),
    "pimc samples nan": Api(lambda: make_agent("pimc", samples=float("nan")), ["samples=nan"]),
    "pimc samples minus zero": Api(lambda: make_agent("pimc", samples=-0), ["samples=0", ">= 1"]),
    "pimc samples huge": Api(lambda: make_agent("pimc", samples=10**30), ["samples=1000", "allowed: a whole number"],
                             marks=[pytest.mark.xfail(strict=True, reason="agents/search/pimc.py (being edited): "
                                                      "samples has no upper bound; a decision never ends")]),
    "learned checkpoint empty": Api(lambda: make_agent("learned", checkpoint="").setup(Game(make_config("mauscheln", 4)), 0),
                                    ["is a directory without a policy"]),
    "random parameter": Api(lambda: make_agent("random", depth=3), ["has no parameter(s) depth", "allowed: no parameters"]),
    "agent seat bool": Api(lambda: make_agent("random").setup(Game(make_config("mauscheln", 4)), True),
                           ["seat=True", "allowed: 0..3"]),
    "agent seat huge": Api(lambda: make_agent("expert").setup(Game(make_config("mauscheln", 4)), BIG),
                           ["seat=1000", "characters)", "0..3"]),
    "agent seat negative": Api(lambda: make_agent("random").setup(Game(make_config("mauscheln", 4)), -1), ["seat=-1"]),
    "agent setup without a game": Api(lambda: make_agent("random").setup(None, 0), ["needs a mauscheln_env Game"]),
    "agent reset seed negative": Api(lambda: make_agent("random").reset(-1), ["seed=-1", "None or a whole number >= 0"]),
    "agent reset seed bool": Api(lambda: make_agent("random").reset(True), ["seed=True"]),
    "spec name empty": Api(lambda: agent_from_spec(":"), ["unknown agent ''"]),
    "spec item without value": Api(lambda: agent_from_spec("pimc:samples"), ["'samples' is not key=value"]),
    "spec item without key": Api(lambda: agent_from_spec("pimc:=3"), ["'=3' is not key=value"]),
    "spec empty item": Api(lambda: agent_from_spec("pimc:,"), ["'' is not key=value"]),
    "spec superscript digit": Api(lambda: agent_from_spec("pimc:samples=²"), ["samples='²'", "whole number"]),
    "spec hexadecimal": Api(lambda: agent_from_spec("pimc:samples=0x10"), ["samples='0x10'"]),
    "spec parameter in capitals": Api(lambda: agent_from_spec("pimc:Samples=2"), ["no parameter(s) Samples"]),
    "spec a second colon": Api(lambda: agent_from_spec("pimc:samples=2:samples=3"), ["samples='2:samples=3'"]),
    "spec not text": Api(lambda: agent_from_spec(3), ["agent spec 3 is not allowed"]),
    "spec seed bool": Api(lambda: agent_from_spec("random", seed=True), ["seed=True"]),
    # PettingZoo's registry: an id names its ruleset
    "make with another ruleset": Api(lambda: pettingzoo.make("aec", "mauscheln/mousel-v1", ruleset="mouche"),
                                     ["mauscheln/mousel-v1 names its ruleset", "ruleset='mouche' is not allowed",
                                      "mauscheln/mouche-v1"]),
    "make with too many players": Api(lambda: pettingzoo.make("aec", "mauscheln/mousel-v1", num_players=99),
                                      ["num_players=99", "3-7 players"]),
    "make with players bool": Api(lambda: pettingzoo.make("aec", "mauscheln/mousel-v1", num_players=True),
                                  ["num_players must be a whole number"]),
}


def _raw_step(action):
    env = mauscheln_env.raw_env(num_players=4)
    env.reset(seed=0)
    env.step(action)


def _match_pot(pot: int):
    from agents.evaluation.match import MatchRunner, make_deal

    game = Game(make_config("mauscheln", 4))
    dealer, spec = make_deal(game, 0, 0)
    return MatchRunner(game).play([make_agent("random") for _ in range(4)], dealer=dealer, deal=spec, pot=pot)


@pytest.mark.parametrize("name", [pytest.param(k, marks=v.marks) for k, v in API_CASES.items()])
def test_api_refuses_with_what_is_allowed(name, request):
    case = API_CASES[name]
    if case.withhold:
        request.getfixturevalue("policy_withheld")
    with pytest.raises(ValueError) as exc:
        case.call()
    for needle in case.needles:
        assert needle in str(exc.value), (needle, str(exc.value))
    assert len(str(exc.value)) < 400  # a huge number is cut short, not printed in full
    env_still_works(mauscheln_env.env(num_players=4))
    env_still_works(mauscheln_env.raw_env(num_players=4))


ACCEPTED = {  # inputs that look odd but mean one thing; each is taken as it says
    "a seed of 30 digits": lambda: _reset(seed=10**30),
    "a numpy seed of 64 bits": lambda: _reset(seed=np.uint64(2**64 - 1)),
    "illegal_reward as a large int": lambda: mauscheln_env.env(illegal_reward=10**30),
    "an Arabic-Indic digit in a spec (int() reads it)": lambda: _expect(agent_from_spec("pimc:samples=٣").params["samples"], 3),
    "a full-width digit in a spec": lambda: _expect(agent_from_spec("pimc:samples=１").params["samples"], 1),
    "spaces around a spec's parameters": lambda: _expect(agent_from_spec("pimc: samples= 2").params["samples"], 2),
    "digits grouped by underscores": lambda: _expect(agent_from_spec("pimc:samples=1_000").params["samples"], 1000),
    "an empty parameter list": lambda: _expect(agent_from_spec("pimc:").spec_text(), "pimc"),
    "an agent seed of 30 digits": lambda: agent_from_spec("random", seed=10**30).reset(10**30),
    "a preset with YAML anchors": lambda: make_config(ROOT / "configs" / "rules" / "mouche_pamphile.yaml"),
}


def _expect(got, want):
    assert got == want, (got, want)


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_odd_but_unambiguous_inputs_are_accepted(name):
    ACCEPTED[name]()


def test_flags_read_numbers_as_int_reads_them():
    """argparse reads a number flag with int(): any Unicode decimal digit counts (``٣`` is 3, ``３`` is 3), a
    sign, spaces and underscores are allowed; ``²`` (a digit but no decimal digit), ``1e3`` and ``nan`` are not,
    and each such refusal is one line (test_cli_refuses_with_one_line)."""
    from agents.evaluation.cli import build_parser

    for text, value in (("٣", 3), ("３", 3), (" 2", 2), ("-0", 0), ("1_000", 1000), ("+4", 4)):
        assert build_parser().parse_args(["--deals", text]).deals == value


def test_an_env_that_refused_a_reset_still_plays():
    env = mauscheln_env.raw_env(num_players=4)
    for options in ({"pot": BIG}, {"chips": [0, 1, 1, 1]}, {"dealer": 7}):
        with pytest.raises(ValueError):
            env.reset(seed=0, options=options)
        env_still_works(env)


def test_numpy_scalars_are_accepted_where_python_ones_are():
    env = mauscheln_env.raw_env(num_players=4)
    env.reset(seed=np.int64(3), options={"dealer": np.int64(1), "chips": np.array([9, 8, 7, 6]), "pot": np.int32(2)})
    info = env.infos["player_0"]
    assert info["dealer"] == 1 and info["chips"][0] == 9 and info["chips"][2] == 7 and info["pot"] == 2 + 4
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    env.step(np.int64(legal[0]))
    env.step(np.array(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))  # a 0-d array
    agent = make_agent("pimc", samples=np.int64(3), confidence=np.float32(0.5), rollout_search=np.bool_(True))
    assert agent.params["samples"] == 3 and type(agent.params["samples"]) is int and agent.rollout_search is True


@pytest.mark.parametrize("kwargs", [
    {"knock": np.bool_(True)},
    {"stake": np.int64(8)},
    {"num_players": np.int64(5)},
])
def test_numpy_rule_options_are_accepted(kwargs):
    env_still_works(mauscheln_env.env(**kwargs))


def test_every_muschka_session_ends():
    """Seven seats and no deal limit: scores drift upwards and no seat may ever reach 0; the session is truncated
    after max_session_deals (500) settled deals (documented on the ruleset page)."""
    env = mauscheln_env.raw_env(ruleset="muschka", num_players=7, max_deals=None)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(300_000):
        if not env.agents:
            state = env.engine_state
            assert state.session.truncated or 0 in state.session.scores
            assert state.session.deals_settled <= env.config.max_session_deals == 500
            return
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
    pytest.fail("a muschka session ran 300,000 steps")


# ---------------------------------------------------------------------- play: no leak (the full scan is in test_play)
def test_play_leaks_no_bot_discard():
    from tests.test_play import _play_watched

    screen, text = _play_watched("mouche", 5, 3, deals=1)
    assert "starts an exchange by discarding a card" in text and not screen.leaks


def test_agent_errors_are_value_errors():
    assert issubclass(AgentError, ValueError)
    from agents.learned import CheckpointError
    from mauscheln_env.errors import ConfigError

    assert issubclass(CheckpointError, ValueError) and issubclass(ConfigError, ValueError)


# ---------------------------------------------------------------------- play: whatever is typed; Ctrl-C in every command
TYPED = ["²", "٣", "１", "１０", "-1", "0", "+1", " 1 ", "1e3", "nan", "\x00", "10♥", "♥", "1.0", "9" * 5000,
         str(10**30), "x" * 100_000, "", "?"]


@pytest.mark.parametrize("text", TYPED, ids=[repr(t[:12]) for t in TYPED])
def test_play_answers_whatever_is_typed(text, monkeypatch, capsys):
    """Each line is a move, a question or an answer naming what is allowed; the game goes on (here: to quit)."""
    from agents.play.terminal import main

    monkeypatch.setattr(sys, "stdin", io.StringIO(text + "\nquit\n"))
    assert main(["--seed", "1", "--deals", "1", "--agents", "random"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.rstrip().endswith("bye.")
    assert max(map(len, out.splitlines())) < 2000  # a long line typed is not echoed in full


def test_play_cuts_a_long_number_short():
    from agents.play.terminal import TerminalTable

    game = Game(make_config("mauscheln", 4))
    table = TerminalTable(game, 0, {s: make_agent("random") for s in (1, 2, 3)}, out=io.StringIO())
    legal = [game.deck.index["QH"], game.deck.index["TH"]]
    assert table.read_action("9" * 5000, dict(enumerate(legal, 1))) is None  # int() refuses 4,301 digits
    assert table.why_not("9" * 5000, None, legal, None, {}).endswith("(5002 characters) is not one of the numbers shown")


class _CtrlC(io.StringIO):
    def readline(self, *args):
        raise KeyboardInterrupt


def _ctrl_c(*args, **kwargs):
    raise KeyboardInterrupt


CTRL_C = {  # command, argv, what to interrupt, the line on stderr
    "play at the table": ("play", ["--seed", "1", "--agents", "random"], ("sys", "stdin", _CtrlC()), None),
    "play while the bots load": ("play", ["--seed", "1", "--agents", "random"],
                                 ("agents.play.terminal", "agent_from_spec", _ctrl_c), None),
    "demo": ("demo", ["--deals", "1"], ("mauscheln_env", "env", _ctrl_c), "mauscheln demo: interrupted"),
    "replay": ("replay", [RECORD, "--deal", "0"],
               ("agents.bench.replay", "game_replay", _ctrl_c), "mauscheln replay: interrupted"),
    "export": ("export", ["learned:checkpoint=mousel4", "--format", "onnx", "--out", "OUT/p.onnx"],
               ("agents.learned.export", "export_policy", _ctrl_c), "mauscheln export: interrupted; nothing was written"),
    "distill": ("distill", ["mousel4", "--out", "OUT/p.safetensors"], ("train.distill", "distill", _ctrl_c),
                "mauscheln distill: interrupted"),
}


@pytest.mark.parametrize("name", list(CTRL_C))
def test_ctrl_c_ends_a_command_with_130_and_no_traceback(name, monkeypatch, capsys, tmp_path):
    command, argv, (module, attr, value), line = CTRL_C[name]
    monkeypatch.setattr(importlib.import_module(module), attr, value)
    rc, out, err = run_cli(command, [a.replace("OUT", str(tmp_path)) for a in argv], capsys)
    assert rc == 130, err
    if line is None:  # play says goodbye on stdout, as when the player quits
        assert err == "" and out.rstrip().endswith("bye.")
    else:
        assert err.strip().splitlines() == [line]
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------- train: what it prints; Ctrl-C (subprocesses)
@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "log"])
def test_train_prints_its_run_directory_first_and_a_progress_bar_for_the_final_evaluation_on_a_terminal(
        tmp_path, capsys, monkeypatch, terminal):
    """On a terminal the final evaluation shows a tqdm bar; in a log (stderr redirected) no bar's frames, which
    would fill the log with carriage returns, only the progress lines (none for a run this short)."""
    pytest.importorskip("tqdm")
    monkeypatch.setattr(importlib.import_module("agents.evaluation.progress"), "_is_tty", lambda stream: terminal)
    run = tmp_path / "run"
    rc, out, err = run_cli("train", [*TRAIN, "--run-dir", str(run), "--total-decisions", "256", "--final-eval-deals", "2",
                                     "--final-eval-agents", "random"], capsys)
    assert rc == 0, err
    assert out.splitlines()[0] == f"run directory: {run}"
    if terminal:
        assert "learned vs random" in err and "0/2" in err  # the bar on stderr (its later refreshes are timed)
    else:
        assert "\r" not in err and "learned vs random" not in err
    assert (run / "evaluation.png").is_file() and (run / "evaluation.md").is_file()


def _ctrl_c_as_in_a_shell() -> None:
    """In the child before it runs: SIGINT with its default action and not blocked, as a terminal gives a command.

    A child inherits an ignored or blocked SIGINT from its parent, and Python then never raises KeyboardInterrupt;
    in full test runs (`pytest -n 2`) the eval Ctrl-C tests hung so, while they passed run alone, so the
    test worker's SIGINT was, most likely, no longer the default by then (what changed it is not found yet;
    tests/conftest.py fails a test that leaves it changed in the main thread)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _interrupt_after(cmd: list[str], marker: str, delay: float = 0.0, timeout: float = 240
                     ) -> subprocess.CompletedProcess:
    """Start ``cmd`` (``sys.executable`` and its arguments) in its own process group; send Ctrl-C (SIGINT to the
    group) ``delay`` s after ``marker``.

    Both pipes are read by threads, so a child that never prints the marker or never ends fails the test at
    ``timeout`` instead of hanging it, and a full stderr pipe cannot block the child. The child runs with
    ``-X faulthandler``: a stuck one gets SIGABRT first, so the failure shows where each of its threads was."""
    assert cmd[0] == sys.executable, cmd
    proc = subprocess.Popen([cmd[0], "-X", "faulthandler", *cmd[1:]], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_ctrl_c_as_in_a_shell)
    out: Queue = Queue()
    err: list[str] = []

    def pump_out() -> None:
        for line in proc.stdout:
            out.put(line)
        out.put("")  # the end

    readers = [threading.Thread(target=pump_out, daemon=True),
               threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)]
    for r in readers:
        r.start()

    def fail(what: str) -> None:
        os.kill(proc.pid, signal.SIGABRT)  # faulthandler prints every thread's stack to stderr
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):  # the workers too, so that stderr reaches its end
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        readers[1].join(timeout=10)
        pytest.fail(f"{what} within {timeout} s; stderr: {''.join(err)!r}")

    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while True:
        try:
            line = out.get(timeout=max(0.0, deadline - time.monotonic()))
        except Empty:
            fail(f"no {marker!r} on stdout (it printed {''.join(lines)!r})")
        if not line:  # it ended without printing the marker
            break
        lines.append(line)
        if marker in line:
            time.sleep(delay)
            os.killpg(proc.pid, signal.SIGINT)
            break
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        fail("it did not end after Ctrl-C")
    for r in readers:
        r.join(timeout=timeout)
    while not out.empty():
        lines.append(out.get())
    return subprocess.CompletedProcess(cmd, proc.returncode, "".join(lines), "".join(err))


def test_ctrl_c_in_train_writes_a_checkpoint_and_says_how_to_resume(tmp_path):
    run = tmp_path / "run"
    proc = _interrupt_after([sys.executable, "-m", "train.ppo_selfplay", "--config", str(SMOKE), "--run-dir", str(run),
                             "--total-decisions", "100000"], "update 1/")
    assert proc.returncode == 130, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"--resume {run}" in lines[0] and "Traceback" not in proc.stderr, proc.stderr
    latest = (run / "checkpoints" / "latest").read_text()
    assert latest.startswith("update_") and (run / "checkpoints" / latest / "optimizer.safetensors").is_file()


def test_ctrl_c_in_eval_stops_the_workers_with_one_line():
    proc = _interrupt_after([sys.executable, "-u", "-c",
                             "import sys; from agents.evaluation.cli import main; print('started', flush=True); "
                             "sys.exit(main(['--agents', 'random', 'expert', '--deals', '1000000', '--workers', '2', "
                             "'--no-progress']))"], "started", delay=3.0)
    assert proc.returncode == 130, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == ["mauscheln eval: interrupted; the workers are stopped and no results were written"], proc.stderr


def test_a_ctrl_c_another_thread_took_ends_the_wait_for_the_workers():
    """Linux may hand a Ctrl-C to any thread that does not block it; Python then notes it, but a main thread
    asleep in an untimed wait on the pool sleeps on until a result comes. The wait for the workers' results must
    wake for it: here a helper thread takes SIGINT itself while the main thread waits on results that never come
    (without the sliced wait of ``_polled`` this hangs)."""
    code = ("import multiprocessing, signal, sys, threading, time\n"
            "from agents.evaluation.duplicate import _polled\n"
            "class Never:\n"
            "    def next(self, timeout=None):\n"
            "        threading.Event().wait(timeout)  # no timeout: for ever\n"
            "        raise multiprocessing.TimeoutError\n"
            "def press():\n"
            "    time.sleep(0.5)\n"
            "    signal.pthread_kill(threading.get_ident(), signal.SIGINT)\n"
            "threading.Thread(target=press, daemon=True).start()\n"
            "try:\n"
            "    next(_polled(Never()))\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted')\n")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=_ctrl_c_as_in_a_shell)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the wait for results did not wake for a Ctrl-C another thread took")
    assert proc.returncode == 0 and out.split() == ["interrupted"], (out, err)


def test_a_ctrl_c_while_torch_is_imported_is_held_until_the_import_ends():
    """eval imports torch lazily; a KeyboardInterrupt raised inside torch's C++ initialisation aborted the process
    (exit -6). Inside ``_ctrl_c_held`` a SIGINT is only noted, and raised on leaving, to the handler in place."""
    from agents.evaluation.duplicate import _ctrl_c_held

    # Python's own handler, as in `mauscheln eval`: another test in this worker process may have left SIGINT
    # ignored or handled otherwise, and the held Ctrl-C goes to the handler in place on leaving
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        reached_the_end = False
        with pytest.raises(KeyboardInterrupt):
            with _ctrl_c_held():
                signal.raise_signal(signal.SIGINT)  # to this thread: its handler runs before the next bytecodes
                for _ in range(1000):  # give the handler every chance to raise here
                    pass
                reached_the_end = True
        assert reached_the_end
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with _ctrl_c_held():  # no Ctrl-C: nothing is raised
            pass
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, outer if outer is not None else signal.default_int_handler)


def test_ctrl_c_while_the_eval_workers_start_neither_hangs_nor_traces():
    """Ctrl-C in the instant the worker processes start (before they ignore it) once hung ``eval`` for ever
    (2 of 12 tries): a worker killed holding the task queue's lock blocked the pool's shutdown."""
    # The marker is printed from inside ``main`` (its first call, the parser), so even a Ctrl-C sent the instant
    # it appears falls where ``main`` answers for it, not in the one bytecode before ``main`` is entered.
    code = ("import sys\nimport agents.evaluation.cli as cli\nparser = cli.build_parser\n"
            "def marked():\n    print('started', flush=True)\n    return parser()\n"
            "cli.build_parser = marked\n"
            "sys.exit(cli.main(['--agents', 'random', 'expert', '--deals', '1000000', '--workers', '2', "
            "'--no-progress']))")
    for delay in (0.0, 0.02, 0.05, 0.08, 0.12, 0.2):
        proc = _interrupt_after([sys.executable, "-u", "-c", code], "started", delay=delay)
        assert proc.returncode == 130, (delay, proc.stderr)
        assert proc.stderr.strip().splitlines() == [
            "mauscheln eval: interrupted; the workers are stopped and no results were written"], (delay, proc.stderr)


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_eval_workers_start_with_ctrl_c_held_off(start_method):
    """A spawned worker imports the project before it can ignore Ctrl-C (seconds on a busy host); one pressed
    then printed that worker's traceback (CI, 2026-12-03). The spawn context's resource tracker, started with
    the pool, used to unblock SIGINT before the workers spawned; each worker must start with it blocked."""
    if start_method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {start_method} start method on this platform")
    code = ("import multiprocessing, signal, sys\n"
            "import agents.evaluation.duplicate as ev\n"
            f"ev._pool_context = lambda: multiprocessing.get_context({start_method!r})\n"
            "with ev._worker_pool(1) as pool:\n"
            "    held = pool.apply(signal.pthread_sigmask, (signal.SIG_BLOCK, []))\n"
            "    print(signal.SIGINT in held, signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "False"], (proc.stdout, proc.stderr)  # the worker holds it; we do not
