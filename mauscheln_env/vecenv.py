"""Vector environments by name, and batched engines in worker processes.

:func:`make_vector_env` builds any :class:`~mauscheln_env.vector.VectorEnv`
by name: the reference loop (:class:`~mauscheln_env.vector.ReferenceVectorEnv`),
the batched tensor engine (:class:`~mauscheln_env.batched.BatchedMauscheln`), or
batched engines in worker processes (:class:`SubprocVectorEnv`). This module sits
above both engines, so that :mod:`mauscheln_env.vector` (the interface and the
reference loop) and :mod:`mauscheln_env.batched` never import each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from mauscheln_env.batched import BatchedMauscheln, check_supported, keep_freed_memory
from mauscheln_env.config import RuleConfig, make_config
from mauscheln_env.engine import Game
from mauscheln_env.errors import ConfigError, IllegalActionError, MauschelnError
from mauscheln_env.observation import Observer
from mauscheln_env.vector import ReferenceVectorEnv, VecReset, VecStep, VectorEnv, check_reset_options


def shard_seeds(seed: int | None, count: int) -> list[int | None]:
    """Independent seeds for ``count`` shards, derived from ``seed`` (None stays None: OS entropy)."""
    if seed is None:
        return [None] * count
    return [int(c.generate_state(1, dtype=np.uint64)[0] >> 1) for c in np.random.SeedSequence(seed).spawn(count)]


class SubprocVectorEnv(VectorEnv):
    """Batched engines in worker processes, each holding a contiguous block of sessions, on shared memory.

    A CPU trainer gets several cores this way: each worker runs one
    :class:`~mauscheln_env.batched.BatchedMauscheln` with a cache-sized batch on
    one torch thread and writes observations, masks, rewards and flags straight
    into shared-memory tensors; a step costs the parent one small pipe message
    per worker. (Threads would not do: two shards issuing hundreds of small torch
    calls per step hand the GIL back and forth at every call.) Actions are
    validated in the parent before any worker moves, so an illegal action
    changes nothing. With ``copy=False`` the shared ``obs`` and ``mask`` are
    returned and overwritten by the next step. ``reset(seed)`` gives each worker
    a seed derived from ``seed`` (:func:`shard_seeds`), so runs are reproducible
    and equal to the shards run side by side. Call :meth:`close` (or use the
    env as a context manager) to stop the workers.
    """

    def __init__(self, config: RuleConfig, num_envs: int, workers: int, seed: int | None = None, *,
                 final_observations: bool = False, copy: bool = True, compile: bool = False,
                 start_method: str = "spawn") -> None:
        import torch.multiprocessing as mp

        check_supported(config)
        if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= num_envs:
            raise ConfigError(f"workers={workers!r} is not allowed; allowed: a whole number from 1 to num_envs")
        game = Game(config)
        self.config = config
        self.device = torch.device("cpu")
        self.num_envs, self.num_players, self.num_actions = num_envs, config.num_players, config.num_actions
        self.obs_size = Observer(game).size
        self.state_size = Observer(game, omniscient=True).size
        self.final_observations, self.copy = final_observations, copy
        B, n = num_envs, self.num_players
        self._buffers = {
            "obs": torch.zeros(B, self.obs_size), "mask": torch.zeros(B, self.num_actions, dtype=torch.bool),
            "actions": torch.zeros(B, dtype=torch.int64), "to_act": torch.zeros(B, dtype=torch.int64),
            "rewards": torch.zeros(B, n), "terminated": torch.zeros(B, dtype=torch.bool),
            "truncated": torch.zeros(B, dtype=torch.bool), "deal_kind": torch.zeros(B, dtype=torch.int64),
            "new_deal": torch.zeros(B, dtype=torch.bool), "end_seat": torch.zeros(B, dtype=torch.int64),
            "final_chips": torch.zeros(B, n, dtype=torch.int64),
        }
        for t in self._buffers.values():
            t.share_memory_()
        sizes = [num_envs // workers + (i < num_envs % workers) for i in range(workers)]
        self._starts = np.cumsum([0, *sizes]).tolist()
        ctx = mp.get_context(start_method)
        self._conns, self._procs = [], []
        for lo, hi, s in zip(self._starts, self._starts[1:], shard_seeds(seed, workers)):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_subproc_worker, daemon=True, name=f"mauscheln-worker-{lo}",
                               args=(config.to_dict(), lo, hi, s, final_observations, compile, self._buffers, child))
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)
        self._call("ping")
        self._ready = False

    def _call(self, command: str, payloads: Sequence[Any] | None = None) -> list[Any]:
        if not self._conns:
            raise MauschelnError("the workers are stopped (close() was called)")
        try:
            for i, conn in enumerate(self._conns):
                conn.send((command, None if payloads is None else payloads[i]))
            replies = [conn.recv() for conn in self._conns]
        except (EOFError, OSError) as exc:  # a worker died (killed, out of memory): its end of the pipe closed
            dead = []
            for i, (proc, lo, hi) in enumerate(zip(self._procs, self._starts, self._starts[1:])):
                proc.join(timeout=1)  # a dying worker's exit code is set once it is reaped
                if not proc.is_alive():
                    dead.append(f"worker {i} (sessions {lo}..{hi - 1}, pid {proc.pid}, exit code {proc.exitcode})")
            self.close()
            raise RuntimeError(f"SubprocVectorEnv: {', '.join(dead) or 'a worker'} stopped during {command!r}; "
                               "the other workers are stopped too, make a new vector env") from exc
        for reply in replies:
            if isinstance(reply, BaseException):
                raise reply
        return replies

    def _split_options(self, opts: dict[str, Any]) -> list[dict[str, Any]]:
        """Each worker's share of the reset options (one value for all stays one value for all)."""
        shares = []
        for lo, hi in zip(self._starts, self._starts[1:]):
            share = {}
            for key, value in opts.items():
                if key == "deals":
                    share[key] = value[lo:hi]
                    continue
                arr = value if isinstance(value, torch.Tensor) else np.asarray(value)
                per_session = arr.ndim == (2 if key == "chips" else 1) and arr.shape[0] == self.num_envs
                share[key] = arr[lo:hi] if per_session else value
            shares.append(share)
        return shares

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> VecReset:
        opts = check_reset_options(options)
        seeds = shard_seeds(seed, len(self._conns))
        self._call("reset", [(s, o) for s, o in zip(seeds, self._split_options(opts))])
        self._ready = True
        obs, mask = self._outputs()
        return VecReset(obs, mask, self._buffers["to_act"].clone())

    def step(self, actions: torch.Tensor) -> VecStep:
        if not self._ready:
            raise MauschelnError("call reset() before step()")
        a = torch.as_tensor(actions)
        buf = self._buffers
        if a.shape != (self.num_envs,) or a.dtype.is_floating_point or a.dtype == torch.bool:
            raise IllegalActionError(f"actions must be an integer tensor of shape ({self.num_envs},), "
                                     f"got {tuple(a.shape)} {a.dtype}")
        a = a.to(torch.int64)
        A = self.num_actions
        ok = (a >= 0) & (a < A) & buf["mask"].gather(1, a.clamp(0, A - 1)[:, None])[:, 0]
        if not bool(ok.all()):
            b = int((~ok).nonzero()[0, 0])
            raise IllegalActionError(f"session {b}: action {int(a[b])} is not legal for seat {int(buf['to_act'][b])}; "
                                     f"legal: {buf['mask'][b].nonzero()[:, 0].tolist()}")
        buf["actions"].copy_(a)
        replies = self._call("step")
        info = {key: buf[key].clone() for key in ("deal_kind", "new_deal", "end_seat", "final_chips")}
        if self.final_observations:
            info["final_index"] = torch.cat([r[0] for r in replies])
            info["final_obs"] = torch.cat([r[1] for r in replies])
        obs, mask = self._outputs()
        return VecStep(obs, mask, buf["to_act"].clone(), buf["rewards"].clone(), buf["terminated"].clone(),
                       buf["truncated"].clone(), info)

    def _outputs(self) -> tuple[torch.Tensor, torch.Tensor]:
        obs, mask = self._buffers["obs"], self._buffers["mask"]
        return (obs.clone(), mask.clone()) if self.copy else (obs, mask)

    def observe(self, seats: torch.Tensor | int) -> torch.Tensor:
        seats_t = torch.as_tensor(seats).expand(self.num_envs)
        return torch.cat(self._call("observe", [seats_t[lo:hi].clone() for lo, hi in zip(self._starts,
                                                                                       self._starts[1:])]))

    def state(self) -> torch.Tensor:
        return torch.cat(self._call("state"))

    def close(self) -> None:
        for conn in self._conns:
            try:
                conn.send(("close", None))
            except (BrokenPipeError, OSError):
                pass
        for proc in self._procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
        for conn in self._conns:
            conn.close()
        self._conns, self._procs = [], []

    def __enter__(self) -> SubprocVectorEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_conns", None):
            try:
                self.close()
            except Exception:  # noqa: BLE001 - interpreter shutdown; the daemon workers die with us
                pass


def _subproc_worker(config_kwargs: dict[str, Any], lo: int, hi: int, seed: int | None, final_observations: bool,
                    compile: bool, buffers: dict[str, torch.Tensor], conn: Any) -> None:
    """A :class:`SubprocVectorEnv` worker: one batched engine over sessions ``lo:hi`` of the shared buffers."""
    torch.set_num_threads(1)
    keep_freed_memory()
    config = make_config(config_kwargs.pop("ruleset"), config_kwargs.pop("num_players"), **config_kwargs)
    # The parent validated the actions against the shared mask before sending "step".
    env = BatchedMauscheln(config, hi - lo, seed=seed, final_observations=final_observations, validate=False,
                           compile=compile)
    env.use_buffers(buffers["obs"][lo:hi], buffers["mask"][lo:hi])
    out = {key: buffers[key][lo:hi] for key in ("to_act", "rewards", "terminated", "truncated", "deal_kind",
                                                 "new_deal", "end_seat", "final_chips")}
    actions = buffers["actions"][lo:hi]
    while True:
        try:
            command, payload = conn.recv()
        except (EOFError, OSError):
            return
        try:
            if command == "close":
                conn.close()
                return
            if command == "ping":
                reply: Any = None
            elif command == "reset":
                shard_seed, options = payload
                out["to_act"].copy_(env.reset(seed=shard_seed, options=options).to_act)
                reply = None
            elif command == "step":
                res = env.step(actions)
                for key in ("to_act", "rewards", "terminated", "truncated"):
                    out[key].copy_(getattr(res, key))
                for key in ("deal_kind", "new_deal", "end_seat", "final_chips"):
                    out[key].copy_(res.info[key])
                reply = (res.info["final_index"] + lo, res.info["final_obs"]) if final_observations else None
            elif command == "observe":
                reply = env.observe(payload)
            elif command == "state":
                reply = env.state()
            else:
                reply = MauschelnError(f"unknown worker command {command!r}")
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the parent, which raises it
            reply = exc
        conn.send(reply)


def make_vector_env(config: RuleConfig, num_envs: int, backend: str = "batched", device: str | torch.device = "cpu",
                    seed: int | None = None, workers: int = 1, **kwargs: Any) -> VectorEnv:
    """A :class:`VectorEnv` by name: ``"batched"`` (tensor engine, any device) or ``"reference"`` (Python loop, CPU).

    ``workers > 1`` (batched, CPU) splits the sessions over that many worker
    processes (:class:`SubprocVectorEnv`). Other keywords go to the env
    (e.g. ``copy=False``, ``final_observations=True``; ``compile=True`` for the
    batched engine, see :class:`~mauscheln_env.batched.BatchedMauscheln`).
    """
    if backend == "batched":
        if workers == 1:
            return BatchedMauscheln(config, num_envs, device=device, seed=seed, **kwargs)
        if torch.device(device).type != "cpu":
            raise ConfigError(f"worker processes run on the CPU; use one batched engine on {device!r}")
        return SubprocVectorEnv(config, num_envs, workers, seed=seed, **kwargs)
    if backend == "reference":
        if torch.device(device).type != "cpu":
            raise ConfigError(f"the reference backend runs on the CPU only, got device={device!r}")
        return ReferenceVectorEnv(config, num_envs, seed=seed, **kwargs)
    raise ConfigError(f"unknown backend {backend!r}; allowed: 'batched', 'reference'")
