"""Wall time of the ``pimc`` search agent: 4-player deals with every seat searching (a benchmark, not a test).

    python benchmarks/pimc_speed.py                 # 20 duplicate deals, default parameters
    python benchmarks/pimc_speed.py --deals 50 --agent pimc:samples=8

Prints the median and the spread of the seconds per deal, the decisions searched and the
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--agent", default="pimc", help="agent spec at every seat (default: pimc)")
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args(argv)
    game = Game(make_config("mauscheln", args.players))
    runner = MatchRunner(game)
    lineup = [agent_from_spec(args.agent) for _ in range(game.n)]
    times = []
    for d in range(args.deals):
        dealer, spec = make_deal(game, args.seed, d)
        t0 = time.perf_counter()
        runner.play(lineup, dealer=dealer, deal=spec, session_seed=d,
                    seed_for=lambda k, s, d=d: agent_seed(args.seed, d, k, s))
        times.append(time.perf_counter() - t0)
    total = sum(times)
    searched = sum(getattr(a, "stats", {}).get("searched", 0) for a in lineup)
    samples = sum(getattr(a, "stats", {}).get("samples", 0) for a in lineup)
    q = statistics.quantiles(times, n=10) if len(times) >= 2 else [times[0]] * 9
    print(f"{args.agent} x{game.n}, {args.deals} deals: median {statistics.median(times):.3f} s/deal "
          f"(10%-90%: {q[0]:.3f}-{q[-1]:.3f} s), {searched} decisions searched, {samples} determinizations, "
          f"{samples / max(total, 1e-9):.0f} determinizations/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
