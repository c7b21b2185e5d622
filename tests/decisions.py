"""Recorded decisions of the Python agents, to check a batched agent against them decision by decision.

Random sessions are played on the reference engine by a mix of the Python
agent under test and random agents (so that unusual positions arise: thin
bids, eliminated seats, carried pots, random chips). At every decision the
acting seat's observation and mask are kept with what a Python agent of the
same kind answers for that seat (from the same observation, mask and info);
the batched agent then decides all of them in one batch and must agree exactly
(:func:`assert_same_decisions`). tests/test_tensor_agents.py and
tests/test_batched_expert.py both use it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import pytest
import torch

from agents import MatchRunner, agent_seed
from agents.base import Agent
from agents.scripted.baselines import RandomAgent
from agents.tensor.common import SharedUniform
from mauscheln_env import Game


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


def play_decisions(game: Game, make: Callable[..., Agent], count: int, seed: int, *, keep_states: bool = False,
                   shared_uniform: bool = True, pots: Sequence[float] = (0, 1, 2, 4, 10)) -> Decisions:
    """Random sessions of ``make()`` agents and random agents until ``count`` decisions were seen.

    Each decision is recorded with the answer of a probe ``make(seed=0)`` at the acting seat; with
    ``shared_uniform`` the probe's fallback draw (where its strategy has no rule) takes a recorded
    uniform (:class:`SharedUniform`) that the batched agent gets as ``u``. Chip games start with random
    chips and a pot of ``pots`` (multiples of the stake) drawn per session.
    """
    n = game.n
    probes = [make(seed=0) for _ in range(n)]
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
        if shared_uniform:
            u = float(np.float32(draws.random()))
            out.uniforms.append(u)
            probes[seat].rng = SharedUniform([u])
        out.expected.append(probes[seat].act(obs, mask, info))
        if keep_states:
            out.states.append((game.clone(state), seat))

    runner = MatchRunner(game)
    session = 0
    while len(out) < count:
        lineup = [make() if rng.random() < 0.5 else RandomAgent() for _ in range(n)]
        extra = {}
        if chips_game:
            extra["chips"] = rng.integers(1, 2 * bankroll, size=n).tolist()
            extra["pot"] = int(rng.choice(pots) * stake)
        runner.play(lineup, dealer=int(rng.integers(n)), session_seed=seed * 10_000 + session, on_decision=record,
                    seed_for=lambda k, s, session=session: agent_seed(seed, session, k, s), **extra)
        session += 1
    return out


def assert_same_decisions(agent, decisions: Decisions, label: str = "tensor") -> None:
    """``agent.act`` over all of ``decisions`` in one batch equals the Python agent's answers."""
    obs, mask = decisions.tensors()
    got = agent.act(obs, mask, u=decisions.u()) if decisions.uniforms else agent.act(obs, mask)
    assert got.dtype == torch.int64 and got.shape == (len(decisions),)
    expected = np.asarray(decisions.expected)
    bad = np.flatnonzero(got.numpy() != expected)
    if bad.size:
        game = decisions.game
        lines = []
        for i in bad[:8]:
            legal = [game.action_to_str(int(a)) for a in np.flatnonzero(decisions.masks[i])]
            lines.append(f"#{i} {decisions.phases[i]}: python {game.action_to_str(int(expected[i]))}, "
                         f"{label} {game.action_to_str(int(got[i]))}, legal {legal}")
        pytest.fail(f"{bad.size} of {len(decisions)} decisions differ:\n" + "\n".join(lines))
