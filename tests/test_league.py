"""``mauscheln league``: a main agent, a main exploiter and a league exploiter trained round by round."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from agents.learned import read_policy
from train.league import draw_opponents, main, pfsp_weights

TINY = """exp_name: tiny
backend: batched
num_envs: 24
num_steps: 16
total_decisions: 1152
pool_every: 1
pool_size: 2
checkpoint_every: 1
final_eval_deals: 0
threads: 1
baseline_opponents: [random]
"""


@pytest.fixture
def preset(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return str(path)


def _weights(path) -> dict[str, torch.Tensor]:
    net, _, _ = read_policy(path)
    return {k: v.clone() for k, v in net.state_dict().items()}


def test_a_league_grows_by_three_members_a_round_and_continues_exactly(tmp_path, preset, capsys):
    """Two rounds: six members (main, main exploiter, league exploiter per round), the main agent's figures per
    round, its policy written; a league stopped after round 1 and continued ends with the same weights."""
    base = ["--config", preset, "--updates-per-round", "1", "--eval-deals", "8", "--seed", "2"]
    assert main([*base, "--rounds", "2", "--run-dir", str(tmp_path / "full")]) == 0
    state = json.loads((tmp_path / "full" / "league.json").read_text())
    assert state["rounds_done"] == 2 and len(state["members"]) == 6  # noqa: PLR2004
    assert [m["role"] for m in state["members"]] == ["main", "main_exploiter", "league_exploiter"] * 2
    assert all("vs_random" in row for row in state["history"])
    assert all(0.0 <= m["main_win_share"] <= 1.0 for m in state["members"] if m["name"] != "main_002")
    assert main([*base, "--rounds", "1", "--run-dir", str(tmp_path / "part")]) == 0
    assert main([*base, "--rounds", "2", "--run-dir", str(tmp_path / "part")]) == 0
    a, b = _weights(tmp_path / "full" / "policy.safetensors"), _weights(tmp_path / "part" / "policy.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert "round 2/2: main agent against the field and" in capsys.readouterr().out


def test_pfsp_draws_what_the_main_agent_loses_to_most_often():
    weights = pfsp_weights([0.9, 0.5, 0.1])
    assert weights[2] > weights[1] > weights[0] > 0 and weights.sum() == pytest.approx(1.0)
    members = [{"name": n, "path": n, "main_win_share": p} for n, p in (("easy", 0.95), ("hard", 0.05))]
    rng = np.random.default_rng(0)
    firsts = [draw_opponents(members, 1, rng)[0]["name"] for _ in range(200)]
    assert firsts.count("hard") > 150  # noqa: PLR2004
    assert draw_opponents(members, 5, rng) == members  # at most the whole league, in league order
    assert draw_opponents([], 3, rng) == []


@pytest.mark.parametrize(("flags", "says"), [
    (["--rounds", "0"], "rounds=0 is not allowed"),
    (["--opponents", "-1"], "opponents=-1 is not allowed"),
    (["--bogus"], "Unrecognized options: --bogus"),
    (["--init-from", "mousel4"], "a policy plays only the game it was trained for"),
    (["--init-from", "no_such_policy"], "no_such_policy"),
])
def test_bad_league_options_are_refused_in_one_line(tmp_path, preset, capsys, flags, says):
    assert main(["--config", preset, *flags, "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and not (tmp_path / "run").exists()


def test_a_league_refuses_a_reference_preset_and_changed_options(tmp_path, preset, capsys):
    from pathlib import Path

    smoke = Path(__file__).resolve().parents[1] / "configs" / "train" / "smoke.yaml"
    assert main(["--config", str(smoke), "--run-dir", str(tmp_path / "ref")]) == 2
    assert "allowed: a preset with backend: batched" in capsys.readouterr().err
    base = ["--config", preset, "--updates-per-round", "1", "--eval-deals", "8", "--run-dir", str(tmp_path / "l")]
    assert main([*base, "--rounds", "1"]) == 0
    capsys.readouterr()
    assert main([*base, "--rounds", "2", "--opponents", "1"]) == 2
    assert "holds a league started with" in capsys.readouterr().err
