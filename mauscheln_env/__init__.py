"""mauscheln: the Mauscheln family of card games as a pure rules engine and a PettingZoo AEC environment.

>>> import mauscheln_env
>>> env = mauscheln_env.env(num_players=4)

Importing the package also registers every ruleset and rule preset in PettingZoo's registry
(:mod:`mauscheln_env.registry`): ``pettingzoo.make("aec", "mauscheln/mousel-v1")``.
"""

from mauscheln_env import compiled as _compiled  # noqa: F401  (first: it loads the compiled build where one is current)
from mauscheln_env.config import RULESETS, RuleConfig, load_preset, make_config
from mauscheln_env.engine import DealResult, DealSpec, Game, Phase, Role, State
from mauscheln_env.env import env, raw_env
from mauscheln_env.errors import (
    CardError,
    ConfigError,
    DealError,
    IllegalActionError,
    MauschelnError,
    SessionOverError,
)
from mauscheln_env.observation import Observer
from mauscheln_env.registry import register_envs

__version__ = "0.1.0"

register_envs()

__all__ = [
    "RULESETS",
    "CardError",
    "ConfigError",
    "DealError",
    "DealResult",
    "DealSpec",
    "Game",
    "IllegalActionError",
    "MauschelnError",
    "Observer",
    "Phase",
    "Role",
    "RuleConfig",
    "SessionOverError",
    "State",
    "env",
    "load_preset",
    "make_config",
    "raw_env",
]
