"""The scripted baselines of every ruleset: legality, determinism, information hygiene, the seeds' advice.

* every agent finishes sessions at every table size of every ruleset, with the
  options switched on (the engine raises on an illegal action; invariants are
  checked after every step), and ``beginner``/``expert`` decide every choice by
  a rule of their ruleset's strategy, never by the random fallback;
* the same seed gives the same play;
* shuffling every card a seat cannot see (other hands, stock order, dead
  cards, others' discards) leaves its observation and info alike and its
  decisions the same, in every ruleset;
* one scenario per ruleset with named cards shows a rule of thumb of its seed.
"""

from __future__ import annotations

import numpy as np
import pytest

import mauscheln_env
from agents import EnvView, make_agent
from agents.scripted import STRATEGIES
from mauscheln_env import Game, make_config
from mauscheln_env.config import RULESETS
from mauscheln_env.engine import Phase
from tests.hidden import perturb_hidden
from tests.scenario import Scenario
from tests.test_agents import _play
from tests.test_family_examples import W1_DECK

SCRIPTED = ("beginner", "expert")
AGENTS = ("random", *SCRIPTED)

VARIANTS = {
    "mauscheln": [{}, {"knock": True, "vierling": True, "belli": "7D"}, {"weli": True, "knock": True}],
    "mauscheln_classic": [{}, {"mauschelzwang": True, "mitgehzwang": True, "forced_knock_new_pot": True, "cap": 40,
                               "schieben": True}, {"knock": False, "classic_always_32": True}],
    "mousel": [{}, {"volunteer_leader": True, "knock": True, "exchange_limit": 2}, {"deck_size": 52}],
    "mouche": [{}, {"pamphile": True, "pamphile_wild": True, "beatrix": True},
               {"queue": True, "mery_cap": 10, "deal_2_3": True, "beatrix": True}],
    "muschka": [{}, {"start_score": 4}],
}
"""Option sets each ruleset is played with (the first is the default table)."""


def _players(ruleset: str) -> list[int]:
    spec = RULESETS[ruleset]
    return list(range(spec.min_players, spec.max_players + 1))


def _cases() -> list[tuple[str, int, dict]]:
    """Every ruleset, player count and option set of :data:`VARIANTS` that makes a valid table."""
    cases = []
    for ruleset in RULESETS:
        for n in _players(ruleset):
            for opts in VARIANTS[ruleset]:
                try:
                    config = make_config(ruleset, n, **opts)
                except ValueError:
                    continue
                if all(other.to_dict() != config.to_dict() for other in
                       (make_config(r, p, **o) for r, p, o in cases)):
                    cases.append((ruleset, n, opts))
    return cases


def test_every_ruleset_has_both_strategies():
    assert set(STRATEGIES) == set(RULESETS)
    for ruleset, levels in STRATEGIES.items():
        assert set(levels) == set(SCRIPTED), ruleset


@pytest.mark.parametrize("ruleset,players,options", _cases(), ids=lambda x: str(x))
def test_agents_are_legal_and_decide_by_rule(ruleset, players, options):
    """Mixed tables (so that odd positions arise) finish two-deal sessions; every choice a scripted
    agent faces gets an answer from its strategy (a legal action, not the random fallback)."""
    game = Game(make_config(ruleset, players, **{"max_deals": 2, **options}))
    fallback = []

    def probe(state, seat, obs, mask, info, action):
        agent = lineup[seat]
        if agent.name in SCRIPTED and mask.sum() >= 2:
            legal = np.flatnonzero(mask).tolist()
            agent.strategy.bind(seat)
            answer = agent.strategy.decide(obs, mask, info, legal)
            if answer not in legal:
                fallback.append((agent.name, info["phase"], answer))

    for d in range(3):
        lineup = [make_agent(AGENTS[(s + d) % 3]) for s in range(players)]
        record = _play(game, lineup, d, check_invariants=True, on_decision=probe)
        assert record.settled >= 1
    assert not fallback, fallback[:5]


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
@pytest.mark.parametrize("name", SCRIPTED)
def test_same_seed_same_play(ruleset, name):
    game = Game(make_config(ruleset, 4, max_deals=2))
    traces = []
    for _ in range(2):
        trace = []
        lineup = [make_agent(name, seed=3) for _ in range(3)] + [make_agent("random", seed=3)]
        for d in range(3):
            _play(game, lineup, d, seed=5, on_decision=lambda st, s, o, m, i, a, trace=trace: trace.append((s, a)))
        traces.append(trace)
    assert traces[0] == traces[1] and len(traces[0]) > 20


# ---------------------------------------------------------------------- hidden cards
def _hidden_cases() -> list[tuple[str, int, dict]]:
    out = [(r, 4, o) for r in sorted(RULESETS) for o in VARIANTS[r]]
    out += [(r, n, {}) for r in sorted(RULESETS) for n in (3, RULESETS[r].max_players)]
    return out


@pytest.mark.parametrize("ruleset,players,options", _hidden_cases(), ids=lambda x: str(x))
def test_decisions_ignore_hidden_cards(ruleset, players, options):
    """Shuffle what the acting seat cannot see: its observation and info stay the same, and beginner and
    expert, reseeded alike, decide alike."""
    if ruleset == "mousel" and players >= 6:  # noqa: PLR2004 - six and more play with the full pack
        options = {"deck_size": 52}
    game = Game(make_config(ruleset, players, **options))
    view = EnvView(game.config)
    rng = np.random.default_rng(11)
    probes = {name: make_agent(name) for name in SCRIPTED}
    checked = 0

    def check(state, seat, obs, mask, info, action):
        nonlocal checked
        if mask.sum() < 2 or (state.phase is Phase.KNOCK and not state.deal.seen[seat]) or state.deal.undealt:
            return
        twin = perturb_hidden(game, state, seat, rng)
        view.bind(twin)
        obs2, mask2, info2 = view.seat_view(seat)
        np.testing.assert_array_equal(obs, obs2)
        np.testing.assert_array_equal(mask, mask2)
        assert info == info2
        for probe in probes.values():
            probe.setup(game, seat)
            probe.reset(123)
            first = probe.act(obs2, mask2, info2)
            probe.reset(123)
            assert probe.act(obs, mask, info) == first, (probe.name, info["phase"])
        checked += 1

    for d in range(8):
        _play(game, [make_agent(AGENTS[(s + d) % 3]) for s in range(players)], d, on_decision=check)
    assert checked > 20


@pytest.mark.parametrize("ruleset,players,options", _hidden_cases(), ids=lambda x: str(x))
def test_deciding_from_the_state_equals_deciding_from_the_observation(ruleset, players, options):
    """``act_state`` (how the search's model players decide, reading the seat's pieces from the state without
    encoding them) gives the knowledge, the action and the random draws of ``act`` on the observation."""
    if ruleset == "mousel" and players >= 6:  # noqa: PLR2004 - six and more play with the full pack
        options = {"deck_size": 52}
    game = Game(make_config(ruleset, players, **options))
    probes = [(make_agent(name), make_agent(name)) for name in SCRIPTED]
    checked = 0

    def check(state, seat, obs, mask, info, action):
        nonlocal checked
        legal = np.flatnonzero(mask).tolist()
        if len(legal) < 2:  # noqa: PLR2004
            return
        for on_obs, on_state in probes:
            for agent in (on_obs, on_state):
                agent.setup(game, seat)
                agent.reset(123)
            assert vars(on_state.strategy.read_state(state, info, legal)) == \
                vars(on_obs.strategy.read(obs, mask, info))
            assert on_state.act_state(state, info, legal) == on_obs.act(obs, mask, info), (on_obs.name, info["phase"])
            assert on_state.rng.random() == on_obs.rng.random()  # the same draws were taken
        checked += 1

    for d in range(6):
        _play(game, [make_agent(AGENTS[(s + d) % 3]) for s in range(players)], d, on_decision=check)
    assert checked > 20


# ---------------------------------------------------------------------- the seeds' advice, with named cards
def _decision(env, seat: int, name: str = "expert") -> str:
    agent = make_agent(name)
    agent.setup(env.game, seat)
    who = f"player_{seat}"
    out = env.observe(who)
    return env.action_to_str(agent.act(out["observation"], out["action_mask"], env.infos[who]))


def test_classic_expert_buys_and_discards_like_the_worked_game():
    """[000]: A knocks on the queen of hearts with a trumpless hand, "wirft sie auf den Scheiterhaufen und
    kauft vier neue", then sees AC JC QS 9H and "wirft nun Pik-Dame ab" for the knocked card."""
    sc = Scenario(W1_DECK, 5, dealer=0, pot=20, ruleset="mauscheln_classic")
    sc.act(0, "knock")
    for seat, action in ((1, "go"), (2, "go"), (3, "pass"), (4, "pass")):
        sc.act(seat, action)
    thrown = []
    while sc.state.to_act == 0 and sc.state.phase is Phase.EXCHANGE and sc.state.deal.exchanged[0] is None:
        action = _decision(sc.env, 0)
        sc.act(0, action)
        thrown.append(action)
    assert sorted(thrown) == sorted(["8S", "7C", "8D", "9D", "done"])
    sc.exchange(1)
    sc.exchange(2, ["7S", "8C", "7D"])
    assert sorted(sc.env.infos["player_0"]["hand"]) == sorted(["AC", "JC", "QS", "9H"])
    assert _decision(sc.env, 0) == "QS"
    # "Wer das besetzte Trumpfas hat, mauschelt stets": B, with AH KH 7H, goes with.
    assert _decision(Scenario(W1_DECK, 5, dealer=0, pot=20, ruleset="mauscheln_classic", knock=False).env, 1) \
        == "mauscheln"


def _mousel(hand: list[str], seat: int, trump: str = "9H", before: tuple[str, ...] = ()) -> str:
    game = Game(make_config("mousel", 4))
    others = [c for c in game.deck.codes if c not in hand and c != trump]
    hands = {s: others[4 * i:4 * i + 4] for i, s in enumerate(x for x in range(4) if x != seat)}
    hands[seat] = hand
    env = mauscheln_env.raw_env(ruleset="mousel", num_players=4)
    env.reset(seed=0, options={"dealer": 0, "deal": {"hands": hands, "trump": trump}})
    for action in before:
        env.step(env.action_from_str(action))
    assert env.engine_state.to_act == seat
    return _decision(env, seat)


def test_mousel_expert_is_careful_as_forehand_and_counts_who_dropped():
    """[004]: "Vær ekstra forsigtig som forhånd. Du skal tage to stik, ikke ét." One middling trump and a
    side ace stay out as the forehand, who must take two tricks, and come in on the next seat once the
    forehand dropped ("Melder to spillere fra, er der færre til at kæmpe om stikkene"); behind two seats
    that came in, a hand without a trump stays out ("Har du ingen, bør du melde fra")."""
    hand = ["QH", "AC", "8S", "7D"]
    assert _mousel(hand, seat=1) == "out"
    assert _mousel(hand, seat=2, before=("out",)) == "in"
    assert _mousel(["AC", "KC", "8S", "7D"], seat=3, before=("in", "in")) == "out"


def _mouche(hands: dict[int, list[str]], trump: str, before: tuple[str, ...] = (), **options) -> mauscheln_env.raw_env:
    env = mauscheln_env.raw_env(ruleset="mouche", num_players=4, **options)
    env.reset(seed=0, options={"dealer": 0, "deal": {"hands": hands, "trump": trump}})
    for action in before:
        env.step(env.action_from_str(action))
    return env


def test_mouche_experts_keep_a_flush_and_mind_the_lone_seat():
    """[003]: "Tausch keinen Flush" — a dealt flush stays, for beginner and expert alike. And the lone rule
    ("Bleibt nur ein Spieler übrig ..., nimmt er den Pot"): the dealer passes a trumpless hand behind
    three seats that stayed, but plays it when only one seat stayed, since passing would hand that seat
    the pot."""
    flush = {3: ["KS", "JS", "9S", "7S", "6S"], 2: ["KC", "QC", "JC", "AC", "TC"],
             1: ["KD", "QD", "JD", "AD", "TD"], 0: ["9C", "8C", "7C", "6C", "9D"]}
    env = _mouche(flush, "QH")
    assert env.engine_state.to_act == 3  # mouche deals to the right: the forehand is the dealer's right
    assert _decision(env, 3, "expert") == "stay" and _decision(env, 3, "beginner") == "stay"
    deal = {0: ["9C", "8C", "6D", "8S", "9D"], 3: ["KS", "JS", "9S", "7S", "6S"],
            2: ["KD", "QD", "JD", "AD", "TD"], 1: ["KC", "QC", "JC", "AC", "TC"]}
    assert _decision(_mouche(deal, "QH", before=("stay", "stay", "stay")), 0) == "pass"
    assert _decision(_mouche(deal, "QH", before=("pass", "pass", "stay")), 0) != "pass"


def test_muschka_ace_of_spades_holder_with_a_score_of_three_ducks():
    """[003]: "wer einen Stich zu viel macht, fängt wieder bei 25 an." The holder of the ace of spades with
    a score of 3 overshoots with any trick (-1 and -5), so on a led spade he follows low; with 25 to go he
    takes the trick with the ace."""
    hands = {1: ["9S", "KC", "QC", "JC", "TC"], 2: ["AS", "7S", "8D", "7D", "6D"],
             3: ["KS", "9C", "8C", "7C", "6C"], 0: ["QS", "AC", "9D", "TD", "JD"]}

    def holder_plays(score: int) -> str:
        env = mauscheln_env.raw_env(ruleset="muschka", num_players=4)
        env.reset(seed=0, options={"dealer": 0, "scores": [25, 25, score, 25],
                                   "deal": {"hands": hands, "trump": "KH"}})
        for _ in range(4):
            env.step(env.action_from_str("stay"))
        env.step(env.action_from_str("9S"))  # the forehand leads
        assert env.engine_state.to_act == 2
        return _decision(env, 2)

    assert holder_plays(3) == "7S"
    assert holder_plays(25) == "AS"
