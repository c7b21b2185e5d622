"""pimc still decides as recorded: every recorded case replays to the same digest, deal by deal.

See :mod:`tests.pimc_traces` for what is recorded and how. A failure names the case and the first deal whose
games differ (replay it with ``tests.pimc_traces.play`` to find the decision).
"""

from __future__ import annotations

import json

import pytest

from tests import pimc_traces

RECORDED = json.loads(pimc_traces.TRACE_FILE.read_text(encoding="utf-8"))
CASES = pimc_traces.cases()


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(CASES)


def _check(name: str) -> None:
    want = RECORDED[name]
    case = CASES[name]
    assert {k: want[k] for k in case} == case, f"{name}: the case changed since it was recorded"
    got = pimc_traces.play(case)
    for d, (g, w) in enumerate(zip(got["digests"], want["digests"])):
        assert g == w, f"{name}: deal {d} plays differently"
    assert got == {"digests": want["digests"], "actions": want["actions"]}


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c["family"] == "fast"))
def test_pimc_decides_as_recorded(name):
    _check(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c["family"] == "slow"))
def test_pimc_decides_as_recorded_on_more_deals(name):
    _check(name)
