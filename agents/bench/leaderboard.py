"""The leaderboard: result records in an SQLite database, ratings over the shared deal sets.

``mauscheln bench submit RESULT...`` checks each record (:func:`check_record`:
its shape, its figures against its own per-deal values, and its deal-set hash
against the suite shipped here) and stores it in one transaction;
``mauscheln bench leaderboard`` rates every agent of a table from all stored
results (:func:`leaderboard`).

The database is a file (by default ``$XDG_DATA_HOME/mauscheln/leaderboard.sqlite``,
i.e. ``~/.local/share/mauscheln/leaderboard.sqlite``; ``--db PATH``). Every
submission is one ``BEGIN IMMEDIATE`` transaction (SQLite takes the write lock
first and a second writer waits for it, up to a minute), so two submitters at
once both land and a writer killed midway leaves nothing of its record (SQLite
rolls the journal back when the database is next opened). A record is stored
once: submitting the same file again changes nothing.

Ratings: for every pair of agents of a table, the per-deal advantages of all
stored pairings of the two (in either order: A against B and B against A are
the same games with the formats swapped) are pooled deal by deal, the latest
submission of a deal winning; Bradley–Terry strengths are fitted to the
per-deal wins (:func:`agents.evaluation.tournament.bradley_terry`) with 95 % intervals from
the fit's Fisher information (:func:`agents.evaluation.tournament.bradley_terry_intervals`).
An agent is its canonical spec plus the hash of its checkpoint, if it has one, and of its code, if it is
not the project's own (:attr:`agents.bench.run.AgentId.key`: ``my_agent.py:MyAgent#89abcdef0123``).
Records of both formats are read: v1 (spec and checkpoint) and v2 (also class and code hash).
"""

from __future__ import annotations

import gzip
import json
import math
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.bench.decks import SUITES, DealSetError, load_deal_set, tables_of
from agents.bench.run import READABLE_FORMATS, RESULT_FORMAT, AgentId, decode_game, record_digest, snap_per_deal
from agents.evaluation.duplicate import PER_DEAL_COLUMNS, PairResult, summarize
from agents.evaluation.tournament import bradley_terry, bradley_terry_intervals, crosstable_markdown
from mauscheln_env.errors import MauschelnError

SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS deal_sets (
    suite TEXT NOT NULL,
    tbl TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (suite, tbl)
);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY,
    digest TEXT NOT NULL UNIQUE,
    submitted TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    suite TEXT NOT NULL,
    tbl TEXT NOT NULL,
    deal_hash TEXT NOT NULL,
    agent TEXT NOT NULL,
    agent_spec TEXT NOT NULL,
    agent_checkpoint TEXT,
    git_commit TEXT,
    made TEXT,
    source TEXT,
    record TEXT NOT NULL,
    FOREIGN KEY (suite, tbl) REFERENCES deal_sets (suite, tbl)
);
CREATE TABLE IF NOT EXISTS pairings (
    result_id INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    candidate TEXT NOT NULL,
    baseline TEXT NOT NULL,
    first_deal INTEGER NOT NULL,
    deals INTEGER NOT NULL,
    wins INTEGER NOT NULL,
    losses INTEGER NOT NULL,
    ties INTEGER NOT NULL,
    advantage REAL NOT NULL,
    per_deal TEXT NOT NULL,
    PRIMARY KEY (result_id, idx)
);
CREATE INDEX IF NOT EXISTS results_by_table ON results (suite, tbl);
"""


class LeaderboardError(MauschelnError):
    """A database that cannot be used (not a leaderboard, a newer schema, unreadable)."""


class ResultRecordError(MauschelnError):
    """A result file that is not a well-formed, consistent record of this suite (nothing is stored)."""


def default_db() -> Path:
    """``leaderboard.sqlite`` in the user's data directory (the XDG base directory on Linux)."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "mauscheln" / "leaderboard.sqlite"


def connect(path: str | Path | None = None) -> sqlite3.Connection:
    """Open (and if needed create) a leaderboard database; autocommit mode, transactions are explicit."""
    path = Path(path) if path is not None else default_db()
    if path.exists() and not path.is_file():
        raise LeaderboardError(f"--db {path} is not a file; allowed: a leaderboard database file (or a new path)")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = sqlite3.connect(str(path), timeout=60.0, isolation_level=None)
        con.execute("PRAGMA foreign_keys = ON")
        version = con.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            con.close()
            raise LeaderboardError(f"{path} has leaderboard schema {version}; this version reads {SCHEMA_VERSION}")
        if version < SCHEMA_VERSION:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables - {"deal_sets", "results", "pairings"}:
                con.close()
                raise LeaderboardError(f"{path} is an SQLite database but not a leaderboard (tables "
                                       f"{', '.join(sorted(tables))}); allowed: a leaderboard file or a new path")
            con.execute("BEGIN IMMEDIATE")
            try:
                for statement in SCHEMA.split(";"):
                    if statement.strip():
                        con.execute(statement)
                con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                con.execute("COMMIT")
            finally:
                if con.in_transaction:
                    con.execute("ROLLBACK")
    except sqlite3.DatabaseError as exc:
        raise LeaderboardError(f"{path} cannot be used as a leaderboard database: {exc}") from exc
    return con


# ---------------------------------------------------------------------- checking a record
@dataclass
class CheckedRecord:
    record: dict[str, Any]
    digest: str
    agent: AgentId
    suite: str
    table: str
    deal_hash: str
    pairs: list[tuple[AgentId, PairResult, int]]
    """(opponent, pairing, first deal) for every pairing."""


def _need(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise ResultRecordError(f"{where}: {what}")


def _agent_id(d: Any, where: str, version: str) -> AgentId:
    _need(isinstance(d, dict) and isinstance(d.get("spec"), str) and d["spec"]
          and (d.get("checkpoint") is None or isinstance(d.get("checkpoint"), str)),
          where, "allowed: a mapping with spec (text) and checkpoint (text or null)")
    if version != READABLE_FORMATS[0]:
        _need(isinstance(d.get("class"), str) and d["class"] and "source" in d
              and (d["source"] is None or isinstance(d["source"], str) and d["source"].startswith("sha256:")),
              where, "allowed: a mapping with spec, checkpoint, class (module:qualname) and source (sha256:... "
                     "or null)")
    return AgentId.from_dict(d)


def _whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def check_record(record: Any, source: str = "result") -> CheckedRecord:
    """Check a result record as ``mauscheln bench run`` writes it; raises :class:`ResultRecordError` naming
    the first thing wrong. Checked: the shape; the suite and table exist here and the deal-set hash is the
    one shipped (a record of other deals is refused); every pairing's summary figures follow from its
    per-deal values; the recorded games decode."""
    _need(isinstance(record, dict), source, f"a JSON {type(record).__name__}; allowed: a result record (mapping)")
    version = record.get("format")
    _need(version in READABLE_FORMATS, source,
          f"format {version!r}; allowed: {' or '.join(map(repr, READABLE_FORMATS))} (a file written by mauscheln "
          f"bench run; this version writes {RESULT_FORMAT!r})")
    agent = _agent_id(record.get("agent"), f"{source}: agent", version)
    suite = record.get("suite")
    _need(isinstance(suite, dict) and all(isinstance(suite.get(k), str) for k in ("suite", "table", "hash")),
          f"{source}: suite", "allowed: a mapping with suite, table and hash (text)")
    _need(suite["suite"] in SUITES, f"{source}: suite", f"{suite['suite']!r} is unknown; allowed: {', '.join(SUITES)}")
    try:
        tables = tables_of(suite["suite"])
        _need(suite["table"] in tables, f"{source}: suite", f"table {suite['table']!r} is not in suite "
              f"{suite['suite']}; allowed: {', '.join(tables)}")
        deal_set = load_deal_set(suite["suite"], suite["table"])
    except DealSetError as exc:
        raise ResultRecordError(f"{source}: the deal set here cannot be loaded: {exc}") from exc
    _need(suite["hash"] == deal_set.hash, source,
          f"deal-set hash {suite['hash']} differs from the {suite['suite']} {suite['table']} deal set here "
          f"({deal_set.hash}): the record was played on other deals and cannot be compared")
    n = deal_set.players
    pairs_in = record.get("pairs")
    _need(isinstance(pairs_in, list) and pairs_in, f"{source}: pairs", "allowed: a non-empty list of pairings")
    pairs = []
    for i, d in enumerate(pairs_in):
        where = f"{source}: pairing {i}"
        _need(isinstance(d, dict), where, "allowed: a mapping")
        opponent = _agent_id(d.get("opponent"), f"{where}: opponent", version)
        _need(d.get("candidate") == agent.spec and d.get("baseline") == opponent.spec, where,
              f"candidate/baseline {d.get('candidate')!r}/{d.get('baseline')!r}; allowed: the record's agent "
              f"{agent.spec!r} against its opponent {opponent.spec!r}")
        _need(_whole(d.get("first_deal")) and _whole(d.get("deals")) and d["first_deal"] >= 0 and d["deals"] >= 1
              and d["first_deal"] + d["deals"] <= len(deal_set), where,
              f"first_deal {d.get('first_deal')!r} and deals {d.get('deals')!r}; allowed: whole numbers within the "
              f"{len(deal_set)} deals of the deal set")
        _need(d.get("per_deal") is not None and d.get("per_deal_columns") == list(PER_DEAL_COLUMNS), where,
              f"allowed: per_deal values with the columns {list(PER_DEAL_COLUMNS)}")
        try:
            p = PairResult.from_dict(d)
        except KeyError as exc:
            raise ResultRecordError(f"{where} has no {exc}") from exc
        except (TypeError, ValueError, AttributeError) as exc:
            raise ResultRecordError(f"{where} is malformed: {exc}") from exc
        again = summarize(p.candidate, p.baseline, p.per_deal, p.roles, p.games, p.seconds)
        _need((again.wins, again.losses, again.ties) == (p.wins, p.losses, p.ties)
              and _close(again.advantage.mean, p.advantage.mean), where,
              "its wins/losses/ties or mean advantage do not follow from its per-deal values (edited?)")
        replays = d.get("replays", [])
        _need(isinstance(replays, list) and len(replays) <= p.deals and all(
            isinstance(g, list) and len(g) == 2 * n for g in replays), where,
              f"replays: allowed a list (one per deal, at most {p.deals}) of {2 * n} games each")
        try:
            for games in replays:
                for g in games:
                    decode_game(g)
        except ValueError as exc:
            raise ResultRecordError(f"{where}: replays: {exc}") from exc
        pairs.append((opponent, p, d["first_deal"]))
    keys = [o.key for o, _, _ in pairs]
    _need(len(set(keys)) == len(keys), f"{source}: pairs", "an opponent appears twice; allowed: one pairing each")
    project = record.get("project")
    _need(isinstance(project, dict), f"{source}: project", "allowed: a mapping with version and commit")
    return CheckedRecord(record, record_digest(record), agent, suite["suite"], suite["table"], suite["hash"], pairs)


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-5 * max(1.0, abs(a))


def read_record(path: str | Path) -> dict[str, Any]:
    """A result record from a JSON file (``.json``, or gzip-compressed ``.json.gz``)."""
    path = Path(path)
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                return json.loads(fh.read())
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultRecordError(f"{path}: no such file; allowed: a result file written by mauscheln bench run") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ResultRecordError(f"{path} cannot be read: {exc}") from exc
    except ValueError as exc:
        raise ResultRecordError(f"{path} is not JSON ({exc}); allowed: a result file written by mauscheln bench run"
                                ) from exc


# ---------------------------------------------------------------------- submitting
@dataclass
class Submitted:
    id: int
    digest: str
    new: bool
    agent: str
    table: str


def submit(record: Any, db: str | Path | None = None, *, source: str = "result",
           before_commit: Callable[[sqlite3.Connection], None] | None = None) -> Submitted:
    """Check ``record`` and store it in one transaction; an identical record already stored is left alone.

    ``before_commit`` is called inside the transaction, just before the commit (tests use it to kill the
    writer there).
    """
    checked = check_record(record, source)
    con = connect(db)
    try:
        con.execute("BEGIN IMMEDIATE")
        row = con.execute("SELECT id FROM results WHERE digest = ?", (checked.digest,)).fetchone()
        if row is not None:
            con.execute("ROLLBACK")
            return Submitted(row[0], checked.digest, False, checked.agent.key, checked.table)
        known = con.execute("SELECT hash FROM deal_sets WHERE suite = ? AND tbl = ?",
                            (checked.suite, checked.table)).fetchone()
        if known is None:
            con.execute("INSERT INTO deal_sets (suite, tbl, hash) VALUES (?, ?, ?)",
                        (checked.suite, checked.table, checked.deal_hash))
        elif known[0] != checked.deal_hash:
            raise ResultRecordError(f"{source}: deal-set hash {checked.deal_hash} differs from {known[0]}, the hash "
                                    f"of the {checked.suite} {checked.table} results already in this leaderboard")
        rec = checked.record
        cur = con.execute(
            "INSERT INTO results (digest, suite, tbl, deal_hash, agent, agent_spec, agent_checkpoint, git_commit, "
            "made, source, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (checked.digest, checked.suite, checked.table, checked.deal_hash, checked.agent.key, checked.agent.spec,
             checked.agent.checkpoint, (rec.get("project") or {}).get("commit"), str(rec.get("date", "")), source,
             json.dumps(rec, separators=(",", ":"))))
        result_id = cur.lastrowid
        for i, (opponent, p, first) in enumerate(checked.pairs):
            con.execute(
                "INSERT INTO pairings (result_id, idx, candidate, baseline, first_deal, deals, wins, losses, ties, "
                "advantage, per_deal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (result_id, i, checked.agent.key, opponent.key, first, p.deals, p.wins, p.losses, p.ties,
                 p.advantage.mean, json.dumps(np.round(p.per_deal, 6).tolist(), separators=(",", ":"))))
        if before_commit is not None:
            before_commit(con)
        con.execute("COMMIT")
        return Submitted(result_id, checked.digest, True, checked.agent.key, checked.table)
    except sqlite3.DatabaseError as exc:
        raise LeaderboardError(f"the leaderboard database could not store {source}: {exc}") from exc
    finally:
        if con.in_transaction:
            con.execute("ROLLBACK")
        con.close()


# ---------------------------------------------------------------------- the leaderboard
@dataclass
class Entry:
    agent: str
    elo: float
    low: float
    high: float
    deals: int
    """Per-deal outcomes behind the rating (over all its pairings)."""
    opponents: int
    results: int
    """Stored records of this agent (as the candidate)."""


@dataclass
class Board:
    suite: str
    table: str
    deal_hash: str
    entries: list[Entry]
    pairs: list[PairResult]
    records: int
    commits: list[str] = field(default_factory=list)

    @property
    def agents(self) -> list[str]:
        return [e.agent for e in self.entries]

    @property
    def ratings(self) -> dict[str, float]:
        return {e.agent: e.elo for e in self.entries}

    def to_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite, "table": self.table, "deal_hash": self.deal_hash, "records": self.records,
            "commits": self.commits,
            "entries": [vars(e) for e in self.entries],
            "pairs": [{k: v for k, v in p.to_dict().items() if k not in ("roles", "seconds")} for p in self.pairs],
        }


def pooled_pairs(rows: Sequence[tuple[str, str, int, str]], players: int) -> list[PairResult]:
    """Pool pairing rows ``(candidate, baseline, first_deal, per_deal JSON)`` (oldest first) per unordered pair,
    deal by deal (a later row replaces an earlier one's deal); each pair oriented with the smaller key first."""
    pooled: dict[tuple[str, str], dict[int, list[float]]] = {}
    for cand, base, first, per_deal in rows:
        if cand == base:
            continue
        values = snap_per_deal(json.loads(per_deal), players)
        if cand > base:
            cand, base, values = base, cand, values[:, ::-1]
        deals = pooled.setdefault((cand, base), {})
        for j, row in enumerate(values):
            deals[first + j] = list(row)
    out = []
    for (a, b), deals in sorted(pooled.items()):
        per_deal = np.array([deals[i] for i in sorted(deals)], dtype=np.float64)
        out.append(summarize(a, b, per_deal, {"candidate": {}, "baseline": {}}, len(deals) * 2 * players, 0.0))
    return out


def leaderboard(db: str | Path | None = None, suite: str = "v1", tables: Sequence[str] | None = None) -> list[Board]:
    """The board of every table of ``suite`` that has results (or of ``tables``)."""
    con = connect(db)
    try:
        known = [r[0] for r in con.execute("SELECT DISTINCT tbl FROM results WHERE suite = ?", (suite,))]
        order = tables_of(suite) if suite in SUITES else []
        wanted = [t for t in (tables if tables is not None else order) if t in known]
        boards = []
        for table in sorted(wanted, key=lambda t: order.index(t) if t in order else len(order)):
            deal_hash = con.execute("SELECT hash FROM deal_sets WHERE suite = ? AND tbl = ?",
                                    (suite, table)).fetchone()[0]
            players = load_deal_set(suite, table).players
            rows = con.execute(
                "SELECT p.candidate, p.baseline, p.first_deal, p.per_deal FROM pairings p JOIN results r "
                "ON r.id = p.result_id WHERE r.suite = ? AND r.tbl = ? ORDER BY r.id, p.idx", (suite, table)).fetchall()
            per_agent = dict(con.execute("SELECT agent, COUNT(*) FROM results WHERE suite = ? AND tbl = ? "
                                         "GROUP BY agent", (suite, table)).fetchall())
            commits = sorted({r[0] for r in con.execute("SELECT DISTINCT git_commit FROM results WHERE suite = ? "
                                                        "AND tbl = ?", (suite, table)) if r[0]})
            pairs = pooled_pairs(rows, players)
            agents = sorted({x for p in pairs for x in (p.candidate, p.baseline)} | set(per_agent))
            ratings = bradley_terry(agents, pairs)
            intervals = bradley_terry_intervals(agents, pairs, ratings)
            entries = []
            for a in agents:
                mine = [p for p in pairs if a in (p.candidate, p.baseline)]
                entries.append(Entry(a, ratings[a], *intervals[a], sum(p.deals for p in mine), len(mine),
                                     per_agent.get(a, 0)))
            entries.sort(key=lambda e: -e.elo)
            boards.append(Board(suite, table, deal_hash, entries, pairs, sum(per_agent.values()), commits))
        return boards
    finally:
        con.close()


def board_markdown(board: Board, crosstable: bool = True) -> str:
    """A table's leaderboard as Markdown: the ratings, then (``crosstable``) the cross-table of mean advantages."""
    name, _, players = board.table.rpartition("_")
    lines = [f"**{name}, {players[:-1]} players** (suite {board.suite}, deal set `{board.deal_hash[:19]}…`, "
             f"{board.records} result record(s))", "",
             "| rank | agent | Elo (BT) | 95 % interval | deals | opponents |",
             "| ---: | --- | ---: | --- | ---: | ---: |"]
    for rank, e in enumerate(board.entries, 1):
        iv = f"{e.low:+.0f} … {e.high:+.0f}" if math.isfinite(e.low) else "—"
        lines.append(f"| {rank} | {e.agent} | {e.elo:+.0f} | {iv} | {e.deals} | {e.opponents} |")
    if crosstable:
        lines += ["", crosstable_markdown(board.agents, board.pairs, board.ratings)]
    return "\n".join(lines)


def records_of(db: str | Path | None, suite: str, table: str) -> list[dict[str, Any]]:
    """Every stored record of a table, oldest first."""
    con = connect(db)
    try:
        rows = con.execute("SELECT record FROM results WHERE suite = ? AND tbl = ? ORDER BY id",
                           (suite, table)).fetchall()
    finally:
        con.close()
    return [json.loads(r[0]) for r in rows]


def consistent(db: str | Path) -> list[str]:
    """What is wrong with a leaderboard database (empty: nothing): SQLite's integrity check, pairings without
    their result, results without pairings, stored records whose digest does not match."""
    con = connect(db)
    try:
        problems = [r[0] for r in con.execute("PRAGMA integrity_check") if r[0] != "ok"]
        problems += [f"pairing of missing result {r[0]}" for r in con.execute(
            "SELECT DISTINCT result_id FROM pairings WHERE result_id NOT IN (SELECT id FROM results)")]
        problems += [f"result {r[0]} has no pairings" for r in con.execute(
            "SELECT id FROM results WHERE id NOT IN (SELECT result_id FROM pairings)")]
        for rid, digest, text in con.execute("SELECT id, digest, record FROM results"):
            if record_digest(json.loads(text)) != digest:
                problems.append(f"result {rid}: the stored record does not match its digest")
        return problems
    finally:
        con.close()


def summary_line(s: Submitted, source: str) -> str:
    what = "stored as result" if s.new else "already in the leaderboard as result"
    return f"{source}: {s.agent} on {s.table}: {what} {s.id} ({s.digest[7:19]})"


__all__ = ["Board", "Entry", "LeaderboardError", "ResultRecordError", "Submitted", "board_markdown", "check_record",
           "connect", "consistent", "default_db", "leaderboard", "read_record", "records_of", "submit"]
