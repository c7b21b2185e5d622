"""Duplicate-deal evaluation and tournaments (``mauscheln eval``).

Duplicate deals
    Deal ``d`` of a series is fixed in full — every hand, the trump card, the
    stock order and the dealer — by :func:`agents.evaluation.match.make_deal` from
    ``(seed, d)``; later deals of a multi-deal session come from a session
    shuffle seeded by ``(seed, d)`` too. Each deal is replayed ``2 n`` times:

    * format ``alone``: the candidate alone at seat r against a field of the
      baseline at the other seats, for r = 0 .. n-1;
    * format ``field``: the baseline alone at seat r against a field of
      candidates, for r = 0 .. n-1.

    Every agent is reseeded before every deal from ``(seed, d, deal-in-session,
    seat)`` — common random numbers: whoever sits at a seat draws the same
    random numbers (``crn=False`` adds the agent's identity to the key).

Scores
    In each format and deal, the candidate's mean chips per seat-deal and the
    baseline's mean chips per seat-deal are taken over the same ``n`` seats (each
    seat's cards are played once by the lone agent and ``n - 1`` times by the
    field, and each seat is weighed equally), so the luck of the cards cancels.
    The *advantage* of a deal is the mean over the two formats of (candidate −
    baseline). Reported per pairing: the mean advantage in chips per deal with
    a 95 % confidence interval over deals (normal approximation), the same per
    format, each agent's own mean chips per deal, how often each role occurred,
    and the deals won, lost and tied (advantage > 0, < 0, = 0).

Backends
    ``reference`` plays each game on the reference engine, any agent.
    ``batched`` plays every game of a block of deals at once on the batched
    engine with the agents' tensor forms (``random``, ``beginner``, ``expert``,
    ``learned``; single deals): the same deals, chance and scripted decisions,
    so a deal without random agent draws gives the same figures on both
    (:mod:`agents.evaluation.batched`), several times faster. ``auto`` (the command's
    default) takes ``batched`` for each pairing that can run there. Each
    pairing's ``backend`` is recorded in ``results.json``.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from multiprocessing import resource_tracker
from typing import Any

import numpy as np

from agents.base import Agent, agent_from_spec, canonical_spec, parse_agent_spec, spec_files_stamp
from agents.evaluation.match import FORMATS, ROLE_KEYS, FixedDeal, MatchRunner, lineup_of, series_deal
from agents.evaluation.progress import RunProgress
from mauscheln_env.config import RuleConfig
from mauscheln_env.engine import Game
from mauscheln_env.errors import ConfigError, shown
from mauscheln_env.options import MAX_AMOUNT
from mauscheln_env.ruleargs import (
    rule_config,
)

PER_DEAL_COLUMNS = {
    "alone_candidate": "format alone (the candidate at one seat, the baseline at the others): the candidate's "
                       "mean chips per seat-deal",
    "alone_baseline": "format alone: the baseline field's mean chips per seat-deal",
    "field_candidate": "format field (the baseline at one seat, candidates at the others): the candidates' "
                       "mean chips per seat-deal",
    "field_baseline": "format field: the lone baseline's mean chips per seat-deal",
}
"""The columns of a pairing's ``per_deal`` rows in ``results.json``, in order, and what each holds."""
Z95 = 1.959963984540054
BACKENDS = ("reference", "batched", "auto")
"""Where a pairing's games run (:attr:`Settings.backend`)."""
MAX_DEALS = 10_000_000
"""The most duplicate deals of one pairing: its per-deal rows are held in memory (a longer series is played in
pieces with ``start``)."""
MAX_WORKERS = 1024
"""The most worker processes of one evaluation."""
TIE_TOLERANCE = 1e-5
"""A deal's advantage within this of 0 is a tie: float rounding (and the 6 decimals of ``results.json``) must
not turn a tie into a win; a real advantage is at least 1 / (2 n (n - 1)) chips."""


# ---------------------------------------------------------------------- statistics
@dataclass
class Estimate:
    """A mean with its 95 % confidence interval (normal approximation) over ``n`` samples."""

    mean: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float] | np.ndarray) -> Estimate:
        x = np.asarray(values, dtype=np.float64)
        if x.size == 0:
            return cls(float("nan"), float("nan"), float("nan"), 0)
        mean = float(x.mean())
        if x.size < 2:
            return cls(mean, float("-inf"), float("inf"), int(x.size))
        half = Z95 * float(x.std(ddof=1)) / math.sqrt(x.size)
        return cls(mean, mean - half, mean + half, int(x.size))

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def text(self, sign: int = 1) -> str:
        """``+0.123 ± 0.045`` (the mean times ``sign``, the half-width of the interval); ``± —`` where the
        interval is undefined (fewer than two deals)."""
        half = self.half_width
        return f"{sign * self.mean:+.3f} ± " + (f"{half:.3f}" if math.isfinite(half) else "—")

    def __str__(self) -> str:
        return self.text()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Estimate:
        """An estimate as written to a file: ``null`` (or, in older files, NaN/Infinity) is undefined (NaN)."""
        return cls(*(_number(d[k]) for k in ("mean", "low", "high")), d["n"])


def _number(x: Any) -> float:
    if x is None:
        return float("nan")
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"{x!r} is not a number or null")
    return float(x) if math.isfinite(x) else float("nan")


@dataclass
class PairResult:
    """Everything measured for one pairing (candidate vs baseline)."""

    candidate: str
    baseline: str
    deals: int
    advantage: Estimate
    advantage_by_format: dict[str, Estimate]
    candidate_chips: dict[str, Estimate]
    baseline_chips: dict[str, Estimate]
    wins: int
    losses: int
    ties: int
    roles: dict[str, dict[str, int]]
    """Role counts per agent ("candidate"/"baseline") over all its seat-deals."""
    games: int
    seconds: float
    backend: str = "reference"
    """Where the games ran: ``reference`` or ``batched`` (:attr:`Settings.backend`)."""
    per_deal: np.ndarray | None = field(default=None, repr=False)
    """Per deal: [alone cand, alone base, field cand, field base] mean chips per seat-deal (:data:`PER_DEAL_COLUMNS`)."""
    actions: list[list[list[int]]] | None = field(default=None, repr=False)
    """With ``record=True``: per deal, the action ids of each of its ``2 n`` games, in the order of
    :func:`game_order` (not part of :meth:`to_dict`; the benchmark stores them in its own format)."""
    agent_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    """What each side's agents counted over the pairing (:meth:`agents.base.Agent.counts`, summed over its seats):
    ``{"candidate": {...}, "baseline": {...}}``; in :meth:`to_dict` only when an agent counts something."""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("per_deal")
        d.pop("actions")
        if not any(self.agent_counts.values()):
            d.pop("agent_counts")
        if self.per_deal is not None:
            d["per_deal_columns"] = list(PER_DEAL_COLUMNS)
            d["per_deal"] = np.round(self.per_deal, 6).tolist()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PairResult:
        def est(x: dict) -> Estimate:
            return Estimate.from_dict(x)

        per_deal = None if d.get("per_deal") is None else np.asarray(d["per_deal"], dtype=np.float64)
        if per_deal is not None and (per_deal.ndim != 2 or per_deal.shape != (d["deals"], 4)
                                     or not np.isfinite(per_deal).all()):
            raise ValueError(f"per_deal has shape {per_deal.shape}; allowed: {d['deals']} rows (one per deal) "
                             f"of {len(PER_DEAL_COLUMNS)} finite numbers ({', '.join(PER_DEAL_COLUMNS)})")
        return cls(
            candidate=d["candidate"],
            baseline=d["baseline"],
            deals=d["deals"],
            advantage=est(d["advantage"]),
            advantage_by_format={k: est(v) for k, v in d["advantage_by_format"].items()},
            candidate_chips={k: est(v) for k, v in d["candidate_chips"].items()},
            baseline_chips={k: est(v) for k, v in d["baseline_chips"].items()},
            wins=d["wins"],
            losses=d["losses"],
            ties=d["ties"],
            roles=d["roles"],
            games=d["games"],
            seconds=d["seconds"],
            backend=d.get("backend", "reference"),
            per_deal=per_deal,
            agent_counts=check_agent_counts(d.get("agent_counts", {})),
        )


def check_agent_counts(value: Any) -> dict[str, dict[str, int]]:
    """``agent_counts`` as a pairing stores it: a mapping from ``candidate``/``baseline`` to counts (whole numbers
    >= 0 by name); raises ValueError naming what is allowed."""
    allowed = "a mapping from candidate/baseline to a mapping of names to whole numbers >= 0"
    if not isinstance(value, dict) or set(value) - {"candidate", "baseline"}:
        raise ValueError(f"agent_counts {value!r} is not allowed; allowed: {allowed}")
    for counts in value.values():
        if not isinstance(counts, dict) or not all(isinstance(k, str) and _is_whole(v) and v >= 0
                                                   for k, v in counts.items()):
            raise ValueError(f"agent_counts {value!r} is not allowed; allowed: {allowed}")
    return {who: dict(counts) for who, counts in value.items()}


def add_counts(total: dict[str, dict[str, int]], more: dict[str, dict[str, int]] | None) -> None:
    """Add the counts of ``more`` into ``total`` (both ``{"candidate": {...}, "baseline": {...}}``)."""
    for who, counts in (more or {}).items():
        mine = total.setdefault(who, {})
        for key, value in counts.items():
            mine[key] = mine.get(key, 0) + value


# ---------------------------------------------------------------------- evaluation settings
@dataclass(frozen=True)
class Settings:
    """How the matches are played (everything but the agents)."""

    ruleset: str = "mauscheln"
    players: int | None = 4
    """Seats; None: the preset's player count, else 4."""
    deals: int = 1000
    seed: int = 0
    start: int = 0
    """Index of the first duplicate deal (a series can be played in chunks and merged)."""
    session_deals: int = 1
    pot: int = 0
    crn: bool = True
    rule_options: tuple[tuple[str, Any], ...] = ()
    backend: str = "reference"
    """Where the games run: ``reference`` (the engine, one game at a time), ``batched`` (every game of a block of
    deals at once on the batched engine, with the agents' tensor forms; :mod:`agents.evaluation.batched`), or ``auto``
    (batched for each pairing that can run there, else reference)."""

    def config(self) -> RuleConfig:
        self.validate()
        return rule_config(self.ruleset, self.players, dict(self.rule_options),
                           max_deals=(self.session_deals, "--session-deals"))

    def validate(self) -> None:
        """Raise :class:`~mauscheln_env.errors.ConfigError` for a setting that is not allowed."""
        for name, low, high in (("deals", 1, MAX_DEALS), ("seed", 0, None), ("start", 0, None),
                                ("session_deals", 1, None), ("pot", 0, MAX_AMOUNT)):
            value = getattr(self, name)
            if not _is_whole(value) or value < low or (high is not None and value > high):
                span = f">= {low}" if high is None else f"{low}..{high}"
                raise ConfigError(f"{name}={shown(value)} is not allowed; allowed: a whole number {span}")
        if self.players is not None and not _is_whole(self.players):
            raise ConfigError(f"players={self.players!r} is not allowed; allowed: None or a whole number")
        if not isinstance(self.crn, bool):
            raise ConfigError(f"crn={self.crn!r} is not allowed; allowed: True or False")
        if self.backend not in BACKENDS:
            raise ConfigError(f"backend={self.backend!r} is not allowed; allowed: {', '.join(BACKENDS)}")


def _is_whole(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


# ---------------------------------------------------------------------- worker side
_WORKER_CACHE: dict[str, Any] = {}


def _agents_for(spec: str, game: Game, count: int, role: str) -> list[Agent]:
    """``count`` instances of ``spec`` (one per seat) for one side of a pairing, cached per process (a checkpoint
    file rewritten since is read again)."""
    key = f"{role}|{spec}|{id(game)}|{spec_files_stamp(spec)}"
    agents = _WORKER_CACHE.get(key)
    if agents is None:
        agents = [agent_from_spec(spec) for _ in range(count)]
        _WORKER_CACHE[key] = agents
    return agents


def side_counts(agents: Sequence[Agent]) -> dict[str, int]:
    """The sum of :meth:`~agents.base.Agent.counts` over ``agents`` (the instances of one side)."""
    total: dict[str, int] = {}
    for agent in agents:
        for key, value in agent.counts().items():
            if not _is_whole(value) or value < 0:
                raise ValueError(f"{agent!r}: counts() gives {key}={value!r}; allowed: whole numbers >= 0")
            total[key] = total.get(key, 0) + int(value)
    return total


def _runner_for(settings: Settings) -> MatchRunner:
    key = f"runner|{settings}"
    runner = _WORKER_CACHE.get(key)
    if runner is None:
        runner = MatchRunner(Game(settings.config()))
        _WORKER_CACHE[key] = runner
    return runner


def play_block(settings: Settings, candidate: str, baseline: str, start: int, stop: int,
               deals: Sequence[FixedDeal] | None = None, record: bool = False) -> dict[str, Any]:
    """Play duplicate deals ``start .. stop-1`` of one pairing in both formats.

    ``deals`` are the :class:`~agents.evaluation.match.FixedDeal` of those indices (an explicit deal list such as
    a benchmark suite); None takes them from the series of ``settings.seed``
    (:func:`agents.evaluation.match.series_deal`). Returns per-deal means ``[alone cand, alone base, field cand,
    field base]``, the role counts of each agent and how much each side's :meth:`~agents.base.Agent.counts` grew (the
    agents are kept between blocks); with ``record``, also every game's action ids.
    """
    runner = _runner_for(settings)
    game = runner.game
    n = game.n
    cands = _agents_for(candidate, game, n, "candidate")
    bases = _agents_for(baseline, game, n, "baseline")
    before = {"candidate": side_counts(cands), "baseline": side_counts(bases)}
    chips = None
    per_deal = np.zeros((stop - start, 4), dtype=np.float64)
    roles = {"candidate": dict.fromkeys(ROLE_KEYS, 0), "baseline": dict.fromkeys(ROLE_KEYS, 0)}
    games = 0
    if deals is not None and len(deals) != stop - start:
        raise ValueError(f"{len(deals)} deals for the indices {start}..{stop - 1}; allowed: one per index")
    actions: list[list[list[int]]] | None = [] if record else None
    for i, d in enumerate(range(start, stop)):
        fixed = deals[i] if deals is not None else series_deal(game, settings.seed, d)
        if actions is not None:
            actions.append([])
        for f, fmt in enumerate(FORMATS):
            lone_sum = 0.0
            field_sum = 0.0
            for r in range(n):
                holds = lineup_of(fmt, r, n)
                lineup = [cands[s] if holds[s] else bases[s] for s in range(n)]

                def seed_for(k: int, s: int, fixed: FixedDeal = fixed, f: int = f, r: int = r, fmt: str = fmt) -> int:
                    if settings.crn:
                        return fixed.seed_for(k, s)
                    ident = 1 if (s == r) == (fmt == "alone") else 2
                    return fixed.seed_for(k, s, ident, f, r)

                moves: list[int] = []
                rec = runner.play(
                    lineup, dealer=fixed.dealer, deal=fixed.spec, session_seed=fixed.session_seed,
                    chips=chips, pot=settings.pot, seed_for=seed_for,
                    on_decision=(lambda *a, moves=moves: moves.append(int(a[5]))) if record else None,
                )
                if actions is not None:
                    actions[-1].append(moves)
                games += 1
                lone_sum += rec.deltas[r]
                field_sum += sum(rec.deltas) - rec.deltas[r]
                for deal_roles in rec.roles:
                    for s, role in enumerate(deal_roles):
                        who = "candidate" if (s == r) == (fmt == "alone") else "baseline"
                        roles[who][role] = roles[who].get(role, 0) + 1
            lone = lone_sum / n
            fld = field_sum / (n * (n - 1))
            if fmt == "alone":
                per_deal[i, 0], per_deal[i, 1] = lone, fld
            else:
                per_deal[i, 2], per_deal[i, 3] = fld, lone
    after = {"candidate": side_counts(cands), "baseline": side_counts(bases)}
    counts = {who: {k: v - before[who].get(k, 0) for k, v in after[who].items()} for who in after}
    return {"start": start, "per_deal": per_deal, "roles": roles, "games": games, "actions": actions,
            "counts": counts}


def _run_task(job: tuple) -> dict[str, Any]:
    fn, args = job
    return fn(*args)


def pair_backend(candidate: str, baseline: str, settings: Settings, record: bool = False) -> str:
    """The backend a pairing runs on under ``settings.backend`` (``auto``: batched where it can);
    ``batched`` for a pairing that cannot run there raises :class:`ConfigError` saying why."""
    settings.validate()
    if settings.backend == "reference":
        return "reference"
    with _ctrl_c_held():  # the first import of torch in this process: see _ctrl_c_held
        from agents.evaluation.batched import batched_reason

    reason = "recording actions needs the reference backend" if record else None
    reason = reason or batched_reason(candidate, baseline, settings)
    if reason is None:
        return "batched"
    if settings.backend == "batched":
        raise ConfigError(f"backend=batched: {candidate} vs {baseline}: {reason}; allowed: backend=reference or auto")
    return "reference"


# ---------------------------------------------------------------------- driver
def evaluate_pair(candidate: str, baseline: str, settings: Settings, *, workers: int = 1, block: int | None = None,
                  progress: bool | RunProgress = False, keep_per_deal: bool = True, label: str | None = None,
                  deals: Sequence[FixedDeal] | None = None, record: bool = False,
                  kept: Sequence[Mapping[str, Any]] = (),
                  on_block: Callable[[dict[str, Any]], None] | None = None) -> PairResult:
    """Duplicate evaluation of ``candidate`` against ``baseline`` (agent specs such as ``"pimc:samples=8"``).

    ``deals``: an explicit list of :class:`~agents.evaluation.match.FixedDeal` (a benchmark suite) instead of the
    series of ``settings.seed``; they are numbered from ``settings.start`` and ``settings.deals`` is
    their count. ``record``: keep every game's action ids in :attr:`PairResult.actions`. ``progress``: True
    shows this pairing's progress on stderr; a :class:`~agents.evaluation.progress.RunProgress` of a longer run
    (begun at this pairing by the caller) counts the deals played here.

    ``on_block``: called with each block's result as it comes in (its deals ``start ..``, per-deal means, role
    counts, games, agent counts, actions); ``kept``: such results of an earlier, stopped start of the same
    pairing, whose deals are not played again (a deal's games depend on the seeds alone, not on the blocks).
    A kept block's ``actions`` may hold None for games its keeper did not need.
    """
    if deals is not None:
        deals = list(deals)
        if not deals or not all(isinstance(x, FixedDeal) for x in deals):
            raise ValueError("deals must be a non-empty list of agents.evaluation.match.FixedDeal")
        settings = replace(settings, deals=len(deals))
    for spec in (candidate, baseline):
        parse_agent_spec(spec)
        agent_from_spec(spec)  # fail early on unknown names or parameters
    # What the workers build: a file spec with its absolute path, so that a worker whatever its working
    # directory loads the same file (the pairing keeps the names it was given).
    cand_spec, base_spec = canonical_spec(candidate), canonical_spec(baseline)
    settings.config()  # fail early on bad rules
    if not _is_whole(workers) or not 1 <= workers <= MAX_WORKERS:
        raise ConfigError(f"workers={shown(workers)} is not allowed; allowed: a whole number 1..{MAX_WORKERS}")
    total = settings.deals
    backend = pair_backend(cand_spec, base_spec, settings, record)
    first = settings.start
    todo = deals_left(kept, first, total)
    if backend == "batched":
        from agents.evaluation.batched import blocks, play_block_batched

        run = play_block_batched
        tasks = [(settings, cand_spec, base_spec, lo, hi, None if deals is None else deals[lo - first:hi - first])
                 for a, b in todo for lo, hi in blocks(a, b, settings.config().num_players)]
    else:
        run = play_block
        if block is None:
            # about 32 blocks per worker: progress comes block by block, and the workers finish close together
            block = max(1, min(200, sum(b - a for a, b in todo) // (32 * workers) or 1))
        tasks = [(settings, cand_spec, base_spec, s, min(b, s + block),
                  None if deals is None else deals[s - first:min(b, s + block) - first], record)
                 for a, b in todo for s in range(a, b, block)]
    per_deal = np.zeros((total, 4))
    actions: list[Any] = [None] * total
    roles = {"candidate": dict.fromkeys(ROLE_KEYS, 0), "baseline": dict.fromkeys(ROLE_KEYS, 0)}
    counts: dict[str, dict[str, int]] = {}
    games = 0
    if isinstance(progress, RunProgress):
        bar, own = progress, False
    else:
        name = label or f"{candidate} vs {baseline}"  # a bar on a terminal, lines in a log (the trainer's)
        bar, own = RunProgress([(name, total)], workers=workers, enabled=bool(progress), title=name), True
        bar.begin(0)
    t0 = time.perf_counter()

    def absorb(out: Mapping[str, Any], played: bool = True) -> None:
        nonlocal games
        s = out["start"] - first
        per_deal[s:s + len(out["per_deal"])] = out["per_deal"]
        if out["actions"] is not None:
            actions[s:s + len(out["actions"])] = out["actions"]
        for who in roles:
            for k, v in out["roles"][who].items():
                roles[who][k] = roles[who].get(k, 0) + v
        games += out["games"]
        add_counts(counts, out.get("counts"))
        if played:
            bar.update(len(out["per_deal"]))
            if on_block is not None:
                on_block(out)

    for out in kept:
        absorb(out, played=False)
    try:
        if workers == 1 or len(tasks) <= 1:
            for task in tasks:
                absorb(run(*task))
        else:
            with _worker_pool(min(workers, len(tasks))) as pool:
                for out in _polled(pool.imap_unordered(_run_task, [(run, task) for task in tasks]), bar.tick):
                    absorb(out)
    finally:
        if own:
            bar.close()
    seconds = time.perf_counter() - t0
    result = summarize(candidate, baseline, per_deal, roles, games, seconds, keep_per_deal)
    result.backend = backend
    result.agent_counts = counts
    if record:
        result.actions = actions
    return result


def deals_left(kept: Sequence[Mapping[str, Any]], first: int, total: int) -> list[tuple[int, int]]:
    """The runs of deals ``first .. first+total-1`` that the ``kept`` block results do not cover, as
    ``(start, stop)``; a kept block outside those deals, overlapping another or malformed raises ValueError."""
    covered = np.zeros(total, dtype=bool)
    for out in kept:
        try:
            s, k = int(out["start"]) - first, len(out["per_deal"])
            shape = np.asarray(out["per_deal"], dtype=np.float64).shape
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"a kept block is not a block result ({exc}); allowed: what on_block was handed") from exc
        if k < 1 or shape != (k, 4) or s < 0 or s + k > total or covered[s:s + k].any():
            raise ValueError(f"a kept block of deals {first + s}..{first + s + k - 1} does not fit; allowed: blocks "
                             f"of the deals {first}..{first + total - 1}, each deal in one block")
        covered[s:s + k] = True
    edges = np.flatnonzero(np.diff(np.concatenate([[True], covered, [True]]).astype(np.int8)))
    return [(first + int(a), first + int(b)) for a, b in zip(edges[::2], edges[1::2])]


def _pool_context() -> Any:
    """``fork`` (cheap) unless this process has loaded torch: a forked child of a process whose torch
    thread pool has started can hang in its first torch call, so then the workers start fresh (``spawn``)."""
    if "fork" in multiprocessing.get_all_start_methods() and "torch" not in sys.modules:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Hold Ctrl-C while the block runs: a SIGINT meanwhile is only noted, and raised again on leaving, to the
    handler that was in place (normally KeyboardInterrupt). For the first import of torch: a KeyboardInterrupt
    raised inside torch's C++ module initialisation cannot unwind through it, and the process aborts
    (``std::terminate``, exit status -6) instead of stopping cleanly with 130 (about 1 Ctrl-C in 15 in
    test_hardening's start-up test). Blocking SIGINT in this thread was tried and still aborted: the signal is
    sent to the process, another thread of it can take it, and Python raises it in this thread all the same.
    Outside the main thread (no handler can be set there) the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[int] = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler if old is None else old)  # None: set from C
        if pressed:
            signal.raise_signal(signal.SIGINT)


@contextlib.contextmanager
def _worker_pool(workers: int) -> Iterator[Any]:
    """A worker pool whose processes cannot be interrupted before they ignore Ctrl-C; closing it stops them.

    The workers start while SIGINT is blocked in this thread: a forked child inherits the blocked mask, and
    so does a spawned one across ``exec`` (once multiprocessing's resource tracker, which unblocks SIGINT when it
    starts, is already running), until :func:`_worker_init` ignores the signal. Without that, a
    Ctrl-C in the instant the workers start could kill a worker holding the task queue's lock, and stopping
    the pool would wait on that lock for ever. A Ctrl-C pressed meanwhile is not lost: it stays pending and
    reaches this process as KeyboardInterrupt once the workers are up.
    """
    context = _pool_context()
    if context.get_start_method() != "fork":
        # A spawn context starts multiprocessing's resource tracker with the pool's first lock, and starting it
        # unblocks SIGINT in this thread (bpo-33613): started that late it would leave the workers unprotected.
        resource_tracker.ensure_running()
    block = hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread()
    if block:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pool = context.Pool(workers, initializer=_worker_init)
    except BaseException:
        if block:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        raise
    with pool:  # leaving it terminates the workers
        if block:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # a pending Ctrl-C is raised here
        yield pool


def _polled(results: Any, waiting: Callable[[], None] | None = None, every: float = 0.2) -> Iterator[Any]:
    """The items of a pool's ``imap`` iterator, waited for in slices of ``every`` seconds.

    An untimed wait on a lock is not interrupted by a signal that another thread takes: where the kernel hands
    Ctrl-C to a thread other than the main one (Linux may, when the main thread is asleep with a signal already
    pending), Python notes it but the main thread sleeps on in the pool's wait until the next result comes.
    Waking every ``every`` s lets the noted Ctrl-C be raised (tests/test_hardening.py shows the case), and calls
    ``waiting`` (the progress line's clock)."""
    while True:
        try:
            item = results.next(timeout=every)
        except StopIteration:
            return
        except multiprocessing.TimeoutError:
            if waiting is not None:
                waiting()
            continue
        yield item


def _worker_init() -> None:
    """One compute thread per worker process (the workers already use every core between them); Ctrl-C is
    the parent's to handle (it stops the workers), so a worker ignores it instead of printing a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ["OMP_NUM_THREADS"] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def summarize(candidate: str, baseline: str, per_deal: np.ndarray, roles: dict, games: int, seconds: float,
              keep_per_deal: bool = True) -> PairResult:
    """Turn per-deal means into a :class:`PairResult`."""
    adv_alone = per_deal[:, 0] - per_deal[:, 1]
    adv_field = per_deal[:, 2] - per_deal[:, 3]
    adv = (adv_alone + adv_field) / 2
    return PairResult(
        candidate=candidate,
        baseline=baseline,
        deals=int(per_deal.shape[0]),
        advantage=Estimate.of(adv),
        advantage_by_format={"alone": Estimate.of(adv_alone), "field": Estimate.of(adv_field)},
        candidate_chips={"alone": Estimate.of(per_deal[:, 0]), "field": Estimate.of(per_deal[:, 2])},
        baseline_chips={"alone": Estimate.of(per_deal[:, 3]), "field": Estimate.of(per_deal[:, 1])},
        wins=int((adv > TIE_TOLERANCE).sum()),
        losses=int((adv < -TIE_TOLERANCE).sum()),
        ties=int((np.abs(adv) <= TIE_TOLERANCE).sum()),
        roles=roles,
        games=games,
        seconds=seconds,
        per_deal=per_deal if keep_per_deal else None,
    )

