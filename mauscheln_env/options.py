"""Typed rule options: one frozen dataclass per ruleset, the one source of every default.

A ruleset module declares its options as a subclass of :class:`Options`, one
field per option with :func:`option` giving its default, what is allowed (in
words, for error messages and the docs) and its meaning::

    @dataclass(frozen=True)
    class MauschelnOptions(Options):
        stake: int = option(4, "a positive multiple of 4", "The dealer's ante S (chips).", check=multiple_of(4))
        knock: bool = option(False, "True or False", "Klopfen (RULES.md §2.2).")

:meth:`Options.build` validates keyword options once (unknown names, types,
values, and the ruleset's own cross-checks in :meth:`Options.check`) and
raises :class:`~mauscheln_env.errors.ConfigError` naming the option and what is
allowed. The engine and the rule objects read the typed fields
(``options.knock``); an options object is also a read-only mapping
(``options["knock"]``, ``dict(options)``), which is how configurations are
stored in checkpoints and presets.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union, get_args, get_origin, get_type_hints

import numpy as np

from mauscheln_env.errors import ConfigError, shown

MAX_AMOUNT = 2**31 - 1
"""The largest number of chips (or points) in any option or reset value: every total of a table then fits
the batched engine's ``int64`` and the observation's ``float32`` scaling stays finite."""


def option(default: Any, allowed: str, doc: str, check: Callable[[Any], bool] | None = None) -> Any:
    """A dataclass field that is a rule option: its default, what is allowed (in words), its meaning."""
    return field(default=default, metadata={"allowed": allowed, "doc": doc, "check": check})


def multiple_of(k: int) -> Callable[[int], bool]:
    return lambda v: 0 < v <= MAX_AMOUNT and v % k == 0


def at_least(low: int, high: int = MAX_AMOUNT) -> Callable[[int], bool]:
    return lambda v: low <= v <= high


def one_of(*values: Any) -> Callable[[Any], bool]:
    return lambda v: v in values


@dataclass(frozen=True)
class OptionInfo:
    """What the docs and error messages say about one option."""

    name: str
    default: Any
    allowed: str
    doc: str
    kind: type = object
    """The type of a value (``int``, ``bool``, ``str``, ...)."""
    nullable: bool = False
    """None is allowed too."""


@dataclass(frozen=True)
class Options(Mapping):
    """Base of every ruleset's options (see the module docstring). Subclasses add fields with :func:`option`."""

    _types: ClassVar[dict[str, tuple[type, bool]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._types = {}

    # ------------------------------------------------------------------ building
    @classmethod
    def build(cls, num_players: int, values: Mapping[str, Any]) -> Options:
        """Validate keyword options into an instance (defaults for the rest); raise ConfigError."""
        names = cls.names()
        unknown = sorted(set(values) - set(names), key=str)
        if unknown:
            raise ConfigError(
                f"unknown option(s) {', '.join(map(str, unknown))} for ruleset {cls.ruleset_name()}; "
                f"allowed: {', '.join(sorted(names))}"
            )
        clean = {name: cls._validate(name, value) for name, value in values.items()}
        opts = cls(**clean)
        opts.check(num_players)
        return opts

    @classmethod
    def ruleset_name(cls) -> str:
        return cls.__module__.rsplit(".", 1)[-1]

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def infos(cls) -> list[OptionInfo]:
        return [OptionInfo(f.name, f.default, f.metadata["allowed"], f.metadata["doc"], *cls._type_of(f.name))
                for f in dataclasses.fields(cls)]

    @classmethod
    def _type_of(cls, name: str) -> tuple[type, bool]:
        if not cls._types:
            hints = get_type_hints(cls)
            for f in dataclasses.fields(cls):
                hint = hints[f.name]
                args = get_args(hint) if get_origin(hint) in (Union, types.UnionType) else ()
                if args:
                    kinds = [a for a in args if a is not type(None)]
                    cls._types[f.name] = (kinds[0], type(None) in args)
                else:
                    cls._types[f.name] = (hint, False)
        return cls._types[name]

    @classmethod
    def _validate(cls, name: str, value: Any) -> Any:
        f = next(f for f in dataclasses.fields(cls) if f.name == name)
        allowed = f.metadata["allowed"]
        kind, nullable = cls._type_of(name)
        if value is None:
            if nullable:
                return None
            raise ConfigError(f"option {name}=None is not allowed; allowed: {allowed}")
        coerced = _coerce(value, kind)
        if coerced is _WRONG:
            raise ConfigError(f"option {name}={shown(value)} has type {type(value).__name__}; allowed: {allowed}")
        value = coerced
        check = f.metadata["check"]
        if check is not None and not check(value):
            raise ConfigError(f"option {name}={shown(value)} is not allowed; allowed: {allowed}")
        return value

    def check(self, num_players: int) -> None:  # noqa: B027 - a hook: the ruleset's cross-checks
        """Cross-checks between options (and the player count); raise ConfigError."""

    # ------------------------------------------------------------------ mapping view
    def __getitem__(self, name: str) -> Any:
        if name not in self.names():
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.names()}


class _Wrong:
    pass


_WRONG = _Wrong()


def _coerce(value: Any, kind: type) -> Any:
    """``value`` as ``kind`` (numpy scalars accepted), or ``_WRONG``."""
    if kind is bool:
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        return _WRONG
    if kind is int:
        if isinstance(value, (bool, np.bool_)):
            return _WRONG
        if isinstance(value, numbers.Integral):
            return int(value)
        return _WRONG
    if kind is float:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            return _WRONG
        value = float(value)
        return value if math.isfinite(value) else _WRONG
    if kind is str:
        return value if isinstance(value, str) else _WRONG
    return value if isinstance(value, kind) else _WRONG


def max_deals_option(default: int | None = 1) -> Any:
    return option(default, "a whole number >= 1, or None for a session that runs until its natural end",
                  "Settled deals per session (one episode). Throw-ins and pass rounds do not count.",
                  check=at_least(1))


def max_throw_ins_option() -> Any:
    return option(50, "a whole number >= 1",
                  "Consecutive throw-ins (pass rounds) after which the session is truncated.", check=at_least(1))


def max_session_deals_option(default: int = 1000) -> Any:
    return option(default, "a whole number >= 1 (and >= max_deals)",
                  "Settled deals after which a session that has not ended otherwise is truncated, "
                  "so that every session ends.", check=at_least(1))


def deck_size_option(allowed: str) -> Any:
    return option(None, allowed, "Cards in the deck (derived from the player count when omitted).",
                  check=at_least(1, 52))


def stake_option(default: int, multiple: int) -> Any:
    return option(default, f"a positive multiple of {multiple}, at most {MAX_AMOUNT}", "The dealer's ante S (chips).",
                  check=multiple_of(multiple))


def bankroll_option(default: int) -> Any:
    return option(default, f"a whole number from 1 to {MAX_AMOUNT}",
                  "Chips each seat starts a session with (unless reset passes 'chips').", check=at_least(1))


def check_session_bound(opts: Options) -> None:
    """``max_deals`` may not exceed the truncation bound ``max_session_deals``."""
    md, bound = opts["max_deals"], opts["max_session_deals"]
    if md is not None and md > bound:
        raise ConfigError(f"option max_deals={md} exceeds max_session_deals={bound}; "
                          f"allowed: max_deals <= max_session_deals (raise max_session_deals too)")
