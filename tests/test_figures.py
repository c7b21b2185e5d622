"""One home per figure: a measured figure lives in one generated page of docs/results/, and nowhere else.

A generated page starts with :data:`agents.evaluation.pages.MARK` and states its command, date, commit and
machine; the figures in its body (below the provenance block, above a hand-written tail) are the figures it
owns. Everywhere else — README.md and every other page under docs/, hand-written tails included — a figure
may appear only as the text of a link to a generated page that holds exactly that figure. So a figure pasted
into the README fails (it is not a link), a stale one fails (the page it links to says otherwise), and a
link to a page that is not generated fails. The lab notebook is history: it may hold the figures of past runs
whose data was not kept, but not repeat, outside a link, a figure a generated page owns (a line that ends in
:data:`COINCIDENCE` states that its equal figure comes from another run).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from agents.evaluation.pages import FIELDS, MARK, read_page

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "docs/development/lab-notebook.md"

SIGN = r"[+\-−]"
NUM = rf"{SIGN}?\d[\d,]*(?:\.\d+)?"
PLUS_MINUS = re.compile(rf"{NUM}\s*±\s*\d[\d,]*(?:\.\d+)?")
INTERVAL = re.compile(rf"{SIGN}?\d+\.\d+ \[{SIGN}?\d+\.\d+, {SIGN}?\d+\.\d+\]")
RATE = re.compile(rf"{NUM}(?:\s*[kM])?\s*(?:decisions|games|env steps|deals|steps)\s*(?:/\s*s\b|per second)")
COST = re.compile(rf"{NUM}\s*(?:CPU\s*)?(?:s|ms|µs)\s*(?:/|per\s+)(?:deal|decision|step)\b")
RATIO = re.compile(r"\b\d+(?:\.\d+)?x (?:the |PettingZoo|faster|slower|of |as fast)")
SIGNED_DECIMAL = re.compile(rf"(?<![\w.\-/=])({SIGN}\d+\.\d{{2,}})(?![\d.])")
ELO = re.compile(rf"Elo[^\n|]{{0,40}}?(?<![\w.])({SIGN}\d{{1,4}})(?![\d.])")
FIGURE_PATTERNS = (PLUS_MINUS, INTERVAL, RATE, COST, RATIO, SIGNED_DECIMAL, ELO)
"""What reads as a measured figure in prose: a mean ± half-width, an interval, a rate, a cost per deal or
decision, a speed-up, a signed advantage with decimals, an Elo rating."""
NUMBER = re.compile(rf"(?<![\w.])({SIGN}?\d[\d,]*(?:\.\d+)?)(?![\d])")
LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)")
COINCIDENCE = "<!-- another measurement, the same figure as a results page -->"
"""A notebook line that says so may hold a figure equal to one a page owns: another run that came out the same."""


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("−", "-")).strip()


def figures_in(text: str) -> list[tuple[int, str]]:
    """Every figure-like piece of ``text`` as (offset, the piece normalised)."""
    found, taken = [], []
    for pattern in FIGURE_PATTERNS:  # the most specific first; a piece inside one found already is not counted
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            taken.append(m.span())
            found.append((m.start(), norm(m.group(m.lastindex or 0))))
    return sorted(found)


@dataclass
class Owner:
    path: Path
    plus_minus: set[str]
    numbers: set[str]
    rates: set[str]


def body_of(page) -> str:
    """The generated part without its mark and its provenance block (the ``* command:`` line and the ``* ``
    lines that follow it): what the page measured, not how."""
    lines = page.generated.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("* command: ")), None)
    if start is not None:
        end = start
        while end < len(lines) and lines[end].startswith("* "):
            end += 1
        lines = lines[:start] + lines[end:]
    return "\n".join(line for line in lines if line != MARK)


def unlinked(text: str) -> str:
    """``text`` with every Markdown link blanked out (a page does not own a figure it links to)."""
    return LINK.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def owners(root: Path) -> dict[Path, Owner]:
    out = {}
    for path in sorted((root / "docs" / "results").glob("*.md")):
        page = read_page(path)
        if not page.is_generated:
            continue
        body = norm(unlinked(body_of(page)))
        pm = {norm(x) for x in PLUS_MINUS.findall(body)} | {norm(x) for x in INTERVAL.findall(body)}
        out[path.resolve()] = Owner(path, pm, {norm(x) for x in NUMBER.findall(body)},
                                    {norm(m.group(0)) for m in RATE.finditer(body)})
    return out


def scanned(root: Path) -> list[tuple[Path, str, int, bool]]:
    """(page, the text checked, its first line's number, whether it is a generated body): README.md, every docs
    page, of a generated page its hand-written tail; and the generated bodies, whose links are checked too."""
    out = []
    for path in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        page = read_page(path)
        out.append((path, page.tail, page.generated.count("\n"), False))
        if page.is_generated:
            out.append((path, body_of(page), 0, True))
    return out


def check(root: Path) -> list[str]:
    """Every breach of the one-home rule under ``root`` (README.md and docs/), as ``page:line: what`` lines."""
    owned = owners(root)
    problems = []
    for owner in owned.values():
        page = read_page(owner.path)
        missing = [f for f in FIELDS if f not in page.fields]
        if missing:
            problems.append(f"{owner.path.relative_to(root)}: a generated page without its {', '.join(missing)} "
                            "line")
    all_owned = set().union(set(), *(o.plus_minus | o.rates for o in owned.values()))
    for path, text, first, generated in scanned(root):
        name = path.relative_to(root).as_posix()
        masked = list(text)

        def at(pos: int, name: str = name, text: str = text, first: int = first, generated: bool = generated) -> str:
            return f"{name}:{'generated part, ' if generated else ''}{first + text.count(chr(10), 0, pos) + 1}"

        for m in LINK.finditer(text):
            label, target = m.group(1), m.group(2)
            figures = [f for _, f in figures_in(label)]
            for i in range(*m.span()):
                if masked[i] != "\n":
                    masked[i] = " "
            if not figures and not any(SIGN_RE.match(x) or "." in x for x in NUMBER.findall(label)):
                continue
            goal = None if "://" in target else (path.parent / target.split("#", 1)[0]).resolve()
            owner = owned.get(goal) if goal is not None else None
            if owner is None:
                if figures:
                    problems.append(f"{at(m.start())}: figure {figures[0]!r} links to {target}, which is not a "
                                    "generated results page")
                continue
            label_n = norm(label)
            for pm in PLUS_MINUS.findall(label_n):
                if norm(pm) not in owner.plus_minus:
                    problems.append(f"{at(m.start())}: {norm(pm)!r} disagrees with {target}, which does not hold it")
            for num in NUMBER.findall(PLUS_MINUS.sub(" ", label_n)):
                if (SIGN_RE.match(num) or "." in num) and norm(num) not in owner.numbers:
                    problems.append(f"{at(m.start())}: {norm(num)!r} disagrees with {target}, which does not hold it")
        if generated:
            continue  # the figures of a generated body are its own
        rest = "".join(masked)
        for pos, figure in figures_in(rest):
            if name == NOTEBOOK:
                line = rest[rest.rfind("\n", 0, pos) + 1:].split("\n", 1)[0]
                if figure in all_owned and COINCIDENCE not in line:
                    problems.append(f"{at(pos)}: {figure!r} repeats a figure a generated page owns; link to the page")
            else:
                problems.append(f"{at(pos)}: figure {figure!r} outside its page; link to the generated page that "
                                "owns it instead")
    return problems


SIGN_RE = re.compile(SIGN)


def test_every_figure_has_one_home():
    problems = check(ROOT)
    assert not problems, "\n".join(problems)


def test_every_results_page_is_generated_and_says_how():
    for path in sorted((ROOT / "docs" / "results").glob("*.md")):
        page = read_page(path)
        assert page.is_generated, f"{path.name}: docs/results/ holds generated pages only (first line {MARK})"
        assert set(FIELDS) <= set(page.fields), (path.name, page.fields)
        assert re.match(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", page.fields["date"]), page.fields["date"]


# ---------------------------------------------------------------------- the check can fail
@pytest.fixture
def tree(tmp_path):
    """A copy of README.md and the Markdown of docs/ to plant mistakes in."""
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    for path in (ROOT / "docs").rglob("*.md"):
        target = tmp_path / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    assert check(tmp_path) == []
    return tmp_path


def an_owned_figure(root: Path, page: str = "mauscheln.md") -> str:
    (owner,) = [o for o in owners(root).values() if o.path.name == page]
    return sorted(owner.plus_minus)[0]


def test_a_figure_copied_into_the_readme_is_caught(tree):
    figure = an_owned_figure(tree)
    readme = tree / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8") + f"\npimc beats expert by {figure} chips per deal.\n",
                      encoding="utf-8")
    problems = check(tree)
    assert len(problems) == 1 and "README.md" in problems[0] and figure in problems[0]


def test_a_stale_linked_figure_is_caught_and_a_current_one_passes(tree):
    readme = tree / "README.md"
    text = readme.read_text(encoding="utf-8")
    figure = an_owned_figure(tree)
    readme.write_text(text + f"\nIt is [{figure}](docs/results/mauscheln.md).\n", encoding="utf-8")
    assert check(tree) == []
    readme.write_text(text + "\n`pimc`'s Elo is [+180](docs/results/mauscheln.md).\n", encoding="utf-8")
    (problem,) = check(tree)
    assert "+180" in problem and "disagrees" in problem


def test_a_figure_on_a_hand_written_page_or_tail_is_caught(tree):
    page = tree / "docs" / "results" / "mousel.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n<!-- written by hand: eval --suite keeps what follows -->\n"
                    "The policy wins by +0.123 ± 0.045.\n", encoding="utf-8")
    other = tree / "docs" / "agents.md"
    other.write_text("The batched engine does 2,400,000 decisions/s.\n", encoding="utf-8")
    problems = check(tree)
    assert len(problems) == 2
    assert any("mousel.md" in p and "+0.123 ± 0.045" in p for p in problems)
    assert any("agents.md" in p and "decisions/s" in p for p in problems)


def test_the_notebook_keeps_history_but_not_an_owned_figure(tree):
    notebook = tree / NOTEBOOK
    notebook.parent.mkdir(parents=True, exist_ok=True)
    text = notebook.read_text(encoding="utf-8") if notebook.exists() else "# Lab notebook\n"
    notebook.write_text(text + "\n### 2026-11-30: a run whose data is gone\n\n+0.987 ± 0.654 then.\n",
                        encoding="utf-8")
    assert check(tree) == []
    figure = an_owned_figure(tree)
    notebook.write_text(text + f"\n### 2026-12-04: the same as the page\n\n{figure}\n", encoding="utf-8")
    (problem,) = check(tree)
    assert "lab-notebook.md" in problem and "repeats" in problem


def test_a_generated_page_without_its_provenance_is_caught(tree):
    page = tree / "docs" / "results" / "mouche.md"
    page.write_text("\n".join(line for line in page.read_text(encoding="utf-8").splitlines()
                              if not line.startswith("* commit: ")) + "\n", encoding="utf-8")
    (problem,) = check(tree)
    assert "mouche.md" in problem and "commit" in problem


def test_a_generated_page_that_links_a_figure_must_agree_with_its_owner(tree):
    """summary.md links each figure to its ruleset page: a stale link there is caught like one in the README."""
    summary = tree / "docs" / "results" / "summary.md"
    text = summary.read_text(encoding="utf-8")
    figure = re.findall(r"\[([^\]]*±[^\]]*)\]\(mauscheln\.md\) \(\d+ deals\)", text)[0]
    summary.write_text(text.replace(f"[{figure}](mauscheln.md)", "[+9.999 ± 0.001](mauscheln.md)", 1),
                       encoding="utf-8")
    (problem,) = check(tree)
    assert "summary.md" in problem and "+9.999 ± 0.001" in problem and "disagrees" in problem
