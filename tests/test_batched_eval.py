"""The batched backend of the duplicate evaluation (agents/evaluation/batched.py) against the reference backend."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import agents.evaluation.batched as be
from agents.evaluation.cli import main
from agents.evaluation.duplicate import Settings, evaluate_pair, pair_backend
from agents.learned import sample_by_uniform
from agents.tensor.batched_expert import pick_by_uniform
from mauscheln_env import make_config
from mauscheln_env.batched import BatchedMauscheln
from mauscheln_env.errors import ConfigError, MauschelnError

RULESETS = ["mauscheln", "mauscheln_classic", "mousel", "mouche", "muschka"]


def both(candidate: str, baseline: str, **settings) -> tuple:
    ref = evaluate_pair(candidate, baseline, Settings(backend="reference", **settings))
    bat = evaluate_pair(candidate, baseline, Settings(backend="batched", **settings))
    assert (ref.backend, bat.backend) == ("reference", "batched")
    return ref, bat


@pytest.mark.parametrize("ruleset", RULESETS)
def test_scripted_pairs_give_the_reference_figures_deal_by_deal(ruleset):
    """Same deals, same chance (the deal's session generator), same scripted decisions: every figure is equal."""
    ref, bat = both("expert", "beginner", ruleset=ruleset, players=4, deals=24, seed=5)
    np.testing.assert_array_equal(bat.per_deal, ref.per_deal)
    assert bat.roles == ref.roles
    assert bat.games == ref.games == 24 * 8
    assert (bat.wins, bat.losses, bat.ties) == (ref.wins, ref.losses, ref.ties)


@pytest.mark.parametrize("ruleset,players,options", [
    ("mauscheln", 3, ()), ("mauscheln", 7, ()), ("mousel", 5, ()), ("mouche", 6, ()),
    # the options of the presets in configs/rules/: a Vierling redeals (also before the first decision), Belli
    ("mauscheln", 4, (("belli", "7D"), ("belli_penalty", "pot"), ("knock", True), ("vierling", True))),
    ("mauscheln_classic", 5, (("cap", 40), ("forced_knock_new_pot", True), ("mauschelzwang", True),
                              ("mitgehzwang", True), ("schieben", True))),
    ("mouche", 5, (("pamphile", True), ("pamphile_bonus", True), ("pamphile_wild", True))),
    ("mouche", 4, (("beatrix", True), ("mery_cap", 20))),
])
def test_other_tables_give_the_reference_figures(ruleset, players, options):
    ref, bat = both("expert", "beginner", ruleset=ruleset, players=players, deals=12, seed=2, rule_options=options)
    np.testing.assert_array_equal(bat.per_deal, ref.per_deal)
    assert bat.roles == ref.roles


def test_the_deals_redraw_chance_as_the_reference_does():
    """mauscheln throws in often: the redeals come from each deal's session seed on both backends, so the
    figures are equal only because the engine draws from the same generators (a test that can fail)."""
    ref, bat = both("expert", "beginner", ruleset="mauscheln", players=4, deals=40, seed=9)
    assert bat.roles["candidate"]["declined"] > 0  # throw-ins happened, and were redealt
    np.testing.assert_array_equal(bat.per_deal, ref.per_deal)


def test_a_greedy_policy_plays_as_on_the_reference_backend():
    ref, bat = both("learned:greedy=true", "expert", ruleset="mousel", players=4, deals=12, seed=4)
    np.testing.assert_array_equal(bat.per_deal, ref.per_deal)


def test_figures_do_not_depend_on_the_blocks(monkeypatch):
    """Random agents too: the draws are keyed by deal, seat and decision, the chance by the deal."""
    settings = Settings(ruleset="mouche", players=4, deals=21, seed=3, backend="batched")
    whole = evaluate_pair("random", "beginner", settings)
    monkeypatch.setattr(be, "ROWS_PER_BLOCK", 5 * 8)  # blocks of 5 deals
    assert len(be.blocks(0, 21, 4)) == 5
    cut = evaluate_pair("random", "beginner", settings)
    np.testing.assert_array_equal(cut.per_deal, whole.per_deal)
    assert cut.roles == whole.roles


def test_common_random_numbers_make_a_mirror_match_a_tie():
    """With CRN, whoever sits at a seat draws the same numbers: random against random ties every deal."""
    same = evaluate_pair("random", "random", Settings(deals=16, seed=1, backend="batched"))
    assert same.ties == 16 and np.all(same.per_deal[:, 0] == same.per_deal[:, 1])
    apart = evaluate_pair("random", "random", Settings(deals=16, seed=1, backend="batched", crn=False))
    assert apart.ties < 16


def test_auto_and_refusals():
    single = Settings(deals=2)
    assert pair_backend("expert", "random", Settings(deals=2, backend="auto")) == "batched"
    assert pair_backend("pimc", "expert", Settings(deals=2, backend="auto")) == "reference"
    assert pair_backend("expert", "random", Settings(deals=2, backend="auto", session_deals=3)) == "reference"
    assert pair_backend("expert", "random", Settings(deals=2, backend="auto"), record=True) == "reference"
    assert pair_backend("expert", "random", single) == "reference"
    with pytest.raises(ConfigError, match="'pimc' has no tensor form"):
        pair_backend("pimc", "expert", Settings(deals=2, backend="batched"))
    with pytest.raises(ConfigError, match="single deals only"):
        pair_backend("expert", "random", Settings(deals=2, backend="batched", session_deals=2))
    with pytest.raises(ConfigError, match="backend='gpu' is not allowed"):
        Settings(backend="gpu").validate()


def test_cli_refuses_a_pairing_the_batched_backend_cannot_play(capsys):
    assert main(["--pair", "pimc", "expert", "--deals", "1", "--backend", "batched", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no tensor form" in err


def test_sampling_by_a_given_uniform_follows_the_distribution():
    logits = torch.tensor([[0.0, -torch.inf, 1.0, 2.0, -torch.inf]])
    probs = torch.softmax(logits, dim=1)[0]
    M = 10_000
    u = (torch.arange(M, dtype=torch.float64) + 0.5) / M  # the quantiles: frequencies within 1 / M of the probs
    picks = sample_by_uniform(logits.expand(M, -1), u)
    freq = torch.bincount(picks, minlength=5).to(torch.float64) / M
    assert freq[1] == 0 and freq[4] == 0
    assert torch.allclose(freq, probs.to(torch.float64), atol=2 / M)
    mask = torch.tensor([[False, True, False, True, True]]).expand(3, -1)
    assert pick_by_uniform(mask, torch.tensor([0.0, 0.5, 0.999])).tolist() == [1, 3, 4]


def test_uniforms_are_keyed_and_in_range():
    base = torch.tensor([1, 2, 3, -5], dtype=torch.int64)
    u = be.uniforms(base, torch.zeros(4, dtype=torch.int64), torch.arange(4))
    assert torch.equal(u, be.uniforms(base, torch.zeros(4, dtype=torch.int64), torch.arange(4)))
    assert bool(((u >= 0) & (u < 1)).all()) and len(set(u.tolist())) == 4
    many = be.uniforms(torch.arange(20_000, dtype=torch.int64), torch.zeros(20_000, dtype=torch.int64))
    assert abs(float(many.mean()) - 0.5) < 0.01


def test_use_chance_is_validated():
    env = BatchedMauscheln(make_config("mauscheln", 4), 2, seed=0)
    with pytest.raises(MauschelnError, match="one source per session"):
        env.use_chance([np.random.default_rng(0)])
    with pytest.raises(MauschelnError, match="permutation"):
        env.use_chance([object(), object()])
    env.use_chance(None)


@pytest.mark.parametrize("backend", ["reference", "batched"])
def test_a_checkpoint_rewritten_at_the_same_path_is_read_again(tmp_path, backend):
    """Both evaluation paths cache agents per process; a policy file rewritten in place (a trainer's next
    evaluation, a user's new run) must not be served from the cache."""
    import os
    import shutil

    from agents.evaluation.batched import _agent
    from agents.evaluation.duplicate import _agents_for
    from agents.learned import read_policy, resolve_checkpoint, save_policy
    from mauscheln_env import Game

    game = Game(make_config("mauscheln", 4))
    path = tmp_path / "policy.safetensors"
    shutil.copy(resolve_checkpoint("mauscheln4"), path)
    spec = f"learned:checkpoint={path}"

    def build():
        return _agents_for(spec, game, 2, "candidate")[0] if backend == "reference" else _agent(spec, game, "k")

    first = build()
    assert build() is first  # cached while the file stands
    net, _, _ = read_policy(path)
    with torch.no_grad():
        for p in net.actor.parameters():
            p.add_(0.5)
    save_policy(path, net, game)
    os.utime(path, ns=(1, 1))  # a rewrite within the file system's clock resolution still changes the stamp
    again = build()
    assert again is not first
    assert torch.equal(again.net.actor[0].weight, net.actor[0].weight)
