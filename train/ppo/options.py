"""The trainer's options: one typed field per flag and YAML key, each with its docstring (what
:mod:`train.ppo.args` checks and ``mauscheln train --help`` prints). :mod:`train.ppo_selfplay` reads them and
runs the loop; every step of :mod:`train.ppo` takes them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

import tyro

from train.cli import KEY_VALUES


@dataclass
class Args:
    """Training configuration. Every field is a command-line flag (--num-envs 256) and a YAML key."""

    exp_name: str = "ppo_selfplay"
    """Name of the experiment (part of the run directory's name)."""
    seed: int = 1
    """Seed of everything: dealing, sampling, minibatches, initial weights."""
    ruleset: str = "mauscheln"
    """Ruleset or preset file to train on (configs/rules/*.yaml); the batched backend plays every ruleset."""
    num_players: Annotated[int | None, tyro.conf.arg(aliases=("--players",))] = None
    """Seats at the table (default: the preset's, else 4)."""
    rules: Annotated[dict[str, Any], KEY_VALUES, tyro.conf.arg(name="rule")] = field(default_factory=dict)
    """Rule options as KEY=VALUE (YAML: rules: {knock: true}), e.g. --rule knock=true stake=8."""
    max_deals: int = 3
    """Settled deals per training session, so that the pot carried over is learned."""
    backend: str = "batched"
    """batched (tensor engine) or reference (Python loop over the reference engine)."""
    compile_env: bool = False
    """torch.compile the batched engine's kernels (BatchedMauscheln(compile=True)): the same results, a faster
    engine after a compilation at the start; worth it where the engine, not the network, limits the run."""
    device: str = "cpu"
    """Torch device for the environment and the network (``cuda``: with several ranks, each its local rank's GPU)."""
    threads: int | None = None
    """torch.set_num_threads of each process (default: 2 in one process, 1 per rank when there are several)."""
    nproc: int | None = None
    """Ranks of a data-parallel run (torch.distributed: gloo on the CPU, nccl on CUDA): this machine starts them, as
    torchrun does, or with --ray-address the Ray cluster does. Each steps num_envs / nproc sessions (a multiple of
    nproc is needed) from its own seed stream; the gradients are averaged. Default 1; with --resume, the number the
    run was trained with (another is refused). Under torchrun the launch sets the ranks: leave it out."""
    ray_address: str | None = None
    """Train on the Ray cluster at this address (``ray start --head`` prints it; default: $RAY_ADDRESS when set)
    through Ray Train's TorchTrainer, with nproc workers; the run directory is Ray's storage_path/name."""
    check_sync: bool = False
    """After every update, compare a hash of the parameters across the ranks and stop with an error if they
    differ (a check of the data-parallel trainer: one small all-gather per update)."""
    profile: bool = False
    """Print where each update's time goes (rollout forward passes, engine steps, opponents, PPO update,
    all-reduce, logging, checkpoints) per rank; it waits for the device at each part, so it slows a CUDA run."""
    total_decisions: int = 2_000_000
    """Environment decisions to collect (all seats, learner or not)."""
    num_envs: int = 256
    """Sessions stepped together."""
    num_steps: int = 64
    """Decisions per session per rollout (before the steps that finish the deals still running)."""
    finish_steps: int = 64
    """After num_steps, step on for at most this many decisions so that every deal still running ends inside the rollout: each seat's last decision then has its true return instead of a bootstrapped guess (a seat that passed never acts again in the deal, so the critic never learns the value of its observations)."""
    learning_rate: float = 3e-4
    """Adam learning rate."""
    anneal_lr: bool = True
    """Decay the learning rate linearly to 0."""
    gamma: float = 1.0
    """Discount per decision of the same seat (rewards are chips; sessions are short)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    num_minibatches: int = 4
    """Minibatches per epoch."""
    update_epochs: int = 4
    """Epochs over each rollout."""
    clip_coef: float = 0.2
    """PPO clip range."""
    clip_vloss: bool = True
    """Clip the value loss as in PPO2."""
    ent_coef: float = 0.01
    """Weight of the masked entropy bonus."""
    vf_coef: float = 0.5
    """Weight of the value loss."""
    max_grad_norm: float = 0.5
    """Gradient clipping."""
    target_kl: float | None = None
    """Stop the epochs early when the approximate KL exceeds this."""
    reward_scale: float = 0.1
    """Rewards (chips) are multiplied by this for learning; logs report chips."""
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the actor and the critic."""
    trump_first: bool = True
    """Relabel the suits so that the network always sees the trump suit first (agents.learned.trump_first_tables)."""
    central_critic: bool = False
    """Value head on the full state plus the seat (centralised critic) instead of the observation."""
    self_play_prob: float = 0.5
    """Share of sessions in which every seat is the current policy."""
    baseline_prob: float = 0.5
    """Of the other sessions, the share whose opponent is a scripted baseline (the rest: pool snapshots)."""
    pool_size: int = 8
    """Frozen past snapshots kept as opponents."""
    pool_every: int = 10
    """Updates between snapshots added to the pool."""
    baseline_opponents: list[str] = field(default_factory=list)
    """Fixed opponents drawn from, e.g. [expert]: random, beginner and expert of every ruleset and frozen learned policies (learned:checkpoint=PATH or a shipped name) on any backend (over obs and mask, agents.tensor), any other registered agent with backend: reference."""
    checkpoint_every: int = 10
    """Updates between checkpoints (and always at the end)."""
    eval_every: int = 0
    """Updates between duplicate evaluations during training (0: only at the end)."""
    eval_deals: int = 200
    """Duplicate deals per opponent in the periodic evaluation."""
    eval_agents: list[str] = field(default_factory=lambda: ["random", "expert"])
    """Baselines of the periodic evaluation."""
    final_eval_deals: int = 1000
    """Duplicate deals per opponent in the final evaluation (0: none)."""
    final_eval_agents: list[str] = field(default_factory=lambda: ["random", "beginner", "expert"])
    """Baselines of the final evaluation."""
    runs_root: str = "runs"
    """Where run directories are made."""
    run_dir: str | None = None
    """Run directory (default: runs_root/<ruleset>__<exp_name>__<seed>__<time>)."""
    imitate_decisions: int = 0
    """Decisions of behaviour cloning before self-play: the first imitate_decisions // (num_envs * num_steps)
    updates let the teacher play every seat and teach the network its choices (masked cross-entropy) and the
    critic the acting seat's undiscounted return; the remaining updates are PPO. 0: none."""
    imitate_teacher: str = "expert"
    """The agent imitated: one that runs batched (expert, beginner, learned:checkpoint=...; random teaches nothing)."""
    imitate_learning_rate: float = 1e-3
    """Adam's learning rate during the imitation updates (constant)."""
    imitate_student: float = 0.0
    """DAgger: the share of imitation sessions in which the network plays every seat (sampling its policy) while
    the teacher still names the choice it learns at each decision, so that it learns the teacher's play in the
    positions its own play reaches, not only in the teacher's. The share rises linearly from 0 at the first
    imitation update to this value at the last. 0: the teacher plays every session (plain behaviour cloning)."""
    magnet: str | None = None
    """A policy the PPO updates are pulled towards (magnetic mirror descent's magnet, a KL regulariser):
    ``imitation`` (the learner as behaviour cloning left it; needs imitate_decisions) or a policy file, run
    directory or shipped name trained for this table with this run's network shape. Needs magnet_coef > 0."""
    magnet_coef: float = 0.0
    """Weight of KL(policy || magnet) over the learner's decisions in each PPO minibatch's loss (0: none)."""
    init_from: str | None = None
    """Start the learner from this policy (a file, a run directory or a shipped name) instead of random weights;
    it must be trained for this table and have this run's network shape (--hidden, --trump-first, critic)."""
    resume: str | None = None
    """Run directory to continue from its last checkpoint (its config.yaml fixes every other option)."""
    max_updates: int | None = None
    """Stop after this many updates in this process (for tests; the run can be resumed)."""
    max_minutes: float | None = None
    """Stop after the first update that ends past this many minutes of training in this process, with a
    checkpoint (the run can be resumed); the learning rate still anneals over total_decisions. A time budget
    depends on the machine, so such a run is not reproducible; the updates it did are printed."""
    config: str | None = None
    """YAML file of these options (configs/train/*.yaml); flags given with it override its values."""
