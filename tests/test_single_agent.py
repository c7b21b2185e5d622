"""SingleAgentEnv hands the learning seat everything it receives, also what settles before its first decision."""

from __future__ import annotations

import numpy as np
import pytest

import mauscheln_env
from agents.single_agent import SingleAgentEnv

# Start values set explicitly so that the seat's change over the session can be read off the last info.
# The pot of 8 makes a lone seat's win worth something in the pot games.
START = {"muschka": {"scores": [25, 25, 25]}}
POT_START = {"chips": [30, 30, 30], "pot": 8}
# Where the rules let a deal settle before a seat is ever asked (a lone seat takes the deal unasked).
# In mauscheln and mauscheln_classic every seat is asked in every deal before it settles.
SETTLES_UNASKED = {"mouche", "mousel", "muschka"}


def seat_change(info: dict, options: dict, seat: int) -> float:
    """What the seat received over the session: chips won, or (muschka) the decrease of its score."""
    if "scores" in options:
        return float(options["scores"][seat] - info["scores"][seat])
    return float(info["chips"][seat] - options["chips"][seat])


def play(env: SingleAgentEnv, seed: int, options: dict) -> tuple[float, float, float]:
    """(sum of the episode's rewards, the seat's change, what it had received before its first decision)."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed, options=options)
    before = env.env.last(observe=False)[1]  # PettingZoo's cumulative reward of the seat to act (the learner)
    total, done, info = 0.0, False, {}
    while not done:
        _, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        total += reward
        done = terminated or truncated
    return total, seat_change(info, options, env.seat), before


@pytest.mark.parametrize("ruleset", list(mauscheln_env.RULESETS))
def test_episode_rewards_sum_to_the_seats_change_also_when_a_deal_settles_before_it_acts(ruleset):
    options = START.get(ruleset, POT_START)
    env = SingleAgentEnv(opponents="random", ruleset=ruleset, num_players=3, max_deals=2)
    unasked = 0
    for seed in range(60):
        total, change, before = play(env, seed, options)
        assert total == change, (seed, total, change, before)
        unasked += before != 0
    if ruleset in SETTLES_UNASKED:
        assert unasked > 0, "no session had a deal that settled before the learning seat acted"


def test_the_reported_muschka_session_sums_to_the_score_change():
    """The issue's case: muschka, 3 players, 2 deals, reset(seed=32); a deal settles before the seat acts."""
    env = SingleAgentEnv(opponents="random", ruleset="muschka", num_players=3, max_deals=2)
    total, change, before = play(env, 32, {"scores": [25, 25, 25]})
    assert before != 0 and total == change


def test_an_illegal_first_action_still_pays_what_settled_before_it():
    env = SingleAgentEnv(opponents="random", ruleset="muschka", num_players=3, max_deals=2, illegal_reward=-100.0)
    env.reset(seed=32, options={"scores": [25, 25, 25]})
    before = env.env.last(observe=False)[1]
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and info["illegal_action"] and reward == -100.0 + before and before != 0
