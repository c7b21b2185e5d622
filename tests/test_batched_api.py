"""The batched engine's interface: known values, refusals, determinism, devices and worker processes.

The exactness of the engine against the reference, step by step, is
``tests/test_batched.py``; here every ruleset goes through the API paths a
trainer uses (``make_vector_env``, buffers, seeds, :class:`SubprocVectorEnv`,
other devices).
"""

from __future__ import annotations

import dataclasses
import math
import random
import re

import pytest
import torch

from mauscheln_env import DealSpec, Game, Observer, make_config
from mauscheln_env.batched import BatchedMauscheln, check_supported
from mauscheln_env.batched.cards import legal_follow
from mauscheln_env.config import RULESETS, RuleConfig
from mauscheln_env.engine import Stage, TrickHook
from mauscheln_env.errors import ConfigError, DealError, IllegalActionError, MauschelnError
from mauscheln_env.observation import Numbers, Piece
from mauscheln_env.tricks import TrickProfile
from mauscheln_env.tricks import legal_follow as reference_follow
from mauscheln_env.vecenv import SubprocVectorEnv, make_vector_env, shard_seeds
from mauscheln_env.vector import DEAL_KINDS, ReferenceVectorEnv, VectorEnv, sample_legal
from tests.lockstep import one_torch_thread  # noqa: F401 - the fixture
from tests.scenario import hands_from_deck

TABLES = {"mauscheln": 5, "mauscheln_classic": 4, "mousel": 4, "mouche": 4, "muschka": 4}
"""One table per ruleset for the API tests."""


def table(ruleset: str, **options) -> RuleConfig:
    return make_config(ruleset, TABLES[ruleset], max_deals=2, **options)


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


class UnknownStage(Stage):
    """A stage the batched engine has no kernel for."""


class UnknownHook(TrickHook):
    """A trick hook the batched engine has no kernel for."""


def _with_rules(ruleset: str, change) -> RuleConfig:
    """A config of ``ruleset`` whose rule objects are changed by ``change(rules)``."""
    base = make_config(ruleset, 4)
    build = base.spec.rules

    def rules(game):
        return change(build(game))

    return RuleConfig(dataclasses.replace(base.spec, rules=rules), 4, base.deck, base.options)


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_every_ruleset_is_supported(ruleset):
    spec = RULESETS[ruleset]
    for n in (spec.min_players, spec.max_players):
        check_supported(make_config(ruleset, n))


@pytest.mark.parametrize(("what", "change"), [
    ("stage UnknownStage", lambda r: dataclasses.replace(r, stages=(*r.stages[:-1], UnknownStage(), r.stages[-1]))),
    ("trick hook UnknownHook", lambda r: dataclasses.replace(r, trick_hooks=(*r.trick_hooks, UnknownHook()))),
    ("scoring rule ScoringRule", lambda r: dataclasses.replace(r, scoring=type(r.scoring).__mro__[-2]())),
])
def test_a_rule_object_without_a_kernel_is_refused_naming_the_supported_ones(what, change):
    config = _with_rules("mauscheln", change)
    with pytest.raises(ConfigError, match=f"no kernel for the {what}; supported rule objects: .*ModernKnock") as err:
        BatchedMauscheln(config, 8)
    assert isinstance(err.value, ValueError)


def test_an_end_hook_or_piece_without_a_kernel_is_refused():
    config = _with_rules("muschka", lambda r: dataclasses.replace(r, end_hooks=(*r.end_hooks, lambda g, st: False)))
    with pytest.raises(ConfigError, match="end hook .*supported: RoundsOver, someone_at_zero"):
        check_supported(config)
    extra = Piece("novelty", (1,), "a piece the batched engine cannot read", "(0,)", Numbers((1.0,)))
    config = _with_rules("mouche", lambda r: dataclasses.replace(r, pieces=(*r.pieces, extra)))
    with pytest.raises(ConfigError, match="observation piece 'novelty'; supported pieces: phase"):
        check_supported(config)


@pytest.mark.parametrize("profile", list(TrickProfile))
def test_tensor_legal_follow_is_the_reference_for_every_profile(profile):
    """The fused formula against :func:`mauscheln_env.tricks.legal_follow` on random 52-card situations."""
    rng = random.Random(int(profile.value.encode()[0]) if isinstance(profile.value, str) else 0)
    rows = []
    for _ in range(4000):
        hand = rng.getrandbits(52) & rng.getrandbits(52) & rng.getrandbits(52)
        led = (0x1FFF << (13 * rng.randrange(4))) | (rng.getrandbits(52) & rng.getrandbits(52) & rng.getrandbits(52)
                                                    if rng.random() < 0.2 else 0)
        trumps = (0x1FFF << (13 * rng.randrange(4))) | (1 << rng.randrange(52) if rng.random() < 0.5 else 0)
        beats = rng.getrandbits(52) & rng.getrandbits(52)
        rows.append((hand, led, trumps, beats))
    t = torch.tensor(rows, dtype=torch.int64)
    got = legal_follow(profile, t[:, 0], t[:, 1], t[:, 2], t[:, 3]).tolist()
    assert got == [reference_follow(profile, *r) for r in rows]


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


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
@pytest.mark.parametrize("backend", ["batched", "reference"])
def test_same_seed_same_trajectory(backend, ruleset):
    config = table(ruleset)
    a = _trajectory(make_vector_env(config, 12, backend=backend, seed=3), 50, seed=11)
    b = _trajectory(make_vector_env(config, 12, backend=backend, seed=99), 50, seed=11)  # reset(seed) decides
    c = _trajectory(make_vector_env(config, 12, backend=backend, seed=3), 50, seed=12)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not all(torch.equal(x, y) for x, y in zip(a, c))


def test_reset_seed_replays_on_the_same_engine():
    env = BatchedMauscheln(make_config("mouche", 4, queue=True, max_deals=None), 32, seed=5)
    first = _trajectory(env, 40, seed=8)
    again = _trajectory(env, 40, seed=8)
    assert all(torch.equal(x, y) for x, y in zip(first, again))


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
@pytest.mark.parametrize("backend", ["batched", "reference"])
def test_vector_env_api(backend, ruleset):
    config = make_config(ruleset, RULESETS[ruleset].max_players, max_deals=1)
    env = make_vector_env(config, 8, backend=backend, seed=0, final_observations=True)
    assert isinstance(env, VectorEnv)
    B, n, D, A = env.num_envs, env.num_players, env.obs_size, env.num_actions
    assert (B, n, D, A) == (8, config.num_players, Observer(Game(config)).size, config.num_actions)
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


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_reference_vector_env_agrees_with_batched_on_given_first_deals(ruleset):
    """Both vector envs, the same first deals, chips, pot and dealers, the same actions, until deals end."""
    config = make_config(ruleset, TABLES[ruleset], max_deals=1)
    n, B, N = config.num_players, 48, config.num_cards
    gen = torch.Generator().manual_seed(4)
    orders = torch.stack([torch.randperm(N, generator=gen) for _ in range(B)])
    options = {"deals": orders, "dealer": torch.randint(n, (B,), generator=gen)}
    if ruleset != "muschka":
        options.update(chips=torch.randint(1, 60, (B, n), generator=gen), pot=8)
    ref, bat = ReferenceVectorEnv(config, B, seed=0), BatchedMauscheln(config, B, seed=0, record_chance=True)
    r, b = ref.reset(options=options), bat.reset(options=options)
    live = torch.ones(B, dtype=torch.bool)
    assert torch.equal(r.obs, b.obs) and torch.equal(r.mask, b.mask) and torch.equal(ref.state(), bat.state())
    for _ in range(300):
        actions = sample_legal(b.mask, gen)
        # Sessions whose first deal ended play on different deals: each side gets its own legal actions there.
        r, b = ref.step(torch.where(live, actions, sample_legal(r.mask, gen))), bat.step(actions)
        for x, y in ((r.rewards, b.rewards), (r.terminated, b.terminated), (r.info["deal_kind"], b.info["deal_kind"]),
                     (r.info["final_chips"], b.info["final_chips"])):
            assert torch.equal(x[live], y[live])
        # After a deal ends (or a reshuffle draws) each side deals from its own random stream.
        live &= ~b.info["new_deal"] & ~torch.tensor([bool(x) for x in bat.chance_log])
        assert torch.equal(r.obs[live], b.obs[live]) and torch.equal(r.mask[live], b.mask[live])
        if not live.any():
            break
    assert not live.any()


def test_sample_legal_draws_the_rth_legal_action_uniformly():
    """``sample_legal`` returns, per row, legal action number floor(u * #legal) of the row's uniform draw u; with
    A = 255 (the widest mask it takes) and rows of one legal action, the first and the last."""
    gen = torch.Generator().manual_seed(5)
    mask = torch.rand(4000, 255, generator=gen) < torch.rand(4000, 1, generator=gen)
    mask[torch.arange(4000), torch.randint(255, (4000,), generator=gen)] = True
    mask[0] = False
    mask[0, 0] = True
    mask[1] = False
    mask[1, 254] = True
    got = sample_legal(mask, torch.Generator().manual_seed(9))
    u = torch.rand(4000, generator=torch.Generator().manual_seed(9))
    for b in range(4000):
        legal = mask[b].nonzero()[:, 0]
        assert int(got[b]) == int(legal[int(u[b] * legal.shape[0])])
    assert got.dtype == torch.int64 and int(got[0]) == 0 and int(got[1]) == 254
    counts = torch.bincount(sample_legal(torch.ones(60000, 5, dtype=torch.bool), gen), minlength=5)
    assert int(counts.min()) > 11400 and int(counts.max()) < 12600  # 12000 each; 6.1 standard deviations
    for bad in (torch.ones(3, 256, dtype=torch.bool), torch.ones(3, 4), torch.ones(4, dtype=torch.bool)):
        with pytest.raises(MauschelnError, match="mask must be bool"):
            sample_legal(bad)


def test_device_agnostic_code_path_on_cpu():
    config = make_config("mouche", 6, pamphile=True, max_deals=2)
    a = _trajectory(BatchedMauscheln(config, 8, device=torch.device("cpu"), seed=0), 30, seed=2)
    b = _trajectory(BatchedMauscheln(config, 8, device="cpu", seed=0, copy=False), 30, seed=2)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert all(x.device.type == "cpu" for x in a)


def test_compiled_engine_into_its_own_buffers_is_the_eager_engine_across_new_buffers():
    """Compiled with ``copy=False`` the engine clears only the one-hot cells its last step set: its observations
    stay the eager engine's step after step, also after ``use_buffers`` hands it buffers full of other values
    (cleared whole once)."""
    torch._dynamo.reset()
    config = make_config("mouche", 4, max_deals=2)
    B = 16
    eager = BatchedMauscheln(config, B, seed=3)
    fast = BatchedMauscheln(config, B, seed=3, copy=False, compile=True)
    e, f = eager.reset(), fast.reset()
    gen = torch.Generator().manual_seed(0)
    ended = 0
    for t in range(60):
        assert torch.equal(e.obs, f.obs) and torch.equal(e.mask, f.mask), f"step {t}"
        if t == 30:
            fast.use_buffers(torch.full((B, fast.obs_size), 7.0), torch.ones(B, fast.num_actions, dtype=torch.bool))
        actions = sample_legal(e.mask, gen)
        e, f = eager.step(actions), fast.step(actions)
        ended += int(e.info["new_deal"].sum())
    assert torch.equal(e.obs, f.obs) and ended >= B  # deals ended and began again on both sides of the switch


def test_compiled_engine_writes_into_rows_of_a_larger_block_in_place():
    """Given rows further into a larger block (a storage offset, as the workers of ``SubprocVectorEnv`` get
    them), a compiled engine sets and clears its one-hot cells in place: no graph of its step allocates a buffer
    the size of the observations (an offset buffer scattered into through a view made inside the graph was
    copied whole, and back, on every call), nothing outside its rows changes, and it stays the eager engine."""
    from torch._inductor.utils import run_and_get_code

    config = make_config("mouche", 4, max_deals=2)
    B = 16
    eager = BatchedMauscheln(config, B, seed=3)
    fast = BatchedMauscheln(config, B, seed=3, copy=False, compile=True)
    D, A = fast.obs_size, fast.num_actions
    obs_block, mask_block = torch.full((3 * B, D), 7.0), torch.zeros(3 * B, A, dtype=torch.bool)
    fast.use_buffers(obs_block[B:2 * B], mask_block[B:2 * B])
    gen = torch.Generator().manual_seed(0)

    def first_steps():  # compiles all four graphs: the observation and the set cells at reset, the rest at step 1
        e, f = eager.reset(), fast.reset()
        assert torch.equal(e.obs, f.obs) and torch.equal(e.mask, f.mask)
        actions = sample_legal(e.mask, gen)
        return eager.step(actions), fast.step(actions)

    with torch._inductor.config.patch(fx_graph_cache=False), torch._functorch.config.patch(enable_autograd_cache=False):
        (e, f), codes = run_and_get_code(first_steps)  # fresh code: a cached graph may have come from other inputs
    assert len(codes) >= 4
    allocated = [math.prod(int(x) for x in shape.split(",") if x.strip())
                 for code in codes for shape in re.findall(r"empty_strided_cpu\(\(([0-9, ]*)\)", code)]
    assert allocated and max(allocated) < B * D
    ended = 0
    for t in range(40):
        assert torch.equal(e.obs, f.obs) and torch.equal(e.mask, f.mask), f"step {t}"
        actions = sample_legal(e.mask, gen)
        e, f = eager.step(actions), fast.step(actions)
        ended += int(e.info["new_deal"].sum())
    assert ended >= B
    assert bool((obs_block[:B] == 7.0).all()) and bool((obs_block[2 * B:] == 7.0).all())
    assert not bool(mask_block[:B].any()) and not bool(mask_block[2 * B:].any())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("compile", [False, True])
@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_cuda_matches_cpu_on_the_same_deals(ruleset, compile):
    """The same first deals and actions on the CPU and on CUDA: the same masks, observations, rewards and state
    until each session's first deal ends (later deals come from each device's own generator)."""
    config = make_config(ruleset, TABLES[ruleset], max_deals=3)
    B, n, N = 512, config.num_players, config.num_cards
    gen = torch.Generator().manual_seed(0)
    options = {"deals": torch.stack([torch.randperm(N, generator=gen) for _ in range(B)]),
               "dealer": torch.randint(n, (B,), generator=gen)}
    cpu = BatchedMauscheln(config, B, seed=0, record_chance=True)
    gpu = BatchedMauscheln(config, B, device="cuda", seed=0, compile=compile, record_chance=True)
    c, g = cpu.reset(options=options), gpu.reset(options=options)
    live = torch.ones(B, dtype=torch.bool)
    for _ in range(60):
        assert torch.equal(c.obs[live], g.obs.cpu()[live]) and torch.equal(c.mask[live], g.mask.cpu()[live])
        assert torch.equal(cpu.state()[live], gpu.state().cpu()[live])
        actions = sample_legal(c.mask, gen)
        c, g = cpu.step(actions), gpu.step(actions.cuda())
        assert torch.equal(c.rewards[live], g.rewards.cpu()[live])
        drew = torch.tensor([bool(x) for x in cpu.chance_log])  # a new deal or a reshuffle: each device's own
        live &= ~c.info["new_deal"] & ~drew
    assert not live.all()


@pytest.mark.parametrize("compile", [False, True])
@pytest.mark.parametrize("ruleset", ["mauscheln", "mouche"])
def test_subproc_vector_env_is_its_shards_side_by_side(ruleset, compile):
    config = table(ruleset, queue=True) if ruleset == "mouche" else table(ruleset, knock=True)
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


def test_subproc_vector_env_names_a_dead_worker_and_stops_the_rest():
    """A worker killed from outside (out of memory, a signal) is reported by number, sessions and exit code
    rather than as a bare EOFError, and the other workers are stopped with it."""
    env = SubprocVectorEnv(table("mauscheln"), 6, workers=2, seed=3)
    out = env.reset(seed=3)
    victim, other = env._procs
    victim.kill()
    victim.join(timeout=30)
    with pytest.raises(RuntimeError, match=r"worker 0 \(sessions 0\.\.2, pid \d+, exit code -9\) stopped during 'step'"):
        env.step(sample_legal(out.mask, torch.Generator().manual_seed(0)))
    assert not other.is_alive()
    with pytest.raises(MauschelnError, match="the workers are stopped"):
        env.state()


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_observe_rows_and_state_rows_are_the_whole_batchs_rows(ruleset):
    """``observe_rows(rows, seats)`` is ``observe(seat)[row]`` for every (row, seat) asked for, repeats included,
    and ``state_rows(rows)`` is ``state()[rows]``; bad rows and seats are refused."""
    env = BatchedMauscheln(table(ruleset), 12, seed=4)
    out = env.reset(seed=4)
    gen = torch.Generator().manual_seed(4)
    for _ in range(20):
        out = env.step(sample_legal(out.mask, gen))
    n = env.num_players
    rows = torch.tensor([0, 5, 5, 11, 3, 0])
    seats = torch.tensor([0, 1, n - 1, 2, 0, n - 1])
    whole = torch.stack([env.observe(s) for s in range(n)])  # [seat, row, D]
    assert torch.equal(env.observe_rows(rows, seats), whole[seats, rows])
    assert torch.equal(env.state_rows(rows), env.state()[rows])
    with pytest.raises(MauschelnError, match="rows must lie in 0..11"):
        env.observe_rows(torch.tensor([12]), torch.tensor([0]))
    with pytest.raises(MauschelnError, match="seats must lie"):
        env.observe_rows(torch.tensor([1]), torch.tensor([n]))
    with pytest.raises(MauschelnError, match="one shape"):
        env.observe_rows(torch.tensor([1, 2]), torch.tensor([0]))
    with pytest.raises(MauschelnError, match="1-d integer tensor"):
        env.state_rows(torch.tensor([0.5]))
