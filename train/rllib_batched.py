"""RLlib on the batched engine: an env runner that plays many tables at once and hands RLlib per-seat episodes.

RLlib's own ``MultiAgentEnvRunner`` steps :class:`~train.rllib_env.MauschelnMultiAgentEnv`
one decision at a time and builds its episodes one step at a time, in Python.
:class:`BatchedEnvRunner` (``config.env_runners(env_runner_cls=BatchedEnvRunner)``)
plays the same sessions on :class:`~mauscheln_env.batched.BatchedMauscheln`
instead: ``num_envs_per_env_runner`` tables step together, the RLModule's
``forward_exploration`` runs once per step on the batch of seats of the learning
policy that are to act, the other seats play batched opponents, and the
episodes are built once per ``sample()`` from whole arrays.

**Same tables, same observations.** The env runner reads the stock
environment's ``env_config`` (``ruleset``, ``num_players``, ``rules``,
``opponents``, ``formats``, ``seed``) and deals each session's table with
:func:`train.rllib_env.draw_table`, from one generator per table seeded as
RLlib seeds the stock environments of an env runner (the env runner's seed plus
the table's index, mixed with the runner's index): the opponent by weight,
the duplicate format (``"alone"`` or ``"field"``) and the seats, at any
number of seats. Opponents: ``"self"``, ``"snapshot"`` (the pool that
:meth:`BatchedEnvRunner.set_snapshots` fills, sampled from the masked
logits) and every scripted agent with a batched form
(:data:`agents.tensor.BATCHED_OPPONENTS`: ``random``, ``beginner``,
``expert``, ``learned``); agents without one need the stock env runner. A seat's
observation is the stock environment's dict, ``{"observations": float32[D],
"action_mask": float32[A]}``, so :class:`~train.rllib_env.MaskedPolicyModule`
works unchanged. The opponents' random draws come from torch generators seeded
from the env runner's seed, and the deals from the engine's own generator, so
the same seed gives the same episodes, but not the deals of the stock
environment.

**Episodes.** RLlib gets one ``SingleAgentEpisode`` per seat of the learning
policy and session (``agent_id`` ``player_<seat>``, ``module_id`` of the
shared policy, ``multi_agent_episode_id`` naming the session), the form its
learner connectors take apart a ``MultiAgentEpisode`` into. A decision's reward
is everything the seat receives until its next decision: settlements land on
other seats' turns, and what a seat receives before its first decision of a
session goes to its first decision (as the stock environment hands it over).
When the session ends (terminated by its rules, truncated after too many
throw-ins) the seat's last decision gets the rest and the episode ends with the
seat's final observation (mask all zero). A ``sample()`` that stops while a
session goes on cuts each seat's episode at its latest observation: the
decision taken there, whose reward is not known yet, opens the next chunk (as
RLlib's own env runners carry an agent's hanging action over). Every
decision of the learning policy is one env step and one agent step.

**What it does not do.** Env-to-module and module-to-env connector pipelines
are not run (the module reads the observation dict directly; a config with
custom connectors is refused), ``sample(num_episodes=...)`` and
``batch_mode="complete_episodes"`` are not supported, RLlib's episode
callbacks are not called, and the episodes carry no observation or action
space (the learner's connectors do not read them; :meth:`BatchedEnvRunner.get_spaces`
has them). The episodes are numpy from the start, as RLlib's own runners hand
them over (``episodes_to_numpy``).
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core import COMPONENT_ENV_TO_MODULE_CONNECTOR, COMPONENT_MODULE_TO_ENV_CONNECTOR, COMPONENT_RL_MODULE
from ray.rllib.core.columns import Columns
from ray.rllib.env import INPUT_ENV_SINGLE_SPACES, INPUT_ENV_SPACES
from ray.rllib.env.env_context import EnvContext
from ray.rllib.env.env_runner import EnvRunner
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
from ray.rllib.utils.checkpoints import Checkpointable
from ray.rllib.utils.framework import get_device
from ray.rllib.utils.metrics import (
    EPISODE_AGENT_RETURN_MEAN,
    EPISODE_AGENT_STEPS,
    EPISODE_DURATION_SEC_MEAN,
    EPISODE_LEN_MAX,
    EPISODE_LEN_MEAN,
    EPISODE_LEN_MIN,
    EPISODE_MODULE_RETURN_MEAN,
    EPISODE_RETURN_MAX,
    EPISODE_RETURN_MEAN,
    EPISODE_RETURN_MIN,
    NUM_AGENT_STEPS_SAMPLED,
    NUM_AGENT_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_SAMPLED,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_EPISODES,
    NUM_EPISODES_LIFETIME,
    NUM_MODULE_STEPS_SAMPLED,
    NUM_MODULE_STEPS_SAMPLED_LIFETIME,
    SAMPLE_TIMER,
    WEIGHTS_SEQ_NO,
)

from agents.learned import NetSpec, PolicyNet
from agents.learned.network import sample_actions
from mauscheln_env.batched import BatchedMauscheln
from mauscheln_env.errors import ConfigError
from train.rllib_env import MauschelnMultiAgentEnv, draw_table

SAMPLE_SECONDS = "sample_seconds"
"""Env runner metric (summed per iteration): wall-clock seconds spent in ``sample()``, for env steps/s."""

OPEN, TERMINATED, TRUNCATED = 0, 1, 2
"""How a recorded decision's session stands: going on, ended by its rules, cut after too many throw-ins."""

class EpisodeBuffer(InfiniteLookbackBuffer):
    """RLlib's buffer of one column of an episode chunk, with two of its costs cut: the length of a dict of
    equal-length arrays (the observations) is its first array's, where the base class flattens the dict on
    every ``len()``; and a buffer without a space skips the walk that derives its (empty) structure. Building
    and validating an episode asks for lengths about ten times and sets spaces nine times: with a decision or two
    per chunk, that was most of ``sample()``. Equal to the base class's buffer in every attribute."""

    def len_incl_lookback(self) -> int:
        data = self.data
        if isinstance(data, (np.ndarray, list)):
            return len(data)
        if isinstance(data, dict) and data:
            return len(next(iter(data.values())))
        return super().len_incl_lookback()

    @property
    def space(self) -> gym.Space | None:
        return self._space

    @space.setter
    def space(self, value: gym.Space | None) -> None:
        if value is None:
            self._space = self._space_struct = None
        else:
            InfiniteLookbackBuffer.space.fset(self, value)


Policy = Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
"""``policy(obs float32[k, D], mask bool[k, A]) -> (actions int64[k], logp float32[k], logits float32[k, A])``."""


def check_env_config(env_config: dict[str, Any]) -> MauschelnMultiAgentEnv:
    """The stock environment of ``env_config`` (which validates it); raises :class:`ConfigError` for an opponent
    without a batched form."""
    from agents.tensor import BATCHED_OPPONENTS

    probe = MauschelnMultiAgentEnv(dict(env_config))
    slow = sorted(set(probe.opponents) - BATCHED_OPPONENTS - {"self", "snapshot"})
    if slow:
        raise ConfigError(f"opponents {slow} have no batched form; allowed with the batched env runner: self, "
                          f"snapshot, {', '.join(sorted(BATCHED_OPPONENTS))} (--env-runner stock plays any agent)")
    return probe


@dataclass(slots=True)
class SeatChunk:
    """One seat's decisions in one session, as handed to RLlib (numpy, on the CPU)."""

    session: int
    """The session's number in this env runner (tables draw new numbers as sessions restart)."""
    table: int
    seat: int
    start: int
    """How many of this seat's decisions in the session earlier chunks held."""
    obs: np.ndarray
    """float32[L + 1, D]: the observation at each decision, then the one the chunk ends on."""
    masks: np.ndarray
    """float32[L + 1, A]: the legal actions there (all zero at the session's end)."""
    actions: np.ndarray
    logp: np.ndarray
    logits: np.ndarray
    rewards: np.ndarray
    """float64[L]: what the seat received from each decision until its next (see the module docstring)."""
    terminated: bool
    truncated: bool


@dataclass(slots=True)
class SessionEnd:
    """A session that ended: what the seats of the learning policy got (for RLlib's episode metrics)."""

    steps: int
    """Decisions of the learning policy."""
    seat_returns: dict[int, float]
    """By seat of the learning policy that acted: the sum of its rewards."""
    seat_steps: dict[int, int]
    seconds: float


class BatchedTables:
    """``num_tables`` tables of the batched engine, each dealt its table per session; records the learning
    policy's decisions and cuts them into :class:`SeatChunk` s (see the module docstring). No RLlib inside.

    ``seed`` and ``stream`` seed everything: table ``b`` draws its tables from
    ``numpy.random.default_rng([seed + b, stream, 0])`` (what the stock environment number ``b`` of env runner
    ``stream`` uses when RLlib seeds it with ``seed``), the engine, the scripted opponents and the sampling
    generator from ``SeedSequence([seed, stream])``. ``record_chance=True`` keeps the engine's chance log and
    :attr:`trace` (per step: acting seats, actions, rewards, session ends), for differential tests.
    """

    def __init__(self, env_config: dict[str, Any], num_tables: int, seed: int, stream: int = 0,
                 device: str | torch.device = "cpu", *, record_chance: bool = False) -> None:
        from agents.tensor import batched_opponent

        if not isinstance(num_tables, int) or isinstance(num_tables, bool) or num_tables < 1:
            raise ConfigError(f"num_tables={num_tables!r} is not allowed; allowed: a whole number >= 1")
        probe = check_env_config(env_config)
        scripted = [k for k in probe.opponents if k not in ("self", "snapshot")]
        self.game, self.opponents, self.formats = probe.game, probe.opponents, probe.formats
        self.observation_space = probe.observation_spaces["player_0"]
        self.action_space = probe.action_spaces["player_0"]
        self.device = torch.device(device)
        self.num_tables, self.n = num_tables, self.game.n
        self.seed, self.stream = int(seed), int(stream)
        engine_seed, sample_seed, *agent_seeds = np.random.SeedSequence(
            [self.seed, self.stream]).generate_state(2 + len(scripted), dtype=np.uint64).tolist()
        self.engine = BatchedMauscheln(self.game.config, num_tables, device=self.device, seed=int(engine_seed >> 1),
                                       final_observations=True, copy=False, record_chance=record_chance)
        self.generator = torch.Generator(device=self.device).manual_seed(int(sample_seed >> 1))
        self.scripted = {name: batched_opponent(name, self.game, self.device, seed=int(s >> 1))
                         for name, s in zip(scripted, agent_seeds)}
        self.code_of = {name: 1 + k for k, name in enumerate(scripted)}
        """Controller codes: 0 the learning policy, 1 + k scripted opponent k, then snapshot networks."""
        self.nets: list[PolicyNet] = []
        """Snapshot networks: the current pool (:attr:`pool`) and older ones that sessions still play."""
        self.pool: list[int] = []
        self.trace: list[dict[str, Any]] | None = [] if record_chance else None
        self.dealt: list[tuple[list[int], list[list[int]]]] | None = [] if record_chance else None
        """With ``record_chance``: the tables dealt, as (rows, controller codes by seat)."""
        self.ended: list[SessionEnd] = []
        """Sessions that ended since the caller last emptied this list."""
        self._players = list(self.scripted.values())
        self._capacity = 0
        self._count = 0
        self._calls = 0
        self._started = False
        self._finals: list[torch.Tensor] = []
        self._final_count = 0
        self.seat_counts = torch.zeros(self.n, dtype=torch.int64, device=self.device)
        """Decisions of the learning policy by seat since the last :meth:`collect`."""

    # ------------------------------------------------------------------ opponents
    def set_snapshots(self, spec: NetSpec, states: list[dict[str, torch.Tensor]]) -> None:
        """Replace the pool of frozen policies; sessions under way keep the snapshot they were dealt."""
        base = 1 + len(self.scripted)
        keep = []
        if self._started:
            used = torch.unique(self.ctrl[self.ctrl >= base]).tolist()
            keep = [int(c) - base for c in used]
        nets = [self.nets[j] for j in keep]
        remap = torch.arange(base + len(self.nets), device=self.device)
        for new, old in enumerate(keep):
            remap[base + old] = base + new
        if self._started:
            self.ctrl = remap[self.ctrl]
        for state in states:
            net = PolicyNet(spec)
            net.load_state_dict(state)
            nets.append(net.to(self.device).eval().requires_grad_(False))
        self.pool = list(range(len(keep), len(nets)))
        self.nets = nets

    def _deal_tables(self, rows: list[int]) -> None:
        """Draw a new session's table for each of ``rows`` (in increasing order) and clear its bookkeeping."""
        codes = np.zeros((len(rows), self.n), dtype=np.int64)
        base = 1 + len(self.scripted)
        for i, b in enumerate(rows):
            table = draw_table(self.rngs[b], self.opponents, self.formats, self.n, len(self.pool))
            self.rngs[b].integers(2**31 - 1)  # the stock env's deal seed: the same stream of tables
            if table.opponent == "snapshot":
                code = base + self.pool[table.snapshot]
            else:
                code = self.code_of.get(table.opponent, 0)
            for s in range(self.n):
                codes[i, s] = 0 if s in table.main else code
        if self.dealt is not None:
            self.dealt.append((list(rows), codes.tolist()))
        idx = torch.as_tensor(rows, dtype=torch.int64, device=self.device)
        self.ctrl[idx] = torch.from_numpy(codes).to(self.device)
        self.session[idx] = torch.arange(self._sessions, self._sessions + len(rows), device=self.device)
        self._sessions += len(rows)
        for t in (self.pending, self.seat_return):
            t[idx] = 0.0
        self.seat_steps[idx] = 0
        self.last[idx] = -1
        now = time.perf_counter()
        for b in rows:
            self.t_start[b] = now

    # ------------------------------------------------------------------ sessions
    def reset(self) -> None:
        """Start every table afresh (drops what is recorded and sessions under way)."""
        B, n, dev = self.num_tables, self.n, self.device
        if not self._started:
            self.rngs = [np.random.default_rng([self.seed + b, self.stream, 0]) for b in range(B)]
            self._sessions = 0
        self.ctrl = torch.zeros(B, n, dtype=torch.int64, device=dev)
        self.session = torch.zeros(B, dtype=torch.int64, device=dev)
        self.pending = torch.zeros(B, n, dtype=torch.float64, device=dev)
        """What each seat received since its last decision (before its first: kept for the first)."""
        self.last = torch.full((B, n), -1, dtype=torch.int64, device=dev)
        """Each seat's latest decision in the session (a record index), -1 before its first."""
        self.seat_return = torch.zeros(B, n, dtype=torch.float64, device=dev)
        self.seat_steps = torch.zeros(B, n, dtype=torch.int64, device=dev)
        self.t_start = np.zeros(B)
        self._count = 0
        self._finals, self._final_count = [], 0
        self.seat_counts.zero_()
        self._chunk_start: dict[tuple[int, int], int] = {}
        self._deal_tables(list(range(B)))
        out = self.engine.reset()
        self.obs, self.mask, self.to_act = out.obs, out.mask, out.to_act
        self._started = True
        self._idle = 0
        if self.trace is not None:
            self.trace.append({"reset": True, "dealer": self.engine.dealer.clone(),
                               "chance": self.engine.chance_log})

    def _grow(self, need: int) -> None:
        if need <= self._capacity:
            return
        cap = max(need, 2 * self._capacity, 1024)
        D, A, dev = self.engine.obs_size, self.engine.num_actions, self.device
        new = {
            "obs": torch.empty(cap, D, dtype=torch.float32, device=dev),
            "mask": torch.empty(cap, A, dtype=torch.bool, device=dev),
            "action": torch.empty(cap, dtype=torch.int64, device=dev),
            "logp": torch.empty(cap, dtype=torch.float32, device=dev),
            "logits": torch.empty(cap, A, dtype=torch.float32, device=dev),
            "table": torch.empty(cap, dtype=torch.int64, device=dev),
            "seat": torch.empty(cap, dtype=torch.int64, device=dev),
            "session": torch.empty(cap, dtype=torch.int64, device=dev),
            "reward": torch.empty(cap, dtype=torch.float64, device=dev),
            "end": torch.empty(cap, dtype=torch.int8, device=dev),
            "known": torch.empty(cap, dtype=torch.bool, device=dev),
            "final": torch.empty(cap, dtype=torch.int64, device=dev),
        }
        if self._capacity:
            for k, v in new.items():
                v[:self._count] = self.rec[k][:self._count]
        self.rec, self._capacity = new, cap

    def step(self, policy: Policy) -> int:
        """One decision at every table: the learning policy's seats by ``policy``, the others by their opponent.
        Returns how many decisions the learning policy made."""
        if not self._started:
            self.reset()
        B, dev = self.num_tables, self.device
        rows = torch.arange(B, device=dev)
        code = self.ctrl[rows, self.to_act]
        actions = torch.zeros(B, dtype=torch.int64, device=dev)
        main = (code == 0).nonzero()[:, 0]
        k = main.shape[0]
        if k:
            obs, mask = self.obs.index_select(0, main), self.mask.index_select(0, main)
            a, logp, logits = policy(obs, mask)
            actions[main] = a
            self._record(main, obs, mask, a, logp, logits)
            self._idle = 0
        else:
            self._idle += 1
            if self._idle > 10_000:
                raise ConfigError("10,000 steps in a row without a decision of the learning policy; check the rules "
                                  "and opponents")
        counts = torch.bincount(code, minlength=1 + len(self.scripted) + len(self.nets)).tolist()
        for c, count in enumerate(counts):
            if c == 0 or not count:
                continue
            idx = (code == c).nonzero()[:, 0]
            obs, mask = self.obs.index_select(0, idx), self.mask.index_select(0, idx)
            if c <= len(self.scripted):
                actions[idx] = self._players[c - 1].act(obs, mask)
            else:
                with torch.no_grad():
                    logits = self.nets[c - 1 - len(self.scripted)].masked_logits(obs, mask)
                actions[idx] = sample_actions(logits, self.generator)
        to_act = self.to_act
        res = self.engine.step(actions)
        self.pending += res.rewards.to(torch.float64)
        ended = res.info["final_index"]
        if self.trace is not None:
            self.trace.append({"to_act": to_act, "code": code, "actions": actions.clone(), "rewards": res.rewards.clone(),
                               "terminated": res.terminated.clone(), "truncated": res.truncated.clone(),
                               "final_chips": res.info["final_chips"].clone(), "dealer": self.engine.dealer.clone(),
                               "chance": self.engine.chance_log, "ended": ended.clone()})
        if ended.shape[0]:
            self._end_sessions(ended, res.info["final_obs"], res.truncated.index_select(0, ended))
        self.obs, self.mask, self.to_act = res.obs, res.mask, res.to_act
        return k

    def _record(self, rows: torch.Tensor, obs: torch.Tensor, mask: torch.Tensor, actions: torch.Tensor,
                logp: torch.Tensor, logits: torch.Tensor) -> None:
        k = rows.shape[0]
        self._grow(self._count + k)
        ids = torch.arange(self._count, self._count + k, device=self.device)
        seats = self.to_act.index_select(0, rows)
        r = self.rec
        lo, hi = self._count, self._count + k
        r["obs"][lo:hi], r["mask"][lo:hi], r["action"][lo:hi] = obs, mask, actions
        r["logp"][lo:hi], r["logits"][lo:hi] = logp, logits
        r["table"][lo:hi], r["seat"][lo:hi], r["session"][lo:hi] = rows, seats, self.session.index_select(0, rows)
        r["known"][lo:hi] = False
        r["end"][lo:hi] = OPEN
        r["final"][lo:hi] = -1
        # the seat's previous decision gets what the seat received since; a first decision keeps what came before
        prev = self.last[rows, seats]
        has = prev >= 0
        if bool(has.any()):
            p, pr, ps = prev[has], rows[has], seats[has]
            got = self.pending[pr, ps]
            r["reward"][p] = got
            r["known"][p] = True
            self.seat_return[pr, ps] += got
            self.pending[pr, ps] = 0.0
        self.last[rows, seats] = ids
        self.seat_steps[rows, seats] += 1
        self.seat_counts += torch.bincount(seats, minlength=self.n)
        self._count = hi

    def _end_sessions(self, ended: torch.Tensor, final_obs: torch.Tensor, truncated: torch.Tensor) -> None:
        """Close the sessions of tables ``ended``: every seat's last decision gets the rest of its rewards, and
        the seat's final observation; then deal those tables anew."""
        last = self.last.index_select(0, ended)
        acted = last >= 0
        if bool(acted.any()):
            j, s = acted.nonzero(as_tuple=True)
            d = last[j, s]
            got = self.pending.index_select(0, ended)[j, s]
            r = self.rec
            r["reward"][d] = got
            r["known"][d] = True
            r["end"][d] = torch.where(truncated[j], TRUNCATED, TERMINATED).to(torch.int8)
            self.seat_return.index_put_((ended[j], s), got, accumulate=True)
            r["final"][d] = torch.arange(self._final_count, self._final_count + d.shape[0], device=self.device)
            self._final_count += d.shape[0]
            self._finals.append(final_obs[j, s])
        now = time.perf_counter()
        steps = self.seat_steps.index_select(0, ended).tolist()
        returns = self.seat_return.index_select(0, ended).tolist()
        rows = ended.tolist()
        for i, b in enumerate(rows):
            acted_seats = [s for s in range(self.n) if steps[i][s]]
            if acted_seats:
                self.ended.append(SessionEnd(sum(steps[i]), {s: returns[i][s] for s in acted_seats},
                                             {s: steps[i][s] for s in acted_seats}, now - self.t_start[b]))
        self._deal_tables(rows)

    # ------------------------------------------------------------------ chunks
    def collect(self) -> list[SeatChunk]:
        """Cut what is recorded into one chunk per seat and session (see the module docstring); the decisions
        whose reward is not known yet stay for the next call."""
        self._calls += 1
        N = self._count
        if not N:
            return []
        dev, D, A = self.device, self.engine.obs_size, self.engine.num_actions
        rec = {k: v[:N] for k, v in self.rec.items()}
        key = rec["session"] * self.n + rec["seat"]
        order = torch.sort(key, stable=True).indices  # by session and seat, in the order decided
        ks = key.index_select(0, order)
        first = torch.ones(N, dtype=torch.bool, device=dev)
        first[1:] = ks[1:] != ks[:-1]
        starts = first.nonzero()[:, 0]
        sizes = torch.diff(starts, append=torch.tensor([N], device=dev))
        last = order.index_select(0, starts + sizes - 1)
        ended = rec["known"].index_select(0, last)
        # a session that ended: every decision is a step, then the seat's final observation; one going on: the
        # latest decision waits for its reward, and the chunk ends on its observation
        steps = sizes - (~ended).to(torch.int64)
        before = torch.cumsum(ended, 0) - ended.to(torch.int64)  # groups before this one that end in a final
        pos = torch.arange(N, device=dev) + torch.repeat_interleave(before, sizes)
        E = int(ended.sum())
        obs = torch.empty(N + E, D, dtype=torch.float32, device=dev)
        obs[pos] = rec["obs"].index_select(0, order)
        masks = torch.zeros(N + E, A, dtype=torch.float32, device=dev)
        masks[pos] = rec["mask"].index_select(0, order).to(torch.float32)
        if E:
            finals = torch.cat(self._finals)
            obs[(starts + sizes + before)[ended]] = finals.index_select(0, rec["final"].index_select(0, last[ended]))
        cols = {k: rec[k].index_select(0, order).cpu().numpy() for k in ("action", "logp", "logits", "reward")}
        obs_np, masks_np = obs.cpu().numpy(), masks.cpu().numpy()
        end_np = rec["end"].index_select(0, last).tolist()
        sessions = rec["session"].index_select(0, last).tolist()
        seats = rec["seat"].index_select(0, last).tolist()
        tables = rec["table"].index_select(0, last).tolist()
        chunks = []
        for lo, L, b4, done, session, seat, table, end in zip(starts.tolist(), steps.tolist(), before.tolist(),
                                                               ended.tolist(), sessions, seats, tables, end_np):
            if not L:
                continue
            start = self._chunk_start.pop((session, seat), 0)
            if not done:
                self._chunk_start[(session, seat)] = start + L
            chunks.append(SeatChunk(
                session=session, table=table, seat=seat, start=start, obs=obs_np[lo + b4:lo + b4 + L + 1],
                masks=masks_np[lo + b4:lo + b4 + L + 1], actions=cols["action"][lo:lo + L],
                logp=cols["logp"][lo:lo + L], logits=cols["logits"][lo:lo + L], rewards=cols["reward"][lo:lo + L],
                terminated=end == TERMINATED, truncated=end == TRUNCATED))
        # keep the open decisions (the latest of each seat in a session under way) at the front
        open_ids = self.last[self.last >= 0]
        P = open_ids.shape[0]
        if P:
            for v in self.rec.values():
                v[:P] = v.index_select(0, open_ids)
            remap = torch.full((N,), -1, dtype=torch.int64, device=self.device)
            remap[open_ids] = torch.arange(P, device=self.device)
            self.last = torch.where(self.last >= 0, remap[self.last.clamp(min=0)], self.last)
        self._count = P
        self._finals, self._final_count = [], 0
        return chunks


def freeze_heap() -> None:
    """Collect, then move every object alive now out of the garbage collector's reach (:func:`gc.freeze`).

    A remote env runner's heap is mostly long-lived (torch, Ray, RLlib, the module, the tables), and each
    full collection, which the episodes a ``sample()`` builds set off, walks all of it: a pause that grows
    with the heap, not with the work. Ray Serve does the same to its replicas once they are built. Called in
    Ray's worker processes only, never in the driver's."""
    gc.collect()
    gc.freeze()


def env_steps_per_second(runner_results: dict[str, Any]) -> float | None:
    """Env steps per second of sampling per env runner, from one iteration's ``result["env_runners"]``."""
    seconds = runner_results.get(SAMPLE_SECONDS)
    steps = runner_results.get(NUM_ENV_STEPS_SAMPLED)
    if not isinstance(seconds, (int, float)) or not isinstance(steps, (int, float)) or seconds <= 0:
        return None
    return steps / seconds


class TimedMultiAgentEnvRunner(MultiAgentEnvRunner):
    """RLlib's own ``MultiAgentEnvRunner`` (the stock path), which also logs :data:`SAMPLE_SECONDS`, so that
    both env runners report env steps/s of sampling the same way."""

    def sample(self, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        out = super().sample(**kwargs)
        self.metrics.log_value(SAMPLE_SECONDS, time.perf_counter() - t0, reduce="sum")
        return out


class BatchedEnvRunner(EnvRunner, Checkpointable):
    """An RLlib env runner that plays ``num_envs_per_env_runner`` tables of the batched engine (module docstring).

    Needs a multi-agent config whose ``policy_mapping_fn`` maps every seat to one module (the shared policy)
    and the stock environment's ``env_config``.
    """

    def __init__(self, config: Any, **kwargs: Any) -> None:
        super().__init__(config=config, **kwargs)
        if not self.config.is_multi_agent:
            raise ConfigError("the batched env runner needs a multi-agent config (config.multi_agent(policies=..., "
                              "policy_mapping_fn=...)) with one module for every seat")
        if self.config._env_to_module_connector is not None or self.config._module_to_env_connector is not None:
            raise ConfigError("the batched env runner feeds the observation dict to the module directly; custom "
                              "env-to-module or module-to-env connectors need the stock env runner")
        if self.config.batch_mode != "truncate_episodes":
            raise ConfigError(f"batch_mode={self.config.batch_mode!r} is not supported by the batched env runner; "
                              "allowed: 'truncate_episodes'")
        self.worker_index = self.worker_index or 0
        self._device = get_device(self.config, 0 if not self.worker_index else self.config.num_gpus_per_env_runner)
        env_config = dict(self.config.env_config or {})
        self._probe = MauschelnMultiAgentEnv(EnvContext(env_config, worker_index=self.worker_index))
        self.possible_agents = list(self._probe.possible_agents)
        modules = {self.config.policy_mapping_fn(a, None) for a in self.possible_agents}
        if len(modules) != 1:
            raise ConfigError(f"the batched env runner plays one shared policy; policy_mapping_fn maps the seats to "
                              f"{sorted(map(str, modules))}")
        self.module_id = modules.pop()
        self.num_envs = int(self.config.num_envs_per_env_runner)
        seed = self._seed if self._seed is not None else int(env_config.get("seed", 0) or 0) + self.worker_index
        self.env: BatchedTables | None = None
        if self.worker_index > 0 or self.config.num_env_runners == 0 or self.config.create_env_on_local_worker:
            self.make_env(seed)
        obs, act = self._probe.observation_spaces, self._probe.action_spaces
        env_spaces = (gym.spaces.Dict(obs), gym.spaces.Dict(act))
        self._spaces = {INPUT_ENV_SPACES: env_spaces, INPUT_ENV_SINGLE_SPACES: env_spaces,
                        self.module_id: (obs["player_0"], act["player_0"])}
        spaces = self.get_spaces()
        self._env_to_module = self.config.build_env_to_module_connector(spaces=spaces, device=self._device)
        self._module_to_env = self.config.build_module_to_env_connector(spaces=spaces)
        self.module = None
        self.make_module()
        self._weights_seq_no = 0
        self._time_after_sampling = None
        if self.worker_index > 0:
            freeze_heap()

    # ------------------------------------------------------------------ EnvRunner
    def make_env(self, seed: int | None = None) -> None:
        if seed is None:
            seed = self.env.seed if self.env is not None else (self._seed or 0)
        self.env = BatchedTables(dict(self.config.env_config or {}), self.num_envs, seed, self.worker_index,
                                 self._device)

    def make_module(self) -> None:
        spec = self.config.get_multi_rl_module_spec(spaces=self.get_spaces(), inference_only=True)
        self.module = spec.build()
        self.module.foreach_module(lambda mid, mod: mod.to(self._device) if isinstance(mod, torch.nn.Module) else mod)

    def get_spaces(self) -> dict[str, Any]:
        return dict(self._spaces)

    def assert_healthy(self) -> None:
        if self.env is None or self.module is None:
            raise RuntimeError("the batched env runner has no tables or no module")

    def set_snapshots(self, spec: NetSpec, states: list[dict[str, torch.Tensor]]) -> int:
        """Hand the snapshot pool to the tables; returns how many tables play from it."""
        if self.env is None:
            return 0
        self.env.set_snapshots(spec, states)
        return self.env.num_tables

    def sample(self, *, num_timesteps: int | None = None, num_episodes: int | None = None, explore: bool | None = None,
               random_actions: bool = False, force_reset: bool = False) -> list[SingleAgentEpisode]:
        """Play until ``num_timesteps`` decisions of the learning policy (default: the rollout fragment length
        times the tables); returns the seats' episode chunks."""
        if self.env is None:
            raise ValueError(f"{self} has no tables to sample from")
        if num_episodes is not None:
            raise ConfigError("the batched env runner samples env steps (num_timesteps), not whole episodes")
        t0 = time.perf_counter()
        explore = self.config.explore if explore is None else explore
        if num_timesteps is None:
            num_timesteps = self.config.get_rollout_fragment_length(self.worker_index) * self.num_envs
        if force_reset or not self.env._started:
            self.env.reset()
        module = self.module[self.module_id]

        def policy(obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            batch = {Columns.OBS: {"observations": obs, "action_mask": mask.to(torch.float32)}}
            with torch.no_grad():
                out = module.forward_exploration(batch) if explore else module.forward_inference(batch)
            logits = out[Columns.ACTION_DIST_INPUTS]
            if random_actions:
                actions = sample_actions(torch.where(mask, 0.0, torch.finfo(torch.float32).min), self.env.generator)
            elif explore:
                actions = sample_actions(logits, self.env.generator)
            else:
                actions = logits.argmax(dim=1)
            logp = torch.log_softmax(logits, dim=1).gather(1, actions[:, None])[:, 0]
            return actions, logp, logits

        steps = 0
        with self.metrics.log_time(SAMPLE_TIMER):
            while steps < num_timesteps:
                steps += self.env.step(policy)
            chunks = self.env.collect()
            episodes = [self._episode(c) for c in chunks]
        self._log_sampled(steps)
        self.metrics.log_value(SAMPLE_SECONDS, time.perf_counter() - t0, reduce="sum")
        self._time_after_sampling = time.perf_counter()
        return episodes

    def _episode(self, c: SeatChunk) -> SingleAgentEpisode:
        L = len(c.actions)
        session = f"{self.worker_index}:{c.session}:{self.env._calls}"
        return SingleAgentEpisode(
            id_=f"{session}:{c.seat}",
            observations=EpisodeBuffer({"action_mask": c.masks, "observations": c.obs}),
            infos=EpisodeBuffer([{} for _ in range(L + 1)]),
            actions=EpisodeBuffer(c.actions),
            rewards=EpisodeBuffer(c.rewards),
            terminated=c.terminated,
            truncated=c.truncated,
            extra_model_outputs={
                Columns.ACTION_DIST_INPUTS: EpisodeBuffer(c.logits),
                Columns.ACTION_LOGP: EpisodeBuffer(c.logp),
                WEIGHTS_SEQ_NO: EpisodeBuffer(np.full(L, self._weights_seq_no, dtype=np.int64)),
            },
            t_started=c.start,
            len_lookback_buffer=0,
            agent_id=f"player_{c.seat}",
            module_id=self.module_id,
            multi_agent_episode_id=session,
        )

    def _log_sampled(self, steps: int) -> None:
        m = self.metrics
        m.log_value(NUM_ENV_STEPS_SAMPLED, steps, reduce="sum")
        m.log_value(NUM_ENV_STEPS_SAMPLED_LIFETIME, steps, reduce="lifetime_sum", with_throughput=True)
        m.log_value((NUM_MODULE_STEPS_SAMPLED, self.module_id), steps, reduce="sum")
        m.log_value((NUM_MODULE_STEPS_SAMPLED_LIFETIME, self.module_id), steps, reduce="lifetime_sum")
        self.num_env_steps_sampled_lifetime += steps
        for s, k in enumerate(self.env.seat_counts.tolist()):
            if k:
                m.log_value((NUM_AGENT_STEPS_SAMPLED, f"player_{s}"), k, reduce="sum")
                m.log_value((NUM_AGENT_STEPS_SAMPLED_LIFETIME, f"player_{s}"), k, reduce="lifetime_sum")
        self.env.seat_counts.zero_()
        ended, self.env.ended = self.env.ended, []
        win = max(1, math.ceil(self.config.metrics_num_episodes_for_smoothing / (self.config.num_env_runners or 1)))
        for e in ended[-win:]:  # the windows keep the last `win` sessions: older ones would be dropped unread
            total = float(sum(e.seat_returns.values()))
            for key, value in ((EPISODE_LEN_MEAN, e.steps), (EPISODE_RETURN_MEAN, total),
                               (EPISODE_DURATION_SEC_MEAN, e.seconds), ((EPISODE_MODULE_RETURN_MEAN, self.module_id), total),
                               *(((EPISODE_AGENT_RETURN_MEAN, f"player_{s}"), r) for s, r in e.seat_returns.items()),
                               *(((EPISODE_AGENT_STEPS, f"player_{s}"), k) for s, k in e.seat_steps.items())):
                m.log_value(key, value, window=win)  # what log_dict does with a nested dict, without its tree walk
            for reduce, keys in (("min", (EPISODE_LEN_MIN, EPISODE_RETURN_MIN)),
                                 ("max", (EPISODE_LEN_MAX, EPISODE_RETURN_MAX))):
                m.log_value(keys[0], e.steps, reduce=reduce, window=win)
                m.log_value(keys[1], total, reduce=reduce, window=win)
        if ended:
            m.log_value(NUM_EPISODES, len(ended), reduce="sum")
            m.log_value(NUM_EPISODES_LIFETIME, len(ended), reduce="lifetime_sum")

    def get_metrics(self) -> dict[str, Any]:
        return self.metrics.reduce()

    def stop(self) -> None:
        if self.env is not None:
            self.env.engine.close()

    # ------------------------------------------------------------------ Checkpointable (as MultiAgentEnvRunner)
    def get_state(self, components: str | Collection[str] | None = None, *,
                  not_components: str | Collection[str] | None = None, **kwargs: Any) -> dict[str, Any]:
        state: dict[str, Any] = {NUM_ENV_STEPS_SAMPLED_LIFETIME: self.num_env_steps_sampled_lifetime}
        if self._check_component(COMPONENT_RL_MODULE, components, not_components):
            state[COMPONENT_RL_MODULE] = self.module.get_state(
                components=self._get_subcomponents(COMPONENT_RL_MODULE, components),
                not_components=self._get_subcomponents(COMPONENT_RL_MODULE, not_components), **kwargs)
            state[WEIGHTS_SEQ_NO] = self._weights_seq_no
        if self._check_component(COMPONENT_ENV_TO_MODULE_CONNECTOR, components, not_components):
            state[COMPONENT_ENV_TO_MODULE_CONNECTOR] = self._env_to_module.get_state()
        if self._check_component(COMPONENT_MODULE_TO_ENV_CONNECTOR, components, not_components):
            state[COMPONENT_MODULE_TO_ENV_CONNECTOR] = self._module_to_env.get_state()
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        import ray

        if COMPONENT_ENV_TO_MODULE_CONNECTOR in state:
            self._env_to_module.set_state(state[COMPONENT_ENV_TO_MODULE_CONNECTOR])
        if COMPONENT_MODULE_TO_ENV_CONNECTOR in state:
            self._module_to_env.set_state(state[COMPONENT_MODULE_TO_ENV_CONNECTOR])
        if COMPONENT_RL_MODULE in state:
            seq = state.get(WEIGHTS_SEQ_NO, 0)
            if seq == 0 or self._weights_seq_no < seq:
                module_state = state[COMPONENT_RL_MODULE]
                if isinstance(module_state, ray.ObjectRef):
                    module_state = ray.get(module_state)
                self.module.set_state(module_state)
            if seq > 0:
                self._weights_seq_no = seq
        if NUM_ENV_STEPS_SAMPLED_LIFETIME in state:
            self.num_env_steps_sampled_lifetime = state[NUM_ENV_STEPS_SAMPLED_LIFETIME]

    def get_ctor_args_and_kwargs(self) -> tuple[tuple, dict[str, Any]]:
        return (), {"config": self.config}

    def get_checkpointable_components(self) -> list[tuple[str, Any]]:
        return [(COMPONENT_RL_MODULE, self.module), (COMPONENT_ENV_TO_MODULE_CONNECTOR, self._env_to_module),
                (COMPONENT_MODULE_TO_ENV_CONNECTOR, self._module_to_env)]
