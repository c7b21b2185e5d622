"""Throughput of the PettingZoo environment with random legal play.

The loop is the standard AEC loop (``agent_iter`` / ``last`` / ``step``);
actions are sampled uniformly from the mask with numpy (uniform draws taken in
blocks, so the sampler costs what a policy's sampler would). Observations and
masks are produced at every decision, as a learner would need them. Pinned to
one CPU core by default.

    python benchmarks/env_throughput.py               # 3, 4, 5, 7 players, 5 s each
    python benchmarks/env_throughput.py --players 4 --seconds 10

Prints decisions/s and deals/s for ``raw_env`` and ``env()`` of the default
ruleset, then ``raw_env`` of every ruleset at 4 players with its speed relative
to the default; when PettingZoo's ``leduc_holdem_v4`` is importable
(``pip install 'pettingzoo[classic]'``) it is measured in the same run and the
ratio is printed. Deals counted include throw-ins.

The ratio to leduc is measured head to head: ``env()`` and leduc take turns in
``--rounds`` slices of the measuring time, and the rates are per second of this
process's CPU time, so that other jobs on a shared machine slow both alike.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable

import numpy as np

import mauscheln_env


class Player:
    """Random legal play on one environment, in as many slices of time as asked."""

    def __init__(self, make_env: Callable[[], object], count_deals: bool = True) -> None:
        self.env = make_env()
        self.count_deals = count_deals
        self.uniform = np.random.default_rng(0).random(1 << 16)
        self.u = self.seed = 0
        self.decisions = self.deals = 0
        self.wall = self.cpu = 0.0

    def run(self, seconds: float) -> None:
        """Play whole episodes for about ``seconds`` of wall-clock time."""
        env, uniform, u = self.env, self.uniform, self.u
        start, cpu0 = time.perf_counter(), time.process_time()
        while time.perf_counter() - start < seconds:
            env.reset(seed=self.seed)
            self.seed += 1
            for _agent in env.agent_iter():
                obs, _reward, termination, truncation, _info = env.last()
                if termination or truncation:
                    env.step(None)
                    continue
                legal = np.flatnonzero(obs["action_mask"])
                env.step(int(legal[int(uniform[u] * len(legal))]))
                u = (u + 1) & 0xFFFF
                self.decisions += 1
            self.deals += len(env.unwrapped.engine_state.session.results) if self.count_deals else 1
        self.u = u
        self.wall += time.perf_counter() - start
        self.cpu += time.process_time() - cpu0


def measure(make_env: Callable[[], object], seconds: float, count_deals: bool = True) -> tuple[float, float, int]:
    """Run whole episodes for about ``seconds``; return (decisions/s, deals/s, decisions)."""
    player = Player(make_env, count_deals)
    player.run(seconds)
    return player.decisions / player.wall, player.deals / player.wall, player.decisions


def head_to_head(players: list[Player], seconds: float, rounds: int) -> list[float]:
    """Decisions per CPU second of each player, taking turns in ``rounds`` slices of ``seconds``."""
    for _ in range(rounds):
        for p in players:
            p.run(seconds / rounds)
    return [p.decisions / p.cpu for p in players]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, nargs="+", default=[3, 4, 5, 7])
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time per row")
    parser.add_argument("--knock", action="store_true", help="enable the knock option")
    parser.add_argument("--rounds", type=int, default=10, help="turns each of env() and leduc take in the ratio")
    parser.add_argument("--cpu", type=int, default=0, help="core to pin to (-1: do not pin)")
    parser.add_argument("--rulesets", nargs="*", default=list(mauscheln_env.RULESETS),
                        help="rulesets to compare at 4 players (none: skip)")
    args = parser.parse_args(argv)
    if args.cpu >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.cpu})
    print(f"python {platform.python_version()}, {platform.machine()}, pinned to core {args.cpu}, knock={args.knock}")
    print(f"{'env':<28} {'decisions/s':>12} {'deals/s':>10}")
    rows: dict[tuple[str, int], float] = {}
    for n in args.players:
        for name, factory in (("raw_env", mauscheln_env.raw_env), ("env()", mauscheln_env.env)):
            rate, deals, _ = measure(lambda f=factory, n=n: f(num_players=n, knock=args.knock), args.seconds)
            rows[(name, n)] = rate
            print(f"{f'mauscheln {n}p {name}':<28} {rate:>12,.0f} {deals:>10,.0f}")
    if args.rulesets:
        print(f"\n{'ruleset (4 players, raw_env)':<28} {'decisions/s':>12} {'deals/s':>10} {'vs mauscheln':>13}")
        base = None
        for ruleset in ["mauscheln", *[r for r in args.rulesets if r != "mauscheln"]]:
            rate, deals, _ = measure(lambda r=ruleset: mauscheln_env.raw_env(ruleset=r, num_players=4), args.seconds)
            base = base or rate
            print(f"{ruleset:<28} {rate:>12,.0f} {deals:>10,.0f} {rate / base:>12.2f}x")
    try:
        from pettingzoo.classic import leduc_holdem_v4
    except Exception as exc:  # noqa: BLE001 - optional comparison only
        print(f"leduc_holdem_v4 not importable ({type(exc).__name__}); no comparison")
        return 0
    rate, games, _ = measure(leduc_holdem_v4.env, args.seconds, count_deals=False)
    print(f"{'leduc_holdem_v4 env()':<28} {rate:>12,.0f} {games:>10,.0f}")
    print(f"\nhead to head, {args.rounds} turns each, decisions per CPU second:")
    for n in args.players:
        raw = Player(lambda n=n: mauscheln_env.raw_env(num_players=n, knock=args.knock))
        ours = Player(lambda n=n: mauscheln_env.env(num_players=n, knock=args.knock))
        leduc = Player(leduc_holdem_v4.env, count_deals=False)
        mine_raw, mine, theirs = head_to_head([raw, ours, leduc], 3 * args.seconds, args.rounds)
        print(f"ratio mauscheln {n}p env() / leduc_holdem_v4 env(): {mine / theirs:.1f}x "
              f"({mine:,.0f} / {theirs:,.0f}); raw_env: {mine_raw / theirs:.1f}x ({mine_raw:,.0f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
