"""``mauscheln eval --suite``: one command per ruleset's cross-table, its page, chart, the summary and the README
block."""

from __future__ import annotations

import json

import pytest

from agents.evaluation.cli import main
from agents.evaluation.cli import main as evaluate_main
from agents.evaluation.crosstables import END, KEPT, START, learned_for, summary_from_pages
from agents.evaluation.duplicate import Settings
from agents.evaluation.pages import MARK, read_page


def test_suite_plays_pools_and_writes_the_page_chart_and_readme(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{START}\nold\n{END}\nrest\n", encoding="utf-8")
    docs, out = tmp_path / "docs", tmp_path / "runs"
    # An earlier pimc result on the same table is pooled, not played again.
    assert evaluate_main(["--ruleset", "mousel", "--pair", "pimc:samples=2,min_samples=2", "expert", "--deals", "1",
                 "--seed", "4", "--out", str(tmp_path / "earlier"), "--no-progress"]) == 0
    assert main(["--suite", "mousel", "--deals", "3", "--seed", "4", "--search-deals", "0",
                 "--search-against", "expert", "--reuse", str(tmp_path / "earlier" / "results.json"),
                 "--docs", str(docs), "--out", str(out), "--readme", str(readme), "--no-progress"]) == 0
    page = (docs / "mousel.md").read_text(encoding="utf-8")
    for text in ("cross-table", "Elo (BT)", "| expert vs beginner | 3 |", "| pimc:samples=2,min_samples=2 vs expert | 1 |",
                 "machine:", "command: `mauscheln eval --suite mousel", "date:", "commit:", "pooled:"):
        assert text in page, text
    assert page.startswith(MARK)
    assert read_page(docs / "mousel.md").data == [str(tmp_path / "earlier" / "results.json")]
    assert (docs / "mousel.png").stat().st_size > 1000
    # A hand-written tail after the KEPT line survives the next run; the generated part above it is rewritten.
    (docs / "mousel.md").write_text("stale generated part\n" + KEPT + "\n## The shipped policy\nby hand\n",
                                    encoding="utf-8")
    assert main(["--suite", "mousel", "--deals", "3", "--seed", "4", "--search-deals", "0",
                 "--search-against", "expert", "--reuse", str(tmp_path / "earlier" / "results.json"),
                 "--docs", str(docs), "--out", str(out), "--readme", str(readme), "--no-progress"]) == 0
    again = (docs / "mousel.md").read_text(encoding="utf-8")
    assert "stale" not in again and "| expert vs beginner | 3 |" in again
    assert again.endswith(KEPT + "\n## The shipped policy\nby hand\n")
    played = json.loads((out / "mousel" / "scripted" / "results.json").read_text(encoding="utf-8"))
    learned = learned_for(Settings(ruleset="mousel", players=4))  # the shipped mousel4, the candidate of its pairs
    assert learned == ["learned:checkpoint=mousel4"]
    field = [*learned, "expert", "beginner", "random"]
    assert {(p["candidate"], p["baseline"]) for p in played["pairs"]} == {
        (a, b) for i, a in enumerate(field) for b in field[i + 1:]}
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("intro\n") and text.endswith("rest\n") and "old" not in text
    assert "| [`mousel`](docs/mousel.md) |" in text and "not played" in text  # pimc (default) vs expert: not here
    summary = (docs / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith(MARK) and "| [`mousel`](mousel.md) |" in summary and "](mousel.md) (3 deals)" in summary


def test_suite_rejects_an_unknown_ruleset(capsys):
    assert main(["--suite", "skat", "--deals", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err and "skat" in err and "mauscheln" in err


def test_the_summary_is_read_from_the_pages_and_links_every_figure(tmp_path):
    """The summary row of a ruleset comes from its page's tables; a pairing played the other way round is
    turned to the headline's side, one not played says so, and every figure is a link to the page."""
    (tmp_path / "mouche.md").write_text("\n".join([
        MARK, "# `mouche`", "", "* command: `x`", "", "## Cross-table", "",
        "| agent | Elo (BT) | vs beginner | vs random |", "| --- | ---: | ---: | ---: |",
        "| expert | +100 | — |  |", "| beginner | +0 | — |  |", "| random | -100 |  | — |", "",
        "## Per pairing", "", "| pairing | deals | both formats | alone | field | won / lost / tied |",
        "| --- | ---: | --- | --- | --- | --- |",
        "| beginner vs random | 5 | +1.000 ± 0.100 | +1 | +1 | 1 / 1 / 1 |",
        "| beginner vs expert | 7 | -0.500 ± 0.100 | -1 | -1 | 1 / 1 / 1 |", ""]), encoding="utf-8")
    row = summary_from_pages(tmp_path).splitlines()[2]
    assert "[+1.000 ± 0.100](mouche.md) (5 deals)" in row and "[+0.500 ± 0.100](mouche.md) (7 deals)" in row
    assert "not played" in row and "[+100](mouche.md)" in row
    assert "/ —" in row  # pimc did not play: no Elo


@pytest.mark.parametrize("bad", [["--search-deals", "-1"], ["--workers", "0"]])
def test_suite_rejects_bad_counts(bad, capsys):
    assert main(["--suite", "mousel", "--deals", "1", *bad]) == 2
    assert "error:" in capsys.readouterr().err


def test_eval_with_suite_runs_the_suite_and_its_errors_are_one_line(monkeypatch, capsys):
    """``mauscheln eval --suite`` hands its arguments to the suite (here a stand-in, so that nothing is played);
    a bad ruleset is refused by the suite with the command's one-line error."""
    import agents.evaluation.crosstables as crosstables

    seen = {}
    monkeypatch.setattr(crosstables, "suite_main", lambda args, command: seen.update(args=args, command=command) or 0)
    assert evaluate_main(["--suite", "mousel", "--deals", "1"]) == 0
    assert seen["args"].suite == ["mousel"] and seen["args"].deals == 1
    assert seen["command"].startswith("mauscheln eval --suite mousel")
    monkeypatch.undo()
    assert evaluate_main(["--suite", "nonsense", "--deals", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "mauscheln eval" in err and "'nonsense' is not a ruleset" in err
