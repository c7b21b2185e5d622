"""The rulesets of RULES.md, one module each: the registry.

Each module (``mauscheln``, ``mauscheln_classic``, ``mousel``, ``mouche``,
``muschka``) holds its ruleset's spec, typed options, deck, deal fields, the
deal procedure in the order of its RULES.md section, and its rule objects;
see :mod:`mauscheln_env.rulesets.base` for what a module declares. Adding a
ruleset is adding a module here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from mauscheln_env.rulesets import mauscheln, mauscheln_classic, mouche, mousel, muschka
from mauscheln_env.rulesets.base import RulesetSpec

RULESETS: Mapping[str, RulesetSpec] = MappingProxyType(
    {module.SPEC.name: module.SPEC for module in (mauscheln, mauscheln_classic, mousel, mouche, muschka)}
)
"""Every ruleset of RULES.md, by name."""

__all__ = ["RULESETS", "RulesetSpec"]
