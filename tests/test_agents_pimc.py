"""The search agent: determinizations agree with what the seat knows; its work per decision is bounded."""

from __future__ import annotations

import numpy as np
import pytest

from agents import EnvView, MatchRunner, agent_seed, make_agent, make_deal
from agents.pimc import Inconsistent
from mauscheln_env import Game, make_config


@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("knock", [False, True])
def test_determinizations_look_like_the_real_game_to_the_seat(players, knock):
    """In every sampled deal, replayed to the current decision, the seat's observation (but for the
    session-progress entry) and legal actions are those of the real game, and the invariants hold."""
    game = Game(make_config("mauscheln", players, knock=knock))
    pimc = make_agent("pimc", samples=2, min_samples=2)
    runner = MatchRunner(game)
    checked = 0

    def probe(state, seat, obs, mask, info, action):
        nonlocal checked
        if mask.sum() < 2:
            return
        pimc.setup(game, seat)
        pimc.reset(seat)
        k = pimc._reader.read(obs, info, seat, mask)
        structure = pimc._structure(k)
        view = EnvView(pimc._sgame.config)
        skip = pimc._reader.observer.slice("progress")
        for _ in range(3):
            try:
                det, weight, judged = pimc._determinize(k, structure)
            except Inconsistent:
                continue
            assert 0.0 < weight <= 1.0 and judged >= 0
            pimc._sgame.check_invariants(det)
            view.bind(det)
            obs2, mask2, info2 = view.seat_view(seat)
            keep = np.ones(obs.size, bool)
            keep[skip] = False
            np.testing.assert_array_equal(obs[keep], obs2[keep])
            np.testing.assert_array_equal(mask, mask2)
            assert info2["hand"] == info["hand"] and info2["trick"] == info["trick"]
            checked += 1

    for d in range(3):
        dealer, spec = make_deal(game, 2, d)
        lineup = [make_agent("expert") for _ in range(players)]
        lineup[d % players] = make_agent("random")
        runner.play(lineup, dealer=dealer, deal=spec, session_seed=d, on_decision=probe,
                    seed_for=lambda k, s, d=d: agent_seed(2, d, k, s))
    assert checked > 0


def test_pimc_never_falls_back_on_mauscheln():
    game = Game(make_config("mauscheln", 5, knock=True))
    pimc = make_agent("pimc", samples=3, min_samples=2)
    runner = MatchRunner(game)
    for d in range(6):
        dealer, spec = make_deal(game, 4, d)
        lineup = [make_agent("random") for _ in range(5)]
        lineup[d % 5] = pimc
        runner.play(lineup, dealer=dealer, deal=spec, session_seed=d)
    assert pimc.stats["decisions"] > 0
    assert pimc.stats["fallbacks"] == 0
    assert pimc.stats["inconsistent"] <= pimc.stats["samples"] // 10


def test_pimc_work_per_decision_is_bounded_by_its_sample_budget():
    """Work done, not time (the timing lives in benchmarks/pimc_speed.py): over a few 4-player deals with every
    seat searching, each searched decision uses between 1 and ``samples`` determinizations, the default agent
    searches most multi-choice decisions, and the same seeds do the same work."""

    def play(samples: int, deals: int) -> list[dict[str, int]]:
        game = Game(make_config("mauscheln", 4))
        runner = MatchRunner(game)
        lineup = [make_agent("pimc", samples=samples) for _ in range(4)]
        for d in range(deals):
            dealer, spec = make_deal(game, 9, d)
            runner.play(lineup, dealer=dealer, deal=spec, session_seed=d,
                        seed_for=lambda k, s, d=d: agent_seed(9, d, k, s))
        return [dict(agent.stats) for agent in lineup]

    for samples, deals in ((16, 2), (3, 1)):
        stats = play(samples, deals)
        total = {key: sum(st[key] for st in stats) for key in stats[0]}
        assert total["searched"] >= 2 * deals, total
        assert total["searched"] <= total["samples"] <= samples * total["searched"], total
        assert total["searched"] + total["fallbacks"] <= total["decisions"], total
    assert stats == play(3, 1)  # the same seeds do the same work


def test_the_searchs_models_draw_from_the_agents_seed():
    """The expert models inside the search (rollouts, belief) are seeded from the agent: built from its seed and
    reseeded with every reset(seed), so any random draw of theirs repeats with the seed (they drew from the OS)."""
    game = Game(make_config("mauscheln", 4))

    def draws(agent_seed, reset_seed):
        agent = make_agent("pimc", seed=agent_seed)
        agent.setup(game, 0)
        before = [m.rng.random() for m in agent._models]
        agent.reset(reset_seed)
        return before, [m.rng.random() for m in agent._models]

    assert draws(3, 7) == draws(3, 7)
    assert draws(3, 7)[1] != draws(3, 8)[1] and draws(3, 7)[0] != draws(4, 7)[0]
