"""The standard benchmark: deal sets, bench run, the leaderboard database, replays, the report, demo."""

from __future__ import annotations

import copy
import json
import multiprocessing
import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.base import make_agent
from agents.bench import cli, decks, leaderboard, replay
from agents.bench.run import (
    FIELD_DEALS,
    AgentId,
    BenchError,
    find_reusable,
    mirror_pair,
    pair_from_record,
    record_digest,
    reference_agents,
    reference_field,
    reference_keys,
    run_bench,
    without_timing,
)
from agents.evaluation.duplicate import Settings, evaluate_pair
from agents.evaluation.match import game_order
from mauscheln_env.compiled import loaded
from mauscheln_env.config import RULESETS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ds4():
    return decks.load_deal_set("v1", "mauscheln_4p")


@pytest.fixture(scope="module")
def record(ds4):
    """random against beginner and expert on the first 3 deals of mauscheln_4p, 2 deals' games kept."""
    return run_bench("random", ds4, field=["beginner", "expert"], deals=3, replays=2)


def _copy_decks(tmp_path: Path) -> Path:
    folder = tmp_path / "v1"
    shutil.copytree(decks.DECKS / "v1", folder)
    return folder


# ---------------------------------------------------------------------- deal sets
def test_every_ruleset_ships_a_v1_deal_set_with_a_pinned_hash():
    tables = decks.tables_of("v1")
    assert tables == [t for t, _, _ in decks.suite_tables()]
    assert {decks.load_deal_set("v1", t).ruleset for t in tables} == set(RULESETS)
    assert [t for t in tables if t.startswith("mauscheln_") and not t.startswith("mauscheln_classic")] == [
        f"mauscheln_{n}p" for n in (3, 4, 5, 6, 7)]
    for t in tables:
        ds = decks.load_deal_set("v1", t)
        assert len(ds) == decks.SUITES["v1"] and ds.hash == decks.pinned_hashes("v1")[t]
        assert ds.hash == decks.content_hash(json.loads(ds.path.read_text(encoding="utf-8")))
        assert ds.config.max_deals == 1 and ds.game.n == ds.players


def test_the_documented_command_regenerates_the_stored_deals():
    """The first deals of every table, made again by the generator, are the stored rows: a change of the
    deck, the deal pattern, the seeds or of how the engine plays (the check column) shows here."""
    for table, ruleset, players in decks.suite_tables():
        stored = json.loads((decks.DECKS / "v1" / f"{table}.json").read_text(encoding="utf-8"))
        again = decks.generate("v1", table, ruleset, players, deals=12)
        assert {k: v for k, v in again.items() if k != "deals"} == {k: v for k, v in stored.items() if k != "deals"}
        assert again["deals"] == stored["deals"][:12], table


def test_stored_deals_replay_to_their_checks():
    """A fixed policy replays stored deals (throw-ins, redeals and reshuffles drawn from the session seed)
    to the stored digests."""
    for table in decks.tables_of("v1"):
        ds = decks.load_deal_set("v1", table)
        assert decks.verify_checks(ds, list(range(0, len(ds), 97))) == [], table


@pytest.mark.slow
def test_every_stored_deal_replays_to_its_check():
    for table in decks.tables_of("v1"):
        assert decks.verify_checks(decks.load_deal_set("v1", table)) == [], table


def test_a_changed_engine_is_caught_by_the_checks(ds4, monkeypatch):
    """If the engine drew one more random number per shuffle, the checks of deals with a redeal would fail."""
    from mauscheln_env import engine

    real = engine.Game.deal_cards

    def shifted(self, state, deal):
        if deal is None:
            state.rng.permutation(3)
        return real(self, state, deal)

    monkeypatch.setattr(engine.Game, "deal_cards", shifted)
    assert decks.verify_checks(ds4, range(60))


def test_a_tampered_deal_set_is_refused(tmp_path):
    folder = _copy_decks(tmp_path)
    path = folder / "mouche_4p.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    hands = data["deals"][5][3]
    hands[0], hands[1] = hands[1], hands[0]  # two seats swap hands: still a valid deal, but not the suite's
    path.write_text(decks.dump(data), encoding="utf-8")
    with pytest.raises(decks.DealSetError, match="content hash .* pins"):
        decks.load_deal_set("v1", "mouche_4p", folder)
    assert decks.load_deal_set("v1", "muschka_4p", folder).hash == decks.pinned_hashes("v1")["muschka_4p"]
    # a file re-hashed by hand still is not the suite: a record made on it is refused by the leaderboard
    pinned = json.loads((folder / decks.HASHES).read_text())
    pinned["mouche_4p"] = decks.content_hash(data)
    (folder / decks.HASHES).write_text(json.dumps(pinned))
    other = decks.load_deal_set("v1", "mouche_4p", folder)
    rec = run_bench("random", other, field=["expert"], deals=1, replays=0)
    with pytest.raises(leaderboard.ResultRecordError, match="deal-set hash"):
        leaderboard.check_record(rec)


def test_a_damaged_deal_set_names_what_is_wrong(tmp_path):
    folder = _copy_decks(tmp_path)
    (folder / "mousel_4p.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(decks.DealSetError, match="cannot be read as JSON"):
        decks.load_deal_set("v1", "mousel_4p", folder)
    (folder / "mousel_4p.json").unlink()
    with pytest.raises(decks.DealSetError, match="has no table"):
        decks.load_deal_set("v1", "mousel_4p", folder)
    with pytest.raises(decks.DealSetError, match="unknown suite"):
        decks.load_deal_set("v0", "mousel_4p")
    with pytest.raises(decks.DealSetError, match="allowed: 3, 4, 5, 6, 7 players"):
        decks.find_table("v1", "mauscheln", 8)


# ---------------------------------------------------------------------- bench run
def test_the_field_is_the_reference_agents_that_support_the_table_and_its_policies(monkeypatch):
    four = reference_field(decks.load_deal_set("v1", "mauscheln_4p"))
    assert four[:4] == ["random", "beginner", "expert", "pimc"]
    assert "learned:checkpoint=mauscheln4" in four
    assert four[-1] == "pimc:model=mauscheln4,phases=play"  # the search agent on the table's policy
    for table in decks.tables_of("v1"):
        ds = decks.load_deal_set("v1", table)
        field = reference_field(ds)
        assert field[:3] == ["random", "beginner", "expert"], table
        pimc = make_agent("pimc", seed=0)
        pimc.setup(ds.game, 0)
        assert ("pimc" in field) == pimc.determinizes, table  # pimc joins where its search plays the table
        policies = [s.split("=", 1)[1] for s in field if s.startswith("learned:")]
        assert field[3 + pimc.determinizes:] == [*(f"learned:checkpoint={p}" for p in policies),
                                                 *(f"pimc:model={p},phases=play" for p in policies
                                                   if pimc.determinizes)], table
    # an agent that stops supporting a table leaves its field; one marked reference joins it
    from agents.scripted.baselines import BeginnerAgent, RandomAgent

    monkeypatch.setattr(BeginnerAgent, "supports", lambda self, game: False)
    monkeypatch.setattr(RandomAgent, "reference", False)
    assert reference_agents(decks.load_deal_set("v1", "mouche_4p").game) == ["expert", "pimc"]


def test_a_record_names_what_produced_it(record, ds4):
    assert record["agent"] == {"spec": "random", "checkpoint": None, "key": "random", "source": None,
                               "class": "agents.scripted.baselines:RandomAgent"}
    assert record["format"] == "mauscheln-bench-result-v2"
    assert record["suite"]["hash"] == ds4.hash and record["suite"]["table"] == "mauscheln_4p"
    assert [p["baseline"] for p in record["pairs"]] == ["beginner", "expert"]
    for key in ("version", "commit", "dirty"):
        assert key in record["project"]
    assert record["machine"]["cpus"] and record["date"] and record["wall_seconds"] >= 0
    assert record["machine"]["build"] == ("compiled" if loaded() else "source")
    for p in record["pairs"]:
        assert p["deals"] == 3 and len(p["per_deal"]) == 3 and p["source"] == "played"
        assert len(p["replays"]) == 2 and all(len(games) == 8 for games in p["replays"])
        assert p["advantage"]["low"] <= p["advantage"]["mean"] <= p["advantage"]["high"]
    leaderboard.check_record(record)


def test_the_same_agent_and_deals_give_the_same_record_but_for_timing(record, ds4):
    again = run_bench("random", ds4, field=["beginner", "expert"], deals=3, replays=2, workers=2)
    assert without_timing(again) == without_timing(record)
    assert record_digest(again) != record_digest(record) or again["date"] == record["date"]


def test_a_suite_deal_is_the_documented_series_deal(ds4):
    """Deal i of the suite plays exactly as deal i of ``mauscheln eval --seed <table seed>``."""
    rec = run_bench("beginner", ds4, field=["expert"], deals=4, replays=0)
    series = evaluate_pair("beginner", "expert", Settings(deals=4, seed=ds4.seed))
    assert np.allclose(series.per_deal, rec["pairs"][0]["per_deal"], atol=1e-6)


def test_a_mirrored_pairing_is_the_pairing_played_from_the_other_side(ds4):
    ab = run_bench("beginner", ds4, field=["expert"], deals=3, replays=3)
    ba = run_bench("expert", ds4, field=["beginner"], deals=3, replays=3)
    mirrored = mirror_pair(pair_from_record(ab["pairs"][0], 4), "expert", "beginner")
    played = pair_from_record(ba["pairs"][0], 4)
    assert np.array_equal(mirrored.per_deal, played.per_deal)
    assert (mirrored.wins, mirrored.losses, mirrored.ties) == (played.wins, played.losses, played.ties)
    assert mirrored.roles == played.roles and mirrored.actions == played.actions
    clean = {"commit": "c0ffee", "dirty": False}
    ab_clean = {**ab, "project": clean}
    found = find_reusable([ab_clean], AgentId("expert"), AgentId("beginner"), ds4, 3, clean)
    assert found is not None and found[1] == record_digest(ab_clean)
    assert find_reusable([ab_clean], AgentId("expert"), AgentId("beginner"), ds4, 2, clean) is None  # other deals
    assert find_reusable([ab_clean], AgentId("expert"), AgentId("beginner"), ds4, 3, {**clean, "commit": "x"}) is None
    assert find_reusable([ab_clean], AgentId("expert"), AgentId("beginner"), ds4, 3, {**clean, "dirty": True}) is None


def test_bench_run_refuses_what_it_cannot_do(ds4):
    with pytest.raises(BenchError, match="deals=1001"):
        run_bench("random", ds4, field=["expert"], deals=1001)
    with pytest.raises(BenchError, match="no opponent"):
        run_bench("random", ds4, field=["random"], deals=1)
    with pytest.raises(BenchError, match="--cap names"):
        run_bench("random", ds4, field=["expert"], deals=1, caps={"pimc": 3})


# ---------------------------------------------------------------------- leaderboard
def _variant(record, k: int):
    """A distinct but valid record (another date, so another digest)."""
    rec = copy.deepcopy(record)
    rec["date"] = f"2000-01-01T00:00:{k:02d}+00:00"
    return rec


def test_submit_and_leaderboard(tmp_path, record, ds4):
    db = tmp_path / "lb.sqlite"
    first = leaderboard.submit(record, db)
    assert first.new and leaderboard.submit(record, db).new is False  # the same record is stored once
    ab = run_bench("beginner", ds4, field=["expert"], deals=3, replays=0)
    leaderboard.submit(ab, db)
    (b,) = leaderboard.leaderboard(db, shipped=False)
    assert b.table == "mauscheln_4p" and b.deal_hash == ds4.hash and b.records == 2
    assert {e.agent for e in b.entries} == {"random", "beginner", "expert"}
    assert [e.elo for e in b.entries] == sorted((e.elo for e in b.entries), reverse=True)
    assert all(e.low <= e.elo <= e.high for e in b.entries)
    text = leaderboard.board_markdown(b)
    assert "| rank | agent | Elo (BT) | 95 % interval |" in text and "vs expert" in text
    assert leaderboard.consistent(db) == []


def test_the_leaderboard_counts_a_pairing_once_whichever_side_played_it(tmp_path, ds4):
    ab = run_bench("beginner", ds4, field=["expert"], deals=3, replays=0)
    ba = run_bench("expert", ds4, field=["beginner"], deals=3, replays=0)
    db1, db2 = tmp_path / "one.sqlite", tmp_path / "two.sqlite"
    leaderboard.submit(ab, db1)
    leaderboard.submit(ab, db2)
    leaderboard.submit(ba, db2)
    (one,), (two,) = leaderboard.leaderboard(db1, shipped=False), leaderboard.leaderboard(db2, shipped=False)
    assert one.pairs[0].deals == two.pairs[0].deals == 3
    assert one.ratings == pytest.approx(two.ratings)


@pytest.mark.parametrize("edit, match", [
    (lambda r: r.update(format="something else"), "format"),
    (lambda r: r.pop("agent"), "agent"),
    (lambda r: r["suite"].update(hash="sha256:" + "0" * 64), "deal-set hash"),
    (lambda r: r["suite"].update(table="mauscheln_9p"), "not in suite"),
    (lambda r: r["pairs"][0].update(wins=3, losses=0, ties=0), "do not follow"),
    (lambda r: r["pairs"][0].update(per_deal=[[0, 0, 0]]), "malformed|per_deal"),
    (lambda r: r["pairs"][0].update(first_deal=999), "first_deal"),
    (lambda r: r["pairs"][0]["replays"][0].__setitem__(0, "zz"), "replays"),
    (lambda r: r.update(pairs=[]), "non-empty"),
])
def test_malformed_records_are_refused_and_nothing_is_written(tmp_path, record, edit, match):
    db = tmp_path / "lb.sqlite"
    leaderboard.submit(_variant(record, 1), db)
    bad = copy.deepcopy(record)
    edit(bad)
    with pytest.raises(leaderboard.ResultRecordError, match=match):
        leaderboard.submit(bad, db)
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 1
    assert con.execute("SELECT COUNT(*) FROM pairings").fetchone()[0] == 2
    con.close()


def test_bad_files_and_databases_give_one_line_errors(tmp_path, capsys):
    (tmp_path / "x.json").write_text("[1, 2")
    assert cli.main(["submit", str(tmp_path / "x.json"), "--db", str(tmp_path / "lb.sqlite")]) == 2
    assert cli.main(["submit", str(tmp_path / "missing.json"), "--db", str(tmp_path / "lb.sqlite")]) == 2
    (tmp_path / "notdb.sqlite").write_text("plain text, not a database " * 100)
    assert cli.main(["leaderboard", "--db", str(tmp_path / "notdb.sqlite")]) == 2
    assert cli.main(["run", "nobody", "--deals", "1", "--out", str(tmp_path / "r.json")]) == 2
    assert cli.main(["run", "random", "--deals", "1", "--cap", "pimc", "--out", str(tmp_path / "r.json")]) == 2
    assert cli.main(["run", "random", "--players", "9", "--out", str(tmp_path / "r.json")]) == 2
    assert cli.main(["run", "pimc:samples=0", "--deals", "1", "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 7 and all(line.startswith("mauscheln bench ") and ": error: " in line for line in err)
    assert not (tmp_path / "r.json").exists()


def test_records_are_written_and_read_plain_or_gzipped(tmp_path, record):
    from agents.bench.run import write_record

    write_record(record, tmp_path / "r.json")
    write_record(record, tmp_path / "r.json.gz")
    first = (tmp_path / "r.json.gz").read_bytes()
    write_record(record, tmp_path / "r.json.gz")
    assert (tmp_path / "r.json.gz").read_bytes() == first  # no timestamp: the same record, the same bytes
    assert leaderboard.read_record(tmp_path / "r.json") == leaderboard.read_record(tmp_path / "r.json.gz") == record
    (tmp_path / "bad.json.gz").write_bytes(b"not gzip at all")
    with pytest.raises(leaderboard.ResultRecordError, match="cannot be read"):
        leaderboard.read_record(tmp_path / "bad.json.gz")


def _submit_many(db: str, records: list, barrier) -> None:
    barrier.wait()
    for rec in records:
        leaderboard.submit(rec, db)


def test_two_concurrent_submitters_lose_nothing(tmp_path, record):
    db = str(tmp_path / "lb.sqlite")
    leaderboard.connect(db).close()
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    mine = [[_variant(record, 10 * w + k) for k in range(8)] for w in range(2)]
    workers = [ctx.Process(target=_submit_many, args=(db, mine[w], barrier)) for w in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0, 0]
    con = sqlite3.connect(db)
    digests = {r[0] for r in con.execute("SELECT digest FROM results")}
    assert digests == {record_digest(r) for batch in mine for r in batch}
    assert con.execute("SELECT COUNT(*) FROM pairings").fetchone()[0] == 16 * 2
    con.close()
    assert leaderboard.consistent(db) == []


KILLED = """
import json, os, signal, sys
from agents.bench import leaderboard
record = json.load(open(sys.argv[2]))
leaderboard.submit(record, sys.argv[1], before_commit=lambda con: os.kill(os.getpid(), signal.SIGKILL))
"""


def test_a_killed_submission_leaves_the_database_consistent(tmp_path, record):
    db = tmp_path / "lb.sqlite"
    leaderboard.submit(_variant(record, 1), db)
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(_variant(record, 2)))
    proc = subprocess.run([sys.executable, "-c", KILLED, str(db), str(path)], cwd=ROOT, capture_output=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL
    assert leaderboard.consistent(db) == []
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 1
    assert con.execute("SELECT COUNT(*) FROM pairings").fetchone()[0] == 2
    con.close()
    assert leaderboard.submit(_variant(record, 2), db).new  # the same record lands when submitted again
    assert len(leaderboard.records_of(db, "v1", "mauscheln_4p", shipped=False)) == 2


# ---------------------------------------------------------------------- replays
def test_replays_follow_the_engine_and_hide_what_a_seat_did_not_see(record, ds4):
    games = replay.replay_deal(record, 1, 0)
    assert len(games) == 8
    rep = replay.game_replay(record, 1, 0, "alone", 2, games)
    assert rep["seats"] == ["expert", "expert", "random", "expert"]
    assert sum(rep["deltas"]) == sum(r["deltas"][s] for d in rep["deals"] for r in d["results"] for s in range(4))
    legend = replay.table_legend(ds4.game)
    first = rep["deals"][0]
    everything = replay.render_replay(rep, legend, None, ascii_cards=True)
    seat1 = replay.render_replay(rep, legend, 1, ascii_cards=True)
    codes = legend["cards"]
    for s in range(4):
        hand = " ".join(codes[c] for c in first["hands"][s])
        assert hand in everything
        assert (hand in seat1) == (s == 1)
    assert "[legal:" in everything
    others = [line for line in seat1.splitlines() if line.strip().startswith(("seat 0 ", "seat 2 ", "seat 3 "))]
    assert all("[legal:" not in line for line in others)


def test_a_deal_whose_games_were_not_kept_is_played_again_and_checked(record):
    kept = replay.replay_deal(record, 0, 1)
    again = replay.replay_deal({**record, "pairs": [{**record["pairs"][0], "replays": []}]}, 0, 1)
    assert again == kept
    edited = copy.deepcopy(record)
    edited["pairs"][0]["replays"] = []
    edited["pairs"][0]["per_deal"][1][0] += 1.0
    with pytest.raises(replay.ReplayError, match="played again"):
        replay.replay_deal(edited, 0, 1)
    with pytest.raises(replay.ReplayError, match="not played"):
        replay.replay_deal(record, 0, 3)


def test_a_replay_rebuilds_every_state_of_the_game(ds4):
    """apply_step over the recorded steps gives the engine's table after every step (every ruleset)."""
    for table in ("mauscheln_4p", "mauscheln_classic_4p", "mousel_4p", "mouche_4p", "muschka_4p"):
        ds = decks.load_deal_set("v1", table)
        rec = run_bench("random", ds, field=["expert"], deals=2, replays=2)
        for deal in range(2):
            games = replay.replay_deal(rec, 0, deal)
            for (fmt, lone), moves in zip(game_order(ds.players), games):
                rep = replay.game_replay(rec, 0, deal, fmt, lone, games)
                state = ds.game.new_session(np.random.default_rng(ds.deals[deal].session_seed),
                                            dealer=ds.deals[deal].dealer, deal=ds.deals[deal].spec)
                it = iter(moves)
                for d in rep["deals"]:
                    view = replay.initial_view(d)
                    for step in d["steps"]:
                        engine_deal = state.deal
                        ds.game.apply(state, next(it))
                        view = replay.apply_step(view, step, ds.game.num_cards)
                        assert view["hands"] == [list(replay._ids(h)) for h in engine_deal.hands]
                        assert view["tricks_won"] == list(engine_deal.tricks_won)
                        assert view["trick"] == [[s, c] for s, c in engine_deal.trick]


def test_replay_command(tmp_path, record, capsys):
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(record))
    assert replay.main([str(path), "--deal", "0", "--opponent", "expert", "--seat", "1", "--view", "2"]) == 0
    out = capsys.readouterr().out
    assert "view: seat 2" in out and "hidden" in out and "session:" in out
    assert replay.main([str(path), "--deal", "0", "--view", "7"]) == 2
    assert replay.main([str(path), "--deal", "0", "--opponent", "pimc"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("mauscheln replay: error: ") for line in err)


# ---------------------------------------------------------------------- report and CLI
def test_cli_run_submit_leaderboard_report(tmp_path, capsys):
    db, out = str(tmp_path / "lb.sqlite"), tmp_path / "r.json"
    assert cli.main(["run", "expert", "--ruleset", "muschka", "--deals", "2", "--field", "random", "beginner",
                     "--out", str(out), "--submit", "--db", db, "--no-progress"]) == 0
    assert cli.main(["submit", str(out), "--db", db]) == 0
    assert cli.main(["leaderboard", "--db", db, "--ruleset", "muschka"]) == 0
    text = capsys.readouterr().out
    assert "stored as result 1" in text and "already in the leaderboard" in text and "**muschka, 4 players**" in text
    assert cli.main(["leaderboard", "--db", db, "--json", "--only", "yours"]) == 0
    assert [b["table"] for b in json.loads(capsys.readouterr().out)] == ["muschka_4p"]
    assert cli.main(["report", "--out", str(tmp_path / "rep"), "--db", db, "--replay-deals", "1", "--only",
                     "yours"]) == 0
    page = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    data = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    assert data["tables"][0]["table"] == "muschka_4p" and data["tables"][0]["games"]
    assert "http://" not in page and "https://" not in page and "<script src" not in page
    assert '<script type="application/json" id="report-data">' in page
    assert cli.main(["tables"]) == 0
    assert "mauscheln_7p" in capsys.readouterr().out


RUN = ["run", "random", "--ruleset", "mousel", "--deals", "2", "--field", "beginner", "expert", "--no-progress"]


def _stop_at(monkeypatch, calls: int) -> list[str]:
    """Make ``bench run``'s pairing number ``calls`` (from 1) stop with Ctrl-C; the labels of those played."""
    from agents.bench import run

    played, evaluate = [], getattr(run.evaluate_pair, "__wrapped__", run.evaluate_pair)

    def evaluate_or_stop(*args, **kwargs):
        if len(played) + 1 == calls:
            raise KeyboardInterrupt
        played.append(kwargs["label"])
        return evaluate(*args, **kwargs)

    evaluate_or_stop.__wrapped__ = evaluate
    monkeypatch.setattr(run, "evaluate_pair", evaluate_or_stop)
    return played


@pytest.fixture
def clean(monkeypatch):
    """A clean checkout for ``bench run`` (the one under test may have uncommitted changes)."""
    from agents.bench import run

    monkeypatch.setattr(run, "project_info", lambda: {"version": "test", "commit": "c0ffee", "dirty": False})


def test_a_stopped_run_goes_on_from_the_pairings_it_kept(tmp_path, capsys, monkeypatch, clean):
    """Ctrl-C in the second pairing keeps the first in ``<out>.partial.json``; the same command then plays only
    the second, and writes the record an uninterrupted run writes (but for timing)."""
    whole, out = tmp_path / "whole.json", tmp_path / "r.json"
    partial = tmp_path / "r.json.partial.json"
    assert cli.main([*RUN, "--out", str(whole)]) == 0
    played = _stop_at(monkeypatch, 2)
    assert cli.main([*RUN, "--out", str(out)]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert played == ["random vs beginner"] and not out.exists() and partial.is_file()
    assert err[-1].endswith(f"kept in {partial}: the same command goes on from there")
    played = _stop_at(monkeypatch, 99)
    assert cli.main([*RUN[:-1], "--out", str(out)]) == 0  # with the progress lines, timed on the pairings left
    text = capsys.readouterr().out
    assert played == ["random vs expert"] and "random vs beginner: 2 deals kept from the stopped run" in text
    assert not partial.exists()
    a, b = leaderboard.read_record(whole), leaderboard.read_record(out)
    assert without_timing(a) == without_timing(b) and b["wall_seconds"] >= 0


def test_a_run_stopped_within_a_pairing_goes_on_from_its_last_block(tmp_path, capsys, monkeypatch, clean):
    """Ctrl-C after two blocks of deals of the first pairing keeps those blocks (the games' actions of the
    record's replays only); the same command plays the rest of that pairing, then the next, and writes the record
    an uninterrupted run writes (but for timing). A kept block that does not fit the pairing is refused."""
    from agents.evaluation import duplicate

    run6 = [*RUN[:5], "6", *RUN[6:], "--replays", "3"]
    whole, out = tmp_path / "whole.json", tmp_path / "r.json"
    partial = tmp_path / "r.json.partial.json"
    assert cli.main([*run6, "--out", str(whole)]) == 0
    play, blocks = duplicate.play_block, []

    def play_or_stop(settings, candidate, baseline, start, stop, *args, **kwargs):
        if len(blocks) == stop_after:
            raise KeyboardInterrupt
        blocks.append((baseline, start, stop))
        return play(settings, candidate, baseline, start, stop, *args, **kwargs)

    monkeypatch.setattr(duplicate, "play_block", play_or_stop)
    stop_after = 2
    assert cli.main([*run6, "--out", str(out)]) == 130
    assert blocks == [("beginner", 0, 1), ("beginner", 1, 2)] and not out.exists()
    kept = json.loads(partial.read_text(encoding="utf-8"))
    assert kept["pairs"] == {} and kept["open"]["opponent"] == "beginner"
    assert [b["start"] for b in kept["open"]["blocks"]] == [0, 1]
    assert all(len(a) == 8 for b in kept["open"]["blocks"] for a in b["actions"])  # both formats, 4 rotations
    capsys.readouterr()
    blocks.clear()
    stop_after = 8  # the rest of the first pairing (4 blocks), then 4 of the second
    assert cli.main([*run6, "--out", str(out)]) == 130
    assert "2 deal(s) of the pairing against beginner" in capsys.readouterr().out
    assert [b[1] for b in blocks] == [2, 3, 4, 5, 0, 1, 2, 3]
    kept = json.loads(partial.read_text(encoding="utf-8"))
    assert list(kept["pairs"]) == ["beginner"] and kept["open"]["opponent"] == "expert"
    assert [[a is None for a in b["actions"]] for b in kept["open"]["blocks"]] == [[False]] * 3 + [[True]]
    stop_after = 99
    blocks.clear()
    assert cli.main([*run6, "--out", str(out)]) == 0
    assert [b[1] for b in blocks] == [4, 5] and not partial.exists()
    assert without_timing(leaderboard.read_record(whole)) == without_timing(leaderboard.read_record(out))

    stop_after, out, partial = 1, tmp_path / "s.json", tmp_path / "s.json.partial.json"
    blocks.clear()
    assert cli.main([*run6, "--out", str(out)]) == 130
    bad = json.loads(partial.read_text(encoding="utf-8"))
    bad["open"]["blocks"][0]["start"] = 6  # past the pairing's deals
    partial.write_text(json.dumps(bad), encoding="utf-8")
    capsys.readouterr()
    assert cli.main([*run6, "--out", str(out)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(partial) in line and "do not fit" in line and "delete it" in line


def test_a_partial_file_of_another_run_is_refused_and_kept(tmp_path, capsys, monkeypatch, clean):
    out = tmp_path / "r.json"
    partial = tmp_path / "r.json.partial.json"
    _stop_at(monkeypatch, 2)
    assert cli.main([*RUN, "--out", str(out)]) == 130
    kept = partial.read_bytes()
    capsys.readouterr()
    assert cli.main([*RUN[:5], "3", *RUN[6:], "--out", str(out)]) == 2  # --deals 3
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(partial) in line and "another run (its pairings differ)" in line and "delete the file" in line
    assert partial.read_bytes() == kept and not out.exists()
    for text in ("{not json", '{"run": {}, "pairs": [], "seconds": 1}', '{"run": {}, "pairs": {}, "seconds": -1}',
                 '{"run": {}, "pairs": {}, "seconds": 1, "open": {"opponent": 3, "seconds": 0, "blocks": []}}',
                 '{"run": {}, "pairs": {}, "seconds": 1, "open": {"opponent": "expert", "seconds": 0, '
                 '"blocks": [{"start": "0"}]}}'):
        partial.write_text(text, encoding="utf-8")
        assert cli.main([*RUN, "--out", str(out)]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert str(partial) in line and "cannot be read" in line


def test_a_checkout_with_changes_keeps_no_partial_file(tmp_path, capsys, monkeypatch):
    from agents.bench import run

    monkeypatch.setattr(run, "project_info", lambda: {"version": "test", "commit": "c0ffee", "dirty": True})
    _stop_at(monkeypatch, 2)
    assert cli.main([*RUN, "--out", str(tmp_path / "r.json")]) == 130
    assert capsys.readouterr().err.strip().endswith("interrupted; nothing was written")
    assert list(tmp_path.iterdir()) == []


def test_demo_plays_any_agents(capsys):
    from agents.play.demo import main

    assert main(["--agents", "expert", "random", "beginner", "random", "--deals", "1", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "seat 0 expert, seat 1 random, seat 2 beginner, seat 3 random" in out and "session rewards" in out
    assert main(["--agents", "expert", "random"]) == 2
    assert main(["--agents", "nobody"]) == 2
    assert main(["--agents", "pimc:samples=0"]) == 2  # an agent's own check of a value: one line, no traceback
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("mauscheln demo: error: ") for line in err)


def test_mauscheln_command_lists_bench_and_replay():
    from mauscheln.cli import SUBCOMMANDS, _importable

    assert _importable(SUBCOMMANDS["bench"][0]) and _importable(SUBCOMMANDS["replay"][0])


# ---------------------------------------------------------------------- the page in a browser
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@pytest.mark.slow
def test_the_report_replays_a_game_in_headless_chromium(tmp_path, ds4):
    """Opens the report in Debian's chromium (selenium with the system chromedriver; `apt-get install chromium
    chromium-driver`, `pip install -e '.[browser]'`), steps through a replay, checks the chosen seat's cards and
    that nothing hidden is shown in seat view, and saves screenshots into the test's tmp dir."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("needs Debian's chromium and chromium-driver")
    db = tmp_path / "lb.sqlite"
    rec = run_bench("expert", ds4, field=["random"], deals=2, replays=2)
    leaderboard.submit(rec, db)
    from agents.bench.report import write_report

    write_report(tmp_path / "rep", db=db, replay_deals=2, shipped=False)
    artefacts = tmp_path  # pytest keeps the last runs' tmp dirs: the screenshots stay there
    data = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    games = data["tables"][0]["games"]["expert|random"]["deals"]["1"]
    codes = data["tables"][0]["legend"]["cards"]
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-dev-shm-usage", "--window-size=1300,1800"):
        options.add_argument(arg)
    from selenium.webdriver.chrome.service import Service

    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get((tmp_path / "rep" / "index.html").as_uri())
        assert "Mauscheln benchmark" in driver.title
        assert driver.find_elements(By.CSS_SELECTOR, "table.ratings tr")
        Select(driver.find_element(By.ID, "sel-a")).select_by_value("expert")
        Select(driver.find_element(By.ID, "sel-b")).select_by_value("random")
        Select(driver.find_element(By.ID, "sel-deal")).select_by_value("1")
        Select(driver.find_element(By.ID, "sel-format")).select_by_value("field")
        Select(driver.find_element(By.ID, "sel-lone")).select_by_value("1")
        game = games[4 + 1]  # format field, lone seat 1: random at seat 1, expert elsewhere
        assert game["format"] == "field" and game["lone_seat"] == 1
        assert driver.find_element(By.CSS_SELECTOR, '#seats tr[data-seat="1"]').text.split()[1] == "random"
        steps = game["deals"][0]["steps"]
        trump = game["deals"][0]["trump"]["card"]

        def hand_codes(seat: int) -> list[str]:
            cell = driver.find_element(By.CSS_SELECTOR, f'#seats td.hand[data-seat="{seat}"]')
            return [e.get_attribute("data-card") for e in cell.find_elements(By.CSS_SELECTOR, ".card")]

        for seat in range(4):  # every seat's view, every step of the game
            Select(driver.find_element(By.ID, "sel-view")).select_by_value(str(seat))
            driver.find_element(By.ID, "first").click()
            view = replay.initial_view(game["deals"][0])
            known = set(replay.seen_cards(view, seat)) | {trump}  # what this seat may see: its cards, public ones
            for k in range(len(steps) + 1):
                if k:
                    driver.find_element(By.ID, "next").click()
                    step = steps[k - 1]
                    view = replay.apply_step(view, step, len(codes))
                    if step["seat"] == seat:
                        known |= {a for a in [step["action"], *step.get("legal", [])] if a < len(codes)}
                    elif not step.get("private") and step["action"] < len(codes):
                        known.add(step["action"])  # a card played to a trick is public
                    known |= set(replay.seen_cards(view, seat))
                assert driver.find_element(By.ID, "pos").text.startswith(f"step {k} ")
                assert hand_codes(seat) == [codes[c] for c in replay.seen_cards(view, seat)]
                for other in set(range(4)) - {seat}:
                    assert hand_codes(other) == []  # another seat's cards: never shown in seat view
                shown = {e.get_attribute("data-card") for e in driver.find_elements(By.CSS_SELECTOR, "#game .card")}
                assert shown <= {codes[c] for c in known}, (seat, k, shown - {codes[c] for c in known})
                for li in driver.find_elements(By.CSS_SELECTOR, "#log li"):
                    if int(li.get_attribute("data-seat")) != seat:
                        assert not li.find_elements(By.CSS_SELECTOR, ".legal")  # others' alternatives: hidden
                        if steps[int(li.get_attribute("data-index"))].get("private"):
                            assert not li.find_elements(By.CSS_SELECTOR, ".card")
                if seat == 1 and k == min(8, len(steps)):
                    driver.save_screenshot(str(artefacts / "replay_seat_view.png"))
            settlement = driver.find_element(By.ID, "settlement").text
            assert game["deals"][0]["results"][0]["lines"][0] in settlement
        Select(driver.find_element(By.ID, "sel-view")).select_by_value("all")
        driver.find_element(By.ID, "first").click()
        for s in range(4):
            assert hand_codes(s) == [codes[c] for c in game["deals"][0]["hands"][s]]
        driver.find_element(By.ID, "last").click()
        assert driver.find_elements(By.CSS_SELECTOR, "#log li .legal")  # all hands: every seat's alternatives
        driver.save_screenshot(str(artefacts / "replay_all_hands.png"))
    finally:
        driver.quit()
    assert (artefacts / "replay_seat_view.png").stat().st_size > 10_000
    print(f"screenshots in {artefacts}")


def test_the_suite_script_plays_each_pairing_once_and_resumes(tmp_path, capsys, monkeypatch):
    """benchmarks/bench_suite.py: every agent of the field once, each pairing played on one side and mirrored on
    the other; run again, it submits the records it finds instead of playing them."""
    from agents.bench import run

    # pairings are mirrored only between records of one clean commit; the checkout under test may be dirty
    monkeypatch.setattr(run, "project_info", lambda: {"version": "test", "commit": "c0ffee", "dirty": False})
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_suite
    finally:
        sys.path.pop(0)
    args = ["--tables", "mousel_4p", "--deals", "2", "--slow-deals", "1", "--workers", "1", "--out", str(tmp_path)]
    assert bench_suite.main(args) == 0
    out = capsys.readouterr().out
    field = run.reference_field(decks.load_deal_set("v1", "mousel_4p"))
    searching = [spec for spec in field if bench_suite.slow(spec)]
    assert searching == ["pimc", "pimc:model=mousel4,phases=play"]  # pimc plays mousel, and the search on mousel4
    k, s = len(field), len(searching)
    c, pairs = k - s, k * (k - 1) // 2  # c agents that do not search
    files = sorted(p.name for p in (tmp_path / "mousel_4p").iterdir())
    assert len(files) == k and {"beginner.json.gz", "expert.json.gz", "pimc.json.gz", "random.json.gz",
                                "pimc_model=mousel4_phases=play.json.gz"} <= set(files)
    records = {p.name: leaderboard.read_record(p) for p in (tmp_path / "mousel_4p").iterdir()}
    sources = [p["source"] for r in records.values() for p in r["pairs"]]
    # the others play among themselves first; then each searching agent against the whole field, the second
    # mirroring its pairing with the first
    assert sources.count("played") == pairs and len(sources) == c * (c - 1) + s * (k - 1)
    assert out.count("mirrored from record") == c * (c - 1) // 2 + s * (s - 1) // 2
    assert [p["source"] for p in records["pimc.json.gz"]["pairs"]] == ["played"] * (k - 1)
    assert sorted(p["source"] != "played" for p in records["pimc_model=mousel4_phases=play.json.gz"]["pairs"]) \
        == [False] * (k - 2) + [True]
    (b,) = leaderboard.leaderboard(tmp_path / "leaderboard.sqlite", shipped=False)
    assert b.records == k and len(b.pairs) == pairs
    slow_pairs = pairs - c * (c - 1) // 2
    assert sorted(p.deals for p in b.pairs) == [1] * slow_pairs + [2] * (pairs - slow_pairs)  # searching: 1 deal
    assert bench_suite.main(args) == 0
    again = capsys.readouterr().out
    assert again.count("$ mauscheln bench submit") == k and "bench run" not in again


def test_the_documented_commands_parse():
    """Every ``mauscheln bench``, ``replay`` and ``demo`` line of the README and docs/evaluation/benchmark.md is accepted by
    its command's parser (nothing is run)."""
    from agents.bench.replay import build_parser as replay_parser
    from agents.play.demo import build_parser as demo_parser

    parsers = {"bench": cli.build_parser(), "replay": replay_parser(), "demo": demo_parser()}
    seen = set()
    for page in ("README.md", "docs/evaluation/benchmark.md"):
        for block in re.findall(r"```bash\n(.*?)```", (ROOT / page).read_text(encoding="utf-8"), re.S):
            for line in block.splitlines():
                words = shlex.split(line, comments=True)
                if len(words) >= 2 and words[0] == "mauscheln" and words[1] in parsers:
                    parsers[words[1]].parse_args(words[2:])
                    seen.add(words[1] if words[1] != "bench" else f"bench {words[2]}")
    assert {"bench run", "bench submit", "bench leaderboard", "bench report", "replay", "demo"} <= seen


def test_the_shipped_records_are_valid_and_the_results_pages_show_them():
    """agents/bench/records/v1 holds records of the shipped deal sets, every table's (a changed deal set refuses
    them: run them again); each ruleset's page (docs/results/<ruleset>.md) shows its default table's ratings,
    cross-table and pairings as they give them, and docs/results/leaderboard.md every other table's, linking the
    default ones (``python benchmarks/results_pages.py rulesets leaderboard`` rewrites them)."""
    from agents.evaluation.crosstables import pairing_table
    from mauscheln_env.config import make_config

    paths = leaderboard.shipped_paths("v1")
    assert paths and all(p.is_relative_to(ROOT / "agents" / "bench" / "records" / "v1") for p in paths)
    assert {p.parent.name for p in paths} == set(decks.tables_of("v1"))
    assert len(leaderboard.shipped_records("v1")) == len(paths)
    results = ROOT / "docs" / "results"
    page = (results / "leaderboard.md").read_text(encoding="utf-8")
    boards = leaderboard.leaderboard(yours=False)
    assert len(boards) == len(decks.tables_of("v1"))
    defaults = {decks.table_name(r, make_config(r).num_players): r for r in RULESETS}
    for board in boards:
        deal_set = decks.load_deal_set("v1", board.table)
        status = leaderboard.field_markdown(leaderboard.field_status(
            board, reference_keys(deal_set), min(FIELD_DEALS, len(deal_set))))
        if board.table not in defaults:
            assert leaderboard.board_markdown(board, crosstable=True) in page, board.table
            assert status in page, board.table
            continue
        ruleset = defaults[board.table]
        assert f"]({ruleset}.md)" in page and leaderboard.board_markdown(board, crosstable=True) not in page
        own = (results / f"{ruleset}.md").read_text(encoding="utf-8")
        assert leaderboard.board_markdown(board, crosstable=False) in own, board.table
        assert leaderboard.crosstable_markdown(board.agents, board.pairs, board.ratings) in own, board.table
        assert "\n".join(pairing_table(board.pairs)) in own, board.table
        assert status in own and status not in page, board.table


def test_a_board_says_how_much_of_its_reference_field_it_holds():
    """A table's reference field is complete when every agent of it has a record on the board and every pairing
    among them has at least the minimum deals; otherwise the status names what is missing and what is short."""
    board = next(b for b in leaderboard.leaderboard(yours=False) if b.table == "mauscheln_3p")
    field = list(board.agents)
    fewest = min(p.deals for p in board.pairs)
    status = leaderboard.field_status(board, field, fewest)
    assert status.complete and "complete, every pairing on at least" in leaderboard.field_markdown(status)
    newer = "learned:checkpoint=mauscheln3#000000000000"  # another version of a policy: its record does not count
    status = leaderboard.field_status(board, [*field, newer], fewest)
    assert status.missing == (newer,) and not status.short and not status.complete
    assert f"no record yet of `{newer}`" in leaderboard.field_markdown(status)
    status = leaderboard.field_status(board, field[:3], fewest + 1)
    played = {frozenset((p.candidate, p.baseline)): p.deals for p in board.pairs}
    assert status.short == tuple((a, b, played[frozenset((a, b))]) for i, a in enumerate(field[:3])
                                 for b in field[i + 1:3])
    assert f"({fewest} deals)" in leaderboard.field_markdown(status) and not status.missing


def test_the_cost_page_is_written_from_its_data(tmp_path, capsys):
    """docs/results/bench-cost.md is benchmarks/bench_cost.json as ``bench_cost.py --page`` writes it (each table's
    figures with the command, date and commit of their own measurement); a file it cannot read is refused in one
    line and nothing is written."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_cost
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))

    def body(text: str) -> str:  # below the page's own date and commit
        return text.split("* data:", 1)[1]

    out = tmp_path / "page.md"
    assert bench_cost.main(["--page", "--out", str(out)]) == 0
    shipped = (ROOT / "docs" / "results" / "bench-cost.md").read_text(encoding="utf-8")
    assert body(out.read_text(encoding="utf-8")) == body(shipped)
    data = json.loads((ROOT / "benchmarks" / "bench_cost.json").read_text(encoding="utf-8"))
    for table, row in data["estimates"].items():
        assert f"| {table} | " in shipped and f"| {row['date']} | {row['commit']} |" in shipped
    bad = tmp_path / "bad.json"
    for text in ("{not json", "[]", '{"estimates": {"t": {}}, "runs": {}}'):
        bad.write_text(text, encoding="utf-8")
        capsys.readouterr()
        assert bench_cost.main(["--page", "--data", str(bad), "--out", str(tmp_path / "none.md")]) == 2
        said = capsys.readouterr().err.strip().splitlines()
        assert len(said) == 1 and said[0].startswith(f"error: {bad} is not this script's data file"), said
        assert not (tmp_path / "none.md").exists()


# ---------------------------------------------------------------------- shipped records beside the user's
def _strict(text: str):
    """JSON as a browser's ``JSON.parse`` reads it: NaN and Infinity are errors."""
    def refuse(word: str):
        raise ValueError(f"{word} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def mine(ds4):
    """An agent of the user's own (expert with another bidding risk) against random, on one deal: its intervals
    are undefined."""
    return run_bench("expert:risk=0.5", ds4, field=["random"], deals=1, replays=1)


def _fresh_env(tmp_path: Path) -> dict[str, str]:
    """A user who has never run mauscheln: an empty home, no XDG variables, the checkout only on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    return env


def _mauscheln(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mauscheln", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_fresh_install_shows_the_shipped_records_and_yours_beside_them_marked(tmp_path, mine):
    """From a folder outside the checkout, with an empty home: the leaderboard shows every table from the
    shipped records and creates nothing; a submission goes to the user's database (never into the shipped
    files) and shows up beside the shipped records, marked."""
    env, cwd = _fresh_env(tmp_path), tmp_path / "elsewhere"
    cwd.mkdir()
    shipped_before = _tree(leaderboard.RECORDS)
    run = _mauscheln(["bench", "leaderboard", "--brief"], cwd, env)
    assert run.returncode == 0, run.stderr
    for table in decks.tables_of("v1"):
        name, _, players = table.rpartition("_")
        assert f"**{name}, {players[:-1]} players**" in run.stdout
    assert " from |" not in run.stdout and "yours" not in run.stdout  # nothing of the user's yet
    assert not (tmp_path / "home").exists()  # reading created no database
    from agents.bench.run import write_record

    write_record(mine, cwd / "mine.json")
    run = _mauscheln(["bench", "submit", "mine.json"], cwd, env)
    assert run.returncode == 0 and "stored as result 1" in run.stdout, run.stderr
    db = tmp_path / "home" / ".local" / "share" / "mauscheln" / "leaderboard.sqlite"
    assert db.is_file()
    run = _mauscheln(["bench", "leaderboard", "--ruleset", "mauscheln", "--players", "4", "--brief"], cwd, env)
    assert run.returncode == 0, run.stderr
    rows = {line.split("|")[2].strip(): line.split("|")[-2].strip() for line in run.stdout.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip().isdigit()}
    assert rows["expert:risk=0.5"] == "yours" and rows["expert"] == rows["beginner"] == "shipped"
    assert rows["random"] == "shipped"  # its own records are shipped (the user's pairing against it counts too)
    shipped = sum(p.parent.name == "mauscheln_4p" for p in leaderboard.shipped_paths("v1"))
    assert f"{shipped + 1} result record(s), 1 of them yours" in run.stdout and "| rank | agent |" in run.stdout
    run = _mauscheln(["bench", "leaderboard", "--ruleset", "mauscheln", "--players", "4", "--only", "shipped"],
                     cwd, env)
    assert "risk" not in run.stdout and f"{shipped} result record(s))" in run.stdout
    assert _tree(leaderboard.RECORDS) == shipped_before  # the shipped files are never written


def test_the_leaderboard_counts_a_shipped_record_you_also_submitted_once(tmp_path):
    db = tmp_path / "lb.sqlite"
    path = leaderboard.shipped_paths("v1")[0]
    leaderboard.submit(leaderboard.read_record(path), db)
    (b,) = leaderboard.leaderboard(db, tables=[path.parent.name])
    (alone,) = leaderboard.leaderboard(db, tables=[path.parent.name], yours=False)
    assert b.yours == 0 and b.records == alone.records and b.ratings == alone.ratings
    assert {e.origin for e in b.entries} == {"shipped"}


def test_report_records_and_leaderboard_are_strict_json_with_one_deal_pairings(tmp_path, mine, capsys):
    """Every JSON written from records that hold a one-deal pairing (the user's, beside the shipped ones) parses
    strictly, the page's embedded data and the leaderboard's ``--json`` included; undefined intervals are null,
    shown as —."""
    from agents.bench.report import write_report
    from agents.bench.run import write_record

    assert mine["pairs"][0]["advantage"]["low"] == float("-inf")  # in memory: one deal, no interval
    write_record(mine, tmp_path / "mine.json")
    write_record(mine, tmp_path / "mine.json.gz")
    plain = _strict((tmp_path / "mine.json").read_text(encoding="utf-8"))
    assert plain["pairs"][0]["advantage"]["low"] is None
    assert leaderboard.read_record(tmp_path / "mine.json.gz") == plain
    db = tmp_path / "lb.sqlite"
    leaderboard.submit(leaderboard.read_record(tmp_path / "mine.json"), db)
    write_report(tmp_path / "rep", db=db, tables=["mauscheln_4p", "mauscheln_7p"], replay_deals=1)
    data = _strict((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    page = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    embedded = page.split('<script type="application/json" id="report-data">', 1)[1].split("</script>", 1)[0]
    assert _strict(embedded) == data
    assert "Infinity" not in embedded and "NaN" not in embedded
    assert [t["table"] for t in data["tables"]] == ["mauscheln_4p", "mauscheln_7p"]
    four_board = data["tables"][0]["board"]
    assert any(p["advantage"]["low"] is None for p in four_board["pairs"])
    assert data["records"]["yours"] == 1 and four_board["yours"] == 1
    assert "<th>from</th>" in page and ">yours</td>" in page and "± —" in page and "± inf" not in page
    assert cli.main(["leaderboard", "--db", str(db), "--json", "--ruleset", "mauscheln", "--players", "4"]) == 0
    (board,) = _strict(capsys.readouterr().out)
    assert board["table"] == "mauscheln_4p" and any(p["advantage"]["high"] is None for p in board["pairs"])


def test_a_database_an_older_version_wrote_with_infinity_still_reads(tmp_path, mine):
    """Before strict JSON the stored record text held Infinity and its digest was taken over that text: the
    database stays consistent and its records are shown, undefined as None."""
    db = tmp_path / "lb.sqlite"
    leaderboard.submit(mine, db)
    con = sqlite3.connect(db)
    (text,) = con.execute("SELECT record FROM results").fetchone()
    old = json.loads(text)
    old["pairs"][0]["advantage"].update(low=float("-inf"), high=float("inf"))
    legacy = json.dumps(old, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    import hashlib

    con.execute("UPDATE results SET record = ?, digest = ?", (json.dumps(old, separators=(",", ":")),
                                                              "sha256:" + hashlib.sha256(legacy.encode()).hexdigest()))
    con.commit()
    con.close()
    assert leaderboard.consistent(db) == []
    (rec,) = leaderboard.records_of(db, "v1", "mauscheln_4p", shipped=False)
    assert rec["pairs"][0]["advantage"]["low"] is None
    (b,) = leaderboard.leaderboard(db, shipped=False)
    assert {e.agent for e in b.entries} == {"expert:risk=0.5", "random"}


def test_records_of_another_deal_set_in_your_database_are_left_out_with_a_note(tmp_path, record, capsys):
    db = tmp_path / "lb.sqlite"
    leaderboard.submit(record, db)
    leaderboard.submit(_variant(record, 1), db)
    con = sqlite3.connect(db)
    con.execute("UPDATE results SET deal_hash = 'sha256:' || hex(randomblob(32)) WHERE id = 2")  # an older v1
    con.commit()
    con.close()
    with leaderboard.open_view(db, yours=True, shipped=False) as view:
        (b,) = leaderboard.boards(view)
    assert b.records == b.yours == 1
    assert view.notes == [f"1 of your record(s) of v1 mauscheln_4p in {db} were played on another deal set than "
                          "the one shipped here and are left out"]
    assert cli.main(["leaderboard", "--db", str(db), "--only", "yours", "--brief"]) == 0
    out, err = capsys.readouterr()
    assert "1 result record(s), 1 of them yours" in out and err.count("note: 1 of your record(s)") == 1


def test_a_record_of_a_new_agent_with_more_fields_is_accepted(tmp_path, record):
    """A record's agent descriptions may carry fields this version does not know (a later format's): they are
    kept, and checked records stay checked."""
    rec = copy.deepcopy(record)
    extra = {"file": "bots/mybot.py", "file_hash": "sha256:" + "ab" * 32, "entry_point": None}
    rec["agent"].update(extra)
    for p in rec["pairs"]:
        p["opponent"].update(entry_point=None, version="1.0")
    for f in rec["field"]:
        f.update(extra)
    db = tmp_path / "lb.sqlite"
    assert leaderboard.submit(rec, db).new
    (stored,) = leaderboard.records_of(db, "v1", "mauscheln_4p", shipped=False)
    assert stored["agent"]["file_hash"] == extra["file_hash"]
    (b,) = leaderboard.leaderboard(db, shipped=False)
    assert {e.agent for e in b.entries} == {"random", "beginner", "expert"}
    bad = copy.deepcopy(rec)
    bad["pairs"][0].update(wins=3, losses=0, ties=0)
    with pytest.raises(leaderboard.ResultRecordError, match="do not follow"):
        leaderboard.check_record(bad)


def test_a_shipped_record_that_fails_its_checks_stops_with_one_line(tmp_path, monkeypatch, capsys):
    records = tmp_path / "records"
    shutil.copytree(leaderboard.RECORDS, records)
    path = sorted((records / "v1" / "mouche_4p").glob("*.json.gz"))[0]
    rec = leaderboard.read_record(path)
    rec["pairs"][0]["wins"] += 1
    from agents.bench.run import write_record

    write_record(rec, path)
    monkeypatch.setattr(leaderboard, "RECORDS", records)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert cli.main(["leaderboard", "--brief"]) == 2
    assert cli.main(["report", "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("mauscheln bench ") and ": error: shipped record mouche_4p/"
                                 in line and "reinstall" in line for line in err)
    assert not (tmp_path / "rep").exists()
    shutil.copy(ROOT / "agents" / "bench" / "records" / "v1" / "mouche_4p" / path.name, path)  # mended
    shutil.copy(path, records / "v1" / "muschka_4p" / "stray.json.gz")  # a mouche record filed under muschka
    assert cli.main(["leaderboard"]) == 2
    assert "filed under v1 muschka_4p" in capsys.readouterr().err


def test_bad_databases_give_one_line_and_exit_2(tmp_path, record, capsys):
    """A --db that is missing (to read), a folder, not SQLite, SQLite of something else, of a newer schema, or
    under a file: one error line, exit 2, and nothing created."""
    folder = tmp_path / "folder"
    folder.mkdir()
    (tmp_path / "text.sqlite").write_text("plain text, not a database " * 100)
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE t (x)")
    other.commit()
    other.close()
    newer = tmp_path / "newer.sqlite"
    leaderboard.connect(newer).close()
    con = sqlite3.connect(newer)
    con.execute("PRAGMA user_version = 99")
    con.close()
    (tmp_path / "afile").write_text("x")
    rec = tmp_path / "rec.json"
    rec.write_text(json.dumps(record), encoding="utf-8")
    reads = [tmp_path / "missing.sqlite", folder, tmp_path / "text.sqlite", tmp_path / "other.sqlite", newer]
    for db in reads:
        assert cli.main(["leaderboard", "--db", str(db)]) == 2
        assert cli.main(["report", "--db", str(db), "--out", str(tmp_path / "rep")]) == 2
    for db in [folder, tmp_path / "text.sqlite", tmp_path / "other.sqlite", newer, tmp_path / "afile" / "lb.sqlite"]:
        assert cli.main(["submit", str(rec), "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 * len(reads) + 5
    assert all(line.startswith("mauscheln bench ") and ": error: --db " in line for line in err), err
    assert not (tmp_path / "missing.sqlite").exists() and not (tmp_path / "rep").exists()
    assert [p.name for p in folder.iterdir()] == []
    (tmp_path / "empty.sqlite").touch()  # an empty file: no leaderboard yet, nothing of the user's to show
    assert leaderboard.open_existing(tmp_path / "empty.sqlite") is None
    assert cli.main(["leaderboard", "--db", str(tmp_path / "empty.sqlite"), "--only", "yours"]) == 0
    assert capsys.readouterr().out.startswith("no results for suite v1 in ")


def test_the_package_data_patterns_cover_what_the_benchmark_reads_at_run_time():
    """pyproject's package-data must name every shipped record, deal set and policy, or a wheel lacks them."""
    import fnmatch

    tomllib = pytest.importorskip("tomllib")
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    needed = {"agents.bench": [*leaderboard.shipped_paths("v1"), *(decks.DECKS / "v1").glob("*.json")],
              "agents.learned": list((ROOT / "agents" / "learned" / "policies").glob("*.safetensors"))}
    for package, files in needed.items():
        base = ROOT.joinpath(*package.split("."))
        assert files
        for f in files:
            rel = f.relative_to(base).as_posix()
            assert any(fnmatch.fnmatch(rel, pattern) for pattern in data[package]), rel


@pytest.mark.slow
def test_a_wheel_installed_outside_the_checkout_shows_the_shipped_leaderboard(tmp_path):
    """Build a wheel from the checkout's files, unpack it as an installation would, and run the leaderboard and
    the report from another folder with an empty home: the records come from the installed package."""
    src, dist, site, cwd = (tmp_path / d for d in ("src", "dist", "site", "elsewhere"))
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist),
                    str(src)], check=True, capture_output=True, timeout=600)
    (wheel,) = dist.glob("mauscheln-*.whl")
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        zf.extractall(site)
    assert {f"agents/bench/records/{p.relative_to(leaderboard.RECORDS).as_posix()}"
            for p in leaderboard.shipped_paths("v1")} <= set(names)
    cwd.mkdir()
    env = _fresh_env(tmp_path)
    env["PYTHONPATH"] = str(site)
    where = subprocess.run([sys.executable, "-c", "import agents.bench.leaderboard as m; print(m.RECORDS)"], cwd=cwd,
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(site)
    run = _mauscheln(["bench", "leaderboard", "--brief"], cwd, env)
    assert run.returncode == 0, run.stderr
    assert all(f"**{t.rpartition('_')[0]}, " in run.stdout for t in decks.tables_of("v1"))
    run = _mauscheln(["bench", "report", "--out", "rep", "--ruleset", "mousel", "--replay-deals", "1"], cwd, env)
    assert run.returncode == 0, run.stderr
    assert _strict((cwd / "rep" / "report.json").read_text(encoding="utf-8"))["tables"][0]["table"] == "mousel_4p"
    assert not (tmp_path / "home" / ".local" / "share" / "mauscheln").exists()  # reading made no database


@pytest.mark.slow
def test_the_report_of_the_shipped_records_opens_in_chromium_and_replays_every_table(tmp_path, mine):
    """The report written from the shipped records (and one record of the user's) in Debian's headless chromium:
    no console error (its data parses: strict JSON), the user's agent marked, and the replay viewer shows a deal
    of every table when the table is chosen; screenshots report-*.png are saved into the test's tmp dir
    (``pytest -m slow -k every_table --basetemp=DIR``)."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("needs Debian's chromium and chromium-driver")
    from agents.bench.report import write_report

    db = tmp_path / "lb.sqlite"
    leaderboard.submit(mine, db)
    write_report(tmp_path / "rep", db=db, replay_deals=1)
    data = _strict((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    tables = [t["table"] for t in data["tables"]]
    assert tables == decks.tables_of("v1") and all(t["games"] for t in data["tables"])
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-dev-shm-usage", "--window-size=1300,1800"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get((tmp_path / "rep" / "index.html").as_uri())
        assert "Mauscheln benchmark" in driver.title
        assert driver.execute_script("return typeof window.replayViewer") == "object"  # the script ran through
        driver.save_screenshot(str(tmp_path / "report-boards.png"))
        marked = driver.find_elements(By.CSS_SELECTOR, "#board-mauscheln_4p table.ratings tr.yours")
        assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in marked] == ["expert:risk=0.5"]
        assert not driver.find_elements(By.CSS_SELECTOR, "#board-mouche_4p table.ratings tr.yours")
        select = Select(driver.find_element(By.ID, "sel-table"))
        assert [o.text for o in select.options] == tables
        for i, t in enumerate(data["tables"]):
            Select(driver.find_element(By.ID, "sel-table")).select_by_index(i)
            assert driver.find_element(By.ID, "empty").get_attribute("hidden") is not None
            assert driver.find_element(By.ID, "game").is_displayed()
            assert driver.find_element(By.ID, "info").text.startswith(f"{t['table']}, suite deal ")
            seats = driver.find_elements(By.CSS_SELECTOR, "#seats tbody tr")
            assert len(seats) == t["players"]
            for _ in range(6):
                driver.find_element(By.ID, "next").click()
            assert driver.find_element(By.ID, "pos").text.startswith("step 6 of ")
            assert driver.find_elements(By.CSS_SELECTOR, "#log li")  # the decisions so far (of the deal shown)
            assert len(driver.find_elements(By.CSS_SELECTOR, "#seats td.hand")) == t["players"]
            Select(driver.find_element(By.ID, "sel-view")).select_by_value("all")
            assert driver.find_elements(By.CSS_SELECTOR, "#seats .card")  # the hands of the deal shown
            driver.execute_script("document.getElementById('viewer').scrollIntoView(true)")
            driver.save_screenshot(str(tmp_path / f"report-{t['table']}.png"))
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []
    finally:
        driver.quit()
    print(f"screenshots in {tmp_path}")


def test_list_flags_of_bench_run_add_up_when_repeated():
    """``--exclude a --exclude b`` leaves both out (a repeated flag that kept only its last value would play the
    first silently)."""
    args = cli.build_parser().parse_args(["run", "random", "--exclude", "pimc", "--exclude", "expert", "beginner",
                                          "--field", "expert", "--field", "beginner"])
    assert args.exclude == ["pimc", "expert", "beginner"] and args.field == ["expert", "beginner"]
