"""The batched engine against the reference engine and observer, step by step.

The differential tests deal the same cards to both engines and give them the
same actions; at every step masks, observations (of the seat to act, of a
random other seat, and the omniscient state), rewards, deal kinds, session
ends (terminated/truncated), final observations and chips must agree exactly.
The first deal of every batch comes from the reference side (as ``DealSpec``
or deck orders through ``reset``); every later deal is the batched engine's,
replayed into the reference through a scripted ``rng``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest
import torch

from mauscheln_env import DealSpec, Game, Observer, make_config
from mauscheln_env.batched import SUPPORTED, BatchedMauscheln, check_supported
from mauscheln_env.config import RULESETS, RuleConfig
from mauscheln_env.engine import Phase
from mauscheln_env.errors import ConfigError, DealError, IllegalActionError, MauschelnError
from mauscheln_env.rulesets.mauscheln import SPEC as MAUSCHELN
from mauscheln_env.tricks import TrickProfile
from mauscheln_env.vecenv import SubprocVectorEnv, make_vector_env, shard_seeds
from mauscheln_env.vector import (
    DEAL_KINDS,
    DEAL_NONE,
    ReferenceVectorEnv,
    VectorEnv,
    sample_legal,
)
from tests.scenario import hands_from_deck


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Small batches gain nothing from intra-op threads, and on a busy CI machine a parallel op waits for a
    descheduled worker: these tests run 4x faster on one thread. Restored afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class ScriptedRng:
    """Stands in for ``State.rng``: hands the reference the deck orders the batched engine dealt."""

    def __init__(self) -> None:
        self.orders: list[list[int]] = []

    def permutation(self, k: int) -> np.ndarray:
        order = self.orders.pop(0)
        assert len(order) == k
        return np.asarray(order)

    def integers(self, *args, **kwargs):  # pragma: no cover - the harness always names the dealer
        raise AssertionError("the lockstep harness gives every session's dealer explicitly")


def assert_same_obs(observer: Observer, expected: np.ndarray, got: np.ndarray, where: str) -> None:
    if not np.array_equal(expected, got):
        ev, gv = observer.views(expected), observer.views(got)
        bad = {k: (ev[k].tolist(), gv[k].tolist()) for k in ev if not np.array_equal(ev[k], gv[k])}
        pytest.fail(f"{where}: pieces {sorted(bad)} differ (reference, batched): {bad}")


def action_weights(game: Game, **named: float) -> torch.Tensor:
    """Sampling weights over the action ids: 1 for cards, ``named`` for the named actions."""
    w = torch.ones(game.num_actions)
    for name, weight in named.items():
        w[game.action_ids[name]] = weight
    return w


def run_lockstep(config, num_envs: int, steps: int, *, seed: int, weights: dict | None = None,
                 deal_input: str = "spec", start_chips: bool = False, copy: bool = False,
                 compile: bool = False) -> Counter:
    """Step both engines in lockstep; return what happened (for coverage asserts).

    ``copy=False`` (the trainer's mode) checks the observations written incrementally into the engine's
    own buffer; ``copy=True`` the fresh tensors of the default mode.
    """
    game = Game(config)
    observer, state_observer = Observer(game), Observer(game, omniscient=True)
    n, N = game.n, game.num_cards
    env = BatchedMauscheln(config, num_envs, seed=seed, final_observations=True, copy=copy, compile=compile)
    np_rng = np.random.default_rng(seed)
    dealers = np_rng.integers(n, size=num_envs)
    specs = [game.deal_from_deck(np_rng.permutation(N).tolist(), int(d)) for d in dealers]
    options: dict = {"dealer": torch.as_tensor(dealers)}
    chips = pot = None
    if start_chips:
        chips = np_rng.integers(1, config.bankroll + 1, size=(num_envs, n))
        pot = np_rng.integers(0, 3 * config.stake, size=num_envs)
        options.update(chips=torch.as_tensor(chips), pot=torch.as_tensor(pot))
    if deal_input == "spec":
        options["deals"] = specs
    else:  # deck orders, as game.deal_from_deck deals them
        from mauscheln_env.vector import deal_spec_to_order

        options["deals"] = torch.as_tensor(np.stack([deal_spec_to_order(game, s, int(d))
                                                     for s, d in zip(specs, dealers)]))
    out = env.reset(options=options)
    rngs = [ScriptedRng() for _ in range(num_envs)]
    states = [
        game.new_session(rngs[b], dealer=int(dealers[b]), deal=specs[b],
                         chips=None if chips is None else chips[b].tolist(), pot=0 if pot is None else int(pot[b]))
        for b in range(num_envs)
    ]
    gen = torch.Generator().manual_seed(seed)
    w = action_weights(game, **(weights or {}))
    stats: Counter = Counter()

    def compare(obs, mask, to_act, where):
        obs_np, mask_np, to_act_np = obs.numpy(), mask.numpy(), to_act.numpy()
        full = env.state().numpy()
        others = torch.randint(n, (num_envs,), generator=gen)
        other_obs = env.observe(others).numpy()
        for b, st in enumerate(states):
            assert int(to_act_np[b]) == st.to_act, f"{where} session {b}: to_act"
            legal = game.legal_actions(st)
            assert np.flatnonzero(mask_np[b]).tolist() == legal, f"{where} session {b}: mask ({Phase(st.phase).name})"
            assert_same_obs(observer, observer.encode(st, st.to_act), obs_np[b], f"{where} session {b} obs")
            assert_same_obs(state_observer, state_observer.encode(st), full[b], f"{where} session {b} state")
            seat = int(others[b])
            assert_same_obs(observer, observer.encode(st, seat), other_obs[b], f"{where} session {b} seat {seat}")
            stats[f"phase_{Phase(st.phase).name.lower()}"] += 1
            if st.phase is Phase.EXCHANGE and st.deal.knocked and st.to_act == st.session.dealer:
                stats["knocker_exchanges"] += 1

    compare(out.obs, out.mask, out.to_act, "reset")
    for t in range(steps):
        probs = out.mask.to(torch.float32) * w
        actions = torch.multinomial(probs, 1, generator=gen)[:, 0]
        res = env.step(actions)
        new_deal = res.info["new_deal"].numpy()
        final_index = res.info["final_index"].tolist()
        for b, st in enumerate(states):
            if new_deal[b]:
                rngs[b].orders.append(env.deck_order[b].tolist())
            results = game.apply(st, int(actions[b]))
            expected = np.zeros(n, dtype=np.float32)
            for r in results:
                expected += r.deltas
                stats[r.kind] += 1
            where = f"step {t} session {b}"
            assert np.array_equal(res.rewards[b].numpy(), expected), f"{where}: rewards"
            kind = DEAL_KINDS[results[-1].kind] if results else DEAL_NONE
            assert int(res.info["deal_kind"][b]) == kind, f"{where}: deal kind"
            assert bool(new_deal[b]) == bool(results), f"{where}: new deal"
            assert res.info["final_chips"][b].tolist() == st.session.chips, f"{where}: final chips"
            if st.phase is Phase.OVER:
                stats["truncated" if st.session.truncated else "terminated"] += 1
                stats["eliminations"] += n - sum(st.session.alive)
                assert bool(res.truncated[b]) == st.session.truncated and bool(res.terminated[b]) != st.session.truncated, where
                j = final_index.index(b)
                for s in range(n):
                    assert_same_obs(observer, observer.encode(st, s), res.info["final_obs"][j, s].numpy(),
                                    f"{where} final obs of seat {s}")
                states[b] = game.new_session(rngs[b], dealer=int(env.dealer[b]))
            else:
                assert not res.terminated[b] and not res.truncated[b] and b not in final_index, where
            assert not rngs[b].orders, f"{where}: the engines disagree on when a deal starts"
        compare(res.obs, res.mask, res.to_act, f"step {t}")
        out = res
    return stats


VARIANTS = {
    # name: (options, sampling weights, reset input, chips/pot at reset, fresh output tensors)
    "default": ({}, {"pass": 1.5, "done": 1.5}, "spec", False, False),
    "knock_sessions": ({"knock": True, "max_deals": 3}, {"pass": 1.5, "done": 1.2}, "orders", False, True),
    "elimination": ({"knock": True, "bankroll": 6, "stake": 8, "max_deals": None}, {"done": 1.5}, "spec", True,
                    False),
    "throw_ins": ({"max_deals": 4, "bankroll": 13, "max_throw_ins": 2}, {"mauscheln": 0.15, "pass": 1.5},
                  "orders", True, False),
}


def check_variant(num_players: int, variant: str, compile: bool = False) -> None:
    options, weights, deal_input, start_chips, copy = VARIANTS[variant]
    if options.get("knock"):
        options = {**options, "knock_min_rank": "T" if num_players <= 5 else "8"}
    config = make_config("mauscheln", num_players, **options)
    # Past torch's recompile limit a compiled function would run eagerly without a word: make that fail here.
    with torch._dynamo.config.patch(fail_on_recompile_limit_hit=True):
        stats = run_lockstep(config, num_envs=128, steps=150, seed=1000 * num_players + len(variant),
                             weights=weights, deal_input=deal_input, start_chips=start_chips, copy=copy,
                             compile=compile)
    deals = stats["settled"] + stats["no_play"] + stats["throw_in"]
    assert deals >= 300 and stats["terminated"] + stats["truncated"] >= 40, stats  # thousands over the grid
    assert stats["settled"] and stats["no_play"] and stats["throw_in"], stats
    if options.get("knock"):
        assert stats["phase_knock"] and stats["knocker_exchanges"], stats
    if variant == "elimination":
        assert stats["eliminations"], stats
    if variant == "throw_ins":
        assert stats["truncated"], stats


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("num_players", [3, 4, 5, 6, 7])
def test_batched_engine_matches_reference_step_by_step(num_players, variant):
    check_variant(num_players, variant)


@pytest.mark.parametrize(("num_players", "variant"), [(3, "elimination"), (4, "default"), (5, "knock_sessions"),
                                                      (6, "throw_ins"), (7, "knock_sessions")])
def test_compiled_engine_matches_reference_step_by_step(num_players, variant):
    """``compile=True`` (the step and observation kernels through torch.compile) is exact as well."""
    check_variant(num_players, variant, compile=True)


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [3, 5, 7])
def test_batched_engine_matches_reference_long_sessions(num_players):
    config = make_config("mauscheln", num_players, knock=True, knock_min_rank="J", max_deals=None, bankroll=24)
    stats = run_lockstep(config, num_envs=256, steps=600, seed=7 + num_players, weights={"done": 1.3})
    assert stats["terminated"] and stats["eliminations"], stats


# ---------------------------------------------------------------------- known values


def test_worked_example_w3_on_the_batched_engine():
    """RULES.md W3: Ben mauschelt, Carla and Dan go, spades trump; legal sets and chip deltas."""
    deck = "KH 7H 9S 7D AS AH AC 8D 8S KS 9C AD 9D 7C TD 8C JD KC QC JC TC QS JS TS 7S QH JH TH 9H 8H KD QD"
    anna, ben, carla, dan = 0, 1, 2, 3
    config = make_config("mauscheln", 4, max_deals=2)
    env = BatchedMauscheln(config, 2, seed=0)
    game = env.game
    order = torch.tensor([[game.deck.parse(c) for c in deck.split()]] * 2)
    hands, trump, stock = hands_from_deck(deck.split(), 4, dealer=anna)
    spec = DealSpec(tuple(tuple(game.deck.parse(c) for c in hands[s]) for s in range(4)), game.deck.parse(trump),
                    tuple(game.deck.parse(c) for c in stock))
    out = env.reset(options={"dealer": anna, "deals": [spec, spec]})
    assert torch.equal(env.deck_order[0], env.deck_order[1])  # a DealSpec maps back to one deck order
    out = env.reset(options={"dealer": anna, "deals": order})

    def legal(row: int = 0) -> set[str]:
        return {game.action_to_str(a) for a in out.mask[row].nonzero()[:, 0].tolist()}

    def act(seat: int, action: str, expect: set[str] | None = None):
        nonlocal out
        assert out.to_act.tolist() == [seat, seat]
        if expect is not None:
            assert legal() == expect
        a = game.action_from_str(action)
        out = env.step(torch.tensor([a, a]))
        return out

    assert env.pot.tolist() == [4, 4]
    act(ben, "mauscheln", {"mauscheln", "pass"})
    act(carla, "go", {"go", "pass"})
    act(dan, "go", {"go", "pass"})
    act(anna, "pass", {"go", "pass"})
    for seat in (ben, carla, dan):
        act(seat, "done")
    act(ben, "KH", {"KH", "AS", "KS", "7C"})
    act(carla, "AH", {"AH"})
    act(dan, "9S", {"9S"})
    act(dan, "AC", {"AC", "AD", "8C"})
    act(ben, "7C", {"7C"})
    act(carla, "9C", {"9C"})
    act(dan, "AD", {"AD", "8C"})
    act(ben, "KS", {"AS", "KS"})
    act(carla, "TD", {"TD"})
    act(ben, "AS", {"AS"})
    act(carla, "7H", {"7H"})
    res = act(dan, "8C", {"8C"})
    assert res.rewards[0].tolist() == [-4.0, 2.0, -4.0, 2.0]
    assert res.info["deal_kind"].tolist() == [DEAL_KINDS["settled"]] * 2
    assert not res.terminated.any() and not res.truncated.any()
    # Ben deals next and antes 4 on top of Carla's bete: the pot is 8.
    assert env.dealer.tolist() == [ben, ben] and env.pot.tolist() == [8, 8]
    assert env.chips[0].tolist() == [36, 38, 36, 42]


# ---------------------------------------------------------------------- configuration


@pytest.mark.parametrize("ruleset", sorted(set(RULESETS) - set(SUPPORTED)))
def test_unsupported_ruleset_is_refused_naming_the_supported_ones(ruleset):
    config = make_config(ruleset, 4)
    with pytest.raises(ConfigError, match="supported: mauscheln") as err:
        BatchedMauscheln(config, 8)
    assert isinstance(err.value, ValueError) and ruleset in str(err.value)


def _config_with(option: str, value, spec_changes: dict | None = None) -> RuleConfig:
    """A mauscheln config with one option set, added to the spec when the spec lacks it."""
    base = make_config("mauscheln", 4)
    spec, opts = base.spec, base.options
    if option not in spec.options:
        meta = {"allowed": "anything", "doc": "an option the batched engine lacks", "check": None}
        extended = dataclasses.make_dataclass("Extended", [(option, object, dataclasses.field(default=None, metadata=meta))],
                                              bases=(type(opts),), frozen=True)
        spec = dataclasses.replace(spec, options_class=extended)
        opts = extended(**opts.to_dict(), **{option: value})
    else:
        opts = dataclasses.replace(opts, **{option: value})
    if spec_changes:
        spec = dataclasses.replace(spec, **spec_changes)
    return RuleConfig(spec, 4, base.deck, opts)


@pytest.mark.parametrize("option, value", [("vierling", True), ("belli", "7D"), ("weli", True), ("hypothetical", 1)])
def test_unsupported_option_is_refused(option, value):
    if option in MAUSCHELN.options:
        config = make_config("mauscheln", 4, **{option: value})
    else:
        config = _config_with(option, value)
    with pytest.raises(ConfigError, match=f"option {option}=") as err:
        BatchedMauscheln(config, 8)
    assert "supported: mauscheln (options:" in str(err.value)


def test_changed_rules_spec_is_refused():
    config = _config_with("max_deals", 1, spec_changes={"trick_profile": TrickProfile.R})
    with pytest.raises(ConfigError, match="trick_profile"):
        check_supported(config)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_bad_batch_size_is_refused(bad):
    with pytest.raises(ConfigError, match="batch_size"):
        BatchedMauscheln(make_config("mauscheln", 4), bad)


def test_bad_config_and_device_are_refused():
    with pytest.raises(ConfigError, match="RuleConfig"):
        BatchedMauscheln({"ruleset": "mauscheln"}, 4)
    with pytest.raises(ConfigError, match="device"):
        BatchedMauscheln(make_config("mauscheln", 4), 4, device="no_such_device")
    with pytest.raises(ConfigError, match="backend"):
        make_vector_env(make_config("mauscheln", 4), 4, backend="nope")
    for flag in ("copy", "validate", "compile", "final_observations"):
        with pytest.raises(ConfigError, match=f"{flag}='yes' is not allowed; allowed: True or False"):
            BatchedMauscheln(make_config("mauscheln", 4), 4, **{flag: "yes"})


@pytest.mark.filterwarnings("ignore:dynamo_pgo force disabled")
def test_compile_failure_is_a_config_error():
    import torch._inductor.config

    env = BatchedMauscheln(make_config("mauscheln", 3), 37, seed=0, compile=True)  # a shape no other test compiles
    with torch._inductor.config.patch({"cpp.cxx": ("/nonexistent/c++",), "force_disable_caches": True}):
        with pytest.raises(ConfigError, match="torch.compile failed.*allowed: compile=False"):
            env.reset(seed=0)


def test_bad_reset_options_are_refused():
    env = BatchedMauscheln(make_config("mauscheln", 3), 4, seed=0)
    with pytest.raises(MauschelnError, match="unknown reset option"):
        env.reset(options={"dealr": 0})
    with pytest.raises(MauschelnError, match="chips"):
        env.reset(options={"chips": [0, 5, 5]})
    with pytest.raises(MauschelnError, match="dealer"):
        env.reset(options={"dealer": 3})
    with pytest.raises(DealError, match="permutation"):
        env.reset(deals=torch.zeros(4, 32, dtype=torch.int64))
    with pytest.raises(DealError, match="shape"):
        env.reset(deals=torch.arange(32).repeat(3, 1))
    short = DealSpec(((0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11)), 12, tuple(range(13, 30)))
    with pytest.raises(DealError, match="holds 30 cards"):
        env.reset(options={"dealer": 0, "deals": [short] * 4})
    twice = DealSpec(((0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 0)), 12, tuple(range(13, 32)))
    with pytest.raises(DealError, match="not permutations"):
        env.reset(options={"dealer": 0, "deals": [twice] * 4})


# ---------------------------------------------------------------------- API, determinism, devices


def _trajectory(env: VectorEnv, steps: int, seed: int) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    out = env.reset(seed=seed)
    seen = [out.obs.clone(), out.mask.clone(), out.to_act.clone()]
    for _ in range(steps):
        res = env.step(sample_legal(out.mask, gen))
        seen += [res.obs.clone(), res.mask.clone(), res.to_act.clone(), res.rewards.clone(), res.terminated.clone(),
                 res.truncated.clone()]
        out = res
    return seen


@pytest.mark.parametrize("backend", ["batched", "reference"])
def test_same_seed_same_trajectory(backend):
    config = make_config("mauscheln", 5, knock=True, max_deals=2)
    a = _trajectory(make_vector_env(config, 16, backend=backend, seed=3), 60, seed=11)
    b = _trajectory(make_vector_env(config, 16, backend=backend, seed=99), 60, seed=11)  # reset(seed) decides
    c = _trajectory(make_vector_env(config, 16, backend=backend, seed=3), 60, seed=12)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not all(torch.equal(x, y) for x, y in zip(a, c))


def test_reset_seed_replays_on_the_same_engine():
    env = BatchedMauscheln(make_config("mauscheln", 4), 32, seed=5)
    first = _trajectory(env, 40, seed=8)
    again = _trajectory(env, 40, seed=8)
    assert all(torch.equal(x, y) for x, y in zip(first, again))


@pytest.mark.parametrize("backend", ["batched", "reference"])
def test_vector_env_api(backend):
    config = make_config("mauscheln", 6, knock=True)
    env = make_vector_env(config, 8, backend=backend, seed=0, final_observations=True)
    assert isinstance(env, VectorEnv)
    B, n, D, A = env.num_envs, env.num_players, env.obs_size, env.num_actions
    assert (B, n, D, A) == (8, 6, Observer(Game(config)).size, config.num_actions)
    out = env.reset(seed=1)
    assert out.obs.shape == (B, D) and out.obs.dtype == torch.float32
    assert out.mask.shape == (B, A) and out.mask.dtype == torch.bool and out.mask.any(1).all()
    assert out.to_act.shape == (B,) and out.to_act.dtype == torch.int64
    assert env.state().shape == (B, env.state_size)
    gen = torch.Generator().manual_seed(0)
    ended = 0
    for _ in range(80):
        res = env.step(sample_legal(out.mask, gen))
        assert res.rewards.shape == (B, n) and res.rewards.dtype == torch.float32
        assert res.terminated.dtype == torch.bool and res.truncated.dtype == torch.bool
        assert not (res.terminated & res.truncated).any()
        assert res.info["deal_kind"].shape == (B,) and res.info["new_deal"].dtype == torch.bool
        assert res.info["final_chips"].shape == (B, n)
        idx = res.info["final_index"]
        assert torch.equal(idx, (res.terminated | res.truncated).nonzero()[:, 0])
        assert res.info["final_obs"].shape == (idx.shape[0], n, D)
        assert torch.equal(res.obs, env.observe(res.to_act))
        ended += idx.shape[0]
        out = res
    assert ended > 0
    first_illegal = out.mask.to(torch.int64).argmin(1)  # no seat ever has every action legal
    for bad in (first_illegal, torch.full((B,), A), torch.zeros(B + 1, dtype=torch.int64)):
        with pytest.raises(IllegalActionError):
            env.step(bad)
    assert torch.equal(env.observe(out.to_act), out.obs)  # an illegal action changes nothing


def test_reference_vector_env_agrees_with_batched_on_given_first_deals():
    """Both vector envs, the same first deals, chips, pot and dealers, the same actions, until deals end."""
    config = make_config("mauscheln", 4, knock=True, knock_min_rank="9", max_deals=1)
    B, N = 64, config.num_cards
    gen = torch.Generator().manual_seed(4)
    orders = torch.stack([torch.randperm(N, generator=gen) for _ in range(B)])
    options = {"deals": orders, "dealer": torch.randint(4, (B,), generator=gen),
               "chips": torch.randint(1, 60, (B, 4), generator=gen), "pot": 8}
    ref, bat = ReferenceVectorEnv(config, B, seed=0), BatchedMauscheln(config, B, seed=0)
    r, b = ref.reset(options=options), bat.reset(options=options)
    live = torch.ones(B, dtype=torch.bool)
    assert torch.equal(r.obs, b.obs) and torch.equal(r.mask, b.mask) and torch.equal(ref.state(), bat.state())
    for _ in range(200):
        actions = sample_legal(b.mask, gen)
        # Sessions whose first deal ended play on different deals: each side gets its own legal actions there.
        r, b = ref.step(torch.where(live, actions, sample_legal(r.mask, gen))), bat.step(actions)
        for x, y in ((r.rewards, b.rewards), (r.terminated, b.terminated), (r.info["deal_kind"], b.info["deal_kind"]),
                     (r.info["final_chips"], b.info["final_chips"])):
            assert torch.equal(x[live], y[live])
        live &= ~b.info["new_deal"]  # after a deal ends each side deals from its own random stream
        assert torch.equal(r.obs[live], b.obs[live]) and torch.equal(r.mask[live], b.mask[live])
        if not live.any():
            break
    assert not live.any()


def test_device_agnostic_code_path_on_cpu():
    config = make_config("mauscheln", 7, knock=True, max_deals=2)
    a = _trajectory(BatchedMauscheln(config, 8, device=torch.device("cpu"), seed=0), 30, seed=2)
    b = _trajectory(BatchedMauscheln(config, 8, device="cpu", seed=0, copy=False), 30, seed=2)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert all(x.device.type == "cpu" for x in a)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("compile", [False, True])
def test_cuda_matches_cpu_on_the_same_deals(compile):
    config = make_config("mauscheln", 5, knock=True, max_deals=3)
    B = 512
    gen = torch.Generator().manual_seed(0)
    options = {"deals": torch.stack([torch.randperm(32, generator=gen) for _ in range(B)]),
               "dealer": torch.randint(5, (B,), generator=gen)}
    cpu = BatchedMauscheln(config, B, seed=0)
    gpu = BatchedMauscheln(config, B, device="cuda", seed=0, compile=compile)
    c, g = cpu.reset(options=options), gpu.reset(options=options)
    live = torch.ones(B, dtype=torch.bool)
    for _ in range(40):
        assert torch.equal(c.obs[live], g.obs.cpu()[live]) and torch.equal(c.mask[live], g.mask.cpu()[live])
        actions = sample_legal(c.mask, gen)
        c, g = cpu.step(actions), gpu.step(actions.cuda())
        assert torch.equal(c.rewards[live], g.rewards.cpu()[live])
        live &= ~c.info["new_deal"]  # new deals come from each device's own generator


@pytest.mark.parametrize("compile", [False, True])
def test_subproc_vector_env_is_its_shards_side_by_side(compile):
    config = make_config("mauscheln", 5, knock=True, max_deals=2)
    with SubprocVectorEnv(config, 10, workers=2, seed=3, final_observations=True, compile=compile) as env:
        assert env.num_envs == 10 and env.obs_size == Observer(Game(config)).size
        left, right = (BatchedMauscheln(config, 5, seed=0, final_observations=True) for _ in range(2))
        s0, s1 = shard_seeds(7, 2)
        out, a, b = env.reset(seed=7), left.reset(seed=s0), right.reset(seed=s1)
        gen = torch.Generator().manual_seed(0)
        for _ in range(120):
            assert torch.equal(out.obs, torch.cat([a.obs, b.obs])) and torch.equal(out.mask, torch.cat([a.mask, b.mask]))
            assert torch.equal(out.to_act, torch.cat([a.to_act, b.to_act]))
            actions = sample_legal(out.mask, gen)
            out, a, b = env.step(actions), left.step(actions[:5]), right.step(actions[5:])
            assert torch.equal(out.rewards, torch.cat([a.rewards, b.rewards]))
            assert torch.equal(out.terminated, torch.cat([a.terminated, b.terminated]))
            assert torch.equal(out.truncated, torch.cat([a.truncated, b.truncated]))
            assert torch.equal(out.info["final_chips"], torch.cat([a.info["final_chips"], b.info["final_chips"]]))
            assert torch.equal(out.info["final_index"], torch.cat([a.info["final_index"], b.info["final_index"] + 5]))
            assert torch.equal(out.info["final_obs"], torch.cat([a.info["final_obs"], b.info["final_obs"]]))
        assert torch.equal(env.state(), torch.cat([left.state(), right.state()]))
        assert torch.equal(env.observe(2), torch.cat([left.observe(2), right.observe(2)]))
        with pytest.raises(IllegalActionError):
            env.step(out.mask.to(torch.int64).argmin(1))
        assert torch.equal(env.observe(out.to_act), out.obs)  # the illegal action reached no worker
