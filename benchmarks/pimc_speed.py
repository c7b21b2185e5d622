"""Time of the ``pimc`` search agent per deal, for every ruleset (a benchmark, not a test).

    python benchmarks/pimc_speed.py                 # 20 deals of each ruleset, every seat pimc
    python benchmarks/pimc_speed.py --alone         # one pimc seat against the expert at the others
    python benchmarks/pimc_speed.py --ruleset mouche --deals 50 --agent pimc:samples=8

Prints the CPU seconds per deal of this one process (what one core spends, whatever else the machine runs),
the wall-clock median and spread, the decisions searched and the
determinizations sampled per second. The test suite checks the work per decision
(tests/test_agents_pimc.py); how long that work takes depends on the machine, so it is measured here.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import MatchRunner, agent_from_spec, agent_seed, make_deal  # noqa: E402
from mauscheln_env import Game, make_config  # noqa: E402
from mauscheln_env.rulesets import RULESETS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--agent", default="pimc", help="agent spec at every seat (default: pimc)")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--ruleset", default="all", help="a ruleset or 'all' (default)")
    parser.add_argument("--alone", action="store_true", help="one pimc seat (rotating), expert at the others")
    args = parser.parse_args(argv)
    names = list(RULESETS) if args.ruleset == "all" else [args.ruleset]
    for name in names:
        if name not in RULESETS:
            print(f"error: unknown ruleset {name!r}; allowed: {', '.join(RULESETS)} or all", file=sys.stderr)
            return 2
        measure(name, args)
    return 0


def measure(ruleset: str, args: argparse.Namespace) -> None:
    game = Game(make_config(ruleset, args.players))
    runner = MatchRunner(game)
    searchers = [agent_from_spec(args.agent) for _ in range(game.n)]
    experts = [agent_from_spec("expert") for _ in range(game.n)]
    times = []
    cpu = []
    for d in range(args.deals):
        lineup = [searchers[s] if not args.alone or s == d % game.n else experts[s] for s in range(game.n)]
        dealer, spec = make_deal(game, args.seed, d)
        t0 = time.perf_counter()
        c0 = time.process_time()
        runner.play(lineup, dealer=dealer, deal=spec, session_seed=d,
                    seed_for=lambda k, s, d=d: agent_seed(args.seed, d, k, s))
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    total = sum(times)
    searched = sum(a.stats["searched"] for a in searchers)
    samples = sum(a.stats["samples"] for a in searchers)
    fallbacks = sum(a.stats["fallbacks"] for a in searchers)
    q = statistics.quantiles(times, n=10) if len(times) >= 2 else [times[0]] * 9
    who = "1 seat (expert at the others)" if args.alone else f"x{game.n}"
    print(f"{ruleset:18s} {args.agent} {who}, {args.deals} deals: CPU {statistics.mean(cpu):.3f} s/deal "
          f"(median {statistics.median(cpu):.3f}, max {max(cpu):.3f}); wall mean {total / len(times):.3f} s/deal,  median {statistics.median(times):.3f} s/deal "
          f"(10%-90%: {q[0]:.3f}-{q[-1]:.3f} s), {searched} decisions searched, {fallbacks} left to the expert, {samples} determinizations, "
          f"{samples / max(total, 1e-9):.0f} determinizations/s", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
