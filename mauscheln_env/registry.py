"""The environments in PettingZoo's registry: ``pettingzoo.make("aec", "mauscheln/<name>-v1")``.

Importing :mod:`mauscheln_env` registers one id per ruleset (its default options, ``num_players`` 4 unless
given) and one per rule preset shipped in ``mauscheln_env/presets/`` (also reachable as ``configs/rules/`` in
a checkout) whose name is not a ruleset's; a preset named after a ruleset holds that ruleset's defaults, so
its id would say nothing new. Keyword arguments of ``make`` reach :func:`mauscheln_env.env`::

    import mauscheln_env, pettingzoo
    env = pettingzoo.make("aec", "mauscheln/mousel-v1", num_players=5)
    env = pettingzoo.make("aec", "mauscheln/mouche_pamphile-v1")

The version in the id is the environment's (``raw_env.metadata["name"]``): it changes when observations,
actions or rewards change meaning. An id names its ruleset: ``make(..., ruleset=...)`` is refused (make the
other id instead), so an id never builds another game than it says.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from mauscheln_env.config import RULESETS
from mauscheln_env.errors import ConfigError

NAMESPACE = "mauscheln"
VERSION = 1
PRESET_DIR = Path(__file__).resolve().parent / "presets"


def presets() -> dict[str, Path]:
    """The shipped rule presets by name (file stem), in name order."""
    return {p.stem: p for p in sorted(PRESET_DIR.glob("*.yaml"))}


def env_ids() -> dict[str, dict[str, str]]:
    """Every registered id and the keyword arguments it passes to :func:`mauscheln_env.env`."""
    ids = {f"{NAMESPACE}/{name}-v{VERSION}": {"ruleset": name} for name in RULESETS}
    for name, path in presets().items():
        if name not in RULESETS:
            ids[f"{NAMESPACE}/{name}-v{VERSION}"] = {"ruleset": str(path)}
    return ids


def make_for_id(env_id: str, id_ruleset: str, /, **kwargs: Any) -> Any:
    """:func:`mauscheln_env.env` for ``env_id``, whose ruleset (or preset) is ``id_ruleset``; a ``ruleset``
    keyword of ``pettingzoo.make`` would silently replace it, so it is refused."""
    if "ruleset" in kwargs:
        other = kwargs["ruleset"]
        hint = f"{NAMESPACE}/{other}-v{VERSION}" if isinstance(other, str) and other in RULESETS else "its id"
        raise ConfigError(f"{env_id} names its ruleset; ruleset={other!r} is not allowed; allowed: make that "
                          f"ruleset by {hint}, or mauscheln_env.env(ruleset=...)")
    from mauscheln_env.env import env

    return env(ruleset=id_ruleset, **kwargs)


def register_envs() -> None:
    """Add every id of :func:`env_ids` to PettingZoo's AEC registry (once; ids already there are kept)."""
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # PettingZoo before its registry: mauscheln_env.env() still works
        return
    for env_id, kwargs in env_ids().items():
        if env_id not in aec_registry:
            register("aec", env_id, entry_point=functools.partial(make_for_id, env_id, kwargs["ruleset"]))
