"""The tables a user can set up, and one whose shipped policy the tests withhold, for what ``learned`` says at a
table without a policy (a policy file removed, a table added before its policy is trained).

Every table has a shipped policy, so the tests reach that refusal by pointing the shipped-policy folder at a copy
without one table's file (the ``policy_withheld`` fixture of ``conftest.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mauscheln_env.rulesets import RULESETS


def every_table() -> list[tuple[str, int]]:
    """Every (ruleset, player count) a user can set up: each ruleset's ``min_players..max_players``."""
    return [(name, n) for name, spec in RULESETS.items() for n in range(spec.min_players, spec.max_players + 1)]


UNSHIPPED_RULESET, UNSHIPPED_PLAYERS = every_table()[-1]
"""The table whose policy ``policy_withheld`` takes away: the last one (ruleset order, then the most players)."""
UNSHIPPED_REFUSAL = f"no policy is shipped for {UNSHIPPED_RULESET} with {UNSHIPPED_PLAYERS} players"


def withhold_policy(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """Point the shipped-policy folder at ``root``, holding links to every shipped policy but the withheld table's
    (in this process; the refusal comes before any worker starts)."""
    from agents.learned import checkpoint

    root.mkdir(parents=True, exist_ok=True)
    for path in checkpoint.POLICY_DIR.glob("*.safetensors"):
        if path.stem != f"{UNSHIPPED_RULESET}{UNSHIPPED_PLAYERS}":
            (root / path.name).symlink_to(path)
    monkeypatch.setattr(checkpoint, "POLICY_DIR", root)
