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
by deal), and writes ``<docs>/<ruleset>.md`` (a generated page,
:mod:`agents.evaluation.pages`: cross-table with Bradley–Terry Elo, per-format
figures, deal counts, the command, the date, the commit and the machine; a
hand-written tail after the :data:`KEPT` line of the old page is kept),
``<docs>/<ruleset>.png`` (the chart) and the played results under ``--out``
(default ``runs/suite``; ``--docs`` defaults to it). ``<docs>/summary.md`` is
rebuilt from every ruleset page in the folder (:func:`summary_from_pages`): one
row per ruleset, each figure a link to the page that owns it. ``--readme`` puts
the same table between the ``<!-- results:start -->`` and
``<!-- results:end -->`` markers of that file.

The project's own ruleset pages (``docs/results/<ruleset>.md``) are not made
here: ``benchmarks/results_pages.py`` writes them from the benchmark's shipped
records, the one place the field of every table is measured.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agents.base import agent_from_spec
from agents.evaluation.charts import tournament_chart
from agents.evaluation.duplicate import MAX_DEALS, MAX_WORKERS, Settings
from agents.evaluation.pages import HAND_WRITTEN, header, read_page
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
from mauscheln_env.errors import ConfigError, MauschelnError, shown
from mauscheln_env.files import atomic_write_text, check_output_path

SCRIPTED = ("random", "beginner", "expert")
START, END = "<!-- results:start -->", "<!-- results:end -->"
KEPT = HAND_WRITTEN
"""A page's hand-written tail starts at this line (eval --suite keeps it; it owns no figure)."""
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


def pairing_table(pairs: Sequence[Any]) -> list[str]:
    """Every pairing (:class:`PairResult` rows) as Markdown lines: deals, both formats and each alone, won / lost /
    tied deals, and the legend of the formats."""
    lines = ["| pairing | deals | both formats | alone | field | won / lost / tied |",
             "| --- | ---: | --- | --- | --- | --- |"]
    for p in pairs:
        lines.append(f"| {p.candidate} vs {p.baseline} | {p.deals} | {_fmt(p.advantage)} | "
                     f"{_fmt(p.advantage_by_format['alone'])} | {_fmt(p.advantage_by_format['field'])} | "
                     f"{p.wins} / {p.losses} / {p.ties} |")
    return [*lines, "", "*alone*: the candidate alone against a field of the baseline; *field*: the baseline "
            "alone against a field of candidates. Every figure is reported as measured, whatever its sign."]


def write_page(t: Tournament, ruleset: str, docs: Path, *, command: str, reused: Sequence[Path],
               note: str = "") -> Path:
    docs.mkdir(parents=True, exist_ok=True)
    chart = docs / f"{ruleset}.png"
    have_chart = tournament_chart(t.ratings, t.pairs, _settings_line(t), chart) is not None
    s = t.settings
    options = dict(s.get("rule_options") or [])
    intro = (f"{s.get('players')} players, the ruleset's default options{' ' + str(options) if options else ''}, "
             f"single deals (`--session-deals {s.get('session_deals', 1)}`) from a pot of {s.get('pot', 0)}; "
             "duplicate deals, both formats, 95 % intervals over deals. Chips per deal (Muschka: points).")
    notes = ["pooled: the pairings of the data files were pooled from them (played earlier with the same table and "
             "seed series); the command played the others"] if reused else []
    lines = header(f"`{ruleset}`: cross-table at the default table", command, intro=intro,
                   data=[str(p) for p in reused], notes=[*notes, *([note] if note else [])])
    lines += ["## Cross-table", "", t.crosstable_markdown(), "", CROSSTABLE_LEGEND, "",
              "## Per pairing", "", *pairing_table(t.pairs), ""]
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


SUMMARY_AGENTS = ("random", "beginner", "expert", "pimc")
"""The agents whose Elo the summary shows."""


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def figures_of_page(text: str) -> tuple[dict[str, str], dict[tuple[str, str], tuple[str, str]]]:
    """The Elo of each agent and ``{(candidate, baseline): (both formats, deals)}`` as a ruleset page shows them
    (the tables :func:`write_page` writes)."""
    elo: dict[str, str] = {}
    pairs: dict[tuple[str, str], tuple[str, str]] = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("| ") and not line.startswith(("| ---", "| agent |", "| pairing |")):
            cells = _cells(line)
            if section == "Cross-table" and len(cells) >= 2:
                elo[cells[0]] = cells[1]
            elif section == "Per pairing" and len(cells) >= 3 and " vs " in cells[0]:
                a, b = cells[0].split(" vs ", 1)
                pairs[(a, b)] = (cells[2], cells[1])
    return elo, pairs


def _negated(figure: str) -> str:
    sign = {"+": "-", "-": "+", "−": "+"}
    return sign[figure[0]] + figure[1:] if figure and figure[0] in sign else figure


def summary_from_pages(docs: Path, link_prefix: str = "") -> str:
    """One row per ruleset page in ``docs``: the Elo of each agent and the headline pairings with their deal
    counts, each figure a link to ``<link_prefix><ruleset>.md``, the page that owns it."""
    head = ("| ruleset | Elo: random / beginner / expert / pimc | beginner vs random | expert vs beginner | "
            "pimc vs expert |")
    rows = [head, "| --- | --- | --- | --- | --- |"]
    for ruleset in RULESETS:
        path = docs / f"{ruleset}.md"
        if not path.is_file():
            continue
        page = read_page(path)
        elo, pairs = figures_of_page(page.generated or page.tail)
        link = f"{link_prefix}{ruleset}.md"
        cells = [" / ".join(f"[{elo[a]}]({link})" if a in elo else "—" for a in SUMMARY_AGENTS)]
        for a, b in HEADLINES:
            if (a, b) in pairs:
                figure, deals = pairs[(a, b)]
            elif (b, a) in pairs:
                figure, deals = pairs[(b, a)]
                figure = " ± ".join([_negated(figure.split(" ± ")[0]), *figure.split(" ± ")[1:]])
            else:
                cells.append("not played")
                continue
            cells.append(f"[{figure}]({link}) ({deals} deals)")
        rows.append(f"| [`{ruleset}`]({link}) | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def write_summary(docs: Path, command: str) -> str:
    """``docs/summary.md`` from the ruleset pages in ``docs``; returns the table."""
    table = summary_from_pages(docs)
    lines = header("Cross-tables of every ruleset: summary", command, intro=(
        "One row per ruleset page of this folder: the Bradley–Terry Elo of the scripted agents and `pimc`, and the "
        "headline pairings (advantage of the first agent over the second in chips per deal, Muschka points, "
        "± the 95 % half-width, with the deals played). Every figure is a link to the ruleset's page, which owns "
        "it and names the command, date, commit and machine that measured it; this page is rebuilt from those "
        "pages by every `mauscheln eval --suite`."))
    atomic_write_text(docs / "summary.md", "\n".join([*lines, table, ""]))
    return table


def readme_text(readme: Path) -> str:
    """The text of ``readme``, refused unless it is a readable file with a summary block."""
    try:
        text = readme.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--readme {readme} cannot be read ({exc}); allowed: a UTF-8 text file with a {START} ... "
                          f"{END} block") from None
    if START not in text or END not in text:
        raise ConfigError(f"{readme} has no {START} ... {END} block for the summary table")
    return text


def update_readme(readme: Path, table: str) -> None:
    text = readme_text(readme)
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
    for flag, values in (("--suite", rulesets), ("--search-against", list(args.search_against))):
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            raise ConfigError(f"{flag} names {', '.join(twice)} more than once; allowed: each once")
    if "pimc" in args.search_against:
        raise ConfigError("--search-against pimc pairs pimc with itself; allowed: the agents pimc meets, e.g. expert")
    for flag, value, low, high in (("--workers", args.workers, 1, MAX_WORKERS), ("--deals", args.deals, 1, MAX_DEALS),
                                   ("--search-deals", args.search_deals, 0, MAX_DEALS)):
        if not low <= value <= high:
            raise ConfigError(f"{flag} {shown(value)} is not allowed; allowed: a whole number {low}..{high}")
    out = check_output_path(args.out if args.out is not None else Path("runs/suite"), "--out", folder=True)
    docs = check_output_path(args.docs if args.docs is not None else out, "--docs", folder=True)
    if args.readme is not None:
        readme_text(Path(args.readme))  # a missing file or block fails now, not after the suite has played
    for r in rulesets:
        t = run_ruleset(r, deals=args.deals, search_deals=args.search_deals,
                        search_against=args.search_against, seed=args.seed, workers=args.workers,
                        reuse=args.reuse or [], out=out, docs=docs, command=command, note=args.note or "",
                        progress=not args.no_progress, learned=not args.no_learned)
        print(f"{r}: wrote {docs / (r + '.md')} and {docs / (r + '.png')}")
        print(t.crosstable_markdown())
        print()
    table = write_summary(docs, command)
    print(table)
    if args.readme is not None:
        readme = Path(args.readme)
        rel = Path(os.path.relpath(docs.resolve(), readme.resolve().parent)).as_posix()
        update_readme(readme, re.sub(r"\]\(([a-z_]+\.md)\)", lambda m: f"]({rel}/{m.group(1)})", table))
        print(f"updated the summary table in {args.readme}")
    return 0
