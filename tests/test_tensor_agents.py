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

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import EnvView, MatchRunner, agent_seed
from agents.baselines import BeginnerAgent, ExpertAgent, RandomAgent
from agents.tensor import TENSOR_AGENTS, batched_opponent, tensor_agent
from agents.tensor.common import SharedUniform, TensorAgent, check_layout
from agents.tensor.rows import InfoFromObservation, RowExpert
from mauscheln_env import Game, make_config
from mauscheln_env.config import RULESETS, load_preset
from mauscheln_env.errors import ConfigError
from mauscheln_env.observation import Numbers
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


class Decisions:
    """Observations, masks, the Python agent's answers and the phases of many decisions of one game."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.obs: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.expected: list[int] = []
        self.phases: list[str] = []
        self.uniforms: list[float] = []
        self.states: list[tuple] = []

    def __len__(self) -> int:
        return len(self.expected)

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.from_numpy(np.stack(self.obs)), torch.from_numpy(np.stack(self.masks))

    def u(self) -> torch.Tensor:
        """The uniform of each decision's fallback draw (the Python agent drew from the same one)."""
        return torch.tensor(self.uniforms, dtype=torch.float32)

    def coverage(self) -> Counter:
        """Decisions with a real choice (two or more legal actions), by phase."""
        return Counter(p for p, m in zip(self.phases, self.masks) if m.sum() >= 2)


def play_decisions(game: Game, level: str, count: int, seed: int, keep_states: bool = False,
                   **params) -> Decisions:
    """Random sessions of Python agents of ``level`` and random agents, until ``count`` decisions were seen;
    each recorded with the answer of a Python agent of ``level`` at the acting seat, whose fallback draw
    (where its strategy has no rule) takes a recorded uniform (:class:`SharedUniform`)."""
    cls = LEVELS[level]
    n = game.n
    probes = [cls(seed=0, **params) for _ in range(n)]
    for seat, probe in enumerate(probes):
        probe.setup(game, seat)
    out = Decisions(game)
    rng = np.random.default_rng(seed)
    draws = np.random.default_rng(seed + 1)
    chips_game = game.scoring.uses_chips
    bankroll, stake = (game.config.bankroll, game.stake) if chips_game else (0, 0)

    def record(state, seat, obs, mask, info, action):
        out.obs.append(obs.copy())
        out.masks.append(mask.copy())
        out.phases.append(info["phase"])
        u = float(np.float32(draws.random()))
        out.uniforms.append(u)
        probes[seat].rng = SharedUniform([u])
        out.expected.append(probes[seat].act(obs, mask, info))
        if keep_states:
            out.states.append((game.clone(state), seat))

    runner = MatchRunner(game)
    session = 0
    while len(out) < count:
        lineup = [cls(**params) if rng.random() < 0.5 else RandomAgent() for _ in range(n)]
        extra = {}
        if chips_game:
            extra["chips"] = rng.integers(1, 2 * bankroll, size=n).tolist()
            extra["pot"] = int(rng.choice([0, stake, 2 * stake, 4 * stake, 10 * stake]))
        runner.play(lineup, dealer=int(rng.integers(n)), session_seed=seed * 10_000 + session, on_decision=record,
                    seed_for=lambda k, s, session=session: agent_seed(seed, session, k, s), **extra)
        session += 1
    return out


def assert_same_decisions(agent: TensorAgent, decisions: Decisions) -> None:
    obs, mask = decisions.tensors()
    got = agent.act(obs, mask, u=decisions.u())
    assert got.dtype == torch.int64 and got.shape == (len(decisions),)
    expected = np.asarray(decisions.expected)
    bad = np.flatnonzero(got.numpy() != expected)
    if bad.size:
        game = decisions.game
        lines = []
        for i in bad[:8]:
            legal = [game.action_to_str(int(a)) for a in np.flatnonzero(decisions.masks[i])]
            lines.append(f"#{i} {decisions.phases[i]}: python {game.action_to_str(int(expected[i]))}, "
                         f"tensor {game.action_to_str(int(got[i]))}, legal {legal}")
        pytest.fail(f"{bad.size} of {len(decisions)} decisions differ:\n" + "\n".join(lines))


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
