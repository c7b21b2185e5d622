"""Agents: legality across rule variants, seeding, information hygiene, adapters, registry."""

from __future__ import annotations

import numpy as np
import pytest

import mauscheln_env
from agents import EnvView, KnowledgeReader, MatchRunner, agent_seed, make_agent, make_deal, play_env
from agents.base import agent_from_spec, available_agents, parse_agent_spec
from mauscheln_env import Game, make_config
from mauscheln_env.engine import Phase, Role
from tests.hidden import perturb_hidden

FAST = {"random": {}, "beginner": {}, "expert": {}, "pimc": {"samples": 3, "min_samples": 2}}


def _play(game: Game, lineup, deal_index: int, seed: int = 0, **kw):
    dealer, spec = make_deal(game, seed, deal_index)
    runner = MatchRunner(game)
    return runner.play(lineup, dealer=dealer, deal=spec, session_seed=deal_index,
                       seed_for=lambda k, s: agent_seed(seed, deal_index, k, s), **kw)


@pytest.mark.parametrize("name", sorted(FAST))
@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("knock", [False, True])
def test_agents_play_only_legal_actions(name, players, knock):
    """Every agent finishes sessions at every table size, with and without the knock (the engine
    raises on an illegal action, and the invariants are checked after every step)."""
    game = Game(make_config("mauscheln", players, knock=knock, max_deals=2))
    sessions = 2 if name == "pimc" else 6
    for d in range(sessions):
        lineup = [make_agent(name, **FAST[name]) for _ in range(players)]
        if name != "random":  # mix in random players so that unusual positions arise
            lineup[d % players] = make_agent("random")
        record = _play(game, lineup, d, check_invariants=True)
        assert record.settled >= 1


def test_knocks_are_exercised():
    """With the knock option, knock decisions and knocked deals do occur for the heuristic agents."""
    game = Game(make_config("mauscheln", 4, knock=True))
    knocks = 0

    def probe(state, seat, obs, mask, info, action):
        nonlocal knocks
        knocks += game.action_to_str(action) == "knock"

    for d in range(60):
        _play(game, [make_agent("expert") for _ in range(4)], d, on_decision=probe, check_invariants=True)
    assert knocks > 0


@pytest.mark.parametrize("name", sorted(FAST))
def test_same_seed_repeats_itself(name):
    game = Game(make_config("mauscheln", 4, max_deals=2))
    traces = []
    for _ in range(2):
        trace = []
        lineup = [make_agent(name, seed=7, **FAST[name]) for _ in range(4)]
        for d in range(3):
            _play(game, lineup, d, seed=11, on_decision=lambda st, s, o, m, i, a, trace=trace: trace.append((s, a)))
        traces.append(trace)
    assert traces[0] == traces[1]


_perturb_hidden = perturb_hidden  # the name tests/test_batched_expert.py imports


@pytest.mark.parametrize("name", sorted(FAST))
def test_decisions_ignore_hidden_cards(name):
    """Shuffle every card the acting seat cannot see (other hands, stock order, dead and discarded
    cards): its observation and info stay the same, and the agent, reseeded alike, decides alike."""
    game = Game(make_config("mauscheln", 4, knock=True))
    view = EnvView(game.config)
    rng = np.random.default_rng(5)
    probe = make_agent(name, **FAST[name])
    checked = 0

    def check(state, seat, obs, mask, info, action):
        nonlocal checked
        if state.phase is Phase.KNOCK and state.deal.seen[seat] is False and not state.deal.hands[seat]:
            return
        if mask.sum() < 2:
            return
        twin = _perturb_hidden(game, state, seat, rng)
        view.bind(twin)
        obs2, mask2, info2 = view.seat_view(seat)
        np.testing.assert_array_equal(obs, obs2)
        np.testing.assert_array_equal(mask, mask2)
        assert info == info2
        probe.setup(game, seat)
        probe.reset(123)
        first = probe.act(obs2, mask2, info2)
        probe.reset(123)
        assert probe.act(obs, mask, info) == first
        checked += 1

    for d in range(4 if name == "pimc" else 15):
        _play(game, [make_agent(name, **FAST[name]) for _ in range(4)], d, on_decision=check)
    assert checked > 5


@pytest.mark.parametrize("ruleset", sorted(mauscheln_env.RULESETS))
def test_a_view_refreshed_in_place_shows_what_a_fresh_attach_shows(ruleset):
    """EnvView binds a state once and, after each change of it, recomputes only the legal actions: every seat's
    observation, mask and info then equal those of an environment attached afresh, through several deals to
    the end of the session, and ``observation`` equals the first of ``seat_view``."""
    game = Game(make_config(ruleset, 4, max_deals=3))
    view, fresh = EnvView(game.config), EnvView(game.config)
    rng = np.random.default_rng(3)
    state = game.new_session(np.random.default_rng(4))
    view.bind(state)
    steps = 0
    while state.phase is not Phase.OVER:
        view.refresh()
        fresh.bind(state)
        for seat in range(4):
            obs, mask, info = view.seat_view(seat)
            obs2, mask2, info2 = fresh.seat_view(seat)
            np.testing.assert_array_equal(obs, obs2)
            np.testing.assert_array_equal(mask, mask2)
            np.testing.assert_array_equal(view.observation(seat), obs)
            assert info == info2
        assert view.legal() == fresh.legal()
        game.apply(state, int(rng.choice(view.legal())))
        steps += 1
    assert steps > 30


def test_runner_gives_what_the_env_gives():
    """Replaying the runner's actions in the PettingZoo env yields the same observations, masks and infos."""
    game = Game(make_config("mauscheln", 5, knock=True))
    seen = []
    dealer, spec = make_deal(game, 3, 0)
    MatchRunner(game).play([make_agent("expert") for _ in range(5)], dealer=dealer, deal=spec, session_seed=1,
                           on_decision=lambda st, s, o, m, i, a: seen.append((s, o.copy(), m.copy(), dict(i), a)))
    env = mauscheln_env.raw_env(num_players=5, knock=True)
    codes = game.deck.codes
    env.reset(seed=1, options={
        "dealer": dealer,
        "deal": {"hands": {s: [codes[c] for c in h] for s, h in enumerate(spec.hands)},
                 "trump": codes[spec.trump], "stock": [codes[c] for c in spec.stock]},
    })
    for seat, obs, mask, info, action in seen:
        agent = env.agent_selection
        assert agent == f"player_{seat}"
        out = env.observe(agent)
        np.testing.assert_array_equal(out["observation"], obs)
        np.testing.assert_array_equal(out["action_mask"], mask)
        assert env.infos[agent] == info
        env.step(action)


def test_knowledge_matches_the_state():
    """The decoded knowledge agrees with the engine state on everything the seat may know."""
    game = Game(make_config("mauscheln", 4, knock=True))
    reader = KnowledgeReader(game)

    def check(state, seat, obs, mask, info, action):
        k = reader.read(obs, info, seat, mask)
        assert k.hand == game.visible_hand(state, seat)
        assert k.discards == state.deal.discards[seat]
        assert k.roles == list(state.deal.roles)
        assert k.exchanged == list(state.deal.exchanged)
        assert k.trump_card == state.deal.trump_card and k.trump_holder == state.deal.trump_holder
        assert k.knocked == state.deal.knocked and k.dealer == state.session.dealer and k.to_act == state.to_act
        assert k.current_trick == list(state.deal.trick)
        for t, trick in enumerate(state.deal.tricks):
            for s, c in trick:
                assert k.trick_cards[t][s] == c
        assert k.tricks_done == len(state.deal.tricks)
        assert k.legal == game.legal_actions(state)

    for d in range(20):
        _play(game, [make_agent("random") for _ in range(4)], d, on_decision=check)


@pytest.mark.parametrize("wrapped", [True, False])
def test_pettingzoo_adapter(wrapped):
    factory = mauscheln_env.env if wrapped else mauscheln_env.raw_env
    env = factory(num_players=4, knock=True, max_deals=3)
    lineup = [make_agent(n, **FAST[n]) for n in ("expert", "beginner", "random", "pimc")]
    totals = play_env(env, lineup, seed=3)
    assert set(totals) == set(env.unwrapped.possible_agents)
    assert all(float(v).is_integer() for v in totals.values())
    again = play_env(factory(num_players=4, knock=True, max_deals=3),
                     [make_agent(n, **FAST[n]) for n in ("expert", "beginner", "random", "pimc")], seed=3)
    assert again == totals


def test_registry_and_specs():
    assert {"random", "beginner", "expert", "pimc"} <= set(available_agents())
    assert parse_agent_spec("pimc:samples=8,time_limit=0.05,belief=uniform") == (
        "pimc", {"samples": 8, "time_limit": 0.05, "belief": "uniform"})
    agent = agent_from_spec("pimc:samples=5", seed=3)
    assert agent.samples == 5 and agent.seed == 3 and agent.label() == "pimc(samples=5)"
    assert agent_from_spec(agent.spec()).spec() == agent.spec()
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("grandmaster")
    with pytest.raises(ValueError, match="no parameter"):
        make_agent("expert", depth=3)
    with pytest.raises(ValueError, match="samples"):
        make_agent("pimc", samples=0)
    with pytest.raises(ValueError, match="seed"):
        make_agent("random", seed=-1)
    with pytest.raises(ValueError, match="not key=value"):
        parse_agent_spec("pimc:samples")


def test_expert_follows_the_classic_advice():
    """Scenario checks of the expert's bidding with named cards (4 players, hearts trump, 9H turned)."""
    game = Game(make_config("mauscheln", 4))
    deck = game.deck
    expert = make_agent("expert")
    view = EnvView(game.config)

    def decision(hand: list[str], phase_actions: list[str]) -> str:
        """Seat 1 (forehand) holds ``hand``; apply ``phase_actions`` from the deal, then ask seat to act."""
        others = [c for c in deck.codes if c not in hand and c != "9H"]
        hands = {1: hand, 2: others[0:4], 3: others[4:8], 0: others[8:12]}
        spec = game.fill_deal(game.new_session(np.random.default_rng(0), dealer=0), 0,
                              hands={s: [deck.index[c] for c in h] for s, h in hands.items()},
                              trump=deck.index["9H"])
        state = game.new_session(np.random.default_rng(0), dealer=0, deal=spec)
        for a in phase_actions:
            game.apply(state, game.action_from_str(a))
        view.bind(state)
        seat = state.to_act
        assert seat == 1
        expert.setup(game, seat)
        obs, mask, info = view.seat_view(seat)
        return game.action_to_str(expert.act(obs, mask, info))

    assert decision(["AH", "7H", "8C", "9D"], []) == "mauscheln"  # accompanied trump ace always plays
    assert decision(["KH", "QH", "8C", "9D"], []) == "mauscheln"  # K+Q may risk it at a 4-table
    assert decision(["8H", "7C", "8C", "9D"], []) == "pass"  # one low trump: no
    # Going with: forehand passes, seat 2 declares, seats 3 and 0 pass, forehand decides last.
    before = ["pass", "mauscheln", "pass", "pass"]
    assert decision(["8H", "7H", "8C", "9D"], before) == "go"  # two trumps go
    assert decision(["KH", "7C", "8C", "9D"], before) == "go"  # the bare trump king goes
    assert decision(["7C", "8C", "9D", "TS"], before) == "pass"  # nothing: out


def test_roles_are_recorded():
    game = Game(make_config("mauscheln", 4))
    record = _play(game, [make_agent("expert") for _ in range(4)], 1)
    assert record.roles and all(len(r) == 4 for r in record.roles)
    assert set(sum(record.roles, [])) <= {"mauschler", "goer", "out", "declined", "undecided", "eliminated"}
    assert Role.MAUSCHLER.name.lower() == "mauschler"


@pytest.mark.parametrize("ruleset", sorted(__import__("mauscheln_env").RULESETS))
def test_agents_degrade_gracefully_on_every_ruleset(ruleset):
    """On rulesets whose vocabulary the heuristics do not know, they (and pimc, through the expert)
    fall back to legal moves of their own and never crash."""
    players = 4
    game = Game(make_config(ruleset, players))
    for name in sorted(FAST):
        for d in range(2):
            lineup = [make_agent(name, **FAST[name]) for _ in range(players)]
            _play(game, lineup, d, check_invariants=True)


@pytest.mark.parametrize("ruleset", ["mauscheln", "mauscheln_classic", "mousel", "mouche", "muschka"])
def test_skipping_forced_decisions_changes_no_play(ruleset):
    """The match runner answers a one-action decision for a ``plays_forced_blind`` agent without building its
    view; the same agent asked at every decision plays the same sessions."""
    from agents.scripted.baselines import BeginnerAgent, ExpertAgent

    class AskedExpert(ExpertAgent):
        plays_forced_blind = False

    class AskedBeginner(BeginnerAgent):
        plays_forced_blind = False

    game = Game(make_config(ruleset))
    runner = MatchRunner(game)
    forced = 0

    def count(state, seat, obs, mask, info, action):
        nonlocal forced
        forced += int(mask.sum()) == 1

    for d in range(12):
        dealer, spec = make_deal(game, 3, d)
        seat_seed = lambda k, s, d=d: agent_seed(3, d, k, s)  # noqa: E731
        fast = runner.play([(ExpertAgent if s % 2 else BeginnerAgent)() for s in range(game.n)], dealer=dealer,
                           deal=spec, session_seed=d, seed_for=seat_seed, keep_results=True)
        asked = runner.play([(AskedExpert if s % 2 else AskedBeginner)() for s in range(game.n)], dealer=dealer,
                            deal=spec, session_seed=d, seed_for=seat_seed, keep_results=True, on_decision=count)
        assert (fast.deltas, fast.roles, fast.decisions) == (asked.deltas, asked.roles, asked.decisions)
    assert forced > 0  # the fast path was exercised
