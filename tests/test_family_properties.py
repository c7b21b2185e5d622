"""Every ruleset x player count x a spread of option combinations: random play keeps every invariant.

After every step: card conservation, chips + pot + reserve + escrow constant,
scores consistent with the deals' rewards (``Game.check_invariants``), a
non-empty legal set for the seat to act; every session ends. PettingZoo's
``api_test``, ``seed_test`` and ``render_test`` run for every ruleset at its
smallest and largest player count.
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import mauscheln_env
from mauscheln_env import RULESETS, Game, make_config

OPTION_SPREAD = {
    "mauscheln": [
        {},
        {"knock": True, "vierling": True, "belli": "7D"},
        {"weli": True, "knock": True, "knock_min_rank": "A"},
        {"belli": "trump7", "belli_penalty": "ace", "vierling": True},
    ],
    "mauscheln_classic": [
        {},
        {"cap": 16, "mauschelzwang": True, "mitgehzwang": True},
        {"forced_knock_new_pot": True, "schieben": True, "cap": 8},
        {"knock": False, "classic_always_32": True, "bankroll": 20},
    ],
    "mousel": [
        {},
        {"volunteer_leader": True, "knock": True, "exchange_limit": 2},
        {"deck_size": 52, "bankroll": 12},
    ],
    "mouche": [
        {},
        {"queue": True, "mery_cap": 10, "pamphile": True, "pamphile_wild": True, "beatrix": True, "deal_2_3": True},
        {"queue": True, "queue_order": "largest", "collect_1730": False, "pamphile": True, "pamphile_bonus": False,
         "rounds": 1, "max_deals": None, "bankroll": 15},
    ],
    "muschka": [{}, {"start_score": 6}],
}
"""Option spreads per ruleset; a ruleset without one is tested with its defaults and its showcase options."""
for _name, _spec in RULESETS.items():
    OPTION_SPREAD.setdefault(_name, [{}, dict(_spec.showcase)])

CASES = [
    (ruleset, n, options)
    for ruleset, spreads in OPTION_SPREAD.items()
    for n in range(RULESETS[ruleset].min_players, RULESETS[ruleset].max_players + 1)
    for options in spreads
    if not (options.get("weli") and n > 5) and not (options.get("deck_size") == 32 and n > 5)
]


@pytest.mark.parametrize("ruleset,n,options", CASES, ids=[f"{r}-{n}p-{i}" for i, (r, n, _) in enumerate(CASES)])
def test_random_play_keeps_every_invariant(ruleset, n, options):
    options = {"max_deals": 3, **options}
    game = Game(make_config(ruleset, n, **options))
    rng = np.random.default_rng(n)
    for session in range(12):
        state = game.new_session(np.random.default_rng(session))
        game.check_invariants(state)
        steps = 0
        while not state.over:
            legal = game.legal_actions(state)
            assert legal, f"no legal action in {state.phase.name}"
            game.apply(state, legal[rng.integers(len(legal))])
            game.check_invariants(state)
            steps += 1
            assert steps < 20_000, "session did not end"
        assert state.session.results, "a session ended without a single deal"


def _edges():
    for ruleset, spec in RULESETS.items():
        for n in sorted({spec.min_players, spec.max_players}):
            yield ruleset, n


EDGES = list(_edges())


@pytest.mark.parametrize("ruleset,n", EDGES)
def test_pettingzoo_api_every_ruleset(ruleset, n):
    options = OPTION_SPREAD[ruleset][1]
    if options.get("weli") and n > 5:
        options = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(mauscheln_env.env(ruleset=ruleset, num_players=n, max_deals=2, **{k: v for k, v in options.items() if k != "max_deals"}), num_cycles=200)


@pytest.mark.parametrize("ruleset,n", EDGES)
def test_pettingzoo_seed_every_ruleset(ruleset, n):
    seed_test(partial(mauscheln_env.env, ruleset=ruleset, num_players=n, max_deals=2), num_cycles=200)


@pytest.mark.parametrize("ruleset,n", EDGES)
def test_pettingzoo_render_every_ruleset(ruleset, n):
    render_test(partial(mauscheln_env.env, ruleset=ruleset, num_players=n))


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_rewards_sum_to_minus_the_change_of_pot_reserve_and_escrow(ruleset):
    spreads = OPTION_SPREAD[ruleset]
    options = {**spreads[-1], "max_deals": 4}
    options.pop("rounds", None)
    spec = RULESETS[ruleset]
    game = Game(make_config(ruleset, spec.min_players + 1, **options))
    rng = np.random.default_rng(3)
    for session in range(30):
        state = game.new_session(np.random.default_rng(session))
        held = 0  # new_session starts with an empty pot, reserve and queue
        start = list(state.deal.start_chips)
        total = [0] * game.n
        while not state.over:
            legal = game.legal_actions(state)
            for result in game.apply(state, legal[rng.integers(len(legal))]):
                total = [t + d for t, d in zip(total, result.deltas)]
        if not game.scoring.uses_chips:
            assert [s - t for s, t in zip(state.session.start_scores, total)] == state.session.scores
        else:
            assert sum(total) == -(state.session.pot + state.session.reserve + sum(state.session.escrow) - held)
            assert [c + t for c, t in zip(start, total)] == state.session.chips
