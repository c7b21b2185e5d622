"""Command lines of the training scripts: dataclass ``Args`` parsed by tyro, one-line errors.

Every training script declares its options as a dataclass with a docstring per
field and parses it with :func:`tyro_cli`, which also merges a repeated
``--rule`` (tyro keeps only the last of a repeated flag) and turns tyro's
boxed error into one line (a :class:`~mauscheln_env.errors.ConfigError`).
:data:`KEY_VALUES` is the tyro constructor of a ``KEY=VALUE ...`` option
(``--rule knock=true stake=8`` -> ``{"knock": True, "stake": 8}``). :func:`run_job` runs a script's job
with the exit codes every command shares (0, 2 for a user's mistake, 130 when interrupted).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import tyro

from mauscheln_env.errors import ConfigError, MauschelnError
from mauscheln_env.ruleargs import cut_long_values, newline_after_ctrl_c, parse_rules, report

T = TypeVar("T")


def _key_values(items: list[str]) -> dict[str, Any]:
    try:
        return parse_rules(items)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None  # tyro reports a ValueError as a bad value of the flag


KEY_VALUES = tyro.constructors.PrimitiveConstructorSpec(
    nargs="*", metavar="KEY=VALUE", instance_from_str=_key_values,
    is_instance=lambda x: isinstance(x, dict), str_from_instance=lambda d: [f"{k}={v}" for k, v in d.items()],
)
"""``KEY=VALUE ...`` -> a dict (``mauscheln_env.ruleargs.parse_rules``): rule options, opponent weights."""


def tyro_cli(cls: type[T], argv: list[str], *, prog: str, description: str, default: T | None = None,
             repeated: tuple[str, ...] = ("--rule",)) -> T:
    """``cls`` from the command line ``argv`` (``default`` gives the defaults); a bad line raises ConfigError."""
    for flag in repeated:
        argv = merge_repeated(argv, flag)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return tyro.cli(cls, prog=prog, description=description, args=argv, default=default)
    except SystemExit as exc:
        if exc.code not in (0, None):
            line = one_line(err.getvalue(), prog) or f"bad command line (exit {exc.code})"
            raise ConfigError(cut_long_values(line)) from None
        raise


class TrainingInterrupted(Exception):
    """A training run stopped by Ctrl-C at once; the message says how to resume."""


class RanksFailed(Exception):
    """A launched run ended with a failed rank; ``exit_code`` is the command's, the message (possibly empty:
    rank 0 has said it already) names the rank and where the last checkpoint is."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def run_job(prog: str, job: Callable[[], dict[str, Any]]) -> int:
    """Run ``job()`` (a training job returning its summary) as a command: exit 0, 2 with one line for a user's
    mistake (bad configuration, run directory or checkpoint; no traceback), 130 when interrupted, the launcher's
    code with one line when a rank of a data-parallel run failed. The ranks of a launched run other than rank 0
    say nothing of a mistake or an interrupt: rank 0 says it."""
    said_by_rank_zero = os.environ.get("RANK", "0") != "0"  # a launched rank of a data-parallel run, not rank 0
    try:
        summary = job()
    except MauschelnError as exc:
        return 2 if said_by_rank_zero else report(prog, exc)
    except (TrainingInterrupted, KeyboardInterrupt) as exc:
        if not said_by_rank_zero:
            print(f"{newline_after_ctrl_c()}{prog}: {str(exc) or 'interrupted'}", file=sys.stderr)
        return 130
    except RanksFailed as exc:  # the launched ranks failed; rank 0 may have said why already
        if str(exc):
            print(f"{prog}: {exc}", file=sys.stderr, flush=True)
        return exc.exit_code
    return 130 if summary.get("interrupted") else 0


def merge_repeated(argv: list[str], flag: str) -> list[str]:
    """``--rule a=1 --rule b=2`` -> ``--rule a=1 b=2`` (tyro keeps only the last of a repeated flag)."""
    out, values, seen, i = [], [], False, 0
    while i < len(argv):
        if argv[i] == flag:
            seen = True
            i += 1
            while i < len(argv) and not argv[i].startswith("--"):
                values.append(argv[i])
                i += 1
            continue
        out.append(argv[i])
        i += 1
    return out + ([flag, *values] if seen else [])


def one_line(text: str, prog: str) -> str:
    """tyro's boxed error as one line: its message, and the flag's syntax when it names one."""
    blocks: list[list[str]] = [[]]
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("╭", "╰", "+")):  # the box's top (its title) and bottom, unicode or ascii
            continue
        line = line.strip("│|").strip()
        if not line.strip("─-= "):  # a rule between sections
            blocks.append([])
        elif not line.startswith("For full helptext"):
            blocks[-1].append(line)
    blocks = [b for b in blocks if b]
    boxed = text.lstrip().startswith(("╭", "+"))
    if not boxed and len(blocks) > 1:  # without a terminal tyro draws no box: the title is the first section
        blocks = blocks[1:]
    if not blocks:
        return ""
    head = " ".join(" ".join(blocks[0]).split())
    for block in blocks[1:]:
        if block[0].startswith("Argument helptext") and len(block) > 1 and "allowed:" not in head:
            usage = block[1]
            hint = " (list values are separated by spaces)" if "[" in usage else ""
            return f"{head}; allowed: {usage}{hint}"
    return f"{head} (see {prog} --help)"
