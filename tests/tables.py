"""The tables a user can set up, and one without a shipped policy for the tests of what ``learned`` says there.

The table is computed, not named: shipping a policy for it moves those tests to the next table without one.
"""

from __future__ import annotations

from agents.learned.checkpoint import available_policies
from mauscheln_env.rulesets import RULESETS


def every_table() -> list[tuple[str, int]]:
    """Every (ruleset, player count) a user can set up: each ruleset's ``min_players..max_players``."""
    return [(name, n) for name, spec in RULESETS.items() for n in range(spec.min_players, spec.max_players + 1)]


def unshipped_table() -> tuple[str, int]:
    """The last table (ruleset order, then the most players) that has no shipped policy."""
    shipped = set(available_policies())
    missing = [(r, n) for r, n in every_table() if f"{r}{n}" not in shipped]
    if not missing:
        raise LookupError("every table has a shipped policy; these tests need another way to reach the refusal")
    return missing[-1]


UNSHIPPED_RULESET, UNSHIPPED_PLAYERS = unshipped_table()
UNSHIPPED_REFUSAL = f"no policy is shipped for {UNSHIPPED_RULESET} with {UNSHIPPED_PLAYERS} players"
