"""The engine's public API for search and tools: clone, sessions with eliminated seats, stakes paid, probes.

Every test runs on every ruleset (with options that reach its special steps), so that an agent that
uses only this API (``agents/search/pimc.py`` does) works on the whole family.
"""

from __future__ import annotations

import numpy as np
import pytest

from mauscheln_env import RULESETS, Game, make_config
from mauscheln_env.engine import Phase, State
from mauscheln_env.observation import Observer


def _game(ruleset: str, extra: dict | None = None) -> Game:
    """The ruleset with every optional rule on (its ``showcase`` options), one seat above its smallest table."""
    spec = RULESETS[ruleset]
    options = {**spec.showcase, "max_deals": 6, **(extra or {})}
    options.pop("rounds", None)
    return Game(make_config(ruleset, spec.min_players + 1, **options))


def _play(game: Game, state: State, moves: np.random.Generator, steps: int) -> list:
    out = []
    for _ in range(steps):
        if state.over:
            break
        legal = game.legal_actions(state)
        out.append([r.deltas for r in game.apply(state, legal[int(moves.integers(len(legal)))])])
    return out


def _snapshot(game: Game, state: State) -> tuple:
    observer = Observer(game, omniscient=True)
    return (state.phase, state.to_act, observer.encode(state).tobytes(), list(state.session.history))


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_clone_continues_exactly_like_the_original_across_deals_and_reshuffles(ruleset):
    """A clone (its own copy of the generator) plays the same continuation as the original, through later
    deals and reshuffles, and neither changes the other."""
    game = _game(ruleset)
    for session in range(25):
        state = game.new_session(np.random.default_rng(session))
        _play(game, state, np.random.default_rng(1000 + session), int(np.random.default_rng(session).integers(40)))
        if state.over:
            continue
        before = _snapshot(game, state)
        twin = game.clone(state)
        a = _play(game, twin, np.random.default_rng(session), 400)
        assert _snapshot(game, state) == before, "playing the clone changed the original"
        b = _play(game, state, np.random.default_rng(session), 400)
        assert a == b and _snapshot(game, state) == _snapshot(game, twin)
        game.check_invariants(twin)


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_clone_sharing_the_generator_branches_within_a_deal(ruleset):
    """``clone(state, rng=state.rng)`` is the cheap branch for a search: within a deal (no shuffles) every
    branch sees the same game as a full clone."""
    game = _game(ruleset)
    for session in range(25):
        state = game.new_session(np.random.default_rng(session))
        _play(game, state, np.random.default_rng(7 + session), 3)
        if state.over:
            continue
        shared, full = game.clone(state, rng=state.rng), game.clone(state)
        assert shared.session.rng is state.session.rng and full.session.rng is not state.session.rng
        deals = state.session.deals_started
        for branch in (shared, full):
            moves = np.random.default_rng(session)
            while not branch.over and branch.session.deals_started == deals and branch.phase is not Phase.EXCHANGE:
                legal = game.legal_actions(branch)
                game.apply(branch, legal[int(moves.integers(len(legal)))])
        assert _snapshot(game, shared) == _snapshot(game, full)


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_a_session_with_eliminated_seats_never_deals_or_asks_them(ruleset):
    game = _game(ruleset)
    n = game.n
    alive = [True] * n
    alive[1] = False
    for session in range(20):
        state = game.new_session(np.random.default_rng(session), alive=alive, dealer=0)
        assert state.deal.hands[1] == 0 or state.deal.undealt
        while not state.over:
            assert state.to_act != 1
            assert state.deal.hands[1] == 0
            legal = game.legal_actions(state)
            game.apply(state, legal[int(np.random.default_rng(session + len(state.session.history)).integers(len(legal)))])
            game.check_invariants(state)
        assert not state.session.alive[1]


@pytest.mark.parametrize("ruleset", list(RULESETS))
def test_ante_false_starts_with_the_stakes_already_paid(ruleset):
    """``ante=False``: chips and pot are taken as they are after the stakes; the first decision is asked."""
    game = _game(ruleset)
    if not game.scoring.uses_chips:  # muschka: no stakes at all, the flag changes nothing
        a = game.new_session(np.random.default_rng(0), dealer=0, scores=[9] * game.n, ante=False)
        b = game.new_session(np.random.default_rng(0), dealer=0, scores=[9] * game.n)
        assert _snapshot(game, a) == _snapshot(game, b)
        return
    chips = [30] * game.n
    paid = game.new_session(np.random.default_rng(0), dealer=0, chips=chips, pot=10, ante=False)
    assert paid.session.chips == chips and paid.session.pot == 10
    assert paid.deal.start_chips == chips and paid.session.total == sum(chips) + 10
    assert paid.phase is not Phase.OFFER and not paid.over
    normal = game.new_session(np.random.default_rng(0), dealer=0, chips=chips, pot=10)
    assert normal.session.chips[0] < 30 or normal.phase is Phase.OFFER


def test_legal_play_mask_probes_another_hand_without_touching_the_state():
    game = Game(make_config("mauscheln", 4))
    deck = game.deck
    state = game.new_session(np.random.default_rng(5), deal={"hands": {1: [deck.parse(c) for c in "KH AS KS 7C".split()],
                                                                        2: [deck.parse(c) for c in "7H AH 9C TD".split()]},
                                                             "trump": deck.parse("8S")}, dealer=0)
    game.apply(state, game.MAUSCHELN)  # seat 1
    for _ in range(3):
        game.apply(state, game.GO)
    while state.phase is Phase.EXCHANGE:
        game.apply(state, game.DONE)
    game.apply(state, deck.parse("KH"))  # seat 1 leads the king of hearts; seat 2 to follow
    hands = list(state.deal.hands)
    probe = deck.mask_of(["AH", "7H", "QS"])
    assert deck.codes_of(game.legal_play_mask(state, hand=probe)) == ["AH"]
    assert deck.codes_of(game.legal_play_mask(state, hand=deck.mask_of(["QS", "7C"]))) == ["QS"]
    assert state.deal.hands == hands


def test_with_hand_changes_only_the_copy():
    game = Game(make_config("mauscheln", 4))
    state = game.new_session(np.random.default_rng(1))
    copy = game.with_hand(state, 2, 0b1011)
    assert copy.deal.hands[2] == 0b1011 and state.deal.hands[2] != 0b1011
    assert copy.session.rng is state.session.rng
