"""The engine still plays the recorded games: every golden trajectory replays to the same digests.

See :mod:`tests.golden` for what is recorded and how. A failure names the
configuration, the family and the first session whose trajectory differs
(replay it with ``tests.golden.play_session`` to find the step).
"""

from __future__ import annotations

import json

import pytest

from tests import golden

RECORDED = json.loads(golden.GOLDEN_FILE.read_text(encoding="utf-8"))


def test_every_configuration_is_recorded():
    assert sorted(RECORDED) == sorted(name for name, _ in golden.configurations())


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_golden_trajectories_replay(name):
    want = RECORDED[name]
    got = golden.record(name, want["kwargs"], plain=len(want["plain"]["sessions"]),
                        long=len(want["long"]["sessions"]))
    assert got["layout"] == want["layout"], f"{name}: observation layout changed"
    assert got["state_layout"] == want["state_layout"], f"{name}: state layout changed"
    assert got["num_actions"] == want["num_actions"]
    for family in ("plain", "long"):
        for k, (g, w) in enumerate(zip(got[family]["sessions"], want[family]["sessions"])):
            assert g[0] == w[0], f"{name} {family}: session {k} (seed {k}) plays differently"
            assert g[1] == w[1], f"{name} {family}: session {k} (seed {k}) has a different state() or infos"
        assert got[family]["decisions"] == want[family]["decisions"]
