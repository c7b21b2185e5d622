"""Data-parallel training on ``torch.distributed``: every rank steps its own sessions, the gradients are averaged.

A run of W ranks (``--nproc W`` on one machine, ``torchrun`` across machines, or Ray Train's ``TorchTrainer``,
:mod:`train.ppo.cluster`) splits ``num_envs`` into W equal shards: rank r steps ``num_envs / W`` sessions on
its own batched engine, from its own seed stream (:func:`train.ppo.seeds.rank_seed`). Every rank holds the
same network, optimizer state and opponent pool: they start from rank 0's (:meth:`World.share`), and each
minibatch's gradient is the average over the ranks' minibatches, weighted by their decisions
(:meth:`World.gradient_step`), so every rank takes the same optimizer step. The pool's scores are summed over
the ranks' rollouts, so every rank seats the same snapshots with the same preferences. Rank 0 alone writes the
run directory (config, TensorBoard, checkpoints, the final policy) and evaluates.

The gradients are averaged by one explicit all-reduce of one flat buffer per minibatch rather than by
``DistributedDataParallel``: the network is called through its own methods (``logits_of``, ``value_of``), not
through ``forward``, which DDP's hooks need; a rank may hold no learner decision in a minibatch (it then adds
nothing, and the weights keep the average that of the union of the minibatches); and one buffer summed in a
fixed order gives every rank the same bytes, so the ranks stay bit-identical and a resumed run repeats the
updates it would have made. With one rank nothing is reduced: a one-process run is the trainer as it always was.

A rank that dies ends the run on every rank: the elastic agent (``torch.distributed.run``, which ``--nproc``
starts in-process as ``torchrun`` does) stops the others and :func:`launch_local` says which rank died; the
last checkpoint, written atomically by rank 0, stays loadable.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import logging
import os
import re
import signal
import socket
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import torch

from mauscheln_env.errors import ConfigError
from train.cli import RanksFailed

T = TypeVar("T")

TIMEOUT = datetime.timedelta(minutes=30)
"""How long a collective waits for the other ranks (rank 0's periodic evaluation happens while they wait)."""


class SameErrorOnRankZero(ConfigError):
    """On ranks other than 0: rank 0 refused the start with a user's mistake and says so (exit code 2)."""


@dataclass
class World:
    """This process's place among the ranks of a run: ``rank`` of ``size`` (0 of 1 without a process group)."""

    rank: int = 0
    size: int = 1
    local_rank: int = 0
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    """Where the tensors of the collectives live (the rank's device: NCCL reduces CUDA tensors)."""
    owned: bool = False
    """Whether this module joined the process group (and leaves it in :meth:`close`; Ray Train closes its own)."""
    profile: Any = None
    """A :class:`train.ppo.profile.Profile` that times the collectives (``--profile``), or None."""

    @property
    def main(self) -> bool:
        """Rank 0: the rank that writes the run directory, logs and evaluates."""
        return self.rank == 0

    # ------------------------------------------------------------------ collectives (no-ops on one rank)
    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        """Sum ``tensor`` over the ranks, in place; returns it."""
        if self.size > 1:
            import torch.distributed as dist

            with self._timed():
                dist.all_reduce(tensor)
        return tensor

    def total(self, *values: float) -> list[float]:
        """Each value summed over the ranks (one all-reduce for all of them)."""
        if self.size == 1:
            return list(values)
        buf = self.sum_(torch.tensor(values, dtype=torch.float64, device=self.device))
        return buf.tolist()

    def most(self, value: int) -> int:
        """The largest ``value`` of any rank."""
        if self.size == 1:
            return value
        import torch.distributed as dist

        buf = torch.tensor([value], dtype=torch.int64, device=self.device)
        with self._timed():
            dist.all_reduce(buf, op=dist.ReduceOp.MAX)
        return int(buf.item())

    def anyone(self, *flags: bool) -> list[bool]:
        """Each flag: whether it holds on some rank (so that every rank stops after the same update)."""
        if self.size == 1:
            return list(flags)
        import torch.distributed as dist

        buf = torch.tensor([int(f) for f in flags], dtype=torch.int64, device=self.device)
        with self._timed():
            dist.all_reduce(buf, op=dist.ReduceOp.MAX)
        return [bool(v) for v in buf.tolist()]

    def broadcast(self, obj: T) -> T:
        """Rank 0's ``obj`` on every rank (pickled; tensors should be on the CPU)."""
        if self.size == 1:
            return obj
        import torch.distributed as dist

        box = [obj if self.main else None]
        dist.broadcast_object_list(box, src=0, device=self.device if self.device.type == "cuda" else None)
        return box[0]  # type: ignore[return-value]

    def decide(self, choose: Callable[[], T]) -> T:
        """Rank 0 runs ``choose()`` (reading files, naming the run directory); every rank gets its result, or
        raises its error: a user's mistake is said once, by rank 0, and every rank exits 2."""
        from mauscheln_env.errors import MauschelnError

        if self.size == 1:
            return choose()
        result: Any = None
        error: MauschelnError | None = None
        if self.main:
            try:
                result = choose()
            except MauschelnError as exc:
                error = exc
        result, message = self.broadcast((result, None if error is None else str(error)))
        if self.main and error is not None:
            raise error
        if message is not None:
            raise SameErrorOnRankZero(message)
        return result

    def gradient_step(self, net: torch.nn.Module, optimizer: torch.optim.Optimizer, loss: torch.Tensor | None,
                      rows: int, max_grad_norm: float) -> None:
        """One optimizer step on the gradient of ``loss``, a mean over this rank's ``rows`` decisions.

        On several ranks the step uses the average over the ranks' minibatches weighted by their rows (the
        gradient of the mean over their union), summed in one all-reduce; a rank with no rows passes
        ``loss=None`` and adds nothing. Some rank must hold rows. Then the norm is clipped and the optimizer
        steps, the same on every rank."""
        optimizer.zero_grad()
        if self.size == 1:
            loss.backward()  # type: ignore[union-attr]
        else:
            import torch.distributed as dist

            params = [p for p in net.parameters() if p.requires_grad]
            if rows and loss is not None:
                loss.backward()
            parts = [(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1) * float(rows)
                     for p in params]
            weight = torch.full((1,), float(rows), dtype=params[0].dtype, device=params[0].device)
            flat = torch.cat([*parts, weight])
            with self._timed():
                dist.all_reduce(flat)
            flat = flat[:-1] / flat[-1]
            offset = 0
            for p in params:
                p.grad = flat[offset:offset + p.numel()].view_as(p)
                offset += p.numel()
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_grad_norm)
        optimizer.step()

    def mean_of(self, value: torch.Tensor, rows: int) -> torch.Tensor:
        """``value`` (a mean over this rank's ``rows``) as the mean over every rank's rows."""
        if self.size == 1:
            return value
        buf = torch.stack([value.detach().to(torch.float64) * rows,
                           torch.tensor(float(rows), dtype=torch.float64, device=value.device)])
        self.sum_(buf)
        return (buf[0] / buf[1].clamp(min=1)).to(value.dtype)

    # ------------------------------------------------------------------ the run's state on every rank
    def share(self, net: torch.nn.Module, optimizer: torch.optim.Optimizer,
              extra: dict[str, Any]) -> dict[str, Any]:
        """Load rank 0's weights and optimizer state on every rank and return rank 0's ``extra`` (the update to
        start from, the pool snapshots, the trainer state): a run starts from one state on every rank."""
        if self.size == 1:
            return extra
        state = None
        if self.main:
            state = {"net": _to_cpu(net.state_dict()), "optimizer": _to_cpu(optimizer.state_dict()),
                     "extra": _to_cpu(extra)}
        state = self.broadcast(state)
        if not self.main:
            net.load_state_dict(state["net"])
            optimizer.load_state_dict(state["optimizer"])
        return state["extra"]

    def check_same_parameters(self, net: torch.nn.Module, update: int) -> None:
        """Raise unless every rank holds exactly the same parameters (``--check-sync``: a hash of them is
        gathered from every rank after each update)."""
        if self.size == 1:
            return
        import torch.distributed as dist

        digest = parameter_digest(net)
        digests: list[str | None] = [None] * self.size
        dist.all_gather_object(digests, digest)
        if len(set(digests)) > 1:
            by_rank = ", ".join(f"rank {r}: {d[:12] if d else d}" for r, d in enumerate(digests))
            raise RuntimeError(f"after update {update} the parameters differ across the ranks ({by_rank})")

    def close(self) -> None:
        """Leave the process group this module joined (Ray Train closes its own), once every rank is here: no
        rank ends while rank 0 still writes (a rank that ended would make the launcher stop rank 0)."""
        if self.size > 1 and self.owned:
            import torch.distributed as dist

            if dist.is_initialized():
                dist.barrier()
                dist.destroy_process_group()

    def _timed(self) -> Any:
        return contextlib.nullcontext() if self.profile is None else self.profile("all_reduce")


def parameter_digest(net: torch.nn.Module) -> str:
    """SHA-256 of the parameters' names and bytes."""
    h = hashlib.sha256()
    for name, p in net.named_parameters():
        h.update(name.encode())
        h.update(p.detach().contiguous().cpu().reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def _to_cpu(obj: Any) -> Any:
    if torch.is_tensor(obj):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


# ---------------------------------------------------------------------------- joining the ranks of a run
def launched() -> bool:
    """Whether this process is a rank of a launched run (torchrun, ``--nproc``, Ray Train)."""
    import torch.distributed as dist

    return "TORCHELASTIC_RUN_ID" in os.environ or (dist.is_available() and dist.is_initialized()) or \
        int(os.environ.get("WORLD_SIZE", "1")) > 1


def rank_main(main: Callable[[], int]) -> NoReturn:
    """Run the command's ``main`` as a launched rank and end the process with its exit code. An exception it
    raises is recorded for the launcher (``torch.distributed.elastic``'s error file, which :func:`failure_of`
    reads) before it ends the process.

    Once ``main`` has returned, its files are written and closed and the process group is left: the process
    ends without the interpreter's teardown, in which torch's threads now and then abort the process
    ("terminate called without an active exception"), which the launcher would report as a failed rank.
    """
    from torch.distributed.elastic.multiprocessing.errors import record

    code = record(main)() or 0
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def join_world(device: torch.device) -> World:
    """This process's :class:`World`: the process group Ray Train made, or one joined from the environment a
    launcher sets (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``), with backend gloo on the CPU and
    nccl on CUDA; a world of one rank without a process group otherwise."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():  # Ray Train's workers come with their process group
        size, rank = dist.get_world_size(), dist.get_rank()
        local = int(os.environ.get("LOCAL_RANK", "0"))
        # Ray shows each worker its own GPU and makes it the current device
        on = torch.device("cuda", torch.cuda.current_device()) if device.type == "cuda" else device
        return World(rank=rank, size=size, local_rank=local, device=on)
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size == 1:
        return World()
    if not dist.is_available():
        raise ConfigError("this torch build has no torch.distributed; allowed: one process (no --nproc, no "
                          "torchrun)")
    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    on = rank_device(device, local, size)
    backend = "nccl" if on.type == "cuda" else "gloo"
    if on.type == "cuda":
        torch.cuda.set_device(on)
    dist.init_process_group(backend, store=_loopback_store(rank, size), rank=rank, world_size=size,
                            timeout=TIMEOUT)
    return World(rank=rank, size=size, local_rank=local, device=on, owned=True)


def rank_device(device: torch.device, local_rank: int, size: int) -> torch.device:
    """The device of a rank: the CPU, or with ``cuda`` the GPU of its local rank (of several ranks)."""
    if device.type != "cuda" or size == 1:
        return device
    if device.index not in (None, local_rank) or local_rank >= torch.cuda.device_count():
        raise ConfigError(f"device={str(device)!r} with {size} ranks: local rank {local_rank} uses GPU {local_rank} "
                          f"and this machine has {torch.cuda.device_count()}; allowed: device='cuda' and at most one "
                          "rank per GPU")
    return torch.device("cuda", local_rank)


def _loopback_store(rank: int, size: int) -> Any:
    """The TCP store of the process group when the ranks meet on this machine (``MASTER_ADDR`` a loopback
    address, as :func:`launch_local` sets it): rank 0 listens on that address only. ``None`` (``env://``: the
    store torchrun's agent shares, listening where torchrun decides) otherwise."""
    import torch.distributed as dist

    host, port = os.environ.get("MASTER_ADDR", ""), int(os.environ.get("MASTER_PORT", "0"))
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True" or host not in ("127.0.0.1", "localhost") \
            or not port:
        return None
    if rank != 0:
        return dist.TCPStore(host, port, size, False, TIMEOUT)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    _LISTENERS.append(listener)  # the store listens on this socket: it stays open as long as the process
    return dist.TCPStore(host, port, size, True, TIMEOUT, master_listen_fd=listener.fileno())


_LISTENERS: list[socket.socket] = []


def shard(num_envs: int, size: int) -> int:
    """The sessions of each of ``size`` ranks: ``num_envs / size``, refused unless it divides evenly (equal
    shards keep the ranks in step: none waits at the all-reduce for another's larger rollout)."""
    if num_envs % size:
        low = num_envs // size * size
        raise ConfigError(f"num_envs={num_envs} does not split evenly over {size} ranks; allowed: a multiple of "
                          f"{size} (each rank steps num_envs / {size} sessions), e.g. {max(low, size)} or "
                          f"{low + size}")
    return num_envs // size


# ---------------------------------------------------------------------------- --nproc: the local launcher
def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the operating system's pick for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _signals_kept() -> Iterator[None]:
    """Put back the handlers of the signals the elastic agent takes over while it runs."""
    names = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
    saved = {name: signal.getsignal(getattr(signal, name)) for name in names if hasattr(signal, name)}
    try:
        yield
    finally:
        for name, handler in saved.items():
            if handler is not None:
                signal.signal(getattr(signal, name), handler)


def launch_local(argv: list[str], nproc: int, run_dir: Path, threads: int) -> int:
    """Run the trainer's command line ``argv`` as ``nproc`` ranks on this machine, as ``torchrun
    --nproc-per-node nproc`` would: PyTorch's elastic agent in this process starts ``python -m
    train.ppo_selfplay ARGV`` per rank, with a rendezvous in a temporary file and the process group's store on
    127.0.0.1 (nothing listens beyond this machine), and no restarts. Returns the exit code of the ranks.

    Ctrl-C reaches every rank (one process group): they finish the update, rank 0 writes a checkpoint and they
    stop together; a second Ctrl-C stops them at once. A rank that dies raises :class:`RanksFailed` naming it.
    """
    from torch.distributed.elastic.multiprocessing import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    env = {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1",  # the ranks make their store (on 127.0.0.1), not the agent
           "TORCHELASTIC_SIGNALS_TO_HANDLE": "SIGTERM,SIGHUP,SIGQUIT",  # Ctrl-C is the ranks' to handle
           "OMP_NUM_THREADS": str(threads),
           "GLOO_SOCKET_IFNAME": os.environ.get("GLOO_SOCKET_IFNAME", "lo")}  # gloo listens on the loopback only
    presses = [0]

    def on_ctrl_c(signum: int, frame: Any) -> None:
        # The agent starts each rank in a session of its own, out of the terminal's reach: pass Ctrl-C on. The
        # ranks stop after the update (a second time: at once).
        presses[0] += 1
        for pid in _children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGINT)

    for name in [n for n in logging.root.manager.loggerDict if n.startswith("torch.distributed.elastic")]:
        logging.getLogger(name).setLevel(logging.CRITICAL)  # the agent's own reports: failures are said in one line
    with tempfile.TemporaryDirectory(prefix="mauscheln-rdzv-") as tmp, _signals_kept(), _environment(env):
        config = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=nproc, run_id=uuid.uuid4().hex,
                              rdzv_backend="c10d", rdzv_endpoint=str(Path(tmp) / "rendezvous"),
                              rdzv_configs={"store_type": "file"}, max_restarts=0, monitor_interval=0.1,
                              local_addr="127.0.0.1", start_method="spawn",
                              signals_to_handle="SIGTERM,SIGHUP,SIGQUIT")
        signal.signal(signal.SIGINT, on_ctrl_c)
        try:
            elastic_launch(config, sys.executable)("-m", "train.ppo_selfplay", *argv)
        except ChildFailedError as exc:
            raise failure_of(exc.failures, run_dir, interrupted=presses[0] > 0) from None
        except SignalException as exc:  # SIGTERM, SIGHUP or SIGQUIT to this process: the agent stopped the ranks
            raise RanksFailed(f"stopped by {exc.sigval.name}; every rank stopped; {_resume_from(run_dir)}",
                              128 + int(exc.sigval)) from None
    return 130 if presses[0] else 0


def _children() -> list[int]:
    """The processes this one started (Linux's /proc), here the ranks."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{os.getpid()}/task").iterdir():
            with contextlib.suppress(OSError):
                out += [int(pid) for pid in (task / "children").read_text().split()]
    return out


def _resume_from(run_dir: Path) -> str:
    from train.ppo.checkpoint import latest_checkpoint_name
    from train.ppo.interrupt import resume_hint

    latest = latest_checkpoint_name(run_dir)
    return (f"the last checkpoint is {run_dir / 'checkpoints' / latest}; {resume_hint(run_dir)}" if latest
            else "no checkpoint was written yet")


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def failure_of(failures: dict[int, Any], run_dir: Path, interrupted: bool = False) -> RanksFailed:
    """The one line that ends a launch whose ranks failed: which rank died and how (the root cause, not the
    ranks the launcher stopped after it), and the checkpoint to resume from. Ranks that exited 2 (a user's
    mistake, said by rank 0) or 130 (Ctrl-C) end it silently with that code."""
    if interrupted:
        return RanksFailed("", 130)
    rank = min(failures, key=lambda r: _cause_order(failures[r], r))
    f = failures[rank]
    if f.exitcode == 2:
        return RanksFailed("", 2)
    how = (f"was killed by {f.signal_name()}" if f.exitcode < 0 else f"exited with code {f.exitcode}")
    detail = _error_message(f)
    return RanksFailed(f"rank {rank} (pid {f.pid}) {how}{': ' + detail if detail else ''}; the run stopped on every "
                       f"rank; {_resume_from(run_dir)}", 1)


def _cause_order(failure: Any, rank: int) -> tuple[int, int, int]:
    """Which failure caused the others, first: a rank killed by a signal (other than the SIGTERM with which the
    launcher stops the rest), then one that exited with an error of its own, then one that lost its peers (a
    collective that failed because another rank had gone), earliest and lowest rank first."""
    if failure.exitcode < 0:
        kind = 2 if failure.exitcode == -signal.SIGTERM else 0
    else:
        kind = 1 if not _PEER_GONE.search(_error_message(failure)) else 2
    return kind, int(failure.timestamp), rank


_PEER_GONE = re.compile(r"Connection closed by peer|Connection reset by peer|Broken pipe|Connection was likely closed"
                        r"|DistNetworkError|Gloo|NCCL", re.IGNORECASE)
"""What a collective says when another rank has gone."""


def _error_message(failure: Any) -> str:
    """The exception a failed rank recorded (its last line), or nothing."""
    data = getattr(failure, "error_file_data", None) or {}
    message = data.get("message") if isinstance(data, dict) else None
    if isinstance(message, dict):
        message = message.get("message")
    if not isinstance(message, str) or message in ("<NONE>", ""):
        return ""
    return " ".join(message.strip().splitlines()[-1].split())
