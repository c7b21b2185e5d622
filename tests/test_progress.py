"""The progress of a run of pairings: deals per pairing and overall, elapsed time, time left (a fake clock)."""

from __future__ import annotations

import io

import pytest

from agents.evaluation import progress as progress_module
from agents.evaluation.progress import RunProgress, duration


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _progress(pairings, **kw):
    clock, out = Clock(), io.StringIO()
    return RunProgress(pairings, clock=clock, stream=out, bar=False, title="run", every=5.0, **kw), clock, out


def test_lines_every_few_seconds_with_the_time_left_from_the_pace_and_the_costs(monkeypatch):
    """The pairing in play is estimated at its own pace; a later one by its cost per deal (of one process, shared
    by the workers), scaled by how the pairings so far ran against their costs (once those are long enough)."""
    bar, clock, out = _progress([("a vs b", 10), ("a vs c", 4)], costs=[0.5, 3.0], workers=2)
    bar.begin(0)
    clock.now += 6
    bar.update(6)
    assert bar.line().endswith("ETA pairing 4s, overall 10s")  # 1.5 s of cost so far: too little to rescale by
    monkeypatch.setattr(progress_module, "SCALE_AFTER", 1.0)
    bar, clock, out = _progress([("a vs b", 10), ("a vs c", 4)], costs=[0.5, 3.0], workers=2)
    bar.begin(0)
    clock.now += 4
    bar.update(5)
    assert out.getvalue() == ""  # not yet 5 s since the start
    clock.now += 2
    bar.update(1)
    # pace 1 s/deal: 4 s left in the pairing; 6 s spent on 6 * 0.5 / 2 = 1.5 s of cost, so the next pairing's
    # 4 * 3.0 / 2 = 6 s of cost take 24 s
    assert out.getvalue().splitlines() == [
        "run: pairing 1/2 a vs b: 6/10 deals | overall 6/14 deals | elapsed 6s | ETA pairing 4s, overall 28s"]
    clock.now += 2
    bar.update(4)
    bar.end()
    bar.begin(1)
    clock.now += 4
    bar.update(1)
    clock.now += 3
    bar.close()
    assert out.getvalue().splitlines()[1:] == [
        "run: pairing 2/2 a vs c: 1/4 deals | overall 11/14 deals | elapsed 12s | ETA pairing 12s, overall 12s",
        "run: done: 11 deals in 15s"]


def test_without_costs_later_pairings_go_at_the_pace_so_far():
    bar, clock, out = _progress([("x", 4), ("y", 4)])
    bar.begin(0)
    assert bar.line() == "run: pairing 1/2 x: 0/4 deals | overall 0/8 deals | elapsed 0s | ETA overall ?"
    clock.now += 10
    bar.update(2)
    assert bar.line() == "run: pairing 1/2 x: 2/4 deals | overall 2/8 deals | elapsed 10s | ETA pairing 10s, overall 30s"


def test_a_line_is_due_while_waiting_for_the_workers():
    bar, clock, out = _progress([("x", 2)])
    bar.begin(0)
    clock.now += 3
    bar.tick()
    assert out.getvalue() == ""
    clock.now += 3
    bar.tick()
    assert out.getvalue().splitlines() == ["run: x: 0/2 deals | elapsed 6s | ETA ?"]


def test_a_run_of_one_pairing_names_it_once():
    """One pairing is the whole run: its label once (not again where it is the title, as the trainer's final
    evaluation has it), its deals once, one time left."""
    clock, out = Clock(), io.StringIO()
    bar = RunProgress([("a vs b", 10)], clock=clock, stream=out, bar=False, title="a vs b", every=5.0)
    bar.begin(0)
    clock.now += 6
    bar.update(6)
    assert out.getvalue().splitlines() == ["a vs b: 6/10 deals | elapsed 6s | ETA 4s"]
    assert bar.line(overall=False) == "elapsed 6s | ETA 4s"  # beside a bar, which counts the deals itself


def test_a_short_run_writes_nothing_and_a_disabled_one_nothing_at_all():
    bar, clock, out = _progress([("x", 2)])
    bar.begin(0)
    clock.now += 1
    bar.update(2)
    bar.close()
    assert out.getvalue() == ""
    bar, clock, out = _progress([("x", 2)], enabled=False)
    bar.begin(0)
    clock.now += 60
    bar.update(1)
    bar.close()
    assert out.getvalue() == ""


def test_bad_use_is_refused():
    with pytest.raises(ValueError, match="one per pairing"):
        RunProgress([("x", 2)], costs=[1.0, 2.0], enabled=False)
    bar = RunProgress([("x", 2)], enabled=False)
    with pytest.raises(ValueError, match="begin"):
        bar.update(1)
    with pytest.raises(ValueError, match="allowed: 0..0"):
        bar.begin(1)


def test_durations():
    assert [duration(x) for x in (0, 5.4, 65, 3600 + 62, -3)] == ["0s", "5s", "1m05s", "1h01m02s", "0s"]


def test_bench_run_and_eval_print_progress_lines_on_a_pipe(tmp_path, capsys, monkeypatch):
    """Not on a terminal, ``bench run`` and ``eval`` write progress lines to stderr (here every update), with the
    pairings, deals, elapsed time and time left, and nothing of it on stdout."""
    from agents.bench import cli as bench_cli
    from agents.evaluation import cli as eval_cli

    monkeypatch.setattr(progress_module, "EVERY", 0.0)
    assert bench_cli.main(["run", "random", "--field", "beginner", "expert", "--deals", "2", "--replays", "0",
                           "--out", str(tmp_path / "r.json")]) == 0
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert any(line.startswith("mauscheln bench run: pairing 2/2 random vs expert: 2/2 deals | overall 4/4 deals | "
                               "elapsed ") and " | ETA pairing " in line for line in lines), err
    assert lines[-1].startswith("mauscheln bench run: done: 4 deals in "), err
    assert "ETA" not in out
    assert eval_cli.main(["--agents", "random", "beginner", "--deals", "3"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert any(line.startswith("mauscheln eval: random vs beginner: 3/3 deals | elapsed ") for line in err), err
    assert err[-1].startswith("mauscheln eval: done: 3 deals in "), err


def test_the_time_left_falls_while_waiting_for_the_next_deals():
    bar, clock, out = _progress([("x", 10)])
    bar.begin(0)
    clock.now += 10
    bar.update(5)
    assert bar.left() == (10.0, 10.0)
    clock.now += 4
    assert bar.left() == (6.0, 6.0)
