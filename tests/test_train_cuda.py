"""Training on a CUDA device (skipped without one; ``benchmarks/gpu_check.sh`` runs these on a GPU machine).

The rollout, its storage and statistics stay on the device; a run on the GPU trains, checkpoints, resumes, and
its policy plays on the CPU; with two GPUs, two ranks train over NCCL and stay identical. CUDA kernels that
add with atomics (scatter, index_add, the backward pass of a gather) do not fix the order of their sums, so a
CUDA run is not bit-reproducible: these tests check behaviour, not digests.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["--device", "cuda", "--seed", "5", "--num-envs", "64", "--num-steps", "16", "--total-decisions", "4096",
         "--hidden", "32", "--pool-every", "1", "--pool-size", "2", "--baseline-opponents", "expert",
         "--self-play-prob", "0.3", "--checkpoint-every", "1", "--final-eval-deals", "0"]


def test_cuda_training_run_resumes_and_its_policy_plays_on_the_cpu(tmp_path):
    from agents.learned import LearnedAgent
    from mauscheln_env import Game, make_config
    from train.ppo_selfplay import main

    run_dir = tmp_path / "run"
    assert main([*FLAGS, "--run-dir", str(run_dir), "--max-updates", "2"]) == 0
    assert (run_dir / "checkpoints" / "latest").read_text() == "update_000002"
    assert main(["--resume", str(run_dir)]) == 0
    assert (run_dir / "checkpoints" / "latest").read_text() == "update_000004"
    agent = LearnedAgent(checkpoint=str(run_dir / "policy.safetensors"))
    agent.setup(Game(make_config("mauscheln", 4, max_deals=3)), 0)


def test_cuda_rollout_stays_on_the_device(tmp_path):
    from train.ppo.advantages import rollout_advantages
    from train.ppo.interrupt import StopOnInterrupt
    from train.ppo.rollout import collect_rollout
    from train.ppo.seeds import update_generators
    from train.ppo.setup import start_run
    from train.ppo.update import ppo_update
    from train.ppo_selfplay import parse_args

    run = start_run(parse_args([*FLAGS, "--run-dir", str(tmp_path / "run")]), StopOnInterrupt())
    run.pool.add(run.net, 2)
    gen, rng = update_generators(run.seed, 0)
    rollout = collect_rollout(run, 0, gen, rng)
    for name in ("cut_at", "boot", "chips_won", "pool_won", "pool_deals"):
        assert getattr(rollout, name).device.type == "cuda", name
    assert all(t.device.type == "cuda" for t in vars(run.storage).values())
    advantages, returns = rollout_advantages(run.storage, rollout, run.args)
    stats = ppo_update(run.net, run.optimizer, None, run.args, run.storage, rollout, advantages, returns, gen,
                       run.world)
    assert stats.learner_decisions > 0 and torch.isfinite(torch.tensor(stats.policy_loss))
    run.writer.close()


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_two_ranks_on_two_gpus_stay_identical(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "train.ppo_selfplay", *FLAGS, "--nproc", "2", "--check-sync",
                           "--run-dir", str(tmp_path / "run")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 ranks of 32 sessions" in proc.stdout


@pytest.mark.skipif(torch.cuda.device_count() != 1, reason="needs exactly one CUDA device")
def test_more_ranks_than_gpus_are_refused(tmp_path, capsys):
    from train.ppo_selfplay import main

    assert main([*FLAGS, "--nproc", "2", "--run-dir", str(tmp_path / "run")]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "one GPU per rank" in said[0] and "allowed: --nproc 1 or fewer" in said[0]
