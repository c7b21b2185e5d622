"""PettingZoo's registry: every ruleset and every shipped preset by id, after ``import mauscheln_env``."""

from __future__ import annotations

import subprocess
import sys

import pettingzoo
import pytest
from pettingzoo.test import api_test

import mauscheln_env
from mauscheln_env.config import RULESETS, make_config
from mauscheln_env.registry import PRESET_DIR, env_ids, presets


def test_every_ruleset_and_preset_has_an_id():
    ids = env_ids()
    assert {f"mauscheln/{r}-v1" for r in RULESETS} <= set(ids)
    named = {p for p in presets() if p not in RULESETS}
    assert named and {f"mauscheln/{p}-v1" for p in named} <= set(ids)
    assert len(ids) == len(RULESETS) + len(named)
    assert all(i in pettingzoo.aec_registry for i in ids)


@pytest.mark.parametrize("env_id", sorted(env_ids()))
def test_make_builds_the_game_the_id_names(env_id):
    env = pettingzoo.make("aec", env_id)
    kwargs = env_ids()[env_id]
    assert env.unwrapped.game.config == make_config(kwargs["ruleset"])
    env.reset(seed=0)
    assert env.agent_selection in env.agents
    assert env.unwrapped.metadata["name"] == "mauscheln_v1"  # the id's version is the environment's


@pytest.mark.parametrize("ruleset", [r for r in RULESETS if (PRESET_DIR / f"{r}.yaml").exists()])
def test_a_preset_named_after_its_ruleset_holds_its_defaults(ruleset):
    """Why such presets get no id of their own: the ruleset's id already builds the same game."""
    assert make_config(PRESET_DIR / f"{ruleset}.yaml") == make_config(ruleset)


def test_make_passes_keywords_and_passes_the_api_test():
    env = pettingzoo.make("aec", "mauscheln/mousel-v1", num_players=5, illegal_reward=-3.0)
    assert env.unwrapped.game.n == 5
    api_test(pettingzoo.make("aec", "mauscheln/mouche_pamphile-v1"), num_cycles=200)


def test_unknown_ids_and_options_are_refused_clearly():
    with pytest.raises(Exception, match="mauscheln"):
        pettingzoo.make("aec", "mauscheln/nonsense-v1")
    with pytest.raises(mauscheln_env.ConfigError, match="num_players=9"):
        pettingzoo.make("aec", "mauscheln/mousel-v1", num_players=9)


def test_the_import_alone_registers_in_a_fresh_process():
    code = ("import pettingzoo, mauscheln_env; e = pettingzoo.make('aec', 'mauscheln/muschka-v1'); "
            "print(e.unwrapped.game.config.ruleset)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["muschka"]
