"""PPO self-play on RLlib's new API stack: one shared policy, local or on a Ray cluster.

    python -m train.rllib_ppo --minutes 10                                   # this machine, local Ray
    python -m train.rllib_ppo --iterations 2 --train-batch 256 --num-cpus 1  # a smoke run
    RAY_ADDRESS=auto python -m train.rllib_ppo --num-env-runners 64 --num-learners 2 --minutes 60  # on a cluster
    python -m train.rllib_ppo --env-runner stock --minutes 10                # RLlib's own env runner

One RLModule, ``"main"`` (:class:`train.rllib_env.MaskedPolicyModule`),
plays every seat RLlib sees. Each episode is one session of
:class:`~train.rllib_env.MauschelnMultiAgentEnv`, whose
seeded generator deals the table: the opponent (every seat main, a frozen
snapshot of main, or a scripted agent from ``agents.make_agent`` such as
``random`` and ``expert``), the duplicate format (main alone against a field,
or main as the field against one) and the seats; the opponent's seats play
inside the environment. ``--env-runner batched`` (default) plays those
sessions on the batched engine, many tables per env runner
(:class:`train.rllib_batched.BatchedEnvRunner`: the same tables, observations
and rewards per seat, batched opponents); ``--env-runner stock`` keeps RLlib's
own ``MultiAgentEnvRunner`` over the environment, which plays any
``make_agent`` opponent. Every ``--snapshot-every`` iterations the current
weights join the snapshot pool (the last ``--pool-size``), which is handed to
every env runner, local or remote.

Nothing but ``--address`` (or ``RAY_ADDRESS``) and the runner and learner
counts changes between a laptop and a cluster. Logs go to TensorBoard under
``runs/<ruleset>__rllib_ppo__<seed>__<time>`` (``charts/``: returns, env
steps/s in all and per env runner; ``losses/``: policy, value, entropy, KL;
``eval/``), and the policy is exported as a ``learned`` checkpoint
(``policy.safetensors``) that ``mauscheln eval`` plays::

    mauscheln eval --pair learned:checkpoint=runs/.../policy.safetensors random --deals 2000

The run ends with that duplicate evaluation against ``--eval-agents`` (both
formats, 95 % intervals) unless ``--eval-deals 0``, and its last line is
``env steps/s per env runner: X``: env steps sampled over the seconds the env
runners spent in ``sample()``, per env runner (the PPO update not counted).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import tyro

from mauscheln_env.errors import ConfigError
from mauscheln_env.files import strict_json
from train.cli import KEY_VALUES, tyro_cli

PROG = "python -m train.rllib_ppo"


@dataclass
class Args:
    """Training configuration; every field is a flag (``--num-env-runners 2``)."""

    ruleset: str = "mauscheln"
    """Ruleset to train on (any of the five)."""
    num_players: Annotated[int, tyro.conf.arg(aliases=("--players",))] = 4
    """Seats at the table."""
    max_deals: int = 1
    """Settled deals per session (one episode)."""
    rules: Annotated[dict[str, Any], KEY_VALUES, tyro.conf.arg(name="rule")] = field(default_factory=dict)
    """Further rule options as KEY=VALUE (``--rule knock=true belli=7D``)."""
    opponents: Annotated[dict[str, Any], KEY_VALUES] = field(
        default_factory=lambda: {"self": 1, "snapshot": 1, "random": 0.5, "expert": 1})
    """Opponent weights per episode as NAME=WEIGHT: self (every seat main), snapshot, or any agent name."""
    formats: list[str] = field(default_factory=lambda: ["alone", "field"])
    """Duplicate formats to train: alone (main vs a field) and field (main as the field vs one)."""
    seed: int = 0
    """Seed of RLlib (weights, sampling) and of every env runner's tables and deals."""
    iterations: int = 1_000_000
    """Stop after this many training iterations ..."""
    minutes: float = 0.0
    """... or after this many minutes of training (0: no time limit)."""
    address: str | None = None
    """Ray cluster to join (default: RAY_ADDRESS, else a local Ray)."""
    num_cpus: int | None = None
    """CPUs of a local Ray (default: all)."""
    env_runner: Literal["batched", "stock"] = "batched"
    """batched: many tables of the batched engine per env runner; stock: RLlib's MultiAgentEnvRunner over the env."""
    num_env_runners: int = 0
    """Remote env runners (0: the driver samples)."""
    num_envs_per_env_runner: int | None = None
    """Sessions each env runner steps together (default: 1024 tables batched, 8 envs stock)."""
    num_learners: int = 0
    """Remote learners (0: the driver learns)."""
    train_batch: int = 4000
    """Env steps (decisions of main) per iteration and learner."""
    minibatch: int = 500
    """Minibatch size of the PPO update."""
    epochs: int = 4
    """Passes over each batch."""
    lr: float = 3e-4
    """Adam step size."""
    gamma: float = 1.0
    """Discount: chips are chips, whenever they land."""
    lam: float = 0.95
    """GAE lambda."""
    clip: float = 0.2
    """PPO clip range."""
    entropy: float = 0.01
    """Entropy bonus."""
    vf_coeff: float = 0.5
    """Value-loss weight."""
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer sizes of the actor and of the critic."""
    snapshot_every: int = 5
    """Iterations between two snapshots that join the pool."""
    pool_size: int = 5
    """Snapshots kept in the pool."""
    eval_deals: int = 1000
    """Duplicate deals per baseline in the final evaluation (0: skip)."""
    eval_agents: list[str] = field(default_factory=lambda: ["random", "expert"])
    """Baselines of the final evaluation."""
    eval_workers: int = 1
    """Processes of the final evaluation."""
    runs_root: str = "runs"
    """Where run directories go."""


DEFAULT_ENVS = {"batched": 1024, "stock": 8}
"""Sessions per env runner by env runner: the batched engine wants many tables (much of its cost per step is the
same for any number of tables), but not so many that a train batch is cut into more episode chunks than it has
steps (RLlib's cost per episode then takes over); the stock path wants a few envs."""


def parse_args(argv: list[str] | None = None) -> Args:
    """The :class:`Args` of a command line (tyro), validated; a bad value raises ConfigError (one line)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = tyro_cli(Args, argv, prog=PROG, description=__doc__.split("\n\n")[0], repeated=("--rule", "--opponents"))
    if args.num_envs_per_env_runner is None:
        args.num_envs_per_env_runner = DEFAULT_ENVS[args.env_runner]
    for name in ("iterations", "num_players", "train_batch", "minibatch", "epochs", "snapshot_every", "pool_size",
                 "num_envs_per_env_runner"):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')}={getattr(args, name)} is not allowed; allowed: >= 1")
    for name in ("num_env_runners", "num_learners", "eval_deals", "minutes"):
        if getattr(args, name) < 0:
            raise ConfigError(f"--{name.replace('_', '-')}={getattr(args, name)} is not allowed; allowed: >= 0")
    return args


def env_config(args: Args) -> dict[str, Any]:
    rules = {"max_deals": args.max_deals, **args.rules}
    return {"ruleset": args.ruleset, "num_players": args.num_players, "rules": rules,
            "opponents": dict(args.opponents), "formats": list(args.formats), "seed": args.seed}


def build_config(args: Args):
    """The PPOConfig: one module ``main`` for every agent RLlib sees."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from train.rllib_batched import BatchedEnvRunner, TimedMultiAgentEnvRunner
    from train.rllib_env import MAIN, MaskedPolicyModule, MauschelnMultiAgentEnv

    runner = BatchedEnvRunner if args.env_runner == "batched" else TimedMultiAgentEnvRunner
    return (
        PPOConfig()
        .environment(MauschelnMultiAgentEnv, env_config=env_config(args))
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_envs_per_env_runner,
                     num_cpus_per_env_runner=1, rollout_fragment_length="auto", env_runner_cls=runner)
        .learners(num_learners=args.num_learners)
        .multi_agent(policies={MAIN}, policy_mapping_fn=_to_main, policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            MAIN: RLModuleSpec(module_class=MaskedPolicyModule, model_config={"hidden": list(args.hidden)})}))
        .training(lr=args.lr, gamma=args.gamma, lambda_=args.lam, clip_param=args.clip, entropy_coeff=args.entropy,
                  vf_loss_coeff=args.vf_coeff, train_batch_size_per_learner=args.train_batch,
                  minibatch_size=args.minibatch, num_epochs=args.epochs, use_kl_loss=False, vf_clip_param=1e6)
        .debugging(seed=args.seed)
    )


def _to_main(agent_id: str, episode: Any, **kwargs: Any) -> str:
    return "main"


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        cfg = env_config(args)
        from train.rllib_env import MauschelnMultiAgentEnv

        probe = MauschelnMultiAgentEnv(cfg)  # bad rules or opponents fail here, before Ray starts
        if args.env_runner == "batched":
            from train.rllib_batched import check_env_config

            check_env_config(cfg)
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    import ray
    import torch
    from torch.utils.tensorboard import SummaryWriter

    from agents.learned import NetSpec
    from train.rllib_batched import SAMPLE_SECONDS
    from train.rllib_env import MAIN, export_policy, push_snapshots

    torch.set_num_threads(1)
    address = args.address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, configure_logging=False)
    run_dir = Path(args.runs_root) / f"{args.ruleset}__rllib_ppo__{args.seed}__{int(time.time())}"
    run_dir.mkdir(parents=True, exist_ok=True)
    writer = SummaryWriter(str(run_dir))
    writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
        f"|{k}|{v}|" for k, v in asdict(args).items()))
    algo = build_config(args).build_algo()
    module = algo.get_module(MAIN)
    spec = NetSpec(module.net.spec.obs_size, module.net.spec.num_actions, tuple(args.hidden))
    pool: list[dict[str, torch.Tensor]] = []
    start = time.perf_counter()
    steps_total = 0
    sample_seconds = 0.0  # summed over env runners
    it = 0
    for it in range(1, args.iterations + 1):
        t0 = time.perf_counter()
        result = algo.train()
        elapsed = time.perf_counter() - t0
        runners = result.get("env_runners", {})
        steps = int(runners.get("num_env_steps_sampled", 0))
        steps_total += steps
        sampled_s = float(runners.get(SAMPLE_SECONDS, 0.0))
        sample_seconds += sampled_s
        per_runner = steps / sampled_s if sampled_s > 0 else float("nan")  # sampling only, per env runner
        learner = result.get("learners", {}).get(MAIN, {})
        scalars = {
            "charts/episode_return_mean": runners.get("episode_return_mean"),
            "charts/env_steps_per_s": steps / elapsed,
            "charts/env_steps_per_s_per_runner": per_runner,
            "charts/sample_seconds": sampled_s,
            "charts/env_steps": steps_total,
            "losses/policy_loss": learner.get("policy_loss"),
            "losses/value_loss": learner.get("vf_loss"),
            "losses/entropy": learner.get("entropy"),
            "losses/kl": learner.get("mean_kl_loss"),
        }
        for tag, value in scalars.items():
            if isinstance(value, (int, float)):
                writer.add_scalar(tag, value, steps_total)
        print(f"iteration {it}: {steps} env steps in {elapsed:.1f} s ({per_runner:,.0f} env steps/s per env runner "
              f"sampling), "
              f"return {runners.get('episode_return_mean', float('nan')):+.3f}, pool {len(pool)}", flush=True)
        if it % args.snapshot_every == 0:
            module = algo.get_module(MAIN)
            pool = (pool + [{k: v.detach().cpu().clone() for k, v in module.net.state_dict().items()}])
            pool = pool[-args.pool_size:]
            counts = algo.env_runner_group.foreach_env_runner(lambda r, s=spec, p=pool: push_snapshots(r, s, p))
            print(f"snapshot pool of {len(pool)} handed to {sum(counts)} envs", flush=True)
        if args.minutes and time.perf_counter() - start >= args.minutes * 60:
            break
    train_s = time.perf_counter() - start
    module = algo.get_module(MAIN)
    path = export_policy(module, probe.game, run_dir / "policy.safetensors",
                         extra={"trainer": "rllib_ppo", "iterations": it, "env_steps": steps_total,
                                "args": asdict(args)})
    per_runner = steps_total / sample_seconds if sample_seconds > 0 else float("nan")
    summary = {"iterations": it, "env_steps": steps_total, "seconds": train_s, "env_runner": args.env_runner,
               "env_steps_per_s": steps_total / train_s, "sample_seconds": sample_seconds,
               "env_steps_per_s_per_runner": per_runner,
               "env_steps_per_s_per_runner_end_to_end": steps_total / train_s / max(1, args.num_env_runners),
               "num_env_runners": args.num_env_runners, "policy": str(path)}
    print(f"trained {it} iterations, {steps_total:,} env steps in {train_s:.0f} s "
          f"({summary['env_steps_per_s_per_runner_end_to_end']:,.0f} env steps/s per env runner, sampling and "
          f"update); saved {path}")
    algo.stop()
    ray.shutdown()
    if args.eval_deals:
        from train.report import evaluate_candidate, markdown_table, print_table

        rows = evaluate_candidate(f"learned:checkpoint={path}", list(args.eval_agents), probe.game.config,
                                  args.eval_deals, args.seed + 10_000, workers=args.eval_workers)
        summary["evaluation"] = rows
        for row in rows:
            if row["format"] == "both formats":
                writer.add_scalar(f"eval/advantage_vs_{row['opponent']}", row["mean"], steps_total)
        print_table(rows, "RLlib PPO policy")
        (run_dir / "evaluation.md").write_text(markdown_table(rows) + "\n")
    tmp = run_dir / "summary.json.tmp"
    tmp.write_text(strict_json(summary, indent=1))
    os.replace(tmp, run_dir / "summary.json")
    writer.close()
    print(f"tensorboard --logdir {run_dir}")
    print(f"env steps/s per env runner: {per_runner:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
