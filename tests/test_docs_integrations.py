"""Every Python block of the pipeline pages (docs/pipelines/) runs as written; the shell commands' flags parse."""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [f"docs/pipelines/{name}.md" for name in ("pettingzoo", "rllib", "torchrl", "tianshou", "sb3", "openspiel")]
NEEDS = {"ray": "ray", "torchrl": "torchrl", "tianshou": "tianshou", "sb3_contrib": "sb3_contrib", "pyspiel": "pyspiel",
         "open_spiel": "open_spiel", "mauscheln_env.integrations.openspiel": "pyspiel"}


def blocks(language: str, pages: list[str] = PAGES) -> list[tuple[str, int, str]]:
    out = []
    for page in pages:
        text = (ROOT / page).read_text()
        for i, match in enumerate(re.finditer(rf"```{language}\n(.*?)```", text, re.S)):
            out.append((page, i, match.group(1)))
    return out


PYTHON = blocks("python")


def test_the_pages_have_examples():
    pages = {page for page, _, _ in PYTHON}
    assert pages == set(PAGES) and len(PYTHON) >= 7


@pytest.mark.parametrize(("page", "index", "code"), PYTHON, ids=[f"{p}#{i}" for p, i, _ in PYTHON])
def test_python_block_runs_as_written(page, index, code):
    for module, package in NEEDS.items():
        if re.search(rf"^\s*(from|import) {module}\b", code, re.M) and importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} is not installed")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{page} block {index} failed:\n{proc.stderr[-4000:]}"
    assert proc.stdout.strip(), "every example prints what it shows"


def test_shell_commands_use_flags_the_scripts_have():
    from train import rllib_ppo

    commands = []
    for _page, _, code in blocks("bash", [*PAGES, "README.md"]):
        for line in code.splitlines():
            words = shlex.split(line, comments=True)
            while words and "=" in words[0] and not words[0].startswith("-"):
                words.pop(0)  # VAR=value prefixes
            if words[:3] == ["python", "-m", "train.rllib_ppo"]:
                commands.append(words[3:])
    assert len(commands) >= 4
    for argv in commands:
        rllib_ppo.parse_args(argv)
