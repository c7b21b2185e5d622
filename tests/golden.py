"""Golden trajectories: seeded random play through the PettingZoo loop, hashed step by step.

Recorded once from the engine as it stood before the rule-objects refactor, and
replayed by ``tests/test_golden.py`` so that a change of engine code that
changes the game (an observation, a mask, a reward, an end, a draw from the
seeded RNG) is caught at the first step where it differs.

For every preset in ``configs/rules/`` and each ruleset's default at its
smallest and largest table, two families of sessions are played:

* ``plain``: the configuration as it is, ``reset(seed=k)`` for k = 0, 1, ...;
* ``long``: up to 6 settled deals with small random bankrolls (or scores) and a
  random pot carried in, so that eliminations, reshuffles, queues, caps and
  session ends are reached.

Every decision is drawn uniformly from the legal actions by a generator seeded
with the session's seed. Each step feeds one SHA-256 per session with the
acting agent, its observation and action mask, every agent's reward, and the
terminations and truncations; a second hash takes ``state()`` and the infos.

Regenerate (only when the game is meant to change, with a note saying why):
``python -m tests.golden --write``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_FILE = Path(__file__).resolve().parent / "data" / "golden_trajectories.json"
PLAIN_SESSIONS = 200
LONG_SESSIONS = 100
LONG_DEALS = 6



def configurations() -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, raw_env keyword arguments) for every recorded configuration."""
    for path in sorted((ROOT / "configs" / "rules").glob("*.yaml")):
        yield f"preset:{path.name}", {"ruleset": f"configs/rules/{path.name}"}
    from mauscheln_env.rulesets import RULESETS

    for ruleset, spec in RULESETS.items():
        for n in (spec.min_players, spec.max_players):
            yield f"default:{ruleset}:{n}", {"ruleset": ruleset, "num_players": n}


def _feed(h: Any, *arrays: Any) -> None:
    for a in arrays:
        if isinstance(a, np.ndarray):
            h.update(str(a.dtype).encode())
            h.update(np.ascontiguousarray(a).tobytes())
        else:
            h.update(json.dumps(a, sort_keys=True, default=str).encode())


def play_session(env: Any, seed: int, long: bool) -> tuple[str, str, int]:
    """Play one seeded session; return (trajectory digest, state/infos digest, decisions)."""
    rng = np.random.default_rng(seed)
    options: dict[str, Any] | None = None
    if long:
        n = env.config.num_players
        points = env.config.ruleset == "muschka"
        options = {"scores" if points else "chips": [int(x) for x in rng.integers(1, 13 if points else 30, size=n)]}
        if not points:
            options["pot"] = int(rng.integers(0, 20))
    env.reset(seed=seed, options=options)
    traj = hashlib.sha256()
    side = hashlib.sha256()
    steps = 0
    while env.agents:
        agent = env.agent_selection
        obs = env.observe(agent)
        _feed(traj, agent, obs["observation"], obs["action_mask"],
              {a: env.rewards[a] for a in env.agents},
              {a: env.terminations[a] for a in env.agents},
              {a: env.truncations[a] for a in env.agents})
        _feed(side, env.state(), env.infos)
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)))
        steps += 1
    return traj.hexdigest()[:16], side.hexdigest()[:16], steps


def record(name: str, kwargs: dict[str, Any], plain: int = PLAIN_SESSIONS, long: int = LONG_SESSIONS) -> dict[str, Any]:
    """Digests of one configuration: one combined hash per family and every session's own."""
    import mauscheln_env

    out: dict[str, Any] = {"kwargs": kwargs}
    kwargs = {**kwargs, "ruleset": str(ROOT / kwargs["ruleset"]) if kwargs["ruleset"].endswith(".yaml") else kwargs["ruleset"]}
    env = mauscheln_env.raw_env(**kwargs)
    out["layout"] = [[p.name, list(p.shape)] for p in env.observation_layout]
    out["state_layout"] = [[p.name, list(p.shape)] for p in env.state_layout]
    out["num_actions"] = int(env.action_space(env.possible_agents[0]).n)
    for family, count in (("plain", plain), ("long", long)):
        if family == "long":
            max_deals = LONG_DEALS
            env = mauscheln_env.raw_env(**{**kwargs, "max_deals": max_deals})
        sessions = []
        decisions = 0
        for seed in range(count):
            traj, side, steps = play_session(env, seed, family == "long")
            sessions.append([traj, side])
            decisions += steps
        total = hashlib.sha256("".join(t + s for t, s in sessions).encode()).hexdigest()
        out[family] = {"digest": total, "decisions": decisions, "sessions": sessions}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"record every configuration into {GOLDEN_FILE}")
    args = parser.parse_args(argv)
    if not args.write:
        parser.print_help()
        return 2
    data = {name: record(name, kwargs) for name, kwargs in configurations()}
    GOLDEN_FILE.parent.mkdir(parents=True, exist_ok=True)
    tmp = GOLDEN_FILE.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(GOLDEN_FILE)
    for name, entry in data.items():
        print(f"{name}: {entry['plain']['decisions']} + {entry['long']['decisions']} decisions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
