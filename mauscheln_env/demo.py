"""``mauscheln demo``: a short session between random agents, rendered as text."""

from __future__ import annotations

import argparse

import numpy as np

import mauscheln_env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mauscheln demo", description=__doc__)
    parser.add_argument("--players", type=int, default=4, help="number of seats (3-7)")
    parser.add_argument("--deals", type=int, default=3, help="settled deals in the session")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--knock", action="store_true", help="play with the modern knock option")
    args = parser.parse_args(argv)
    env = mauscheln_env.env(num_players=args.players, max_deals=args.deals, knock=args.knock, render_mode="ansi")
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
    print("\nsession result (chips won or lost):")
    for agent, total in totals.items():
        print(f"  {agent}: {total:+.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
