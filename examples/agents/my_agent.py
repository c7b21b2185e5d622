"""An agent of your own, at the three levels of docs/agents/writing.md.

``MyAgent`` is a linear softmax policy: ``logits = W @ observation`` over the action ids, the legal
action with the largest logit (``temperature=0``, the default) or one drawn from
``softmax(logits / temperature)`` over the legal actions. ``W`` comes from a fixed seed here: it stands
for the weights you trained (load them in :func:`weights_for` instead). It plays badly, and it plays
every ruleset and table, which is what an example needs.

(a) The Python agent: ``MyAgent.act(observation, action_mask, info)`` -> an action id.
(b) The tensor form: ``MyTensorAgent.act(obs, mask, u)`` -> an action per row of a batch; named by
    ``MyAgent.tensor_form``, it lets the agent sit at the batched engine's tables (``mauscheln eval
    --backend batched``, a trainer's ``--baseline-opponents``). Both forms make the same greedy choices.
(c) The benchmark field: ``reference`` and ``supports``.

Run it from the repository root (or give the path from wherever you are)::

    mauscheln eval --agents examples/agents/my_agent.py:MyAgent random expert --deals 200 --workers 2
    mauscheln eval --agents examples/agents/my_agent.py:MyAgent:temperature=0.5 random --backend batched
    mauscheln bench run examples/agents/my_agent.py:MyAgent --ruleset mousel --workers 2 --submit
    mauscheln bench leaderboard --ruleset mousel
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from agents.base import Agent, Info, legal_ids
from mauscheln_env.engine import Game
from mauscheln_env.observation import Observer

WEIGHTS_SEED = 20240
"""The seed of the stand-in weights (not of the agent's play: that is ``seed``)."""


def weights_for(game: Game) -> np.ndarray:
    """``float64[A, D]``: the policy's weights for ``game``'s table (A action ids, D observation entries).

    Made from :data:`WEIGHTS_SEED` for the table's sizes. A trained policy loads its weights here, e.g.
    ``np.load(Path(__file__).with_name("weights.npy"))``, and checks their shape against the table.
    """
    size = Observer(game).size
    rng = np.random.default_rng([WEIGHTS_SEED, game.num_actions, size])
    return rng.normal(0.0, 1.0 / np.sqrt(size), (game.num_actions, size))


def check_temperature(temperature: float) -> float:
    if temperature < 0:
        raise ValueError(f"temperature={temperature!r} is not allowed; allowed: a number >= 0 (0: greedy)")
    return float(temperature)


# ---------------------------------------------------------------------- (b) the tensor form
class MyTensorAgent:
    """``MyAgent`` over batches: ``act(obs float32[B, D], mask bool[B, A], u float32[B] | None) -> int64[B]``.

    Built by the batched backend as ``MyTensorAgent(game, device, seed, **params)`` with the spec's
    parameters. It reads only ``obs`` and ``mask`` (a seat's own view, as the Python agent). Its random draws
    take the given uniforms ``u`` (one per row: the evaluator's common random numbers) or, without them, the
    seeded :attr:`generator` (a trainer reseeds it every update).
    """

    name = "my_agent"

    def __init__(self, game: Game, device: Any = "cpu", seed: int = 0, temperature: float = 0.0) -> None:
        import torch  # torch is needed for the tensor form only

        self.torch = torch
        self.temperature = check_temperature(temperature)
        self.device = torch.device(device)
        self.generator = torch.Generator(device=self.device).manual_seed(int(seed))
        self.weights = torch.from_numpy(weights_for(game)).to(self.device)  # float64[A, D]

    def act(self, obs: Any, mask: Any, u: Any = None) -> Any:
        torch = self.torch
        with torch.inference_mode():
            mask = mask.to(self.device, torch.bool)
            logits = obs.to(self.device, torch.float64) @ self.weights.T  # [B, A]
            if self.temperature == 0:
                return logits.masked_fill(~mask, -torch.inf).argmax(dim=1)  # no legal action: 0
            if u is None:
                u = torch.rand(mask.shape[0], generator=self.generator, device=self.device)
            z = (logits / self.temperature).masked_fill(~mask, -torch.inf)
            cdf = torch.softmax(z, dim=1).nan_to_num(0.0).cumsum(dim=1)
            pick = (cdf <= u.to(self.device, torch.float64)[:, None] * cdf[:, -1:]).sum(dim=1)
            last = mask.shape[1] - 1 - mask.flip(1).to(torch.int64).argmax(dim=1)  # the highest legal id
            return torch.minimum(pick, last)


# ---------------------------------------------------------------------- (a) the Python agent, (c) the field
class MyAgent(Agent):
    """A linear softmax policy over the observation (see the module docstring).

    Parameters (``examples/agents/my_agent.py:MyAgent:temperature=0.5``): ``temperature`` >= 0, 0 plays the
    most likely legal action.
    """

    name = "my_agent"
    """How the agent calls itself in labels (``my_agent(temperature=0.5)``)."""
    reference = False
    """(c) Only the project's registered agents form the benchmark's reference field (the opponents of every
    ``bench run``); an agent of your own is a candidate, measured against that field."""
    tensor_form = MyTensorAgent
    """(b) ``MyTensorAgent(game, device, seed, **params)``: the batched form of this agent."""
    rulesets: ClassVar[tuple[str, ...] | None] = None
    """The rulesets the policy was made for (None: every one); :meth:`supports` answers from it."""

    def __init__(self, seed: int | None = None, temperature: float = 0.0) -> None:
        super().__init__(seed)  # seeds self.rng; the spec's parameters are recorded in self.params
        self.temperature = check_temperature(temperature)
        self.weights: np.ndarray | None = None

    def setup(self, game: Game, seat: int) -> None:
        """Take a seat: static facts only (sizes, action ids); build what depends on the table once."""
        if self.game is not game:
            self.weights = weights_for(game)
        super().setup(game, seat)

    def supports(self, game: Game) -> bool:
        """(c) Whether it plays ``game``'s table as itself (not through a fallback)."""
        return super().supports(game) and (self.rulesets is None or game.config.ruleset in self.rulesets)

    def reset(self, seed: int | None = None) -> None:
        """A new deal: forget per-deal memory (this agent keeps none) and take the given seed."""
        super().reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        """(a) One decision of this seat: ``observation`` and ``action_mask`` as the environment gives them to
        the seat, ``info`` its ``infos`` entry (phase, hand, trick, ... of this seat's view only)."""
        legal = legal_ids(action_mask)
        if legal.size == 1:
            return int(legal[0])
        logits = self.weights @ observation.astype(np.float64)
        if self.temperature == 0:
            return int(legal[np.argmax(logits[legal])])  # the first of equal maxima, as argmax over a batch
        z = logits[legal] / self.temperature
        p = np.exp(z - z.max())
        cdf = np.cumsum(p)
        u = self.rng.random()  # every draw from self.rng: reseeded before each deal, so runs repeat exactly
        return int(legal[min(int(np.searchsorted(cdf, u * cdf[-1], side="right")), legal.size - 1)])


def make_cautious(seed: int | None = None, temperature: float = 0.25) -> MyAgent:
    """A factory is named like a class (``my_agent.py:make_cautious``): it takes ``seed`` and the spec's
    parameters and returns an Agent."""
    return MyAgent(seed=seed, temperature=temperature)
