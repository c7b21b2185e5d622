"""The agent interface and the registry of agents by name.

An agent is anything that maps what one seat may know to an action id:

* ``observation``: the environment's observation vector for that seat
  (``env.observe(agent)["observation"]``),
* ``action_mask``: the legal actions (``env.observe(agent)["action_mask"]``),
* ``info``: the environment's ``infos[agent]`` dict (phase, dealer, pot, chips,
  trump, hand, roles, trick, tricks_won, legal).

Before it plays, an agent is told the static rules (:meth:`Agent.setup` with the
:class:`~mauscheln_env.engine.Game`, which holds tables and the configuration
and never a game state) and its seat, because ``infos`` speak of absolute seats
while the observation is egocentric. :meth:`Agent.reset` starts a deal (the
match runner calls it before every deal with a seed derived from the deal and
the seat, so agents at the same seat draw common random numbers). All of an
agent's randomness comes from ``self.rng``, a :class:`numpy.random.Generator`.

Agents are registered by name and built with :func:`make_agent`::

    agent = make_agent("expert", seed=0)
    agent = make_agent("pimc", seed=0, samples=24)

The adapters that run agents live in :mod:`agents.adapters` (PettingZoo loop)
and :mod:`agents.match` (fast engine loop with the environment's own
observation and info code).
"""

from __future__ import annotations

import abc
import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from mauscheln_env.engine import Game

Info = Mapping[str, Any]


class Agent(abc.ABC):
    """Base class of every agent.

    Subclasses implement :meth:`act`; they may override :meth:`setup` (to build
    per-rules caches) and :meth:`reset` (to clear per-deal memory), calling the
    base method. Constructor keyword arguments are the agent's parameters; they
    are recorded in :attr:`params` so that an agent can be rebuilt by name in
    another process (see :meth:`spec`).
    """

    name: ClassVar[str] = "agent"

    def __init__(self, seed: int | None = None) -> None:
        if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0):
            raise ValueError(f"seed={seed!r} is not allowed; allowed: None or a whole number >= 0")
        self.seed = None if seed is None else int(seed)
        self._rng: np.random.Generator | None = None
        self._rng_seed: int | None = self.seed
        self.params: dict[str, Any] = {}
        self.game: Game | None = None
        self.seat: int | None = None

    # ------------------------------------------------------------------ lifecycle
    def setup(self, game: Game, seat: int) -> None:
        """Take ``seat`` at a table that plays by ``game``'s rules.

        ``game`` is used for its static facts only (deck, tables, action ids);
        an agent never receives a game state.
        """
        if not isinstance(game, Game):
            raise ValueError(f"setup needs a mauscheln_env Game, got {type(game).__name__}")
        if not isinstance(seat, (int, np.integer)) or not 0 <= seat < game.n:
            raise ValueError(f"seat={seat!r} is not allowed; allowed: 0..{game.n - 1}")
        self.game = game
        self.seat = int(seat)

    def reset(self, seed: int | None = None) -> None:
        """Start a new deal (or session). With ``seed``, reseed :attr:`rng`."""
        if seed is not None:
            self._rng, self._rng_seed = None, seed

    @property
    def rng(self) -> np.random.Generator:
        """The agent's random generator, seeded by the constructor or the last :meth:`reset` with a seed.

        Built on first use: the match runner reseeds every agent before every deal, and a scripted
        agent that never draws should not pay for a generator each time.
        """
        if self._rng is None:
            self._rng = np.random.default_rng(self._rng_seed)
        return self._rng

    @rng.setter
    def rng(self, generator: np.random.Generator) -> None:
        self._rng = generator

    @abc.abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        """Return a legal action id for the seat to act."""

    # ------------------------------------------------------------------ helpers
    def spec(self) -> dict[str, Any]:
        """Name, seed and parameters: what :func:`make_agent` needs to rebuild this agent."""
        return {"name": self.name, "seed": self.seed, **self.params}

    def label(self) -> str:
        """A short readable name including non-default parameters, e.g. ``pimc(samples=8)``."""
        if not self.params:
            return self.name
        defaults = _defaults(type(self))
        changed = {k: v for k, v in self.params.items() if defaults.get(k, object()) != v}
        if not changed:
            return self.name
        return f"{self.name}(" + ",".join(f"{k}={v}" for k, v in sorted(changed.items())) + ")"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label()} seat={self.seat}>"


def legal_ids(action_mask: np.ndarray) -> np.ndarray:
    """The legal action ids of a mask, in increasing order; raises if there are none."""
    legal = np.flatnonzero(action_mask)
    if legal.size == 0:
        raise ValueError("the action mask has no legal action: this seat is not to act")
    return legal


# ---------------------------------------------------------------------- registry
_REGISTRY: dict[str, tuple[Callable[..., Agent], str]] = {}


def register_agent(name: str, factory: Callable[..., Agent], doc: str = "") -> None:
    """Register ``factory(seed=..., **params)`` under ``name`` (overwrites an earlier entry)."""
    if not isinstance(name, str) or not name or any(ch in name for ch in " :,=()"):
        raise ValueError(f"agent name {name!r} is not allowed; allowed: a non-empty word without ' :,=()'")
    _REGISTRY[name] = (factory, doc)


_ON_DEMAND = {
    "learned": ("agents.learned", "a trained policy network (needs torch; checkpoint= a path or a shipped name)"),
    "sb3": ("train.sb3_maskable", "a MaskablePPO model (needs sb3-contrib; model= path)"),
}
"""Agents whose modules have heavy dependencies: imported only when asked for by name."""


def available_agents() -> dict[str, str]:
    """Registered agent names and their one-line descriptions (agents loaded on demand included)."""
    _load_builtin()
    names = {name: doc for name, (_, doc) in _REGISTRY.items()}
    for name, (_, doc) in _ON_DEMAND.items():
        names.setdefault(name, doc)
    return dict(sorted(names.items()))


def make_agent(name: str, seed: int | None = None, **params: Any) -> Agent:
    """Build a registered agent. Unknown names or parameters raise ``ValueError``."""
    _load_builtin()
    if name not in _REGISTRY and name in _ON_DEMAND:
        module = _ON_DEMAND[name][0]
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ValueError(f"agent {name!r} needs {module}, which cannot be imported here: {exc}") from exc
    if name not in _REGISTRY:
        raise ValueError(f"unknown agent {name!r}; allowed: {', '.join(available_agents())}")
    factory = _REGISTRY[name][0]
    accepted = _defaults(factory)
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        allowed = ", ".join(f"{k}={v!r}" for k, v in accepted.items()) or "none"
        raise ValueError(f"agent {name!r} has no parameter(s) {', '.join(unknown)}; allowed: {allowed}")
    return factory(seed=seed, **params)


def parse_agent_spec(text: str) -> tuple[str, dict[str, Any]]:
    """Parse ``"pimc:samples=8,time_limit=0.05"`` into ``("pimc", {"samples": 8, "time_limit": 0.05})``.

    Values are read as int, float, ``true``/``false``/``none`` or else kept as strings.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"agent spec {text!r} is not allowed; allowed: NAME or NAME:key=value,key=value")
    name, _, rest = text.strip().partition(":")
    params: dict[str, Any] = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"agent spec {text!r}: {item!r} is not key=value")
            params[key.strip()] = _parse_value(value.strip())
    return name, params


def agent_from_spec(spec: str | Mapping[str, Any], seed: int | None = None) -> Agent:
    """Build an agent from ``"name:key=value"`` text or a :meth:`Agent.spec` dict."""
    if isinstance(spec, str):
        name, params = parse_agent_spec(spec)
    elif isinstance(spec, Mapping):
        params = dict(spec)
        name = params.pop("name", None)
        if name is None:
            raise ValueError(f"agent spec {spec!r} has no 'name'")
        spec_seed = params.pop("seed", None)
        seed = spec_seed if seed is None else seed
    else:
        raise ValueError(f"agent spec {spec!r} is not allowed; allowed: 'name:key=value' text or a dict with 'name'")
    return make_agent(name, seed=seed, **params)


def _parse_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _defaults(factory: Callable[..., Any]) -> dict[str, Any]:
    """Keyword parameters of a factory (except ``seed``) and their defaults."""
    sig = inspect.signature(factory)
    return {
        k: (None if p.default is inspect.Parameter.empty else p.default)
        for k, p in sig.parameters.items()
        if k not in ("self", "seed") and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }


def _load_builtin() -> None:
    """Import the modules that register the built-in agents (once).

    Keyed on the last module's agent, not the first: a caller that imported
    ``agents.baselines`` directly has registered ``random`` but not ``pimc``.
    """
    if "pimc" in _REGISTRY:
        return
    import agents.baselines  # noqa: F401  (registers random, beginner, expert)
    import agents.pimc  # noqa: F401  (registers pimc)
