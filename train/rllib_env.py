"""RLlib (new API stack): a turn-based ``MultiAgentEnv`` with masks, opponents per episode, and a masked RLModule.

:class:`MauschelnMultiAgentEnv` gives RLlib what its new API stack expects:

* ``possible_agents`` (``player_0`` ... ``player_{n-1}``) and per-agent
  ``observation_spaces`` / ``action_spaces``;
* observations ``{"observations": Box(float32, (D,)), "action_mask": Box(float32, (A,))}``,
  the two keys RLlib's action-masking RLModule reads (``rllib/examples/rl_modules/
  classes/action_masking_rlm.py``); only the seat to act gets an observation;
* every seat's rewards whenever they land: a settlement usually lands on
  another seat's turn and is handed to the seat in that step (RLlib adds it to
  the seat's pending transition). What a seat receives before its first
  decision of a session (a lone seat in mouche, muschka, mousel) is handed over
  with its first action, since RLlib drops rewards that come before an
  agent's first action;
* final observations for every seat RLlib controls when the session ends
  (``terminateds`` / ``truncateds`` ``{"__all__": True}``);
* an action outside the mask ends the session with ``illegal_reward`` (minus
  the bankroll, or minus the starting score in muschka) for the offender, as
  ``env()`` does, so that RLlib's environment check, which steps with
  unmasked random actions, passes.

**Opponents, seat by seat, per episode.** RLlib trains one module
(``"main"``, the shared policy) and every agent it sees maps to it. The other
seats are played inside the environment, from the same observation, mask and
info the seat would get, by the episode's opponent: at every reset the
environment draws from its seeded generator an opponent from
``opponents`` (weights by name: ``"self"`` (every seat is main), a scripted
agent such as ``"random"`` or ``"expert"`` built with
:func:`agents.base.make_agent`, or ``"snapshot"``, a frozen past policy from the
pool that :meth:`MauschelnMultiAgentEnv.set_snapshots` fills), then a duplicate
format from ``formats`` (``"alone"``: main holds one seat against a field of
the opponent; ``"field"``: main holds every seat but one), then the seats. So
the seat-to-policy assignment covers any number of seats and both formats of
``mauscheln eval``, and scripted agents get the infos they need, which an
RLModule never sees.

:class:`MaskedPolicyModule` is a ``TorchRLModule`` with RLlib's
``ValueFunctionAPI`` around :class:`agents.learned.PolicyNet` (separate actor
and critic MLPs; illegal logits filled with the float minimum), so a trained
module is exported as a ``learned`` checkpoint by :func:`export_policy` and
plays in ``mauscheln eval`` as ``learned:checkpoint=PATH``. RLlib's own
``ActionMaskingTorchRLModule`` works on this environment as well.

``env_config`` keys (all optional): ``ruleset``, ``num_players``, ``rules``
(rule options, e.g. ``{"max_deals": 1}``), ``opponents`` (``{name: weight}``),
``formats``, ``seed``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from agents.base import Agent, draw_index, make_agent
from agents.learned import LearnedAgent, NetSpec, PolicyNet, save_policy
from mauscheln_env.env import raw_env
from mauscheln_env.errors import ConfigError

FORMATS = ("alone", "field")
"""Duplicate formats: main alone against a field of the opponent, or main as the field against one opponent."""
DEFAULT_OPPONENTS = {"self": 1.0, "snapshot": 1.0, "random": 0.5, "expert": 1.0}
MAIN = "main"
"""The module id of the shared policy."""


class MauschelnMultiAgentEnv(MultiAgentEnv):
    """A Mauscheln session for RLlib: the seats of ``"main"`` are agents, the others play inside (see module doc)."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        # RLlib passes an EnvContext: which env runner and which of its envs this is. RLlib's own reset
        # seeds (seed + runner index + env index) overlap between runners, so every seed is mixed with both.
        self._stream = (int(getattr(config, "worker_index", 0) or 0), int(getattr(config, "vector_index", 0) or 0))
        config = dict(config or {})
        unknown = sorted(set(config) - {"ruleset", "num_players", "rules", "opponents", "formats", "seed"})
        if unknown:
            raise ConfigError(f"env_config has unknown key(s) {unknown}; allowed: ruleset, num_players, rules, "
                              "opponents, formats, seed")
        self.env = raw_env(ruleset=config.get("ruleset", "mauscheln"), num_players=config.get("num_players"),
                           **dict(config.get("rules") or {}))
        self.game = self.env.game
        A = self.game.num_actions
        D = self.env.observation_space("player_0")["observation"].shape[0]
        self.opponents = _weights(config.get("opponents", DEFAULT_OPPONENTS))
        self.formats = list(config.get("formats", FORMATS))
        if not self.formats or any(f not in FORMATS for f in self.formats):
            raise ConfigError(f"formats={self.formats!r} is not allowed; allowed: a non-empty list of {FORMATS}")
        self.possible_agents = list(self.env.possible_agents)
        self.agents = []
        space = gym.spaces.Dict({
            "observations": gym.spaces.Box(0.0, np.inf, (D,), np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (A,), np.float32),
        })
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: gym.spaces.Discrete(A) for a in self.possible_agents}
        self.rng = self._generator(config.get("seed", 0))
        options = self.game.config.options
        self.illegal_reward = -float(options.get("bankroll", options.get("start_score", 1)))
        self.snapshots: list[PolicyNet] = []
        self.spec: NetSpec | None = None
        self.main: set[str] = set()  # agents RLlib plays this episode
        self.others: dict[str, Agent] = {}  # seats played inside, by agent id
        self.opponent = "self"
        self._started: set[str] = set()
        self._pending: dict[str, float] = {}

    def _generator(self, seed: int | None) -> np.random.Generator:
        if seed is None:
            return np.random.default_rng()
        return np.random.default_rng([int(seed), *self._stream])

    # ------------------------------------------------------------------ opponents
    def set_snapshots(self, spec: NetSpec, states: list[dict[str, torch.Tensor]]) -> None:
        """Replace the pool of frozen policies (state dicts of :class:`PolicyNet` with ``spec``)."""
        nets = []
        for state in states:
            net = PolicyNet(spec)
            net.load_state_dict(state)
            nets.append(net.eval())
        self.spec, self.snapshots = spec, nets

    def _draw_table(self) -> None:
        """Draw this episode's opponent, format and seats (:func:`draw_table`)."""
        table = draw_table(self.rng, self.opponents, self.formats, self.game.n, len(self.snapshots))
        self.opponent = table.opponent
        self.main = {f"player_{s}" for s in table.main}
        self.others = {}
        net = self.snapshots[table.snapshot] if table.snapshot is not None else None
        for s, seed in table.seeds.items():
            if net is not None:
                agent = LearnedAgent.from_network(net, self.game, seed=seed, label="snapshot")
            else:
                agent = make_agent(self.opponent, seed=seed)
            agent.setup(self.game, s)
            agent.reset(seed)
            self.others[f"player_{s}"] = agent

    # ------------------------------------------------------------------ the MultiAgentEnv API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None:
            self.rng = self._generator(seed)
        for _ in range(100):
            self._draw_table()
            self.env.reset(seed=int(self.rng.integers(2**31 - 1)), options=options)
            self._started = set()
            self._pending = dict.fromkeys(self.main, 0.0)
            self.agents = sorted(self.main)
            self._advance()
            if not self.env.engine_state.over:
                return self._observe_to_act(), {}
        raise ConfigError("100 sessions in a row ended before a seat of the learning policy acted; "
                          "check the rules and opponents")

    def step(self, action_dict: dict[str, int]):
        env = self.env
        agent = env.agent_selection
        if agent not in action_dict:
            raise ConfigError(f"{agent} is to act, but the actions are for {sorted(action_dict)}")
        rewards: dict[str, float] = {}
        if agent not in self._started:  # what it received before its first action comes with it
            self._started.add(agent)
            rewards[agent] = self._pending.pop(agent, 0.0)
        action = action_dict[agent]
        if not (_is_int(action) and 0 <= int(action) < self.game.num_actions and env.observe(agent)["action_mask"][
                int(action)]):
            # as env() does: an action outside the mask ends the session, the offender gets illegal_reward
            rewards[agent] += self.illegal_reward
            for a in self._started:
                rewards.setdefault(a, 0.0)
            obs = {a: self._observation(a) for a in self.agents}
            return obs, rewards, {"__all__": True}, {"__all__": False}, {}
        env.step(int(action))
        self._collect(rewards)
        self._advance(rewards)
        for a in self._started:
            rewards.setdefault(a, 0.0)
        if env.engine_state.over:
            truncated = any(env.truncations.values())
            obs = {a: self._observation(a) for a in self.agents}
            return obs, rewards, {"__all__": not truncated}, {"__all__": truncated}, {}
        return self._observe_to_act(), rewards, {"__all__": False}, {"__all__": False}, {}

    def render(self) -> str | None:
        return None

    # ------------------------------------------------------------------ internals
    def _collect(self, rewards: dict[str, float]) -> None:
        """Add the rewards of the env's last step for the agents RLlib plays."""
        for a, r in self.env.rewards.items():
            if a not in self.main or not r:
                continue
            if a in self._started:
                rewards[a] = rewards.get(a, 0.0) + r
            else:
                self._pending[a] += r

    def _advance(self, rewards: dict[str, float] | None = None) -> None:
        """Let the seats played inside act until a main seat must decide or the session ends."""
        env = self.env
        rewards = {} if rewards is None else rewards
        while not env.engine_state.over and env.agent_selection in self.others:
            agent = env.agent_selection
            view = env.observe(agent)
            env.step(self.others[agent].act(view["observation"], view["action_mask"], env.infos[agent]))
            self._collect(rewards)

    def _observation(self, agent: str) -> dict[str, np.ndarray]:
        view = self.env.observe(agent)
        return {"observations": view["observation"], "action_mask": view["action_mask"].astype(np.float32)}

    def _observe_to_act(self) -> dict[str, dict[str, np.ndarray]]:
        agent = self.env.agent_selection
        return {agent: self._observation(agent)}


class Table(NamedTuple):
    """One session's table: who plays it and how (:func:`draw_table`)."""

    opponent: str
    """``"self"``, ``"snapshot"`` or the name of a scripted agent."""
    main: frozenset[int]
    """The seats of the learning policy."""
    snapshot: int | None
    """Which snapshot of the pool plays the other seats (opponent ``"snapshot"``)."""
    seeds: dict[int, int]
    """A seed for each other seat, in seat order."""


def draw_table(rng: np.random.Generator, opponents: dict[str, float], formats: list[str], n: int,
               snapshots: int) -> Table:
    """Draw a session's table from ``rng``: an opponent by weight (``"snapshot"`` only once the pool has
    ``snapshots``), then, unless it is ``"self"``, a format and a seat (``"alone"``: main holds that seat;
    ``"field"``: every other), a snapshot of the pool, and a seed per other seat. The stock environment and the
    batched env runner (:mod:`train.rllib_batched`) both deal their tables with it."""
    names = [k for k in opponents if k != "snapshot" or snapshots]
    weights = np.array([opponents[k] for k in names], dtype=np.float64)
    opponent = names[weighted_choice(rng, weights)]
    if opponent == "self":
        main = set(range(n))
    else:
        fmt = formats[int(rng.integers(len(formats)))]
        seat = int(rng.integers(n))
        main = {seat} if fmt == "alone" else set(range(n)) - {seat}
    snapshot = int(rng.integers(snapshots)) if opponent == "snapshot" else None
    seeds = {s: int(rng.integers(2**31 - 1)) for s in sorted(set(range(n)) - main)}
    return Table(opponent, frozenset(main), snapshot, seeds)


def weighted_choice(rng: np.random.Generator, weights: np.ndarray) -> int:
    """``rng.choice(len(weights), p=weights / weights.sum())``, the same draw from the same stream
    (:func:`agents.base.draw_index`), cheap where a batched env runner deals hundreds of tables a step."""
    return draw_index(rng, weights / weights.sum())


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _weights(opponents: Any) -> dict[str, float]:
    if isinstance(opponents, (list, tuple)):
        opponents = dict.fromkeys(opponents, 1.0)
    if not isinstance(opponents, dict) or not opponents:
        raise ConfigError(f"opponents={opponents!r} is not allowed; allowed: a dict of name -> weight, e.g. "
                          f"{DEFAULT_OPPONENTS}")
    out = {}
    for name, w in opponents.items():
        if not isinstance(w, (int, float)) or w < 0:
            raise ConfigError(f"opponent weight {name}={w!r} is not allowed; allowed: a number >= 0")
        if name not in ("self", "snapshot"):
            make_agent(name, seed=0)  # raises for an unknown agent, naming the known ones
        if w > 0:
            out[str(name)] = float(w)
    if not out or set(out) == {"snapshot"}:
        raise ConfigError(f"opponents={opponents!r} needs a positive weight on an opponent other than 'snapshot' "
                          "(the pool is empty at the start)")
    return out


class MaskedPolicyModule(TorchRLModule, ValueFunctionAPI):
    """PPO's RLModule: :class:`agents.learned.PolicyNet` on ``obs["observations"]``, masked by ``obs["action_mask"]``.

    ``model_config``: ``hidden`` (list of layer sizes, default ``[256, 256]``).
    """

    def setup(self) -> None:
        space = self.observation_space
        inner = space["observations"] if isinstance(space, gym.spaces.Dict) else space
        hidden = tuple(int(h) for h in (self.model_config or {}).get("hidden", (256, 256)))
        self.net = PolicyNet(NetSpec(int(inner.shape[0]), int(self.action_space.n), hidden))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.net.masked_logits(obs["observations"], obs["action_mask"] > 0)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.net.value(batch[Columns.OBS]["observations"])


def export_policy(module: MaskedPolicyModule, game: Any, path: Any, extra: dict[str, Any] | None = None):
    """Write ``module``'s network as a ``learned`` checkpoint for ``game`` (atomic)."""
    return save_policy(path, module.net, game, extra=extra)


def push_snapshots(env_runner: Any, spec: NetSpec, states: list[dict[str, torch.Tensor]]) -> int:
    """``foreach_env_runner`` body: hand the snapshot pool to every env (or batched table) of one env runner;
    returns how many."""
    if callable(getattr(env_runner, "set_snapshots", None)):  # train.rllib_batched.BatchedEnvRunner
        return env_runner.set_snapshots(spec, states)
    env = getattr(env_runner, "env", None)
    if env is None:
        return 0
    envs = getattr(env.unwrapped, "envs", None) or getattr(env, "envs", None) or [env]
    count = 0
    for e in envs:
        target = getattr(e, "unwrapped", e)
        if isinstance(target, MauschelnMultiAgentEnv):
            target.set_snapshots(spec, states)
            count += 1
    return count
