"""``mauscheln demo``: a short session between random agents, rendered as text."""

from __future__ import annotations

import numpy as np

import mauscheln_env
from mauscheln_env.errors import MauschelnError
from mauscheln_env.ruleargs import ArgumentParser, add_rule_arguments, config_from_namespace, report

PROG = "mauscheln demo"


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog=PROG, description=__doc__)
    add_rule_arguments(parser)
    parser.add_argument("--deals", type=int, default=3, help="settled deals in the session (default: 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the shuffle and the random agents (default: 0)")
    args = parser.parse_args(argv)
    try:
        if args.deals < 1 or args.seed < 0:
            bad = f"--deals {args.deals}" if args.deals < 1 else f"--seed {args.seed}"
            raise MauschelnError(f"{bad} is not allowed; allowed: a whole number >= {1 if args.deals < 1 else 0}")
        config = config_from_namespace(args, max_deals=(args.deals, "--deals"))
    except MauschelnError as exc:
        return report(PROG, exc)
    options = dict(config.options)
    env = mauscheln_env.env(ruleset=config.ruleset, num_players=config.num_players, render_mode="ansi", **options)
    env.reset(seed=args.seed)
    rng = np.random.default_rng(args.seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    print(env.render())
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(rng.choice(legal))
        print(f"\n{agent} plays {env.unwrapped.action_to_str(action)}")
        env.step(action)
        if env.agents:
            print(env.render())
    print("\nsession rewards (chips won or lost; in muschka, points shed):")
    for agent, total in totals.items():
        print(f"  {agent}: {total:+.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
