"""Masked PPO self-play for the Mauscheln family (CleanRL-style, one file, top to bottom).

    mauscheln train --config configs/train/quick.yaml
    python -m train.ppo_selfplay --total-decisions 2000000 --num-envs 512 --seed 1
    python -m train.ppo_selfplay --resume runs/mauscheln__ppo_selfplay__1__1764470000

One policy network plays every seat from the egocentric observation. Illegal
actions are masked when sampling, the mask is stored with every transition and
applied again at update time (so the probability ratio uses the same support),
and the entropy bonus is the masked entropy. The value head sees the
observation, or with ``central_critic`` the full hidden state plus the seat
(a centralised critic, training only).

Each rollout starts fresh sessions from a seed derived from (seed, update),
steps them ``num_steps`` times, and then steps on (at most ``finish_steps``
times) until every deal still running has ended; each session's rollout stops
at that deal's end, so every decision's return is real chips, not a guess.
(Bootstrapping a cut deal from the seats' observations is badly biased here:
a seat that passed never acts again in its deal, so the critic is never
trained on its observations, and that error taught an earlier version to go
with almost every hand.) Only a session of several deals, or a deal still
running after ``finish_steps``, is bootstrapped. This makes an update a pure
function of (parameters, optimiser state, seed, update index), so a killed
run resumed from its last checkpoint repeats exactly the updates it would have
made. A seat's reward for a decision is everything it received until its next
decision (settlements land during other seats' turns), and its advantage chain
(GAE) runs over its own decisions only.

Opponents: in a share of the sessions every seat is the current policy; in the
others the learner holds between one and n-1 seats (so both duplicate formats,
one against a field and a field against one, are trained) and the rest are one
opponent: a scripted baseline (``random``, ``beginner`` and ``expert`` of every
ruleset run over ``(obs, mask)`` on any backend, see :mod:`agents.tensor`; other
agents need the reference backend) or a frozen past snapshot from the pool, preferring those the learner
beats least.

Everything a researcher looks at goes to TensorBoard under ``runs/<name>``:
``charts/`` (rewards, decisions/s, how often the policy declares, goes with and
exchanges by seat and by pot size), ``losses/`` (policy, value, entropy, KL,
clip fraction) and ``eval/`` (duplicate evaluation against the baselines).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import torch
import tyro
import yaml

from agents.learned import MAX_LAYERS, MAX_WIDTH, NetSpec, PolicyNet, masked_distribution, sample_actions, save_policy
from mauscheln_env.batched import BatchedMauscheln, keep_freed_memory
from mauscheln_env.engine import Game
from mauscheln_env.errors import ConfigError, MauschelnError, shown
from mauscheln_env.files import atomic_write_text
from mauscheln_env.ruleargs import RULE_SYNTAX, newline_after_ctrl_c, report, rule_config
from mauscheln_env.vecenv import make_vector_env
from mauscheln_env.vector import DEAL_MOUCHE, DEAL_NO_PLAY, DEAL_SETTLED
from train.cli import KEY_VALUES, tyro_cli

PROG = "mauscheln train"
MAGNET_FILE = "magnet.safetensors"
"""In a run directory: the learner as behaviour cloning left it, when the run's magnet is ``imitation``."""
SYNTAX = (
    "Every option is a flag and a key of the YAML file given with --config (flags override the file). Lists take "
    "space-separated values (--hidden 128 128, --baseline-opponents expert random; no value: an empty list), "
    "booleans are flags (--trump-first / --no-trump-first), None is written None, rule options are "
    f"--rule {RULE_SYNTAX}. Continue a stopped run with --resume RUN_DIR."
)


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
    """torch.compile the batched engine's kernels (BatchedMauscheln(compile=True)): the same results, about 1.8x the engine's speed on the CPU, 10-20 s to compile at the start; worth it where the engine, not the network, limits the run."""
    device: str = "cpu"
    """Torch device for the environment and the network."""
    threads: int = 2
    """torch.set_num_threads."""
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


# ---------------------------------------------------------------------------- configuration
def parse_args(argv: list[str] | None = None) -> Args:
    """The :class:`Args` of a command line: ``--config FILE`` first, then the flags (parsed by tyro), validated.

    A bad value raises :class:`~mauscheln_env.errors.ConfigError` with one line saying what is allowed;
    ``--help`` prints the options with their defaults (those of ``--config`` when given) and exits.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config", default=None)
    known, _ = pre.parse_known_args(argv)
    base = load_config(known.config) if known.config else Args()
    args = tyro_cli(Args, argv, prog=PROG, description=_description(), default=base)
    if args.resume:
        changed = [f.name for f in dataclasses.fields(Args) if f.name not in ("resume", "max_updates", "max_minutes")
                   and getattr(args, f.name) != getattr(Args(), f.name)]
        if changed:
            raise ConfigError(f"--resume continues a run as its config.yaml says; {', '.join(changed)} cannot be "
                              "changed (allowed with --resume: --max-updates, --max-minutes)")
    check_args(args)
    return args


def _description() -> str:
    return "Masked PPO self-play for the Mauscheln family (train/ppo_selfplay.py). " + SYNTAX


def load_config(path: str | Path, source: str = "training config") -> Args:
    """The :class:`Args` of a YAML file (``--config`` or a run's ``config.yaml``), every value checked."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{source} {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
        raise ConfigError(f"{source} {str(path)!r} is not valid YAML: {problem}{where}") from exc
    if not isinstance(data, dict):
        what = "empty" if data is None else f"a YAML {type(data).__name__}"
        raise ConfigError(f"{source} {str(path)!r} is {what}; allowed: a mapping of option names to values "
                          "(configs/train/*.yaml)")
    try:
        return make_args(data)
    except ConfigError as exc:
        raise ConfigError(f"{source} {str(path)!r}: {exc}") from None


def make_args(values: dict[str, Any]) -> Args:
    """Validate a mapping of field values into :class:`Args` (unknown keys and bad values raise)."""
    names = {f.name for f in dataclasses.fields(Args)}
    unknown = sorted(set(map(str, values)) - names)
    if unknown:
        raise ConfigError(f"unknown training option(s) {', '.join(unknown)}; allowed: {', '.join(sorted(names))}")
    args = Args(**values)
    check_args(args)
    return args


def _whole(low: int, high: int | None = None, none: bool = False) -> tuple[Any, str]:
    def ok(v: Any) -> bool:
        return (none and v is None) or (isinstance(v, int) and not isinstance(v, bool) and low <= v
                                        and (high is None or v <= high))
    span = f">= {low}" if high is None else f"{low}..{high}"
    return ok, ("None or " if none else "") + f"a whole number {span}"


def _number(low: float, high: float = math.inf, *, low_open: bool = False, high_open: bool = False,
            none: bool = False) -> tuple[Any, str]:
    def ok(v: Any) -> bool:
        if none and v is None:
            return True
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            return False
        return (v > low if low_open else v >= low) and (v < high if high_open else v <= high)
    span = (("(" if low_open else "[") + f"{low:g}, " + (f"{high:g}" + (")" if high_open else "]"))
            if math.isfinite(high) else f"{'>' if low_open else '>='} {low:g}")
    return ok, ("None or " if none else "") + ("a finite number " + span if math.isfinite(high) else
                                               f"a finite number {span}")


def _choice(*allowed: str) -> tuple[Any, str]:
    return (lambda v: v in allowed), " or ".join(repr(a) for a in allowed)


def _text(none: bool = False) -> tuple[Any, str]:
    return (lambda v: (none and v is None) or (isinstance(v, str) and v != "")), ("None or " if none else "") + "text"


def _texts() -> tuple[Any, str]:
    return (lambda v: isinstance(v, list) and all(isinstance(x, str) and x for x in v)), "a list of agent specs"


def _flag() -> tuple[Any, str]:
    return (lambda v: isinstance(v, bool)), "true or false"


CHECKS: dict[str, tuple[Any, str]] = {
    "exp_name": ((lambda v: isinstance(v, str) and v != "" and "/" not in v and v not in (".", "..")),
                 "a word without '/'"),
    "seed": _whole(0, 2**63 - 1),
    "ruleset": _text(),
    "num_players": _whole(1, none=True),
    "rules": ((lambda v: isinstance(v, dict) and all(isinstance(k, str) for k in v)),
              f"a mapping of rule options ({RULE_SYNTAX})"),
    "max_deals": _whole(1),
    "backend": _choice("batched", "reference"),
    "compile_env": _flag(),
    "device": _text(),
    "threads": _whole(1, 1024),
    "total_decisions": _whole(1),
    "num_envs": _whole(1, 1 << 22),
    "num_steps": _whole(1, 1 << 20),
    "finish_steps": _whole(0, 1 << 20),
    "learning_rate": _number(0, 1, low_open=True),
    "anneal_lr": _flag(),
    "gamma": _number(0, 1, low_open=True),
    "gae_lambda": _number(0, 1),
    "num_minibatches": _whole(1),
    "update_epochs": _whole(1),
    "clip_coef": _number(0, low_open=True),
    "clip_vloss": _flag(),
    "ent_coef": _number(0),
    "vf_coef": _number(0),
    "max_grad_norm": _number(0, low_open=True),
    "target_kl": _number(0, low_open=True, none=True),
    "reward_scale": _number(0, low_open=True),
    "hidden": ((lambda v: isinstance(v, list) and 1 <= len(v) <= MAX_LAYERS
                and all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= MAX_WIDTH for h in v)),
               f"a list of 1 to {MAX_LAYERS} layer sizes, each a whole number 1..{MAX_WIDTH} (--hidden 256 256)"),
    "trump_first": _flag(),
    "central_critic": _flag(),
    "self_play_prob": _number(0, 1),
    "baseline_prob": _number(0, 1),
    "pool_size": _whole(0, 1024),
    "pool_every": _whole(1),
    "baseline_opponents": _texts(),
    "checkpoint_every": _whole(1),
    "eval_every": _whole(0),
    "eval_deals": _whole(1),
    "eval_agents": _texts(),
    "final_eval_deals": _whole(0),
    "final_eval_agents": _texts(),
    "runs_root": _text(),
    "run_dir": _text(none=True),
    "imitate_decisions": _whole(0),
    "imitate_teacher": _text(),
    "imitate_learning_rate": _number(0, 1, low_open=True),
    "imitate_student": _number(0, 1),
    "magnet": _text(none=True),
    "magnet_coef": _number(0),
    "init_from": _text(none=True),
    "resume": _text(none=True),
    "max_updates": _whole(1, none=True),
    "max_minutes": _number(0, low_open=True, none=True),
    "config": _text(none=True),
}
"""What every training option allows: ``(check, description)``."""


def check_args(args: Args) -> None:
    """Raise :class:`~mauscheln_env.errors.ConfigError` naming the first option whose value is not allowed."""
    for f in dataclasses.fields(Args):
        ok, allowed = CHECKS[f.name]
        value = getattr(args, f.name)
        if not ok(value):
            raise ConfigError(f"{f.name}={shown(value)} is not allowed; allowed: {allowed}")
    if args.backend != "batched" and args.compile_env:
        raise ConfigError("compile_env=True needs backend='batched'; allowed: --no-compile-env with "
                          "backend='reference'")
    check_device(args.device)
    from agents.base import agent_class, parse_agent_spec
    from agents.tensor import BATCHED_OPPONENTS

    for key in ("baseline_opponents", "eval_agents", "final_eval_agents"):
        for spec in getattr(args, key):
            agent_class(parse_agent_spec(spec)[0])  # an unknown agent fails now, not after training
    slow = [name for name in args.baseline_opponents if name.split(":")[0] not in BATCHED_OPPONENTS]
    if slow and args.backend != "reference":
        raise ConfigError(f"baseline_opponents {slow} need backend='reference' (they read the info dicts that only "
                          f"the reference engine produces); on the batched backend use {sorted(BATCHED_OPPONENTS)}")
    if args.imitate_decisions:
        teacher = parse_agent_spec(args.imitate_teacher)[0]
        if teacher not in BATCHED_OPPONENTS or teacher == "random":
            raise ConfigError(f"imitate_teacher={args.imitate_teacher!r} is not allowed; allowed: an agent that runs "
                              f"batched, {sorted(set(BATCHED_OPPONENTS) - {'random'})}")
        if args.backend != "batched":
            raise ConfigError("imitate_decisions needs backend='batched' (the teacher is a tensor agent); allowed: "
                              "--backend batched, or imitate_decisions=0")
        if args.imitate_decisions // (args.num_envs * args.num_steps) >= max(1, args.total_decisions
                                                                            // (args.num_envs * args.num_steps)):
            raise ConfigError(f"imitate_decisions={args.imitate_decisions} leaves no self-play update of "
                              f"total_decisions={args.total_decisions}; allowed: fewer imitation decisions than "
                              "total_decisions minus one update")
    if (args.magnet is None) != (args.magnet_coef == 0):
        raise ConfigError(f"magnet={args.magnet!r} with magnet_coef={args.magnet_coef}: allowed: both (a policy "
                          "and a weight > 0) or neither")
    if args.magnet == "imitation" and not args.imitate_decisions:
        raise ConfigError("magnet='imitation' needs imitate_decisions > 0 (the magnet is the learner as behaviour "
                          "cloning left it); allowed: imitate_decisions > 0, or a policy file as the magnet")
    rules_config(args)


def rules_config(args: Args) -> Any:
    """The :class:`~mauscheln_env.config.RuleConfig` the run trains on (bad rules raise ConfigError)."""
    return rule_config(args.ruleset, args.num_players, args.rules, max_deals=(args.max_deals, "--max-deals"))


def check_device(name: str) -> torch.device:
    """``torch.device(name)``, refused unless this machine has it."""
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError, ValueError):
        raise ConfigError(f"device={name!r} is not a torch device; allowed: 'cpu'"
                          + (", 'cuda' or 'cuda:N'" if torch.cuda.is_available() else "")) from None
    if device.type == "cuda" and (not torch.cuda.is_available()
                                  or (device.index or 0) >= torch.cuda.device_count()):
        have = torch.cuda.device_count() if torch.cuda.is_available() else 0
        raise ConfigError(f"device={name!r} is not available here ({have} CUDA device(s)); allowed: 'cpu'"
                          + (f" or 'cuda:0'..'cuda:{have - 1}'" if have else ""))
    if device.type not in ("cpu", "cuda"):
        raise ConfigError(f"device={name!r} is not supported; allowed: 'cpu' or 'cuda'")
    return device


def seed_for(seed: int, *keys: int) -> int:
    return int(np.random.SeedSequence([seed, *keys]).generate_state(1)[0])


# ---------------------------------------------------------------------------- checkpoints
def save_checkpoint(run_dir: Path, update: int, net: PolicyNet, optimizer: torch.optim.Optimizer,
                    game: Game, args: Args, pool: list[dict[str, torch.Tensor]], stats: dict[str, Any]) -> Path:
    """Write ``checkpoints/update_XXXXXX/`` atomically (temporary folder, then a rename), then point ``latest`` at it.

    Non-finite weights are refused (:class:`~agents.learned.CheckpointError`) before anything is written.
    """
    from safetensors.torch import save_file

    from agents.learned import check_finite

    check_finite(net, f"update {update}")
    ckpt_root = run_dir / "checkpoints"
    ckpt_root.mkdir(parents=True, exist_ok=True)
    final = ckpt_root / f"update_{update:06d}"
    tmp = Path(tempfile.mkdtemp(dir=ckpt_root, prefix=".tmp_"))
    try:
        save_policy(tmp / "policy.safetensors", net, game, extra={"update": update, "args": dataclasses.asdict(args)})
        opt_tensors, opt_meta = _flatten_optimizer(optimizer)
        save_file(opt_tensors, str(tmp / "optimizer.safetensors"), metadata={"state": json.dumps(opt_meta)})
        pool_tensors = {f"{i}.{k}": v.contiguous() for i, sd in enumerate(pool) for k, v in sd.items()}
        save_file(pool_tensors or {"empty": torch.zeros(1)}, str(tmp / "pool.safetensors"),
                  metadata={"size": str(len(pool))})
        (tmp / "trainer.json").write_text(json.dumps({"update": update, "stats": stats}, indent=1))
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    atomic_write_text(ckpt_root / "latest", final.name)
    return final


def clean_partial_writes(run_dir: Path) -> list[str]:
    """Remove what an interrupted checkpoint write left behind (``checkpoints/.tmp_*``, temporary files)."""
    root = run_dir / "checkpoints"
    removed = []
    for path in sorted(root.glob(".tmp_*")) + sorted(root.glob(".latest.*.tmp")) + sorted(root.glob("latest.tmp")):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        removed.append(path.name)
    return removed


def _flatten_optimizer(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    sd = optimizer.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, Any] = {}
    for pid, state in sd["state"].items():
        for key, value in state.items():
            if torch.is_tensor(value):
                tensors[f"{pid}.{key}"] = value.detach().cpu().contiguous()
            else:
                scalars[f"{pid}.{key}"] = value
    return tensors or {"empty": torch.zeros(1)}, {"param_groups": sd["param_groups"], "scalars": scalars}


def _read_safetensors(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file, safe_open

    from agents.learned import CheckpointError

    if not path.is_file():
        raise CheckpointError(f"{path} is missing; a checkpoint holds policy, optimizer and pool safetensors "
                              "and trainer.json")
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
        return load_file(str(path)), meta
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{path} is not a readable safetensors file: {exc}") from exc


def load_checkpoint(run_dir: Path, net: PolicyNet, optimizer: torch.optim.Optimizer, game: Game
                    ) -> tuple[int, list[dict[str, torch.Tensor]], dict[str, Any]]:
    """Restore the last checkpoint of ``run_dir``; returns (update, pool, stats).

    Every file is checked (the ``latest`` pointer stays inside the run; the policy fits this game and network;
    the optimizer state, the pool snapshots and the trainer state have the shapes and types this run needs)
    and anything wrong raises :class:`~agents.learned.CheckpointError` naming the file.
    """
    from agents.learned import CheckpointError, check_compatible, latest_checkpoint, read_policy

    ckpt = latest_checkpoint(run_dir)
    loaded, layout, extra = read_policy(ckpt / "policy.safetensors")
    check_compatible(layout, game, str(ckpt))
    if loaded.spec != net.spec:
        raise CheckpointError(f"{ckpt} holds a network of shape {loaded.spec}, this run builds {net.spec}")
    update = extra.get("update")
    if not isinstance(update, int) or isinstance(update, bool) or update < 1:
        raise CheckpointError(f"{ckpt / 'policy.safetensors'}: extra update={update!r}; allowed: a whole number >= 1")
    shapes = {k: v.shape for k, v in net.state_dict().items()}

    # trainer state
    path = ckpt / "trainer.json"
    try:
        trainer = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{path} is missing") from None
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path} is not JSON: {exc}") from exc
    stats = trainer.get("stats") if isinstance(trainer, dict) else None
    if not isinstance(trainer, dict) or trainer.get("update") != update or not isinstance(stats, dict):
        raise CheckpointError(f"{path} must be a mapping with update={update} and a stats mapping")

    # pool
    path = ckpt / "pool.safetensors"
    pool_tensors, meta = _read_safetensors(path)
    size = meta.get("size", "")
    if not size.isdigit() or int(size) > 1024:
        raise CheckpointError(f"{path}: metadata size={size!r}; allowed: a whole number 0..1024")
    pool = [{k.split(".", 1)[1]: v for k, v in pool_tensors.items() if k.split(".", 1)[0] == str(i)}
            for i in range(int(size))]
    for i, sd in enumerate(pool):
        if {k: v.shape for k, v in sd.items()} != shapes:
            raise CheckpointError(f"{path}: snapshot {i} does not have this run's network shape")
        if not all(bool(torch.isfinite(v).all()) for v in sd.values() if v.is_floating_point()):
            raise CheckpointError(f"{path}: snapshot {i} holds NaN or infinite weights")
    scores = stats.get("pool_scores", [0.0] * len(pool))
    decisions = stats.get("decisions", 0)
    if (not isinstance(scores, list) or len(scores) != len(pool)
            or not all(isinstance(x, (int, float)) and math.isfinite(x) for x in scores)
            or not isinstance(decisions, int) or decisions < 0):
        raise CheckpointError(f"{ckpt / 'trainer.json'}: stats must hold {len(pool)} finite pool_scores and "
                              "decisions >= 0")

    # optimizer
    path = ckpt / "optimizer.safetensors"
    tensors, meta = _read_safetensors(path)
    try:
        opt_meta = json.loads(meta["state"])
        groups, scalars = opt_meta["param_groups"], opt_meta["scalars"]
        if not isinstance(groups, list) or not isinstance(scalars, dict) or not all(
                isinstance(g, dict) and isinstance(g.get("lr"), (int, float)) and math.isfinite(g["lr"])
                for g in groups):
            raise TypeError("param_groups must be a list of mappings with a finite lr, and scalars a mapping")
        state: dict[int, dict[str, Any]] = {}
        for key, value in [*tensors.items(), *scalars.items()]:
            if key == "empty":
                continue
            pid, name = key.split(".", 1)
            state.setdefault(int(pid), {})[name] = value
        params = list(net.parameters())
        for pid, entry in state.items():
            if not 0 <= pid < len(params):
                raise ValueError(f"state for parameter {pid}, the network has {len(params)}")
            for name, value in entry.items():
                if torch.is_tensor(value) and value.dim() and value.shape != params[pid].shape:
                    raise ValueError(f"{name} of parameter {pid} has shape {tuple(value.shape)}, "
                                     f"expected {tuple(params[pid].shape)}")
                if torch.is_tensor(value) and value.is_floating_point() and not bool(torch.isfinite(value).all()):
                    raise ValueError(f"{name} of parameter {pid} holds NaN or infinite values")
        optimizer.load_state_dict({"state": state, "param_groups": groups})
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as exc:
        raise CheckpointError(f"{path} is not an optimizer state of this run: {exc}") from exc
    net.load_state_dict(loaded.state_dict())
    return update, pool, stats


# ---------------------------------------------------------------------------- the run
class TrainingInterrupted(Exception):
    """Ctrl-C stopped the run at once; the message says how to resume."""


class _StopOnInterrupt:
    """While active, Ctrl-C asks the run to stop after the current update (which then writes a checkpoint);
    a second Ctrl-C stops at once. Only in the main thread (signals go there)."""

    def __init__(self) -> None:
        self.requested = False
        self.run_dir: Path | None = None
        self._old: Any = None

    def __enter__(self) -> _StopOnInterrupt:
        import threading

        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc: object) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
            self._old = None


def _resume_hint(run_dir: Path) -> str:
    return f"resume with: {PROG} --resume {run_dir}"


def train(args: Args) -> dict[str, Any]:
    """Train (or, with ``args.resume``, continue) a run; returns a summary. Ctrl-C during the updates finishes the
    update, writes a checkpoint and returns with ``summary["interrupted"]``; a second Ctrl-C stops at once."""
    with _StopOnInterrupt() as stop:
        try:
            return _train(args, stop)
        except KeyboardInterrupt:
            if stop.run_dir is None or latest_checkpoint_name(stop.run_dir) is None:
                raise TrainingInterrupted("interrupted before the first checkpoint; nothing to resume") from None
            raise TrainingInterrupted(f"interrupted; the last checkpoint is {latest_checkpoint_name(stop.run_dir)}, "
                                      f"{_resume_hint(stop.run_dir)}") from None


def latest_checkpoint_name(run_dir: Path) -> str | None:
    """The name of the run's latest checkpoint, or None."""
    from agents.learned import CheckpointError, latest_checkpoint

    try:
        latest = latest_checkpoint(run_dir, missing_ok=True)
    except CheckpointError:
        return None
    return None if latest is None else latest.name


def _train(args: Args, stop: _StopOnInterrupt) -> dict[str, Any]:
    # -- run directory, config, seeding -------------------------------------------------------------
    check_args(args)
    if args.resume:
        run_dir = Path(args.resume)
        saved = run_dir / "config.yaml"
        if not saved.is_file():
            raise ConfigError(f"{run_dir} is not a run directory (no config.yaml); allowed: a directory written by "
                              f"{PROG}")
        args = dataclasses.replace(load_config(saved, "run config"), resume=args.resume, max_updates=args.max_updates,
                                   max_minutes=args.max_minutes)
        removed = clean_partial_writes(run_dir)
        if removed:
            print(f"removed what an interrupted checkpoint write left behind: {', '.join(removed)}")
    else:
        stamp = int(time.time())
        run_dir = Path(args.run_dir or Path(args.runs_root) / f"{args.ruleset}__{args.exp_name}__{args.seed}__{stamp}")
        if args.run_dir is None and Path(args.ruleset).suffix in (".yaml", ".yml", ".json"):
            run_dir = Path(args.runs_root) / f"{Path(args.ruleset).stem}__{args.exp_name}__{args.seed}__{stamp}"
        if (run_dir / "config.yaml").exists() or (run_dir / "checkpoints").exists():
            raise ConfigError(f"run directory {run_dir} already holds a run; allowed: a new directory, or "
                              f"--resume {run_dir} to continue it")
        if run_dir.exists() and not run_dir.is_dir():
            raise ConfigError(f"run directory {run_dir} is a file; allowed: a new directory")
    device = check_device(args.device)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    config = rules_config(args)
    game = Game(config)
    # The batched engine may hand out its internal buffers (copy=False): the rollout copies them into storage.
    env_kwargs = {"copy": False, "compile": args.compile_env} if args.backend == "batched" else {}
    if args.backend == "batched":
        keep_freed_memory()  # every step allocates and frees the same large blocks
    envs = make_vector_env(config, args.num_envs, backend=args.backend, device=device, seed=args.seed, **env_kwargs)
    B, n, T = args.num_envs, envs.num_players, args.num_steps
    D, A = envs.obs_size, envs.num_actions
    critic_size = (envs.state_size + n) if args.central_critic else None
    from agents.learned import trump_first_tables

    net = PolicyNet(NetSpec(D, A, tuple(args.hidden), critic_size, args.trump_first),
                    trump_first_tables(game) if args.trump_first else None).to(device)
    if args.init_from is not None and not args.resume:
        _init_from(net, args.init_from, game)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    num_updates = max(1, args.total_decisions // (B * T))
    start_update, pool, stats = 0, [], {}
    if args.resume:
        from agents.learned import CheckpointError

        try:
            start_update, pool, stats = load_checkpoint(run_dir, net, optimizer, game)
        except CheckpointError as exc:
            raise CheckpointError(f"{exc}; allowed: a checkpoint written by {PROG} for this run (to resume from an "
                                  "earlier one, write its folder name into checkpoints/latest)") from None
    baselines = _baseline_players(args, game, device)
    imitation_updates = args.imitate_decisions // (B * T)
    teacher = None
    if imitation_updates > start_update:
        from agents.base import parse_agent_spec
        from agents.tensor import batched_opponent

        name, params = parse_agent_spec(args.imitate_teacher)
        teacher = batched_opponent(name, game, device, seed=seed_for(args.seed, 8), **params)
    # Everything is checked: make the run directory (removed again if the start fails half-way).
    created = not run_dir.exists()
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        if not args.resume:
            saved_args = {k: v for k, v in dataclasses.asdict(args).items()
                          if k not in ("resume", "max_updates", "max_minutes")}
            saved_args["run_dir"] = str(run_dir)
            atomic_write_text(run_dir / "config.yaml", yaml.safe_dump(saved_args, sort_keys=False))
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(run_dir))
    except BaseException as exc:
        if created:
            shutil.rmtree(run_dir, ignore_errors=True)
        if isinstance(exc, OSError):
            raise ConfigError(f"cannot write the run directory {run_dir}: {exc.strerror or exc}; allowed: a "
                              "writable place (--run-dir or --runs-root)") from exc
        raise
    stop.run_dir = run_dir
    if args.resume:
        print(f"run directory: {run_dir} (resumed at update {start_update}/{num_updates})", flush=True)
    else:
        print(f"run directory: {run_dir}", flush=True)
    if start_update == 0:
        writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
            f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()))
    pool_scores: list[float] = stats.get("pool_scores", [0.0] * len(pool))
    opponent_nets = [_frozen(sd, net.spec, device) for sd in pool]

    # -- storage ---------------------------------------------------------------------------------
    TE = T + args.finish_steps  # room for the steps that finish the deals still running
    obs_buf = torch.zeros(TE, B, D, device=device)  # the network's input (net.prepare), not the raw observation
    trump_buf = torch.zeros(TE, B, dtype=torch.long, device=device)
    mask_buf = torch.zeros(TE, B, A, dtype=torch.bool, device=device)
    critic_buf = torch.zeros(TE, B, critic_size or 0, device=device)
    act_buf = torch.zeros(TE, B, dtype=torch.long, device=device)
    logp_buf = torch.zeros(TE, B, device=device)
    val_buf = torch.zeros(TE, B, device=device)
    seat_buf = torch.zeros(TE, B, dtype=torch.long, device=device)
    learner_buf = torch.zeros(TE, B, dtype=torch.bool, device=device)
    rew_buf = torch.zeros(TE, B, n, device=device)
    done_buf = torch.zeros(TE, B, dtype=torch.bool, device=device)
    summary: dict[str, Any] = {"run_dir": str(run_dir)}
    decisions_done = int(stats.get("decisions", start_update * B * T))  # decisions kept in rollouts so far
    decisions_at_start = decisions_done
    t_start, cpu_start = time.perf_counter(), time.process_time()
    # A policy as the magnet is read (and checked) now; "imitation" is taken at the first PPO update.
    magnet = _magnet_net(args, net, game, run_dir, device) if args.magnet not in (None, "imitation") else None

    for update in range(start_update, num_updates):
        if args.max_updates is not None and update - start_update >= args.max_updates:
            break
        t_update = time.perf_counter()
        optimizer.param_groups[0]["lr"] = args.learning_rate * ((1.0 - update / num_updates) if args.anneal_lr else 1.0)
        if update < imitation_updates:  # behaviour cloning of the teacher before self-play
            optimizer.param_groups[0]["lr"] = args.imitate_learning_rate
            student = args.imitate_student * update / max(1, imitation_updates - 1)
            n_kept, im = _imitation_round(net, teacher, envs, args, optimizer, update,
                                          (obs_buf, trump_buf, mask_buf, act_buf, seat_buf, rew_buf, done_buf,
                                           critic_buf), student=student)
            decisions_done += n_kept
            dt = time.perf_counter() - t_update
            im["student_share"] = student
            for key, value in im.items():
                writer.add_scalar(f"imitation/{key}", value, decisions_done)
            writer.add_scalar("charts/decisions_per_second", n_kept / dt, decisions_done)
            print(f"update {update + 1}/{num_updates}  decisions {decisions_done:,}  {n_kept / dt:,.0f} dec/s  "
                  f"imitation of {args.imitate_teacher}: loss {im['policy_loss']:.3f}  v {im['value_loss']:.3f}  "
                  f"agreement {im['agreement']:.3f}" + (f"  student {student:.2f}" if student else ""), flush=True)
        else:
            gen = torch.Generator(device="cpu").manual_seed(seed_for(args.seed, update, 1))
            rng = np.random.default_rng(seed_for(args.seed, update, 2))
            for k, player in enumerate(baselines):  # scripted opponents that sample draw from (seed, update) too
                if isinstance(player, PythonSeats):  # one Python agent per seat (reference backend)
                    for seat, agent in enumerate(player.agents):
                        agent.reset(seed_for(args.seed, update, 7, k, seat))
                elif hasattr(player, "generator"):
                    player.generator.manual_seed(seed_for(args.seed, update, 7, k))

            # -- rollout: fresh sessions, one opponent assignment per session ------------------------
            obs, mask, to_act = envs.reset(seed=seed_for(args.seed, update, 3))
            controllers = _assign(rng, B, n, args, len(opponent_nets), len(baselines), pool_scores)
            chips_won = torch.zeros(B, n)
            pool_won = torch.zeros(len(opponent_nets) + 1)  # learner chips against snapshot k (index k)
            pool_deals = torch.zeros(len(opponent_nets) + 1)
            phase_stats = PhaseStats(game)
            net.eval()
            # Steps 0..T-1 for every session; then, while some deal that was running at T has not ended, step on
            # (at most finish_steps more). Session b's decisions count up to cut_at[b]: the step that ended that
            # deal (or T-1 when no deal was running); later steps of b are stepped but neither kept nor learned.
            running = torch.zeros(B, dtype=torch.bool, device=device)  # a deal running at T that has not ended yet
            cut_at = torch.full((B,), T - 1, dtype=torch.long, device=device)
            boot = torch.zeros(B, n, device=device)  # each seat's value after its session's cut
            last_kind = torch.zeros(B, dtype=torch.long, device=device)
            last_ended = torch.zeros(B, dtype=torch.bool, device=device)
            t = 0
            while True:
                if t == T:
                    running = (last_kind == 0) & ~last_ended
                    settled = ~running & ~last_ended  # a deal ended at T-1 and the session goes on
                    if settled.any():
                        rows = settled.nonzero().squeeze(-1)
                        boot[rows] = _boot_values(net, envs, args, n, rows)
                if t >= T and (not running.any() or t == TE):
                    break
                kept = torch.ones(B, dtype=torch.bool, device=device) if t < T else running
                seat = to_act.to(device)
                ctrl = controllers[torch.arange(B), seat.cpu()].to(device)
                if t < T:
                    rows = None
                    x, trump, critic_in, action, logp, value = _policy_step(
                        net, opponent_nets, baselines, envs, args, obs, mask, seat, ctrl, gen, None)
                else:
                    # Finishing the deals still running: only those sessions' decisions are kept, so only they ask
                    # the players; every other session (its rollout cut already) takes its first legal action.
                    rows = running.nonzero().squeeze(-1)
                    action = mask.to(torch.uint8).argmax(1)
                    val_buf[t] = 0.0
                    x, trump, critic_in, action[rows], logp, value = _policy_step(
                        net, opponent_nets, baselines, envs, args, obs[rows], mask[rows], seat[rows], ctrl[rows], gen,
                        rows)
                at = t if rows is None else (t, rows)
                obs_buf[at], val_buf[at], logp_buf[at] = x, value, logp
                if trump is not None:
                    trump_buf[at] = trump
                if args.central_critic:
                    critic_buf[at] = critic_in
                mask_buf[t], act_buf[t], seat_buf[t] = mask, action, seat
                learner_buf[t] = (ctrl == 0) & kept
                phase_stats.record(obs, action, seat, (ctrl == 0) & kept)
                step = envs.step(action)
                obs, mask, to_act = step.obs.to(device), step.mask.to(device), step.to_act
                rew_buf[t] = step.rewards.to(device) * kept[:, None]
                ended = (step.terminated | step.truncated).to(device)
                done_buf[t] = ended
                last_kind, last_ended = step.info["deal_kind"].to(device), ended
                rewards_cpu = rew_buf[t].cpu()
                chips_won += rewards_cpu
                if t >= T:  # a deal that was running at T ended: cut its session here
                    cut = running & (ended | (last_kind == DEAL_SETTLED) | (last_kind == DEAL_NO_PLAY)
                                     | (last_kind == DEAL_MOUCHE))
                    if cut.any():
                        cut_at[cut] = t
                        running &= ~cut
                        goes_on = cut & ~ended  # a session of several deals: bootstrap at the next deal
                        if goes_on.any():
                            rows = goes_on.nonzero().squeeze(-1)
                            boot[rows] = _boot_values(net, envs, args, n, rows)
                if opponent_nets:  # the learner's result (chips per learner seat) against each snapshot it met
                    opp = controllers.max(dim=1).values
                    is_learner = (controllers == 0).float()
                    vs_pool = ((opp >= 1) & (opp <= len(opponent_nets)) & (step.info["deal_kind"].cpu() > 0)
                               & kept.cpu())
                    if vs_pool.any():
                        rows = vs_pool.nonzero().squeeze(-1)
                        per_seat = (rewards_cpu[rows] * is_learner[rows]).sum(1) / is_learner[rows].sum(1)
                        pool_won.index_add_(0, opp[rows], per_seat)
                        pool_deals.index_add_(0, opp[rows], torch.ones(len(rows)))
                if ended.any():  # new sessions get new opponents
                    idx = ended.nonzero().squeeze(-1).cpu()
                    controllers[idx] = _assign(rng, len(idx), n, args, len(opponent_nets), len(baselines), pool_scores)
                t += 1
            steps = t
            if running.any():  # deals still running after finish_steps: bootstrap from the seats' observations
                cut_at[running] = steps - 1
                rows = running.nonzero().squeeze(-1)
                boot[rows] = _boot_values(net, envs, args, n, rows)

            # -- GAE along each seat's own decisions, each session up to its cut ---------------------------
            adv_buf, ret_buf = _seat_gae(rew_buf[:steps] * args.reward_scale, val_buf[:steps], seat_buf[:steps],
                                         done_buf[:steps], boot, cut_at, args.gamma, args.gae_lambda)

            # -- PPO update over the learner's decisions -------------------------------------------------
            if args.magnet is not None and magnet is None:
                magnet = _magnet_net(args, net, game, run_dir, device)
            net.train()
            kept_steps = torch.arange(steps, device=device)[:, None] <= cut_at[None, :]
            # The learner's decisions, as rows of the flattened buffers: each minibatch gathers its rows straight
            # from the storage (no copy of every learner row first); the small per-decision columns are taken once.
            sel = (learner_buf[:steps] & kept_steps).reshape(-1).nonzero().squeeze(-1)
            flat_obs, flat_mask = obs_buf[:steps].view(-1, D), mask_buf[:steps].view(-1, A)
            flat_critic = critic_buf[:steps].view(steps * B, -1) if args.central_critic else None
            b_trump = trump_buf[:steps].reshape(-1)[sel] if args.trump_first else None
            b_act, b_logp = act_buf[:steps].reshape(-1)[sel], logp_buf[:steps].reshape(-1)[sel]
            b_adv, b_ret = adv_buf.reshape(-1)[sel], ret_buf.reshape(-1)[sel]
            b_val = val_buf[:steps].reshape(-1)[sel]
            size = int(sel.numel())
            # Exactly num_minibatches nearly equal minibatches (no tiny remainder batch with its own full step);
            # the logged losses are means over the last epoch's minibatches.
            chunks = min(args.num_minibatches, max(size, 1))
            clipfracs, approx_kl, old_kl = [], torch.tensor(0.0), torch.tensor(0.0)
            pg_loss = v_loss = entropy_loss = magnet_kl = 0.0
            for _epoch in range(args.update_epochs if size else 0):  # no learner decision: nothing to learn
                order = torch.randperm(size, generator=gen).to(device)
                epoch_losses = []
                for idx in torch.tensor_split(order, chunks):
                    rows = sel[idx]
                    mb_obs, mb_mask = flat_obs.index_select(0, rows), flat_mask.index_select(0, rows)
                    logits = net.logits_of(mb_obs, None if b_trump is None else b_trump[idx], mb_mask)
                    logp_all, entropy = masked_distribution(logits, mb_mask)
                    new_logp = logp_all.gather(1, b_act[idx].unsqueeze(1)).squeeze(1)
                    ratio = (new_logp - b_logp[idx]).exp()
                    with torch.no_grad():
                        old_kl = (-(new_logp - b_logp[idx])).mean()
                        approx_kl = ((ratio - 1) - (new_logp - b_logp[idx])).mean()
                        clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                    adv = b_adv[idx]
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8) if adv.numel() > 1 else adv
                    pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                    new_v = net.value_of(flat_critic.index_select(0, rows) if args.central_critic else mb_obs)
                    if args.clip_vloss:
                        v_clipped = b_val[idx] + (new_v - b_val[idx]).clamp(-args.clip_coef, args.clip_coef)
                        vl = 0.5 * torch.max((new_v - b_ret[idx]) ** 2, (v_clipped - b_ret[idx]) ** 2).mean()
                    else:
                        vl = 0.5 * ((new_v - b_ret[idx]) ** 2).mean()
                    ent = entropy.mean()
                    loss = pg - args.ent_coef * ent + args.vf_coef * vl
                    mkl = torch.zeros(())
                    if magnet is not None:  # KL(policy || magnet) over the legal actions
                        with torch.no_grad():
                            magnet_logp = torch.log_softmax(
                                magnet.logits_of(mb_obs, None if b_trump is None else b_trump[idx], mb_mask), dim=-1)
                        p = torch.where(mb_mask, logp_all, 0.0).exp()
                        mkl = torch.where(mb_mask, p * (logp_all - magnet_logp), 0.0).sum(-1).mean()
                        loss = loss + args.magnet_coef * mkl
                    optimizer.zero_grad()
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                    optimizer.step()
                    epoch_losses.append((pg.item(), vl.item(), ent.item(), mkl.item()))
                pg_loss, v_loss, entropy_loss, magnet_kl = (float(np.mean(col)) for col in zip(*epoch_losses))
                if args.target_kl is not None and approx_kl > args.target_kl:
                    break

            # -- pool, bookkeeping, logs ----------------------------------------------------------------
            _update_pool_scores(pool_scores, pool_won[1:], pool_deals[1:])
            for k, score in enumerate(pool_scores):
                writer.add_scalar(f"pool/learner_chips_per_deal_vs_snapshot_{k}", score, decisions_done)
            if args.pool_size and (update + 1) % args.pool_every == 0:
                pool.append({k: v.detach().cpu().clone() for k, v in net.state_dict().items()})
                pool_scores.append(0.0)
                if len(pool) > args.pool_size:
                    pool.pop(0)
                    pool_scores.pop(0)
                opponent_nets = [_frozen(sd, net.spec, device) for sd in pool]
            n_kept = int(kept_steps.sum())
            decisions_done += n_kept
            dt = time.perf_counter() - t_update
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], decisions_done)
            writer.add_scalar("charts/decisions_per_second", n_kept / dt, decisions_done)
            writer.add_scalar("charts/stepped_decisions_per_second", steps * B / dt, decisions_done)
            writer.add_scalar("charts/finish_steps", steps - T, decisions_done)
            writer.add_scalar("charts/learner_decisions", size, decisions_done)
            writer.add_scalar("charts/chips_per_seat_per_rollout", float(chips_won.mean()), decisions_done)
            writer.add_scalar("losses/policy_loss", pg_loss, decisions_done)
            writer.add_scalar("losses/value_loss", v_loss, decisions_done)
            writer.add_scalar("losses/entropy", entropy_loss, decisions_done)
            if magnet is not None:
                writer.add_scalar("losses/magnet_kl", magnet_kl, decisions_done)
            writer.add_scalar("losses/approx_kl", float(approx_kl), decisions_done)
            writer.add_scalar("losses/old_approx_kl", float(old_kl), decisions_done)
            writer.add_scalar("losses/clipfrac", float(np.mean(clipfracs)) if clipfracs else 0.0, decisions_done)
            with torch.no_grad():
                var_y = b_ret.var()
                explained = float("nan") if var_y == 0 else float(1 - (b_ret - b_val).var() / var_y)
            writer.add_scalar("losses/explained_variance", explained, decisions_done)
            for tag, value in phase_stats.summary().items():
                writer.add_scalar(f"charts/{tag}", value, decisions_done)
            print(f"update {update + 1}/{num_updates}  decisions {decisions_done:,}  {n_kept / dt:,.0f} dec/s  "
                  f"pg {pg_loss:+.3f}  v {v_loss:.3f}  ent {entropy_loss:.3f}  kl {float(approx_kl):.4f}", flush=True)
        stats = {"pool_scores": pool_scores, "decisions": decisions_done}
        out_of_time = args.max_minutes is not None and time.perf_counter() - t_start >= 60 * args.max_minutes
        last = update + 1 == num_updates or out_of_time
        if (update + 1) % args.checkpoint_every == 0 or last or stop.requested:
            save_checkpoint(run_dir, update + 1, net, optimizer, game, args, pool, stats)
        if stop.requested:
            writer.close()
            print(f"{PROG}: interrupted after update {update + 1}/{num_updates}, checkpoint written; "
                  f"{_resume_hint(run_dir)}", file=sys.stderr, flush=True)
            return {**summary, "interrupted": True, "update": update + 1}
        if args.eval_every and (update + 1) % args.eval_every == 0 and not last:
            # A fresh file name per evaluation: the match runner caches agents by their spec string.
            eval_path = run_dir / f"eval_policy_{update + 1:06d}.safetensors"
            table = evaluate_policy(net, game, args.eval_agents, args.eval_deals, args.seed, eval_path)
            eval_path.unlink(missing_ok=True)
            for row in table:
                if row["format"] == "both formats":
                    writer.add_scalar(f"eval/advantage_vs_{row['opponent']}", row["mean"], decisions_done)
                print(f"  eval vs {row['opponent']} ({row['format']}): {row['mean']:+.3f} "
                      f"[{row['low']:+.3f}, {row['high']:+.3f}] over {row['deals']} deals", flush=True)
        if out_of_time:
            print(f"stopped after update {update + 1}/{num_updates}: --max-minutes {args.max_minutes:g} reached "
                  f"({decisions_done:,} decisions; {_resume_hint(run_dir)})", flush=True)
            break

    elapsed = time.perf_counter() - t_start
    summary["decisions"], summary["seconds"] = decisions_done, elapsed
    summary["decisions_per_second"] = (decisions_done - decisions_at_start) / max(elapsed, 1e-9)
    # CPU seconds of this process (every thread): on a shared machine the wall clock also counts the waits
    summary["decisions_per_cpu_second"] = (decisions_done - decisions_at_start) / max(time.process_time() - cpu_start,
                                                                                     1e-9)
    summary["policy"] = str(save_policy(run_dir / "policy.safetensors", net, game,
                                        extra={"args": dataclasses.asdict(args), "decisions": decisions_done}))
    if args.final_eval_deals and (args.max_updates is None):
        from train.report import markdown_table, print_table, write_chart

        stop.__exit__()  # the training is saved: Ctrl-C now stops the evaluation at once
        print(f"\nfinal evaluation: {args.final_eval_deals} duplicate deals against each of "
              f"{', '.join(args.final_eval_agents)}", flush=True)
        table = evaluate_policy(net, game, args.final_eval_agents, args.final_eval_deals, args.seed + 10_000,
                                run_dir / "policy.safetensors", progress=True)
        summary["evaluation"] = table
        for row in table:
            if row["format"] == "both formats":
                writer.add_scalar(f"eval/final_advantage_vs_{row['opponent']}", row["mean"], decisions_done)
        atomic_write_text(run_dir / "evaluation.json", json.dumps(table, indent=1))
        atomic_write_text(run_dir / "evaluation.md", markdown_table(table) + "\n")
        print_table(table)
        chart = write_chart(table, run_dir / "evaluation.png", f"{config.ruleset}, {config.num_players} players, "
                            f"{args.final_eval_deals} duplicate deals per opponent")
        print(f"chart: {chart}" if chart else "no chart: matplotlib is not installed (pip install -e '.[plot]')")
    writer.close()
    print(f"\ntraining throughput: {summary['decisions_per_second']:,.0f} decisions/s end to end "
          f"({args.backend} backend, {args.num_envs} sessions, {args.threads} threads; "
          f"{summary['decisions_per_cpu_second']:,.0f} per CPU second)")
    print(f"run directory: {run_dir}\ntensorboard --logdir {run_dir}")
    return summary


# ---------------------------------------------------------------------------- helpers
def _imitation_round(net: PolicyNet, teacher: Any, envs: Any, args: Args, optimizer: torch.optim.Optimizer,
                     update: int, buffers: tuple[torch.Tensor, ...],
                     student: float = 0.0) -> tuple[int, dict[str, float]]:
    """One update of behaviour cloning: fresh sessions in which ``teacher`` plays every seat for ``num_steps``
    steps (in a ``student`` share of them, drawn per session, the network plays instead, sampling its policy,
    and the teacher only names its choice: DAgger), then ``update_epochs`` epochs of ``num_minibatches`` minibatches over every decision. The actor
    learns the teacher's choice (masked cross-entropy over the decisions with a choice), the critic the acting
    seat's return from that decision to its session's end (``reward_scale``, undiscounted) wherever the session
    ended within the update. Returns the decisions stepped and the last epoch's losses and agreement (the share
    of decisions with a choice where the network's likeliest action is the teacher's)."""
    obs_buf, trump_buf, mask_buf, act_buf, seat_buf, rew_buf, done_buf, critic_buf = buffers
    B, T, device = args.num_envs, args.num_steps, obs_buf.device
    gen = torch.Generator(device="cpu").manual_seed(seed_for(args.seed, update, 1))
    if hasattr(teacher, "generator"):
        teacher.generator.manual_seed(seed_for(args.seed, update, 7))
    obs, mask, to_act = envs.reset(seed=seed_for(args.seed, update, 3))
    by_student = (torch.rand(B, generator=gen) < student).to(device) if student > 0 else None  # sessions it plays
    net.eval()
    for t in range(T):
        with torch.inference_mode():
            x, trump = net.prepare(obs)
            action = teacher.act(obs, mask)
            played = action
            if by_student is not None:
                own = sample_actions(net.logits_of(x, trump, mask), gen if device.type == "cpu" else None)
                played = torch.where(by_student, own, action)
        obs_buf[t], mask_buf[t], act_buf[t], seat_buf[t] = x, mask, action, to_act.to(device)
        if trump is not None:
            trump_buf[t] = trump
        if args.central_critic:
            critic_buf[t] = _critic_input(envs, obs, seat_buf[t], envs.num_players)
        step = envs.step(played)
        rew_buf[t] = step.rewards.to(device)
        done_buf[t] = (step.terminated | step.truncated).to(device)
        obs, mask, to_act = step.obs.to(device), step.mask.to(device), step.to_act
    # each seat's return to its session's end, backwards; a session still running at T teaches no value
    n = rew_buf.shape[-1]
    ret, ended = torch.zeros(B, n, device=device), torch.zeros(B, dtype=torch.bool, device=device)
    ret_buf, has_ret = torch.zeros(T, B, device=device), torch.zeros(T, B, dtype=torch.bool, device=device)
    for t in reversed(range(T)):
        done = done_buf[t]
        ret = rew_buf[t] * args.reward_scale + ret * (~done)[:, None]
        ended |= done
        ret_buf[t], has_ret[t] = ret.gather(1, seat_buf[t][:, None]).squeeze(1), ended
    net.train()
    flat_x, flat_mask = obs_buf[:T].view(T * B, -1), mask_buf[:T].view(T * B, -1)
    flat_act, flat_trump = act_buf[:T].reshape(-1), trump_buf[:T].reshape(-1) if net.spec.trump_first else None
    flat_ret, flat_has = ret_buf.reshape(-1), has_ret.reshape(-1)
    flat_critic = critic_buf[:T].view(T * B, -1) if args.central_critic else flat_x
    choice = flat_mask.sum(1) > 1
    out: dict[str, float] = {}
    for _epoch in range(args.update_epochs):
        order = torch.randperm(T * B, generator=gen).to(device)
        losses = []
        for idx in torch.tensor_split(order, args.num_minibatches):
            mb_mask, mb_choice, mb_has = flat_mask[idx], choice[idx].float(), flat_has[idx].float()
            logits = net.logits_of(flat_x[idx], None if flat_trump is None else flat_trump[idx], mb_mask)
            logp_all, entropy = masked_distribution(logits, mb_mask)
            logp = logp_all.gather(1, flat_act[idx].unsqueeze(1)).squeeze(1)
            pl = -(logp * mb_choice).sum() / mb_choice.sum().clamp(min=1)
            value = net.value_of(flat_critic[idx])
            vl = 0.5 * (((value - flat_ret[idx]) ** 2) * mb_has).sum() / mb_has.sum().clamp(min=1)
            loss = pl + args.vf_coef * vl
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                agree = ((logits.argmax(1) == flat_act[idx]).float() * mb_choice).sum() / mb_choice.sum().clamp(min=1)
                ent = (entropy * mb_choice).sum() / mb_choice.sum().clamp(min=1)
            losses.append((pl.item(), vl.item(), agree.item(), ent.item()))
        out = dict(zip(("policy_loss", "value_loss", "agreement", "entropy"), (float(np.mean(c)) for c in zip(*losses))))
    return T * B, out


def _frozen(state_dict: dict[str, torch.Tensor], spec: NetSpec, device: torch.device) -> PolicyNet:
    net = PolicyNet(spec).to(device)
    net.load_state_dict(state_dict)
    net.eval()
    return net


def _assign(rng: np.random.Generator, count: int, n: int, args: Args, pool: int, baselines: int,
            pool_scores: list[float]) -> torch.Tensor:
    """Controllers per (session, seat): 0 the learner, 1..pool frozen snapshots, then the scripted baselines.

    A session is self-play with probability ``self_play_prob``; otherwise the
    learner holds k seats (k uniform in 1..n-1, at random places) and one
    opponent the others: a baseline with probability ``baseline_prob`` (when
    there are baselines and snapshots), else a snapshot, preferring those the
    learner beats least.
    """
    out = torch.zeros(count, n, dtype=torch.long)
    if not pool + baselines:
        return out
    pool_p = np.ones(max(pool, 1))
    if pool:
        scores = np.asarray(pool_scores[:pool], dtype=np.float64)
        pool_p = np.exp(-(scores - scores.max()) / 5.0)
    pool_p /= pool_p.sum()
    baseline_share = args.baseline_prob if (pool and baselines) else (1.0 if baselines else 0.0)
    for b in range(count):
        if rng.random() < args.self_play_prob:
            continue
        if rng.random() < baseline_share:
            opponent = 1 + pool + int(rng.integers(baselines))
        else:
            opponent = 1 + int(rng.choice(pool, p=pool_p))
        learners = rng.choice(n, size=int(rng.integers(1, n)), replace=False)
        out[b] = opponent
        out[b, learners] = 0
    return out


def _update_pool_scores(pool_scores: list[float], won: torch.Tensor, deals: torch.Tensor, decay: float = 0.7) -> None:
    """Exponential average of the learner's chips per deal against each snapshot."""
    for k in range(len(pool_scores)):
        if deals[k] > 0:
            pool_scores[k] = decay * pool_scores[k] + (1 - decay) * float(won[k] / deals[k])


def _boot_values(net: PolicyNet, envs: Any, args: Args, n: int, rows: torch.Tensor) -> torch.Tensor:
    """``[len(rows), n]``: the value of every seat's current observation in sessions ``rows`` (the critic's guess
    of what each seat gets from here), one forward pass over all (session, seat) pairs."""
    R = rows.shape[0]
    pair_rows = rows.repeat(n)  # seat-major: seat 0 of every row, then seat 1, ...
    pair_seats = torch.arange(n, device=rows.device).repeat_interleave(R)
    obs = _observe_rows(envs, pair_rows, pair_seats)
    with torch.inference_mode():
        values = net.value(_critic_rows(envs, pair_rows, pair_seats, n) if args.central_critic else obs)
    return values.view(n, R).t()


def _observe_rows(envs: Any, rows: torch.Tensor, seats: torch.Tensor) -> torch.Tensor:
    """``float32[len(rows), D]``: the observation of seat ``seats[i]`` in session ``rows[i]`` (rows may repeat).

    On the batched engine only those sessions are encoded (``envs.observe`` would encode every session);
    elsewhere one ``observe`` per seat, keeping the rows asked for.
    """
    if isinstance(envs, BatchedMauscheln):
        return envs.observe_rows(rows, seats)
    out = torch.empty(rows.shape[0], envs.obs_size)
    for s in seats.unique().tolist():
        at = (seats == s).nonzero().squeeze(-1)
        out[at] = envs.observe(s)[rows[at].cpu()].to(out.device)
    return out.to(rows.device)


def _critic_input(envs: Any, obs: torch.Tensor, seat: torch.Tensor, n: int) -> torch.Tensor:
    state = envs.state().to(obs.device)
    return torch.cat([state, torch.nn.functional.one_hot(seat.long(), n).float()], dim=1)


def _critic_rows(envs: Any, rows: torch.Tensor, seats: torch.Tensor, n: int) -> torch.Tensor:
    """The centralised critic's input (the full state of session ``rows[i]`` and seat ``seats[i]``)."""
    if isinstance(envs, BatchedMauscheln):
        state = envs.state_rows(rows)
    else:
        state = envs.state()[rows.cpu()].to(rows.device)
    return torch.cat([state, torch.nn.functional.one_hot(seats.long(), n).float()], dim=1)


def _seat_gae(rewards: torch.Tensor, values: torch.Tensor, seats: torch.Tensor, dones: torch.Tensor,
              boot: torch.Tensor, cut_at: torch.Tensor, gamma: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE along each seat's own decisions.

    ``rewards[t, b, s]`` is what seat s received in step t; a decision's reward is
    everything its seat received until its next decision. Session b's chains are
    cut after step ``cut_at[b]`` (later steps are ignored) and continue with
    ``boot[b, s]``, the value of what seat s gets after the cut (0 when the
    session ended there).
    """
    T, B, n = rewards.shape
    rows = torch.arange(B, device=rewards.device)
    next_value = boot.clone()
    next_adv = torch.zeros(B, n, device=rewards.device)
    pending = torch.zeros(B, n, device=rewards.device)
    advantages = torch.zeros(T, B, device=rewards.device)
    for t in range(T - 1, -1, -1):
        ended = dones[t]
        if ended.any():  # the session ended with action t: later steps belong to the next session
            next_value[ended] = 0.0
            next_adv[ended] = 0.0
            pending[ended] = 0.0
        cut = cut_at == t
        if cut.any():  # the session's chains end after this step (anything later is not this rollout's)
            next_value[cut] = torch.where(ended[cut, None], 0.0, boot[cut])
            next_adv[cut] = 0.0
            pending[cut] = 0.0
        pending += rewards[t]
        s = seats[t]
        r = pending[rows, s]
        pending[rows, s] = 0.0
        delta = r + gamma * next_value[rows, s] - values[t]
        adv = delta + gamma * lam * next_adv[rows, s]
        advantages[t] = adv
        next_value[rows, s] = values[t]
        next_adv[rows, s] = adv
    return advantages, advantages + values


class PhaseStats:
    """How often the learner takes each action of each decision phase, by seat (relative to the dealer) and
    pot size: declare ``mauscheln`` or ``pass``, go with, knock, Mousel's ``in`` / ``out``, Mouche's and
    Muschka's ``stay`` / ``pass``, trump naming, the exchange (``card``: a card marked, ``done``). Every phase
    but the trick play is counted, every action by its string (card actions together as ``card``), so each
    ruleset gets its own rates without a rule of its own here. TensorBoard tags
    ``charts/<phase>/<action>_rate/{all, seat_after_dealer_<p>, pot_lt_8, pot_8_23, pot_ge_24}``.
    """

    BUCKETS = ("pot_lt_8", "pot_8_23", "pot_ge_24")

    def __init__(self, game: Game) -> None:
        from mauscheln_env.observation import Observer

        self.game = game
        observer = Observer(game)
        self.phase_slice = observer.slice("phase")
        self.dealer_slice = observer.slice("dealer")
        self.pot_index = observer.offsets.get("pot")
        self.scale = float(game.config.options.get("bankroll", 1))
        self.phases = [(k, name) for k, name in enumerate(game.spec.phases) if name != "play"]
        named = {i: name for name, i in game.action_ids.items()}  # the others are cards
        self.labels = [named.get(i, "card") for i in range(game.num_actions)]
        self.counts: dict[str, torch.Tensor] = {}  # per phase: int64[A, n, 3] learner decisions

    def record(self, obs: torch.Tensor, action: torch.Tensor, seat: torch.Tensor, learner: torch.Tensor) -> None:
        phase = obs[:, self.phase_slice].argmax(1)
        has_phase = obs[:, self.phase_slice].sum(1) > 0
        dealer_rel = obs[:, self.dealer_slice].argmax(1)  # the dealer, seen from the acting seat
        position = (-dealer_rel) % self.game.n  # acting seat's place after the dealer: 0 = dealer
        pot = obs[:, self.pot_index] * self.scale if self.pot_index is not None else torch.zeros_like(phase, dtype=torch.float)
        bucket = torch.where(pot < 8, 0, torch.where(pot < 24, 1, 2))
        n, a = self.game.n, self.game.num_actions
        cell = (action * n + position) * 3 + bucket
        for k, name in self.phases:  # one count per (action, position, pot bucket), summed on the tensors
            sel = learner & has_phase & (phase == k)
            counts = torch.bincount(cell[sel], minlength=a * n * 3).view(a, n, 3)
            if name in self.counts:
                self.counts[name] += counts
            else:
                self.counts[name] = counts

    def summary(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for phase, counts in self.counts.items():
            grouped: dict[str, torch.Tensor] = {}
            for action, label in enumerate(self.labels):
                grouped[label] = grouped.get(label, 0) + counts[action].double()
            total = counts.sum(0).double()  # [n, 3]
            if total.sum() == 0:
                continue
            for label, hits in grouped.items():
                if hits.sum() == 0:
                    continue
                tag = f"{phase}/{label}_rate"
                rows = {f"{tag}/all": (hits.sum(), total.sum())}
                rows.update({f"{tag}/seat_after_dealer_{p}": (hits[p].sum(), total[p].sum())
                             for p in range(self.game.n)})
                rows.update({f"{tag}/{b}": (hits[:, k].sum(), total[:, k].sum()) for k, b in enumerate(self.BUCKETS)})
                out.update({key: float(h / t) for key, (h, t) in rows.items() if t > 0})
        return out


def _init_from(net: PolicyNet, source: str, game: Game) -> None:
    """Load the weights of the policy ``source`` into the learner ``net`` (a warm start); refused unless it was
    trained for ``game`` and has ``net``'s shape."""

    start = _policy_like(net, source, game, "--init-from")
    net.load_state_dict(start.state_dict())
    print(f"learner initialised from {source}", flush=True)


def _policy_like(net: PolicyNet, source: str | Path, game: Game, flag: str) -> PolicyNet:
    """The policy ``source``, refused unless it was trained for ``game`` and has ``net``'s shape."""
    from agents.learned import CheckpointError, check_compatible, read_policy

    policy, layout, _ = read_policy(source)
    check_compatible(layout, game, str(source))
    mine, theirs = net.spec, policy.spec
    shape = [(option, have, want) for option, have, want in (
        ("--hidden", list(theirs.hidden), list(mine.hidden)),
        ("--trump-first", theirs.trump_first, mine.trump_first),
        ("--central-critic", theirs.critic_size is not None, mine.critic_size is not None)) if have != want]
    if shape:
        raise CheckpointError(f"{flag} {source}: its network differs from this run's ("
                              + "; ".join(f"{option}: policy {have}, run {want}" for option, have, want in shape)
                              + "); allowed: the policy's values of those options")
    return policy


def _magnet_net(args: Args, net: PolicyNet, game: Game, run_dir: Path, device: torch.device) -> PolicyNet:
    """The frozen magnet of ``args.magnet``. ``imitation``: the learner now (its first PPO update), written to
    ``run_dir/magnet.safetensors`` so that a resumed run pulls towards the same policy; read back from there."""
    from agents.learned import save_policy

    source: str | Path = str(args.magnet)
    if source == "imitation":
        source = run_dir / MAGNET_FILE
        if not source.exists():
            save_policy(source, net, game)
    magnet = _policy_like(net, source, game, "--magnet").to(device)
    magnet.eval()
    magnet.requires_grad_(False)
    print(f"magnet: {args.magnet} (KL weight {args.magnet_coef})", flush=True)
    return magnet


def _baseline_players(args: Args, game: Game, device: torch.device) -> list[Any]:
    """Scripted opponents: a tensor policy (``act(obs, mask)``) where one exists, else one agent per seat."""
    from agents.base import make_agent, parse_agent_spec
    from agents.tensor import BATCHED_OPPONENTS, batched_opponent
    from agents.views import EnvView

    players: list[Any] = []
    for k, spec in enumerate(args.baseline_opponents):
        name, params = parse_agent_spec(spec)
        if name in BATCHED_OPPONENTS:
            players.append(batched_opponent(name, game, device, seed=seed_for(args.seed, 7, k), **params))
            continue
        row = []
        for seat in range(game.n):
            agent = make_agent(name, seed=seed_for(args.seed, 7, k, seat), **params)
            agent.setup(game, seat)
            row.append(agent)
        players.append(PythonSeats(row, EnvView(game.config)))
    return players


@dataclass
class PythonSeats:
    """A Python baseline on the reference backend: its agent at each seat and the one view that builds their
    observations and info dicts, bound to each session in turn."""

    agents: list[Any]
    view: Any


def _policy_step(net: PolicyNet, opponent_nets: list[PolicyNet], baselines: list[Any], envs: Any, args: Args,
                 obs: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor, ctrl: torch.Tensor,
                 gen: torch.Generator, rows: torch.Tensor | None
                 ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One decision in each of the given sessions (``rows`` of the batch, or all when None): the learner's
    input ``x``, trump suits, critic input, the actions (learner, snapshots and baselines by ``ctrl``), the
    log-probability of each action under the learner and the learner's value."""
    sampler = gen if obs.device.type == "cpu" else None
    n = envs.num_players
    with torch.inference_mode():  # no autograd bookkeeping in the rollout
        x, trump = net.prepare(obs)
        if args.central_critic:
            critic_in = (_critic_input(envs, obs, seat, n) if rows is None
                         else _critic_rows(envs, rows, seat, n).to(obs.device))
        else:
            critic_in = x
        logits = net.logits_of(x, trump, mask)
        action = sample_actions(logits, sampler)
        logp_all, _ = masked_distribution(logits, mask)
        value = net.value_of(critic_in)
        for k, opp in enumerate(opponent_nets, start=1):
            mine = (ctrl == k).nonzero().squeeze(-1)
            if mine.numel():
                opp_trump = None if trump is None else trump[mine]
                action[mine] = sample_actions(opp.logits_of(x[mine], opp_trump, mask[mine]), sampler)
        if baselines:
            _baseline_actions(envs, baselines, ctrl, seat, obs, mask, action, len(opponent_nets), rows)
        logp = logp_all.gather(1, action.unsqueeze(1)).squeeze(1)
    return x, trump, critic_in, action, logp, value


def _baseline_actions(envs: Any, baselines: list[Any], ctrl: torch.Tensor, seat: torch.Tensor,
                      obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor, pool: int,
                      sessions: torch.Tensor | None = None) -> None:
    """Overwrite ``action`` in the rows whose acting seat a scripted baseline plays (row i is session
    ``sessions[i]``, or session i when None)."""
    for k, player in enumerate(baselines):
        rows = (ctrl == pool + 1 + k).nonzero().squeeze(-1)
        if not rows.numel():
            continue
        if not isinstance(player, PythonSeats):  # tensor code over the whole batch
            action[rows] = player.act(obs[rows], mask[rows])
            continue
        view = player.view
        for b in rows.tolist():
            view.bind(envs.states[b if sessions is None else int(sessions[b])])
            view.refresh()
            observation, action_mask, info = view.seat_view(int(seat[b]))
            action[b] = player.agents[int(seat[b])].act(observation, action_mask, info)


def evaluate_policy(net: PolicyNet, game: Game, opponents: list[str], deals: int, seed: int, path: Path,
                    workers: int = 1, progress: bool = False) -> list[dict[str, Any]]:
    """Duplicate evaluation of the policy (saved to ``path``) against each baseline, both formats."""
    from train.report import evaluate_candidate

    save_policy(path, net, game)
    return evaluate_candidate(f"learned:checkpoint={path}", opponents, game.config, deals, seed, workers=workers,
                              progress=progress)


def run_job(prog: str, job: Any) -> int:
    """Run ``job()`` (a training job returning its summary) as a command: exit 0, 2 with one line for a user's
    mistake (bad configuration, run directory or checkpoint; no traceback), 130 when interrupted."""
    try:
        summary = job()
    except MauschelnError as exc:
        return report(prog, exc)
    except (TrainingInterrupted, KeyboardInterrupt) as exc:
        print(f"{newline_after_ctrl_c()}{prog}: {exc or 'interrupted'}", file=sys.stderr)
        return 130
    return 130 if summary.get("interrupted") else 0


def main(argv: list[str] | None = None) -> int:
    return run_job(PROG, lambda: train(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
