"""Train sb3-contrib's MaskablePPO on one seat against scripted opponents, then evaluate it.

    python -m train.sb3_maskable --timesteps 200000 --opponents expert --seed 0
    python -m train.sb3_maskable --timesteps 2000 --eval-deals 0          # a smoke run

The environment is :class:`agents.single_agent.SingleAgentEnv`: the learning
seat changes at random every session, the other seats are played by the named
scripted agent, and the reward of a step includes every settlement the seat
received since its previous action. Masks reach MaskablePPO through
``action_masks()``. The trained policy is saved as an SB3 zip in the run
directory and evaluated with the project's duplicate-deal match runner.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from agents.learned.sb3 import SB3Agent  # noqa: F401  (the agent that plays the saved model; re-exported)
from mauscheln_env.errors import MauschelnError, shown
from mauscheln_env.files import check_output_path, strict_json
from mauscheln_env.ruleargs import ArgumentParser, add_rule_arguments, config_from_namespace, report

PROG = "python -m train.sb3_maskable"


def make_env(config: Any, opponents: str, rank: int, seed: int):
    from agents.single_agent import SingleAgentEnv

    options = dict(config.options)

    def thunk():
        env = SingleAgentEnv(opponents=opponents, ruleset=config.ruleset, num_players=config.num_players, **options)
        env.reset(seed=seed + rank)
        return env

    return thunk


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timesteps", type=int, default=100_000, help="learner decisions to train on")
    parser.add_argument("--opponents", default="expert", help="scripted agent for the other seats")
    add_rule_arguments(parser)
    parser.add_argument("--num-players", dest="players", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--max-deals", type=int, default=3, help="settled deals per session (episode)")
    parser.add_argument("--n-envs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-deals", type=int, default=500, help="duplicate deals per baseline (0: skip)")
    parser.add_argument("--eval-agents", nargs="*", default=["random", "expert"])
    parser.add_argument("--runs-root", default="runs")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        from agents.evaluation.duplicate import MAX_DEALS

        for flag, value, low, high in (("--timesteps", args.timesteps, 1, None), ("--n-envs", args.n_envs, 1, 1024),
                                       ("--seed", args.seed, 0, 2**32 - 1), ("--eval-deals", args.eval_deals, 0, MAX_DEALS),
                                       ("--max-deals", args.max_deals, 1, None)):
            if value < low or (high is not None and value > high):  # SB3 seeds numpy, which takes 32 bits
                span = f">= {low}" if high is None else f"{low}..{high}"
                raise MauschelnError(f"{flag} {shown(value)} is not allowed; allowed: a whole number {span}")
        config = config_from_namespace(args, max_deals=(args.max_deals, "--max-deals"))
        from agents.base import agent_from_spec, same_agent

        for spec in [args.opponents, *args.eval_agents]:
            agent_from_spec(spec)  # unknown names or parameters fail before training
        keys = [same_agent(spec) for spec in args.eval_agents]
        twice = sorted({spec for spec, key in zip(args.eval_agents, keys) if keys.count(key) > 1})
        if twice:
            raise MauschelnError(f"--eval-agents names {' and '.join(twice)} more than once; allowed: distinct agents")
        check_output_path(args.runs_root, "--runs-root", folder=True)
    except MauschelnError as exc:
        return report(PROG, exc)

    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(2)
    run_dir = Path(args.runs_root) / f"{config.ruleset}__sb3_maskable__{args.seed}__{int(time.time())}"
    run_dir.mkdir(parents=True, exist_ok=True)
    print(f"run directory: {run_dir}", flush=True)
    vec = DummyVecEnv([make_env(config, args.opponents, i, args.seed) for i in range(args.n_envs)])
    model = MaskablePPO("MlpPolicy", vec, seed=args.seed, verbose=0, n_steps=256, batch_size=256,
                        tensorboard_log=str(run_dir), device="cpu")
    start = time.perf_counter()
    try:
        model.learn(total_timesteps=args.timesteps, tb_log_name="maskable_ppo")
    except KeyboardInterrupt:
        path = run_dir / "maskable_ppo_interrupted.zip"
        model.save(path)
        print(f"\ninterrupted: saved the model so far to {path}", file=sys.stderr)
        return 130
    elapsed = time.perf_counter() - start
    path = run_dir / "maskable_ppo.zip"
    model.save(path)
    print(f"trained {args.timesteps:,} learner decisions in {elapsed:.0f} s; saved {path}")
    results: list[dict[str, Any]] = []
    if args.eval_deals:
        from train.report import evaluate_candidate, print_table

        eval_config = config_from_namespace(args, max_deals=(1, "--max-deals"))
        results = evaluate_candidate(f"sb3:model={path}", list(args.eval_agents), eval_config, args.eval_deals,
                                     args.seed + 10_000)
        (run_dir / "evaluation.json").write_text(strict_json(results, indent=1))
        print_table(results, "MaskablePPO policy")
    print(f"tensorboard --logdir {run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
