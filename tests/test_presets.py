"""Every preset in configs/rules: loading the file and passing the same options as keywords give the same game."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

import mauscheln_env
from mauscheln_env import RULESETS

PRESETS = sorted((Path(__file__).resolve().parents[1] / "configs" / "rules").glob("*.yaml"))


def trajectory(env, steps: int = 400):
    env.reset(seed=11)
    rng = np.random.default_rng(5)
    out = []
    for agent in env.agent_iter(max_iter=steps):
        obs, reward, term, trunc, info = env.last()
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc))
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out


def test_every_ruleset_has_a_preset():
    named = {yaml.safe_load(p.read_text())["ruleset"] for p in PRESETS}
    assert named == set(RULESETS)


@pytest.mark.parametrize("path", PRESETS, ids=[p.stem for p in PRESETS])
def test_preset_equals_keywords(path):
    data = yaml.safe_load(path.read_text())
    ruleset = data.pop("ruleset")
    num_players = data.pop("num_players", None)
    from_file = mauscheln_env.env(ruleset=str(path))
    from_kwargs = mauscheln_env.env(ruleset=ruleset, num_players=num_players, **data)
    assert from_file.unwrapped.config == from_kwargs.unwrapped.config
    assert trajectory(from_file) == trajectory(from_kwargs)


def test_keyword_overrides_win_over_the_preset():
    path = next(p for p in PRESETS if p.stem == "mouche_pamphile")
    env = mauscheln_env.raw_env(ruleset=str(path), num_players=3, pamphile_wild=False)
    assert env.config.num_players == 3 and env.config.pamphile and not env.config.pamphile_wild
