"""The tensor ``beginner`` and ``expert`` (agents/tensor) against the Python agents, decision by decision.

For every ruleset, every allowed player count and every preset in
configs/rules/, random sessions are played on the reference engine by a mix of
the Python agent of the level and random agents (so that unusual positions
arise: thin bids, eliminated seats, carried pots, random chips). At every
decision the acting seat's observation and mask are kept with what the Python
agent of that seat answers; the tensor agent then decides all of them in one
batch and must agree exactly. The random fallback is checked with a shared
uniform (agents/tensor/common.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents import EnvView
from agents.scripted.baselines import BeginnerAgent, ExpertAgent
from agents.tensor import TENSOR_AGENTS, batched_opponent, tensor_agent
from agents.tensor.common import SharedUniform, TensorAgent, check_layout
from agents.tensor.rows import InfoFromObservation, RowExpert
from mauscheln_env import Game, make_config
from mauscheln_env.config import RULESETS, load_preset
from mauscheln_env.errors import ConfigError
from mauscheln_env.observation import Numbers
from tests.decisions import Decisions, assert_same_decisions
from tests.decisions import play_decisions as record_decisions
from tests.hidden import perturb_hidden

LEVELS = {"beginner": BeginnerAgent, "expert": ExpertAgent}
PRESETS = sorted(Path(__file__).resolve().parents[1].glob("configs/rules/*.yaml"))
TABLES = [(r, n) for r, spec in RULESETS.items() for n in range(spec.min_players, spec.max_players + 1)]
DECISIONS = 1000
"""Decisions compared per (ruleset, players, level) in the default suite: 9,000-10,000 per ruleset."""
SLOW_DECISIONS = 10_000


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def play_decisions(game: Game, level: str, count: int, seed: int, keep_states: bool = False,
                   **params) -> Decisions:
    """Recorded decisions of Python agents of ``level`` (with ``params``) and random agents (tests/decisions.py)."""
    cls = LEVELS[level]
    return record_decisions(game, lambda **kw: cls(**params, **kw), count, seed, keep_states=keep_states)


def _check(game: Game, level: str, count: int, seed: int, **params) -> Decisions:
    decisions = play_decisions(game, level, count, seed, **params)
    assert_same_decisions(tensor_agent(level, game, **params), decisions)
    covered = decisions.coverage()
    assert covered["play"] >= min(100, count // 20), dict(covered)
    assert sum(v for p, v in covered.items() if p != "play") >= min(50, count // 40), dict(covered)
    return decisions


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize(("ruleset", "players"), TABLES)
def test_same_decisions_as_the_python_agent(ruleset, players, level):
    game = Game(make_config(ruleset, players, max_deals=8))
    _check(game, level, DECISIONS, seed=100 * players + len(ruleset) + (level == "expert"))


@pytest.mark.slow
@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize(("ruleset", "players"), TABLES)
def test_same_decisions_as_the_python_agent_slow(ruleset, players, level):
    game = Game(make_config(ruleset, players, max_deals=8))
    _check(game, level, SLOW_DECISIONS, seed=7 + 100 * players + len(ruleset) + (level == "expert"))


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.stem)
def test_same_decisions_on_the_presets(preset, level):
    config = load_preset(preset)
    if config.max_deals is None or config.max_deals > 8:
        config = load_preset(preset, max_deals=8)
    decisions = _check(Game(config), level, 1500, seed=len(preset.stem))
    if "knock" in config.spec.phases and config.options.get("knock"):
        assert decisions.coverage()["knock"] >= 5


@pytest.mark.parametrize("risk", [-1.0, 1.5])
@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_same_decisions_with_risk(ruleset, risk):
    game = Game(make_config(ruleset, 4, max_deals=8))
    _check(game, "expert", 800, seed=int(10 * (risk + 2)), risk=risk)


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_decisions_ignore_hidden_cards(ruleset, level):
    """Moving every card the seat cannot see changes neither its observation nor the tensor decision."""
    game = Game(make_config(ruleset, 4, max_deals=4))
    decisions = play_decisions(game, level, 200, seed=5, keep_states=True)
    view = EnvView(game.config)
    rng = np.random.default_rng(5)
    twins_obs, twins_mask = [], []
    for state, seat in decisions.states:
        view.bind(perturb_hidden(game, state, seat, rng))
        obs, mask, _ = view.seat_view(seat)
        twins_obs.append(obs)
        twins_mask.append(mask)
    obs, mask = decisions.tensors()
    twin_obs, twin_mask = torch.from_numpy(np.stack(twins_obs)), torch.from_numpy(np.stack(twins_mask))
    assert torch.equal(obs, twin_obs) and torch.equal(mask, twin_mask)
    agent = tensor_agent(level, game)
    assert torch.equal(agent.act(twin_obs, twin_mask, u=decisions.u()), torch.as_tensor(decisions.expected))


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_random_fallback_with_a_shared_uniform(ruleset, level):
    """Where the strategy has no rule (here: rows in no phase) both agents draw legal[floor(u * count)]."""
    game = Game(make_config(ruleset, 4))
    agent = tensor_agent(level, game)
    rng = np.random.default_rng(3)
    B = 400
    obs = torch.zeros(B, agent.obs_size)
    mask = torch.from_numpy(rng.random((B, game.num_actions)) < 0.3)
    mask[:, 0] = True
    u = torch.rand(B, generator=torch.Generator().manual_seed(4))
    got = agent.act(obs, mask, u=u)
    reader = InfoFromObservation(game, "test")
    python = LEVELS[level](seed=0)
    python.setup(game, 0)
    for b in range(B):
        python.rng = SharedUniform([float(u[b])])
        info = reader.info(obs[b].numpy())
        assert info["phase"] is None
        assert int(got[b]) == python.act(obs[b].numpy(), mask[b].numpy(), info)
    assert len(set(got.tolist())) > 5  # it really draws


def test_fallback_draws_from_the_seeded_generator():
    game = Game(make_config("mouche", 4))
    mask = torch.from_numpy(np.random.default_rng(0).random((2000, game.num_actions)) < 0.3)
    mask[:, 0] = True
    obs = torch.zeros(2000, tensor_agent("beginner", game).obs_size)
    first = tensor_agent("beginner", game, seed=7).act(obs, mask)
    again = tensor_agent("beginner", game, seed=7).act(obs, mask)
    other = tensor_agent("beginner", game, seed=8).act(obs, mask)
    assert bool(mask[torch.arange(2000), first].all())
    assert torch.equal(first, again) and not torch.equal(first, other)
    two = torch.zeros(4000, game.num_actions, dtype=torch.bool)
    two[:, [0, 5]] = True
    share = (tensor_agent("beginner", game, seed=1).act(torch.zeros(4000, obs.shape[1]), two) == 0).float().mean()
    assert 0.45 < float(share) < 0.55


def test_single_legal_action_and_empty_mask():
    game = Game(make_config("mousel", 4))
    agent = tensor_agent("beginner", game)
    obs = torch.zeros(2, agent.obs_size)
    mask = torch.zeros(2, game.num_actions, dtype=torch.bool)
    mask[0, 7] = True
    assert agent.act(obs, mask).tolist() == [7, 0]
    assert agent.act(obs[:0], mask[:0]).shape == (0,)


def test_layout_and_arguments_are_checked():
    game = Game(make_config("muschka", 4))
    for level in LEVELS:
        with pytest.raises(ConfigError, match="needs a mauscheln_env Game"):
            tensor_agent(level, game.config)
    with pytest.raises(ConfigError, match="lacks the piece 'pot'"):
        check_layout(game, "a reader of the pot", {"pot": Numbers})
    with pytest.raises(ValueError, match="unknown tensor agent"):
        tensor_agent("pimc", game)
    with pytest.raises(ValueError, match="risk"):
        tensor_agent("expert", game, risk=3.0)
    with pytest.raises(ValueError, match="boldness"):
        tensor_agent("expert", game, boldness=1.0)
    with pytest.raises(ValueError):
        tensor_agent("beginner", game, risk=1.0)
    with pytest.raises(ValueError, match="seed"):
        tensor_agent("beginner", game, seed=-1)
    agent = tensor_agent("beginner", game)
    with pytest.raises(ValueError, match="obs has shape"):
        agent.act(torch.zeros(2, agent.obs_size + 1), torch.ones(2, game.num_actions, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask has shape"):
        agent.act(torch.zeros(2, agent.obs_size), torch.ones(2, game.num_actions - 1, dtype=torch.bool))


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_registry_has_both_levels_for_every_ruleset(ruleset):
    assert set(TENSOR_AGENTS[ruleset]) == set(LEVELS)
    game = Game(make_config(ruleset, 4))
    for level in LEVELS:
        agent = batched_opponent(level, game, "cpu", seed=1)
        assert isinstance(agent, TensorAgent) and agent.name == level
        # Tensor code throughout: every beginner, the mauscheln, classic and mousel experts; the mouche and
        # muschka experts leave a few phases or rows to the Python expert.
        assert agent.vectorized == (level == "beginner" or ruleset in ("mauscheln", "mauscheln_classic", "mousel"))
        if not agent.vectorized:
            assert "play" not in [game.spec.phases[i] for i in agent.row_phases]


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_plays_the_batched_engine(ruleset):
    """As the opponent of a batched trainer: every action picked in the batched engine is legal (where the
    batched engine plays the ruleset)."""
    from mauscheln_env.batched import BatchedMauscheln

    config = make_config(ruleset, 4, max_deals=3)
    try:
        env = BatchedMauscheln(config, 64, seed=1)
    except ConfigError as exc:
        pytest.skip(f"the batched engine does not play {ruleset} here: {exc}")
    agents = [tensor_agent(level, env.game, seed=2) for level in LEVELS]
    obs, mask, _ = env.reset()
    rows = torch.arange(64)
    for step in range(120):
        action = agents[step % 2].act(obs, mask)
        assert bool(mask[rows, action].all())
        obs, mask, *_ = env.step(action)


@pytest.mark.parametrize("options", [{"vierling": True, "belli": "7D"}, {"weli": True}, {"belli": "trump7"}])
def test_options_beyond_the_tensor_expert(options):
    """Mauscheln with Vierling, Belli or Weli: the beginner is tensor code still, the expert is the Python one
    row by row; both equal the Python agents."""
    game = Game(make_config("mauscheln", 4, knock=True, max_deals=8, **options))
    assert isinstance(tensor_agent("expert", game), RowExpert)
    for level in LEVELS:
        _check(game, level, 800, seed=2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_same_decisions_on_cuda(ruleset):
    game = Game(make_config(ruleset, 5, max_deals=8))
    for level in LEVELS:
        decisions = play_decisions(game, level, 1000, seed=9)
        obs, mask = decisions.tensors()
        got = tensor_agent(level, game, "cuda").act(obs.cuda(), mask.cuda(), u=decisions.u().cuda())
        assert got.device.type == "cuda"
        assert torch.equal(got.cpu(), torch.as_tensor(decisions.expected))
