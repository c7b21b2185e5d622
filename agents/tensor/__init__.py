"""Tensor ``beginner`` and ``expert`` for every ruleset: batched decisions from ``(obs, mask)``.

The tensor forms of the scripted baselines of :mod:`agents.scripted.baselines`, for the
batched backend, where a trainer has observations and masks and no ``info``
dicts. Each makes exactly the decisions of its Python agent
(``tests/test_tensor_agents.py`` checks every ruleset and player count, decision
by decision); :mod:`agents.tensor.common` says how the random fallback draws so
that this holds.

:data:`TENSOR_AGENTS` maps a ruleset to the factory of each level, as
:data:`agents.scripted.STRATEGIES` maps it to the Python strategies:

==================  ============  ==========================================================
ruleset             beginner      expert
==================  ============  ==========================================================
mauscheln           tensor code   tensor code (:class:`BatchedExpert`); with Vierling, Belli
                                  or Weli the Python expert row by row
mauscheln_classic   tensor code   tensor code (:mod:`agents.tensor.trick`)
mousel              tensor code   tensor code (:mod:`agents.tensor.trick`)
mouche              tensor code   tensor code but the naming of trumps and the Béatrix swap
muschka             tensor code   tensor code but deciding and exchanging with the ace of
                                  spades in hand
==================  ============  ==========================================================

"The Python expert row by row" is :class:`agents.tensor.rows.RowAgent`: the
strategy of the trick model run on each row with its ``info`` rebuilt from
the observation; it has the tensor interface and the Python agent's speed.
A ruleset missing from the table gets the Python strategy row by row at both
levels (which plays random legal actions where it has no strategy).

:func:`batched_opponent` builds the batched opponents by name for the trainer
(``random``, ``beginner``, ``expert``, ``learned``: a frozen policy from a checkpoint, and ``onnx`` and
``torchscript``: a network file), and any other agent whose class names its tensor form
(:attr:`agents.base.Agent.tensor_form`): an agent of the user's own file or package sits at the batched
engine's tables the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import torch

from agents.tensor.batched_expert import BatchedRandom
from agents.tensor.classic import ClassicBeginnerT
from agents.tensor.common import TensorAgent
from agents.tensor.mauscheln import MauschelnBeginnerT, mauscheln_expert
from agents.tensor.mouche import MoucheBeginnerT
from agents.tensor.mousel import MouselBeginnerT
from agents.tensor.muschka import MuschkaBeginnerT
from agents.tensor.rows import RowBeginner, RowExpert
from agents.tensor.trick import ClassicExpertT, MoucheExpertT, MouselExpertT, MuschkaExpertT
from mauscheln_env.engine import Game

Factory = Callable[..., TensorAgent]
"""``factory(game, device, seed, **params) -> TensorAgent``."""

TENSOR_AGENTS: Mapping[str, Mapping[str, Factory]] = MappingProxyType({
    "mauscheln": MappingProxyType({"beginner": MauschelnBeginnerT, "expert": mauscheln_expert}),
    "mauscheln_classic": MappingProxyType({"beginner": ClassicBeginnerT, "expert": ClassicExpertT}),
    "mousel": MappingProxyType({"beginner": MouselBeginnerT, "expert": MouselExpertT}),
    "mouche": MappingProxyType({"beginner": MoucheBeginnerT, "expert": MoucheExpertT}),
    "muschka": MappingProxyType({"beginner": MuschkaBeginnerT, "expert": MuschkaExpertT}),
})
"""``TENSOR_AGENTS[ruleset][level]``: the factory of the tensor agent of a level in a ruleset."""

_ROWS: Mapping[str, Factory] = MappingProxyType({"beginner": RowBeginner, "expert": RowExpert})


def tensor_agent(level: str, game: Game, device: torch.device | str = "cpu", seed: int = 0,
                 **params: Any) -> TensorAgent:
    """The tensor agent of ``level`` (``beginner``, ``expert``) for ``game``'s ruleset."""
    if level not in _ROWS:
        raise ValueError(f"unknown tensor agent {level!r}; available: {', '.join(sorted(_ROWS))}")
    ruleset = getattr(getattr(game, "config", None), "ruleset", None)
    factory = TENSOR_AGENTS.get(ruleset, _ROWS)[level]
    try:
        return factory(game, device, seed, **params)
    except TypeError as exc:
        raise ValueError(f"tensor agent {level!r}: {exc}") from exc


_OPPONENTS: dict[str, Callable[..., Any]] = {
    "beginner": lambda game, device, seed, **params: tensor_agent("beginner", game, device, seed, **params),
    "expert": lambda game, device, seed, **params: tensor_agent("expert", game, device, seed, **params),
    "random": lambda game, device, seed: BatchedRandom(game, device, seed=seed),
    "learned": lambda game, device, seed, **params: _batched_learned(game, device, seed, **params),
    "onnx": lambda game, device, seed, **params: _batched_portable("onnx", game, device, seed, **params),
    "torchscript": lambda game, device, seed, **params: _batched_portable("torchscript", game, device, seed, **params),
}
"""Batched opponents by name: ``factory(game, device, seed, **params)``."""


def _batched_learned(game: Game, device: torch.device | str, seed: int, **params: Any) -> Any:
    from agents.learned import BatchedLearned  # torch-only module, loaded when a learned opponent is asked for

    return BatchedLearned(game, device, seed, **params)


def _batched_portable(kind: str, game: Game, device: torch.device | str, seed: int, **params: Any) -> Any:
    from agents.learned.portable import BatchedPortable  # loaded when a network file is asked for

    return BatchedPortable(kind, game, device, seed, **params)

BATCHED_OPPONENTS = frozenset(_OPPONENTS)
"""The built-in agents that have a batched version (the trainer uses them on any backend); other agents have
one when their class sets :attr:`agents.base.Agent.tensor_form` (:func:`has_tensor_form`)."""


def has_tensor_form(name: str) -> bool:
    """Whether agent ``name`` (a name or import target, as :func:`agents.base.parse_agent_spec` gives it) has a
    batched form; an unknown agent raises :class:`agents.base.AgentError`."""
    if name in _OPPONENTS:
        return True
    from agents.base import agent_class

    return getattr(agent_class(name), "tensor_form", None) is not None


def batched_opponent(name: str, game: Game, device: torch.device | str = "cpu", seed: int = 0,
                     **params: Any) -> Any:
    """A batched opponent by name: an object with ``.act(obs, mask) -> int64[B]``.

    ``beginner`` and ``expert`` (:func:`tensor_agent`; the expert takes keyword ``risk``), ``random``
    (:class:`BatchedRandom`, drawing from a generator seeded with ``seed``), ``learned``
    (:class:`agents.learned.BatchedLearned`: a frozen policy, keywords ``checkpoint`` and ``greedy``), ``onnx``
    and ``torchscript`` (:class:`agents.learned.portable.BatchedPortable`: a network file, keywords ``path`` and
    ``greedy``), or any agent (a name or import target) whose class sets
    :attr:`~agents.base.Agent.tensor_form`, built with ``params``.
    """
    if name in _OPPONENTS:
        factory = _OPPONENTS[name]
    else:
        from agents.base import agent_class

        factory = getattr(agent_class(name), "tensor_form", None)
        if factory is None:
            raise ValueError(f"agent {name!r} has no tensor form; allowed: {', '.join(sorted(_OPPONENTS))}, or an "
                             "agent whose class sets tensor_form (docs/agents/writing.md)")
    try:
        form = factory(game, device, seed, **params)
    except TypeError as exc:
        raise ValueError(f"batched opponent {name!r}: {exc}") from exc
    except Exception as exc:
        if name in _OPPONENTS or isinstance(exc, ValueError):
            raise
        raise ValueError(f"batched opponent {name!r}: building its tensor form raised {type(exc).__name__}: "
                         f"{exc}") from exc
    if not callable(getattr(form, "act", None)):
        raise ValueError(f"batched opponent {name!r}: its tensor form {type(form).__name__} has no act(obs, mask, "
                         "u); allowed: an object whose act returns an action per row")
    return form
