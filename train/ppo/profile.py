"""Where an update's time goes (``--profile``): seconds per part, per rank, printed after each update.

The loop and its steps mark their parts with ``with run.profile("engine"):``. Without ``--profile`` every
range is one shared no-op context (nothing is timed, nothing waits). With it, each range waits for the device
at its start and end (CUDA runs asynchronously: without the wait a part's kernels would be billed to the
next part that waits), is timed, and is also a ``torch.profiler.record_function`` range, so a trace taken with
``torch.profiler`` shows the same parts. Ranges nest: a part's time excludes the parts inside it (the
rollout's own time is its bookkeeping; the forward passes, engine steps and opponents are parts of their own).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import torch

PARTS = ("forward", "engine", "opponents", "rollout", "advantages", "update", "all_reduce", "imitation",
         "logging", "checkpoint", "evaluation")
"""The parts, in the order they are printed: the learner's forward passes in the rollout, the engine's steps (and
observations), the opponents' choices (pool snapshots' forward passes, scripted baselines), the rest of the
rollout, advantages, the PPO update's computation, the collectives across ranks (gradients, totals, flags: on
several ranks this includes waiting for the slowest rank), imitation updates, logging, checkpoints and
evaluation."""

_NOTHING = contextlib.nullcontext()


class Profile:
    """Seconds per part of the current update (:data:`PARTS`), when ``enabled``."""

    def __init__(self, enabled: bool, device: torch.device) -> None:
        self.enabled = enabled
        self.cuda = device.type == "cuda"
        self.seconds = dict.fromkeys(PARTS, 0.0)
        self._inner: list[float] = []  # per open range: the seconds of the ranges inside it

    def __call__(self, part: str) -> Any:
        """A context that times ``part`` (a no-op unless enabled)."""
        return self._timed(part) if self.enabled else _NOTHING

    @contextlib.contextmanager
    def _timed(self, part: str) -> Iterator[None]:
        self._wait()
        start = time.perf_counter()
        self._inner.append(0.0)
        try:
            with torch.profiler.record_function(part):
                yield
        finally:
            self._wait()
            spent = time.perf_counter() - start
            inner = self._inner.pop()
            self.seconds[part] += spent - inner
            if self._inner:
                self._inner[-1] += spent

    def _wait(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def take(self) -> dict[str, float]:
        """The seconds per part since the last call, and start again."""
        out, self.seconds = self.seconds, dict.fromkeys(PARTS, 0.0)
        return out


def profile_line(update: int, rank: int, seconds: dict[str, float], total: float) -> str:
    """``profile update U rank R: forward=0.412 engine=0.620 ... other=0.010 total=2.100`` (seconds; ``other``:
    the update's time outside every part)."""
    parts = " ".join(f"{part}={seconds[part]:.3f}" for part in PARTS)
    return f"profile update {update} rank {rank}: {parts} other={max(total - sum(seconds.values()), 0.0):.3f} " \
           f"total={total:.3f}"


def report_profile(run: Any, update: int, total: float) -> None:
    """Print every rank's :func:`profile_line` of the update that just ended (rank 0 prints them all)."""
    if not run.profile.enabled:
        return
    line = profile_line(update, run.world.rank, run.profile.take(), total)
    if run.world.size > 1:
        import torch.distributed as dist

        lines: list[str | None] = [None] * run.world.size
        dist.all_gather_object(lines, line)
    else:
        lines = [line]
    if run.world.main:
        for text in lines:
            print(text, flush=True)
