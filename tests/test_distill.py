"""``mauscheln distill``: a search agent's choices recorded over self-play deals and fitted into a policy."""

from __future__ import annotations

import json

import pytest
import torch

from agents.learned import read_policy
from train.distill import DistillArgs, fit, main, record, table_of

FAST_TEACHER = "pimc:model=mauscheln4,samples=2,min_samples=2"


def _weights(path) -> dict[str, torch.Tensor]:
    net, _, _ = read_policy(path)
    return {k: v.clone() for k, v in net.state_dict().items()}


def test_distill_writes_a_policy_of_the_same_table_with_only_its_actor_changed(tmp_path, capsys):
    """End to end: a policy for the same table (it loads, plays and refuses other tables like the start), the
    critic copied, the actor moved, the summary beside it; the same seed gives the same weights."""
    args = ["mauscheln4", "--teacher", FAST_TEACHER, "--deals", "10", "--epochs", "2", "--seed", "3"]
    assert main([*args, "--out", str(tmp_path / "a.safetensors")]) == 0
    out = capsys.readouterr().out
    assert "held-out cross-entropy" in out and "written:" in out
    assert main([*args, "--out", str(tmp_path / "b.safetensors")]) == 0
    a, b, start = (_weights(tmp_path / "a.safetensors"), _weights(tmp_path / "b.safetensors"),
                   _weights("mauscheln4"))
    assert all(torch.equal(a[k], b[k]) for k in a)  # same seed, same run
    assert all(torch.equal(a[k], start[k]) for k in a if k.startswith("critic."))
    assert any(not torch.equal(a[k], start[k]) for k in a if k.startswith("actor."))
    _, layout, extra = read_policy(tmp_path / "a.safetensors")
    _, start_layout, _ = read_policy("mauscheln4")
    assert layout["observation"] == start_layout["observation"] and layout["actions"] == start_layout["actions"]
    assert extra["distill"]["teacher"] == FAST_TEACHER and extra["distill"]["decisions"] > 50  # noqa: PLR2004
    summary = json.loads((tmp_path / "a.json").read_text())
    assert summary["distilled_from"] == "mauscheln4" and summary["held_out_decisions"] > 0


def test_fitting_raises_the_held_out_agreement_with_the_teacher():
    """Fitted to the expert's choices (no KL term), the policy agrees with the expert more often on deals it did
    not see than it did before."""
    net, layout, _ = read_policy("mauscheln4")
    game = table_of(layout)
    data = record(game, "expert", 40, seed=1)
    _, figures = fit(net, data, DistillArgs(policy="mauscheln4", deals=40, epochs=6, kl_coef=0.0,
                                            learning_rate=1e-3, seed=1))
    assert figures["held_out_agreement_after"] > figures["held_out_agreement_before"], figures
    assert figures["held_out_cross_entropy_after"] < figures["held_out_cross_entropy_before"], figures


@pytest.mark.parametrize(("flags", "says"), [
    (["mauscheln4", "--deals", "0"], "deals=0 is not allowed"),
    (["mauscheln4", "--teacher", "nosuch"], "unknown agent 'nosuch'"),
    (["no_such_policy"], "no_such_policy"),
    (["mauscheln4", "--teacher", "pimc:model=mousel4"], "trained for"),
    (["mauscheln4", "--out", "x.txt"], "allowed: a path ending in .safetensors"),
    (["mauscheln4", "--lr", "0"], "learning_rate=0"),
    (["mauscheln4", "--deals", "many"], "--deals"),
])
def test_bad_distill_options_are_refused_with_one_line(capsys, flags, says):
    assert main(flags) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1, err


def test_recorded_play_is_kept_and_reused_only_for_the_same_play(tmp_path, capsys):
    """--data: the first run writes the recorded decisions, a second fit reads them instead of searching again and
    gets the same weights; the file is refused for another seed (another play)."""
    base = ["mauscheln4", "--teacher", FAST_TEACHER, "--deals", "10", "--epochs", "1", "--data",
            str(tmp_path / "play.npz")]
    assert main([*base, "--out", str(tmp_path / "a.safetensors")]) == 0
    assert main([*base, "--out", str(tmp_path / "b.safetensors")]) == 0
    assert "recorded decisions read from" in capsys.readouterr().out
    a, b = _weights(tmp_path / "a.safetensors"), _weights(tmp_path / "b.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert main([*base, "--seed", "5", "--out", str(tmp_path / "c.safetensors")]) == 2
    err = capsys.readouterr().err
    assert "holds the play of another" in err and err.count("\n") == 1
    (tmp_path / "bad.npz").write_bytes(b"not an npz")
    assert main([*base[:-1], str(tmp_path / "bad.npz"), "--out", str(tmp_path / "d.safetensors")]) == 2
    assert "is not a decisions file" in capsys.readouterr().err
