"""PettingZoo conformance, the environment contract, and bad input."""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import mauscheln_env
from mauscheln_env import ConfigError, DealError, IllegalActionError, SessionOverError
from mauscheln_env.engine import Phase
from mauscheln_env.rulesets import RULESETS

PLAYER_COUNTS = [3, 4, 5, 7]


@pytest.mark.parametrize("n", PLAYER_COUNTS)
@pytest.mark.parametrize("knock", [False, True])
def test_pettingzoo_api(n, knock):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test passes an unknown reset option on purpose
        api_test(mauscheln_env.env(num_players=n, knock=knock, max_deals=3), num_cycles=300)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_pettingzoo_seed(n):
    seed_test(partial(mauscheln_env.env, num_players=n, knock=True, max_deals=3), num_cycles=300)


@pytest.mark.parametrize("n", PLAYER_COUNTS)
def test_pettingzoo_render(n):
    render_test(partial(mauscheln_env.env, num_players=n))


def play_random(env, seed: int, rng: np.random.Generator):
    env.reset(seed=seed)
    trace = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc, repr(info)))
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)))
    return trace


def test_same_seed_same_session():
    a = play_random(mauscheln_env.env(num_players=5, max_deals=4, knock=True), 7, np.random.default_rng(1))
    b = play_random(mauscheln_env.env(num_players=5, max_deals=4, knock=True), 7, np.random.default_rng(1))
    c = play_random(mauscheln_env.env(num_players=5, max_deals=4, knock=True), 8, np.random.default_rng(1))
    assert a == b
    assert a != c


def test_metadata_spaces_and_names():
    env = mauscheln_env.raw_env(num_players=4)
    assert env.metadata["name"] == "mauscheln_v1"
    assert {"ansi", "human"} <= set(env.metadata["render_modes"])
    assert env.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    assert env.action_space("player_0").n == 32 + 6
    big = mauscheln_env.raw_env(num_players=7)
    assert big.action_space("player_0").n == 52 + 6
    for a in range(env.action_space("player_0").n):
        assert env.action_from_str(env.action_to_str(a)) == a
    assert env.action_from_str("qh") == env.action_from_str("QH")
    env.reset(seed=0)
    obs = env.observe("player_0")["observation"]
    assert obs.shape == env.observation_space("player_0")["observation"].shape
    assert sum(p.size for p in env.observation_layout) == obs.size
    assert env.state().shape == env.state_space.shape


def test_docstring_documents_the_layout_and_the_page_is_current():
    import importlib

    from mauscheln_env import docs

    module = importlib.import_module("mauscheln_env.env")
    env = mauscheln_env.raw_env(num_players=4)
    for piece in env.observation_layout:
        assert f"| `{piece.name}` | {piece.shape} |" in module.__doc__
    assert "{layout}" not in module.__doc__
    page = docs.environment_page()  # the module's page, not the docstring of the env() factory
    assert page.startswith("# Mauscheln (PettingZoo AEC environment)") and "| `trick_cards` |" in page
    assert docs.main(["--check"]) == 0, "docs/environment/index.md is stale: run python -m mauscheln_env.docs"


def test_infos_hold_the_contract_keys_and_only_own_cards():
    env = mauscheln_env.raw_env(num_players=4)
    env.reset(seed=3)
    keys = {"phase", "dealer", "pot", "chips", "trump", "hand", "roles", "trick", "tricks_won", "legal"}
    state = env.engine_state
    for agent in env.agents:
        info = env.infos[agent]
        assert keys <= set(info)
        seat = int(agent.split("_")[1])
        assert set(info["hand"]) == set(env.game.deck.codes_of(state.deal.hands[seat]))
        assert bool(info["legal"]) == (seat == state.to_act)
    acting = env.agent_selection
    mask = env.observe(acting)["action_mask"]
    assert sorted(env.infos[acting]["legal"]) == sorted(env.action_to_str(a) for a in np.flatnonzero(mask))


def test_observation_hides_other_hands_and_the_stock():
    """Perturbing every hidden card (other hands, stock order) leaves a seat's observation unchanged."""
    env_a = mauscheln_env.raw_env(num_players=4)
    env_b = mauscheln_env.raw_env(num_players=4)
    deck = env_a.game.deck
    mine = ["AS", "KS", "7H", "8D"]
    env_a.reset(seed=1, options={"dealer": 0, "deal": {"hands": {1: mine}, "trump": "9S"}})
    env_b.reset(seed=2, options={"dealer": 0, "deal": {"hands": {1: mine}, "trump": "9S"}})
    assert env_a.engine_state.deal.hands[2] != env_b.engine_state.deal.hands[2] or env_a.engine_state.deal.stock != env_b.engine_state.deal.stock
    obs_a = env_a.observe("player_1")["observation"]
    obs_b = env_b.observe("player_1")["observation"]
    np.testing.assert_array_equal(obs_a, obs_b)
    assert deck.codes_of(env_a.engine_state.deal.hands[1]) == deck.codes_of(env_b.engine_state.deal.hands[1])
    # ...but the full state differs.
    assert not np.array_equal(env_a.state(), env_b.state())


def test_observation_is_egocentric():
    env = mauscheln_env.raw_env(num_players=4)
    env.reset(seed=0, options={"dealer": 2})
    for seat in range(4):
        views = env.observation_views(env.observe(f"player_{seat}")["observation"])
        assert views["dealer"].tolist()[(2 - seat) % 4] == 1
        assert views["to_act"].tolist()[(3 - seat) % 4] == 1  # forehand is left of the dealer


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"num_players": 8}, "3-7 players"),
        ({"num_players": 2}, "3-7 players"),
        ({"num_players": 6, "deck_size": 32}, "52"),
        ({"num_players": 4, "deck_size": 52}, "32"),
        ({"colour": "red"}, "allowed:"),
        ({"knock": "yes"}, "True or False"),
        ({"stake": 5}, "multiple of 4"),
        ({"max_deals": 0}, ">= 1"),
        ({"knock_min_rank": "Z"}, "rank"),
        ({"knock_min_rank": "2"}, "rank of this deck"),
        ({"ruleset": "skat"}, "available: mauscheln"),
        ({"ruleset": "mousel", "weli": True}, "unknown option"),
        ({"weli": True, "belli": "7D"}, "mutually exclusive"),
        ({"weli": True, "num_players": 6}, "32-card deck"),
        ({"ruleset": "mouche", "num_players": 7}, "3-6 players"),
        ({"ruleset": "mauscheln_classic", "cap": 2}, "multiple of 4"),
        ({"ruleset": "mousel", "num_players": 6, "deck_size": 32}, "52 cards"),
        ({"ruleset": "mouche", "pamphile_wild": True}, "needs pamphile"),
        ({"render_mode": "rgb_array"}, "allowed"),
    ],
)
def test_bad_configuration_is_refused(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        mauscheln_env.env(**kwargs)


def test_config_errors_are_config_errors():
    with pytest.raises(ConfigError):
        mauscheln_env.raw_env(num_players=9)


@pytest.mark.parametrize(
    "options,needle",
    [
        ({"deal": {"hands": {0: ["AS", "AS", "KS", "QS"]}}}, "twice"),
        ({"deal": {"hands": {0: ["AS", "KS", "QS"]}}}, "has 3 cards"),
        ({"deal": {"hands": {0: ["AS", "KS", "QS", "6D"]}}}, "not in this 32-card deck"),
        ({"deal": {"hands": {0: ["AS", "KS", "QS", "XX"]}}}, "unknown card"),
        ({"deal": {"hands": {9: ["AS", "KS", "QS", "JS"]}}}, "seat"),
        ({"deal": {"hands": {0: ["AS", "KS", "QS", "JS"]}, "trump": "AS"}}, "twice"),
        ({"deal": {"stock": ["AS"] * 2}}, "twice"),
        ({"deal": {"cards": []}}, "unknown key"),
        ({"pot": -1}, r"0\.\.2147483647"),
        ({"chips": [40, 40, 0, 40]}, r"each 1\.\.2147483647"),
        ({"chips": [40, 40]}, "list of 4"),
        ({"dealer": 4}, "0..3"),
    ],
)
def test_bad_reset_options_raise_and_leave_the_env_usable(options, needle):
    env = mauscheln_env.raw_env(num_players=4)
    env.reset(seed=0)
    before = env.observe(env.agent_selection)
    with pytest.raises(ValueError, match=needle):
        env.reset(seed=1, options=options)
    after = env.observe(env.agent_selection)
    np.testing.assert_array_equal(before["observation"], after["observation"])
    env.reset(seed=1)  # still usable


def test_deal_errors_are_deal_errors():
    env = mauscheln_env.raw_env(num_players=4)
    with pytest.raises(DealError):
        env.reset(options={"deal": {"hands": {0: ["AS", "AS", "KS", "QS"]}}})


def test_unknown_reset_option_warns_with_the_known_keys():
    env = mauscheln_env.raw_env(num_players=4)
    with pytest.warns(UserWarning, match="known: dealer, chips, scores, pot, deal"):
        env.reset(seed=0, options={"delaer": 1})


def test_illegal_action_raises_with_the_legal_set_and_changes_nothing():
    env = mauscheln_env.raw_env(num_players=4)
    env.reset(seed=0)
    agent = env.agent_selection
    before = env.observe(agent)["observation"].copy()
    history = list(env.engine_state.session.history)
    with pytest.raises(IllegalActionError, match=r"phase declare; legal: mauscheln, pass"):
        env.step(env.action_from_str("AS"))
    with pytest.raises(IllegalActionError, match="legal"):
        env.step(999)
    with pytest.raises(IllegalActionError):
        env.step(None)
    assert env.agent_selection == agent
    assert env.engine_state.session.history == history
    np.testing.assert_array_equal(env.observe(agent)["observation"], before)
    env.step(env.action_from_str("pass"))  # retry works


def test_wrapped_env_terminates_an_illegal_move_with_the_illegal_reward():
    env = mauscheln_env.env(num_players=4, illegal_reward=-123)
    env.reset(seed=0)
    agent = env.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(env.unwrapped.action_from_str("AS"))
    assert env.rewards[agent] == -123
    assert all(env.terminations.values())


def test_stepping_after_the_session_ended_raises():
    env = mauscheln_env.raw_env(num_players=3)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.engine_state.phase is Phase.OVER
    with pytest.raises(SessionOverError, match="reset"):
        env.step(0)
    env.reset(seed=1)
    assert env.agents


def test_action_strings_reject_nonsense():
    env = mauscheln_env.raw_env(num_players=4)
    with pytest.raises(ValueError, match="allowed"):
        env.action_from_str("fold")
    with pytest.raises(ValueError, match="0..37"):
        env.action_to_str(38)


def test_preset_file_equals_keywords(tmp_path):
    path = tmp_path / "knock.yaml"
    path.write_text("ruleset: mauscheln\nnum_players: 5\nknock: true\nknock_min_rank: K\n")
    from_file = mauscheln_env.raw_env(ruleset=str(path))
    from_kwargs = mauscheln_env.raw_env(num_players=5, knock=True, knock_min_rank="K")
    assert from_file.config == from_kwargs.config
    assert mauscheln_env.load_preset(path) == from_kwargs.config
    bad = tmp_path / "bad.yaml"
    bad.write_text("knock: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid yaml"):
        mauscheln_env.raw_env(ruleset=str(bad))
    with pytest.raises(ConfigError, match="does not exist"):
        mauscheln_env.raw_env(ruleset=str(tmp_path / "missing.yaml"))


def test_shipped_presets_load():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "configs" / "rules"
    presets = sorted(root.glob("*.yaml"))
    assert presets
    for path in presets:
        mauscheln_env.load_preset(path)


def test_render_shows_only_the_acting_hand():
    env = mauscheln_env.raw_env(num_players=4, render_mode="ansi")
    env.reset(seed=0, options={"dealer": 0, "deal": {"hands": {1: ["AS", "KS", "7H", "8D"], 2: ["AC", "KC", "QC", "JC"]}, "trump": "9S"}})
    text = env.render()
    assert "A♠ K♠ 7♥ 8♦" in text  # seat 1 acts
    assert "A♣" not in text
    assert "trump card 9♠" in text and "pot 4" in text


def test_attach_describes_a_state_owned_by_the_caller():
    from mauscheln_env import Game, make_config

    game = Game(make_config("mauscheln", 4))
    state = game.new_session(np.random.default_rng(3), dealer=1)
    env = mauscheln_env.raw_env(num_players=4)
    env.attach(state)
    assert env.agent_selection == "player_2"
    legal = game.legal_actions(state)
    mask = env.observe("player_2")["action_mask"]
    assert sorted(np.flatnonzero(mask).tolist()) == legal
    game.apply(state, legal[0])
    env.attach(state)
    assert env.infos["player_2"]["roles"][2] in ("mauschler", "declined")
    with pytest.raises(ValueError, match="engine State"):
        env.attach("not a state")


@pytest.mark.parametrize("ruleset", RULESETS)
def test_one_seat_info_equals_the_full_infos(ruleset):
    """``attach(state, infos=False)`` + ``seat_info`` (the match runner's path) gives exactly ``infos``."""
    from mauscheln_env import Game

    env = mauscheln_env.raw_env(ruleset=ruleset)
    fast = mauscheln_env.raw_env(ruleset=ruleset)
    game: Game = env.game
    rng = np.random.default_rng(11)
    env.reset(seed=5)
    state = env.engine_state
    steps = 0
    while env.agents and steps < 400:
        fast.attach(state, infos=False)
        assert fast.infos == {}
        for s, agent in enumerate(env.possible_agents):
            assert fast.seat_info(s) == env.infos[agent]
            np.testing.assert_array_equal(fast.observe(agent)["action_mask"], env.observe(agent)["action_mask"])
        if state.phase is Phase.OVER:
            break
        legal = game.legal_actions(state)
        env.step(int(legal[rng.integers(len(legal))]))
        steps += 1
    assert steps > 10


def test_a_complete_but_invalid_deal_spec_is_refused():
    from mauscheln_env import DealSpec

    env = mauscheln_env.raw_env(num_players=4)
    bad = DealSpec(((0, 1, 2, 3), (0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11)), 12, tuple(range(13, 32)))
    with pytest.raises(DealError, match="exactly once"):
        env.reset(seed=0, options={"deal": bad})
    short = DealSpec(((0, 1, 2), (3, 4, 5, 6), (7, 8, 9, 10), (11, 12, 13, 14)), 15, tuple(range(16, 32)))
    with pytest.raises(DealError):
        env.reset(seed=0, options={"deal": short})
