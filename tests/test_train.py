"""Training: smoke runs in a subprocess, exact resume, checkpoint refusal, masking, the SB3 wrapper."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.learned import CheckpointError, LearnedAgent, NetSpec, PolicyNet, masked_distribution, sample_actions
from mauscheln_env import Game, make_config
from mauscheln_env.config import RULESETS
from train.ppo_selfplay import main as train_main

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "configs" / "train" / "smoke.yaml"


def run_train(*flags: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "train.ppo_selfplay", "--config", str(SMOKE), *flags],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
    )


def test_ppo_selfplay_smoke_run(tmp_path):
    proc = run_train("--run-dir", str(tmp_path / "run"), "--total-decisions", "768", "--seed", "3")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "update 3/3" in proc.stdout and "decisions/s end to end" in proc.stdout
    run = tmp_path / "run"
    assert (run / "policy.safetensors").is_file()
    assert (run / "checkpoints" / "latest").read_text() == "update_000003"
    assert any(p.name.startswith("events.out.tfevents") for p in run.iterdir())
    # The saved policy plays through the agent interface.
    agent = LearnedAgent(checkpoint=str(run / "policy.safetensors"))
    game = Game(make_config("mauscheln", 4, max_deals=3))
    agent.setup(game, 0)


def test_batched_run_against_the_tensor_baselines(tmp_path):
    """The batched backend (compiled) plays `expert` and `random` opponents as tensor code."""
    proc = run_train("--run-dir", str(tmp_path / "run"), "--backend", "batched", "--compile-env",
                     "--num-envs", "32",
                     "--total-decisions", "2048", "--self-play-prob", "0", "--baseline-opponents", "expert", "random",
                     "--pool-size", "0", "--checkpoint-every", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "update 2/2" in proc.stdout
    assert train_main(["--config", str(SMOKE), "--run-dir", str(tmp_path / "bad"), "--backend", "batched",
                       "--baseline-opponents", "pimc"]) == 2
    assert not (tmp_path / "bad").exists()


RULESET_PRESETS = {"mauscheln": "mauscheln.yaml", "mauscheln_classic": "mauscheln_classic.yaml",
                   "mousel": "mousel.yaml", "mouche": "mouche.yaml", "muschka": "muschka.yaml"}


@pytest.mark.parametrize("ruleset", sorted(RULESET_PRESETS))
def test_each_rulesets_preset_in_a_smoke_run(tmp_path, ruleset):
    """The preset behind each ruleset's shipped policy, shrunk: the batched backend, the tensor `expert` in the
    field, snapshots, a periodic and a final evaluation, and a policy that loads at that ruleset's table."""
    preset = ROOT / "configs" / "train" / RULESET_PRESETS[ruleset]
    from train.ppo_selfplay import load_config

    imitates = bool(load_config(preset).imitate_decisions)
    proc = subprocess.run(
        [sys.executable, "-m", "train.ppo_selfplay", "--config", str(preset),
         "--run-dir", str(tmp_path / "run"), "--num-envs", "16", "--num-steps", "16",
         "--num-minibatches", "2", "--total-decisions", "768", "--pool-every", "1", "--eval-every", "2", "--eval-deals", "2",
         "--final-eval-deals", "2", "--final-eval-agents", "random",
         *(["--imitate-decisions", "256"] if imitates else [])],  # the preset's imitation, shrunk to one update
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "update 3/3" in proc.stdout and "decisions/s end to end (batched backend" in proc.stdout
    assert proc.stdout.count("imitation of expert") == (1 if imitates else 0)
    assert "final evaluation: 2 duplicate deals" in proc.stdout
    agent = LearnedAgent(checkpoint=str(tmp_path / "run"))
    agent.setup(Game(make_config(ruleset, 4)), 0)


@pytest.mark.parametrize("ruleset", ["mauscheln_classic", "mousel", "mouche", "muschka"])
def test_tensor_baselines_of_every_ruleset(ruleset):
    """beginner and expert of every ruleset are tensor opponents (act on obs and mask), so any backend takes them."""
    from agents.tensor.common import TensorAgent
    from train.ppo.opponents import baseline_players
    from train.ppo_selfplay import make_args

    args = make_args({"ruleset": ruleset, "backend": "batched", "baseline_opponents": ["beginner", "expert:risk=0.5"]})
    game = Game(make_config(ruleset, 4))
    players = baseline_players(args, game, torch.device("cpu"))
    assert [type(p).__name__ for p in players] and all(isinstance(p, TensorAgent) for p in players)
    assert [p.name for p in players] == ["beginner", "expert"]
    assert players[1].brain.risk == 0.5


def test_reference_run_against_the_tensor_baselines_of_mousel(tmp_path):
    proc = run_train("--run-dir", str(tmp_path / "run"), "--ruleset", "mousel", "--total-decisions", "512",
                     "--self-play-prob", "0", "--baseline-opponents", "beginner", "expert", "--pool-size", "0")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "update 2/2" in proc.stdout


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "train").glob("*.yaml")), ids=lambda p: p.name)
def test_training_presets_load_for_every_ruleset(path):
    """Every preset in configs/train/ is a valid configuration; fast.yaml for each ruleset's default table."""
    import dataclasses

    from mauscheln_env.config import RULESETS
    from train.ppo_selfplay import check_args, load_config

    args = load_config(path)
    if path.name == "fast.yaml":
        for ruleset in RULESETS:
            check_args(dataclasses.replace(args, ruleset=ruleset))


PRESETS_BEFORE_BASES = ROOT / "tests" / "data" / "train_presets.json"
"""Each preset's YAML mapping as it stood before the presets started from each other (``base:``)."""


@pytest.mark.parametrize("name", sorted(json.loads(PRESETS_BEFORE_BASES.read_text(encoding="utf-8"))))
def test_each_preset_resolves_to_the_options_it_gave_before_it_had_a_base(name):
    """A preset and its chain of bases give exactly the options its own full mapping gave (defaults included)."""
    import dataclasses

    from train.ppo_selfplay import load_config, make_args

    before = json.loads(PRESETS_BEFORE_BASES.read_text(encoding="utf-8"))[name]
    assert dataclasses.asdict(load_config(ROOT / "configs" / "train" / name)) == dataclasses.asdict(make_args(before))


def test_a_config_starts_from_its_base_and_overrides_it(tmp_path):
    """``base:`` is read relative to the file naming it, chains, and every file overrides the ones below it;
    a run writes the resolved options, so its config.yaml names no base."""
    import yaml

    from train.ppo_selfplay import load_config

    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "root.yaml").write_text(f"base: {SMOKE}\nnum_envs: 4\nnum_steps: 8\nseed: 3\n")
    (tmp_path / "common" / "mid.yaml").write_text("base: root.yaml\nnum_steps: 16\nhidden: [8]\n")
    (tmp_path / "top.yaml").write_text("base: common/mid.yaml\nseed: 5\n")
    args = load_config(tmp_path / "top.yaml")
    assert (args.backend, args.num_envs, args.num_steps, args.seed, args.hidden) == ("reference", 4, 16, 5, [8])
    assert train_main(["--config", str(tmp_path / "top.yaml"), "--run-dir", str(tmp_path / "run"),
                       "--max-updates", "1"]) == 0
    saved = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text(encoding="utf-8"))
    assert "base" not in saved and (saved["num_steps"], saved["seed"], saved["backend"]) == (16, 5, "reference")


@pytest.mark.parametrize(("files", "says"), [
    ({"a.yaml": "base: a.yaml\n"}, ["base 'a.yaml' makes a cycle (a.yaml -> a.yaml)"]),
    ({"a.yaml": "base: b.yaml\n", "b.yaml": "base: a.yaml\nseed: 2\n"},
     ["b.yaml': base 'a.yaml' makes a cycle (a.yaml -> b.yaml -> a.yaml)", "allowed: a chain of bases"]),
    ({"a.yaml": "base: nowhere.yaml\n", "other.yaml": "seed: 2\n"},
     ["base 'nowhere.yaml' does not exist", "allowed: a training config relative to this file, e.g. other.yaml"]),
    ({"a.yaml": "base: [b.yaml]\n"}, ["base=['b.yaml'] is not allowed", "allowed: the file name of another"]),
    ({"a.yaml": "base: b.yaml\n", "b.yaml": "seed: [\n"}, ["b.yaml' is not valid YAML"]),
    ({"a.yaml": "base: b.yaml\n", "b.yaml": "sed: 2\n"}, ["b.yaml': unknown training option(s) sed"]),
])
def test_bad_bases_are_refused_with_what_is_allowed(tmp_path, capsys, files, says):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert train_main(["--config", str(tmp_path / "a.yaml"), "--run-dir", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert all(s in err for s in says) and err.count("\n") == 1, err
    assert not (tmp_path / "run").exists()


def test_opponent_assignment_covers_both_formats():
    from train.ppo.opponents import assign
    from train.ppo_selfplay import make_args

    args = make_args({"self_play_prob": 0.2, "baseline_prob": 0.5})
    ctrl = assign(np.random.default_rng(0), 4000, 4, args, pool=3, baselines=1, pool_scores=[0.0, -1.0, 1.0])
    learners = (ctrl == 0).sum(1)
    assert set(learners.tolist()) == {1, 2, 3, 4}  # self-play, and one to three learner seats
    mixed = ctrl[learners < 4]
    opponents = mixed.max(1).values
    assert ((mixed == 0) | (mixed == opponents[:, None])).all()  # one opponent per table
    share = (opponents == 4).float().mean().item()  # the baseline (controller 1 + pool)
    assert 0.45 < share < 0.55
    # The snapshot the learner beats least (score -1.0, controller 2) is drawn most often.
    counts = torch.bincount(opponents[opponents <= 3], minlength=4)
    assert counts[2] > counts[1] and counts[2] > counts[3]


def _weights(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(path))


def test_killed_run_resumes_with_the_same_next_update(tmp_path):
    """An interrupted run resumed from its checkpoint makes exactly the update an uninterrupted run makes."""
    full = tmp_path / "full"
    proc = run_train("--run-dir", str(full), "--total-decisions", "768", "--seed", "5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    part = tmp_path / "part"
    proc = run_train("--run-dir", str(part), "--total-decisions", "768", "--seed", "5", "--max-updates", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (part / "checkpoints" / "latest").read_text() == "update_000002"
    proc = subprocess.run([sys.executable, "-m", "train.ppo_selfplay", "--resume", str(part)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "resumed" in proc.stdout
    a = _weights(full / "checkpoints" / "update_000003" / "policy.safetensors")
    b = _weights(part / "checkpoints" / "update_000003" / "policy.safetensors")
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0)
    # ...and a different seed gives a different run (the comparison can fail).
    other = tmp_path / "other"
    proc = run_train("--run-dir", str(other), "--total-decisions", "768", "--seed", "6")
    assert proc.returncode == 0
    c = _weights(other / "checkpoints" / "update_000003" / "policy.safetensors")
    assert any(not torch.equal(a[k], c[k]) for k in a)


BATCHED_RUN = ["--config", str(SMOKE), "--backend", "batched", "--num-envs", "24", "--num-steps", "16",
               "--total-decisions", "1152", "--pool-every", "1", "--pool-size", "2", "--baseline-opponents", "random"]


def test_frozen_learned_opponents_on_the_batched_backend(tmp_path, monkeypatch):
    """A shipped policy as a batched opponent (`learned:checkpoint=...`): the run trains, the opponent acts on
    its rows and its weights never change nor receive gradients; a run resumed after a stop repeats the update."""
    import train.ppo.setup as setup
    from agents.learned import BatchedLearned, read_policy

    made: list[list] = []
    build = setup.baseline_players
    monkeypatch.setattr(setup, "baseline_players", lambda *a: made.append(build(*a)) or made[-1])
    acted = []
    act = BatchedLearned.act
    monkeypatch.setattr(BatchedLearned, "act", lambda self, o, m: acted.append(len(o)) or act(self, o, m))
    flags = [*BATCHED_RUN[:-1], "learned:checkpoint=mauscheln4", "--self-play-prob", "0", "--baseline-prob", "1"]
    assert train_main([*flags, "--run-dir", str(tmp_path / "full"), "--seed", "5"]) == 0
    (opponent,) = made[0]
    assert isinstance(opponent, BatchedLearned) and sum(acted) > 0
    shipped, _, _ = read_policy("mauscheln4")
    for (name, w), (_, w0) in zip(opponent.net.named_parameters(), shipped.named_parameters(), strict=True):
        assert not w.requires_grad and w.grad is None, name
        torch.testing.assert_close(w, w0, rtol=0, atol=0)
    assert train_main([*flags, "--run-dir", str(tmp_path / "part"), "--seed", "5", "--max-updates", "2"]) == 0
    assert train_main(["--resume", str(tmp_path / "part")]) == 0
    a = _weights(tmp_path / "full" / "checkpoints" / "update_000003" / "policy.safetensors")
    b = _weights(tmp_path / "part" / "checkpoints" / "update_000003" / "policy.safetensors")
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0)


def test_a_warm_start_plays_the_policy_it_starts_from(tmp_path, capsys):
    """--init-from: the learner starts with exactly the policy's logits (so its actions at step 0 are the
    policy's), then learns from there; a policy of another table or network shape is refused before anything
    is written."""
    from agents.learned import CheckpointError, NetSpec, PolicyNet, read_policy, trump_first_tables
    from mauscheln_env.vecenv import make_vector_env
    from train.ppo.setup import init_from

    game = Game(make_config("mauscheln", 4))
    envs = make_vector_env(game.config, 64, backend="batched", seed=0)
    obs, mask, _ = envs.reset(seed=2)
    start, _, _ = read_policy("mauscheln4")
    net = PolicyNet(NetSpec(envs.obs_size, envs.num_actions, (128, 128), None, True), trump_first_tables(game))
    assert not torch.equal(net.masked_logits(obs, mask), start.masked_logits(obs, mask))
    init_from(net, "mauscheln4", game)
    torch.testing.assert_close(net.masked_logits(obs, mask), start.masked_logits(obs, mask), rtol=0, atol=0)
    with pytest.raises(CheckpointError, match=r"--hidden: policy \[128, 128\], run \[64\]"):
        init_from(PolicyNet(NetSpec(envs.obs_size, envs.num_actions, (64,), None, True), trump_first_tables(game)),
                   "mauscheln4", game)

    flags = [*BATCHED_RUN, "--hidden", "128", "128", "--trump-first", "--init-from", "mauscheln4"]
    assert train_main([*flags, "--run-dir", str(tmp_path / "warm"), "--max-updates", "1"]) == 0
    assert "learner initialised from mauscheln4" in capsys.readouterr().out
    moved, _, _ = read_policy(tmp_path / "warm" / "checkpoints" / "update_000001" / "policy.safetensors")
    fresh = PolicyNet(NetSpec(envs.obs_size, envs.num_actions, (128, 128), None, True), trump_first_tables(game))

    def agree(a: PolicyNet, b: PolicyNet) -> float:  # share of rows where both nets' most likely actions agree
        return float((a.masked_logits(obs, mask).argmax(1) == b.masked_logits(obs, mask).argmax(1)).float().mean())

    assert not torch.equal(moved.masked_logits(obs, mask), start.masked_logits(obs, mask))  # it learned ...
    assert agree(moved, start) > max(0.8, agree(fresh, start)), (agree(moved, start), agree(fresh, start))  # ... from it
    assert train_main([*flags[:-6], "--run-dir", str(tmp_path / "shape"), "--init-from", "mauscheln4"]) == 2
    assert train_main([*flags, "--run-dir", str(tmp_path / "table"), "--ruleset", "mousel"]) == 2
    assert "trained for mauscheln, 4 players" in capsys.readouterr().err
    assert not (tmp_path / "shape").exists() and not (tmp_path / "table").exists()


@pytest.mark.parametrize("central", [False, True], ids=["observation critic", "central critic"])
def test_batched_run_resumes_exactly(tmp_path, central):
    """On the batched backend too (snapshots and a baseline as opponents, rollouts that finish their deals,
    sessions of three deals bootstrapped at the cut), a run stopped after two updates and resumed makes exactly
    the third update of the uninterrupted run."""
    flags = [*BATCHED_RUN, *(["--central-critic"] if central else [])]
    assert train_main([*flags, "--run-dir", str(tmp_path / "full"), "--seed", "5"]) == 0
    assert train_main([*flags, "--run-dir", str(tmp_path / "part"), "--seed", "5", "--max-updates", "2"]) == 0
    assert train_main(["--resume", str(tmp_path / "part")]) == 0
    a = _weights(tmp_path / "full" / "checkpoints" / "update_000003" / "policy.safetensors")
    b = _weights(tmp_path / "part" / "checkpoints" / "update_000003" / "policy.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("central", [False, True], ids=["observation critic", "central critic"])
def test_imitation_teaches_the_teachers_choices_and_resumes_exactly(tmp_path, capsys, central):
    """--imitate-decisions: the first updates clone the teacher (here 2 of 3), and the network then picks the
    teacher's action far more often than a fresh one does; a run stopped in the middle of the imitation and
    resumed makes exactly the updates of the uninterrupted run, the self-play update after it included."""
    from agents.learned import read_policy
    from agents.tensor import batched_opponent
    from mauscheln_env.vecenv import make_vector_env

    flags = [*BATCHED_RUN, "--imitate-decisions", "768", "--imitate-teacher", "expert", "--seed", "5",
             *(["--central-critic"] if central else [])]
    assert train_main([*flags, "--run-dir", str(tmp_path / "full")]) == 0
    out = capsys.readouterr().out
    assert out.count("imitation of expert") == 2 and "update 3/3" in out and "pg " in out.split("update 3/3")[1]
    assert train_main([*flags, "--run-dir", str(tmp_path / "part"), "--max-updates", "1"]) == 0
    assert train_main(["--resume", str(tmp_path / "part")]) == 0
    for update in ("update_000002", "update_000003"):
        a = _weights(tmp_path / "full" / "checkpoints" / update / "policy.safetensors")
        b = _weights(tmp_path / "part" / "checkpoints" / update / "policy.safetensors")
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), update

    game = Game(make_config("mauscheln", 4, max_deals=3))
    envs = make_vector_env(game.config, 256, backend="batched", seed=0)
    teacher = batched_opponent("expert", game)
    obs, mask, _ = envs.reset(seed=11)
    rows_obs, rows_mask = [], []
    for _ in range(12):  # fresh positions of every phase, played by the teacher
        choice = mask.sum(1) > 1
        rows_obs.append(obs[choice].clone())
        rows_mask.append(mask[choice].clone())
        obs, mask, *_ = envs.step(teacher.act(obs, mask))
    obs, mask = torch.cat(rows_obs), torch.cat(rows_mask)
    want = teacher.act(obs, mask)
    cloned, _, _ = read_policy(tmp_path / "full" / "checkpoints" / "update_000002" / "policy.safetensors")
    first, _, _ = read_policy(tmp_path / "full" / "checkpoints" / "update_000001" / "policy.safetensors")
    with torch.no_grad():
        agree = [float((net.masked_logits(obs, mask).argmax(1) == want).float().mean()) for net in (first, cloned)]
    assert agree[1] > agree[0] > 0.3, agree  # one update already copies much of the expert; the second more


def test_magnet_pulls_the_policy_towards_the_clone_and_resumes_exactly(tmp_path, capsys):
    """--magnet imitation: after one update of behaviour cloning the learner is written to magnet.safetensors and
    every PPO update adds magnet_coef x KL(policy || magnet); the magnet never changes, the policy ends nearer to
    it than without the term, and a stopped run resumes to the same weights."""
    from agents.learned import read_policy
    from mauscheln_env.vecenv import make_vector_env
    from mauscheln_env.vector import sample_legal

    base = [*BATCHED_RUN, "--total-decisions", "1920", "--imitate-decisions", "384", "--seed", "3",
            "--learning-rate", "0.01"]
    pulled = [*base, "--magnet", "imitation", "--magnet-coef", "5"]
    assert train_main([*pulled, "--run-dir", str(tmp_path / "full")]) == 0
    assert "magnet: imitation" in capsys.readouterr().out
    assert train_main([*pulled, "--run-dir", str(tmp_path / "part"), "--max-updates", "3"]) == 0
    assert train_main(["--resume", str(tmp_path / "part")]) == 0
    assert train_main([*base, "--run-dir", str(tmp_path / "free")]) == 0
    assert not (tmp_path / "free" / "magnet.safetensors").exists()

    clone = _weights(tmp_path / "full" / "checkpoints" / "update_000001" / "policy.safetensors")
    magnet_file = tmp_path / "full" / "magnet.safetensors"
    kept = _weights(magnet_file)
    assert all(torch.equal(kept[k], clone[k]) for k in clone)  # the learner as cloning left it, untouched
    a = _weights(tmp_path / "full" / "checkpoints" / "update_000005" / "policy.safetensors")
    b = _weights(tmp_path / "part" / "checkpoints" / "update_000005" / "policy.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)

    game = Game(make_config("mauscheln", 4, max_deals=3))
    envs = make_vector_env(game.config, 256, backend="batched", seed=0)
    obs, mask, _ = envs.reset(seed=2)
    rows_obs, rows_mask = [], []
    gen = torch.Generator().manual_seed(0)
    for _ in range(10):
        rows_obs.append(obs.clone())
        rows_mask.append(mask.clone())
        obs, mask, *_ = envs.step(sample_legal(mask, gen))
    obs, mask = torch.cat(rows_obs), torch.cat(rows_mask)
    magnet, _, _ = read_policy(magnet_file)

    def kl_to_magnet(run: str) -> float:
        net, _, _ = read_policy(tmp_path / run / "checkpoints" / "update_000005" / "policy.safetensors")
        with torch.no_grad():
            logp = torch.log_softmax(net.masked_logits(obs, mask), -1)
            logq = torch.log_softmax(magnet.masked_logits(obs, mask), -1)
            return float(torch.where(mask, logp.exp() * (logp - logq), 0.0).sum(-1).mean())

    assert kl_to_magnet("full") < 0.5 * kl_to_magnet("free")


@pytest.mark.parametrize(("flags", "says"), [
    (["--magnet", "imitation"], "allowed: both (a policy and a weight > 0) or neither"),
    (["--magnet-coef", "0.5"], "allowed: both (a policy and a weight > 0) or neither"),
    (["--magnet", "imitation", "--magnet-coef", "0.5", "--imitate-decisions", "0"], "needs imitate_decisions > 0"),
    (["--magnet", "mousel4", "--magnet-coef", "0.5"], "mousel4"),
    (["--magnet-coef", "-1", "--magnet", "imitation"], "magnet_coef=-1"),
])
def test_bad_magnet_options_are_refused(tmp_path, capsys, flags, says):
    args = [*BATCHED_RUN, "--imitate-decisions", "384", *flags, "--run-dir", str(tmp_path / "run")]
    assert train_main(args) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


@pytest.mark.parametrize(("flags", "says"), [
    (["--imitate-teacher", "random"], "imitate_teacher='random' is not allowed"),
    (["--imitate-teacher", "pimc"], "imitate_teacher='pimc' is not allowed"),
    (["--backend", "reference"], "imitate_decisions needs backend='batched'"),
    (["--imitate-decisions", "1152"], "leaves no self-play update"),
    (["--imitate-learning-rate", "0"], "imitate_learning_rate=0"),
    (["--imitate-student", "1.5"], "imitate_student=1.5"),
])
def test_bad_imitation_options_are_refused(tmp_path, capsys, flags, says):
    args = [*BATCHED_RUN, "--imitate-decisions", "384", *flags, "--run-dir", str(tmp_path / "run")]
    assert train_main(args) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and not (tmp_path / "run").exists()


def test_reference_run_against_a_python_agent_with_a_central_critic(tmp_path):
    """A registered agent that is not tensor code plays its seats through one reused view of the reference
    engine; it is reseeded every update, so a stopped run resumes exactly with it too."""
    from agents.base import register_agent
    from agents.scripted.baselines import RandomAgent

    register_agent("py_random", RandomAgent, "a Python agent that draws from its generator (test)")
    flags = ["--config", str(SMOKE), "--central-critic", "--self-play-prob", "0", "--baseline-opponents",
             "py_random", "--num-steps", "16", "--total-decisions", "384", "--seed", "4"]
    assert train_main([*flags, "--run-dir", str(tmp_path / "full")]) == 0
    assert (tmp_path / "full" / "policy.safetensors").is_file()
    assert train_main([*flags, "--run-dir", str(tmp_path / "part"), "--max-updates", "2"]) == 0
    assert train_main(["--resume", str(tmp_path / "part")]) == 0
    a = _weights(tmp_path / "full" / "checkpoints" / "update_000003" / "policy.safetensors")
    b = _weights(tmp_path / "part" / "checkpoints" / "update_000003" / "policy.safetensors")
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0)


def test_corrupt_or_foreign_checkpoints_are_refused(tmp_path):
    from agents.learned import load_policy, save_policy

    game4 = Game(make_config("mauscheln", 4))
    net = PolicyNet(NetSpec(4, 4))
    bad = tmp_path / "garbage.safetensors"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(CheckpointError, match="not a readable safetensors"):
        load_policy(bad, game4)
    with pytest.raises(CheckpointError, match="neither a file"):
        load_policy(tmp_path / "missing.safetensors", game4)
    # A policy trained for 5 players refuses a 4-player table, naming the difference.
    game5 = Game(make_config("mauscheln", 5))
    from mauscheln_env.observation import Observer

    net5 = PolicyNet(NetSpec(Observer(game5).size, game5.num_actions))
    path = save_policy(tmp_path / "five.safetensors", net5, game5)
    with pytest.raises(CheckpointError, match="5 players|observations"):
        load_policy(path, game4)
    # Not a policy at all: a safetensors file without our metadata.
    from safetensors.torch import save_file

    plain = tmp_path / "plain.safetensors"
    save_file({"w": torch.zeros(2)}, str(plain))
    with pytest.raises(CheckpointError, match="not a mauscheln policy"):
        load_policy(plain, game4)
    assert net  # the small net was only needed for the shape


def test_a_resume_without_checkpoint_is_refused(tmp_path, capsys):
    assert train_main(["--resume", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_masked_distribution_never_samples_an_illegal_action():
    torch.manual_seed(0)
    logits = torch.randn(512, 38) * 5
    mask = torch.rand(512, 38) < 0.2
    mask[torch.arange(512), torch.randint(0, 38, (512,))] = True
    masked = logits.masked_fill(~mask, torch.finfo(logits.dtype).min)
    gen = torch.Generator().manual_seed(1)
    for _ in range(20):
        actions = sample_actions(masked, gen)
        assert mask[torch.arange(512), actions].all()
    logp, entropy = masked_distribution(masked, mask)
    assert torch.isfinite(entropy).all()
    assert torch.allclose(logp.exp().sum(-1), torch.ones(512), atol=1e-5)
    assert (logp.exp()[~mask] == 0).all()
    # The masked entropy of a uniform policy over k legal actions is log k.
    uniform = torch.zeros(1, 38).masked_fill(~mask[:1], torch.finfo(torch.float32).min)
    _, ent = masked_distribution(uniform, mask[:1])
    assert ent.item() == pytest.approx(np.log(mask[0].sum().item()), rel=1e-5)


def test_choose_action_draws_what_numpy_choice_draws():
    """The Python agents' sampling is ``Generator.choice`` over the softmax of the legal logits, without its
    checks: the same action and the same generator state after it, from sharp to flat distributions, one to
    every action legal, and never an illegal action."""
    from agents.learned.agent import choose_action

    g = np.random.default_rng(7)
    for trial in range(20000):
        n = int(g.integers(1, 60))
        legal = np.sort(g.choice(n, size=int(g.integers(1, n + 1)), replace=False))
        logits = (g.normal(size=n) * [0.01, 1.0, 30.0, 300.0][trial % 4]).astype(np.float32)
        seed = int(g.integers(1 << 62))
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        action = choose_action(logits, legal, False, ours)
        e = np.exp(logits[legal].astype(np.float64) - logits[legal].astype(np.float64).max())
        p = np.zeros(n)
        p[legal] = e / e.sum()
        assert action == int(theirs.choice(n, p=p)) and action in legal
        assert ours.random() == theirs.random()  # one draw each
        assert choose_action(logits, legal.tolist(), False, np.random.default_rng(seed)) == action


def test_seat_gae_credits_settlements_that_land_on_other_turns():
    from train.ppo.advantages import seat_gae

    # One session, two seats: seat 0 acts at t=0, seat 1 at t=1 (the deal ends there, paying both).
    rewards = torch.zeros(2, 1, 2)
    rewards[1, 0] = torch.tensor([3.0, -3.0])
    values = torch.zeros(2, 1)
    seats = torch.tensor([[0], [1]])
    dones = torch.tensor([[False], [True]])
    adv, ret = seat_gae(rewards, values, seats, dones, torch.zeros(1, 2), torch.tensor([1]), gamma=1.0, lam=1.0)
    assert ret[:, 0].tolist() == [3.0, -3.0]


def test_seat_gae_cuts_each_session_where_its_deal_ended():
    """Steps after a session's cut are not its own; a cut that is not a session end continues with boot."""
    from train.ppo.advantages import seat_gae

    # Two sessions, two seats alternating. Session 0: the deal (and session) ends at t=2, then a new session's
    # reward at t=3 must not leak back. Session 1: cut at t=2 without a session end: boot carries on.
    rewards = torch.zeros(4, 2, 2)
    rewards[2, 0] = torch.tensor([-4.0, 2.0])
    rewards[3, 0] = torch.tensor([100.0, 100.0])
    rewards[1, 1] = torch.tensor([1.0, 0.0])
    rewards[3, 1] = torch.tensor([50.0, 50.0])
    values = torch.zeros(4, 2)
    seats = torch.tensor([[0, 0], [1, 1], [0, 0], [1, 1]])
    dones = torch.zeros(4, 2, dtype=torch.bool)
    dones[2, 0] = True
    boot = torch.tensor([[7.0, 7.0], [5.0, 6.0]])  # session 0's boot is ignored: it ended at its cut
    _, ret = seat_gae(rewards, values, seats, dones, boot, torch.tensor([2, 2]), gamma=1.0, lam=1.0)
    assert ret[:3, 0].tolist() == [-4.0, 2.0, -4.0]
    assert ret[:3, 1].tolist() == [6.0, 6.0, 5.0]  # seat 0: 1 at t=1 + boot 5; seat 1: boot 6


@pytest.mark.parametrize("backend", ["batched", "reference"])
@pytest.mark.parametrize("ruleset", ["mauscheln", "mouche"])
def test_bootstrap_observes_only_the_sessions_it_needs(backend, ruleset):
    """The trainer's bootstrap encodes a few (session, seat) pairs; they equal observe() and state() of those."""
    from mauscheln_env.ruleargs import rule_config
    from mauscheln_env.vecenv import make_vector_env
    from mauscheln_env.vector import sample_legal
    from train.ppo.rollout import critic_rows, observe_rows

    envs = make_vector_env(rule_config(ruleset, None, {}, max_deals=(3, "--max-deals")), 12, backend=backend, seed=3)
    mask = envs.reset(seed=5).mask
    gen = torch.Generator().manual_seed(1)
    n = envs.num_players
    for _ in range(25):
        rows = torch.randperm(12, generator=gen)[:5]
        pair_rows, pair_seats = rows.repeat(n), torch.arange(n).repeat_interleave(5)
        want = torch.cat([envs.observe(s)[rows] for s in range(n)])
        assert torch.equal(observe_rows(envs, pair_rows, pair_seats), want)
        seat_hot = torch.nn.functional.one_hot(pair_seats, n).float()
        assert torch.equal(critic_rows(envs, pair_rows, pair_seats, n),
                           torch.cat([envs.state()[pair_rows], seat_hot], dim=1))
        mask = envs.step(sample_legal(mask, gen)).mask


def test_sb3_wrapper_checkers_and_rewards():
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    from agents.single_agent import SingleAgentEnv

    with pytest.warns(UserWarning):
        check_env(SingleAgentEnv(opponents="random", num_players=4, max_deals=2), skip_render_check=True)
    sb3_check_env(SingleAgentEnv(opponents="random", num_players=4, max_deals=2), warn=False)
    env = SingleAgentEnv(opponents="expert", num_players=5, max_deals=3, knock=True)
    rng = np.random.default_rng(0)
    checked = 0
    for episode in range(25):
        env.reset(seed=episode)
        total, done, truncated = 0.0, False, False
        while not (done or truncated):
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, reward, done, truncated, _ = env.step(action)
            total += reward
        state = env.env.engine_state
        expected = sum(result.deltas[env.seat] for result in state.session.results)
        assert total == expected, (episode, total, expected)
        checked += bool(expected)
    assert checked > 5


def test_sb3_wrapper_refuses_bad_arguments():
    from agents.single_agent import SingleAgentEnv

    with pytest.raises(ValueError, match="seat"):
        SingleAgentEnv(seat=9)
    with pytest.raises(ValueError, match="opponents"):
        SingleAgentEnv(opponents=["random"], num_players=4)
    env = SingleAgentEnv(illegal_action="raise")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(ValueError, match="not legal"):
        env.step(illegal)


def test_sb3_maskable_smoke(tmp_path):
    """A few hundred steps of sb3-contrib's MaskablePPO on the single-seat wrapper, in a subprocess (~5 s)."""
    proc = subprocess.run([sys.executable, "-m", "train.sb3_maskable", "--timesteps", "512", "--n-envs", "2",
                           "--eval-deals", "0", "--runs-root", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "trained 512" in proc.stdout


def test_trump_first_network_sees_the_same_position_whatever_the_trump_suit():
    """Relabelling clubs and the trump suit everywhere gives the network the same input and mapped logits."""
    from agents.learned import trump_first_tables
    from mauscheln_env.env import raw_env
    from mauscheln_env.observation import Observer

    game = Game(make_config("mauscheln", 4))
    deck = game.deck
    order = np.random.default_rng(3).permutation(len(deck)).tolist()
    hands = [order[4 * s:4 * s + 4] for s in range(4)]
    trump, stock = order[16], order[17:]
    if deck.suit[trump] == 0:  # make the trump suit something other than clubs, so the relabelling moves cards
        trump, stock = stock[0], [trump, *stock[1:]]
    t = deck.suit[trump]

    def swap(c: int) -> int:
        suit = {0: t, t: 0}.get(deck.suit[c], deck.suit[c])
        return deck.index[deck.codes[c][0] + "CSHD"[suit]]

    obs_masks = []
    for relabel in (lambda c: c, swap):
        env = raw_env(ruleset="mauscheln", num_players=4)
        deal = {"hands": {s: [deck.codes[relabel(c)] for c in h] for s, h in enumerate(hands)},
                "trump": deck.codes[relabel(trump)], "stock": [deck.codes[relabel(c)] for c in stock]}
        env.reset(seed=0, options={"dealer": 0, "deal": deal})
        for _ in range(3):  # a few decisions in, so more than the hand is card-indexed
            env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
        o = env.observe(env.agent_selection)
        obs_masks.append((torch.as_tensor(o["observation"]).unsqueeze(0), torch.as_tensor(o["action_mask"]).bool().unsqueeze(0)))
    tables = trump_first_tables(game)
    net = PolicyNet(NetSpec(Observer(game).size, game.num_actions, (16,), None, True), tables)
    torch.nn.init.normal_(net.actor[-1].weight)  # make the logits differ by action
    (o1, m1), (o2, m2) = obs_masks
    assert not torch.equal(o1, o2)
    torch.testing.assert_close(net.canonical(o1), net.canonical(o2), rtol=0, atol=0)
    l1, l2 = net.masked_logits(o1, m1)[0], net.masked_logits(o2, m2)[0]
    N = len(deck)
    perm = torch.tensor([swap(c) for c in range(N)])
    torch.testing.assert_close(l2[:N][perm], l1[:N], rtol=0, atol=0)
    torch.testing.assert_close(net.value(o1), net.value(o2), rtol=0, atol=0)
    # A file round trip keeps the tables; a deck without equal suits is refused.
    import tempfile

    from agents.learned import read_policy, save_policy

    with tempfile.TemporaryDirectory() as tmp:
        loaded, _, _ = read_policy(save_policy(Path(tmp) / "p.safetensors", net, game))
    torch.testing.assert_close(loaded.masked_logits(o2, m2), net.masked_logits(o2, m2), rtol=0, atol=0)
    with pytest.raises(ValueError, match="same ranks in every suit"):
        trump_first_tables(Game(make_config("mauscheln", 4, weli=True, deck_size=33)))


@pytest.mark.parametrize("ruleset", ["muschka", "mouche"])
def test_trump_first_loses_nothing_where_a_rule_names_a_card(ruleset):
    """Muschka's ace of spades makes the suits unequal: with trumps clubs or spades swapped to the front, the
    network must still tell which suit is the real spades. The relabelled input keeps the real trump suit
    there, so two observations that differ only in trumps clubs or spades stay apart; where the suits are
    equal (Mouche), the trump suit always reads as the first and the input folds them."""
    from agents.learned import trump_first_tables
    from mauscheln_env.observation import Observer

    game = Game(make_config(ruleset, 4))
    observer = Observer(game)
    net = PolicyNet(NetSpec(observer.size, game.num_actions, (8,), None, True), trump_first_tables(game))
    ts = observer.offsets["trump_suit"]
    seen = []
    for d in range(40):
        state = game.new_session(np.random.default_rng(d), dealer=0)
        obs = torch.as_tensor(observer.encode(state, state.to_act)).unsqueeze(0)
        real = int(obs[0, ts:ts + 4].argmax())
        shown = int(net.canonical(obs)[0, ts:ts + 4].argmax())
        seen.append(real)
        assert shown == (real if ruleset == "muschka" else 0)
        # every relabelling is a permutation of the cells: the input determines the observation given the suit
        assert sorted(net.canonical(obs)[0].tolist()) == sorted(obs[0].tolist())
    assert {0, 1} <= set(seen)  # trumps clubs and spades both drawn


SHIPPED = {"mauscheln3": ("mauscheln", 3), "mauscheln4": ("mauscheln", 4), "mauscheln5": ("mauscheln", 5),
           "mauscheln6": ("mauscheln", 6), "mauscheln7": ("mauscheln", 7),
           "mauscheln_classic3": ("mauscheln_classic", 3), "mauscheln_classic4": ("mauscheln_classic", 4),
           "mauscheln_classic5": ("mauscheln_classic", 5), "mauscheln_classic6": ("mauscheln_classic", 6),
           "mousel3": ("mousel", 3), "mousel4": ("mousel", 4), "mousel5": ("mousel", 5), "mousel6": ("mousel", 6),
           "mousel7": ("mousel", 7),
           "mouche3": ("mouche", 3), "mouche4": ("mouche", 4), "mouche5": ("mouche", 5), "mouche6": ("mouche", 6),
           "muschka3": ("muschka", 3), "muschka4": ("muschka", 4), "muschka5": ("muschka", 5),
           "muschka6": ("muschka", 6), "muschka7": ("muschka", 7)}
"""Every policy in agents/learned/policies/ and the table it was trained for (a file missing or added fails a test)."""


def test_the_shipped_policies_are_the_listed_ones():
    from agents.learned import available_policies

    assert available_policies() == sorted(SHIPPED)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_each_shipped_policy_loads_by_name_and_beats_random(name):
    """Loadable by name, the default of `learned` at its table, legal play, and better than random (duplicate)."""
    from agents.base import make_agent
    from agents.evaluation.duplicate import Settings, evaluate_pair

    ruleset, players = SHIPPED[name]
    game = Game(make_config(ruleset, players))
    agent = make_agent("learned", seed=1)
    agent.setup(game, 0)
    assert agent.source == name
    result = evaluate_pair("learned", "random", Settings(ruleset=ruleset, players=players, deals=40, seed=3))
    assert result.advantage.low > 0, result.advantage


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_each_shipped_policy_refuses_another_game(name):
    ruleset, players = SHIPPED[name]
    agent = LearnedAgent(checkpoint=name)
    other = next(r for r in ("mousel", "mauscheln", "mouche") if r != ruleset  # a ruleset with this many seats
                 and RULESETS[r].min_players <= players <= RULESETS[r].max_players)
    fewer_or_more = players - 1 if players == RULESETS[ruleset].max_players else players + 1
    for game in (Game(make_config(ruleset, fewer_or_more)), Game(make_config(other, players))):
        with pytest.raises(CheckpointError, match=f"trained for {ruleset}, {players} players"):
            agent.setup(game, 0)


def test_every_table_has_a_shipped_policy():
    """`learned` plays at every table a user can set up: one shipped policy per ruleset and player count."""
    from tests.tables import every_table

    assert sorted(SHIPPED.values()) == sorted(every_table())


def test_learned_without_a_shipped_policy_names_the_rulesets_policies_only(policy_withheld):
    """The refusal lists the policies of the table's own ruleset, whatever the other rulesets ship."""
    import re

    from agents.learned.checkpoint import shipped_policy_name
    from tests.tables import UNSHIPPED_PLAYERS, UNSHIPPED_REFUSAL, UNSHIPPED_RULESET

    with pytest.raises(CheckpointError) as exc:
        shipped_policy_name(Game(make_config(UNSHIPPED_RULESET, UNSHIPPED_PLAYERS)))
    message = str(exc.value)
    own = sorted(name for name, (ruleset, players) in SHIPPED.items()
                 if ruleset == UNSHIPPED_RULESET and players != UNSHIPPED_PLAYERS)
    assert message.startswith(UNSHIPPED_REFUSAL)
    assert f"shipped for {UNSHIPPED_RULESET}: {', '.join(own) or 'none'}; allowed:" in message
    assert sorted(set(re.findall(r"[a-z_]+\d+", message))) == own


@pytest.mark.parametrize("flags, message", [
    (["--trump-first", "maybe"], "Unrecognized options: maybe"),
    (["--num-envs", "abc"], "allowed: --num-envs INT"),
    (["--hidden", "[a]"], "allowed: --hidden [INT [INT ...]]"),
    (["--finish-steps", "-5"], "finish_steps=-5 is not allowed; allowed: a whole number 0..1048576"),
    (["--baseline-prob", "1.5"], "baseline_prob=1.5 is not allowed; allowed: a finite number [0, 1]"),
    (["--compile-env", "--backend", "reference"], "compile_env=True needs backend='batched'"),
    (["--nonsense", "1"], "Unrecognized options: --nonsense"),
])
def test_bad_training_options_are_refused_with_what_is_allowed(tmp_path, capsys, flags, message):
    """In-process: the parser refuses before anything is built; one line on stderr, exit code 2, no run directory."""
    assert train_main(["--config", str(SMOKE), "--run-dir", str(tmp_path / "run"), *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("mauscheln train: error: "), err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("ruleset, tags", [
    ("mauscheln", ["declare/mauscheln_rate", "declare/pass_rate", "go_with/go_rate", "exchange/card_rate"]),
    ("mauscheln_classic", ["knock/knock_rate", "declare/mauscheln_rate", "go_with/go_rate"]),
    ("mousel", ["declare/in_rate", "declare/out_rate", "exchange/done_rate"]),
    ("mouche", ["decide/stay_rate", "decide/pass_rate", "decide/card_rate"]),
    ("muschka", ["decide/stay_rate", "decide/pass_rate", "exchange/card_rate"]),
])
def test_phase_stats_give_each_ruleset_its_decision_rates(ruleset, tags):
    """The trainer's TensorBoard rates: every decision phase but the trick play, every action by its string;
    the rates of a phase sum to 1, and only the learner's decisions count."""
    from agents.tensor.batched_expert import BatchedRandom
    from mauscheln_env.vecenv import make_vector_env
    from train.ppo.phases import PhaseStats

    game = Game(make_config(ruleset, 4))
    envs = make_vector_env(game.config, 128, backend="batched", seed=0)
    obs, mask, to_act = envs.reset(seed=1)
    stats, nobody, player = PhaseStats(game), PhaseStats(game), BatchedRandom(game, seed=0)
    for _ in range(40):
        action = player.act(obs, mask)
        stats.record(obs, action, to_act, torch.ones(len(action), dtype=torch.bool))
        nobody.record(obs, action, to_act, torch.zeros(len(action), dtype=torch.bool))
        step = envs.step(action)
        obs, mask, to_act = step.obs, step.mask, step.to_act
    rates = stats.summary()
    assert nobody.summary() == {}
    assert all(f"{tag}/all" in rates for tag in tags), sorted(rates)
    assert not any(tag.startswith("play/") for tag in rates)
    for phase in {tag.split("/")[0] for tag in rates}:
        total = sum(v for k, v in rates.items() if k.startswith(f"{phase}/") and k.endswith("/all"))
        assert total == pytest.approx(1.0), phase
        for bucket in ("seat_after_dealer_0", "pot_lt_8"):
            shares = [v for k, v in rates.items() if k.startswith(f"{phase}/") and k.endswith(bucket)]
            assert not shares or sum(shares) == pytest.approx(1.0), (phase, bucket)


@pytest.mark.parametrize("trump_first", [True, False], ids=["trump first", "plain"])
def test_the_python_agent_plays_the_network_it_loads(trump_first):
    """LearnedAgent computes the actor in numpy (one observation at a time): its logits are the network's up
    to float32 rounding, its greedy actions the network's, and it only ever picks legal actions."""
    from agents.learned import NumpyActor, read_policy
    from mauscheln_env.vecenv import make_vector_env

    game = Game(make_config("mauscheln", 4))
    envs = make_vector_env(game.config, 256, backend="batched", seed=0)
    obs, mask, _ = envs.reset(seed=4)
    for _ in range(12):  # positions of every phase
        step = envs.step(torch.where(mask, torch.rand(mask.shape), -1.0).argmax(1))
        obs, mask = step.obs, step.mask
    if trump_first:
        net, _, _ = read_policy("mauscheln4")
    else:
        torch.manual_seed(0)
        net = PolicyNet(NetSpec(envs.obs_size, envs.num_actions, (64, 64), None, False))
        torch.nn.init.normal_(net.actor[-1].weight, std=0.3)  # logits far apart enough to have an argmax
    actor = NumpyActor(net)
    want = net.masked_logits(obs, mask).detach()
    got = torch.from_numpy(np.stack([actor.logits(o) for o in obs.numpy()]))
    torch.testing.assert_close(got[mask], want[mask], rtol=1e-5, atol=1e-5)
    agent = LearnedAgent.from_network(net, game, seed=0, greedy=True)
    agent.setup(game, 0)
    picks = torch.tensor([agent.act(o, m, {}) for o, m in zip(obs.numpy(), mask.numpy())])
    assert torch.equal(picks, want.argmax(1))
    sampler = LearnedAgent.from_network(net, game, seed=1)
    sampler.setup(game, 0)
    assert all(m[sampler.act(o, m, {})] for o, m in zip(obs.numpy(), mask.numpy()))


def test_dagger_sessions_are_played_by_the_network_and_labelled_by_the_teacher(monkeypatch):
    """--imitate-student (DAgger): in the student's share of the sessions the network's own samples are played
    while every decision's label stays the teacher's choice in that position; at share 0 the teacher plays all."""
    from agents.learned import NetSpec, PolicyNet
    from agents.tensor import batched_opponent
    from mauscheln_env.observation import Observer
    from mauscheln_env.vecenv import make_vector_env
    from train.ppo.imitation import imitation_round
    from train.ppo.storage import Storage
    from train.ppo_selfplay import Args

    game = Game(make_config("mauscheln", 4, max_deals=1))
    B, T, n = 32, 12, 4
    args = Args(num_envs=B, num_steps=T, update_epochs=1, num_minibatches=2, seed=1)
    D, A = Observer(game).size, game.num_actions
    teacher = batched_opponent("expert", game)

    def run(student: float) -> tuple[list, list, list]:
        torch.manual_seed(0)
        net = PolicyNet(NetSpec(D, A, (16,)))
        envs = make_vector_env(game.config, B, backend="batched", seed=0)
        played, labels_seen = [], []
        step, act = envs.step, teacher.act

        def spy_step(action):
            played.append(action.clone())
            return step(action)

        def spy_act(obs, mask):
            out = act(obs, mask)
            labels_seen.append((out.clone(), mask.sum(1) > 1))
            return out

        monkeypatch.setattr(envs, "step", spy_step)
        monkeypatch.setattr(teacher, "act", spy_act)
        storage = Storage.allocate(T, B, D, A, n, None, torch.device("cpu"))
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        imitation_round(net, teacher, envs, args, opt, 0, storage, student=student)
        return played, labels_seen, storage.act

    played, labels, act_buf = run(0.0)
    assert all(torch.equal(p, lab) for p, (lab, _) in zip(played, labels))
    played, labels, act_buf = run(1.0)
    assert all(torch.equal(act_buf[t], lab) for t, (lab, _) in enumerate(labels))  # the teacher's labels kept
    differ = sum(int(((p != lab) & choice).sum()) for p, (lab, choice) in zip(played, labels))
    choices = sum(int(choice.sum()) for _, choice in labels)
    assert differ > choices // 4, (differ, choices)  # an untrained network plays its own, mostly other, moves


def test_dagger_runs_resume_exactly(tmp_path):
    flags = [*BATCHED_RUN, "--imitate-decisions", "768", "--imitate-student", "0.5", "--seed", "4"]
    assert train_main([*flags, "--run-dir", str(tmp_path / "full")]) == 0
    assert train_main([*flags, "--run-dir", str(tmp_path / "part"), "--max-updates", "1"]) == 0
    assert train_main(["--resume", str(tmp_path / "part")]) == 0
    for update in ("update_000002", "update_000003"):
        a = _weights(tmp_path / "full" / "checkpoints" / update / "policy.safetensors")
        b = _weights(tmp_path / "part" / "checkpoints" / update / "policy.safetensors")
        assert all(torch.equal(a[k], b[k]) for k in a), update
