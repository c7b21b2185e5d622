"""Property tests: random play over thousands of deals at every player count.

After every step: card and chip conservation (``Game.check_invariants``), a
non-empty legal set for the seat to act, masks that are zero for everyone else;
per deal: rewards sum to minus the change of the pot; every session ends.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mauscheln_env
from mauscheln_env import Game, make_config
from mauscheln_env.engine import Phase


def run_engine_sessions(n: int, knock: bool, sessions: int, seed: int, max_deals: int | None) -> int:
    game = Game(make_config("mauscheln", n, knock=knock, max_deals=max_deals))
    rng = np.random.default_rng(seed)
    deals = 0
    for _ in range(sessions):
        chips = rng.integers(1, 60, size=n).tolist()
        pot = int(rng.integers(0, 30))
        state = game.new_session(np.random.default_rng(rng.integers(1 << 31)), chips=chips, pot=pot)
        game.check_invariants(state)
        steps = 0
        while state.phase is not Phase.OVER:
            legal = game.legal_actions(state)
            if not legal:
                raise AssertionError(f"no legal action for seat {state.to_act} in {state.phase.name}")
            pot_before_step = state.session.pot
            chips_before = list(state.session.chips)
            results = game.apply(state, legal[rng.integers(len(legal))])
            game.check_invariants(state)
            deals += sum(result.kind != "throw_in" for result in results)
            if results:
                # Across this step: every chip that moved went to or came from the pot.
                assert sum(state.session.chips) - sum(chips_before) == -(state.session.pot - pot_before_step)
            steps += 1
            assert steps < 20_000, "session did not terminate"
        check_session_accounting(state, chips, pot)
    return deals


def check_session_accounting(state, chips, pot) -> None:
    """Deal by deal, rewards sum to minus the change of the pot; totals match the chips."""
    pot_at_deal_start = pot
    running = list(chips)
    for result in state.session.results:
        assert sum(result.deltas) == -(result.pot_after - pot_at_deal_start)
        running = [c + d for c, d in zip(running, result.deltas)]
        pot_at_deal_start = result.pot_after
    assert running == state.session.chips


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("knock", [False, True])
def test_random_sessions_keep_every_invariant(n, knock):
    deals = run_engine_sessions(n, knock, sessions=150, seed=n * 10 + knock, max_deals=4)
    assert deals >= 300


def test_unlimited_sessions_end_by_elimination():
    game = Game(make_config("mauscheln", 3, max_deals=None, bankroll=12))
    rng = np.random.default_rng(5)
    for _ in range(20):
        state = game.new_session(np.random.default_rng(rng.integers(1 << 31)))
        while not state.over:
            legal = game.legal_actions(state)
            game.apply(state, legal[rng.integers(len(legal))])
        game.check_invariants(state)
        assert sum(state.session.alive) < 3 or state.session.truncated


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(3, 7),
    knock=st.booleans(),
    max_deals=st.integers(1, 3),
    pot=st.integers(0, 40),
    chips=st.lists(st.integers(1, 80), min_size=7, max_size=7),
    seed=st.integers(0, 2**31 - 1),
)
def test_env_random_play_properties(n, knock, max_deals, pot, chips, seed):
    env = mauscheln_env.raw_env(num_players=n, knock=knock, max_deals=max_deals)
    env.reset(seed=seed, options={"pot": pot, "chips": chips[:n]})
    rng = np.random.default_rng(seed)
    state = env.engine_state
    totals = dict.fromkeys(env.possible_agents, 0.0)
    start_chips = list(state.deal.start_chips)
    for agent in env.agent_iter(max_iter=5000):
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        mask = obs["action_mask"]
        assert mask.any(), "acting agent has an empty mask"
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        assert sorted(info["legal"]) == sorted(env.action_to_str(a) for a in np.flatnonzero(mask))
        env.step(int(rng.choice(np.flatnonzero(mask))))
        env.game.check_invariants(state)
    assert not env.agents, "session did not end"
    assert state.over
    # A finished episode's rewards sum to minus the pot change.
    assert sum(totals.values()) == pytest.approx(-(state.session.pot - pot))
    assert [start_chips[s] + totals[f"player_{s}"] for s in range(n)] == state.session.chips
