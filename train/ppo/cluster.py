"""Ray as the cluster launcher: the data-parallel trainer as Ray Train's ``TorchTrainer`` on an existing cluster.

    ray start --head --port 6379                          # on the head machine
    ray start --address HEAD:6379                         # on every other machine
    mauscheln train --config configs/train/fast.yaml --nproc 8 --ray-address HEAD:6379

Ray Train starts ``nproc`` workers on the cluster (``threads`` CPUs each, one thread by default; a GPU each with
``--device cuda``), makes their torch process group (gloo on the CPU, nccl on CUDA) and runs one rank of the
trainer in each (:func:`train_rank`): the same ranks as ``--nproc`` or ``torchrun`` start
(:mod:`train.ppo.distributed`). No restarts: a worker that dies ends the run, with the last checkpoint.

The run directory is Ray's ``storage_path/name``: ``storage_path`` is the directory that holds the run directory
(``runs_root``) and ``name`` the run directory's name, so rank 0 writes ``config.yaml``, the checkpoints and the
TensorBoard events where a local run puts them, beside Ray's own records of the job. Rank 0 may run on any
machine of the cluster: on several machines the run directory must lie on storage that every machine mounts at
the same path (as Ray requires of its storage_path). Each worker starts in the driver's working directory when
its machine has it (relative paths in the options then mean what they mean to the driver), and finds this
project as the driver does (its directory is put on the workers' ``PYTHONPATH``; elsewhere install the project
on every machine).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mauscheln_env.errors import ConfigError, MauschelnError
from train.cli import RanksFailed


def train_on_ray(ranks_argv: list[str], nproc: int, run_dir: Path, cuda: bool, threads: int,
                 address: str, rank_run: Callable[[list[str]], dict[str, Any]]) -> dict[str, Any]:
    """Run the trainer's command line ``ranks_argv`` as ``nproc`` Ray Train workers on the cluster at ``address``,
    each calling ``rank_run(argv)`` (the trainer's own entry for one rank, passed in by it: this module is one of
    its steps); returns rank 0's summary. A failed worker raises :class:`~train.cli.RanksFailed` naming it."""
    import ray
    from ray.train import FailureConfig, RunConfig, ScalingConfig
    from ray.train.torch import TorchConfig, TorchTrainer

    reachable(address)
    root = str(Path(__file__).resolve().parents[2])  # the directory that holds this project's packages
    paths = [root, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]]
    print(f"training on the Ray cluster at {address}: {nproc} workers of {threads} CPU{'s' if threads > 1 else ''}"
          + (" and one GPU" if cuda else "") + f"; run directory {run_dir}", flush=True)
    ray.init(address=address, logging_level=logging.WARNING, log_to_driver=True,
             runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(paths)}})
    try:
        from ray.util.queue import Queue

        summaries = Queue(maxsize=1, actor_options={"num_cpus": 0})  # rank 0's summary comes back through it
        trainer = TorchTrainer(
            train_rank,
            train_loop_config={"argv": ranks_argv, "cwd": os.getcwd(), "summaries": summaries, "run": rank_run},
            torch_config=TorchConfig(backend="nccl" if cuda else "gloo"),
            scaling_config=ScalingConfig(num_workers=nproc, use_gpu=cuda, resources_per_worker={"CPU": threads}),
            run_config=RunConfig(name=run_dir.name, storage_path=str(run_dir.parent),
                                 failure_config=FailureConfig(max_failures=0)),
        )
        try:
            result = trainer.fit()
        except Exception as exc:  # Ray Train's TrainingFailedError (WorkerGroupError, ControllerError)
            raise ray_failure(exc, run_dir) from None
        error = getattr(result, "error", None)
        if error is not None:
            raise ray_failure(error, run_dir)
        return dict(summaries.get(timeout=60)) if not summaries.empty() else {}
    finally:
        ray.shutdown()


def reachable(address: str, timeout: float = 10.0) -> None:
    """Refuse a ``HOST:PORT`` address nothing answers on (``ray.init`` would keep retrying); other forms
    (``auto``, ``ray://...``) are Ray's to resolve."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "://" in address:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ConfigError(f"--ray-address {address}: nothing answers there ({exc.strerror or exc}); allowed: the "
                          "address `ray start --head` printed (HOST:PORT) of a running Ray cluster") from None


def train_rank(config: dict[str, Any]) -> None:
    """One rank of the run, on a Ray Train worker: ``config["run"]`` of the trainer's command line ``config["argv"]``, started in the
    driver's working directory when this machine has it; rank 0 hands its summary's figures to the driver
    (``config["summaries"]``, a Ray queue)."""
    import ray.train

    cwd = config.get("cwd")
    if cwd and os.path.isdir(cwd):
        os.chdir(cwd)
    summary = config["run"](list(config["argv"]))
    if ray.train.get_context().get_world_rank() == 0:
        config["summaries"].put({k: v for k, v in summary.items()
                                 if isinstance(v, (int, float, str)) and not isinstance(v, bool)})


def ray_failure(exc: BaseException, run_dir: Path) -> BaseException:
    """The one line of a failed Ray Train run: a user's mistake (said by the trainer) as it is, else which rank
    failed and how, and the checkpoint to resume from."""
    from train.ppo.checkpoint import latest_checkpoint_name
    from train.ppo.interrupt import resume_hint

    failures: dict[int, BaseException] = dict(getattr(exc, "worker_failures", None) or {})
    for rank in sorted(failures):
        cause = _root(failures[rank])
        if isinstance(cause, MauschelnError):
            return cause
    if failures:
        rank = min(failures)
        what = f"rank {rank} failed: {_one_line(_root(failures[rank]))}"
    else:
        what = f"the Ray Train run failed: {_one_line(_root(exc))}"
    latest = latest_checkpoint_name(run_dir)
    where = (f"the last checkpoint is {run_dir / 'checkpoints' / latest}; {resume_hint(run_dir)} --ray-address ..."
             if latest else "no checkpoint was written yet")
    return RanksFailed(f"{what}; the run stopped on every rank; {where}", 1)


def _root(exc: BaseException) -> BaseException:
    """The exception a worker raised (Ray wraps it: ``RayTaskError.cause``, ``__cause__``)."""
    seen = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        inner = getattr(exc, "cause", None) or exc.__cause__
        if not isinstance(inner, BaseException):
            break
        exc = inner
    return exc


def _one_line(exc: BaseException) -> str:
    """The exception's kind and the first sentence of its message's last line (Ray's run on for lines)."""
    text = str(exc).strip().splitlines()
    last = " ".join((text[-1] if text else "").split())
    first = last.split(". ")[0].rstrip(".")
    return f"{type(exc).__name__}: {first}"[:300]
