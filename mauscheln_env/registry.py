"""The environments in PettingZoo's registry: ``pettingzoo.make("aec", "mauscheln/<name>-v1")``.

Importing :mod:`mauscheln_env` registers one id per ruleset (its default options, ``num_players`` 4 unless
given) and one per rule preset shipped in ``mauscheln_env/presets/`` (also reachable as ``configs/rules/`` in
a checkout) whose name is not a ruleset's; a preset named after a ruleset holds that ruleset's defaults, so
its id would say nothing new. Keyword arguments of ``make`` reach :func:`mauscheln_env.env`::

    import mauscheln_env, pettingzoo
    env = pettingzoo.make("aec", "mauscheln/mousel-v1", num_players=5)
    env = pettingzoo.make("aec", "mauscheln/mouche_pamphile-v1")

The version in the id is the environment's (``raw_env.metadata["name"]``): it changes when observations,
actions or rewards change meaning.
"""

from __future__ import annotations

from pathlib import Path

from mauscheln_env.config import RULESETS

NAMESPACE = "mauscheln"
VERSION = 1
PRESET_DIR = Path(__file__).resolve().parent / "presets"
ENTRY_POINT = "mauscheln_env.env:env"


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


def register_envs() -> None:
    """Add every id of :func:`env_ids` to PettingZoo's AEC registry (once; ids already there are kept)."""
    try:
        from pettingzoo import aec_registry, register
    except ImportError:  # PettingZoo before its registry: mauscheln_env.env() still works
        return
    for env_id, kwargs in env_ids().items():
        if env_id not in aec_registry:
            register("aec", env_id, entry_point=ENTRY_POINT, kwargs=kwargs)
