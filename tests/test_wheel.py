"""A wheel built from the repository works outside the checkout: the environment, the shipped policies, the
deal sets and the benchmark records are package data (slow: builds a wheel and a fresh virtual environment)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def _local_torch() -> list[str]:
    """The CPU build of torch lying in pip's find-links folder, as scripts/setup.sh installs it (else PyPI's)."""
    for folder in [*os.environ.get("PIP_FIND_LINKS", "").split(), "/opt/wheels"]:
        wheels = sorted(glob.glob(os.path.join(folder, "torch-*+cpu-cp3*.whl")))
        if wheels:
            return [wheels[-1]]
    return []


def test_a_built_wheel_plays_outside_the_checkout(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(dist)],
                   check=True, timeout=600)
    (wheel,) = dist.glob("mauscheln-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = str(env_dir / "bin" / "python")
    pip = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if _local_torch():
        subprocess.run([*pip, *_local_torch()], check=True, timeout=900)
    subprocess.run([*pip, f"{wheel}[train]"], check=True, timeout=1800)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    clean["HOME"] = str(tmp_path / "home")  # no user database or settings from this machine
    mauscheln = str(env_dir / "bin" / "mauscheln")

    def run(*args: str) -> str:
        proc = subprocess.run([mauscheln, *args], cwd=outside, env=clean, capture_output=True, text=True, timeout=1800)
        assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-2000:])
        return proc.stdout

    where = subprocess.run([py, "-c", "import agents, mauscheln_env; print(agents.__file__, mauscheln_env.__file__)"],
                           cwd=outside, env=clean, capture_output=True, text=True, check=True).stdout
    assert str(ROOT) not in where and str(env_dir) in where  # the installed copy, not the checkout
    out = run("eval", "--agents", "learned", "expert", "--deals", "20", "--no-progress")
    assert "learned" in out and "expert" in out
    board = run("bench", "leaderboard")
    from mauscheln_env.config import RULESETS

    assert "no results" not in board.lower()
    for ruleset in RULESETS:  # every ruleset's default table is on the shipped leaderboard
        assert f"**{ruleset}, 4 players**" in board
    code = "import pettingzoo, mauscheln_env; print(pettingzoo.make('aec', 'mauscheln/mouche_pamphile-v1').unwrapped.game.n)"
    assert subprocess.run([py, "-c", code], cwd=outside, env=clean, capture_output=True, text=True,
                          check=True).stdout.split() == ["5"]
