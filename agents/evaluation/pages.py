"""Generated results pages: the mark and the provenance block every page under ``docs/results/`` starts with.

A results page is written by a command and never edited by hand: its first line is :data:`MARK`, then its
title, then the provenance block of :func:`provenance` — the command that wrote it, the date, the commit and
the machine. The measured figures of a page belong to it; every other page and the README link to it instead
of repeating them (``tests/test_figures.py`` checks that). A page may keep a hand-written tail after the line
:data:`HAND_WRITTEN`; such a tail is prose like any other page and owns nothing.

:func:`read_page` splits a page back into its generated part, its provenance and its tail, for the checks and
for the index of the results pages.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mauscheln_env.compiled import loaded

MARK = "<!-- generated page: run the command below to rewrite it; do not edit it by hand -->"
"""The first line of every generated results page."""
HAND_WRITTEN = "<!-- written by hand: eval --suite keeps what follows -->"
"""The line after which a generated page keeps a hand-written tail (owned by no command)."""
FIELDS = ("command", "date", "commit", "machine")
"""The provenance every generated page states, one ``* name: value`` line each."""


def cpu_model() -> str:
    """The processor's model (Linux's ``model name``, e.g. ``AMD EPYC``), else what :mod:`platform` knows: speed
    figures differ about twofold between the processors of one architecture, so a page names the model."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """The machine in a few words: system, architecture, processor, CPUs, Python, and whether the search and
    the scripted agents run from the compiled build (``mauscheln compile build``) or from source."""
    return (f"{platform.system()} {platform.machine()} ({cpu_model()}), {os.cpu_count()} CPU(s), "
            f"Python {platform.python_version()}, {'compiled' if loaded() else 'source'} build")


def commit() -> str:
    """The short hash of the checkout's HEAD (``unknown`` outside a git checkout), marked when its Python code
    differs from that commit (pages and data being rewritten do not count)."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=here, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "*.py"],
                               capture_output=True, text=True, check=True, cwd=here, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head} (with uncommitted changes)" if dirty else head


def now() -> str:
    return f"{_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC"


def provenance(command: str, *, date: str | None = None, data: Sequence[str] = (),
               notes: Sequence[str] = ()) -> list[str]:
    """The provenance block: ``* command:``, ``* date:``, ``* commit:``, ``* machine:``, then ``* data:`` (the
    files the page was made from) and one line per note."""
    lines = [f"* command: `{command}`", f"* date: {date or now()}", f"* commit: {commit()}", f"* machine: {machine()}"]
    if data:
        lines.append("* data: " + ", ".join(f"`{d}`" for d in data))
    lines += [f"* {note}" for note in notes]
    return lines


def header(title: str, command: str, *, date: str | None = None, data: Sequence[str] = (),
           notes: Sequence[str] = (), intro: str = "") -> list[str]:
    """:data:`MARK`, the title, an optional paragraph and the provenance block, as lines."""
    lines = [MARK, f"# {title}", ""]
    if intro:
        lines += [intro, ""]
    return lines + provenance(command, date=date, data=data, notes=notes) + [""]


@dataclass
class Page:
    """A results page split into its generated part, its provenance and its hand-written tail."""

    path: Path
    generated: str
    tail: str
    title: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    data: list[str] = field(default_factory=list)

    @property
    def is_generated(self) -> bool:
        return bool(self.generated)


_FIELD = re.compile(r"^\* (command|date|commit|machine|data): (.*)$", re.M)


def read_page(path: str | Path) -> Page:
    """Split a Markdown page: a page without :data:`MARK` on its first line is all tail (hand-written)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if not text.startswith(MARK):
        return Page(path, "", text)
    generated, tail = text, ""
    if HAND_WRITTEN in text:
        generated, rest = text.split(HAND_WRITTEN, 1)
        tail = HAND_WRITTEN + rest
    title = next((line[2:].strip() for line in generated.splitlines() if line.startswith("# ")), "")
    fields: dict[str, str] = {}
    data: list[str] = []
    for name, value in _FIELD.findall(generated):
        if name == "data":
            data += re.findall(r"`([^`]+)`", value)
        elif name not in fields:
            fields[name] = value.strip()
    if "command" in fields:
        fields["command"] = fields["command"].strip("`")
    return Page(path, generated, tail, title, fields, data)


class Transcript:
    """What a benchmark script prints, kept to be written as a results page as well (``--page``).

    ``print`` through :meth:`line`: the line goes to stdout at once and is kept. :meth:`write` writes the page:
    :func:`header`, then the kept lines — Markdown table rows and blank lines as they are, a script's ``# ...``
    comment lines as plain paragraphs, every other line as a list item (so that consecutive lines stay apart).
    """

    def __init__(self) -> None:
        self.lines: list[str] = []

    def line(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.extend(text.splitlines() or [""])

    def markdown(self) -> list[str]:
        out: list[str] = []
        for text in self.lines:
            if text.startswith("# "):
                out += ["", text[2:], ""]
            elif not text.strip() or text.startswith("|"):
                out.append(text)
            else:
                out.append(f"- {text}")
        return out

    def write_run(self, path: str | Path, title: str, script: str, argv: Sequence[str] | None,
                  intro: str = "") -> Path:
        """:meth:`write` with the command that ran: ``python benchmarks/<script>`` and its arguments (``argv``,
        or the process's own when None)."""
        import shlex
        import sys

        args = sys.argv[1:] if argv is None else list(argv)
        return self.write(path, title, " ".join(["python", f"benchmarks/{script}", *map(shlex.quote, args)]),
                          intro=intro)

    def write(self, path: str | Path, title: str, command: str, intro: str = "") -> Path:
        from mauscheln_env.files import atomic_write_text

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, "\n".join([*header(title, command, intro=intro), *self.markdown()]).rstrip() + "\n")
        return path
