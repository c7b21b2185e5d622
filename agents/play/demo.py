"""``mauscheln demo``: a short session between any agents, rendered as text.

``--agents`` takes one agent spec for every seat or one per seat in seat order
(``random``, ``beginner``, ``expert``, ``pimc:samples=8``,
``learned:checkpoint=mauscheln4``, ...; default ``random``). The table is shown
after every decision as the environment renders it (the acting seat's hand
only), each deal's settlement line by line.
"""

from __future__ import annotations

import argparse
import sys

import mauscheln_env
from mauscheln_env.errors import MauschelnError
from mauscheln_env.ruleargs import (
    ArgumentParser,
    add_rule_arguments,
    config_from_namespace,
    newline_after_ctrl_c,
    report,
)

PROG = "mauscheln demo"


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    add_rule_arguments(parser)
    parser.add_argument("--agents", nargs="+", default=["random"], metavar="SPEC",
                        help="one agent spec for every seat, or one per seat in seat order (default: random)")
    parser.add_argument("--deals", type=int, default=3, help="settled deals in the session (default: 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the shuffle and the agents (default: 0)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _demo(args)
    except KeyboardInterrupt:
        print(f"{newline_after_ctrl_c()}{PROG}: interrupted", file=sys.stderr)
        return 130


def _demo(args: argparse.Namespace) -> int:
    from agents.base import agent_from_spec  # the agents build on this package, so they are imported late
    from agents.evaluation.match import agent_seed

    try:
        if args.deals < 1 or args.seed < 0:
            bad = f"--deals {args.deals}" if args.deals < 1 else f"--seed {args.seed}"
            raise MauschelnError(f"{bad} is not allowed; allowed: a whole number >= {1 if args.deals < 1 else 0}")
        config = config_from_namespace(args, max_deals=(args.deals, "--deals"))
        n = config.num_players
        specs = list(args.agents) * n if len(args.agents) == 1 else list(args.agents)
        if len(specs) != n:
            raise MauschelnError(f"--agents takes one spec or {n} (one per seat), got {len(args.agents)}")
        options = dict(config.options)
        env = mauscheln_env.env(ruleset=config.ruleset, num_players=n, render_mode="ansi", **options)
        game = env.unwrapped.game
        agents = [agent_from_spec(spec, seed=args.seed) for spec in specs]
        for seat, agent in enumerate(agents):
            agent.setup(game, seat)  # a policy made for another table fails here
    except MauschelnError as exc:
        return report(PROG, exc)
    env.reset(seed=args.seed)
    deal_no = 0
    for seat, agent in enumerate(agents):
        agent.reset(agent_seed(args.seed, deal_no, seat))
    totals = dict.fromkeys(env.possible_agents, 0.0)
    print("at the table: " + ", ".join(f"seat {s} {a.label()}" for s, a in enumerate(agents)))
    print(env.render())
    for name in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        totals[name] += reward
        if termination or truncation:
            env.step(None)
            continue
        seat = env.possible_agents.index(name)
        action = agents[seat].act(obs["observation"], obs["action_mask"], info)
        settled = env.unwrapped.engine_state.session.deals_started
        print(f"\n{name} ({agents[seat].label()}) plays {env.unwrapped.action_to_str(action)}")
        env.step(action)
        if env.agents:
            print(env.render())
            if env.unwrapped.engine_state.session.deals_started != settled:
                deal_no += 1
                for s, agent in enumerate(agents):
                    agent.reset(agent_seed(args.seed, deal_no, s))
    print("\nsession rewards (chips won or lost; in muschka, points shed):")
    for name, total in totals.items():
        print(f"  {name}: {total:+.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
