"""Golden parameters: seeded one-process training runs still end with bit-identical checkpoints.

Each configuration in :data:`GOLDEN_RUNS` is a tiny seeded run of ``train.ppo_selfplay`` (a few updates, a
handful of sessions, a small network) that together reach every path of an update: both backends, each
ruleset, self-play, pool snapshots and scripted baselines as opponents, sessions of several deals bootstrapped
at the cut, the centralised critic, imitation with DAgger and a magnet, target KL, a periodic evaluation.
:func:`fingerprint` hashes the final checkpoint: the policy's tensors, the optimizer state, the pool snapshots
(SHA-256 of names, dtypes, shapes and bytes) and the trainer state; anything a change of the trainer does to
the run, down to the last bit of one weight, changes a digest.

The recorded digests (``tests/data/train_golden.json``) come from the trainer before it was restructured;
any trainer meant to behave the same (a one-process run of a data-parallel trainer too) must reach them.
:func:`run_golden` runs a configuration with extra flags or another launcher and returns its fingerprint.

Float results depend on torch's kernels, which torch picks by processor (its vendor and the widest vector
instructions it has, :func:`_cpu`): the file keeps one recording per processor kind, each with the torch version
and machine it was written on. On a kind that has its recording a run must match it to the last bit; on another
kind the run must agree with a recording in its checkpoint, decisions and trainer state exactly and in its
weights' sums to a relative 1e-6 (the last bits of a float sum differ between kernels), and the failure says to
record that kind. Record this machine's kind (only when training is meant to change, with a note saying why;
then record the other kinds again on their machines): ``python -m tests.test_train_golden --write``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import platform
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

GOLDEN_FILE = Path(__file__).resolve().parent / "data" / "train_golden.json"

COMMON = ["--seed", "7", "--threads", "1", "--num-envs", "16", "--num-steps", "16", "--total-decisions", "768",
          "--hidden", "32", "32", "--num-minibatches", "2", "--update-epochs", "2", "--pool-size", "2",
          "--pool-every", "1", "--checkpoint-every", "1", "--eval-every", "0", "--final-eval-deals", "0"]
"""Flags of every golden run (no --config: a preset edited later must not move the digests)."""

GOLDEN_RUNS: dict[str, list[str]] = {
    # self-play, pool snapshots and two tensor baselines in one field; sessions of three deals
    "mauscheln-batched-field": ["--ruleset", "mauscheln", "--backend", "batched", "--self-play-prob", "0.3",
                                "--baseline-prob", "0.5", "--baseline-opponents", "expert", "random"],
    # the centralised critic, single-deal sessions, early stop on the approximate KL
    "mauscheln_classic-central-critic": ["--ruleset", "mauscheln_classic", "--backend", "batched",
                                         "--central-critic", "--max-deals", "1", "--baseline-opponents", "expert",
                                         "--learning-rate", "0.003", "--update-epochs", "4", "--target-kl", "0.00001"],
    # the reference backend, tensor baselines of the ruleset, the plain network and PPO variants
    "mousel-reference": ["--ruleset", "mousel", "--backend", "reference", "--num-envs", "8",
                         "--baseline-opponents", "beginner", "expert", "--self-play-prob", "0.2", "--no-trump-first",
                         "--no-clip-vloss", "--no-anneal-lr"],
    # two updates of imitation (the second with DAgger sessions), then PPO pulled towards the clone
    "mouche-imitation-magnet": ["--ruleset", "mouche", "--backend", "batched", "--total-decisions", "1024",
                                "--imitate-decisions", "512", "--imitate-student", "0.5", "--magnet", "imitation",
                                "--magnet-coef", "1.0", "--baseline-opponents", "expert"],
    # three seats, two-deal sessions, a rule option, a periodic evaluation between updates
    "muschka-three-seats-eval": ["--ruleset", "muschka", "--backend", "batched", "--players", "3",
                                 "--max-deals", "2", "--eval-every", "2", "--eval-deals", "2",
                                 "--eval-agents", "random"],
}


def _tensor_digest(tensors: dict[str, Any]) -> str:
    """SHA-256 over the tensors in name order: each one's name, dtype, shape and raw bytes."""
    import torch

    h = hashlib.sha256()
    for name in sorted(tensors):
        t = tensors[name].contiguous().cpu()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def fingerprint(run_dir: Path) -> dict[str, Any]:
    """The digests of a run's latest checkpoint: policy tensors, optimizer state, pool snapshots, trainer state;
    and, to read a failure by, the float64 sum and absolute sum of the policy's floating-point tensors."""
    from safetensors.torch import load_file

    ckpt = run_dir / "checkpoints" / (run_dir / "checkpoints" / "latest").read_text().strip()
    policy = load_file(str(ckpt / "policy.safetensors"))
    trainer = json.loads((ckpt / "trainer.json").read_text(encoding="utf-8"))
    weights = [v for v in policy.values() if v.is_floating_point()]
    return {
        "checkpoint": ckpt.name,
        "policy": _tensor_digest(policy),
        "optimizer": _tensor_digest(load_file(str(ckpt / "optimizer.safetensors"))),
        "pool": _tensor_digest(load_file(str(ckpt / "pool.safetensors"))),
        "trainer": hashlib.sha256(json.dumps(trainer, sort_keys=True).encode()).hexdigest(),
        "decisions": trainer["stats"]["decisions"],
        "weight_sum": repr(float(sum(v.double().sum() for v in weights))),
        "weight_abs_sum": repr(float(sum(v.double().abs().sum() for v in weights))),
    }


def run_golden(name: str, run_dir: Path, extra: Sequence[str] = (),
               runner: Callable[[list[str]], int] | None = None) -> dict[str, Any]:
    """Run the golden configuration ``name`` into ``run_dir`` (``extra`` flags appended; ``runner`` is the
    command's ``main``, by default :func:`train.ppo_selfplay.main` in this process) and return its
    :func:`fingerprint`."""
    if runner is None:
        from train.ppo_selfplay import main as runner
    argv = [*COMMON, *GOLDEN_RUNS[name], "--run-dir", str(run_dir), *extra]
    rc = runner(argv)
    if rc != 0:
        raise AssertionError(f"golden run {name} exited {rc}: {argv}")
    return fingerprint(run_dir)


def _recordings() -> dict[str, dict[str, Any]]:
    """The recordings by processor kind (:func:`_cpu`): each ``{"torch", "machine", "runs"}``."""
    return json.loads(GOLDEN_FILE.read_text(encoding="utf-8"))["recordings"]


def check_golden(name: str, got: dict[str, Any]) -> None:
    """Assert that ``got`` (a :func:`fingerprint` of the golden run ``name``) is where the recordings say: exactly
    this processor kind's recording, or, on a kind without one, a recording up to the last bits of the weights."""
    recordings = _recordings()
    here = f"torch {_torch_version()} on {_machine()}, {_cpu()}"
    mine = recordings.get(_cpu())
    if mine is not None:
        want = mine["runs"][name]
        assert got == want, (f"{name}: the training run ends elsewhere than recorded (recorded with torch "
                             f"{mine['torch']} on {mine['machine']}, {_cpu()}; here {here}): got {got}, want {want}")
        return
    exact = ("checkpoint", "decisions", "trainer")
    for rec in recordings.values():
        want = rec["runs"][name]
        if all(got[k] == want[k] for k in exact) and all(
                math.isclose(float(got[k]), float(want[k]), rel_tol=1e-6) for k in ("weight_sum", "weight_abs_sum")):
            return
    raise AssertionError(f"{name}: the training run ends elsewhere than any recording ({sorted(recordings)}; here "
                         f"{here}, which has no recording of its own: `python -m tests.test_train_golden --write` "
                         f"records it): got {got}, want one of {[r['runs'][name] for r in recordings.values()]}")


def test_every_golden_run_is_recorded():
    for rec in _recordings().values():
        assert sorted(rec["runs"]) == sorted(GOLDEN_RUNS)


@pytest.mark.parametrize("name", sorted(GOLDEN_RUNS))
def test_training_reaches_the_golden_parameters(tmp_path, name):
    """Today's trainer, run as recorded, ends with exactly the recorded checkpoint."""
    check_golden(name, run_golden(name, tmp_path / "run"))


def _torch_version() -> str:
    import torch

    return torch.__version__


def _machine() -> str:
    return f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"


def _cpu() -> str:
    """The processor kind torch picks its kernels by: the vendor (Linux's ``vendor_id``) and torch's CPU
    capability, e.g. ``GenuineIntel AVX512`` or ``AuthenticAMD AVX2``."""
    import torch

    vendor = platform.processor() or "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("vendor_id"):
                vendor = line.split(":", 1)[1].strip()
                break
    return f"{vendor} {torch.backends.cpu.get_cpu_capability()}"


def write() -> None:
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in GOLDEN_RUNS:
            runs[name] = run_golden(name, Path(tmp) / name)
            print(name, runs[name]["policy"][:16], flush=True)
    recordings = _recordings() if GOLDEN_FILE.exists() else {}
    recordings[_cpu()] = {"torch": _torch_version(), "machine": _machine(), "runs": runs}
    GOLDEN_FILE.write_text(json.dumps({"recordings": recordings}, indent=1, sort_keys=True) + "\n",
                           encoding="utf-8")
    print(f"wrote {GOLDEN_FILE} ({_cpu()})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="record the digests of today's trainer")
    if parser.parse_args().write:
        write()
    else:
        parser.print_help()
        sys.exit(2)
