"""Training checkpoints (``RUN_DIR/checkpoints/update_XXXXXX/`` and a ``latest`` pointer) and the final policy.

A checkpoint holds everything an update depends on besides (seed, update): ``policy.safetensors`` (the
learner, in the policy format :mod:`agents.learned` reads, with the update and the options in its metadata),
``optimizer.safetensors`` (Adam's state), ``pool.safetensors`` (the frozen snapshots) and ``trainer.json``
(the update, the decisions so far and the learner's score against each snapshot). It is written into a
temporary folder and renamed, so a run killed while writing keeps its previous checkpoint; reading checks
every file and refuses anything that does not fit the run with a
:class:`~agents.learned.CheckpointError` naming the file.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from agents.learned import CheckpointError, PolicyNet, save_policy
from mauscheln_env.engine import Game
from mauscheln_env.files import atomic_write_text, strict_json

if TYPE_CHECKING:
    from train.ppo.options import Args


def save_checkpoint(run_dir: Path, update: int, net: PolicyNet, optimizer: torch.optim.Optimizer,
                    game: Game, args: Args, pool: list[dict[str, torch.Tensor]], stats: dict[str, Any],
                    world_size: int = 1) -> Path:
    """Write ``checkpoints/update_XXXXXX/`` atomically (temporary folder, then a rename), then point ``latest`` at it.

    The policy's metadata records the number of ranks that trained the run (``world_size``): a run continues
    exactly only on as many (:class:`WorldSizeError`).

    Non-finite weights are refused (:class:`~agents.learned.CheckpointError`) before anything is written.
    """
    from safetensors.torch import save_file

    from agents.learned import check_finite

    check_finite(net, f"update {update}")
    ckpt_root = run_dir / "checkpoints"
    ckpt_root.mkdir(parents=True, exist_ok=True)
    final = ckpt_root / f"update_{update:06d}"
    tmp = Path(tempfile.mkdtemp(dir=ckpt_root, prefix=".tmp_"))
    try:
        save_policy(tmp / "policy.safetensors", net, game,
                    extra={"update": update, "args": dataclasses.asdict(args), "world_size": world_size})
        opt_tensors, opt_meta = _flatten_optimizer(optimizer)
        save_file(opt_tensors, str(tmp / "optimizer.safetensors"), metadata={"state": strict_json(opt_meta)})
        pool_tensors = {f"{i}.{k}": v.contiguous() for i, sd in enumerate(pool) for k, v in sd.items()}
        save_file(pool_tensors or {"empty": torch.zeros(1)}, str(tmp / "pool.safetensors"),
                  metadata={"size": str(len(pool))})
        (tmp / "trainer.json").write_text(strict_json({"update": update, "stats": stats}, indent=1))
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    atomic_write_text(ckpt_root / "latest", final.name)
    return final


def clean_partial_writes(run_dir: Path) -> list[str]:
    """Remove what an interrupted checkpoint write left behind (``checkpoints/.tmp_*``, temporary files)."""
    root = run_dir / "checkpoints"
    removed = []
    for path in sorted(root.glob(".tmp_*")) + sorted(root.glob(".latest.*.tmp")) + sorted(root.glob("latest.tmp")):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        removed.append(path.name)
    return removed


def _flatten_optimizer(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    sd = optimizer.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, Any] = {}
    for pid, state in sd["state"].items():
        for key, value in state.items():
            if torch.is_tensor(value):
                tensors[f"{pid}.{key}"] = value.detach().cpu().contiguous()
            else:
                scalars[f"{pid}.{key}"] = value
    return tensors or {"empty": torch.zeros(1)}, {"param_groups": sd["param_groups"], "scalars": scalars}


def _read_safetensors(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file, safe_open

    from agents.learned import CheckpointError

    if not path.is_file():
        raise CheckpointError(f"{path} is missing; a checkpoint holds policy, optimizer and pool safetensors "
                              "and trainer.json")
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
        return load_file(str(path)), meta
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{path} is not a readable safetensors file: {exc}") from exc


def load_checkpoint(run_dir: Path, net: PolicyNet, optimizer: torch.optim.Optimizer, game: Game,
                    world_size: int = 1) -> tuple[int, list[dict[str, torch.Tensor]], dict[str, Any]]:
    """Restore the last checkpoint of ``run_dir``; returns (update, pool, stats).

    Every file is checked (the ``latest`` pointer stays inside the run; the policy fits this game and network;
    the optimizer state, the pool snapshots and the trainer state have the shapes and types this run needs)
    and anything wrong raises :class:`~agents.learned.CheckpointError` naming the file; a checkpoint written
    by another number of ranks than ``world_size`` raises :class:`WorldSizeError`.
    """
    from agents.learned import CheckpointError, check_compatible, latest_checkpoint, read_policy

    ckpt = latest_checkpoint(run_dir)
    loaded, layout, extra = read_policy(ckpt / "policy.safetensors")
    check_world_size(run_dir, ckpt, extra, world_size)
    check_compatible(layout, game, str(ckpt))
    if loaded.spec != net.spec:
        raise CheckpointError(f"{ckpt} holds a network of shape {loaded.spec}, this run builds {net.spec}")
    update = extra.get("update")
    if not isinstance(update, int) or isinstance(update, bool) or update < 1:
        raise CheckpointError(f"{ckpt / 'policy.safetensors'}: extra update={update!r}; allowed: a whole number >= 1")
    shapes = {k: v.shape for k, v in net.state_dict().items()}

    # trainer state
    path = ckpt / "trainer.json"
    try:
        trainer = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{path} is missing") from None
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path} is not JSON: {exc}") from exc
    stats = trainer.get("stats") if isinstance(trainer, dict) else None
    if not isinstance(trainer, dict) or trainer.get("update") != update or not isinstance(stats, dict):
        raise CheckpointError(f"{path} must be a mapping with update={update} and a stats mapping")

    # pool
    path = ckpt / "pool.safetensors"
    pool_tensors, meta = _read_safetensors(path)
    size = meta.get("size", "")
    if not size.isdigit() or int(size) > 1024:
        raise CheckpointError(f"{path}: metadata size={size!r}; allowed: a whole number 0..1024")
    pool = [{k.split(".", 1)[1]: v for k, v in pool_tensors.items() if k.split(".", 1)[0] == str(i)}
            for i in range(int(size))]
    for i, sd in enumerate(pool):
        if {k: v.shape for k, v in sd.items()} != shapes:
            raise CheckpointError(f"{path}: snapshot {i} does not have this run's network shape")
        if not all(bool(torch.isfinite(v).all()) for v in sd.values() if v.is_floating_point()):
            raise CheckpointError(f"{path}: snapshot {i} holds NaN or infinite weights")
    scores = stats.get("pool_scores", [0.0] * len(pool))
    decisions = stats.get("decisions", 0)
    if (not isinstance(scores, list) or len(scores) != len(pool)
            or not all(isinstance(x, (int, float)) and math.isfinite(x) for x in scores)
            or not isinstance(decisions, int) or decisions < 0):
        raise CheckpointError(f"{ckpt / 'trainer.json'}: stats must hold {len(pool)} finite pool_scores and "
                              "decisions >= 0")

    # optimizer
    path = ckpt / "optimizer.safetensors"
    tensors, meta = _read_safetensors(path)
    try:
        opt_meta = json.loads(meta["state"])
        groups, scalars = opt_meta["param_groups"], opt_meta["scalars"]
        if not isinstance(groups, list) or not isinstance(scalars, dict) or not all(
                isinstance(g, dict) and isinstance(g.get("lr"), (int, float)) and math.isfinite(g["lr"])
                for g in groups):
            raise TypeError("param_groups must be a list of mappings with a finite lr, and scalars a mapping")
        state: dict[int, dict[str, Any]] = {}
        for key, value in [*tensors.items(), *scalars.items()]:
            if key == "empty":
                continue
            pid, name = key.split(".", 1)
            state.setdefault(int(pid), {})[name] = value
        params = list(net.parameters())
        for pid, entry in state.items():
            if not 0 <= pid < len(params):
                raise ValueError(f"state for parameter {pid}, the network has {len(params)}")
            for name, value in entry.items():
                if torch.is_tensor(value) and value.dim() and value.shape != params[pid].shape:
                    raise ValueError(f"{name} of parameter {pid} has shape {tuple(value.shape)}, "
                                     f"expected {tuple(params[pid].shape)}")
                if torch.is_tensor(value) and value.is_floating_point() and not bool(torch.isfinite(value).all()):
                    raise ValueError(f"{name} of parameter {pid} holds NaN or infinite values")
        optimizer.load_state_dict({"state": state, "param_groups": groups})
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as exc:
        raise CheckpointError(f"{path} is not an optimizer state of this run: {exc}") from exc
    net.load_state_dict(loaded.state_dict())
    return update, pool, stats


class WorldSizeError(CheckpointError):
    """A run resumed on another number of ranks than it was trained with."""


def recorded_world_size(run_dir: Path) -> int:
    """The number of ranks that wrote the run's last checkpoint (1 for a checkpoint that does not say)."""
    from agents.learned import latest_checkpoint, read_policy

    ckpt = latest_checkpoint(run_dir)
    return _world_size_of(ckpt, read_policy(ckpt / "policy.safetensors")[2])


def _world_size_of(ckpt: Path, extra: dict[str, Any]) -> int:
    size = extra.get("world_size", 1)
    if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= 1024:
        raise CheckpointError(f"{ckpt / 'policy.safetensors'}: extra world_size={size!r}; allowed: a whole number "
                              "1..1024")
    return size


def check_world_size(run_dir: Path, ckpt: Path, extra: dict[str, Any], world_size: int) -> None:
    """Refuse to continue a run on another number of ranks than wrote its checkpoint ``ckpt``: each rank's
    sessions and seed stream depend on the number of ranks, so another number would not continue the same run."""
    recorded = _world_size_of(ckpt, extra)
    if recorded != world_size:
        raise WorldSizeError(
            f"{run_dir} was trained by {recorded} rank{'s' if recorded > 1 else ''} ({ckpt.name} records world size "
            f"{recorded}) and continues exactly only on as many (each rank's sessions and seeds depend on the number "
            f"of ranks); this launch has {world_size}; allowed: --nproc {recorded}"
            + (f" (or torchrun / Ray with {recorded} processes in all)" if recorded > 1 else " (one process)"))


def latest_checkpoint_name(run_dir: Path) -> str | None:
    """The name of the run's latest checkpoint, or None."""
    from agents.learned import CheckpointError, latest_checkpoint

    try:
        latest = latest_checkpoint(run_dir, missing_ok=True)
    except CheckpointError:
        return None
    return None if latest is None else latest.name


def save_final_policy(run_dir: Path, net: PolicyNet, game: Game, args: Args, decisions: int) -> Path:
    """``RUN_DIR/policy.safetensors``: the learner as the run leaves it, with the options and decisions so far."""
    return save_policy(run_dir / "policy.safetensors", net, game,
                       extra={"args": dataclasses.asdict(args), "decisions": decisions})
