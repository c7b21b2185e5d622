"""Scripted strategies, one module per ruleset family, chosen by ruleset name.

:data:`STRATEGIES` maps a ruleset name to its ``beginner`` and ``expert``
strategy classes; :mod:`agents.scripted.baselines` builds the registered agents on it.
Shared card sense and the trick model live in :mod:`agents.scripted.common`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from agents.scripted.classic import ClassicBeginner, ClassicExpert
from agents.scripted.common import Strategy
from agents.scripted.mauscheln import MauschelnBeginner, MauschelnExpert
from agents.scripted.mouche import MoucheBeginner, MoucheExpert
from agents.scripted.mousel import MouselBeginner, MouselExpert
from agents.scripted.muschka import MuschkaBeginner, MuschkaExpert

STRATEGIES: Mapping[str, Mapping[str, type[Strategy]]] = MappingProxyType({
    "mauscheln": MappingProxyType({"beginner": MauschelnBeginner, "expert": MauschelnExpert}),
    "mauscheln_classic": MappingProxyType({"beginner": ClassicBeginner, "expert": ClassicExpert}),
    "mousel": MappingProxyType({"beginner": MouselBeginner, "expert": MouselExpert}),
    "mouche": MappingProxyType({"beginner": MoucheBeginner, "expert": MoucheExpert}),
    "muschka": MappingProxyType({"beginner": MuschkaBeginner, "expert": MuschkaExpert}),
})
"""``STRATEGIES[ruleset][level]``: the strategy class of a level (``beginner``, ``expert``) in a ruleset."""


def strategy_class(ruleset: str, level: str) -> type[Strategy]:
    """The strategy of ``level`` in ``ruleset``; a ruleset without one gets :class:`Strategy`, which has no
    opinion anywhere (its agents then play random legal actions)."""
    return STRATEGIES.get(ruleset, {}).get(level, Strategy)
