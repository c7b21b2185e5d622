"""Write the generated results pages of docs/results/ from the data kept in the repository; nothing is played.

    python benchmarks/results_pages.py                 # every page below, then the index
    python benchmarks/results_pages.py policies index  # some of them

Pages (each starts with the mark and the provenance block of :mod:`agents.evaluation.pages`):

* ``policies``: docs/results/policies.md, the shipped policies (agents/learned/policies) with their training
  command (docs/results/series/policies.yaml) and their results against ``expert`` and ``pimc`` pooled from the
  results files that file names;
* ``series``: docs/results/series.md, every results file kept under docs/results/series/ with what it is and
  how it was played (docs/results/series/series.yaml) and its figures, pooled per series; a series that another
  page pools (its ``data:`` line names the files) links to that page instead of repeating the figure;
* ``rulesets``: docs/results/<ruleset>.md and its chart for every ruleset, the ratings, cross-table and pairings
  of its default table's field from the benchmark records shipped in agents/bench/records/<suite>/;
* ``leaderboard``: docs/results/leaderboard.md, the ratings and cross-tables of the other tables from the same
  records (what ``mauscheln bench leaderboard`` prints), linking each default table to its ruleset page;
* ``performance``: docs/results/performance.md, the speed measurements kept as data
  (benchmarks/tensor_agents_speed.json);
* ``summary``: docs/results/summary.md, one row per ruleset page: the Elo of the field and the headline
  pairings, each a link to that page;
* ``index``: docs/results/index.md, the map of every results page with its command, date, commit and machine.

A figure lives in one page; the README and the other docs link to it (tests/test_figures.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from agents.evaluation.pages import header, read_page  # noqa: E402
from mauscheln_env.errors import ConfigError  # noqa: E402
from mauscheln_env.files import atomic_write_text  # noqa: E402
from mauscheln_env.ruleargs import report  # noqa: E402

PROG = "results_pages"
DOCS = ROOT / "docs" / "results"
SERIES = DOCS / "series"
POLICIES = ROOT / "agents" / "learned" / "policies"
SPEED = ROOT / "benchmarks" / "tensor_agents_speed.json"


def rel(path: Path) -> str:
    return path.resolve().relative_to(ROOT).as_posix()


def fmt(e: Any) -> str:
    return f"{e.mean:+.3f} ± {e.half_width:.3f}"


def load_yaml(path: Path) -> list[dict[str, Any]]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{rel(path)} cannot be read: {exc}") from exc
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise ConfigError(f"{rel(path)}: allowed: a list of mappings")
    return data


def files_of(pattern: str) -> list[Path]:
    found = sorted(SERIES.glob(pattern))
    if not found:
        raise ConfigError(f"docs/results/series/{pattern}: no such results file")
    return found


def pooled(files: list[Path]) -> Any:
    from agents.evaluation.tournament import merge_results

    return merge_results(files)


def seeds_and_deals(t: Any) -> str:
    s = t.settings
    if s.get("seed") is None:
        return "several spans"
    return f"seed {s['seed']}, deals {s['start']}-{s['start'] + s['deals'] - 1}"


# ---------------------------------------------------------------------- policies
def policies_page(command: str) -> tuple[Path, str]:
    from agents.learned import available_policies
    from agents.learned.checkpoint import read_policy

    entries = load_yaml(SERIES / "policies.yaml")
    named = [e.get("name") for e in entries]
    shipped = sorted(available_policies())
    if sorted(named) != shipped:
        raise ConfigError(f"docs/results/series/policies.yaml names {sorted(named)}; the shipped policies are "
                          f"{shipped}: one entry each")
    data: list[str] = []
    rows, details, training = [], [], []
    for e in entries:
        name = e["name"]
        path = POLICIES / f"{name}.safetensors"
        net, layout, _ = read_policy(path)
        rules = layout["rules"]
        table = f"{rules['ruleset']}, {rules['num_players']} players"
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        cells = []
        for key, opponent in (("expert", "expert"), ("pimc", "pimc")):
            files = sorted(SERIES.glob(e[key]))
            if not files:  # a policy shipped since: say how to measure it
                seed, deals = (10001, 5000) if key == "expert" else (0, 2000)
                cells += ["not measured", "—"]
                details.append(f"* `{name}` vs `{opponent}`: not measured yet; `mauscheln eval --ruleset "
                               f"{rules['ruleset']} --players {rules['num_players']} --pair learned:checkpoint={name} "
                               f"{opponent} --deals {deals} --seed {seed} --out DIR`, then keep DIR/results.json as "
                               f"docs/results/series/{e[key]} (gzip -9n)")
                continue
            data += [rel(f) for f in files]
            t = pooled(files)
            (p,) = t.pairs
            if p.baseline != opponent:
                raise ConfigError(f"{e[key]}: holds {p.candidate} vs {p.baseline}; allowed: the policy vs {opponent}")
            bold = "**" if p.advantage.low > 0 else ""
            cells.append(f"{bold}{fmt(p.advantage)}{bold} ({p.deals} deals)")
            cells.append(f"{fmt(p.advantage_by_format['alone'])} / {fmt(p.advantage_by_format['field'])}")
            details.append(f"* `{name}` vs `{opponent}`: {seeds_and_deals(t)}, {p.backend} backend, "
                           f"won/lost/tied {p.wins}/{p.losses}/{p.ties}; played by `{t.command}`")
        rows.append(f"| `{name}` | {table} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |")
        reproduce = e.get("reproduce")
        training.append(f"| `{name}` | `{e['command']}` | {e['trained']} | "
                        + (f"`{reproduce}`" if reproduce else "the command") + " |")
        details.append(f"* `{name}`: `{rel(path)}` (sha256 `{digest}…`, hidden layers {list(net.spec.hidden)})")
    lines = header("Shipped policies", command, data=data, intro=(
        "One trained policy per table below (named by its ruleset and number of players); `learned` plays the policy "
        "shipped for its table, `learned:checkpoint=NAME` names one. Each was trained by one command (below; the preset as it was at the time; how each run went "
        "is in the [lab notebook](../development/lab-notebook.md)). The figures are the policy's mean advantage in "
        "chips per deal (Muschka: points) over duplicate deals, both formats, ± the 95 % half-width over deals, "
        "bold where the interval lies above zero; against `expert` on the deals of the trainer's final evaluation "
        "(seed 10001), against `pimc` on deals of seed 0. *alone*: the policy at one seat against the other agent; "
        "*field*: the other agent at one seat against the policy."))
    lines += ["| policy | table | vs `expert` | alone / field | vs `pimc` | alone / field |",
              "| --- | --- | ---: | --- | ---: | --- |", *rows, "",
              "## Training", "", "| policy | command | trained | the same updates again |", "| --- | --- | --- | --- |",
              *training, "", "## Files and commands", "", *details, ""]
    return DOCS / "policies.md", "\n".join(lines)


# ---------------------------------------------------------------------- series
def owners(skip: set[str]) -> dict[str, str]:
    """``{results file: page}`` from the ``data:`` lines of the generated pages (other than ``skip``)."""
    out: dict[str, str] = {}
    for path in sorted(DOCS.glob("*.md")):
        if path.name in skip:
            continue
        page = read_page(path)
        for item in page.data:
            out[item] = path.name
    return out


def series_page(command: str) -> tuple[Path, str]:
    entries = load_yaml(SERIES / "series.yaml")
    owner = owners({"series.md", "index.md"})
    claimed: dict[Path, str] = {}
    groups: dict[str, list[str]] = {}
    chunks: list[str] = []
    data = ["docs/results/series/series.yaml"]
    for e in entries:
        files = files_of(e["files"])
        for f in files:
            if f in claimed:
                raise ConfigError(f"{rel(f)} matches both {claimed[f]} and {e['files']} in series.yaml")
            claimed[f] = e["files"]
        data.append(f"docs/results/series/{e['files']}")
        rows = groups.setdefault(e["group"], [])
        for unit in ([[f] for f in files] if e.get("each") else [files]):  # each: every file a series of its own
            t = pooled(unit)
            pages = {owner.get(rel(f)) for f in unit}
            label = f"`{unit[0].relative_to(SERIES).as_posix()}`" if len(unit) == 1 else \
                f"`{e['files']}` ({len(unit)} files)"
            for p in t.pairs:
                if len(pages) == 1 and None not in pages:
                    (page,) = pages
                    figure = f"pooled on [{page[:-3]}]({page})"
                else:
                    figure = f"{fmt(p.advantage)} (alone {fmt(p.advantage_by_format['alone'])}, field " \
                             f"{fmt(p.advantage_by_format['field'])}; won/lost/tied {p.wins}/{p.losses}/{p.ties})"
                s = t.settings
                what = e["what"] if not e.get("each") else f"`{p.candidate}` vs `{p.baseline}`"
                rows.append(f"| {label} | {what} | {s.get('ruleset')}, {s.get('players')} players | "
                            f"{seeds_and_deals(t)} | {p.deals} | {figure} | {' '.join(str(e['played']).split())} |")
            if len(unit) > 1:
                for f in unit:
                    ft = pooled([f])
                    for p in ft.pairs:
                        chunks.append(f"| `{f.relative_to(SERIES).as_posix()}` | {e['what']} | {seeds_and_deals(ft)} | "
                                      f"{fmt(p.advantage)} | {fmt(p.advantage_by_format['alone'])} | "
                                      f"{fmt(p.advantage_by_format['field'])} |")
    stray = sorted(set(SERIES.rglob("*.json.gz")) - set(claimed))
    if stray:
        raise ConfigError(f"{', '.join(rel(f) for f in stray)}: in no entry of docs/results/series/series.yaml")
    out = header("Evaluation series kept in the repository", command, data=data, intro=(
        "Pairings that cost hours on a 2-core machine (`pimc` searches every decision) are played in chunks, each "
        "kept as the `results.json` that `mauscheln eval` wrote, gzip-compressed, under "
        "[series/](series/): the command, the settings and every deal's figures, so that the chunks of a "
        "series pool deal by deal. Each row pools one series (advantage of the first agent in chips per deal, "
        "± the 95 % half-width over deals, both duplicate formats); a series that another page pools links to it. "
        "Pool one yourself with `mauscheln eval --merge docs/results/series/<ruleset>/<files>.json.gz`."))
    for group, rows in groups.items():
        out += [f"## {group}", "",
                "| files | pairing | table | seed and deals | deals | both formats | played |",
                "| --- | --- | --- | --- | ---: | --- | --- |", *rows, ""]
    out += ["## Chunk by chunk", "", "Each file of a series kept in several files, alone (both formats, alone, field):",
            "", "| file | pairing | seed and deals | both formats | alone | field |",
            "| --- | --- | --- | --- | --- | --- |",
            *chunks, ""]
    return DOCS / "series.md", "\n".join(out)


# ---------------------------------------------------------------------- leaderboard
SUITE = "v1"
"""The suite whose shipped records make the leaderboard and the ruleset pages."""


def record_lines(records: dict[Path, dict[str, Any]], table: str) -> list[str]:
    """One line per shipped record of ``table``: its file, agent, date, commit and machine."""
    lines = []
    for path, record in records.items():
        if record["suite"]["table"] != table:
            continue
        m = record.get("machine", {})
        lines.append(f"* `{rel(path)}`: `{record['agent']['spec']}`, played {record.get('date', '?')[:16]} "
                     f"at commit {str(record.get('project', {}).get('commit', '?'))[:7]} on {m.get('cpu', '?')} "
                     f"({m.get('cpus', '?')} CPUs{', ' + m['build'] + ' build' if m.get('build') else ''})")
    return lines


def shipped_boards(suite: str = SUITE) -> tuple[dict[Path, dict[str, Any]], list[Any]]:
    """The shipped records of ``suite`` by file, and the boards a fresh install shows from them."""
    from agents.bench.leaderboard import leaderboard, read_record, shipped_paths

    paths = shipped_paths(suite)
    if not paths:
        raise ConfigError(f"no shipped records of suite {suite}")
    return {path: read_record(path) for path in paths}, leaderboard(suite=suite, yours=False)


def default_tables() -> dict[str, str]:
    """The default table of every ruleset (its default player count), by table name of the suite."""
    from agents.bench.decks import table_name
    from mauscheln_env.config import RULESETS, make_config

    return {table_name(r, make_config(r).num_players): r for r in RULESETS}


def field_line(board: Any, suite: str = SUITE) -> str:
    """Whether ``board`` holds its table's whole reference field, as this checkout plays it (the current policies)."""
    from agents.bench.decks import load_deal_set
    from agents.bench.leaderboard import field_markdown, field_status
    from agents.bench.run import FIELD_DEALS, reference_keys

    deal_set = load_deal_set(suite, board.table)
    return field_markdown(field_status(board, reference_keys(deal_set), min(FIELD_DEALS, len(deal_set))))


def leaderboard_page(command: str, suite: str = SUITE) -> tuple[Path, str]:
    from agents.bench.leaderboard import board_markdown

    records, boards = shipped_boards(suite)
    home = default_tables()
    lines = header(f"Benchmark leaderboard, suite {suite}", command, data=[f"agents/bench/records/{suite}/*/*.json.gz"],
                   intro=(
        "Every table of the suite: the Bradley–Terry rating (Elo scale, centred) of each agent from the per-deal "
        "wins over the table's fixed deals, with its 95 % interval, then the cross-table of mean advantages (row "
        "agent over column agent, chips per deal, ± the 95 % half-width). Made from the result records shipped in "
        f"`agents/bench/records/{suite}/` (package data) as `mauscheln bench leaderboard` shows them; the "
        "records of each table are listed under it with the commit, date and machine that played them. A "
        "ruleset's default table has its own page, written from the same records by the same command. The "
        "protocol: [the benchmark](../evaluation/benchmark.md)."))
    for board in boards:
        ruleset = home.get(board.table)
        if ruleset is not None:
            name, _, players = board.table.rpartition("_")
            lines += [f"**{name}, {players[:-1]} players**: the default table of `{ruleset}`, with "
                      f"{len(board.entries)} agents from {board.records} result record(s): its ratings, "
                      f"cross-table, pairings and records are on [its page]({ruleset}.md).", ""]
            continue
        lines += [board_markdown(board, crosstable=True), "", field_line(board, suite), "", "Records:", "",
                  *record_lines(records, board.table), ""]
    return DOCS / "leaderboard.md", "\n".join(lines)


def ruleset_pages(command: str, suite: str = SUITE) -> list[tuple[Path, str]]:
    """``docs/results/<ruleset>.md`` (and its chart) for every ruleset whose default table has shipped records:
    the ratings, the cross-table and every pairing of the table's field, from the records alone."""
    from agents.bench.leaderboard import board_markdown
    from agents.evaluation.charts import tournament_chart
    from agents.evaluation.crosstables import pairing_table
    from agents.evaluation.tournament import CROSSTABLE_LEGEND, crosstable_markdown

    records, boards = shipped_boards(suite)
    home = default_tables()
    out = []
    for board in boards:
        ruleset = home.get(board.table)
        if ruleset is None:
            continue
        players = board.table.rpartition("_")[2]
        deals = sorted({p.deals for p in board.pairs})
        chart = DOCS / f"{ruleset}.png"
        drawn = tournament_chart(board.ratings, board.pairs, f"{ruleset}, {players[:-1]} players, "
                                 f"{'/'.join(map(str, deals))} duplicate deals per pairing (suite {suite})", chart)
        lines = header(f"`{ruleset}`: the benchmark field at the default table", command,
                       data=[f"agents/bench/records/{suite}/{board.table}/*.json.gz"], intro=(
            f"The table `{board.table}` of the benchmark's suite {suite}: {players[:-1]} players, the ruleset's "
            "default options, single deals from an empty pot, the suite's fixed deals in both duplicate formats "
            "with every rotation of the seats; chips per deal (Muschka: points), 95 % intervals over deals. "
            f"Made from the result records shipped in `agents/bench/records/{suite}/{board.table}/` (listed at "
            "the end with the commit, date and machine that played each), as `mauscheln bench leaderboard "
            f"--ruleset {ruleset}` shows them on a fresh install. The field and the protocol: "
            "[the benchmark](../evaluation/benchmark.md)."))
        lines += ["## Ratings", "", board_markdown(board, crosstable=False), "", field_line(board, suite), "",
                  "## Cross-table", "", crosstable_markdown(board.agents, board.pairs, board.ratings), "",
                  CROSSTABLE_LEGEND, "", "## Per pairing", "", *pairing_table(board.pairs), ""]
        lines += [f"![{ruleset} cross-table]({chart.name})", ""] if drawn else [
            "No chart: matplotlib is not installed (`pip install -e '.[plot]'`).", ""]
        lines += ["## Records", "", *record_lines(records, board.table), ""]
        out.append((DOCS / f"{ruleset}.md", "\n".join(lines)))
    return out


ROLES = ("random", "beginner", "expert", "pimc", "policy", "search")
"""The agents of a default table's field the summary names, by their part in it (:func:`role_of`)."""
HEADLINES = (("expert", "beginner"), ("pimc", "expert"), ("policy", "expert"), ("policy", "pimc"),
             ("search", "pimc"), ("search", "policy"))
"""The pairings the summary shows (first over second)."""


def role_of(agent: str) -> str | None:
    """An agent's part in the reference field, from its key on the board (``learned:checkpoint=x#hash``:
    the shipped policy; ``pimc:model=<policy>,phases=play``: the search agent)."""
    if agent in ("random", "beginner", "expert", "pimc", "pimc:model=expert"):
        return "pimc" if agent.startswith("pimc") else agent
    if agent.startswith("learned:checkpoint="):
        return "policy"
    if agent.startswith("pimc:model=") and "phases=play" in agent:
        return "search"
    return None


def summary_page(command: str, suite: str = SUITE) -> tuple[Path, str]:
    """One row per ruleset page: the Elo of each part of the field and the headline pairings, each figure a link
    to the ruleset page that owns it."""
    _, boards = shipped_boards(suite)
    home = default_tables()
    lines = header("The reference field of every ruleset: summary", command, intro=(
        "One row per ruleset: the Bradley–Terry Elo of each agent of its default table's field in the benchmark "
        "(random / beginner / expert / pimc / the shipped policy / the search agent on it), and the headline "
        "pairings (advantage of the first agent over the second in chips per deal, Muschka points, ± the 95 % "
        "half-width, with the deals played). Every figure links to the ruleset's page, which owns it and names "
        "the records that measured it; — where the field lacks the agent or the pairing."))
    head = " | ".join(f"{a} vs {b}" for a, b in HEADLINES)
    lines += [f"| ruleset | Elo: {' / '.join(ROLES)} | {head} |",
              "| --- | --- | " + " | ".join("---" for _ in HEADLINES) + " |"]
    for board in boards:
        ruleset = home.get(board.table)
        if ruleset is None:
            continue
        page = f"{ruleset}.md"
        by_role = {role_of(e.agent): e for e in board.entries if role_of(e.agent)}
        elo = " / ".join(f"[{by_role[r].elo:+.0f}]({page})" if r in by_role else "—" for r in ROLES)
        cells = []
        for a, b in HEADLINES:
            cell = "—"
            if a in by_role and b in by_role:
                x, y = by_role[a].agent, by_role[b].agent
                for p in board.pairs:
                    if (p.candidate, p.baseline) in ((x, y), (y, x)):
                        text = p.advantage.text(1 if p.candidate == x else -1)
                        cell = f"[{text}]({page}) ({p.deals} deals)"
            cells.append(cell)
        lines.append(f"| [`{ruleset}`]({page}) | {elo} | " + " | ".join(cells) + " |")
    lines += ["", "*policy*: the table's shipped policy, `learned:checkpoint=<policy>`; *search*: the search agent on "
              "it, `pimc:model=<policy>,phases=play`.", ""]
    return DOCS / "summary.md", "\n".join(lines)


# ---------------------------------------------------------------------- performance
def performance_page(command: str) -> tuple[Path, str]:
    data = json.loads(SPEED.read_text(encoding="utf-8"))
    lines = header("Performance", command, data=[rel(SPEED)], intro=(
        "Speed measurements kept as data in the repository. Throughput of the engines and the trainer was "
        "measured many times but kept only as prose: those runs are dated entries of the "
        "[lab notebook](../development/lab-notebook.md), with their commands, until a run writes its figures as "
        "data here."))
    lines += ["## Tensor agents against the Python agents", "",
              f"`python benchmarks/tensor_agents_speed.py` ({data['title']}): decisions per second of the Python "
              "agent (one `act` per decision) and of its tensor form (`act` over batches, one torch thread) on the "
              "same decisions of the same run. The file records neither the commit nor the machine's load; the lab "
              "notebook's entry of that day has the command and the load of the run. The file also holds "
              "two-thread figures; they are not shown, since that run's host was overloaded.", "",
              "| ruleset | players | agent | tensor class | Python decisions/s | tensor decisions/s | "
              "tensor / Python |",
              "| --- | ---: | --- | --- | ---: | ---: | ---: |"]
    for r in data["rows"]:
        lines.append(f"| {r['ruleset']} | {r['players']} | {r['level']} | `{r['tensor_class']}` | "
                     f"{r['python']:,.0f} | {r['tensor_1']:,.0f} | {r['tensor_1'] / r['python']:.1f}x |")
    lines += ["", "![tensor agents speed](../../benchmarks/tensor_agents_speed.png)", ""]
    return DOCS / "performance.md", "\n".join(lines)


# ---------------------------------------------------------------------- summary and index
WHAT = {
    "summary.md": "one row per ruleset: the Elo of its field and headline pairings, linking to the ruleset pages",
    "policies.md": "the shipped policies: training command, results against `expert` and `pimc`",
    "series.md": "the long evaluation series kept in the repository, pooled",
    "leaderboard.md": "the benchmark leaderboard from the shipped records",
    "exploitability.md": "approximate exploitability: best responses trained against frozen agents",
    "performance.md": "speed measurements kept as data",
    "bench-cost.md": "what `bench run` against a table's full field costs (`benchmarks/bench_cost.py`)",
    "ddp-speed.md": "data-parallel training: `--nproc 2` against `--nproc 1`, every ruleset",
    "train-profile.md": "where a training update's time goes, for 1 and 2 ranks",
    "rllib-runner.md": "RLlib's batched env runner against the stock one",
    "compiled-speed.md": "the searching agents with the compiled build against pure Python, the same games",
}


def index_page(command: str) -> tuple[Path, str]:
    lines = header("Results", command, intro=(
        "Every measured figure of the project lives in exactly one of these pages, beside the command that "
        "made it, the date, the commit and the machine. Each page is written by its command and never edited "
        "by hand; the README and the other pages link here instead of repeating figures (`tests/test_figures.py` "
        "checks it). Past measurements whose data was not kept are dated entries of the "
        "[lab notebook](../development/lab-notebook.md): history, not current claims."))
    lines += ["| page | what | written by | date | commit | machine |", "| --- | --- | --- | --- | --- | --- |"]
    from mauscheln_env.config import RULESETS

    order = [*(f"{r}.md" for r in RULESETS), "summary.md", "policies.md", "leaderboard.md", "series.md",
             "exploitability.md", "performance.md", "bench-cost.md", "ddp-speed.md", "train-profile.md",
             "rllib-runner.md", "compiled-speed.md"]
    pages = sorted((p for p in DOCS.glob("*.md") if p.name != "index.md"),
                   key=lambda p: (order.index(p.name) if p.name in order else len(order), p.name))
    conf = ROOT / "docs" / "conf.py"
    excluded = conf.read_text(encoding="utf-8") if conf.is_file() else ""
    in_site = [p for p in pages if f'"results/{p.name}"' not in excluded]  # the site leaves excluded pages out
    for path in pages:
        page = read_page(path)
        if not page.is_generated:
            raise ConfigError(f"{rel(path)} is not a generated page (no mark on its first line)")
        f = page.fields
        ruleset = path.stem if path.stem in RULESETS else None
        what = (f"the benchmark field of `{ruleset}` at its default table, from the shipped records" if ruleset
                else WHAT.get(path.name, page.title))
        cmd = f.get("command", "?")
        short = cmd if len(cmd) <= 60 else cmd[:57] + "…"
        name = f"[{page.title}]({path.name})" if path in in_site else f"{page.title} (`{path.name}`)"
        lines.append(f"| {name} | {what} | `{short}` | {f.get('date', '?')} | "
                     f"{f.get('commit', '?')} | {f.get('machine', '?')} |")
    tree = [p.stem for p in in_site]
    lines += ["", "Data behind the pages: [series/](series/) (evaluation series, `.json.gz`, and what each is), "
              "`agents/bench/records/` (benchmark records), `benchmarks/tensor_agents_speed.json`.", "",
              "```{toctree}", ":hidden:", "", *tree, "```", ""]
    return DOCS / "index.md", "\n".join(lines)


PAGES = {"policies": policies_page, "rulesets": ruleset_pages, "leaderboard": leaderboard_page,
         "performance": performance_page, "summary": summary_page, "series": series_page, "index": index_page}
"""In the order they are written: series reads the others' data lines, index reads every page."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", metavar="PAGE", help=f"pages to write (default: all): {', '.join(PAGES)}")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    command = "python benchmarks/results_pages.py" + (" " + shlex.join(argv) if argv else "")
    wanted = args.pages or list(PAGES)
    try:
        for name in wanted:
            if name not in PAGES:
                raise ConfigError(f"page {name!r} is not known; allowed: {', '.join(PAGES)}")
        for name in PAGES:
            if name in wanted:
                written = PAGES[name](command)
                for path, text in [written] if isinstance(written, tuple) else written:
                    if text is not None:
                        atomic_write_text(path, text)
                    print(f"wrote {rel(path)}")
    except ConfigError as exc:
        return report(PROG, exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
