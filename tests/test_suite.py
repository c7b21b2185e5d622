"""``mauscheln eval --suite``: one command per ruleset's cross-table, its page, chart and the README block."""

from __future__ import annotations

import json

import pytest

from agents.evaluation.cli import main
from agents.evaluation.cli import main as evaluate_main
from agents.evaluation.crosstables import END, KEPT, START, learned_for, summary_table
from agents.evaluation.duplicate import Settings


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
                 "machine:", "command: `mauscheln eval --suite mousel", "measured:", "pooled with earlier"):
        assert text in page, text
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
    assert "| `mousel` |" in text and "not played" in text  # pimc (default) vs expert was not played here


def test_suite_rejects_an_unknown_ruleset(capsys):
    assert main(["--suite", "skat", "--deals", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err and "skat" in err and "mauscheln" in err


def test_summary_rows_name_the_deal_counts():

    from agents.evaluation.duplicate import Estimate

    class P:
        def __init__(self, a, b, mean, deals):
            self.candidate, self.baseline, self.deals = a, b, deals
            self.advantage = Estimate(mean, mean - 0.1, mean + 0.1, deals)

    class T:
        ratings = {"random": -100.0, "beginner": 0.0, "expert": 100.0}
        pairs = [P("beginner", "random", 1.0, 5), P("beginner", "expert", -0.5, 7)]

    row = summary_table({"mouche": T()}).splitlines()[2]
    assert "+1.000 ± 0.100 (5)" in row and "+0.500 ± 0.100 (7)" in row and "not played" in row
    assert "—" in row  # pimc did not play: no Elo


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
