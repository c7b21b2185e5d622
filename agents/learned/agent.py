"""The agents that play a trained policy: one seat at a time, or whole batches of tables.

    agent = make_agent("learned")                                     # the policy shipped for the table
    agent = make_agent("learned", checkpoint="mauscheln4")             # samples from the policy (seeded)
    agent = make_agent("learned", checkpoint="path/to/policy.safetensors", greedy=True)

:class:`LearnedAgent` is the registered ``learned`` agent; :class:`NumpyActor` runs its actor without
torch's per-call overhead; :class:`BatchedLearned` is its tensor form for the batched engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from agents.base import Agent, Info, draw_index, legal_ids
from agents.learned.checkpoint import (
    CheckpointError,
    available_policies,
    check_compatible,
    layout_of,
    load_policy,
    read_policy,
    shipped_policy_name,
)
from agents.learned.network import NUM_SUITS, PolicyNet, sample_actions, sample_by_uniform
from mauscheln_env.engine import Game
from mauscheln_env.observation import Observer


class LearnedAgent(Agent):
    """Plays a trained :class:`PolicyNet` from the observation and the mask alone.

    By default it samples from the policy with its seeded generator (the
    policy was trained as a mixed strategy; in an imperfect-information game
    its argmax can be much weaker); ``greedy=True`` plays the most likely action.
    """

    name = "learned"
    param_help = {"checkpoint": "a policy file, a run directory or a shipped policy name "
                                f"({', '.join(available_policies()) or 'none shipped'}); default: the policy "
                                "shipped for the table (<ruleset><players>)"}

    def __init__(self, seed: int | None = None, checkpoint: str | None = None, greedy: bool = False) -> None:
        super().__init__(seed)
        self.params = {"checkpoint": None if checkpoint is None else str(checkpoint), "greedy": greedy}
        self.net: PolicyNet | None = None
        self.layout: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}
        self.source: str | None = None if checkpoint is None else str(checkpoint)
        """The checkpoint played: the one given, else the table's shipped policy once :meth:`setup` ran."""
        if checkpoint is not None:
            self.net, self.layout, self.extra = read_policy(checkpoint)
        self.greedy = greedy

    @classmethod
    def from_network(cls, net: PolicyNet, game: Game, seed: int | None = None, greedy: bool = False,
                     label: str = "network") -> LearnedAgent:
        """An agent that plays ``net`` (already in memory, e.g. a trainer's frozen snapshot) in ``game``.

        ``label`` stands for the checkpoint in :meth:`label` and :meth:`spec`; such an agent cannot be
        rebuilt by name in another process.
        """
        if not isinstance(net, PolicyNet):
            raise CheckpointError(f"from_network needs a PolicyNet, got {type(net).__name__}")
        agent = cls.__new__(cls)
        Agent.__init__(agent, seed)
        agent.params = {"checkpoint": str(label), "greedy": bool(greedy)}
        agent.net, agent.layout, agent.extra, agent.greedy = net.eval(), layout_of(game), {}, bool(greedy)
        agent.source = None
        check_compatible(agent.layout, game, str(label))
        if net.spec.obs_size != Observer(game).size or net.spec.num_actions != game.num_actions:
            raise CheckpointError(f"{label}: a network of {net.spec.obs_size} inputs and {net.spec.num_actions} "
                                  f"actions cannot play {game.config.ruleset} with {game.n} players")
        return agent

    def setup(self, game: Game, seat: int) -> None:
        super().setup(game, seat)
        source = self.params["checkpoint"]
        if source is None:  # the shipped policy of this table, read once per table it is set up for
            source = shipped_policy_name(game)
            if self.source != source:
                self.net, self.layout, self.extra = read_policy(source)
                self.source, self._checked = source, None
        if self._checked is not game:  # a match runner sets its agents up at every game of its table
            check_compatible(self.layout, game, source)
            self._checked = game

    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        return self.act_legal(observation, legal_ids(action_mask))

    def act_legal(self, observation: np.ndarray, legal: np.ndarray | list[int]) -> int:
        """:meth:`act` with the legal action ids (ascending, at least one) instead of the mask: the policy reads
        nothing else, so the search's model players skip building the mask and the info (the same action and
        random draw as :meth:`act`)."""
        if self.net is None:
            raise CheckpointError("learned without a checkpoint plays the shipped policy of the table it is set "
                                  "up for; call setup(game, seat) before act")
        actor = self._actor
        if actor is None or actor.net is not self.net:
            actor = self._actor = NumpyActor(self.net)
        return choose_action(actor.logits(np.asarray(observation, dtype=np.float32)), legal, self.greedy, self.rng)

    _actor: NumpyActor | None = None
    _checked: Game | None = None  # the last game the policy was checked against


def choose_action(logits: np.ndarray, legal: np.ndarray | list[int], greedy: bool, rng: np.random.Generator) -> int:
    """The action a policy plays from its logits over all actions (float[A]) and the legal ids (``legal_ids``):
    the most likely legal action with ``greedy``, else one draw from the softmax over the legal actions with
    ``rng`` (:func:`~agents.base.draw_index`, the draw of ``rng.choice``: exactly one ``rng.random()`` per
    decision, so agents that share this function and a seed draw the same random numbers and agree wherever
    their logits do)."""
    legal_logits = np.asarray(logits)[legal].astype(np.float64)
    if greedy:
        return int(legal[int(np.argmax(legal_logits))])
    e = np.exp(legal_logits - legal_logits.max())
    p = np.zeros(len(logits))
    p[legal] = e / e.sum()
    return draw_index(rng, p)


class NumpyActor:
    """The actor of a :class:`PolicyNet` in numpy, one observation at a time: the Python agent's path, where a
    torch call per layer costs more than the arithmetic of a small network. Its logits equal the network's up
    to float32 rounding (``tests/test_train.py`` checks them and the greedy actions)."""

    def __init__(self, net: PolicyNet) -> None:
        self.net = net
        self.layers = [(m.weight.detach().cpu().numpy().astype(np.float32),
                        m.bias.detach().cpu().numpy().astype(np.float32))
                       for m in net.actor if isinstance(m, nn.Linear)]
        self.trump_first = net.spec.trump_first
        if self.trump_first:
            self.obs_perm = net.obs_perm.cpu().numpy()
            self.act_perm = net.act_perm.cpu().numpy()
            self.offset = int(net.trump_offset)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """float32[D] -> float32[A], the unmasked logits over the real actions."""
        trump = 0
        if self.trump_first:
            trump = int(np.argmax(obs[self.offset:self.offset + NUM_SUITS]))
            obs = obs[self.obs_perm[trump]]
        x = obs
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            x = w @ x + b
            if i < last:
                x = np.tanh(x)
        return x[self.act_perm[trump]] if self.trump_first else x


class BatchedLearned:
    """A frozen learned policy over ``(obs, mask)`` batches: the tensor form of :class:`LearnedAgent`, for the
    batched engine's tables (a trainer's opponents, ``baseline_opponents: [learned:checkpoint=...]``).

    ``checkpoint`` as for :class:`LearnedAgent` (default: the policy shipped for ``game``'s table); the policy
    must have been trained for ``game``. Its weights never receive gradients (``requires_grad`` is off and
    :meth:`act` runs under ``inference_mode``). It samples from a ``torch.Generator`` seeded with ``seed`` (the
    trainer reseeds :attr:`generator` every update), so its draws are not those of the numpy generator of
    :class:`LearnedAgent`; with ``greedy=True`` both play the most likely action, decision for decision.
    """

    name = "learned"

    def __init__(self, game: Game, device: torch.device | str = "cpu", seed: int = 0, checkpoint: str | None = None,
                 greedy: bool = False) -> None:
        from agents.tensor.batched_expert import seeded_generator

        if not isinstance(greedy, bool):
            raise ValueError(f"greedy={greedy!r} is not allowed; allowed: true or false")
        self.source = shipped_policy_name(game) if checkpoint is None else str(checkpoint)
        self.device, self.generator = seeded_generator(seed, device)
        self.net = load_policy(self.source, game).to(self.device).requires_grad_(False)
        self.greedy = greedy
        self.num_actions = game.num_actions

    @torch.inference_mode()
    def act(self, obs: torch.Tensor, mask: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        """obs float[B, D], mask bool[B, A] -> int64[B]: an action of each row, legal where its mask has one.

        ``u`` (float[B] in [0, 1)): one given uniform per row, turned into the sampled action by the inverse of
        the policy's distribution function over the action ids (ignored with ``greedy``); omitted, the
        draws come from :attr:`generator`."""
        mask = mask.to(self.device, torch.bool)
        if mask.dim() != 2 or mask.shape[1] != self.num_actions:
            raise ValueError(f"mask has shape {tuple(mask.shape)}; allowed: [B, {self.num_actions}]")
        logits = self.net.masked_logits(obs.to(self.device, torch.float32), mask)
        if self.greedy:
            return logits.argmax(dim=1)
        if u is None:
            return sample_actions(logits, self.generator)
        return sample_by_uniform(logits, u.to(self.device))

