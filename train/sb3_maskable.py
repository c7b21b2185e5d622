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
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent, Info, legal_ids, register_agent


def make_env(args: argparse.Namespace, rank: int):
    from agents.single_agent import SingleAgentEnv

    def thunk():
        env = SingleAgentEnv(opponents=args.opponents, num_players=args.num_players, max_deals=args.max_deals)
        env.reset(seed=args.seed + rank)
        return env

    return thunk


class SB3Agent(Agent):
    """Plays a saved MaskablePPO model (deterministic by default)."""

    name = "sb3"

    def __init__(self, seed: int | None = None, model: str = "", deterministic: bool = True) -> None:
        super().__init__(seed)
        from sb3_contrib import MaskablePPO

        if not model or not Path(model).is_file():
            raise ValueError(f"model={model!r} is not a saved MaskablePPO zip file")
        self.params = {"model": model, "deterministic": deterministic}
        # SB3's loader reads its own zip format (weights via torch.load with weights_only where supported).
        self.model = MaskablePPO.load(model, device="cpu")
        self.deterministic = deterministic

    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        legal_ids(action_mask)
        action, _ = self.model.predict(observation, action_masks=np.asarray(action_mask, dtype=bool),
                                       deterministic=self.deterministic)
        return int(action)


register_agent("sb3", SB3Agent, "a MaskablePPO model saved by train/sb3_maskable.py (model= path)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timesteps", type=int, default=100_000, help="learner decisions to train on")
    parser.add_argument("--opponents", default="expert", help="scripted agent for the other seats")
    parser.add_argument("--num-players", type=int, default=4)
    parser.add_argument("--max-deals", type=int, default=3, help="settled deals per session (episode)")
    parser.add_argument("--n-envs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-deals", type=int, default=500, help="duplicate deals per baseline (0: skip)")
    parser.add_argument("--eval-agents", nargs="*", default=["random", "expert"])
    parser.add_argument("--runs-root", default="runs")
    args = parser.parse_args(argv)
    if args.timesteps < 1 or args.n_envs < 1:
        raise ValueError("--timesteps and --n-envs must be >= 1")

    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(2)
    run_dir = Path(args.runs_root) / f"mauscheln__sb3_maskable__{args.seed}__{int(time.time())}"
    run_dir.mkdir(parents=True, exist_ok=True)
    vec = DummyVecEnv([make_env(args, i) for i in range(args.n_envs)])
    model = MaskablePPO("MlpPolicy", vec, seed=args.seed, verbose=0, n_steps=256, batch_size=256,
                        tensorboard_log=str(run_dir), device="cpu")
    start = time.perf_counter()
    model.learn(total_timesteps=args.timesteps, tb_log_name="maskable_ppo")
    elapsed = time.perf_counter() - start
    path = run_dir / "maskable_ppo.zip"
    model.save(path)
    print(f"trained {args.timesteps:,} learner decisions in {elapsed:.0f} s; saved {path}")
    results: list[dict[str, Any]] = []
    if args.eval_deals:
        from mauscheln_env.config import make_config
        from train.report import evaluate_candidate, print_table

        config = make_config("mauscheln", args.num_players)
        results = evaluate_candidate(f"sb3:model={path}", list(args.eval_agents), config, args.eval_deals,
                                     args.seed + 10_000)
        (run_dir / "evaluation.json").write_text(json.dumps(results, indent=1))
        print_table(results, "MaskablePPO policy")
    print(f"tensorboard --logdir {run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
