"""The batched RLlib env runner (train.rllib_batched) against a replay in the reference engine.

:class:`~train.rllib_batched.BatchedTables` plays its tables with a seeded
random policy while recording every engine step (``record_chance=True``); the
test replays each session in the reference engine (the permutations the
batched engine drew, the same dealers, the same actions) and derives from it,
with a plain loop, what each seat of the learning policy must receive: the
observation and legal actions at each of its decisions, and as the decision's
reward everything the seat received until its next decision (before its first
decision: added to the first; until the session's end: added to the last). The
chunks that ``collect`` cut, over several calls, must hold exactly those
decisions, each once, in order, and each seat's rewards of a finished session
must sum to its chip (or point) change.
"""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("ray.rllib")

from mauscheln_env import Game, Observer  # noqa: E402
from mauscheln_env.engine import Phase  # noqa: E402
from tests.lockstep import ScriptedRng, one_torch_thread  # noqa: E402,F401
from train.rllib_batched import BatchedTables  # noqa: E402
from train.rllib_env import MauschelnMultiAgentEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def random_policy(seed: int):
    gen = torch.Generator().manual_seed(seed)

    def policy(obs: torch.Tensor, mask: torch.Tensor):
        logits = torch.where(mask, 0.0, torch.finfo(torch.float32).min)
        actions = torch.multinomial(mask.to(torch.float32), 1, generator=gen)[:, 0]
        logp = torch.log_softmax(logits, 1).gather(1, actions[:, None])[:, 0]
        return actions, logp, logits

    return policy


def play(config: dict, tables: int, steps: int, collect_every: int, seed: int = 3,
         snapshots: bool = False) -> tuple[BatchedTables, list]:
    bt = BatchedTables(config, tables, seed=seed, stream=1, record_chance=True)
    if snapshots:
        from agents.learned import NetSpec, PolicyNet

        spec = NetSpec(bt.engine.obs_size, bt.engine.num_actions, (8,))
        torch.manual_seed(0)
        bt.set_snapshots(spec, [PolicyNet(spec).state_dict()])
    policy = random_policy(seed)
    chunks = []
    for t in range(steps):
        bt.step(policy)
        if t % collect_every == collect_every - 1:
            chunks += bt.collect()
    chunks += bt.collect()
    return bt, chunks


def replay(bt: BatchedTables) -> tuple[dict, dict, dict]:
    """From the trace, in the reference engine: per (session, seat) the learning policy's decisions as
    ``(obs, legal, action, reward or None)``, the final observation of sessions that ended, and the change of
    each seat's chips (points in muschka) over each finished session."""
    game = Game(bt.game.config)
    observer = Observer(game)
    n, B = game.n, bt.num_tables
    trace = list(bt.trace)
    first = trace.pop(0)
    assert first.get("reset")
    rngs = [ScriptedRng() for _ in range(B)]
    states, session = [], list(range(B))
    for b in range(B):
        rngs[b].orders.extend(first["chance"][b])
        states.append(game.new_session(rngs[b], dealer=int(first["dealer"][b])))
    next_session = B
    decisions: dict = defaultdict(list)
    pending: dict = defaultdict(float)  # (session, seat) -> received since its last decision
    finals, changes = {}, {}
    start = {b: _money(states[b], game, start=True) for b in range(B)}
    for step in trace:
        for b, st in enumerate(states):
            seat = int(step["to_act"][b])
            assert st.to_act == seat
            key = (session[b], seat)
            if int(step["code"][b]) == 0:  # a decision of the learning policy
                if decisions[key]:
                    decisions[key][-1][3] = pending.pop(key, 0.0)
                decisions[key].append([observer.encode(st, seat), game.legal_actions(st), int(step["actions"][b]),
                                       None])
            rngs[b].orders.extend(step["chance"][b])
            deltas = np.zeros(n)
            for result in game.apply(st, int(step["actions"][b])):
                deltas += result.deltas
            assert np.array_equal(step["rewards"][b].numpy(), deltas.astype(np.float32))
            for s in range(n):
                pending[(session[b], s)] += float(deltas[s])
            if st.phase is Phase.OVER:
                assert b in step["ended"].tolist()
                assert bool(step["truncated"][b]) == st.session.truncated
                money = _money(st, game)
                for s in range(n):
                    key = (session[b], s)
                    if decisions[key]:
                        decisions[key][-1][3] = pending[key]
                        finals[key] = (observer.encode(st, s), st.session.truncated)
                        changes[key] = money[s] - start[b][s]
                    pending.pop(key, None)
                states[b] = game.new_session(rngs[b], dealer=int(step["dealer"][b]))
                start[b] = _money(states[b], game, start=True)
                session[b], next_session = next_session, next_session + 1
    return decisions, finals, changes


def _money(st, game: Game, start: bool = False) -> list[int]:
    """A seat's money: its chips, or minus its points in muschka (points count down: a reward is points shed);
    at the start of the session (``start``), before the first deal's ante."""
    if st.session.scores:
        return [-x for x in (st.session.start_scores if start else st.session.scores)]
    return [game.options["bankroll"]] * game.n if start else list(st.session.chips)


CASES = [
    ("mauscheln", 4, {"self": 1, "random": 1, "expert": 1}, ["alone", "field"], False),
    ("mauscheln", 3, {"random": 1, "beginner": 1}, ["alone"], False),
    ("mouche", 5, {"expert": 1, "self": 1}, ["field"], False),
    ("muschka", 4, {"random": 1, "snapshot": 2}, ["alone", "field"], True),
    ("mousel", 4, {"self": 1}, ["alone", "field"], False),
]


@pytest.mark.parametrize("ruleset,players,opponents,formats,snapshots", CASES,
                         ids=[f"{c[0]}-{c[1]}-{'+'.join(c[3])}" for c in CASES])
def test_batched_runner_chunks_match_a_replay_in_the_reference_engine(ruleset, players, opponents, formats,
                                                                      snapshots):
    config = {"ruleset": ruleset, "num_players": players, "rules": {"max_deals": 2}, "opponents": opponents,
              "formats": formats, "seed": 0}
    bt, chunks = play(config, tables=6, steps=160, collect_every=7, snapshots=snapshots)
    decisions, finals, changes = replay(bt)
    got: dict = defaultdict(list)
    for c in chunks:  # chunks of a seat's session arrive in order and continue where the last one stopped
        key = (c.session, c.seat)
        assert c.start == len(got[key])
        L = len(c.actions)
        assert L >= 1 and c.obs.shape[0] == c.masks.shape[0] == L + 1 and len(c.rewards) == L
        for i in range(L):
            got[key].append((c.obs[i], c.masks[i], int(c.actions[i]), float(c.rewards[i])))
        if c.terminated or c.truncated:
            obs, truncated = finals[key]
            assert np.array_equal(c.obs[L], obs) and not c.masks[L].any() and c.truncated == truncated
        else:  # cut: it ends on the observation of the seat's next decision, the first of the next chunk
            nxt = decisions[key][c.start + L]
            assert np.array_equal(c.obs[L], nxt[0]) and np.flatnonzero(c.masks[L]).tolist() == nxt[1]
    known = {k: [d for d in v if d[3] is not None] for k, v in decisions.items()}
    assert {k for k, v in known.items() if v} == set(got)  # every seat that decided, no other
    seen = 0
    for key, mine in got.items():
        ref = known[key]
        assert len(mine) == len(ref), key  # every decision whose reward is known, each exactly once
        for (obs, mask, action, reward), (r_obs, r_legal, r_action, r_reward) in zip(mine, ref):
            assert np.array_equal(obs, r_obs)
            assert np.flatnonzero(mask).tolist() == r_legal and mask.dtype == np.float32
            assert action == r_action and reward == r_reward
        if key in changes:  # the session ended: the seat's rewards add up to its chip change
            assert sum(d[3] for d in mine) == changes[key]
            seen += 1
    assert seen >= 6 and sum(1 for k in finals if finals[k][1] is False) >= 1
    main_seats = {len({s for (session, s) in got if session == x}) for x in {k[0] for k in got}}
    assert max(main_seats) >= (players - 1 if "field" in formats else 1)


def test_batched_runner_deals_the_stock_envs_tables():
    """Table b of env runner w draws the opponents, formats and seats that the stock env number b draws."""
    config = {"ruleset": "mauscheln", "num_players": 4, "rules": {"max_deals": 1}, "seed": 0,
              "opponents": {"self": 1, "random": 1, "expert": 1}}
    bt = BatchedTables(config, 3, seed=11, stream=2, record_chance=True)
    policy = random_policy(0)
    for _ in range(120):
        bt.step(policy)
    dealt = defaultdict(list)
    for rows, codes in bt.dealt:
        for b, row in zip(rows, codes):
            dealt[b].append(tuple(row))
    from ray.rllib.env.env_context import EnvContext

    for b in range(3):
        env = MauschelnMultiAgentEnv(EnvContext(config, worker_index=2))
        want = []
        for k in range(len(dealt[b])):
            env.reset(seed=11 + b if k == 0 else None)
            code = bt.code_of.get(env.opponent, 0)
            want.append(tuple(0 if f"player_{s}" in env.main else code for s in range(4)))
        assert dealt[b] == want and len(want) >= 3


def test_batched_runner_refuses_opponents_without_a_batched_form():
    config = {"ruleset": "mauscheln", "num_players": 4, "opponents": {"self": 1, "pimc": 1}}
    with pytest.raises(ValueError, match="pimc.*stock"):
        BatchedTables(config, 2, seed=0)


def _runner(seed: int, tables: int = 16):
    from train.rllib_batched import BatchedEnvRunner
    from train.rllib_ppo import build_config, parse_args

    args = parse_args(["--num-envs-per-env-runner", str(tables), "--train-batch", "256", "--seed", str(seed),
                       "--num-players", "3"])
    return BatchedEnvRunner(config=build_config(args))


def test_batched_env_runner_hands_rllib_seat_episodes_and_is_deterministic():
    from ray.rllib.core.columns import Columns

    def sample(seed):
        runner = _runner(seed)
        out = []
        for _ in range(2):
            for e in runner.sample():
                out.append((e.id_, e.agent_id, e.module_id, e.multi_agent_episode_id, e.is_terminated,
                            e.get_observations(slice(0, len(e) + 1))["observations"].copy(),
                            e.get_observations(slice(0, len(e) + 1))["action_mask"].copy(), e.get_actions().copy(),
                            e.get_rewards().copy(), e.get_extra_model_outputs(Columns.ACTION_LOGP).copy()))
        return out, runner.get_metrics()

    a, metrics = sample(5)
    b, _ = sample(5)
    c, _ = sample(6)
    assert len(a) == len(b) and all(
        x[:5] == y[:5] and all(np.array_equal(p, q) for p, q in zip(x[5:], y[5:])) for x, y in zip(a, b))
    assert [x[5].shape for x in a] != [x[5].shape for x in c] or any(
        not np.array_equal(x[5], y[5]) for x, y in zip(a, c))
    assert {x[2] for x in a} == {"main"} and {x[1] for x in a} <= {"player_0", "player_1", "player_2"}
    assert len({(x[3], x[1]) for x in a}) == len(a)  # one episode per seat, session and sample call
    assert any(x[4] for x in a) and any(not x[4] for x in a)
    assert metrics["num_env_steps_sampled"].peek() >= 512 and metrics["sample_seconds"].peek() > 0


def test_the_episode_buffer_is_rllibs_buffer_in_every_attribute():
    """The runner's cheaper buffer holds, measures, slices and states as RLlib's own, for each column it builds
    (a dict of arrays, arrays, a list) and with a space."""
    import gymnasium as gym
    from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer

    from train.rllib_batched import EpisodeBuffer

    rng = np.random.default_rng(0)
    for n in (1, 2, 7):
        for data, space in (({"action_mask": rng.random((n, 5)), "observations": rng.random((n, 9))}, None),
                            (rng.integers(0, 5, n), None), (rng.random(n).astype(np.float32), None),
                            ([{} for _ in range(n)], None),
                            (rng.random(n).astype(np.float32), gym.spaces.Box(-1.0, 1.0, (), np.float32)),
                            (rng.random((n, 3)), gym.spaces.Tuple([gym.spaces.Discrete(2)] * 3))):
            ours, theirs = EpisodeBuffer(data, space=space), InfiniteLookbackBuffer(data, space=space)
            assert ours == theirs and len(ours) == len(theirs) == n
            assert ours.space_struct == theirs.space_struct and ours.finalized == theirs.finalized
            assert str(ours.get(slice(0, n - 1))) == str(theirs.get(slice(0, n - 1)))
            assert str(ours.get_state()) == str(theirs.get_state())


def test_batched_env_runners_episodes_go_through_ppos_learner_connectors():
    """The learner's own pipeline (GAE included) turns the seat episodes into a batch for module "main"."""
    from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner

    runner = _runner(0)
    spec = runner.config.get_multi_rl_module_spec(spaces=runner.get_spaces())
    learner = PPOTorchLearner(config=runner.config, module_spec=spec)
    learner.build()
    episodes = runner.sample()
    steps = sum(len(e) for e in episodes)
    batch = learner._learner_connector(rl_module=learner.module, batch={}, episodes=episodes, shared_data={},
                                       metrics=None)
    main = batch["main"]
    assert set(main) >= {"obs", "actions", "rewards", "advantages", "value_targets", "action_logp", "loss_mask"}
    assert int(main["loss_mask"].sum()) == steps  # one bootstrap row per episode, masked out of the loss


@pytest.mark.parametrize("runner", ["batched", pytest.param("stock", marks=pytest.mark.slow)])
def test_rllib_ppo_two_iterations_end_with_the_throughput_line(tmp_path, runner):
    """A Ray start each (about 40 s here): the stock env runner trains in CI in tests/test_integrations.py."""
    proc = subprocess.run([sys.executable, "-m", "train.rllib_ppo", "--env-runner", runner, "--iterations", "2",
                           "--train-batch", "256", "--minibatch", "128", "--epochs", "1", "--num-cpus", "1",
                           "--num-players", "3", "--num-envs-per-env-runner", "16" if runner == "batched" else "2",
                           "--snapshot-every", "1", "--eval-deals", "0", "--runs-root", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("env steps/s per env runner: ") and float(last.rsplit(" ", 1)[1]) > 0
    assert "snapshot pool of 1 handed to" in proc.stdout and len(list(tmp_path.glob("*/policy.safetensors"))) == 1


def test_weighted_choice_draws_what_numpys_choice_draws():
    from train.rllib_env import weighted_choice

    for weights in ([1, 1, 0.5, 1], [0.3], [1e-3, 5, 2]):
        w = np.array(weights, dtype=np.float64)
        for seed in range(300):
            a, b = np.random.default_rng(seed), np.random.default_rng(seed)
            for _ in range(5):
                assert weighted_choice(b, w) == int(a.choice(len(w), p=w / w.sum()))
                assert a.integers(7) == b.integers(7)  # and the streams stay together


def test_rllib_ppo_refuses_an_opponent_without_a_batched_form_in_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "train.rllib_ppo", "--opponents", "pimc=1", "--runs-root",
                           str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--env-runner stock" in proc.stderr
