"""The README: short, with the two quick-start commands, an environment example that runs as written, and links
that lead somewhere."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_short_and_starts_with_the_two_commands():
    assert len(README.splitlines()) <= 150
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "bash scripts/main.sh" in quick and "bash scripts/test.sh" in quick


def test_the_python_example_runs_as_written():
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert blocks
    for code in blocks:
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]


def test_the_links_lead_somewhere():
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", README) if "://" not in t]
    assert targets
    for target in targets:
        assert (ROOT / target.split("#", 1)[0]).exists(), target
