"""NashConv of scripted agents and of external-sampling MCCFR on a tiny ``python_mauscheln`` variant.

Why a variant and not the smallest table: no ruleset deals a short deck. The
smallest legal table is ``mauscheln_classic`` with 3 players and 24 cards, and
its full tree starts with the deck order, 23 chance nodes with 24!/1 ≈ 6.2e23
histories, before any decision; ``--estimate`` also measures (Knuth's random-probe
estimator) the decision tree of one single deal with every card fixed, which is
already far beyond what a best response in Python can walk.

The variant measured instead is that table with chance and bidding cut down by
legal options and the game's own parameters::

    ruleset=mauscheln_classic, players=3 (24 cards), forced_knock_new_pot=True,
    dealer=0, deck_seed=36, deck_shuffled=3, max_deals=1

The deck order is fixed by the seed except the first card of each of the three
hands, which chance permutes (6 deals). The seed is the one of 0-39 whose deal
depends most on both play and chance (``--pick-seed``: under random play, the
smallest over seats of the spread of a seat's result within a deal, times the
smallest spread of its mean across the 6 deals); many seeds give deals that
play themselves. On the new pot of the first deal the
dealer is forced to knock and everyone plays, so the decisions are the dealer's
discard for the trump card and the four tricks. Each seat sees one of the three
shuffled cards and does not know which opponent holds which of the other two.
``nash_conv`` is computed exactly over the whole tree with OpenSpiel's Python
best response (``open_spiel.python.algorithms.exploitability.nash_conv``, which
handles any number of players).

    python benchmarks/openspiel_nash_conv.py                     # tree size, scripted agents, MCCFR 10/100/1000
    python benchmarks/openspiel_nash_conv.py --policies random --mccfr 0
    python benchmarks/openspiel_nash_conv.py --estimate          # the smallest table does not fit
    python benchmarks/openspiel_nash_conv.py --pick-seed         # how deck_seed was chosen
"""

from __future__ import annotations

import argparse
import platform
import time
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import exploitability, external_sampling_mccfr

import mauscheln_env.integrations.openspiel  # noqa: F401  (registers python_mauscheln)
from agents.search.openspiel import AgentPolicy
from mauscheln_env.integrations.openspiel import GAME_NAME

TINY: dict[str, Any] = {
    "ruleset": "mauscheln_classic",
    "players": 3,
    "forced_knock_new_pot": True,
    "dealer": 0,
    "deck_seed": 36,
    "deck_shuffled": 3,
}
"""The tiny variant (see the module docstring); ``deck_seed`` as ``--pick-seed`` chose it."""

SMALLEST = {"ruleset": "mauscheln_classic", "players": 3}
"""The smallest legal table: 3 players, 24 cards."""


def tree_size(game: pyspiel.Game) -> dict[str, int]:
    """Nodes, decision nodes, terminals and information states of the whole tree (depth first)."""
    counts = {"nodes": 0, "chance": 0, "decisions": 0, "terminals": 0}
    infosets: set[str] = set()
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        counts["nodes"] += 1
        if state.is_terminal():
            counts["terminals"] += 1
            continue
        if state.is_chance_node():
            counts["chance"] += 1
            actions = [a for a, _ in state.chance_outcomes()]
        else:
            counts["decisions"] += 1
            infosets.add(state.information_state_string())
            actions = state.legal_actions()
        stack.extend(state.child(a) for a in actions)
    counts["infosets"] = len(infosets)
    return counts


def knuth_estimate(game: pyspiel.Game, probes: int, seed: int) -> tuple[float, float]:
    """Knuth's estimate of the number of nodes (mean, standard error) from uniform random root-to-leaf probes."""
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(probes):
        state = game.new_initial_state()
        total, width = 1.0, 1.0
        while not state.is_terminal():
            actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
            width *= len(actions)
            total += width
            state.apply_action(actions[rng.integers(len(actions))])
        values.append(total)
    v = np.asarray(values)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v)))


def seed_score(seed: int, playouts: int = 240) -> tuple[float, np.ndarray, np.ndarray]:
    """How much a deal of the variant with ``deck_seed=seed`` depends on play and on chance.

    Returns the score (the smallest per-seat spread within a deal times the smallest
    per-seat spread across deals, plus 0.01), the spreads within and across.
    """
    game = pyspiel.load_game(GAME_NAME, {**TINY, "deck_seed": seed})
    rng = np.random.default_rng(0)
    by_deal: dict[tuple[int, ...], list[list[float]]] = {}
    for _ in range(playouts):
        state = game.new_initial_state()
        deal = []
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                deal.append(outcomes[rng.integers(len(outcomes))][0])
                state.apply_action(deal[-1])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
        by_deal.setdefault(tuple(deal), []).append(state.returns())
    within = np.mean([np.std(np.asarray(v), axis=0) for v in by_deal.values()], axis=0)
    across = np.asarray([np.mean(np.asarray(v), axis=0) for v in by_deal.values()]).std(axis=0)
    return float(within.min() * (across.min() + 0.01)), within, across


def report(label: str, game: pyspiel.Game, policy: policy_lib.Policy) -> None:
    start = time.perf_counter()
    result = exploitability.nash_conv(game, policy, return_only_nash_conv=False)
    gains = " ".join(f"{g:.3f}" for g in result.player_improvements)
    print(f"| {label} | {result.nash_conv:.3f} | {gains} | {time.perf_counter() - start:.0f} |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--policies", default="random,beginner,expert",
                        help="scripted agents to measure (random is the uniform policy; others via AgentPolicy)")
    parser.add_argument("--mccfr", default="10,100,1000",
                        help="external-sampling MCCFR iteration counts at which to measure the average policy "
                             "(0: none)")
    parser.add_argument("--seed", type=int, default=0, help="MCCFR's seed (numpy's global generator)")
    parser.add_argument("--no-size", action="store_true", help="skip counting the variant's tree")
    parser.add_argument("--estimate", action="store_true",
                        help="only estimate the decision tree of one fixed deal of the smallest table")
    parser.add_argument("--probes", type=int, default=2000, help="random probes per --estimate")
    parser.add_argument("--pick-seed", action="store_true", help="only score deck seeds 0-39 (how TINY's was chosen)")
    args = parser.parse_args(argv)
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}; python {platform.python_version()}, {platform.node()}")

    if args.estimate:
        for label, extra in (("smallest table, one fixed deal (24 cards)", {}),
                             ("mauscheln, 3 players, one fixed deal (32 cards)", {"ruleset": "mauscheln"})):
            game = pyspiel.load_game(GAME_NAME, {**SMALLEST, **extra, "dealer": 0, "deck_seed": 1})
            mean, se = knuth_estimate(game, args.probes, 0)
            print(f"{label}: about {mean:.3g} nodes (standard error {se:.2g}, {args.probes} probes)")
        return 0

    if args.pick_seed:
        scores = []
        for seed in range(40):
            score, within, across = seed_score(seed)
            scores.append((score, seed))
            print(f"deck_seed={seed}: score {score:.3f}, spread within a deal {np.round(within, 2)}, "
                  f"across deals {np.round(across, 2)}", flush=True)
        print(f"best: deck_seed={max(scores)[1]}")
        return 0

    game = pyspiel.load_game(GAME_NAME, TINY)
    print(f"variant: {GAME_NAME}({','.join(f'{k}={v}' for k, v in TINY.items())})")
    if not args.no_size:
        start = time.perf_counter()
        print(f"tree: {tree_size(game)} ({time.perf_counter() - start:.0f} s)", flush=True)

    print("| policy | nash_conv | gain per seat | seconds |")
    print("| --- | ---: | --- | ---: |")
    for name in [p for p in args.policies.split(",") if p]:
        if name == "random":
            report("random (uniform)", game, policy_lib.UniformRandomPolicy(game))
        else:
            report(name, game, AgentPolicy(game, name))
    checkpoints = sorted({int(x) for x in args.mccfr.split(",") if int(x) > 0})
    if checkpoints:
        np.random.seed(args.seed)  # external_sampling_mccfr samples with numpy's global generator
        solver = external_sampling_mccfr.ExternalSamplingSolver(
            game, average_type=external_sampling_mccfr.AverageType.SIMPLE)
        done = 0
        spent = 0.0
        for target in checkpoints:
            start = time.perf_counter()
            while done < target:
                solver.iteration()
                done += 1
            spent += time.perf_counter() - start
            report(f"MCCFR (external sampling), {done} iterations, {spent:.0f} s", game, solver.average_policy())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
