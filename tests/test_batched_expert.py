"""The batched ``expert`` (agents/tensor/batched_expert.py) against the Python ``ExpertAgent``, decision by decision.

Random sessions are played on the reference engine by a mix of Python experts
and random agents (so that unusual positions arise: random declarations, thin
goers, eliminated seats, carried pots). At every decision the seat's
observation and mask are kept together with what ``ExpertAgent.act`` answers
for that seat (from the same observation, mask and info); then
``BatchedExpert.act`` decides all of them in one batch and must agree exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents import EnvView
from agents.scripted.baselines import ExpertAgent
from agents.tensor import batched_opponent
from agents.tensor.batched_expert import BatchedExpert, BatchedRandom, batched_expert_supports
from agents.tensor.common import TensorAgent
from agents.tensor.mauscheln import MauschelnExpertT
from agents.tensor.rows import RowExpert
from mauscheln_env import Game, make_config
from mauscheln_env.batched import BatchedMauscheln
from mauscheln_env.engine import Phase
from mauscheln_env.errors import ConfigError
from tests.decisions import Decisions
from tests.decisions import assert_same_decisions as check_decisions
from tests.decisions import play_decisions as record_decisions
from tests.test_agents import _perturb_hidden


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Small batches gain nothing from intra-op threads; restored afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def play_decisions(game: Game, count: int, seed: int, risk: float = 0.0, keep_states: bool = False) -> Decisions:
    """Recorded decisions of Python experts (with ``risk``) and random agents, random chips and pots
    (tests/decisions.py); the expert's answers without a shared uniform (the batched expert takes none)."""
    return record_decisions(game, lambda **kw: ExpertAgent(risk=risk, **kw), count, seed, keep_states=keep_states,
                            shared_uniform=False, pots=(0, 0.5, 1, 2, 3, 4, 6, 10))


def assert_same_decisions(expert: BatchedExpert, decisions: Decisions) -> None:
    check_decisions(expert, decisions, label="batched")


DECISIONS = 4000
"""Decisions compared per configuration (about half a second of play each)."""


@pytest.mark.parametrize("knock", [False, True])
@pytest.mark.parametrize("players", [3, 4, 5, 7])
def test_same_decisions_as_the_python_expert(players, knock):
    game = Game(make_config("mauscheln", players, knock=knock, max_deals=8))
    decisions = play_decisions(game, DECISIONS, seed=10 * players + knock)
    assert_same_decisions(BatchedExpert(game), decisions)
    covered = decisions.coverage()
    phases = ["declare", "go_with", "exchange", "play"] + (["knock"] if knock else [])
    for phase in phases:
        assert covered[phase] >= 30, f"phase {phase} has only {covered[phase]} real choices: {dict(covered)}"
    assert set(covered) == set(phases)


@pytest.mark.parametrize("risk", [-1.0, 0.3, 1.5])
def test_same_decisions_with_risk(risk):
    for players in (4, 6):
        game = Game(make_config("mauscheln", players, knock=True, max_deals=8))
        decisions = play_decisions(game, 1000, seed=int(100 * (risk + 2)) + players, risk=risk)
        assert_same_decisions(BatchedExpert(game, risk=risk), decisions)


def test_same_decisions_with_other_stakes():
    """Stake, bankroll and the knock threshold are read from the configuration (pot = pot * bankroll)."""
    game = Game(make_config("mauscheln", 5, knock=True, knock_min_rank="J", stake=8, bankroll=120, max_deals=8))
    decisions = play_decisions(game, 1500, seed=3)
    assert_same_decisions(BatchedExpert(game), decisions)
    assert decisions.coverage()["knock"] >= 10


def test_decisions_ignore_hidden_cards():
    """Shuffling every card the seat cannot see changes neither its observation nor the batched decision."""
    game = Game(make_config("mauscheln", 4, knock=True, max_deals=4))
    decisions = play_decisions(game, 300, seed=5, keep_states=True)
    view = EnvView(game.config)
    rng = np.random.default_rng(5)
    twins_obs, twins_mask = [], []
    for state, seat in decisions.states:
        twin = _perturb_hidden(game, state, seat, rng)
        view.bind(twin)
        obs, mask, _ = view.seat_view(seat)
        twins_obs.append(obs)
        twins_mask.append(mask)
    obs, mask = decisions.tensors()
    twin_obs, twin_mask = torch.from_numpy(np.stack(twins_obs)), torch.from_numpy(np.stack(twins_mask))
    assert torch.equal(obs, twin_obs) and torch.equal(mask, twin_mask)
    expert = BatchedExpert(game)
    assert torch.equal(expert.act(twin_obs, twin_mask), expert.act(obs, mask))
    assert torch.equal(expert.act(obs, mask), torch.as_tensor(decisions.expected))


def test_single_legal_action_and_no_phase():
    """One legal action is returned as it is; a row in no known phase gets the lowest legal action."""
    game = Game(make_config("mauscheln", 4))
    expert = BatchedExpert(game)
    obs = torch.zeros(3, expert.obs_size)
    mask = torch.zeros(3, game.num_actions, dtype=torch.bool)
    mask[0, game.action_ids["done"]] = True
    mask[1, [5, 9, 20]] = True
    mask[2, [game.action_ids["pass"], game.action_ids["go"]]] = True
    assert expert.act(obs, mask).tolist() == [game.action_ids["done"], 5, game.action_ids["pass"]]


@pytest.mark.parametrize("players", [3, 7])
def test_plays_the_batched_engine(players):
    """As the opponent of a batched trainer: every action it picks in the batched engine is legal."""
    config = make_config("mauscheln", players, knock=True, max_deals=3)
    env = BatchedMauscheln(config, 128, seed=1)
    expert = BatchedExpert(env.game)
    obs, mask, _ = env.reset()
    phases = set()
    rows = torch.arange(128)
    for _ in range(150):
        action = expert.act(obs, mask)
        assert bool(mask[rows, action].all())
        phases.update(env.phase.tolist())
        obs, mask, *_ = env.step(action)
    assert {int(p) for p in (Phase.KNOCK, Phase.DECLARE, Phase.GO_WITH, Phase.EXCHANGE, Phase.PLAY)} <= phases


@pytest.mark.parametrize("options", [
    {"ruleset": "mauscheln_classic"},
    {"ruleset": "mousel"},
    {"belli": "7D"},
    {"belli": "trump7"},
    {"weli": True},
    {"vierling": True},
])
def test_unsupported_configurations_raise(options):
    options = dict(options)
    ruleset = options.pop("ruleset", "mauscheln")
    game = Game(make_config(ruleset, 4, **options))
    with pytest.raises(ConfigError, match=r"batched expert does not play .*supported: ruleset mauscheln"):
        BatchedExpert(game)
    assert not batched_expert_supports(game)
    # The registry's expert plays these tables too (tests/test_tensor_agents.py): the trick-model tensor code for
    # the other rulesets, the Python expert row by row for Vierling, Belli and Weli.
    other = batched_opponent("expert", game)
    assert isinstance(other, TensorAgent) and not isinstance(other, MauschelnExpertT)
    assert isinstance(other, RowExpert) == (ruleset == "mauscheln")


def test_bad_arguments_raise():
    game = Game(make_config("mauscheln", 4))
    with pytest.raises(ConfigError, match="needs a mauscheln_env Game"):
        BatchedExpert(game.config)
    with pytest.raises(ValueError, match="risk"):
        BatchedExpert(game, risk=3.0)
    expert = BatchedExpert(game)
    with pytest.raises(ValueError, match="obs has shape"):
        expert.act(torch.zeros(2, expert.obs_size + 1), torch.ones(2, game.num_actions, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask has shape"):
        expert.act(torch.zeros(2, expert.obs_size), torch.ones(2, game.num_actions - 1, dtype=torch.bool))


def test_batched_opponent_registry():
    game = Game(make_config("mauscheln", 5, knock=True))
    assert batched_expert_supports(game)
    assert isinstance(batched_opponent("expert", game, "cpu"), MauschelnExpertT)
    assert batched_opponent("expert", game, "cpu", risk=0.5).inner.risk == 0.5
    assert isinstance(batched_opponent("random", game, "cpu", seed=3), BatchedRandom)
    with pytest.raises(ValueError, match="has no tensor form; allowed: beginner, expert, learned, onnx, random, torchscript"):
        batched_opponent("pimc", game, "cpu")
    with pytest.raises(ValueError, match="batched opponent 'random'"):
        batched_opponent("random", game, "cpu", risk=1.0)


def test_batched_random_is_uniform_legal_and_seeded():
    game = Game(make_config("mauscheln", 4))
    rng = np.random.default_rng(0)
    mask = torch.from_numpy(rng.random((4000, game.num_actions)) < 0.2)
    mask[:, game.action_ids["done"]] = True
    first = batched_opponent("random", game, "cpu", seed=7).act(torch.zeros(4000, 1), mask)
    again = batched_opponent("random", game, "cpu", seed=7).act(torch.zeros(4000, 1), mask)
    other = batched_opponent("random", game, "cpu", seed=8).act(torch.zeros(4000, 1), mask)
    assert first.dtype == torch.int64
    assert bool(mask[torch.arange(4000), first].all())
    assert torch.equal(first, again) and not torch.equal(first, other)
    # Uniform: with exactly two legal actions, each is chosen about half of the time.
    two = torch.zeros(4000, game.num_actions, dtype=torch.bool)
    two[:, [0, game.action_ids["done"]]] = True
    share = (batched_opponent("random", game, "cpu", seed=1).act(torch.zeros(4000, 1), two) == 0).float().mean()
    assert 0.45 < float(share) < 0.55


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_same_decisions_on_cuda():
    game = Game(make_config("mauscheln", 5, knock=True, max_deals=8))
    decisions = play_decisions(game, 2000, seed=9)
    obs, mask = decisions.tensors()
    got = BatchedExpert(game, "cuda").act(obs.cuda(), mask.cuda())
    assert got.device.type == "cuda"
    assert torch.equal(got.cpu(), torch.as_tensor(decisions.expected))
