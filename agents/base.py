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

Agents are built by name with :func:`make_agent`; the built-in names are a static
table (:data:`AGENTS`, ``"module:Class"``), so a module is imported only when its
agent is built, and :func:`register_agent` adds a user's own::

    agent = make_agent("expert", seed=0)
    agent = make_agent("pimc", seed=0, samples=24)

A spec (:func:`agent_from_spec`, every command's ``--agents``) names an agent as
``NAME[:key=value,...]``, or by where its code lives: ``path/to/file.py:Class``,
``package.module:Class``, each with parameters after a further ``:``, or the name
of an installed package's entry point (group ``mauscheln.agents``); the rules that
tell these forms apart are in :mod:`agents.targets`.

The adapters that run agents live in :mod:`agents.adapters` (PettingZoo loop)
and :mod:`agents.evaluation.match` (fast engine loop with the environment's own
observation and info code).
"""

from __future__ import annotations

import abc
import functools
import importlib
import inspect
import math
import os
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from agents import targets
from agents.errors import AgentError
from mauscheln_env.engine import Game
from mauscheln_env.errors import MauschelnError, shown
from mauscheln_env.ruleargs import parse_value

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
    reference: ClassVar[bool] = False
    """Whether the agent belongs to the benchmark's reference field (``mauscheln bench run``) at every table it
    :meth:`supports`: built by name with its default parameters, it needs no file and no extra package."""
    param_help: ClassVar[dict[str, str]] = {}
    """What a parameter allows, for the error message (default: from its annotation)."""
    plays_forced_blind: ClassVar[bool] = False
    """True when :meth:`act` answers a decision with one legal action by that action, without reading the
    observation, keeping memory or drawing from :attr:`rng`; the match runner then skips building the
    observation for such decisions. Play is the same either way; leave it False unless all three hold."""
    remote: ClassVar[bool] = False
    """True when :meth:`act` asks a service outside this process (a network endpoint): tools that would rebuild
    the agent from someone else's record to play a game again (replays, reports) refuse it instead."""
    tensor_form: ClassVar[Callable[..., Any] | None] = None
    """The agent's batched form, if it has one: ``tensor_form(game, device, seed, **params)`` (the agent's
    parameters) returns an object whose ``act(obs float32[B, D], mask bool[B, A], u float32[B] | None)``
    returns ``int64[B]``, an action per row (``u``: one uniform in [0, 1) per row for its random draws; None:
    draw from its own seeded ``generator``). It lets the agent sit at the batched engine's tables
    (:func:`agents.tensor.batched_opponent`: ``mauscheln eval --backend batched``, the trainer's opponents)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every subclass's constructor checks its keyword parameters against their annotations
        (:func:`check_param`): no agent accepts ``nan``, a bool for a number or text for a bool."""
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _validating(cls.__dict__["__init__"])  # type: ignore[method-assign]

    def __init__(self, seed: int | None = None) -> None:
        if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0):
            raise AgentError(f"seed={seed!r} is not allowed; allowed: None or a whole number >= 0")
        self.seed = None if seed is None else int(seed)
        self._rng: np.random.Generator | None = None
        self._rng_seed: int | None = self.seed
        self.params: dict[str, Any] = {}
        self.game: Game | None = None
        self.seat: int | None = None
        self.built_as: str | None = None  # the name or import target make_agent built it from

    # ------------------------------------------------------------------ lifecycle
    def setup(self, game: Game, seat: int) -> None:
        """Take ``seat`` at a table that plays by ``game``'s rules.

        ``game`` is used for its static facts only (deck, tables, action ids);
        an agent never receives a game state.
        """
        if not isinstance(game, Game):
            raise AgentError(f"setup needs a mauscheln_env Game, got {type(game).__name__}")
        if (not isinstance(seat, (int, np.integer)) or isinstance(seat, (bool, np.bool_))
                or not 0 <= seat < game.n):
            raise AgentError(f"seat={shown(seat)} is not allowed; allowed: 0..{game.n - 1}")
        self.game = game
        self.seat = int(seat)

    def supports(self, game: Game) -> bool:
        """Whether the agent plays ``game``'s table as itself rather than through a fallback (after
        :meth:`setup` with that game). The benchmark's reference field holds the :attr:`reference` agents
        that support its table, so an agent that learns a ruleset joins that ruleset's field by itself."""
        return self.game is game

    def reset(self, seed: int | None = None) -> None:
        """Start a new deal (or session). With ``seed``, reseed :attr:`rng`."""
        if seed is not None:
            if not isinstance(seed, (int, np.integer)) or isinstance(seed, (bool, np.bool_)) or seed < 0:
                raise AgentError(f"seed={shown(seed)} is not allowed; allowed: None or a whole number >= 0")
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

    def counts(self) -> dict[str, int]:
        """Counts of the agent's own events since it was built (e.g. replies a language model gave that named no
        legal move), each a whole number that only grows. The evaluation runners record how much each count grew
        over a pairing, summed over the seats of each side (``agent_counts``); most agents count nothing."""
        return {}

    # ------------------------------------------------------------------ helpers
    def spec(self) -> dict[str, Any]:
        """Name, seed and parameters: what :func:`make_agent` needs to rebuild this agent."""
        return {"name": self._spec_name(), "seed": self.seed, **self.params}

    def _spec_name(self) -> str:
        return getattr(self, "built_as", None) or self.name

    def label(self) -> str:
        """A short readable name including non-default parameters, e.g. ``pimc(samples=8)``."""
        if not self.params:
            return self.name
        defaults = _defaults(type(self))
        changed = {k: v for k, v in self.params.items() if defaults.get(k, object()) != v}
        if not changed:
            return self.name
        return f"{self.name}(" + ",".join(f"{k}={v}" for k, v in sorted(changed.items())) + ")"

    def spec_text(self, always: tuple[str, ...] = ()) -> str:
        """``name:key=value,...`` with the parameters that differ from their defaults (and those named in
        ``always``), sorted: text that :func:`agent_from_spec` turns back into an equal agent."""
        defaults = _defaults(type(self))
        keep = {k: v for k, v in sorted(self.params.items()) if k in always or defaults.get(k, object()) != v}
        return self._spec_name() + (":" + ",".join(f"{k}={v}" for k, v in keep.items()) if keep else "")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label()} seat={self.seat}>"


def draw_index(rng: np.random.Generator, p: np.ndarray) -> int:
    """One index drawn with the probabilities ``p`` (float64, summing to 1 up to rounding): the draw that
    ``rng.choice(len(p), p=p)`` makes, numpy's own steps (one ``rng.random()`` against the cumulative sum
    normalised by its last entry), without ``choice``'s checks of ``p``, which cost several times the draw in a
    search's rollouts and a batched runner's deals (``tests/test_train.py`` checks the two agree)."""
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    return int(cdf.searchsorted(rng.random(), side="right"))


def legal_ids(action_mask: np.ndarray) -> np.ndarray:
    """The legal action ids of a mask, in increasing order; raises if there are none."""
    legal = np.flatnonzero(action_mask)
    if legal.size == 0:
        raise ValueError("the action mask has no legal action: this seat is not to act")
    return legal


# ---------------------------------------------------------------------- registry
AGENTS: dict[str, str] = {
    "random": "agents.scripted.baselines:RandomAgent",
    "beginner": "agents.scripted.baselines:BeginnerAgent",
    "expert": "agents.scripted.baselines:ExpertAgent",
    "pimc": "agents.search.pimc:PIMCAgent",
    "learned": "agents.learned.agent:LearnedAgent",
    "sb3": "agents.learned.sb3:SB3Agent",
    "onnx": "agents.learned.portable:OnnxAgent",
    "torchscript": "agents.learned.portable:TorchScriptAgent",
    "openspiel": "agents.search.openspiel:OpenSpielAgent",
    "llm": "agents.llm.agent:LLMAgent",
}
"""The built-in agents by name: ``"module:Class"``, imported only when an agent of that name is built."""

AGENT_DOCS: dict[str, str] = {
    "random": "uniformly random legal actions",
    "beginner": "each ruleset's beginners' advice from its original text",
    "expert": "each ruleset's finer advice from its original text, with strong card play",
    "pimc": "determinized search: sampled deals, exact search of the tricks",
    "learned": "a trained policy network (needs torch; checkpoint= a path, a run directory or a shipped policy)",
    "sb3": "a MaskablePPO model saved by train/sb3_maskable.py (needs sb3-contrib; model= path)",
    "onnx": "a policy network from any framework as an ONNX file, observation -> logits (needs onnxruntime; path=)",
    "torchscript": "a policy network as a TorchScript file, observation -> logits (a program: trusted files only; path=)",
    "openspiel": "an OpenSpiel bot: IS-MCTS with pimc's determinization (needs open-spiel)",
    "llm": "a chat model behind an OpenAI-compatible endpoint (needs httpx; base_url= and model= required)",
}

_EXTRA: dict[str, tuple[Callable[..., Agent], str]] = {}
"""Agents registered at run time with :func:`register_agent` (they take precedence over :data:`AGENTS`)."""


def register_agent(name: str, factory: Callable[..., Agent], doc: str = "") -> None:
    """Register ``factory(seed=..., **params)`` under ``name`` (a user's own agent; overwrites an earlier entry)."""
    if not isinstance(name, str) or not name or any(ch in name for ch in " :,=()"):
        raise AgentError(f"agent name {name!r} is not allowed; allowed: a non-empty word without ' :,=()'")
    if not callable(factory):
        raise AgentError(f"agent {name!r}: factory {factory!r} is not callable; allowed: an Agent class or function")
    _EXTRA[name] = (factory, doc)


def available_agents() -> dict[str, str]:
    """Agent names and their one-line descriptions (built-in, registered and installed entry points), without
    importing any agent."""
    names = {name: targets.entry_point_doc(ep) for name, ep in targets.entry_points().items()}
    names.update(AGENT_DOCS)
    names.update({name: doc for name, (_, doc) in _EXTRA.items()})
    return dict(sorted(names.items()))


def _known_name(name: str) -> bool:
    if name in _EXTRA or name in AGENTS:
        return True
    return name in targets.entry_points()


def agent_class(name: str) -> Callable[..., Agent]:
    """The factory of agent ``name``: a registered one, else the class named in :data:`AGENTS`, imported now,
    else an import target (``/path/file.py:Name``, ``module:Name``, as :func:`parse_agent_spec` returns it) or
    an installed entry point, loaded now."""
    if name in _EXTRA:
        return _EXTRA[name][0]
    if isinstance(name, str) and name not in AGENTS:
        if targets.is_target(name):
            target, params = parse_agent_spec(name)
            if params or not targets.is_target(target):
                raise AgentError(f"agent {name!r} is spec text, not a name; allowed: a name or an import target "
                                 "with the parameters given apart (agent_from_spec reads spec text)")
            return targets.load(target, Agent, lambda: list(available_agents()))
        ep = targets.entry_points().get(name)
        if ep is not None:
            return targets.load_entry_point(name, ep, Agent, lambda: list(available_agents()))
    if not isinstance(name, str) or name not in AGENTS:
        raise AgentError(f"unknown agent {name!r}; allowed: {', '.join(available_agents())}, or an agent by "
                         "import path: path/to/file.py:Name or package.module:Name")
    module, _, cls = AGENTS[name].partition(":")
    try:
        return getattr(importlib.import_module(module), cls)
    except ImportError as exc:
        raise AgentError(f"agent {name!r} needs {module}, which cannot be imported here: {exc}") from exc


def make_agent(name: str, seed: int | None = None, **params: Any) -> Agent:
    """Build an agent by name. Unknown names, unknown parameters and bad values raise :class:`AgentError`."""
    return _build(name, seed, params)


def _build(name: str, seed: int | None, params: dict[str, Any]) -> Agent:
    factory = agent_class(name)
    accepted = _defaults(factory)
    if "seed" in params:
        raise AgentError(f"agent {name!r}: seed is not a parameter of the spec (the caller seeds every agent, "
                         f"e.g. with --seed); allowed: {_allowed(accepted)}")
    own = name in _EXTRA or name in AGENTS  # the project's agents (and registered ones) fail as they always did
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        sig = None
    anything = sig is not None and any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    if not own and sig is not None and not anything and "seed" not in sig.parameters:
        raise AgentError(f"agent {name!r} takes no seed parameter; allowed: a class or function that takes "
                         "seed=None (the caller seeds every agent), e.g. a subclass of agents.base.Agent")
    unknown = [] if anything else sorted(set(params) - set(accepted))
    if unknown:
        raise AgentError(f"agent {name!r} has no parameter(s) {', '.join(unknown)}; allowed: {_allowed(accepted)}")
    try:
        agent = factory(seed=seed, **params)
    except MauschelnError as exc:
        if own:
            raise
        raise AgentError(f"agent {name!r}: {exc}") from exc
    except ValueError as exc:  # an agent's own check of a parameter value (e.g. pimc's samples=0)
        raise AgentError(f"agent {name!r}: {exc}") from exc
    except Exception as exc:
        if own:
            raise
        raise AgentError(f"agent {name!r}: building it raised {type(exc).__name__}: "
                         f"{' '.join(str(exc).split())}") from exc
    if not isinstance(agent, Agent):
        raise AgentError(f"agent {name!r} returned a {type(agent).__name__}, not an Agent; allowed: a subclass of "
                         "agents.base.Agent, or a function that returns an instance of one")
    if not hasattr(agent, "_rng_seed"):
        raise AgentError(f"agent {name!r}: {type(agent).__name__}.__init__ does not call Agent.__init__; allowed: "
                         "a constructor that calls super().__init__(seed)")
    agent.built_as = name
    for key, value in params.items():  # a user's agent need not record its parameters itself
        agent.params.setdefault(key, value)
    return agent


def _allowed(accepted: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in accepted.items()) or "no parameters"


def parse_agent_spec(text: str) -> tuple[str, dict[str, Any]]:
    """Parse ``"pimc:samples=8,time_limit=0.05"`` into ``("pimc", {"samples": 8, "time_limit": 0.05})``.

    Values are read as int, float, ``true``/``false``/``none`` or else kept as strings. An agent named by
    import path gives its target: ``"./bot.py:MyBot:depth=3"`` gives ``("/abs/path/bot.py:MyBot", {"depth": 3})``,
    ``"mypkg.bots:MyBot"`` gives ``("mypkg.bots:MyBot", {})`` (:mod:`agents.targets` says how the forms are
    told apart); :func:`make_agent` builds from either.
    """
    if not isinstance(text, str) or not text.strip():
        raise AgentError(f"agent spec {text!r} is not allowed; allowed: {targets.FORMS}")
    _, name, rest = targets.split(text.strip(), _known_name)
    params: dict[str, Any] = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise AgentError(f"agent spec {text!r}: {item!r} is not key=value; allowed: {targets.FORMS}")
            if key.strip() in params:
                raise AgentError(f"agent spec {text!r}: {key.strip()} is given twice; give each parameter once")
            params[key.strip()] = parse_value(value.strip())
    return name, params


def canonical_spec(text: str) -> str:
    """``text`` with a file spec's path made absolute (the parameters as written): the spec a worker process
    rebuilds the same agent from, whatever its working directory."""
    parse_agent_spec(text)  # refuses a malformed spec
    _, name, rest = targets.split(text.strip(), _known_name)
    return name + (f":{rest}" if rest else "")


def same_agent(spec: str) -> str:
    """What two specs of one agent share: its name and the parameters that differ from their defaults, sorted
    (``random`` and ``random:``, ``pimc`` and ``pimc:samples=16``, a file by its absolute path). The agent is
    built (not set up), so an unknown name or parameter raises :class:`AgentError`."""
    return agent_from_spec(spec).spec_text()


def display_spec(text: str) -> str:
    """A spec as people read it: a file spec shows the file's name, not its path."""
    return targets.display(text, _known_name)


def spec_files_stamp(spec: str) -> tuple[tuple[str, int, int], ...]:
    """What a cache of agents built from ``spec`` must key on besides the text: for every parameter that names an
    existing file (a checkpoint) its modification time and size, for one that names a folder (a run directory)
    the modification times of the folder and of its ``checkpoints``, and for an agent of a spec'd file that
    file's; a file rewritten since is then read again."""
    name, params = parse_agent_spec(spec)
    stamp = []
    code = targets.stamp(name)
    if code is not None:
        stamp.append(("", *code))
    for key, value in sorted(params.items()):
        if not isinstance(value, str):
            continue
        if os.path.isfile(value):
            info = os.stat(value)
            stamp.append((key, info.st_mtime_ns, info.st_size))
        elif os.path.isdir(value):
            sub = os.path.join(value, "checkpoints")
            stamp.append((key, os.stat(value).st_mtime_ns, os.stat(sub).st_mtime_ns if os.path.isdir(sub) else 0))
    return tuple(stamp)


def agent_from_spec(spec: str | Mapping[str, Any], seed: int | None = None) -> Agent:
    """Build an agent from ``"name:key=value"`` text or a :meth:`Agent.spec` dict."""
    if isinstance(spec, str):
        name, params = parse_agent_spec(spec)
    elif isinstance(spec, Mapping):
        params = dict(spec)
        name = params.pop("name", None)
        if name is None:
            raise AgentError(f"agent spec {spec!r} has no 'name'")
        spec_seed = params.pop("seed", None)
        seed = spec_seed if seed is None else seed
    else:
        raise AgentError(f"agent spec {spec!r} is not allowed; allowed: 'name:key=value' text or a dict with 'name'")
    return _build(name, seed, params)


def _defaults(factory: Callable[..., Any]) -> dict[str, Any]:
    """Keyword parameters of a factory (except ``seed``) and their defaults."""
    sig = inspect.signature(factory)
    return {
        k: (None if p.default is inspect.Parameter.empty else p.default)
        for k, p in sig.parameters.items()
        if k not in ("self", "seed") and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }


# ---------------------------------------------------------------------- parameter validation
def check_param(agent: str, name: str, value: Any, hint: Any, allowed: str | None = None) -> Any:
    """Check one constructor parameter against its annotation; return it as a plain Python value.

    ``bool`` takes True/False only; ``int`` a whole number (not a bool); ``float`` a finite number (not a
    bool); ``str`` text; ``X | None`` also None. numpy scalars count as the Python type they hold. Other
    annotations are not checked here. Raises :class:`AgentError` naming the value and what is allowed.
    """
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    if value is None and type(None) in options:
        return None
    kinds = [k for k in options if k in _KINDS]
    if not kinds or len(kinds) != len([k for k in options if k is not type(None)]):
        return value  # an annotation this helper does not judge (a path, a mapping, ...)
    for kind in kinds:
        ok, plain = _KINDS[kind][0](value)
        if ok:
            return plain
    what = " or ".join(_KINDS[k][1] for k in kinds)
    if type(None) in options:
        what = "None or " + what
    raise AgentError(f"{agent}: {name}={value!r} is not allowed; allowed: {allowed or what}")


def _as_bool(v: Any) -> tuple[bool, Any]:
    return (True, bool(v)) if isinstance(v, (bool, np.bool_)) else (False, None)


def _as_int(v: Any) -> tuple[bool, Any]:
    ok = isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
    return (True, int(v)) if ok else (False, None)


def _as_float(v: Any) -> tuple[bool, Any]:
    ok = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
    return (True, float(v)) if ok and math.isfinite(float(v)) else (False, None)


def _as_str(v: Any) -> tuple[bool, Any]:
    return (True, str(v)) if isinstance(v, (str, np.str_)) else (False, None)


_KINDS: dict[Any, tuple[Callable[[Any], tuple[bool, Any]], str]] = {
    bool: (_as_bool, "True or False"),
    int: (_as_int, "a whole number"),
    float: (_as_float, "a finite number"),
    str: (_as_str, "text"),
}


def _validating(init: Callable[..., None]) -> Callable[..., None]:
    """Wrap an agent's ``__init__`` so that every keyword parameter is checked by :func:`check_param` first."""
    sig = inspect.signature(init)
    hints: dict[str, Any] | None = None

    @functools.wraps(init)
    def __init__(self: Agent, *args: Any, **kwargs: Any) -> None:
        nonlocal hints
        if hints is None:
            try:
                hints = typing.get_type_hints(init)
            except Exception:  # noqa: BLE001 - an annotation that cannot be resolved is not checked
                hints = {}
        try:
            bound = sig.bind(self, *args, **kwargs)
        except TypeError as exc:
            raise AgentError(f"{type(self).name}: {exc}") from exc
        help_ = getattr(type(self), "param_help", {})
        for key, value in list(bound.arguments.items()):
            if key in ("self", "seed") or key not in hints:
                continue
            bound.arguments[key] = check_param(type(self).name, key, value, hints[key], help_.get(key))
        init(*bound.args, **bound.kwargs)

    return __init__


def provenance(agent: Agent, spec: str | None = None) -> dict[str, Any]:
    """What a result record says about an agent (:func:`agents.targets.provenance`): its spec, class and the
    SHA-256 of its code, None for the project's own and registered agents."""
    return targets.provenance(agent, spec, builtin=lambda name: name in _EXTRA or name in AGENTS)
