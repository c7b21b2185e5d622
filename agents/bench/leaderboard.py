"""The leaderboard: the shipped result records beside the user's own, rated over the shared deal sets.

Two sources feed a board. The **shipped** records are package data
(``agents/bench/records/<suite>/<table>/<agent>.json.gz``, :data:`RECORDS`): the
reference field of every table, read and checked where the package is installed,
never written by a command. The user's **own** records live in the user's
database, a file (by default ``$XDG_DATA_HOME/mauscheln/leaderboard.sqlite``, i.e.
``~/.local/share/mauscheln/leaderboard.sqlite``; ``--db PATH``), which
``mauscheln bench submit RESULT...`` fills and nothing else touches.
``mauscheln bench leaderboard`` and ``bench report`` build one in-memory
database of both (:func:`open_view`: the shipped records first, then the user's,
a record the user also submitted counted once) and rate every agent of a table
from it (:func:`leaderboard`); an agent any of the user's records played for is
marked ``yours``.

A submission (:func:`submit`) checks each record (:func:`check_record`: its
shape, its figures against its own per-deal values, and its deal-set hash
against the suite shipped here) and stores it in one ``BEGIN IMMEDIATE``
transaction (SQLite takes the write lock first and a second writer waits for
it, up to a minute), so two submitters at once both land and a writer killed
midway leaves nothing of its record (SQLite rolls the journal back when the
database is next opened). A record is stored once: submitting the same file
again changes nothing.

Ratings: for every pair of agents of a table, the per-deal advantages of all
stored pairings of the two (in either order: A against B and B against A are
the same games with the formats swapped) are pooled deal by deal, the latest
record of a deal winning (the user's after the shipped ones); Bradley–Terry
strengths are fitted to the per-deal wins (:func:`agents.evaluation.tournament.bradley_terry`)
with 95 % intervals from the fit's Fisher information
(:func:`agents.evaluation.tournament.bradley_terry_intervals`). An agent is its
canonical spec plus the hash of its checkpoint, if it has one, and of its code, if
it is not the project's own (:attr:`agents.bench.run.AgentId.key`:
``my_agent.py:MyAgent#89abcdef0123``). Records of both formats are read: v1 (spec
and checkpoint) and v2 (also class and code hash); other fields of a record's agent
description are kept in the record and do not split an agent.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import json
import math
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.bench.decks import SUITES, DealSetError, check_suite, load_deal_set, tables_of
from agents.bench.run import READABLE_FORMATS, RESULT_FORMAT, AgentId, decode_game, record_digest, snap_per_deal
from agents.evaluation.duplicate import PER_DEAL_COLUMNS, PairResult, summarize
from agents.evaluation.tournament import bradley_terry, bradley_terry_intervals, crosstable_markdown
from mauscheln_env.errors import MauschelnError
from mauscheln_env.files import finite_or_none, strict_json

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
DB_TABLES = ("deal_sets", "results", "pairings")
RECORDS = Path(__file__).resolve().parent / "records"
"""The shipped result records, ``RECORDS/<suite>/<table>/<agent>.json.gz`` (package data, read-only)."""
SHIPPED, YOURS = "shipped", "yours"
"""Where a record of a board comes from: the package's records, or the user's database."""


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
    """Open (and if needed create) a leaderboard database for writing; autocommit mode, transactions are
    explicit."""
    path = Path(path) if path is not None else default_db()
    if path.exists() and not path.is_file():
        raise LeaderboardError(f"--db {path} is not a file; allowed: a leaderboard database file (or a new path)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LeaderboardError(f"--db {path}: its folder cannot be made ({exc}); allowed: a path in a folder you "
                               "can write") from exc
    try:
        con = sqlite3.connect(str(path), timeout=60.0, isolation_level=None)
        try:
            con.execute("PRAGMA foreign_keys = ON")
            if _schema(con, path) < SCHEMA_VERSION:
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
        except BaseException:
            con.close()
            raise
    except sqlite3.DatabaseError as exc:
        raise LeaderboardError(f"--db {path} cannot be used as a leaderboard database: {exc}") from exc
    return con


def _schema(con: sqlite3.Connection, path: Path) -> int:
    """The schema version of an open database; refuses a newer schema and a database of other tables."""
    version = con.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise LeaderboardError(f"--db {path} has leaderboard schema {version}; this version reads {SCHEMA_VERSION}")
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if tables - set(DB_TABLES) or (version == SCHEMA_VERSION and tables != set(DB_TABLES)):
        raise LeaderboardError(f"--db {path} is an SQLite database but not a leaderboard (tables "
                               f"{', '.join(sorted(tables)) or 'none'}); allowed: a leaderboard file or a new path")
    return version


def open_existing(path: str | Path) -> sqlite3.Connection | None:
    """Open a leaderboard database to read it, creating nothing: None when it holds no leaderboard yet (an
    empty file); :class:`LeaderboardError` when it is missing, a folder, not SQLite or not a leaderboard."""
    path = Path(path)
    if not path.exists():
        raise LeaderboardError(f"--db {path}: no such file; allowed: a leaderboard database that mauscheln bench "
                               "submit wrote (or no --db: your default one)")
    if not path.is_file():
        raise LeaderboardError(f"--db {path} is not a file; allowed: a leaderboard database file")
    try:
        # mode=rw: never creates; read-only where the file is; a journal a killed writer left is rolled back
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=60.0, isolation_level=None)
    except sqlite3.DatabaseError as exc:
        raise LeaderboardError(f"--db {path} cannot be opened: {exc}") from exc
    try:
        if _schema(con, path) < SCHEMA_VERSION:
            con.close()
            return None
    except sqlite3.DatabaseError as exc:
        con.close()
        raise LeaderboardError(f"--db {path} cannot be read as a leaderboard database: {exc}") from exc
    except BaseException:
        con.close()
        raise
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
    """A result record from a JSON file (``.json``, or gzip-compressed ``.json.gz``); a number an older file
    spelt ``NaN`` or ``Infinity`` (an undefined interval) is read as None, as ``null`` is."""
    path = Path(path)
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                text = fh.read()
        else:
            text = path.read_text(encoding="utf-8")
        return finite_or_none(json.loads(text))  # NaN/Infinity of older files: undefined, as null is
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
        result_id = _insert(con, checked, source)
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


def _insert(con: sqlite3.Connection, checked: CheckedRecord, source: str) -> int:
    """Store a checked record and its pairings (inside the caller's transaction); the new result id."""
    rec = checked.record
    cur = con.execute(
        "INSERT INTO results (digest, suite, tbl, deal_hash, agent, agent_spec, agent_checkpoint, git_commit, "
        "made, source, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (checked.digest, checked.suite, checked.table, checked.deal_hash, checked.agent.key, checked.agent.spec,
         checked.agent.checkpoint, (rec.get("project") or {}).get("commit"), str(rec.get("date", "")), source,
         strict_json(rec, separators=(",", ":"))))
    result_id = int(cur.lastrowid)
    for i, (opponent, p, first) in enumerate(checked.pairs):
        con.execute(
            "INSERT INTO pairings (result_id, idx, candidate, baseline, first_deal, deals, wins, losses, ties, "
            "advantage, per_deal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (result_id, i, checked.agent.key, opponent.key, first, p.deals, p.wins, p.losses, p.ties,
             p.advantage.mean, strict_json(np.round(p.per_deal, 6).tolist(), separators=(",", ":"))))
    return result_id


# ---------------------------------------------------------------------- the shipped records and the view
def shipped_paths(suite: str) -> list[Path]:
    """The shipped record files of a suite (``RECORDS/<suite>/<table>/*.json.gz``), in order."""
    return sorted((RECORDS / suite).glob("*/*.json.gz"))


def shipped_records(suite: str = "v1") -> list[CheckedRecord]:
    """The shipped records of ``suite``, each checked as a submission is (read once per process and kept while
    the files are unchanged); :class:`LeaderboardError` names a record that fails its checks."""
    stamps = []
    for path in shipped_paths(suite):
        st = path.stat()
        stamps.append((str(path), st.st_mtime_ns, st.st_size))
    return list(_shipped(suite, tuple(stamps)))


@functools.lru_cache(maxsize=4)
def _shipped(suite: str, stamps: tuple[tuple[str, int, int], ...]) -> tuple[CheckedRecord, ...]:
    out = []
    for name, _, _ in stamps:
        path = Path(name)
        where = f"{path.parent.name}/{path.name}"
        try:
            checked = check_record(read_record(path), f"shipped record {where}")
        except ResultRecordError as exc:
            raise LeaderboardError(f"{exc} (the installed package's records at {RECORDS} are damaged or were "
                                   "edited; reinstall mauscheln)") from exc
        if (checked.suite, checked.table) != (suite, path.parent.name):
            raise LeaderboardError(f"shipped record {where} is a record of {checked.suite} {checked.table}, "
                                   f"filed under {suite} {path.parent.name}; reinstall mauscheln")
        out.append(checked)
    return tuple(out)


@dataclass
class View:
    """One in-memory leaderboard database of the shipped records and the user's (:func:`open_view`)."""

    con: sqlite3.Connection
    suite: str
    db: Path | None
    """The user's database that was read (None: none, or it does not exist yet)."""
    notes: list[str] = field(default_factory=list)
    """What was left out of the user's database, and why."""


@contextlib.contextmanager
def open_view(db: str | Path | None = None, suite: str = "v1", *, shipped: bool = True,
              yours: bool = True) -> Iterator[View]:
    """The shipped records of ``suite`` (``shipped``) and the records of the user's database (``yours``: ``db``,
    which must exist when named, else :func:`default_db` if it exists) in one in-memory leaderboard database,
    shipped first, the user's after them in the order they were submitted. The results table has a column
    ``origin`` (:data:`SHIPPED` or :data:`YOURS`); a user's record that is also shipped counts once, as
    shipped; a user's record of a deal set other than the one shipped here is left out (``View.notes``)."""
    check_suite(suite)
    hashes = {t: load_deal_set(suite, t).hash for t in tables_of(suite)}
    con = sqlite3.connect(":memory:", isolation_level=None)
    try:
        con.executescript(SCHEMA)
        con.execute(f"ALTER TABLE results ADD COLUMN origin TEXT NOT NULL DEFAULT '{SHIPPED}'")
        con.executemany("INSERT INTO deal_sets (suite, tbl, hash) VALUES (?, ?, ?)",
                        [(suite, t, h) for t, h in hashes.items()])
        con.execute("BEGIN")
        digests = set()
        for checked in shipped_records(suite) if shipped else []:
            if checked.digest not in digests:
                digests.add(checked.digest)
                _insert(con, checked, f"{RECORDS.name}/{suite}/{checked.table}")
        con.execute("COMMIT")
        path = Path(db) if db is not None else default_db()
        user = None
        if yours and (db is not None or path.is_file()):
            user = open_existing(path)
        view = View(con, suite, path if user is not None else None)
        if user is not None:
            try:
                _copy_yours(user, view, hashes, digests)
            except sqlite3.DatabaseError as exc:
                raise LeaderboardError(f"--db {path} cannot be read as a leaderboard database: {exc}") from exc
            finally:
                user.close()
        yield view
    finally:
        con.close()


def _copy_yours(user: sqlite3.Connection, view: View, hashes: dict[str, str], shipped: set[str]) -> None:
    con, left_out = view.con, {}
    con.execute("BEGIN")
    for rid, digest, table, deal_hash, *rest in user.execute(
            "SELECT id, digest, tbl, deal_hash, submitted, agent, agent_spec, agent_checkpoint, git_commit, made, "
            "source, record FROM results WHERE suite = ? ORDER BY id", (view.suite,)).fetchall():
        if digest in shipped:
            continue
        if hashes.get(table) != deal_hash:
            left_out[table] = left_out.get(table, 0) + 1
            continue
        new = con.execute(
            "INSERT INTO results (digest, suite, tbl, deal_hash, submitted, agent, agent_spec, agent_checkpoint, "
            "git_commit, made, source, record, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (digest, view.suite, table, deal_hash, *rest, YOURS)).lastrowid
        con.executemany(
            "INSERT INTO pairings (result_id, idx, candidate, baseline, first_deal, deals, wins, losses, ties, "
            "advantage, per_deal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(new, *row) for row in user.execute(
                "SELECT idx, candidate, baseline, first_deal, deals, wins, losses, ties, advantage, per_deal "
                "FROM pairings WHERE result_id = ? ORDER BY idx", (rid,))])
    con.execute("COMMIT")
    view.notes += [f"{n} of your record(s) of {view.suite} {t} in {view.db} were played on another deal set than "
                   "the one shipped here and are left out" for t, n in left_out.items()]


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
    """Records of this agent (as the candidate)."""
    origin: str = SHIPPED
    """Whose records played for the agent: ``shipped``, ``yours`` or ``shipped + yours`` (its own records; an
    agent with none, by the records it was an opponent in)."""


@dataclass
class Board:
    suite: str
    table: str
    deal_hash: str
    entries: list[Entry]
    pairs: list[PairResult]
    records: int
    commits: list[str] = field(default_factory=list)
    yours: int = 0
    """How many of the ``records`` are the user's (the rest are shipped)."""

    @property
    def agents(self) -> list[str]:
        return [e.agent for e in self.entries]

    @property
    def ratings(self) -> dict[str, float]:
        return {e.agent: e.elo for e in self.entries}

    def to_dict(self) -> dict[str, Any]:
        """The board as data; an interval the fit leaves undefined is None (JSON ``null``)."""
        return finite_or_none({
            "suite": self.suite, "table": self.table, "deal_hash": self.deal_hash, "records": self.records,
            "yours": self.yours, "commits": self.commits,
            "entries": [vars(e) for e in self.entries],
            "pairs": [{k: v for k, v in p.to_dict().items() if k not in ("roles", "seconds")} for p in self.pairs],
        })


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


def leaderboard(db: str | Path | None = None, suite: str = "v1", tables: Sequence[str] | None = None, *,
                shipped: bool = True, yours: bool = True) -> list[Board]:
    """The board of every table of ``suite`` that has results (or of ``tables``), from the shipped records and
    the user's database ``db`` (:func:`open_view`)."""
    with open_view(db, suite, shipped=shipped, yours=yours) as view:
        return boards(view, tables)


def boards(view: View, tables: Sequence[str] | None = None) -> list[Board]:
    """The boards of a :class:`View`, in the suite's table order."""
    con, suite = view.con, view.suite
    known = {r[0] for r in con.execute("SELECT DISTINCT tbl FROM results WHERE suite = ?", (suite,))}
    out = []
    for table in [t for t in tables_of(suite) if t in known and (tables is None or t in tables)]:
        deal_hash = con.execute("SELECT hash FROM deal_sets WHERE suite = ? AND tbl = ?", (suite, table)).fetchone()[0]
        players = load_deal_set(suite, table).players
        rows = con.execute(
            "SELECT p.candidate, p.baseline, p.first_deal, p.per_deal FROM pairings p JOIN results r "
            "ON r.id = p.result_id WHERE r.suite = ? AND r.tbl = ? ORDER BY r.id, p.idx", (suite, table)).fetchall()
        per_agent = dict(con.execute("SELECT agent, COUNT(*) FROM results WHERE suite = ? AND tbl = ? "
                                     "GROUP BY agent", (suite, table)).fetchall())
        commits = sorted({r[0] for r in con.execute("SELECT DISTINCT git_commit FROM results WHERE suite = ? "
                                                    "AND tbl = ?", (suite, table)) if r[0]})
        own: dict[str, set[str]] = {}
        met: dict[str, set[str]] = {}
        for agent, baseline, origin in con.execute(
                "SELECT r.agent, p.baseline, r.origin FROM results r JOIN pairings p ON p.result_id = r.id "
                "WHERE r.suite = ? AND r.tbl = ?", (suite, table)):
            own.setdefault(agent, set()).add(origin)
            met.setdefault(baseline, set()).add(origin)
        try:
            pairs = pooled_pairs(rows, players)
        except (ValueError, TypeError) as exc:
            raise LeaderboardError(f"a stored pairing of {suite} {table} cannot be read: {exc}") from exc
        agents = sorted({x for p in pairs for x in (p.candidate, p.baseline)} | set(per_agent))
        ratings = bradley_terry(agents, pairs)
        intervals = bradley_terry_intervals(agents, pairs, ratings)
        entries = []
        for a in agents:
            mine = [p for p in pairs if a in (p.candidate, p.baseline)]
            origins = own.get(a) or met.get(a) or {SHIPPED}
            entries.append(Entry(a, ratings[a], *intervals[a], sum(p.deals for p in mine), len(mine),
                                 per_agent.get(a, 0), " + ".join(o for o in (SHIPPED, YOURS) if o in origins)))
        entries.sort(key=lambda e: -e.elo)
        mine_count = con.execute("SELECT COUNT(*) FROM results WHERE suite = ? AND tbl = ? AND origin = ?",
                                 (suite, table, YOURS)).fetchone()[0]
        out.append(Board(suite, table, deal_hash, entries, pairs, sum(per_agent.values()), commits, mine_count))
    return out


def board_markdown(board: Board, crosstable: bool = True) -> str:
    """A table's leaderboard as Markdown: the ratings, then (``crosstable``) the cross-table of mean advantages.
    A board that holds any of the user's records says how many and marks whose records played for each agent."""
    name, _, players = board.table.rpartition("_")
    mixed = board.yours > 0
    lines = [f"**{name}, {players[:-1]} players** (suite {board.suite}, deal set `{board.deal_hash[:19]}…`, "
             f"{board.records} result record(s)" + (f", {board.yours} of them yours" if mixed else "") + ")", "",
             "| rank | agent | Elo (BT) | 95 % interval | deals | opponents |" + (" from |" if mixed else ""),
             "| ---: | --- | ---: | --- | ---: | ---: |" + (" --- |" if mixed else "")]
    for rank, e in enumerate(board.entries, 1):
        lines.append(f"| {rank} | {e.agent} | {e.elo:+.0f} | {interval_text(e.low, e.high)} | {e.deals} | "
                     f"{e.opponents} |" + (f" {e.origin} |" if mixed else ""))
    if crosstable:
        lines += ["", crosstable_markdown(board.agents, board.pairs, board.ratings)]
    return "\n".join(lines)


@dataclass(frozen=True)
class FieldStatus:
    """How far a table's board holds its reference field: the field's agents with no record on it, and the
    pairings among the others played on fewer than ``min_deals`` deals (0: never)."""

    field: tuple[str, ...]
    missing: tuple[str, ...]
    short: tuple[tuple[str, str, int], ...]
    min_deals: int

    @property
    def complete(self) -> bool:
        return not self.missing and not self.short


def field_status(board: Board, field: Sequence[str], min_deals: int) -> FieldStatus:
    """Which of ``field`` (the table's reference agents as board keys, :func:`agents.bench.run.reference_keys`)
    the board lacks, and which of their pairings it holds on fewer than ``min_deals`` deals (pooled over records)."""
    present = set(board.agents)
    missing = tuple(a for a in field if a not in present)
    played = {frozenset((p.candidate, p.baseline)): p.deals for p in board.pairs}
    kept = [a for a in field if a in present]
    short = tuple((a, b, played.get(frozenset((a, b)), 0)) for i, a in enumerate(kept) for b in kept[i + 1:]
                  if played.get(frozenset((a, b)), 0) < min_deals)
    return FieldStatus(tuple(field), missing, short, min_deals)


def field_markdown(status: FieldStatus) -> str:
    """One paragraph: the reference field is complete, or what it still lacks."""
    head = f"**Reference field** ({len(status.field)} agents: {', '.join(f'`{a}`' for a in status.field)}): "
    if status.complete:
        return head + f"complete, every pairing on at least {status.min_deals} deals."
    parts = []
    if status.missing:
        parts.append("no record yet of " + ", ".join(f"`{a}`" for a in status.missing))
    if status.short:  # by the later agent of the field: the one whose runs are still to come
        against: dict[str, list[str]] = {}
        for a, b, n in status.short:
            against.setdefault(b, []).append(f"`{a}` ({n} deals)" if n else f"`{a}` (not played)")
        parts.append(f"pairings under {status.min_deals} deals: " + "; ".join(
            f"`{b}` against " + ", ".join(them) for b, them in against.items()))
    return head + "**not complete**: " + "; ".join(parts) + "."


def interval_text(low: float | None, high: float | None) -> str:
    """``+12 … +80``, or ``—`` where the interval is undefined (None, NaN or infinite: an agent without a
    finite bound)."""
    if all(isinstance(x, (int, float)) and math.isfinite(x) for x in (low, high)):
        return f"{low:+.0f} … {high:+.0f}"
    return "—"


def records_of(db: str | Path | None, suite: str, table: str, *, shipped: bool = True,
               yours: bool = True) -> list[dict[str, Any]]:
    """Every record of a table, shipped first, then the user's oldest first (:func:`open_view`)."""
    with open_view(db, suite, shipped=shipped, yours=yours) as view:
        return view_records(view, table)


def view_records(view: View, table: str) -> list[dict[str, Any]]:
    """Every record of a table in a :class:`View`, in its order; undefined numbers are None."""
    rows = view.con.execute("SELECT record FROM results WHERE suite = ? AND tbl = ? ORDER BY id",
                            (view.suite, table)).fetchall()
    try:
        return [finite_or_none(json.loads(r[0])) for r in rows]
    except ValueError as exc:
        raise LeaderboardError(f"a stored record of {view.suite} {table} cannot be read: {exc}") from exc


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
            record = json.loads(text)
            if digest not in (record_digest(record), _digest_as_first_stored(record)):
                problems.append(f"result {rid}: the stored record does not match its digest")
        return problems
    finally:
        con.close()


def _digest_as_first_stored(record: Any) -> str:
    """The digest of a record that an older version stored with ``NaN``/``Infinity`` in its text (the digest was
    then taken over that text)."""
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def summary_line(s: Submitted, source: str) -> str:
    what = "stored as result" if s.new else "already in the leaderboard as result"
    return f"{source}: {s.agent} on {s.table}: {what} {s.id} ({s.digest[7:19]})"


__all__ = ["RECORDS", "SHIPPED", "YOURS", "Board", "Entry", "LeaderboardError", "ResultRecordError", "Submitted",
           "View", "board_markdown", "boards", "check_record", "connect", "consistent", "default_db",
           "interval_text", "leaderboard", "open_existing", "open_view", "read_record", "records_of",
           "shipped_paths", "shipped_records", "submit", "view_records"]
