"""The cross-table of every ruleset: ``mauscheln eval --suite``.

For each ruleset at its default table (4 players, the ruleset's default
options, single deals from an empty pot) the suite plays, by duplicate deals,

* every pair of ``random``, ``beginner``, ``expert`` and each shipped learned
  policy that fits the table (``agents/learned/policies``; a policy for another game is
  left out) over ``--deals`` deals;
* ``pimc`` against each agent of ``--search-against`` (default: ``expert``) over
  ``--search-deals`` deals (the search costs some hundred times a scripted
  agent's time);

pools in earlier ``results.json`` files given with ``--reuse`` (their pairings
on the same table are not played again; chunks of one series are pooled deal
by deal), and writes ``docs/results/<ruleset>.md`` (cross-table with
Bradley–Terry Elo, per-format figures, deal counts, the command, the date, the
machine and the commit; a hand-written tail after the :data:`KEPT` line of the
old page, such as the shipped policy's training record, is kept),
``docs/results/<ruleset>.png`` (the chart) and the
played results under ``--out`` (default ``runs/suite``). ``--readme`` rewrites
the summary table between the ``<!-- results:start -->`` and
``<!-- results:end -->`` markers of that file, one row per ruleset.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agents.base import agent_from_spec
from agents.evaluation.charts import tournament_chart
from agents.evaluation.duplicate import Settings
from agents.evaluation.tournament import (
    CROSSTABLE_LEGEND,
    Tournament,
    _settings_line,
    bradley_terry,
    load_results,
    merge_results,
    run_tournament,
    write_outputs,
)
from agents.learned import available_policies
from mauscheln_env.config import RULESETS
from mauscheln_env.engine import Game
from mauscheln_env.errors import ConfigError, MauschelnError
from mauscheln_env.files import atomic_write_text

SCRIPTED = ("random", "beginner", "expert")
START, END = "<!-- results:start -->", "<!-- results:end -->"
KEPT = "<!-- written by hand: eval --suite keeps what follows -->"
"""A page's hand-written tail (e.g. the shipped policy's training and `pimc` series) starts at this line."""
HEADLINES = (("beginner", "random"), ("expert", "beginner"), ("pimc", "expert"))
"""The pairings the summary table shows, besides the Elo of every agent."""


def learned_for(settings: Settings) -> list[str]:
    """Specs of the shipped policies that fit this table (the others refuse the game at setup)."""
    game = Game(settings.config())
    out = []
    for name in available_policies():
        spec = f"learned:checkpoint={name}"
        try:
            agent_from_spec(spec).setup(game, 0)
        except (MauschelnError, ValueError):
            continue
        out.append(spec)
    return out


def _table_key(settings: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in settings.items() if k not in ("deals", "seed", "start", "backend")}


def machine() -> str:
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}"


def commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
                             cwd=Path(__file__).resolve().parent, timeout=10)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def run_ruleset(ruleset: str, *, deals: int, search_deals: int, search_against: Sequence[str], seed: int,
                workers: int, reuse: Sequence[Path], out: Path, docs: Path, command: str, note: str = "",
                progress: bool = False, learned: bool = True) -> Tournament:
    """Play (and pool) one ruleset's cross-table; write its page and chart. Returns the pooled tournament."""
    settings = Settings(ruleset=ruleset, players=4, deals=deals, seed=seed, backend="auto")
    config = settings.config()
    settings = replace(settings, players=config.num_players)
    table = _table_key(dict(vars(settings)) | {"rule_options": list(settings.rule_options)})
    reused: list[Path] = []
    done: set[tuple[str, str]] = set()
    for path in reuse:
        data = load_results(path)
        s = dict(data["settings"])
        s["rule_options"] = list(s.get("rule_options", []))
        if _table_key(s) != table:
            continue
        reused.append(path)
        done |= {(p.candidate, p.baseline) for p in data["pair_results"]}
    scripted = [*(learned_for(settings) if learned else []), *SCRIPTED[::-1]]  # the stronger agent of a pairing is its candidate
    cheap = [(scripted[i], scripted[j]) for i in range(len(scripted)) for j in range(i + 1, len(scripted))]
    cheap = [p for p in cheap if p not in done and p[::-1] not in done]
    search = [("pimc", b) for b in search_against if ("pimc", b) not in done and (b, "pimc") not in done]
    files: list[Path] = []
    for label, pairs, n in (("scripted", cheap, deals), ("search", search, search_deals)):
        if not pairs or n < 1:
            continue
        s = replace(settings, deals=n)
        t = run_tournament([], s, pairs=pairs, workers=workers, progress=progress, command=command)
        folder = out / ruleset / label
        write_outputs(t, folder)
        files.append(folder / "results.json")
    files += reused
    if not files:
        raise ConfigError(f"{ruleset}: nothing to show (no pairing played and no --reuse file for this table)")
    t = merge_results(files)
    played = {a for p in t.pairs for a in (p.candidate, p.baseline)}
    t.agents = [a for a in t.agents if a in played]  # an agent that played no pairing gets no rating
    t.ratings = bradley_terry(t.agents, t.pairs)
    write_page(t, ruleset, docs, command=command, reused=reused, note=note)
    return t


def _fmt(e) -> str:
    return e.text()


def write_page(t: Tournament, ruleset: str, docs: Path, *, command: str, reused: Sequence[Path],
               note: str = "") -> Path:
    docs.mkdir(parents=True, exist_ok=True)
    chart = docs / f"{ruleset}.png"
    have_chart = tournament_chart(t.ratings, t.pairs, _settings_line(t), chart) is not None
    s = t.settings
    options = dict(s.get("rule_options") or [])
    lines = [
        f"# `{ruleset}`: cross-table at the default table",
        "",
        f"{s.get('players')} players, the ruleset's default options{' ' + str(options) if options else ''}, "
        f"single deals (`--session-deals {s.get('session_deals', 1)}`) from a pot of {s.get('pot', 0)}; "
        "duplicate deals, both formats, 95 % intervals over deals. Chips per deal (Muschka: points).",
        "",
        f"* measured: {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit()}",
        f"* machine: {machine()}",
        f"* command: `{command}`",
    ]
    if reused:
        lines.append("* pooled with earlier results (played with the same table and seed series): "
                     + ", ".join(f"`{p}`" for p in reused))
    if note:
        lines.append(f"* {note}")
    lines += ["", "## Cross-table", "", t.crosstable_markdown(), "", CROSSTABLE_LEGEND, "",
              "## Per pairing", "",
              "| pairing | deals | both formats | alone | field | won / lost / tied |",
              "| --- | ---: | --- | --- | --- | --- |"]
    for p in t.pairs:
        lines.append(f"| {p.candidate} vs {p.baseline} | {p.deals} | {_fmt(p.advantage)} | "
                     f"{_fmt(p.advantage_by_format['alone'])} | {_fmt(p.advantage_by_format['field'])} | "
                     f"{p.wins} / {p.losses} / {p.ties} |")
    lines += ["", "*alone*: the candidate alone against a field of the baseline; *field*: the baseline alone "
              "against a field of candidates. Every figure is reported as measured, whatever its sign.", ""]
    if have_chart:
        lines += [f"![{ruleset} cross-table]({chart.name})", ""]
    else:
        lines += ["No chart: matplotlib is not installed (`pip install -e '.[plot]'`).", ""]
    page = docs / f"{ruleset}.md"
    kept = ""
    if page.exists():
        old = page.read_text(encoding="utf-8")
        if KEPT in old:
            kept = KEPT + old.split(KEPT, 1)[1]
    atomic_write_text(page, "\n".join(lines) + kept)
    return page


def summary_table(results: dict[str, Tournament], docs_rel: str = "docs/results") -> str:
    """One row per ruleset: the Elo of each agent and the acceptance pairings, with their deal counts."""
    head = "| ruleset | Elo: random / beginner / expert / pimc | beginner vs random | expert vs beginner | " \
           "pimc vs expert | page |"
    rows = [head, "| --- | --- | --- | --- | --- | --- |"]
    for ruleset, t in results.items():
        elo = " / ".join(f"{t.ratings[a]:+.0f}" if a in t.ratings and any(a in (p.candidate, p.baseline)
                                                                          for p in t.pairs) else "—"
                         for a in ("random", "beginner", "expert", "pimc"))
        cells = []
        for a, b in HEADLINES:
            p = next((p for p in t.pairs if (p.candidate, p.baseline) == (a, b)), None)
            q = next((p for p in t.pairs if (p.candidate, p.baseline) == (b, a)), None)
            if p is not None:
                cells.append(f"{_fmt(p.advantage)} ({p.deals})")
            elif q is not None:
                cells.append(f"{q.advantage.text(-1)} ({q.deals})")
            else:
                cells.append("not played")
        rows.append(f"| `{ruleset}` | {elo} | " + " | ".join(cells) + f" | [{ruleset}]({docs_rel}/{ruleset}.md) |")
    return "\n".join(rows)


def merge_rows(path: Path, table: str) -> str:
    """``table`` with the rows of the rulesets it lacks taken from an earlier summary at ``path`` (ruleset order)."""
    rows = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("| `"):
                rows[line.split("`")[1]] = line
    lines = table.splitlines()
    for line in lines[2:]:
        rows[line.split("`")[1]] = line
    return "\n".join([*lines[:2], *(rows[r] for r in RULESETS if r in rows)])


def update_readme(readme: Path, table: str) -> None:
    text = readme.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise ConfigError(f"{readme} has no {START} ... {END} block for the summary table")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    atomic_write_text(readme, f"{head}{START}\n{table}\n{END}{tail}")


def suite_main(args: Any, command: str) -> int:
    """``mauscheln eval --suite [RULESET ...]`` (see the module docstring)."""
    names = list(args.suite) or ["all"]
    rulesets = list(RULESETS) if names == ["all"] else names
    for r in rulesets:
        if r not in RULESETS:
            raise ConfigError(f"--suite {r!r} is not a ruleset; allowed: all or {', '.join(RULESETS)}")
    if args.workers < 1:
        raise ConfigError(f"--workers {args.workers} is not allowed; allowed: a whole number >= 1")
    if args.search_deals < 0:
        raise ConfigError(f"--search-deals {args.search_deals} is not allowed; allowed: a whole number >= 0")
    out = args.out if args.out is not None else Path("runs/suite")
    docs = Path(args.docs)
    results: dict[str, Tournament] = {}
    for r in rulesets:
        t = run_ruleset(r, deals=args.deals, search_deals=args.search_deals,
                        search_against=args.search_against, seed=args.seed, workers=args.workers,
                        reuse=args.reuse or [], out=out, docs=docs, command=command, note=args.note or "",
                        progress=not args.no_progress, learned=not args.no_learned)
        results[r] = t
        print(f"{r}: wrote {docs / (r + '.md')} and {docs / (r + '.png')}")
        print(t.crosstable_markdown())
        print()
    table = merge_rows(docs / "summary.md", summary_table(results))
    atomic_write_text(docs / "summary.md", table + "\n")
    print(table)
    if args.readme is not None:
        update_readme(Path(args.readme), table)
        print(f"updated the summary table in {args.readme}")
    return 0
