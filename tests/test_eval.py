"""Duplicate evaluation, statistics, ratings, outputs and the ``mauscheln eval`` command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.base import Agent, register_agent
from agents.evaluation.cli import main
from agents.evaluation.duplicate import Estimate, PairResult, Settings, evaluate_pair, summarize
from agents.evaluation.match import make_deal
from agents.evaluation.tournament import bradley_terry, merge_results
from mauscheln_env import Game, make_config


def test_an_agent_against_itself_scores_zero_with_common_random_numbers():
    r = evaluate_pair("expert", "expert", Settings(deals=60, seed=1))
    assert r.advantage.mean == 0.0 and r.advantage.low <= 0.0 <= r.advantage.high
    assert r.ties == 60


def test_an_agent_against_itself_without_crn_has_an_interval_around_zero():
    """Independent random numbers for the two sides: the deals differ, the interval still holds zero."""
    r = evaluate_pair("random", "random", Settings(deals=300, seed=2, crn=False))
    assert r.advantage.low <= 0.0 <= r.advantage.high
    assert r.wins > 0 and r.losses > 0


def test_pimc_against_itself_scores_zero():
    r = evaluate_pair("pimc:samples=2,min_samples=2", "pimc:samples=2,min_samples=2", Settings(deals=4, seed=3))
    assert r.advantage.mean == 0.0


def test_duplicate_deals_are_fixed_and_rotated():
    game = Game(make_config("mauscheln", 4))
    assert make_deal(game, 5, 3) == make_deal(game, 5, 3)
    assert make_deal(game, 5, 3) != make_deal(game, 5, 4)
    dealer, spec = make_deal(game, 5, 3)
    cards = sorted([c for h in spec.hands for c in h] + [spec.trump, *spec.stock])
    assert cards == list(range(game.num_cards)) and 0 <= dealer < 4


def test_a_good_agent_beats_random():
    r = evaluate_pair("beginner", "random", Settings(deals=150, seed=4))
    assert r.advantage.low > 0
    assert r.games == 150 * 8
    assert sum(r.roles["candidate"].values()) >= 150 * (4 + 12)


def test_workers_and_blocks_do_not_change_the_result():
    s = Settings(deals=40, seed=6, players=5, session_deals=2, pot=8)
    a = evaluate_pair("expert", "random", s, workers=1, block=7)
    b = evaluate_pair("expert", "random", s, workers=2, block=13)
    np.testing.assert_array_equal(a.per_deal, b.per_deal)
    assert a.roles == b.roles


def test_a_pairing_goes_on_from_kept_blocks_and_plays_only_the_deals_they_miss():
    """Blocks handed to ``on_block`` by one start, kept with gaps between them, and handed back as ``kept``:
    the next start (other workers, other blocks) plays only the missing deals and ends with the same result."""
    s = Settings(deals=30, seed=7)
    blocks = []
    a = evaluate_pair("expert", "beginner", s, block=4, record=True, on_block=blocks.append)
    assert sorted(b["start"] for b in blocks) == list(range(0, 30, 4))
    kept = [b for b in blocks if b["start"] in (0, 8, 28)]
    again = []
    b = evaluate_pair("expert", "beginner", s, workers=2, record=True, kept=kept, on_block=again.append)
    played = sorted(d for o in again for d in range(o["start"], o["start"] + len(o["per_deal"])))
    assert played == [*range(4, 8), *range(12, 28)]
    np.testing.assert_array_equal(a.per_deal, b.per_deal)
    assert (a.roles, a.games, a.actions) == (b.roles, b.games, b.actions)
    for bad in ([kept[0], kept[0]], [{**kept[0], "start": 29}], [{**kept[0], "per_deal": [[1.0, 2.0]]}]):
        with pytest.raises(ValueError, match="kept block"):
            evaluate_pair("expert", "beginner", s, kept=bad)


def test_estimate_and_summary():
    e = Estimate.of([1.0, 2.0, 3.0, 4.0])
    assert e.mean == 2.5 and e.low < 2.5 < e.high and e.n == 4
    per_deal = np.array([[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    r = summarize("a", "b", per_deal, {"candidate": {}, "baseline": {}}, 24, 1.0)
    assert (r.wins, r.losses, r.ties) == (1, 1, 1)
    assert r.advantage.mean == pytest.approx((1.0 - 0.5 + 0.0) / 3)


def _pair(a: str, b: str, wins: int, losses: int, ties: int = 0) -> PairResult:
    e = Estimate(0.0, -1.0, 1.0, wins + losses + ties)
    return PairResult(a, b, wins + losses + ties, e, {"alone": e, "field": e}, {"alone": e, "field": e},
                      {"alone": e, "field": e}, wins, losses, ties, {"candidate": {}, "baseline": {}}, 0, 0.0)


def test_bradley_terry_orders_and_centres():
    elo = bradley_terry(["a", "b", "c"], [_pair("a", "b", 70, 30), _pair("b", "c", 70, 30), _pair("a", "c", 85, 15)])
    assert elo["a"] > elo["b"] > elo["c"]
    assert abs(sum(elo.values())) < 1e-6
    assert 100 < elo["a"] - elo["b"] < 200  # 70 % is about 147 Elo
    sweep = bradley_terry(["x", "y"], [_pair("x", "y", 50, 0)])
    assert np.isfinite(sweep["x"]) and sweep["x"] > sweep["y"]


def test_cli_writes_results_and_merges(tmp_path, capsys):
    out1, out2 = tmp_path / "one", tmp_path / "two"
    assert main(["--agents", "random", "beginner", "--deals", "20", "--out", str(out1), "--no-progress"]) == 0
    assert main(["--pair", "expert", "beginner", "--deals", "20", "--out", str(out2), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "| agent | Elo (BT) |" in text and "games/s" in text
    data = json.loads((out1 / "results.json").read_text())
    assert data["pairs"][0]["deals"] == 20 and data["settings"]["players"] == 4
    assert (out1 / "results.csv").read_text().startswith("candidate,baseline,deals")
    assert (out1 / "crosstable.md").exists()
    merged = merge_results([out1 / "results.json", out2 / "results.json"])
    assert sorted(merged.agents) == ["beginner", "expert", "random"] and len(merged.pairs) == 2
    assert main(["--merge", str(out1 / "results.json"), str(out2 / "results.json")]) == 0


def _strict(text: str):
    """JSON as a browser's ``JSON.parse`` reads it: NaN and Infinity are errors."""
    def refuse(word: str):
        raise ValueError(f"{word} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_json_is_written_strict_and_undefined_numbers_are_null():
    from mauscheln_env.files import strict_json

    value = {"a": float("nan"), "b": [float("inf"), -float("inf"), 1.5, np.float64("nan")], "c": (2, None, "x")}
    assert _strict(strict_json(value)) == {"a": None, "b": [None, None, 1.5, None], "c": [2, None, "x"]}


def test_a_one_deal_pairing_writes_strict_json_and_older_files_still_read(tmp_path, capsys):
    """One deal leaves a pairing's intervals undefined: results.json says null (no NaN or Infinity, which
    JSON.parse refuses), the cross-table says —, and a results.json of an older version that wrote Infinity
    still loads, its bounds undefined."""
    out = tmp_path / "one"
    assert main(["--agents", "random", "beginner", "--deals", "1", "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    data = _strict((out / "results.json").read_text(encoding="utf-8"))
    adv = data["pairs"][0]["advantage"]
    assert adv["n"] == 1 and adv["low"] is None and adv["high"] is None and isinstance(adv["mean"], float)
    assert "± —" in (out / "crosstable.md").read_text(encoding="utf-8") and "± —" in text
    assert "inf" not in (out / "crosstable.md").read_text(encoding="utf-8")
    (p,) = merge_results([out / "results.json"]).pairs
    assert p.advantage.mean == adv["mean"] and np.isnan(p.advantage.low) and np.isnan(p.advantage.high)
    old = json.loads((out / "results.json").read_text(encoding="utf-8"))
    old["pairs"][0]["advantage"].update(low=float("-inf"), high=float("inf"))
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")  # Python's default: bare Infinity
    assert "Infinity" in (tmp_path / "old.json").read_text(encoding="utf-8")
    (q,) = merge_results([tmp_path / "old.json"]).pairs
    assert q.advantage.mean == adv["mean"] and np.isnan(q.advantage.low) and str(q.advantage).endswith("± —")


def test_cli_rejects_bad_input(capsys):
    assert main(["--agents", "expert", "--deals", "5"]) == 2
    assert main(["--agents", "expert", "nobody", "--deals", "5"]) == 2
    assert main(["--agents", "expert", "random", "--players", "9"]) == 2
    assert "error" in capsys.readouterr().err


@pytest.mark.slow
def test_baselines_are_ordered_over_many_deals():
    s = Settings(deals=2000, seed=10)
    assert evaluate_pair("expert", "beginner", s, workers=2).advantage.low > 0
    assert evaluate_pair("expert", "random", s, workers=2).advantage.low > 0


@pytest.mark.parametrize("backend", ["reference", "batched"])
def test_chunks_pool_into_the_whole_series(tmp_path, backend):
    whole = evaluate_pair("beginner", "random", Settings(deals=30, seed=8, backend=backend))
    assert whole.backend == backend
    for i, start in enumerate((0, 12)):
        n = 12 if start == 0 else 18
        assert main(["--pair", "beginner", "random", "--deals", str(n), "--start", str(start), "--seed", "8",
                     "--out", str(tmp_path / f"c{i}"), "--no-progress", "--backend", backend]) == 0
    merged = merge_results([tmp_path / "c0" / "results.json", tmp_path / "c1" / "results.json"])
    (pooled,) = merged.pairs
    assert pooled.deals == 30
    assert pooled.advantage.mean == pytest.approx(whole.advantage.mean)
    assert pooled.roles == whole.roles


def test_chunked_runs_resume_and_pool_into_the_whole_series(tmp_path, capsys):
    """--chunk: each finished chunk is kept, a rerun plays only the missing ones, the pooled figures are the
    unchunked run's; a chunk folder of another series and --chunk without --out are refused with one line."""
    whole = evaluate_pair("beginner", "random", Settings(deals=30, seed=8, backend="reference"))
    out = tmp_path / "series"
    args = ["--pair", "beginner", "random", "--deals", "30", "--seed", "8", "--chunk", "12", "--out", str(out),
            "--no-progress", "--backend", "reference"]
    assert main(args) == 0
    assert capsys.readouterr().out.count("written " + str(out / "chunks")) == 3  # 0-11, 12-23, 24-29
    (out / "chunks" / "deals_0000012_0000024.json").unlink()  # a run stopped before this chunk was written
    assert main(args) == 0
    text = capsys.readouterr().out
    assert text.count("already played") == 2 and text.count("written " + str(out / "chunks")) == 1
    (pooled,) = merge_results([out / "results.json"]).pairs
    assert pooled.deals == 30 and pooled.advantage.mean == pytest.approx(whole.advantage.mean)
    assert pooled.roles == whole.roles
    command = json.loads((out / "results.json").read_text())["command"]
    assert command.count("--chunk 12") == 1, command  # three chunks of one run: its command once
    for bad in (["--seed", "9"], ["--pair", "expert", "random"]):
        assert main([*args, *bad]) == 2
        err = capsys.readouterr().err
        assert "holds another series" in err and err.count("\n") == 1
    assert main(args[:-5] + ["--no-progress"]) == 2  # no --out
    assert "--chunk 12 is not allowed here" in capsys.readouterr().err


def test_merge_refuses_to_count_deals_twice(tmp_path):
    for name, start in (("a", 0), ("b", 5), ("c", 10)):
        assert main(["--pair", "beginner", "random", "--deals", "10" if name == "b" else "5", "--start", str(start),
                     "--seed", "8", "--out", str(tmp_path / name), "--no-progress"]) == 0
    a, b, c = (tmp_path / x / "results.json" for x in "abc")
    with pytest.raises(ValueError, match="overlapping deals"):
        merge_results([b, c])  # deals 5..14 and 10..14
    with pytest.raises(ValueError, match="overlapping deals"):
        merge_results([a, a])
    assert main(["--merge", str(a), str(c), "--out", str(tmp_path / "ac"), "--no-progress"]) == 0
    with pytest.raises(ValueError, match="a merged file"):
        merge_results([tmp_path / "ac" / "results.json", b])
    assert merge_results([a, b]).pairs[0].deals == 15


def test_a_merged_unbroken_run_keeps_its_span_and_pools_with_later_chunks(tmp_path):
    """Chunks merged in any order pool in deal order; merged, an unbroken run of one seed keeps seed, first
    deal and count, so the merged file pools with the next chunk and is refused with one it overlaps."""
    files = {}
    for start, n in ((0, 5), (5, 4), (9, 3)):
        out = tmp_path / f"d{start}"
        assert main(["--pair", "beginner", "random", "--deals", str(n), "--start", str(start), "--seed", "8",
                     "--out", str(out), "--no-progress"]) == 0
        files[start] = out / "results.json"
    assert main(["--merge", str(files[5]), str(files[0]), "--out", str(tmp_path / "m"), "--no-progress"]) == 0
    merged = json.loads((tmp_path / "m" / "results.json").read_text())
    assert {k: merged["settings"][k] for k in ("seed", "start", "deals")} == {"seed": 8, "start": 0, "deals": 9}
    whole = merge_results([files[0], files[5], files[9]]).pairs[0]
    again = merge_results([files[9], tmp_path / "m" / "results.json"]).pairs[0]
    assert np.array_equal(again.per_deal, whole.per_deal) and again.deals == 12
    with pytest.raises(ValueError, match="seed 8, deals 0..8"):
        merge_results([tmp_path / "m" / "results.json", files[5]])
    gap = merge_results([files[0], files[9]])  # deals 0-4 and 9-11: no single span
    assert "seed" not in gap.settings and "start" not in gap.settings


def test_compressed_results_merge_and_reuse_like_plain_ones(tmp_path, capsys):
    """A results file gzip-compressed (the series kept in docs/results/series are .json.gz) is read like the
    plain one by --merge and by merge_results, named .json.gz or not; a broken one gets one line."""
    import gzip

    for name, start in (("a", 0), ("b", 5)):
        assert main(["--pair", "beginner", "random", "--deals", "5", "--start", str(start), "--seed", "8",
                     "--out", str(tmp_path / name), "--no-progress"]) == 0
    a, b = (tmp_path / x / "results.json" for x in "ab")
    packed = tmp_path / "a.json.gz"
    packed.write_bytes(gzip.compress(a.read_bytes(), mtime=0))
    odd = tmp_path / "b_gzipped.json"  # compressed under a plain name: the content decides
    odd.write_bytes(gzip.compress(b.read_bytes(), mtime=0))
    plain = merge_results([a, b]).pairs[0]
    for files in ([packed, b], [a, odd], [packed, odd]):
        got = merge_results(files).pairs[0]
        assert got.deals == 10 and np.array_equal(got.per_deal, plain.per_deal)
    capsys.readouterr()
    assert main(["--merge", str(packed), str(odd)]) == 0
    assert f"{plain.advantage.mean:+.3f}" in capsys.readouterr().out
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(packed.read_bytes()[:40])  # cut short
    assert main(["--merge", str(broken), str(b)]) == 2
    err = capsys.readouterr().err
    assert "broken.json.gz cannot be read" in err and err.count("\n") == 1


def test_the_kept_series_are_compressed_and_read():
    """Every results file kept under docs/results/ is .json.gz, and each one loads."""
    from agents.evaluation.tournament import load_results

    root = Path(__file__).resolve().parents[1] / "docs" / "results"
    assert not list(root.rglob("*.json")), "compress results files: gzip -9n FILE"
    files = sorted(root.rglob("*.json.gz"))
    assert files
    for path in files:
        assert load_results(path)["pair_results"], path


def test_the_cli_refuses_an_unmergeable_set_with_one_line(tmp_path, capsys):
    """Overlapping deals given to --merge are a user's mistake: exit 2 and one line, no traceback."""
    assert main(["--pair", "beginner", "random", "--deals", "5", "--seed", "8", "--out", str(tmp_path / "a"),
                 "--no-progress"]) == 0
    capsys.readouterr()
    a = str(tmp_path / "a" / "results.json")
    assert main(["--merge", a, a]) == 2
    err = capsys.readouterr().err
    assert "overlapping deals" in err and err.count("\n") == 1


def test_parallel_evaluation_of_a_torch_agent_does_not_hang():
    """The parent has loaded torch (a learned policy): worker processes must still start and finish."""
    code = (
        "from agents.base import make_agent\n"
        "from agents.evaluation.duplicate import Settings, evaluate_pair\n"
        "make_agent('learned', checkpoint='mauscheln4').act  # torch is loaded and used in the parent\n"
        "import torch; torch.ones(64, 64) @ torch.ones(64, 64)\n"
        "r = evaluate_pair('learned:checkpoint=mauscheln4', 'random', Settings(deals=8, seed=1), workers=2)\n"
        "print('deals', r.deals)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "deals 8" in proc.stdout


class _Counting(Agent):
    name = "counting"
    calls = 0

    def act(self, observation, action_mask, info):
        type(self).calls += 1
        self.own = getattr(self, "own", 0) + 1
        return int(np.flatnonzero(action_mask)[0])

    def counts(self):
        return {"acts": getattr(self, "own", 0)}


def test_agent_counts_are_recorded_per_side_and_pooled(tmp_path):
    """What an agent counts (Agent.counts) is recorded per pairing and side: the growth over every block of the
    cached agents, kept through to_dict/from_dict, swapped by a mirror, summed when chunks are pooled, absent
    where no agent counts anything."""
    from agents.base import _EXTRA
    from agents.bench.run import mirror_pair
    from agents.evaluation.tournament import play_in_chunks

    register_agent("counting", _Counting)
    try:
        _Counting.calls = 0
        p = evaluate_pair("counting", "random", Settings(deals=3), block=1)  # cached agents across blocks
        assert p.agent_counts == {"candidate": {"acts": _Counting.calls}, "baseline": {}}
        again = PairResult.from_dict(json.loads(json.dumps(p.to_dict())))
        assert again.agent_counts == p.agent_counts
        assert mirror_pair(p, "random", "counting").agent_counts == {"baseline": {"acts": _Counting.calls},
                                                                    "candidate": {}}
        assert "agent_counts" not in evaluate_pair("random", "beginner", Settings(deals=1)).to_dict()
        _Counting.calls = 0
        t = play_in_chunks(["counting", "random"], Settings(deals=2), pairs=None, chunk=1, out=tmp_path)
        assert t.pairs[0].agent_counts["candidate"] == {"acts": _Counting.calls}
    finally:
        _EXTRA.pop("counting", None)
    with pytest.raises(ValueError, match="agent_counts"):
        PairResult.from_dict({**p.to_dict(), "agent_counts": {"candidate": {"acts": -1}}})
