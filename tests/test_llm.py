"""The text view of a seat.

* every code in a seat's text is a card that seat may know (its visible hand, own discards and draws, the
  trump card, the cards played, cards shown to all), for every seat at every step of seeded sessions of
  every ruleset and option set; shuffling what a seat cannot see leaves its text alike.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import mauscheln_env
from agents.llm.text import TextView, table_text
from agents.views import EnvView
from mauscheln_env import Game, make_config
from mauscheln_env.config import RULESETS
from tests.hidden import perturb_hidden
from tests.scenario import Scenario
from tests.test_baselines_family import VARIANTS

DOC_DECK = "AH 8S QC KS 9H 7C 8H QD 7S 9C TS JD TC 8D 7D 9S AS KC JC QH JH TH KH QS AC AD KD TD 8C 9D JS 7H"
CODE = re.compile(r"(?<![A-Za-z0-9])([AKQJT2-9][CSHD])(?![A-Za-z0-9])")


# ---------------------------------------------------------------------- the text view
def _known(game: Game, state, seat: int) -> set[str]:
    """The cards ``seat`` may know, from the engine state (independently of the observation)."""
    d = state.deal
    mask = game.visible_hand(state, seat) | d.discards[seat] | (d.drawn[seat] & ~d.blind[seat]) | d.shown()
    for trick in [*d.tricks, d.trick]:
        for _, card in trick:
            mask |= 1 << card
    if not d.undealt:
        mask |= 1 << d.trump_card
    return set(game.deck.codes_of(mask))


def _walk(ruleset: str, players: int, options: dict, sessions: int, reset_options: dict | None = None) -> set[str]:
    """Seeded random sessions on the raw env: at every step every seat's text names only cards it may know, and
    the acting seat's text is the same when every card it cannot see changes place. Returns the phases seen."""
    env = mauscheln_env.raw_env(ruleset=ruleset, num_players=players, **options)
    game = env.game
    views = [TextView(game, s) for s in range(players)]
    twin_view = EnvView(game.config)
    rng = np.random.default_rng(3)
    phases = set()
    for session in range(sessions):
        env.reset(seed=session, options=reset_options)
        while env.agents and not all(env.terminations.values()) and not all(env.truncations.values()):
            state = env.engine_state
            for seat, agent in enumerate(env.possible_agents):
                out = env.observe(agent)
                text = views[seat].render(out["observation"], out["action_mask"], env.infos[agent])
                named = set(CODE.findall(text))
                assert named <= _known(game, state, seat), (seat, named - _known(game, state, seat), text)
                if seat == state.to_act:
                    phases.add(env.infos[agent]["phase"])
                    if not state.deal.undealt:
                        twin_view.bind(perturb_hidden(game, state, seat, rng))
                        obs2, mask2, info2 = twin_view.seat_view(seat)
                        assert views[seat].render(obs2, mask2, info2) == text
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
    return phases


@pytest.mark.parametrize("ruleset,options", [(r, o) for r in sorted(RULESETS) for o in VARIANTS[r]],
                         ids=lambda x: str(x))
def test_a_seat_text_names_only_cards_the_seat_may_know(ruleset, options):
    phases = _walk(ruleset, 4, {"max_deals": 2, **options}, sessions=6)
    assert "play" in phases


def test_every_phase_is_put_into_words():
    """With every option on (and the Pamphile turned for trump) each phase of each ruleset occurs, and its text
    says what the decision is."""
    seen = {}
    for name, spec in RULESETS.items():
        seen[name] = _walk(name, 4, {"max_deals": 3, **spec.showcase}, sessions=12)
    seen["mouche"] |= _walk("mouche", 4, {"pamphile": True, "beatrix": True}, sessions=4,
                            reset_options={"deal": {"trump": "JC"}})
    for name, spec in RULESETS.items():
        assert set(spec.phases) <= seen[name], (name, set(spec.phases) - seen[name])


def test_the_text_of_a_known_position():
    """Named cards: the mauschler has led AH; the goer at seat 3 sees the table, the trick and his moves."""
    sc = Scenario(DOC_DECK, 4, dealer=0, pot=8)
    sc.act(1, "mauscheln")
    sc.act(2, "pass")
    sc.act(3, "go")
    sc.act(0, "pass")
    for seat in (1, 3):
        sc.act(seat, "done")
    hand1 = sc.env.infos["player_1"]["hand"]
    sc.act(1, hand1[0])
    view = TextView(sc.game, 3)
    out = sc.env.observe("player_3")
    info = sc.env.infos["player_3"]
    text = view.render(out["observation"], out["action_mask"], info)
    assert "You are seat 3. The dealer is seat 0." in text
    assert f"Trump card: {sc.env.infos['player_3']['trump']}, face up." in text
    assert f"Your hand: {' '.join(info['hand'])}." in text
    assert "- seat 1: mauschler - declared: needs 2 tricks; exchanged 0 card(s); tricks won 0." in text
    assert "- seat 3 (you, to act): goer" in text
    assert f"Trick 1 in play: seat 1 led {hand1[0]}." in text
    listed = re.findall(r"^(\d+)\. (\S+)", text, re.M)
    assert [m for _, m in listed] == info["legal"] and [int(k) for k, _ in listed] == list(range(1, len(listed) + 1))
    assert "Pot: 12 chips." in text


def test_the_table_text_is_the_rules_of_the_table():
    game = Game(make_config("mouche", 4, pamphile=True))
    text = table_text(game)
    assert "counter-clockwise" in text and "pamphile = True" in text and RULESETS["mouche"].brief.split()[0] in text
