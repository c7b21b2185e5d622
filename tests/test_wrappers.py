"""``env()``'s one-layer ClassicWrapper against PettingZoo's own three classic wrappers.

The same seeded scripts (legal play, masked actions, out-of-bounds actions,
``None`` for a live agent, observing other agents, steps after the end, calls
before ``reset``, a broken ``agent_iter`` loop) run through
``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(raw_env)))``
and through ``mauscheln_env.env()``; every return value, exception, logged
warning and the full public state after every call must agree.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

import mauscheln_env
from mauscheln_env.wrappers import ClassicWrapper

RULESETS = list(mauscheln_env.RULESETS)
ILLEGAL_REWARD = -17.0


def pettingzoo_stack(**kwargs):
    raw = mauscheln_env.raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(raw, illegal_reward=ILLEGAL_REWARD)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


def ours(**kwargs):
    return mauscheln_env.env(illegal_reward=ILLEGAL_REWARD, **kwargs)


def plain(x):
    """A comparable copy of anything an env hands out."""
    if isinstance(x, np.ndarray):
        return ("ndarray", x.dtype.str, x.shape, x.tolist())
    if isinstance(x, np.generic):
        return ("np", x.dtype.str, x.item())
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(plain(v) for v in x)
    return x


def call(env, fn):
    """(result or exception, warnings logged) of ``fn(env)``."""
    EnvLogger.flush()
    try:
        out = ("ok", plain(fn(env)))
    except Exception as exc:  # noqa: BLE001 - the point is to compare whatever is raised
        out = ("raised", type(exc).__name__, str(exc))
    return out, list(EnvLogger.mqueue)


def snapshot(env):
    out = {}
    for name in ("agents", "agent_selection", "rewards", "_cumulative_rewards", "terminations", "truncations",
                 "infos", "num_agents", "possible_agents"):
        out[name] = call(env, lambda e, name=name: getattr(e, name))[0]
    out["str"] = str(env)
    return out


def script(rng: np.random.Generator, num_actions: int):
    """Calls to make, drawn once so both environments receive the same ones."""
    steps = []
    for _ in range(400):
        r = rng.random()
        if r < 0.75:
            steps.append(("legal", None))
        elif r < 0.80:
            steps.append(("masked", None))  # an in-bounds action outside the mask
        elif r < 0.83:
            steps.append(("step", [-1, num_actions, None, 2.5, np.int64(num_actions + 3), True][rng.integers(6)]))
        elif r < 0.88:
            steps.append(("observe_other", int(rng.integers(8))))
        elif r < 0.91:
            steps.append(("last_no_obs", None))
        elif r < 0.93:
            steps.append(("state", None))
        elif r < 0.95:
            steps.append(("np_int", None))  # a legal action as a numpy integer
        elif r < 0.97:
            steps.append(("blind", None))  # a legal action, stepped without observing first
        else:
            steps.append(("reset", int(rng.integers(1000))))
    return steps


def run_script(env, steps, rng_seed: int):
    """Play ``steps``; choices of actions come from a generator seeded alike for both envs."""
    rng = np.random.default_rng(rng_seed)
    record = []
    for kind, arg in steps:
        if kind == "reset":
            record.append(call(env, lambda e, s=arg: e.reset(seed=s)))
        elif kind in ("legal", "masked", "np_int"):
            res = call(env, lambda e: e.last())
            record.append(res)
            if res[0][0] != "ok":
                record.append(call(env, lambda e: e.step(0)))
                continue
            obs, _, term, trunc, _ = env.last()
            mask = obs["action_mask"]
            if term or trunc:
                action = None
            elif kind == "masked" and (mask == 0).any():
                action = int(rng.choice(np.flatnonzero(mask == 0)))
            elif mask.any():
                action = int(rng.choice(np.flatnonzero(mask)))
                action = np.int64(action) if kind == "np_int" else action
            else:
                action = 0
            record.append(call(env, lambda e, a=action: e.step(a)))
        elif kind == "blind":
            raw = env.unwrapped  # reading the raw env leaves the wrappers' memory of observations alone
            mask = raw.observe(raw.agent_selection)["action_mask"] if raw.agents else np.zeros(1)
            action = int(rng.choice(np.flatnonzero(mask))) if mask.any() else None
            record.append(call(env, lambda e, a=action: e.step(a)))
        elif kind == "step":
            record.append(call(env, lambda e, a=arg: e.step(a)))
        elif kind == "observe_other":
            record.append(call(env, lambda e, i=arg: e.observe(e.possible_agents[i % len(e.possible_agents)])))
        elif kind == "last_no_obs":
            record.append(call(env, lambda e: e.last(observe=False)))
        elif kind == "state":
            record.append(call(env, lambda e: e.state()))
        record.append(snapshot(env))
    return record


def before_reset(env):
    record = [snapshot(env)]
    for fn in (lambda e: e.step(0), lambda e: e.observe("player_0"), lambda e: e.state(), lambda e: e.render(),
               lambda e: e.agent_iter(), lambda e: e.last(), lambda e: e._secret,
               lambda e: e.observation_space("player_1"), lambda e: e.action_space("player_1"),
               lambda e: e.unwrapped.metadata["name"]):
        record.append(call(env, fn))
    return record


def agent_iter_misuse(env):
    """A loop over agent_iter that forgets to step, then one that steps; a fresh iterable each time."""
    env.reset(seed=3)
    out = []
    it = iter(env.agent_iter())
    out.append(call(env, lambda e: next(it)))
    out.append(call(env, lambda e: next(it)))  # no step in between
    env.reset(seed=3)
    agents = []
    for agent in env.agent_iter(max_iter=50):
        agents.append(agent)
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    out.append(agents)
    iterable = env.agent_iter(max_iter=2)
    out.append([call(env, lambda e: len(list(iter(iterable))))])
    return out


@pytest.fixture(autouse=True)
def _quiet():
    EnvLogger.suppress_output()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
    EnvLogger.unsuppress_output()
    EnvLogger.flush()


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("seed", [0, 1])
def test_same_script_same_everything(ruleset, seed):
    kwargs = {"ruleset": ruleset, "num_players": 4, "max_deals": 2}
    a, b = pettingzoo_stack(**kwargs), ours(**kwargs)
    assert before_reset(a) == before_reset(b)
    steps = script(np.random.default_rng(seed), a.unwrapped.config.num_actions)
    a.reset(seed=seed)
    b.reset(seed=seed)
    ra, rb = run_script(a, steps, seed), run_script(b, steps, seed)
    for i, (x, y) in enumerate(zip(ra, rb)):
        assert x == y, f"call {i} differs"
    assert len(ra) == len(rb)
    # the scripts reach every branch: an illegal termination, a bounds failure and a step after the end
    flat = repr(ra)
    assert "Illegal move made" in flat and "action is not in action space" in flat
    assert "step() called after all agents are terminated" in flat


@pytest.mark.parametrize("ruleset", RULESETS)
def test_agent_iter_order_enforcing_matches(ruleset):
    kwargs = {"ruleset": ruleset, "num_players": 3}
    assert agent_iter_misuse(pettingzoo_stack(**kwargs)) == agent_iter_misuse(ours(**kwargs))


def test_env_is_one_layer_and_an_order_enforcing_wrapper():
    env = mauscheln_env.env()
    assert isinstance(env, ClassicWrapper) and isinstance(env, wrappers.OrderEnforcingWrapper)
    assert env.env is env.unwrapped and str(env) == "mauscheln_v1"


@pytest.mark.parametrize("ruleset", RULESETS)
def test_pettingzoo_api_test_accepts_every_ruleset(ruleset):
    api_test(mauscheln_env.env(ruleset=ruleset, num_players=4, max_deals=2), num_cycles=200)


def test_wrapper_refuses_a_non_aec_env():
    with pytest.raises(ValueError, match="AEC environment"):
        ClassicWrapper(object(), illegal_reward=-1.0)
