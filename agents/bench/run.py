"""``mauscheln bench run``: one agent against the reference field of a table, on the suite's deals.

The reference field of a table (:func:`reference_field`) is discovered, not
listed: every agent of the static registry (:data:`agents.base.AGENTS`, in its
order) whose class is marked :attr:`~agents.base.Agent.reference` and that
:meth:`~agents.base.Agent.supports` the table (plays it as itself, not through
a fallback), built by name with its default parameters; then every shipped
policy (``agents/learned/policies/*.safetensors``) trained for exactly that table
(``learned:checkpoint=<name>``), and where ``pimc`` plays the table the search
agent on each of those policies (``pimc:model=<name>,phases=play``). Today
that is ``random``, ``beginner`` and ``expert`` everywhere, ``pimc`` where its
search determinizes the table, the shipped policies and their search agents;
an agent that learns a ruleset, or a policy shipped later, joins that table's
field by itself.

Every pairing is a duplicate evaluation (:func:`agents.evaluation.duplicate.evaluate_pair`)
on the suite's fixed deals (both formats, common random numbers, 95 %
intervals over deals). The result record (:func:`run_bench`, a JSON file)
holds the agent's spec, class, checkpoint hash and code hash (for an agent of the
user's own file, module or package: the SHA-256 of that file; :class:`AgentId`),
the same of every opponent, the deal set's suite, table and
content hash, the field, the project version and git commit, the machine,
the date, the wall time, every per-pairing figure with its per-deal values,
and the action ids of the games of the first ``replays`` deals of every
pairing (``mauscheln replay`` and the report's viewer replay them).

Pairings can be cut short for a slow opponent (``--cap pimc=100``: the first
100 deals of the suite) and can be taken from an earlier record of the
opponent (``--reuse``): with common random numbers, the games of candidate A
against baseline B are exactly the games of B against A with the formats
swapped, so a pairing measured by the same code on the same deals is mirrored
instead of played again (the record says so in the pairing's ``source``).
"""

from __future__ import annotations

import datetime
import gzip
import hashlib
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import mauscheln_env
from agents import targets
from agents.base import AGENTS, Agent, agent_class, agent_from_spec, display_spec, make_agent, provenance
from agents.bench.decks import DealSet, DealSetError, check_suite, find_table, load_deal_set
from agents.evaluation.duplicate import (
    PER_DEAL_COLUMNS,
    PairResult,
    Settings,
    deals_left,
    evaluate_pair,
    play_block,
    summarize,
)
from agents.evaluation.match import FORMATS
from agents.evaluation.pages import cpu_model
from agents.evaluation.progress import RunProgress
from mauscheln_env.compiled import loaded
from mauscheln_env.engine import Game
from mauscheln_env.errors import MauschelnError
from mauscheln_env.files import atomic_write, atomic_write_text, strict_json
from mauscheln_env.ruleargs import options_of

RESULT_FORMAT = "mauscheln-bench-result-v2"
"""What :func:`run_bench` writes: v1, and the ``class`` and ``source`` of the agent and of every opponent."""
READABLE_FORMATS = ("mauscheln-bench-result-v1", RESULT_FORMAT)
"""The record formats the leaderboard reads (v1 records name agents by spec and checkpoint only)."""
CHECKPOINT_PARAMS = ("checkpoint", "model")
"""Agent parameters that name a file of weights: always part of the spec, and hashed into the record."""
TIMING = ("date", "wall_seconds", "machine", "command", "workers")
"""Top-level fields of a result record that say how and when it was made, not what was measured
(with each pairing's ``seconds``): two runs of the same agent on the same deals differ only there."""
REPLAYS = 10


class BenchError(MauschelnError):
    """A bench run that cannot be done as asked (an unknown opponent, a pairing that cannot be reused, ...)."""


# ---------------------------------------------------------------------- agents
@dataclass(frozen=True)
class AgentId:
    """An agent as the leaderboard knows it: its canonical spec (a file by its absolute path), the hash of its
    checkpoint and of its code (an agent of the user's own file, module or package), and its class."""

    spec: str
    checkpoint: str | None = None
    source: str | None = None
    """``sha256:<hex>`` of the agent's code file (:func:`agents.targets.code_hash`); None for the project's own."""
    cls: str | None = None
    """``module:qualname`` of the agent's class (None in v1 records)."""

    @property
    def key(self) -> str:
        """The spec as people read it (a file by its name), with ``#`` and 12 hex digits of the checkpoint hash
        and of the code hash where there are such: ``expert``, ``learned:checkpoint=x#0123456789ab``,
        ``my_agent.py:MyAgent#89abcdef0123``."""
        hashes = [h.split(":")[-1][:12] for h in (self.checkpoint, self.source) if h]
        return "#".join([display_spec(self.spec), *hashes])

    def to_dict(self) -> dict[str, Any]:
        return {"spec": self.spec, "checkpoint": self.checkpoint, "source": self.source, "class": self.cls}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AgentId:
        return cls(d["spec"], d.get("checkpoint"), d.get("source"), d.get("class"))


file_sha256 = targets.file_sha256


def checkpoint_hash(agent: Agent) -> str | None:
    """SHA-256 of the weights an agent plays, if it plays a file (a learned policy, an SB3 model)."""
    learned = sys.modules.get("agents.learned")
    if learned is not None and isinstance(agent, learned.LearnedAgent):
        return None if agent.source is None else file_sha256(learned.resolve_checkpoint(agent.source))
    for key in CHECKPOINT_PARAMS:
        value = agent.params.get(key)
        if isinstance(value, str) and Path(value).is_file():
            return file_sha256(value)
    return None


def identify(spec: str | Agent) -> AgentId:
    """The :class:`AgentId` of an agent spec (built once to read its parameters, checkpoint and code)."""
    agent = agent_from_spec(spec) if isinstance(spec, str) else spec
    about = provenance(agent, agent.spec_text(always=CHECKPOINT_PARAMS))
    return AgentId(about["spec"], checkpoint_hash(agent), about["source"], about["class"])


def shipped_policies_for(game: Game) -> list[str]:
    """The shipped policies trained for exactly the game ``game`` plays (empty when torch is missing)."""
    try:
        from agents.learned import CheckpointError, available_policies, check_compatible, read_policy
    except ImportError:
        return []
    names = []
    for name in available_policies():
        try:
            _, layout, _ = read_policy(name)
            check_compatible(layout, game, name)
        except CheckpointError:
            continue
        names.append(name)
    return names


def reference_agents(game: Game) -> list[str]:
    """The registry names of the :attr:`~agents.base.Agent.reference` agents that support ``game``'s table, in
    registry order (an agent whose module cannot be imported here, or that refuses the table, is left out)."""
    names = []
    for name in AGENTS:
        try:
            if not getattr(agent_class(name), "reference", False):
                continue
            agent = make_agent(name, seed=0)
            agent.setup(game, 0)
        except (MauschelnError, ValueError):
            continue
        if agent.supports(game):
            names.append(name)
    return names


SEARCH = "pimc:model={policy},phases=play"
"""The search agent of a table's field: ``pimc``'s card play searched with the table's shipped policy as the
model of every seat (its bidding and exchanges are the policy's own)."""


def reference_field(deal_set: DealSet) -> list[str]:
    """The field of a table: :func:`reference_agents`, then ``learned:checkpoint=<name>`` for every shipped
    policy of it, then, where ``pimc`` plays the table, the search agent on each of those policies
    (:data:`SEARCH`)."""
    game = deal_set.game
    agents = reference_agents(game)
    policies = shipped_policies_for(game)
    search = [SEARCH.format(policy=name) for name in policies] if "pimc" in agents else []
    return [*agents, *(f"learned:checkpoint={name}" for name in policies), *search]


FIELD_DEALS = 500
"""The fewest deals per pairing of a complete reference field: the searching agents play this many deals of the
suite against the field, the others the whole suite where it fits (``benchmarks/bench_suite.py``)."""


def reference_keys(deal_set: DealSet) -> list[str]:
    """The leaderboard keys (:attr:`AgentId.key`) of a table's :func:`reference_field` as this checkout plays it:
    a shipped policy's key holds the hash of its weights, so a record of another version of it does not count."""
    return [identify(spec).key for spec in reference_field(deal_set)]


# ---------------------------------------------------------------------- provenance
def project_info() -> dict[str, Any]:
    """The project's version and, in a git checkout, the commit and whether tracked files differ from it."""
    root = Path(__file__).resolve().parents[2]
    info: dict[str, Any] = {"version": mauscheln_env.__version__, "commit": None, "dirty": None}
    if not (root / ".git").exists():
        return info
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=30, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return info
    info.update(commit=commit or None, dirty=bool(status.strip()))
    return info


def machine_info() -> dict[str, Any]:
    """The machine and build a measurement ran on: ``build`` is ``compiled`` where this process imports the
    compiled build of the search and the scripted agents (``mauscheln compile build``), else ``source``."""
    info = {"platform": platform.platform(), "python": platform.python_version(), "cpu": cpu_model(),
            "cpus": os.cpu_count(), "numpy": np.__version__, "build": "compiled" if loaded() else "source"}
    if "torch" in sys.modules:
        info["torch"] = sys.modules["torch"].__version__
    return info


# ---------------------------------------------------------------------- replays in a record
def encode_game(actions: Sequence[int]) -> str:
    """A game's action ids as text: two hex digits each."""
    return "".join(f"{a:02x}" for a in actions)


def decode_game(text: str) -> list[int]:
    if not isinstance(text, str) or len(text) % 2 or any(c not in "0123456789abcdef" for c in text):
        raise ValueError(f"{text[:40]!r} is not a game's actions (two hex digits per action)")
    return [int(text[i:i + 2], 16) for i in range(0, len(text), 2)]


def mirror_pair(p: PairResult, candidate: str, baseline: str) -> PairResult:
    """The pairing ``baseline`` vs ``candidate`` of ``p`` seen from the other side: the same games, the formats
    swapped (exact with common random numbers)."""
    if p.per_deal is None:
        raise BenchError("a pairing without per-deal values cannot be mirrored")
    per_deal = p.per_deal[:, ::-1].copy()
    roles = {"candidate": dict(p.roles["baseline"]), "baseline": dict(p.roles["candidate"])}
    out = summarize(candidate, baseline, per_deal, roles, p.games, 0.0)
    out.agent_counts = {other: dict(p.agent_counts[who]) for who, other in (("candidate", "baseline"),
                                                                           ("baseline", "candidate"))
                       if who in p.agent_counts}
    if p.actions is not None:
        half = len(p.actions[0]) // 2 if p.actions else 0
        out.actions = [games[half:] + games[:half] for games in p.actions]
    return out


# ---------------------------------------------------------------------- the run
def settings_for(deal_set: DealSet, deals: int) -> Settings:
    """The evaluation settings of a table (its rules, single deals, empty pot, CRN)."""
    config = deal_set.config
    settings = Settings(ruleset=deal_set.ruleset, players=deal_set.players, deals=deals, seed=deal_set.seed,
                        start=0, session_deals=1, pot=0, crn=True,
                        rule_options=tuple(sorted(options_of(config).items())))
    if settings.config() != config:
        raise DealSetError(f"{deal_set.table}: the deal set's rules do not build the same table here")
    return settings


def pair_record(p: PairResult, opponent: AgentId, replays: int, source: Any) -> dict[str, Any]:
    d = p.to_dict()
    d["opponent"] = opponent.to_dict()
    d["first_deal"] = 0
    d["source"] = source
    games = p.actions or []
    d["replays"] = [[encode_game(g) for g in deal] for deal in games[:replays]]
    return d


def snap_per_deal(values: Any, players: int) -> np.ndarray:
    """Per-deal means as stored (6 decimals) back to the exact values the run computed: chips are whole, so
    each mean is a multiple of 1 / (n (n - 1)), and the nearest such multiple is the float the run had."""
    m = players * (players - 1)
    return np.round(np.asarray(values, dtype=np.float64) * m) / m


def pair_from_record(d: Mapping[str, Any], players: int) -> PairResult:
    """A record's pairing as a :class:`PairResult` (the per-deal values snapped exact, the summary
    recomputed from them), with the action ids of its recorded games."""
    p = PairResult.from_dict(dict(d))
    exact = summarize(p.candidate, p.baseline, snap_per_deal(p.per_deal, players), p.roles, p.games, p.seconds)
    exact.agent_counts = p.agent_counts
    exact.actions = [[decode_game(g) for g in deal] for deal in d.get("replays") or []]
    return exact


def find_reusable(records: Sequence[Mapping[str, Any]], me: AgentId, opponent: AgentId, deal_set: DealSet,
                  deals: int, project: Mapping[str, Any]) -> tuple[PairResult, str] | None:
    """A pairing ``opponent`` vs ``me`` over the first ``deals`` deals in one of ``records``, measured by the
    same clean commit on the same deal set: ``(pairing, record digest)``, else None."""
    for rec in records:
        if AgentId.from_dict(rec["agent"]).key != opponent.key:
            continue
        if rec["suite"].get("hash") != deal_set.hash or rec["suite"].get("table") != deal_set.table:
            continue
        theirs = rec.get("project") or {}
        if not project.get("commit") or theirs.get("commit") != project["commit"] or project.get("dirty") \
                or theirs.get("dirty"):
            continue
        for d in rec["pairs"]:
            o = d.get("opponent") or {}
            if o.get("spec") and AgentId.from_dict(o).key == me.key and d.get("first_deal") == 0 \
                    and d.get("deals") == deals:
                return pair_from_record(d, deal_set.players), record_digest(rec)
    return None


class Partial:
    """The pairings a run has played so far, kept in a file beside its record (``<out>.partial.json``) after
    each one, and the blocks of deals played of the pairing under way, kept after each block, so that the same
    run started again after a stop (Ctrl-C, a killed job) plays only the rest.

    The file names the run it belongs to (the candidate, the deal set, each pairing to play and its deals, the
    replays kept, the project's version and commit); a run that differs in any of these refuses the file
    rather than mixing results. A checkout whose tracked files differ from its commit keeps nothing (its
    code may change between the two starts), as :func:`find_reusable` mirrors nothing from one. A pairing's
    games are a function of the suite's seeds alone, so a pairing kept is the pairing the run would play."""

    def __init__(self, path: Path | None, run: dict[str, Any], pairs: dict[str, dict[str, Any]],
                 seconds: float, open_pair: dict[str, Any] | None = None) -> None:
        self.path, self.run, self.pairs, self.seconds = path, run, pairs, seconds
        # the pairing under way: {"opponent": key, "seconds": its time so far, "blocks": [block results]}
        self.open_pair = open_pair

    @classmethod
    def open(cls, path: str | Path | None, run: dict[str, Any], log: Callable[[str], None]) -> Partial:
        """The pairings kept for ``run`` at ``path`` (none if there is no file, no path, or a dirty checkout)."""
        if path is None or run["project"].get("dirty"):
            return cls(None, run, {}, 0.0)
        path = Path(path)
        if not path.exists():
            return cls(path, run, {}, 0.0)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            theirs, pairs, seconds = data["run"], data["pairs"], float(data["seconds"])
            open_pair = data.get("open")
            if not isinstance(theirs, dict) or not isinstance(pairs, dict) \
                    or not all(isinstance(p, dict) and "opponent" in p for p in pairs.values()) \
                    or not 0.0 <= seconds < math.inf or not (open_pair is None or _is_open_pair(open_pair)):
                raise ValueError("not what bench run writes")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BenchError(f"{path} cannot be read ({exc}); allowed: the file a stopped run left, or none "
                             "(delete it to play every pairing again)") from exc
        run = json.loads(strict_json(run))  # as the file holds it
        if theirs != run:
            differs = sorted(k for k in set(theirs) | set(run) if theirs.get(k) != run.get(k))
            raise BenchError(f"{path} holds the pairings of another run (its {', '.join(differs)} differ); "
                             "allowed: the same command again to go on, or delete the file to start anew")
        under_way = ""
        if open_pair is not None:
            under_way = (f", and {sum(len(b['per_deal']) for b in open_pair['blocks'])} deal(s) of the pairing "
                         f"against {open_pair['opponent']}")
        log(f"going on from {path}: {len(pairs)} pairing(s) kept{under_way}")
        return cls(path, run, pairs, seconds, open_pair)

    def __contains__(self, opponent: str) -> bool:
        return opponent in self.pairs

    def __getitem__(self, opponent: str) -> dict[str, Any]:
        return self.pairs[opponent]

    def blocks(self, opponent: str) -> tuple[list[dict[str, Any]], float]:
        """The blocks kept of the pairing against ``opponent`` (cut short by a stop) and its seconds so far."""
        o = self.open_pair
        if o is None or o["opponent"] != opponent:
            return [], 0.0
        return o["blocks"], float(o["seconds"])

    def add_block(self, opponent: str, out: Mapping[str, Any], seconds: float, run_seconds: float,
                  replays: int) -> None:
        """Keep a block of deals just played against ``opponent``; ``seconds``: the pairing's wall time so far,
        ``run_seconds``: the run's, earlier starts included. Only the games of the first ``replays`` deals (the
        record's replays) keep their actions."""
        if self.path is None:
            return
        if self.open_pair is None or self.open_pair["opponent"] != opponent:
            self.open_pair = {"opponent": opponent, "seconds": 0.0, "blocks": []}
        start = int(out["start"])
        block = {k: out[k] for k in ("start", "roles", "games")}
        block["per_deal"] = np.asarray(out["per_deal"], dtype=np.float64).tolist()
        block["counts"] = out.get("counts") or {}
        actions = out.get("actions")
        block["actions"] = None if actions is None else [a if start + i < replays else None
                                                         for i, a in enumerate(actions)]
        self.open_pair["blocks"].append(json.loads(strict_json(block)))
        self.open_pair["seconds"] = seconds
        self.seconds = run_seconds
        self._write()

    def add(self, opponent: str, pair: dict[str, Any], seconds: float) -> None:
        """Keep a pairing just played; ``seconds``: the run's wall time so far, earlier starts included."""
        if self.path is None:
            return
        self.pairs[opponent] = json.loads(strict_json(pair))
        self.seconds = seconds
        self.open_pair = None
        self._write()

    def _write(self) -> None:
        data = {"run": self.run, "pairs": self.pairs, "seconds": self.seconds}
        if self.open_pair is not None:
            data["open"] = self.open_pair
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.path, strict_json(data))


def _is_open_pair(o: Any) -> bool:
    """Whether ``o`` has the form of a partial file's pairing under way (its blocks' deals are checked where they
    are played, against the pairing's deals)."""
    if not isinstance(o, dict) or not isinstance(o.get("opponent"), str) or not isinstance(o.get("blocks"), list):
        return False
    if not isinstance(o.get("seconds"), (int, float)) or not 0.0 <= o["seconds"] < math.inf:
        return False
    for b in o["blocks"]:
        if not isinstance(b, dict) or not isinstance(b.get("start"), int) or not isinstance(b.get("games"), int) \
                or not isinstance(b.get("per_deal"), list) or not isinstance(b.get("counts"), dict) \
                or not isinstance(b.get("roles"), dict) \
                or not all(isinstance(b["roles"].get(w), dict) for w in ("candidate", "baseline")) \
                or not (b.get("actions") is None or isinstance(b["actions"], list)):
            return False
    return True


def run_bench(agent: str, deal_set: DealSet, *, field: Sequence[str] | None = None, exclude: Sequence[str] = (),
              deals: int | None = None, caps: Mapping[str, int] | None = None, workers: int = 1,
              replays: int = REPLAYS, reuse: Sequence[Mapping[str, Any]] = (), progress: bool = False,
              command: str = "", log: Callable[[str], None] | None = None,
              partial: str | Path | None = None) -> dict[str, Any]:
    """Play ``agent`` against the field of ``deal_set``'s table on its deals; the result record.

    ``field``: the opponents (default :func:`reference_field`); ``exclude``: opponents left out; ``deals``:
    the first so many deals of the suite (default all); ``caps``: fewer deals against some opponents
    (``{"pimc": 100}``); ``replays``: how many deals' games to keep for replays; ``reuse``: earlier records
    whose pairings may be mirrored (:func:`find_reusable`); ``partial``: a file that keeps every pairing
    played so far (:class:`Partial`), so that the same run started again after a stop plays only the rest
    (the caller removes it once the record is written).
    """
    t0 = time.perf_counter()
    log = log or (lambda _text: None)
    total = len(deal_set)
    deals = total if deals is None else deals
    for name, value, low in (("deals", deals, 1), ("workers", workers, 1), ("replays", replays, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise BenchError(f"{name}={value!r} is not allowed; allowed: a whole number >= {low}")
    if deals > total:
        raise BenchError(f"deals={deals} is not allowed; the {deal_set.suite} deal set of {deal_set.table} holds "
                         f"{total} deals")
    game = deal_set.game
    me_agent = agent_from_spec(agent)
    me_agent.setup(game, 0)  # a policy made for another table fails here
    me = identify(me_agent)
    specs = list(field) if field is not None else reference_field(deal_set)
    ids = {}
    for spec in specs:
        opp = agent_from_spec(spec)
        opp.setup(game, 0)
        ids[spec] = identify(opp)
    drop = {identify(x).key for x in exclude}
    unknown_caps = sorted(set(caps or {}) - {ids[s].spec for s in specs} - set(specs))
    if unknown_caps:
        raise BenchError(f"--cap names {', '.join(unknown_caps)}, not in the field; allowed: "
                         f"{', '.join(ids[s].spec for s in specs)}")
    opponents = []
    for spec in specs:
        oid = ids[spec]
        if oid.key == me.key or oid.key in drop or any(oid.key == o.key for _, o in opponents):
            continue
        opponents.append((spec, oid))
    if not opponents:
        raise BenchError("no opponent left in the field; allowed: a field with an agent other than the candidate")
    project = project_info()
    plan = []  # (opponent, deals, the pairing to mirror or None)
    for spec, oid in opponents:
        n = deals
        for key in (spec, oid.spec):
            if caps and key in caps:
                n = min(n, int(caps[key]))
        plan.append((oid, n, find_reusable(reuse, me, oid, deal_set, n, project)))
    kept = Partial.open(partial, {
        "agent": me.key, "deal_set": deal_set.hash, "table": deal_set.table, "replays": replays,
        "project": project, "pairings": [[oid.key, n] for oid, n, found in plan if found is None]}, log)
    t0 -= kept.seconds
    todo = [(oid, n) for oid, n, found in plan if found is None and oid.key not in kept]
    played = [(f"{me.key} vs {oid.key}", n - sum(len(b["per_deal"]) for b in kept.blocks(oid.key)[0]))
              for oid, n in todo]
    costs = probe_costs(me.spec, [oid.spec for oid, _ in todo], deal_set) if progress and played else None
    bar = RunProgress(played, costs=costs, workers=workers, enabled=progress, title="mauscheln bench run")
    pairs = []
    played_here = 0
    try:
        for oid, n, found in plan:
            if found is not None:
                theirs, digest = found
                p = mirror_pair(theirs, me.spec, oid.spec)
                pairs.append(pair_record(p, oid, replays, {"mirrored_from": digest}))
                log(f"{me.key} vs {oid.key}: {n} deals mirrored from record {digest[7:19]}")
                continue
            if oid.key in kept:
                pairs.append(kept[oid.key])
                log(f"{me.key} vs {oid.key}: {n} deals kept from the stopped run ({kept.path})")
                continue
            bar.begin(played_here)
            blocks, before = kept.blocks(oid.key)
            began = time.perf_counter()

            def keep(out: dict[str, Any], key: str = oid.key, began: float = began, before: float = before) -> None:
                now = time.perf_counter()
                kept.add_block(key, out, before + now - began, now - t0, replays)

            try:
                deals_left(blocks, 0, n)
            except ValueError as exc:
                raise BenchError(f"{kept.path}: the deals kept of the pairing against {oid.key} do not fit it ({exc});"
                                 " allowed: the file a stopped run left, or delete it to play every pairing "
                                 "again") from exc
            p = evaluate_pair(me.spec, oid.spec, settings_for(deal_set, n), workers=workers, progress=bar,
                              deals=deal_set.deals[:n], record=replays > 0,
                              label=f"{me.key} vs {oid.key}", kept=blocks, on_block=keep)
            p.seconds += before
            bar.end()
            if replays and p.actions is not None:
                p.actions = p.actions[:replays]
            pairs.append(pair_record(p, oid, replays, "played"))
            kept.add(oid.key, pairs[-1], time.perf_counter() - t0)
            played_here += 1
            counts = p.agent_counts.get("candidate")
            log(f"{me.key} vs {oid.key}: {n} deals, advantage {p.advantage} chips/deal, {p.seconds:.1f}s"
                + (f"; counts: {', '.join(f'{k} {v}' for k, v in counts.items())}" if counts else ""))
    finally:
        bar.close()
    return {
        "format": RESULT_FORMAT,
        "agent": {**me.to_dict(), "key": me.key},
        "suite": deal_set.describe(),
        "field": [ids[s].to_dict() for s in specs],
        "settings": {"formats": list(FORMATS), "crn": True, "session_deals": 1, "pot": 0, "replays": replays,
                     "per_deal_columns": list(PER_DEAL_COLUMNS), "rules": deal_set.config.to_dict()},
        "project": project,
        "machine": machine_info(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": round(time.perf_counter() - t0, 3),
        "workers": workers,
        "command": command,
        "pairs": pairs,
    }


def probe_costs(candidate: str, opponents: Sequence[str], deal_set: DealSet, deals: int = 2) -> list[float]:
    """Seconds of this process per deal of each pairing, timed on ``deals`` deals spread over the suite after
    one untimed deal (which builds the agents and warms their caches): what the progress line's estimate of
    the time left starts from, as pairings differ in cost by orders of magnitude. The games are played again
    in the run."""
    settings = settings_for(deal_set, 1)
    picks = sorted({(i + 1) * len(deal_set) // (deals + 1) for i in range(deals)})
    out = []
    for opponent in opponents:
        play_block(settings, candidate, opponent, 0, 1, deals=deal_set.deals[:1])
        t0 = time.perf_counter()
        for d in picks:
            play_block(settings, candidate, opponent, d, d + 1, deals=deal_set.deals[d:d + 1])
        out.append((time.perf_counter() - t0) / len(picks))
    return out


def record_digest(record: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of a record's canonical JSON: the record's identity in the leaderboard. The JSON is the
    strict text the record is written as (an undefined interval is ``null``), so a record has one digest held
    in memory (where the interval is infinite), read back from its file, or read from an older file that spelt
    it ``Infinity``."""
    text = strict_json(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def without_timing(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record less its :data:`TIMING` fields and each pairing's ``seconds``: what two runs must share."""
    out = {k: v for k, v in record.items() if k not in TIMING}
    out["pairs"] = [{k: v for k, v in p.items() if k != "seconds"} for p in record.get("pairs", [])]
    return out


def write_record(record: Mapping[str, Any], path: str | Path) -> Path:
    """Write a record as strict JSON (an undefined interval is ``null``), gzip-compressed when ``path`` ends in
    ``.gz`` (no timestamp in the gzip header, so the same record gives the same bytes)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = strict_json(record, indent=1) + "\n"
    if path.suffix == ".gz":
        data = gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)
        return atomic_write(path, lambda tmp: tmp.write_bytes(data))
    return atomic_write_text(path, text)


def deal_set_for(suite: str, ruleset: str, players: int | None) -> DealSet:
    check_suite(suite)
    return load_deal_set(suite, find_table(suite, ruleset, players))
