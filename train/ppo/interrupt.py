"""Ctrl-C during training: the first finishes the update and writes a checkpoint, a second stops at once.

Either way the run can be resumed with ``--resume RUN_DIR``, and the message says so. Once the training is
saved (the final evaluation), the handler is removed and Ctrl-C stops at once.
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import Any

from train.cli import TrainingInterrupted
from train.ppo import PROG


def resume_hint(run_dir: Path) -> str:
    return f"resume with: {PROG} --resume {run_dir}"


class StopOnInterrupt:
    """While active, Ctrl-C asks the run to stop after the current update (which then writes a checkpoint);
    a second Ctrl-C stops at once. Only in the main thread (signals go there)."""

    def __init__(self) -> None:
        self.requested = False
        self.run_dir: Path | None = None
        self._old: Any = None

    def __enter__(self) -> StopOnInterrupt:
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc: object) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
            self._old = None

    @staticmethod
    def stopped(run_dir: Path, update: int, num_updates: int) -> None:
        """Say that the run stopped after ``update`` with a checkpoint, and how to resume it."""
        print(f"{PROG}: interrupted after update {update}/{num_updates}, checkpoint written; "
              f"{resume_hint(run_dir)}", file=sys.stderr, flush=True)

    def interrupted(self) -> TrainingInterrupted:
        """The error of a second Ctrl-C: where the last checkpoint is, or that there is none."""
        from train.ppo.checkpoint import latest_checkpoint_name

        latest = None if self.run_dir is None else latest_checkpoint_name(self.run_dir)
        if latest is None:
            return TrainingInterrupted("interrupted before the first checkpoint; nothing to resume")
        return TrainingInterrupted(f"interrupted; the last checkpoint is {latest}, {resume_hint(self.run_dir)}")
