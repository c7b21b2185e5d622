"""Who plays the seats the learner does not: frozen snapshots of the learner (the pool) and scripted baselines.

In a ``self_play_prob`` share of the sessions every seat is the current policy. In the others the learner
holds between one and n-1 seats (so both duplicate formats, one against a field and a field against one, are
trained) and one opponent holds the rest: a scripted baseline (``random``, ``beginner`` and ``expert`` of
every ruleset and frozen learned policies run over ``(obs, mask)`` on any backend, see :mod:`agents.tensor`;
other agents need the reference backend) or a snapshot from the pool, preferring those the learner beats
least. Controllers per (session, seat): 0 the learner, 1..len(pool) the snapshots, then the baselines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from agents.learned import NetSpec, PolicyNet
from mauscheln_env.engine import Game
from train.ppo.seeds import seed_for

if TYPE_CHECKING:
    from train.ppo.options import Args


class OpponentPool:
    """Frozen past snapshots of the learner (oldest first, at most ``pool_size``), each with the learner's
    chips per deal against it (an exponential average), and a frozen network per snapshot."""

    def __init__(self, snapshots: list[dict[str, torch.Tensor]], scores: list[float], spec: NetSpec,
                 device: torch.device) -> None:
        self.snapshots, self.scores, self.spec, self.device = snapshots, scores, spec, device
        self.nets = [frozen(sd, spec, device) for sd in snapshots]

    def learn_scores(self, won: torch.Tensor, deals: torch.Tensor, decay: float = 0.7) -> list[float]:
        """Fold one rollout's results in (``won[k]`` chips over ``deals[k]`` deals against snapshot k); returns
        the scores."""
        for k in range(len(self.scores)):
            if deals[k] > 0:
                self.scores[k] = decay * self.scores[k] + (1 - decay) * float(won[k] / deals[k])
        return list(self.scores)

    def add(self, net: PolicyNet, size: int) -> None:
        """Freeze the learner as it is now into the pool (the oldest snapshot leaves when it holds ``size``)."""
        self.snapshots.append({k: v.detach().cpu().clone() for k, v in net.state_dict().items()})
        self.scores.append(0.0)
        if len(self.snapshots) > size:
            self.snapshots.pop(0)
            self.scores.pop(0)
        self.nets = [frozen(sd, self.spec, self.device) for sd in self.snapshots]


def frozen(state_dict: dict[str, torch.Tensor], spec: NetSpec, device: torch.device) -> PolicyNet:
    """A frozen network of the learner's shape with the weights ``state_dict``."""
    net = PolicyNet(spec).to(device)
    net.load_state_dict(state_dict)
    net.eval()
    return net


def assign(rng: np.random.Generator, count: int, n: int, args: Args, pool: int, baselines: int,
           pool_scores: list[float]) -> torch.Tensor:
    """Controllers per (session, seat): 0 the learner, 1..pool frozen snapshots, then the scripted baselines.

    A session is self-play with probability ``self_play_prob``; otherwise the
    learner holds k seats (k uniform in 1..n-1, at random places) and one
    opponent the others: a baseline with probability ``baseline_prob`` (when
    there are baselines and snapshots), else a snapshot, preferring those the
    learner beats least.
    """
    out = torch.zeros(count, n, dtype=torch.long)
    if not pool + baselines:
        return out
    pool_p = np.ones(max(pool, 1))
    if pool:
        scores = np.asarray(pool_scores[:pool], dtype=np.float64)
        pool_p = np.exp(-(scores - scores.max()) / 5.0)
    pool_p /= pool_p.sum()
    baseline_share = args.baseline_prob if (pool and baselines) else (1.0 if baselines else 0.0)
    for b in range(count):
        if rng.random() < args.self_play_prob:
            continue
        if rng.random() < baseline_share:
            opponent = 1 + pool + int(rng.integers(baselines))
        else:
            opponent = 1 + int(rng.choice(pool, p=pool_p))
        learners = rng.choice(n, size=int(rng.integers(1, n)), replace=False)
        out[b] = opponent
        out[b, learners] = 0
    return out


def baseline_players(args: Args, game: Game, device: torch.device, seed: int | None = None) -> list[Any]:
    """Scripted opponents: a tensor policy (``act(obs, mask)``) where one exists, else one agent per seat; their
    draws come from ``seed`` (this rank's root; default ``args.seed``)."""
    seed = args.seed if seed is None else seed
    from agents.base import make_agent, parse_agent_spec
    from agents.tensor import batched_opponent, has_tensor_form
    from agents.views import EnvView

    players: list[Any] = []
    for k, spec in enumerate(args.baseline_opponents):
        name, params = parse_agent_spec(spec)
        if has_tensor_form(name):
            players.append(batched_opponent(name, game, device, seed=seed_for(seed, 7, k), **params))
            continue
        row = []
        for seat in range(game.n):
            agent = make_agent(name, seed=seed_for(seed, 7, k, seat), **params)
            agent.setup(game, seat)
            row.append(agent)
        players.append(PythonSeats(row, EnvView(game.config)))
    return players


@dataclass
class PythonSeats:
    """A Python baseline on the reference backend: its agent at each seat and the one view that builds their
    observations and info dicts, bound to each session in turn."""

    agents: list[Any]
    view: Any


def reseed_baselines(baselines: list[Any], seed: int, update: int) -> None:
    """Scripted opponents that sample draw from (seed, update) too."""
    for k, player in enumerate(baselines):
        if isinstance(player, PythonSeats):  # one Python agent per seat (reference backend)
            for seat, agent in enumerate(player.agents):
                agent.reset(seed_for(seed, update, 7, k, seat))
        elif hasattr(player, "generator"):
            player.generator.manual_seed(seed_for(seed, update, 7, k))


def baseline_actions(envs: Any, baselines: list[Any], ctrl: torch.Tensor, seat: torch.Tensor,
                     obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor, pool: int,
                     sessions: torch.Tensor | None = None) -> None:
    """Overwrite ``action`` in the rows whose acting seat a scripted baseline plays (row i is session
    ``sessions[i]``, or session i when None)."""
    for k, player in enumerate(baselines):
        rows = (ctrl == pool + 1 + k).nonzero().squeeze(-1)
        if not rows.numel():
            continue
        if not isinstance(player, PythonSeats):  # tensor code over the whole batch
            action[rows] = player.act(obs[rows], mask[rows])
            continue
        view = player.view
        for b in rows.tolist():
            view.bind(envs.states[b if sessions is None else int(sessions[b])])
            view.refresh()
            observation, action_mask, info = view.seat_view(int(seat[b]))
            action[b] = player.agents[int(seat[b])].act(observation, action_mask, info)
