"""Duplicate-deal evaluation and tournaments (``mauscheln eval``).

Duplicate deals
    Deal ``d`` of a series is fixed in full — every hand, the trump card, the
    stock order and the dealer — by :func:`agents.match.make_deal` from
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

Ratings
    A cross-table of mean advantages over any set of agents, and Bradley–Terry
    strengths fitted to the per-deal wins (ties count half; a weak prior of one
    tie per pairing keeps the fit finite), shown on the Elo scale
    (400 · log10), centred on the mean.

Output: a Markdown cross-table on stdout, and with ``--out DIR``
``results.json``, ``results.csv``, ``crosstable.md`` and (if matplotlib is
installed) ``chart.png``. Matches run on the engine directly, optionally in
parallel processes (``--workers``), with a progress bar (tqdm if installed).

Backends
    ``reference`` plays each game on the reference engine, any agent.
    ``batched`` plays every game of a block of deals at once on the batched
    engine with the agents' tensor forms (``random``, ``beginner``, ``expert``,
    ``learned``; single deals): the same deals, chance and scripted decisions,
    so a deal without random agent draws gives the same figures on both
    (:mod:`agents.batched_eval`), several times faster. ``auto`` (the command's
    default) takes ``batched`` for each pairing that can run there. Each
    pairing's ``backend`` is recorded in ``results.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib.util
import json
import math
import multiprocessing
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent, agent_from_spec, parse_agent_spec, spec_files_stamp
from agents.match import FORMATS, ROLE_KEYS, FixedDeal, MatchRunner, lineup_of, series_deal
from mauscheln_env.config import RuleConfig
from mauscheln_env.engine import Game
from mauscheln_env.errors import ConfigError, MauschelnError
from mauscheln_env.files import atomic_write, atomic_write_text
from mauscheln_env.ruleargs import (
    ArgumentParser,
    add_rule_arguments,
    newline_after_ctrl_c,
    report,
    rule_config,
    rule_options,
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

    def __str__(self) -> str:
        return f"{self.mean:+.3f} ± {self.half_width:.3f}"


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

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("per_deal")
        d.pop("actions")
        if self.per_deal is not None:
            d["per_deal_columns"] = list(PER_DEAL_COLUMNS)
            d["per_deal"] = np.round(self.per_deal, 6).tolist()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PairResult:
        def est(x: dict) -> Estimate:
            return Estimate(**x)

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
        )


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
    deals at once on the batched engine, with the agents' tensor forms; :mod:`agents.batched_eval`), or ``auto``
    (batched for each pairing that can run there, else reference)."""

    def config(self) -> RuleConfig:
        self.validate()
        return rule_config(self.ruleset, self.players, dict(self.rule_options),
                           max_deals=(self.session_deals, "--session-deals"))

    def validate(self) -> None:
        """Raise :class:`~mauscheln_env.errors.ConfigError` for a setting that is not allowed."""
        for name, low in (("deals", 1), ("seed", 0), ("start", 0), ("session_deals", 1), ("pot", 0)):
            value = getattr(self, name)
            if not _is_whole(value) or value < low:
                raise ConfigError(f"{name}={value!r} is not allowed; allowed: a whole number >= {low}")
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

    ``deals`` are the :class:`~agents.match.FixedDeal` of those indices (an explicit deal list such as
    a benchmark suite); None takes them from the series of ``settings.seed``
    (:func:`agents.match.series_deal`). Returns per-deal means ``[alone cand, alone base, field cand,
    field base]`` and the role counts of each agent; with ``record``, also every game's action ids.
    """
    runner = _runner_for(settings)
    game = runner.game
    n = game.n
    cands = _agents_for(candidate, game, n, "candidate")
    bases = _agents_for(baseline, game, n, "baseline")
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
    return {"start": start, "per_deal": per_deal, "roles": roles, "games": games, "actions": actions}


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
        from agents.batched_eval import batched_reason

    reason = "recording actions needs the reference backend" if record else None
    reason = reason or batched_reason(candidate, baseline, settings)
    if reason is None:
        return "batched"
    if settings.backend == "batched":
        raise ConfigError(f"backend=batched: {candidate} vs {baseline}: {reason}; allowed: backend=reference or auto")
    return "reference"


# ---------------------------------------------------------------------- driver
class Progress:
    """A progress bar over deals: tqdm when installed, else a simple one on stderr."""

    def __init__(self, total: int, desc: str, enabled: bool = True) -> None:
        self.total = total
        self.done = 0
        self.enabled = enabled
        self.start = time.perf_counter()
        self._bar = None
        self._last = 0.0
        if enabled and importlib.util.find_spec("tqdm") is not None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit="deal", file=sys.stderr, leave=False)
        self.desc = desc

    def update(self, k: int) -> None:
        self.done += k
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(k)
            return
        now = time.perf_counter()
        if now - self._last < 0.5 and self.done < self.total:
            return
        self._last = now
        frac = self.done / max(1, self.total)
        bar = "#" * int(30 * frac)
        print(f"\r{self.desc} [{bar:<30}] {self.done}/{self.total} deals {now - self.start:.0f}s",
              end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self.enabled:
            print(file=sys.stderr)


def evaluate_pair(candidate: str, baseline: str, settings: Settings, *, workers: int = 1, block: int | None = None,
                  progress: bool = False, keep_per_deal: bool = True, label: str | None = None,
                  deals: Sequence[FixedDeal] | None = None, record: bool = False) -> PairResult:
    """Duplicate evaluation of ``candidate`` against ``baseline`` (agent specs such as ``"pimc:samples=8"``).

    ``deals``: an explicit list of :class:`~agents.match.FixedDeal` (a benchmark suite) instead of the
    series of ``settings.seed``; they are numbered from ``settings.start`` and ``settings.deals`` is
    their count. ``record``: keep every game's action ids in :attr:`PairResult.actions`.
    """
    if deals is not None:
        deals = list(deals)
        if not deals or not all(isinstance(x, FixedDeal) for x in deals):
            raise ValueError("deals must be a non-empty list of agents.match.FixedDeal")
        settings = replace(settings, deals=len(deals))
    for spec in (candidate, baseline):
        parse_agent_spec(spec)
        agent_from_spec(spec)  # fail early on unknown names or parameters
    settings.config()  # fail early on bad rules
    if not _is_whole(workers) or workers < 1:
        raise ValueError(f"workers={workers!r} is not allowed; allowed: a whole number >= 1")
    total = settings.deals
    if total < 1:
        raise ValueError(f"deals={total!r} is not allowed; allowed: a whole number >= 1")
    backend = pair_backend(candidate, baseline, settings, record)
    first = settings.start
    if backend == "batched":
        from agents.batched_eval import blocks, play_block_batched

        run = play_block_batched
        tasks = [(settings, candidate, baseline, lo, hi, None if deals is None else deals[lo - first:hi - first])
                 for lo, hi in blocks(first, first + total, settings.config().num_players)]
    else:
        run = play_block
        if block is None:
            block = max(1, min(200, total // (8 * workers) or 1))
        tasks = [(settings, candidate, baseline, first + s, first + min(total, s + block),
                  None if deals is None else deals[s:s + block], record) for s in range(0, total, block)]
    per_deal = np.zeros((total, 4))
    actions: list[Any] = [None] * total
    roles = {"candidate": dict.fromkeys(ROLE_KEYS, 0), "baseline": dict.fromkeys(ROLE_KEYS, 0)}
    games = 0
    bar = Progress(total, label or f"{candidate} vs {baseline}", progress)
    t0 = time.perf_counter()

    def absorb(out: dict[str, Any]) -> None:
        nonlocal games
        s = out["start"] - first
        per_deal[s:s + len(out["per_deal"])] = out["per_deal"]
        if out["actions"] is not None:
            actions[s:s + len(out["actions"])] = out["actions"]
        for who in roles:
            for k, v in out["roles"][who].items():
                roles[who][k] = roles[who].get(k, 0) + v
        games += out["games"]
        bar.update(len(out["per_deal"]))

    try:
        if workers == 1 or len(tasks) == 1:
            for task in tasks:
                absorb(run(*task))
        else:
            with _worker_pool(min(workers, len(tasks))) as pool:
                for out in _polled(pool.imap_unordered(_run_task, [(run, task) for task in tasks])):
                    absorb(out)
    finally:
        bar.close()
    seconds = time.perf_counter() - t0
    result = summarize(candidate, baseline, per_deal, roles, games, seconds, keep_per_deal)
    result.backend = backend
    if record:
        result.actions = actions
    return result


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


def _polled(results: Any, every: float = 0.2) -> Iterator[Any]:
    """The items of a pool's ``imap`` iterator, waited for in slices of ``every`` seconds.

    An untimed wait on a lock is not interrupted by a signal that another thread takes: where the kernel hands
    Ctrl-C to a thread other than the main one (Linux may, when the main thread is asleep with a signal already
    pending), Python notes it but the main thread sleeps on in the pool's wait until the next result comes.
    Waking every ``every`` s lets the noted Ctrl-C be raised (tests/test_hardening.py shows the case)."""
    while True:
        try:
            item = results.next(timeout=every)
        except StopIteration:
            return
        except multiprocessing.TimeoutError:
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


# ---------------------------------------------------------------------- tournament
@dataclass
class Tournament:
    agents: list[str]
    pairs: list[PairResult]
    ratings: dict[str, float]
    settings: dict[str, Any]
    command: str = ""

    def crosstable_markdown(self) -> str:
        return crosstable_markdown(self.agents, self.pairs, self.ratings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "settings": self.settings,
            "agents": self.agents,
            "ratings_elo": self.ratings,
            "pairs": [p.to_dict() for p in self.pairs],
        }


def bradley_terry(agents: Sequence[str], pairs: Iterable[PairResult], prior: float = 0.5,
                  iterations: int = 2000) -> dict[str, float]:
    """Bradley–Terry strengths from per-deal wins (ties half), as Elo points centred on the mean.

    ``prior`` virtual wins for each side of every pairing keep a clean sweep finite.
    """
    idx = {a: i for i, a in enumerate(agents)}
    k = len(agents)
    w = np.zeros((k, k))
    for p in pairs:
        i, j = idx[p.candidate], idx[p.baseline]
        if i == j:
            continue  # an agent against itself says nothing about ratings
        w[i, j] += p.wins + 0.5 * p.ties + prior
        w[j, i] += p.losses + 0.5 * p.ties + prior
    games = w + w.T
    strength = np.ones(k)
    for _ in range(iterations):
        wins = w.sum(axis=1)
        denom = np.array([sum(games[i, j] / (strength[i] + strength[j]) for j in range(k) if j != i and games[i, j])
                          for i in range(k)])
        new = np.where(denom > 0, wins / np.where(denom > 0, denom, 1), strength)
        new = new / np.exp(np.mean(np.log(new)))
        if np.max(np.abs(new - strength)) < 1e-12:
            strength = new
            break
        strength = new
    elo = 400.0 * np.log10(strength)
    elo -= elo.mean()
    return {a: float(elo[idx[a]]) for a in agents}


def bradley_terry_intervals(agents: Sequence[str], pairs: Iterable[PairResult], ratings: dict[str, float],
                            prior: float = 0.5) -> dict[str, tuple[float, float]]:
    """95 % intervals of :func:`bradley_terry` ratings (Elo points): the normal approximation from the
    Fisher information of the fit at ``ratings``, with the same prior and the same centring (the mean
    rating is 0). Deals count as independent games; an agent linked to no other gets ``(-inf, inf)``."""
    idx = {a: i for i, a in enumerate(agents)}
    k = len(agents)
    games = np.zeros((k, k))
    for p in pairs:
        i, j = idx[p.candidate], idx[p.baseline]
        if i != j:
            games[i, j] += p.wins + p.losses + p.ties + 2 * prior
            games[j, i] = games[i, j]
    scale = 400.0 / math.log(10.0)
    theta = np.array([ratings[a] for a in agents]) / scale
    p_win = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    info = games * p_win * p_win.T
    hessian = np.diag(info.sum(axis=1)) - info
    cov = np.linalg.pinv(hessian)  # the pseudo-inverse: the covariance of the centred strengths
    out = {}
    linked = games.sum(axis=1) > 0
    for a, i in idx.items():
        if not linked[i] or k < 2:
            out[a] = (float("-inf"), float("inf"))
            continue
        half = Z95 * scale * math.sqrt(max(float(cov[i, i]), 0.0))
        out[a] = (ratings[a] - half, ratings[a] + half)
    return out


def crosstable_markdown(agents: Sequence[str], pairs: Sequence[PairResult], ratings: dict[str, float]) -> str:
    """Rows beat columns by the cell's chips per deal (mean ± 95 % half-width); Elo from Bradley–Terry."""
    cell: dict[tuple[str, str], str] = {}
    for p in pairs:
        a = p.advantage
        cell[(p.candidate, p.baseline)] = f"{a.mean:+.3f} ± {a.half_width:.3f}"
        cell[(p.baseline, p.candidate)] = f"{-a.mean:+.3f} ± {a.half_width:.3f}"
    order = sorted(agents, key=lambda a: -ratings.get(a, 0.0))
    head = "| agent | Elo (BT) | " + " | ".join(f"vs {b}" for b in order) + " |"
    rule = "| --- | ---: | " + " | ".join("---:" for _ in order) + " |"
    rows = [head, rule]
    for a in order:
        cells = [("—" if a == b else cell.get((a, b), "")) for b in order]
        rows.append(f"| {a} | {ratings.get(a, 0.0):+.0f} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def pair_lines(p: PairResult) -> list[str]:
    """A readable block for one pairing."""
    lines = [
        f"{p.candidate} vs {p.baseline}: {p.deals} duplicate deals, {p.games} games, {p.seconds:.1f}s "
        f"({p.backend} backend)",
        f"  advantage (chips/deal, candidate - baseline): {p.advantage}  "
        f"[alone {p.advantage_by_format['alone']}, field {p.advantage_by_format['field']}]",
        f"  {p.candidate} chips/deal: alone {p.candidate_chips['alone']}, in the field {p.candidate_chips['field']}",
        f"  {p.baseline} chips/deal: alone {p.baseline_chips['alone']}, in the field {p.baseline_chips['field']}",
        f"  deals won/lost/tied by {p.candidate}: {p.wins}/{p.losses}/{p.ties}",
    ]
    for who, name in (("candidate", p.candidate), ("baseline", p.baseline)):
        counts = {k: v for k, v in p.roles[who].items() if v}
        total = sum(counts.values()) or 1
        lines.append(f"  roles of {name}: " + ", ".join(f"{k} {v / total:.1%}" for k, v in counts.items()))
    return lines


def run_tournament(agents: Sequence[str], settings: Settings, *, pairs: Sequence[tuple[str, str]] | None = None,
                   workers: int = 1, progress: bool = False, command: str = "") -> Tournament:
    """Duplicate evaluation of every pairing (all pairs of ``agents`` unless ``pairs`` is given)."""
    agents = list(dict.fromkeys(agents))
    if pairs is None:
        pairs = [(agents[i], agents[j]) for i in range(len(agents)) for j in range(i + 1, len(agents))]
    for a, b in pairs:
        for x in (a, b):
            if x not in agents:
                agents.append(x)
    if not pairs:
        raise ValueError("nothing to evaluate: name at least two agents or a pairing")
    results = [evaluate_pair(a, b, settings, workers=workers, progress=progress) for a, b in pairs]
    ratings = bradley_terry(agents, results)
    return Tournament(agents, results, ratings, asdict(settings), command)


def merge_results(paths: Sequence[str | Path]) -> Tournament:
    """One tournament from several ``results.json`` files (their pairings must share the rules).

    Files that hold the same pairing on different deals (``--start`` chunks, or
    other seeds) are pooled deal by deal into one estimate, in deal order. When every
    pairing covers the same unbroken run of deals of one seed, the merged settings keep
    that seed, first deal and deal count, so the merged file pools again with the
    series' later chunks; otherwise they say neither (a merged file of other spans
    pools with nothing).
    """
    pooled: dict[tuple[str, str], list[PairResult]] = {}
    covered: dict[tuple[str, str], list[tuple[Any, int, int, str]]] = {}  # (seed, first, end, file) per pairing
    agents: list[str] = []
    settings = None
    commands = []
    backends = set()
    for path in paths:
        data = load_results(path)
        s = dict(data["settings"])
        span = (s.get("seed"), int(s.get("start", 0)), int(s.get("start", 0)) + int(s.get("deals", 0)))
        backends.add(s.get("backend"))
        for key in ("deals", "seed", "start", "backend"):
            s.pop(key, None)
        if settings is None:
            settings = s
        elif s != settings:
            raise ResultsFileError(f"{path}: rules differ from the first file ({s} vs {settings}); cannot merge")
        commands.append(data.get("command", ""))
        for a in data["agents"]:
            if a not in agents:
                agents.append(a)
        for p in data["pair_results"]:
            r = p
            key = (r.candidate, r.baseline)
            for seed, lo, hi, other in covered.get(key, []):
                if seed is None or span[0] is None or (seed == span[0] and lo < span[2] and span[1] < hi):
                    raise ResultsFileError(
                        f"{path} ({_span_text(*span)}) and {other} ({_span_text(seed, lo, hi)}) both hold "
                        f"{r.candidate} vs {r.baseline}, on overlapping deals or from a merge; merging them would "
                        "count deals twice (merge the original chunks instead)"
                    )
            covered.setdefault(key, []).append((*span, str(path)))
            pooled.setdefault(key, []).append((span[1], r))
    settings = dict(settings or {})
    runs = {_unbroken(spans) for spans in covered.values()}
    if len(runs) == 1 and None not in runs:
        ((seed, first, end),) = runs
        settings.update(seed=seed, start=first, deals=end - first)
    if len(backends) == 1 and None not in backends:
        settings["backend"] = backends.pop()
    pairs = []
    for (cand, base), held in pooled.items():
        parts = [r for _, r in sorted(held, key=lambda x: x[0])]  # deal order, whatever the files' order
        if len(parts) == 1:
            pairs.append(parts[0])
            continue
        if any(p.per_deal is None for p in parts):
            raise ResultsFileError(f"{cand} vs {base} appears in several files without per-deal data; cannot pool")
        roles: dict[str, dict[str, int]] = {"candidate": {}, "baseline": {}}
        for p in parts:
            for who in roles:
                for k, v in p.roles[who].items():
                    roles[who][k] = roles[who].get(k, 0) + v
        pairs.append(summarize(cand, base, np.concatenate([p.per_deal for p in parts]), roles,
                               sum(p.games for p in parts), sum(p.seconds for p in parts)))
    ratings = bradley_terry(agents, pairs)
    # chunks of one run share its command: name each distinct command once, in the order first seen
    return Tournament(agents, pairs, ratings, settings, " ; ".join(dict.fromkeys(c for c in commands if c)))


def _unbroken(spans: Sequence[tuple[Any, int, int, str]]) -> tuple[Any, int, int] | None:
    """``(seed, first, end)`` when the ``(seed, first, end, file)`` spans of one pairing are one seed's unbroken
    run of deals, else None."""
    seeds = {seed for seed, *_ in spans}
    ordered = sorted(spans, key=lambda x: x[1])
    if len(seeds) != 1 or None in seeds or any(a[2] != b[1] for a, b in zip(ordered, ordered[1:])):
        return None
    return ordered[0][0], ordered[0][1], ordered[-1][2]


class ResultsFileError(ConfigError):
    """A results.json file that is missing, not JSON, or not shaped like what ``mauscheln eval --out`` writes."""


def load_results(path: str | Path) -> dict[str, Any]:
    """Read and check one ``results.json``; its pairings are parsed into ``data["pair_results"]``.

    Raises :class:`ResultsFileError` naming the file and what is wrong with it.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsFileError(f"{path}: no such file; allowed: a results.json written by mauscheln eval --out") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsFileError(f"{path} cannot be read: {exc}") from exc
    except ValueError as exc:
        raise ResultsFileError(f"{path} is not JSON ({exc}); allowed: a results.json written by mauscheln eval --out"
                               ) from exc
    shape = "a mapping with settings (mapping), agents (list of names) and pairs (list of pairings)"
    if (not isinstance(data, dict) or not isinstance(data.get("settings"), dict)
            or not isinstance(data.get("agents"), list) or not all(isinstance(a, str) for a in data["agents"])
            or not isinstance(data.get("pairs"), list)):
        raise ResultsFileError(f"{path} is not shaped like a results file; allowed: {shape}")
    s = data["settings"]
    for key in ("seed", "start", "deals"):
        if s.get(key) is not None and not _is_whole(s.get(key)):
            raise ResultsFileError(f"{path}: settings {key}={s.get(key)!r}; allowed: a whole number")
    pairs = []
    for i, p in enumerate(data["pairs"]):
        try:
            if not isinstance(p, dict):
                raise TypeError(f"a JSON {type(p).__name__}, not a mapping")
            pairs.append(PairResult.from_dict(p))
        except KeyError as exc:
            raise ResultsFileError(f"{path}: pairing {i} has no {exc}; allowed: pairings as eval --out writes them"
                                   ) from exc
        except (TypeError, ValueError, AttributeError) as exc:
            raise ResultsFileError(f"{path}: pairing {i} is malformed: {exc}") from exc
    data["pair_results"] = pairs
    return data


def _span_text(seed: Any, lo: int, hi: int) -> str:
    return "a merged file" if seed is None else f"seed {seed}, deals {lo}..{hi - 1}"


# ---------------------------------------------------------------------- output
CHUNKS = "chunks"
"""The folder of ``--out`` where ``--chunk`` keeps each finished chunk's results."""


def play_in_chunks(agents: Sequence[str], settings: Settings, *, pairs: Sequence[tuple[str, str]] | None,
                   chunk: int, out: Path, workers: int = 1, progress: bool = False,
                   command: str = "") -> Tournament:
    """Play a long series in chunks of ``chunk`` deals, each written to ``out/chunks/`` once finished, and pool them.

    Run again with the same command after an interruption, it plays only the chunks not yet written (a chunk
    cut short is played again from its first deal; the series' deals do not depend on the chunking). A chunk
    file of other rules, seed, agents or deals is refused, not pooled.
    """
    agents = list(dict.fromkeys(agents))
    if pairs is None:
        pairs = [(agents[i], agents[j]) for i in range(len(agents)) for j in range(i + 1, len(agents))]
    names = sorted({a for p in pairs for a in p} | set(agents))
    want = {k: v for k, v in asdict(settings).items() if k not in ("deals", "start", "backend")}
    folder = out / CHUNKS
    paths = []
    for lo in range(settings.start, settings.start + settings.deals, chunk):
        hi = min(lo + chunk, settings.start + settings.deals)
        path = folder / f"deals_{lo:07d}_{hi:07d}.json"
        if path.is_file():
            data = load_results(path)
            have = {k: v for k, v in data["settings"].items() if k not in ("deals", "start", "backend")}
            held = {(p.candidate, p.baseline) for p in data["pair_results"]}
            span = (int(data["settings"].get("start", -1)), int(data["settings"].get("start", -1))
                    + int(data["settings"].get("deals", 0)))
            if have != json.loads(json.dumps(want)) or held != set(pairs) or span != (lo, hi) \
                    or sorted(data["agents"]) != names:
                raise ConfigError(f"{path} holds another series (settings {have}, pairings {sorted(held)}, deals "
                                  f"{span[0]}-{span[1] - 1}); allowed: the same command as the run that wrote it, "
                                  "or another --out")
            print(f"chunk of deals {lo}-{hi - 1}: already played ({path})", flush=True)
        else:
            t = run_tournament(agents, replace(settings, start=lo, deals=hi - lo), pairs=pairs, workers=workers,
                               progress=progress, command=command)
            folder.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(t.to_dict(), indent=2))
            print(f"chunk of deals {lo}-{hi - 1}: written {path}", flush=True)
        paths.append(path)
    return merge_results(paths)


def check_out_dir(out: Path, overwrite: bool = False) -> None:
    """Refuse an ``--out`` that is a file, or a directory that already holds files (unless ``overwrite``)."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is an existing file; allowed: a new or empty directory")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise ConfigError(f"--out {out} is not empty; allowed: a new or empty directory, or --overwrite to replace "
                          "the results in it")


CROSSTABLE_LEGEND = (
    "Each cell: the row agent's mean advantage over the column agent, in chips per deal, averaged over both "
    "duplicate formats (the agent alone against a field of the other, and as the field against one), ± the "
    "half-width of its 95 % confidence interval over deals; empty: the pair was not played. Elo (BT): "
    "Bradley–Terry rating from the per-deal wins (ties half), on the Elo scale, centred on the mean."
)


def _settings_line(t: Tournament) -> str:
    s = t.settings
    deals = sorted({p.deals for p in t.pairs})
    return (f"{s.get('ruleset', '?')}, {s.get('players', '?')} players, "
            f"{'/'.join(map(str, deals)) or '?'} duplicate deals per pairing")


def write_outputs(t: Tournament, out: Path) -> list[str]:
    """results.json, results.csv, crosstable.md and chart.png (if matplotlib is installed), each written atomically."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    atomic_write_text(out / "results.json", json.dumps(t.to_dict(), indent=2))
    written.append(str(out / "results.json"))

    def write_csv(tmp: Path) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            wr = csv.writer(fh)
            wr.writerow([
                "candidate", "baseline", "deals", "advantage", "adv_low", "adv_high", "adv_alone", "adv_field",
                "cand_chips_alone", "cand_chips_field", "base_chips_alone", "base_chips_field", "wins", "losses",
                "ties", "elo_candidate", "elo_baseline", "games", "seconds",
            ])
            for p in t.pairs:
                wr.writerow([
                    p.candidate, p.baseline, p.deals, f"{p.advantage.mean:.4f}", f"{p.advantage.low:.4f}",
                    f"{p.advantage.high:.4f}", f"{p.advantage_by_format['alone'].mean:.4f}",
                    f"{p.advantage_by_format['field'].mean:.4f}", f"{p.candidate_chips['alone'].mean:.4f}",
                    f"{p.candidate_chips['field'].mean:.4f}", f"{p.baseline_chips['alone'].mean:.4f}",
                    f"{p.baseline_chips['field'].mean:.4f}", p.wins, p.losses, p.ties,
                    f"{t.ratings.get(p.candidate, 0):.1f}", f"{t.ratings.get(p.baseline, 0):.1f}", p.games,
                    f"{p.seconds:.2f}",
                ])

    atomic_write(out / "results.csv", write_csv)
    written.append(str(out / "results.csv"))
    atomic_write_text(out / "crosstable.md", f"{_settings_line(t)}\n\n{t.crosstable_markdown()}\n\n{CROSSTABLE_LEGEND}\n")
    written.append(str(out / "crosstable.md"))
    if importlib.util.find_spec("matplotlib") is not None:
        written.append(_chart(t, out / "chart.png"))
    return written


def _chart(t: Tournament, path: Path) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    order = sorted(t.agents, key=lambda a: t.ratings[a])
    ax1.barh(order, [t.ratings[a] for a in order], color="tab:blue")
    ax1.set_xlabel("Elo (Bradley-Terry, centred)")
    labels = [f"{p.candidate}\nvs {p.baseline}" for p in t.pairs]
    means = [p.advantage.mean for p in t.pairs]
    errs = [p.advantage.half_width for p in t.pairs]
    ax2.errorbar(means, range(len(means)), xerr=errs, fmt="o", capsize=3)
    ax2.axvline(0, color="grey", lw=0.8)
    ax2.set_yticks(range(len(means)), labels, fontsize=7)
    ax2.set_xlabel("advantage, chips per deal (95% CI)")
    fig.suptitle(_settings_line(t))
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=120, format="png"))
    plt.close(fig)
    return str(path)


# ---------------------------------------------------------------------- CLI
PROG = "mauscheln eval"


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog=PROG,
        description="Duplicate-deal evaluation of agents: pairings, cross-table, Bradley-Terry ratings.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--agents", nargs="+", default=None, metavar="SPEC",
                   help="agents to compare, all pairs (e.g. random beginner expert pimc:samples=8 "
                        "learned:checkpoint=runs/<run>)")
    p.add_argument("--pair", nargs=2, action="append", metavar=("CANDIDATE", "BASELINE"), default=None,
                   help="evaluate only these pairings (repeatable); agents named here join the table")
    p.add_argument("--candidate", help="shorthand for one pairing: --candidate X --baseline Y")
    p.add_argument("--baseline", help="the baseline of --candidate")
    add_rule_arguments(p)
    p.add_argument("--deals", type=int, default=1000, help="duplicate deals per pairing")
    p.add_argument("--seed", type=int, default=0, help="seed of the deal series and of the agents' random numbers")
    p.add_argument("--start", type=int, default=0, help="index of the first duplicate deal (to play a series in chunks)")
    p.add_argument("--session-deals", type=int, default=1,
                   help="settled deals per session (pot carried over); 1 = single deals")
    p.add_argument("--pot", type=int, default=0, help="pot before the first dealer's ante (>= 0)")
    p.add_argument("--no-crn", action="store_true", help="independent random numbers per agent (no CRN)")
    p.add_argument("--workers", type=int, default=1, help="parallel processes")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="where the games run: reference (the engine, game by game), batched (every game of a block "
                        "of deals at once, with the agents' tensor forms: random, beginner, expert, learned; single "
                        "deals), auto (batched where the pairing can, else reference)")
    p.add_argument("--out", type=Path, default=None,
                   help="a new or empty folder for results.json, results.csv, crosstable.md, chart.png")
    p.add_argument("--overwrite", action="store_true", help="write into an --out folder that already holds files")
    p.add_argument("--chunk", type=int, default=None, metavar="DEALS",
                   help="play the deals in chunks of this many, each kept in OUT/chunks/ once finished; the same "
                        "command run again (after a stop) plays only the missing chunks, then pools them all "
                        "(needs --out)")
    p.add_argument("--merge", nargs="+", type=Path, default=None, metavar="RESULTS_JSON",
                   help="combine earlier results.json files into one cross-table instead of playing")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    g = p.add_argument_group("cross-table suite (agents/suite.py)")
    g.add_argument("--suite", nargs="*", default=None, metavar="RULESET",
                   help="play the cross-table of each named ruleset (none or 'all': every ruleset) at its default "
                        "table and write docs/results/<ruleset>.md and .png; --deals is per scripted pairing")
    g.add_argument("--search-deals", type=int, default=200, help="duplicate deals of each pimc pairing in the suite")
    g.add_argument("--search-against", nargs="+", default=["expert"], metavar="AGENT",
                   help="the agents pimc meets in the suite")
    g.add_argument("--reuse", nargs="+", type=Path, default=None, metavar="RESULTS_JSON",
                   help="earlier results.json files pooled into the suite (their pairings are not played again)")
    g.add_argument("--docs", default="docs/results", help="folder of the suite's pages and charts")
    g.add_argument("--readme", default=None, help="a file whose results block gets the summary table (README.md)")
    g.add_argument("--no-learned", action="store_true", help="leave the shipped learned policies out of the suite")
    g.add_argument("--note", default=None, help="a line added to every page (e.g. what the machine was doing)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = "mauscheln eval " + " ".join(shlex.quote(a) for a in argv)
    try:
        args = build_parser().parse_args(argv)
        if args.suite is not None:
            raise ConfigError("--suite is run by `mauscheln eval` (agents.suite.main), not by agents.evaluate.main")
        if args.chunk is not None:
            if args.chunk < 1 or args.out is None or args.merge:
                raise ConfigError(f"--chunk {args.chunk} is not allowed here; allowed: a whole number >= 1, with "
                                  "--out (where the chunks are kept) and without --merge")
        if args.out is not None:
            resuming = args.chunk is not None and (args.out / CHUNKS).is_dir()
            check_out_dir(args.out, args.overwrite or resuming)
        if args.merge:
            t = merge_results(args.merge)
        else:
            agents = list(args.agents or [])
            pairs = [tuple(p) for p in args.pair] if args.pair else None
            if args.candidate or args.baseline:
                if not (args.candidate and args.baseline):
                    raise ConfigError("--candidate and --baseline go together")
                pairs = (pairs or []) + [(args.candidate, args.baseline)]
            if pairs is None and len(agents) < 2:
                raise ConfigError("name at least two --agents, or --pair CANDIDATE BASELINE")
            if args.workers < 1:
                raise ConfigError(f"--workers {args.workers} is not allowed; allowed: a whole number >= 1")
            settings = Settings(
                ruleset=args.ruleset, players=args.players, deals=args.deals, seed=args.seed, start=args.start,
                session_deals=args.session_deals, pot=args.pot, crn=not args.no_crn,
                rule_options=tuple(sorted(rule_options(args).items())), backend=args.backend,
            )
            config = settings.config()
            settings = replace(settings, players=config.num_players)  # what the table had, preset or flag
            for spec in {x for pair in (pairs or []) for x in pair} | set(agents):
                agent_from_spec(spec).setup(Game(config), 0)  # unknown agents or a policy for another game fail now
            t0 = time.perf_counter()
            progress = not args.no_progress and sys.stderr.isatty()
            if args.chunk is not None:
                t = play_in_chunks(agents, settings, pairs=pairs, chunk=args.chunk, out=args.out,
                                   workers=args.workers, progress=progress, command=command)
            else:
                t = run_tournament(agents, settings, pairs=pairs, workers=args.workers, progress=progress,
                                   command=command)
            elapsed = time.perf_counter() - t0
        for p in t.pairs:
            print("\n".join(pair_lines(p)))
        print()
        print(t.crosstable_markdown())
        if not args.merge:
            games = sum(p.games for p in t.pairs)
            print(f"\n{len(t.pairs)} pairing(s), {args.deals} duplicate deals each, {games} games "
                  f"in {elapsed:.1f}s ({games / max(elapsed, 1e-9):.0f} games/s, {args.workers} worker(s), "
                  f"{os.cpu_count()} CPU(s))")
        if args.out is not None:
            written = write_outputs(t, args.out)
            print("wrote " + ", ".join(written))
            if importlib.util.find_spec("matplotlib") is None:
                print("no chart: matplotlib is not installed (pip install -e '.[plot]')")
    except MauschelnError as exc:
        return report(PROG, exc)
    except KeyboardInterrupt:
        print(f"{newline_after_ctrl_c()}{PROG}: interrupted; the workers are stopped and no results were written", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
