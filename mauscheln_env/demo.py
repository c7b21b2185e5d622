"""``mauscheln demo``: a short session between random agents, rendered as text."""

from __future__ import annotations

import argparse

import numpy as np

import mauscheln_env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mauscheln demo", description=__doc__)
    parser.add_argument("--ruleset", default="mauscheln", help="mauscheln, mauscheln_classic, mousel, mouche or muschka")
    parser.add_argument("--players", type=int, default=4, help="number of seats")
    parser.add_argument("--deals", type=int, default=3, help="settled deals in the session")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--knock", action="store_true", help="play with the modern knock option")
    args = parser.parse_args(argv)
    options = {"knock": True} if args.knock else {}
    env = mauscheln_env.env(ruleset=args.ruleset, num_players=args.players, max_deals=args.deals,
                            render_mode="ansi", **options)
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
