"""The README: short, with the two quick-start commands, an environment example that runs as written, and links
that lead somewhere."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PLANNED = "docs/"
"""Links into docs/ name the pages of the documentation site, some of which another change adds; only the
results pages and the lab notebook are checked here."""


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
    for target in re.findall(r"\]\(([^)\s]+)\)", README):
        if "://" in target:
            continue
        path = target.split("#", 1)[0]
        if path.startswith(PLANNED) and not path.startswith(("docs/results/", "docs/development/lab-notebook.md",
                                                              "docs/rulesets/")):
            continue
        assert (ROOT / path).exists(), target
