"""The search agent on every ruleset: determinizations agree with what the seat knows, the trick search is exact,
its play is legal, seeded and blind to hidden cards, and its work per decision is bounded."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

from agents import EnvView, MatchRunner, agent_seed, make_agent, make_deal
from agents.search.pimc import SEARCH_PHASES, Inconsistent, PIMCAgent, _relabel, _TrickSearch, role_paths
from mauscheln_env import Game, make_config
from mauscheln_env.config import RULESETS
from mauscheln_env.engine import Phase, Role
from mauscheln_env.tricks import legal_follow
from tests.hidden import perturb_hidden
from tests.test_agents import _play
from tests.test_baselines_family import VARIANTS

FAST = {"samples": 2, "min_samples": 2}


def _tables() -> list[tuple[str, int, dict]]:
    """Every ruleset at 3 players and at its most, and at 4 players with each option set of the baselines' tests
    (with Schieben left out: see ``test_pimc_stands_down_where_the_public_record_is_not_enough``)."""
    out = []
    for r in sorted(RULESETS):
        spec = RULESETS[r]
        for n in (3, spec.max_players):
            out.append((r, n, {"deck_size": 52} if r == "mousel" and n >= 6 else {}))  # noqa: PLR2004
        for o in VARIANTS[r]:
            if not o.get("schieben"):
                out.append((r, 4, o))
    out.append(("mauscheln_classic", 4, {"forced_knock_new_pot": True, "mauschelzwang": True}))
    return out


def _follows_ok(game: Game, det, real, seat: int) -> bool:
    """Every card another seat played while following would still have been legal with the hand the
    determinization gives it (its cards now plus those it played since): the voids and "could not beat" facts."""
    d = det.deal
    tricks = [*real.deal.tricks, real.deal.trick] if real.deal.trick else list(real.deal.tricks)
    later = {s: 0 for s in range(game.n)}
    for trick in reversed(tricks):
        for s, c in trick:
            later[s] |= 1 << c
    for trick in tricks:
        t = d.tables
        win = trick[0][1]
        led = t.eff_suit[win]
        for s, c in trick:
            later[s] &= ~(1 << c)
            if s != seat and c != win:
                hand = d.hands[s] | later[s] | 1 << c
                if not legal_follow(game.profile, hand, t.eff_suit_mask[led], t.trump_mask, t.beats[win]) >> c & 1:
                    return False
            if t.beats[win] >> c & 1:
                win = c
    return True


def _check_determinizations(game: Game, pimc, state, seat: int, obs, mask, info) -> int:
    """Rebuild ``seat``'s decision from its view and check two sampled deals against the real game (the
    observation but for the session-progress entry, the legal actions, the info, the invariants, the follow
    obligations); the number checked, or -1 where the agent stood down (no replay reached the decision)."""
    pimc.setup(game, seat)
    pimc.reset(seat)
    k = pimc._reader.read(obs, info, seat, mask)
    try:
        sk = pimc._skeleton(k, obs, info)
    except Inconsistent:
        return -1
    view = EnvView(pimc._sgame.config)
    skip = pimc._reader.observer.slice("progress")
    keep = np.ones(obs.size, bool)
    keep[skip] = False
    checked = 0
    for _ in range(2):
        try:
            det, weight, judged = pimc._determinize(k, sk)
        except Inconsistent:
            continue
        assert 0.0 < weight <= 1.0 and judged >= 0
        pimc._sgame.check_invariants(det)
        view.bind(det)
        obs2, mask2, info2 = view.seat_view(seat)
        np.testing.assert_array_equal(obs[keep], obs2[keep])
        np.testing.assert_array_equal(mask, mask2)
        assert info2["hand"] == info["hand"] and info2["trick"] == info["trick"]
        assert _follows_ok(game, det, state, seat)
        checked += 1
    return checked


@pytest.mark.parametrize("ruleset,players,options", _tables(), ids=lambda x: str(x))
def test_determinizations_look_like_the_real_game_to_the_seat(ruleset, players, options):
    """In every sampled deal at the current decision, the seat's observation (but for the session-progress
    entry), its legal actions and its info are those of the real game, the invariants hold, and every other
    seat's cards agree with the follow obligations of what it played."""
    game = Game(make_config(ruleset, players, **options))
    pimc = make_agent("pimc", **FAST)
    runner = MatchRunner(game)
    checked = stood_down = 0

    def probe(state, seat, obs, mask, info, action):
        nonlocal checked, stood_down
        if mask.sum() < 2:
            return
        n = _check_determinizations(game, pimc, state, seat, obs, mask, info)
        if n < 0:
            stood_down += 1
        checked += max(n, 0)

    for d in range(3):
        dealer, spec = make_deal(game, 2, d)
        lineup = [make_agent("expert") for _ in range(players)]
        lineup[d % players] = make_agent("random")
        runner.play(lineup, dealer=dealer, deal=spec, session_seed=d, on_decision=probe,
                    seed_for=lambda k, s, d=d: agent_seed(2, d, k, s))
    assert checked > 0
    assert stood_down <= (checked + stood_down) // 10, (stood_down, checked)


def test_the_classic_knocker_that_threw_a_drawn_card_is_determinized():
    """The classic dealer who knocks takes the trump card and throws one card after the exchange, maybe one it
    drew there; its later decisions are rebuilt (no stand-down) and sampled like the real game. (Before the fix,
    14 of 57 such decisions in 40 expert deals stood down: the last discard's card was not in the stand-in hand.)"""
    game = Game(make_config("mauscheln_classic", 4))
    pimc = make_agent("pimc", **FAST)
    runner = MatchRunner(game)
    cases = checked = 0

    def probe(state, seat, obs, mask, info, action):
        nonlocal cases, checked
        d = state.deal
        if mask.sum() < 2 or not (d.knocked and seat == state.session.dealer and d.drawn[seat] & d.discards[seat]):
            return
        cases += 1
        n = _check_determinizations(game, pimc, state, seat, obs, mask, info)
        assert n >= 0, f"stood down at a decision of the knocking dealer (deal {deal})"
        checked += n

    for deal in range(16):
        dealer, spec = make_deal(game, 2, deal)
        runner.play([make_agent("expert") for _ in range(4)], dealer=dealer, deal=spec, session_seed=deal,
                    on_decision=probe, seed_for=lambda k, s, d=deal: agent_seed(2, d, k, s))
    assert cases >= 5 and checked > 0, (cases, checked)


def test_pimc_stands_down_where_the_public_record_is_not_enough():
    """With Schieben the deal is offered before any card is dealt: nothing to determinize, so the agent plays
    the expert's choice and counts a fallback; the rest of the deal it searches."""
    game = Game(make_config("mauscheln_classic", 4, schieben=True))
    state = game.new_session(np.random.default_rng(3))
    assert state.phase is Phase.OFFER
    view = EnvView(game.config)
    view.bind(state)
    seat = state.to_act
    obs, mask, info = view.seat_view(seat)
    pimc, expert = make_agent("pimc", **FAST), make_agent("expert")
    for agent in (pimc, expert):
        agent.setup(game, seat)
        agent.reset(5)
    assert pimc.act(obs, mask, info) == expert.act(obs, mask, info)
    assert pimc.stats["fallbacks"] == 1 and pimc.stats["searched"] == 0
    for d in range(2):
        _play(game, [pimc, make_agent("expert"), make_agent("expert"), make_agent("random")], d)
    assert pimc.stats["searched"] > 0


def _reference_maxn(g: Game, st, memo: dict) -> list[int]:
    """The plain engine search (clone, apply) the bit-mask search must equal."""
    d = st.deal
    key = None
    if not d.trick:
        key = (tuple(d.hands), st.to_act, tuple(d.tricks_won))
        if key in memo:
            return memo[key]
    best = None
    for a in g.legal_actions(st):
        child = g.clone(st, rng=st.rng)
        results = g.apply(child, a)
        value = results[0].deltas if results else _reference_maxn(g, child, memo)
        if best is None or value[st.to_act] > best[st.to_act]:
            best = value
    if key is not None:
        memo[key] = best
    return best


@pytest.mark.parametrize("ruleset,options", [(r, {}) for r in sorted(RULESETS)]
                         + [("mauscheln", {"belli": "7D", "belli_penalty": "ace"}), ("mouche", {"pamphile": True})],
                         ids=lambda x: str(x))
def test_trick_search_equals_the_engine_search(ruleset, options):
    """The bit-mask max^n search (tables, hooks, equivalent cards, the engine's settlement) returns exactly the
    values of a plain clone-and-apply search, ties included, from positions of four tricks or fewer."""
    game = Game(make_config(ruleset, 4, **options))
    runner = MatchRunner(game)
    compared = 0

    def probe(state, seat, obs, mask, info, action):
        nonlocal compared
        if state.phase is not Phase.PLAY or len(state.deal.tricks) < game.num_tricks - 4 or compared >= 6:  # noqa: PLR2004
            return
        fast = _TrickSearch(game, game.clone(state), {}).value()
        assert fast == _reference_maxn(game, game.clone(state), {})
        compared += 1

    for d in range(30):
        if compared >= 6:  # noqa: PLR2004
            break
        dealer, spec = make_deal(game, 5, d)
        runner.play([make_agent("random") for _ in range(4)], dealer=dealer, deal=spec, session_seed=d,
                    on_decision=probe, seed_for=lambda k, s, d=d: agent_seed(5, d, k, s))
    assert compared >= 6  # noqa: PLR2004


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_trick_searches_sharing_tables_equal_fresh_ones(ruleset):
    """The options of one card-play decision share the search's tables (transpositions, settled results,
    card classes): each option's value, searched after its siblings, equals a search of its own."""
    game = Game(make_config(ruleset, 4))
    runner = MatchRunner(game)
    compared = 0

    def probe(state, seat, obs, mask, info, action):
        nonlocal compared
        if state.phase is not Phase.PLAY or len(state.deal.tricks) < game.num_tricks - 3 or compared >= 8:  # noqa: PLR2004
            return
        legal = game.legal_actions(state)
        if len(legal) < 2:  # noqa: PLR2004
            return
        tables: dict = {}
        for card in legal:
            child = game.clone(state, rng=state.rng)
            if game.apply(child, card):
                continue
            shared = _TrickSearch(game, child, {}, tables).value()
            assert shared == _TrickSearch(game, game.clone(child), {}).value()
        assert tables["memo"] and tables["leaves"]
        compared += 1

    for d in range(40):
        if compared >= 8:  # noqa: PLR2004
            break
        dealer, spec = make_deal(game, 11, d)
        runner.play([make_agent("random") for _ in range(4)], dealer=dealer, deal=spec, session_seed=d,
                    on_decision=probe, seed_for=lambda k, s, d=d: agent_seed(11, d, k, s))
    assert compared >= 8  # noqa: PLR2004


def test_role_paths_are_learnt_from_the_engine():
    paths = role_paths(Game(make_config("mauscheln", 4)))
    assert {Role.GOER, Role.OUT} <= paths[Role.DECLINED] and Role.MAUSCHLER not in paths[Role.DECLINED]
    assert paths[Role.GOER] == {Role.GOER}


@pytest.mark.parametrize("ruleset,players", [(r, n) for r in sorted(RULESETS)
                                             for n in sorted({3, 4, RULESETS[r].max_players})])
def test_pimc_plays_legally_and_searches_every_ruleset(ruleset, players):
    """Sessions finish with pimc at two seats at the smallest, the default and the largest table (the engine
    raises on an illegal action; invariants checked after every step), and the search, not the fallback,
    decides nearly every decision."""
    options = {"deck_size": 52} if ruleset == "mousel" and players >= 6 else {}  # noqa: PLR2004
    game = Game(make_config(ruleset, players, max_deals=1 if players > 4 else 2, **options))  # noqa: PLR2004
    agents = [make_agent("pimc", **FAST) for _ in range(2)]
    for d in range(2):
        lineup = [*agents, *(make_agent("expert" if s else "random") for s in range(players - 2))]
        _play(game, lineup, d, check_invariants=True)
    decisions = sum(a.stats["decisions"] for a in agents)
    fallbacks = sum(a.stats["fallbacks"] for a in agents)
    assert decisions > 0 and fallbacks <= decisions // 10, (decisions, fallbacks)


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_same_seed_same_play(ruleset):
    game = Game(make_config(ruleset, 4, max_deals=1))
    traces = []
    for _ in range(2):
        trace: list = []
        lineup = [make_agent("pimc", seed=3, **FAST), make_agent("pimc", seed=4, **FAST), make_agent("expert"),
                  make_agent("random", seed=3)]
        for d in range(2):
            _play(game, lineup, d, seed=5, on_decision=lambda st, s, o, m, i, a, trace=trace: trace.append((s, a)))
        traces.append(trace)
    assert traces[0] == traces[1] and len(traces[0]) > 10  # noqa: PLR2004


@pytest.mark.parametrize(("ruleset", "model"), [*((r, "expert") for r in sorted(RULESETS)), ("mauscheln", "mauscheln4")])
def test_decisions_ignore_hidden_cards(ruleset, model):
    """Shuffle what the acting seat cannot see: pimc, reseeded alike, decides alike (on the expert model and on
    a learned one)."""
    game = Game(make_config(ruleset, 4))
    view = EnvView(game.config)
    rng = np.random.default_rng(11)
    pimc = make_agent("pimc", model=model, **FAST)
    checked = 0

    def check(state, seat, obs, mask, info, action):
        nonlocal checked
        if mask.sum() < 2 or (state.phase is Phase.KNOCK and not state.deal.seen[seat]) or state.deal.undealt \
                or checked >= 12:  # noqa: PLR2004
            return
        twin = perturb_hidden(game, state, seat, rng)
        view.bind(twin)
        obs2, mask2, info2 = view.seat_view(seat)
        pimc.setup(game, seat)
        pimc.reset(123)
        first = pimc.act(obs2, mask2, info2)
        pimc.reset(123)
        assert pimc.act(obs, mask, info) == first, info["phase"]
        checked += 1

    for d in range(4):
        _play(game, [make_agent(("random", "expert")[(s + d) % 2]) for s in range(4)], d, on_decision=check)
    assert checked >= 6  # noqa: PLR2004


def test_pimc_work_per_decision_is_bounded_by_its_sample_budget():
    """Work done, not time (the timing lives in benchmarks/pimc_speed.py): over a few 4-player deals with every
    seat searching, each searched decision uses between 1 and ``samples`` determinizations, the default agent
    searches most multi-choice decisions, and the same seeds do the same work."""

    def play(samples: int, deals: int) -> list[dict[str, int]]:
        game = Game(make_config("mauscheln", 4))
        runner = MatchRunner(game)
        lineup = [make_agent("pimc", samples=samples) for _ in range(4)]
        for d in range(deals):
            dealer, spec = make_deal(game, 9, d)
            runner.play(lineup, dealer=dealer, deal=spec, session_seed=d,
                        seed_for=lambda k, s, d=d: agent_seed(9, d, k, s))
        return [dict(agent.stats) for agent in lineup]

    for samples, deals in ((16, 2), (3, 1)):
        stats = play(samples, deals)
        total = {key: sum(st[key] for st in stats) for key in stats[0]}
        assert total["searched"] >= 2 * deals, total
        assert total["searched"] <= total["samples"] <= samples * total["searched"], total
        assert total["searched"] + total["fallbacks"] <= total["decisions"], total
    assert stats == play(3, 1)  # the same seeds do the same work


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_the_searchs_models_draw_from_the_agents_seed(ruleset):
    """The expert models inside the search (rollouts, belief) are seeded from the agent: built from its seed and
    reseeded with every reset(seed), so any random draw of theirs repeats with the seed (they drew from the OS)."""
    game = Game(make_config(ruleset, 4))

    def draws(agent_seed, reset_seed):
        agent = make_agent("pimc", seed=agent_seed)
        agent.setup(game, 0)
        before = [m.rng.random() for m in agent._models]
        agent.reset(reset_seed)
        return before, [m.rng.random() for m in agent._models]

    assert draws(3, 7) == draws(3, 7)
    assert draws(3, 7)[1] != draws(3, 8)[1] and draws(3, 7)[0] != draws(4, 7)[0]


def test_knowledge_reads_the_trump_suit_a_turned_up_pamphile_leaves_to_the_dealer():
    """With the Pamphile (JC) turned up the dealer names the trump suit; the seat's knowledge (which the search
    and the strategies read) has the named suit, not the turned card's clubs."""
    from agents.knowledge import KnowledgeReader

    game = Game(make_config("mouche", 4, pamphile=True))
    jc = game.deck.index["JC"]
    reader = KnowledgeReader(game)
    runner = MatchRunner(game)
    other = 0

    def probe(state, seat, obs, mask, info, action):
        nonlocal other
        if state.phase is not Phase.NAME_TRUMP:
            assert reader.read(obs, info, seat, mask).trump_suit == state.deal.trump_suit
            other += state.deal.trump_suit != game.deck.suit[jc]

    for d in range(400):
        dealer, spec = make_deal(game, 1, d)
        if spec.trump == jc:
            runner.play([make_agent("expert") for _ in range(4)], dealer=dealer, deal=spec, session_seed=d,
                        on_decision=probe)
    assert other > 0


def test_a_refused_candidate_is_judged_on_every_public_decision():
    """The belief's fallback (every try refused: the likeliest candidate is taken) compares candidates by their
    likelihood over all the other seats' public decisions, not only those before the first refusal."""
    game = Game(make_config("mauscheln", 4))
    pimc = make_agent("pimc", seed=3)
    runner = MatchRunner(game)
    judged = 0

    class Never:  # the generator's draw that would keep a candidate the model disagrees with: never
        def __init__(self, rng):
            self.rng = rng

        def random(self, *size):
            return self.rng.random(*size) if size else 1.0

        def __getattr__(self, name):
            return getattr(self.rng, name)

    def likelihood(k, sk, perm) -> float:
        full = 1.0
        for snap, s, acts in sk.snaps:
            before = pimc._sgame.clone(snap, rng=np.random.default_rng(0))
            _relabel(before, perm, k.seat)
            pimc._view.bind(before)
            full *= pimc._likelihood(before, s, acts, pimc.epsilon)
        return full

    def probe(state, seat, obs, mask, info, action):
        nonlocal judged
        if mask.sum() < 2 or judged >= 12:  # noqa: PLR2004
            return
        pimc.setup(game, seat)
        k = pimc._reader.read(obs, info, seat, mask)
        sk = pimc._skeleton(k, obs, info)
        if len(sk.snaps) < 2:
            return
        pimc.rng = np.random.default_rng(judged)
        perms = [pimc._relabelling(sk) for _ in range(pimc.max_tries)]
        full = [likelihood(k, sk, perm) for perm in perms]
        if max(full) >= (1 - pimc.epsilon) ** len(sk.snaps) - 1e-12:
            return  # a candidate the model agrees with throughout would be kept
        draws = iter(perms)
        pimc._relabelling = lambda sk: next(draws)
        pimc.rng = Never(np.random.default_rng(judged))
        try:
            _, _, chosen = pimc._sample(k, sk)
        finally:
            del pimc._relabelling
        assert likelihood(k, sk, chosen) == pytest.approx(max(full))
        judged += 1

    for d in range(6):
        dealer, spec = make_deal(game, 4, d)
        runner.play([make_agent("expert") for _ in range(4)], dealer=dealer, deal=spec, session_seed=d,
                    on_decision=probe, seed_for=lambda k, s, d=d: agent_seed(4, d, k, s))
    assert judged > 0


# ---------------------------------------------------------------------- search on a learned model (issue 13, item 5)
SHIPPED_4 = [f"{r}4" for r in sorted(RULESETS)]
"""The shipped policy of every ruleset's default table."""


@pytest.mark.parametrize("policy", SHIPPED_4)
def test_pimc_on_a_learned_model_improves_on_the_policys_own_choice(policy):
    """With ``model=`` a learned policy, the search starts from that policy's choice: searching no phase of the
    table, pimc plays exactly what the policy (same checkpoint, same seed) samples at every
    decision outside the exchange marks (whose later marks come from the plan the search made); with the usual
    bar it plays legally, searches most decisions and sometimes overrules the policy."""
    ruleset = policy[:-1]
    game = Game(make_config(ruleset, 4, max_deals=1))
    idle = next(p for p in SEARCH_PHASES if p not in game.config.spec.phases)  # a search that never searches
    checked = 0
    stats: Counter = Counter()
    for d in range(4):
        frozen = make_agent("pimc", model=policy, phases=idle, **FAST)
        bold = make_agent("pimc", model=policy, samples=8, min_samples=4, switch_z=1.0)
        twin = make_agent("learned", checkpoint=policy)
        expected: list[tuple[int, int]] = []

        def mirror(state, seat, obs, mask, info, action, expected=expected, twin=twin):
            nonlocal checked
            if seat == 0 and mask.sum() > 1:
                want = twin.act(obs, mask, info)
                if state.phase not in (Phase.EXCHANGE, Phase.DECIDE):
                    assert action == want, (info["phase"], action, want)
                    checked += 1

        twin.setup(game, 0)
        twin.reset(agent_seed(0, d, 0, 0))
        _play(game, [frozen, make_agent("expert"), make_agent("random"), bold], d, on_decision=mirror)
        stats.update(bold.stats)
    assert stats["searched"] >= stats["decisions"] // 2 > 0, stats
    assert checked >= 5 and stats["switched"] >= 1, (checked, stats)  # noqa: PLR2004


@pytest.mark.parametrize("policy", SHIPPED_4)
def test_pimc_searching_only_the_card_play_keeps_the_policys_bidding(policy):
    """``phases=play`` (the search agent; docs/results/series.md): every decision before the card
    play is the policy's own (same checkpoint, same seed), and only card-play decisions are searched."""
    game = Game(make_config(policy[:-1], 4, max_deals=1))
    before_play = 0
    stats: Counter = Counter()
    for d in range(24):  # until enough of both kinds were seen (seat 0 often sits a deal out)
        if before_play >= 8 and stats["searched"] >= 4:  # noqa: PLR2004
            break
        agent = make_agent("pimc", model=policy, phases="play", samples=8, min_samples=4, switch_z=1.0)
        twin = make_agent("learned", checkpoint=policy)
        plays = [0]  # seat 0's card-play decisions with a choice

        def mirror(state, seat, obs, mask, info, action, twin=twin, plays=plays):
            nonlocal before_play
            if seat != 0 or mask.sum() <= 1:
                return
            want = twin.act(obs, mask, info)
            if state.phase is Phase.PLAY:
                plays[0] += 1
            else:
                assert action == want, (info["phase"], action, want)
                before_play += 1

        twin.setup(game, 0)
        twin.reset(agent_seed(0, d, 0, 0))
        _play(game, [agent, make_agent("expert"), make_agent("random"), make_agent("expert")], d,
              on_decision=mirror)
        assert agent.stats["searched"] + agent.stats["fallbacks"] <= plays[0], (agent.stats, plays)
        stats.update(agent.stats)
    assert before_play >= 8 and stats["searched"] >= 4, (before_play, stats)  # noqa: PLR2004


def test_pimc_on_a_learned_model_is_seeded():
    """Same seed, same play (its blindness to hidden cards is checked with the expert model's, above)."""
    game = Game(make_config("mauscheln", 4, max_deals=1))
    traces = []
    for _ in range(2):
        trace: list = []
        lineup = [make_agent("pimc", seed=3, model="learned", **FAST), make_agent("learned", seed=1),
                  make_agent("expert"), make_agent("pimc", seed=4, model="mauscheln4", **FAST)]
        _play(game, lineup, 1, seed=5, on_decision=lambda st, s, o, m, i, a, trace=trace: trace.append((s, a)))
        traces.append(trace)
    assert traces[0] == traces[1] and len(traces[0]) > 10  # noqa: PLR2004


def test_pimc_refuses_a_model_it_cannot_play():
    """A missing checkpoint is refused when the agent is built, a policy of another game when it is set up; both
    as ValueError subclasses that say what is allowed."""
    from agents.base import AgentError
    from agents.learned import CheckpointError

    with pytest.raises(CheckpointError, match="no_such_policy"):
        make_agent("pimc", model="no_such_policy")
    with pytest.raises(AgentError, match="allowed: 'expert', 'learned'"):
        make_agent("pimc", model="")
    agent = make_agent("pimc", model="mousel4")
    with pytest.raises(CheckpointError, match="trained for"):
        agent.setup(Game(make_config("mauscheln", 4)), 0)


def test_verdict_pairs_options_only_where_the_models_choice_was_played_out():
    """A determinization where the engine refused the model's own choice (-inf) says nothing about how much better
    another option is: the comparison leaves it out (it gave an infinite difference, a NaN spread and a silent keep)."""
    agent = make_agent("pimc", seed=0, samples=8, min_samples=2, switch_z=1.5, confidence=1.0)
    better = [[0.0, 2.0], [1.0, 3.0], [0.5, 2.5], [-1.0, 1.0]]  # option 1 leads by 2 in every determinization
    refused = [[-np.inf, 1.0], *better]
    with np.errstate(all="raise"):  # no invalid-value arithmetic on the way
        assert agent._verdict(better, [1.0] * 4, base=0, final=True) == 1
        assert agent._verdict(refused, [1.0] * 5, base=0, final=True) == 1
        # refused everywhere so far: keep sampling, and at the end keep the model's choice
        assert agent._verdict([[-np.inf, 1.0]] * 3, [1.0] * 3, base=0, final=False) is None
        assert agent._verdict([[-np.inf, 1.0]] * 3, [1.0] * 3, base=0, final=True) == 0
        # an option the engine refused in one determinization is still never switched to
        assert agent._verdict([[0.0, -np.inf], *better], [1.0] * 5, base=0, final=True) == 0


def _replayed_games(monkeypatch, game: Game, lineup: Callable[[], list], memo_size: int,
                    between: Callable[[list], None] = lambda lineup: None) -> tuple[list, list[dict], list[int]]:
    """Deals 0, 1 and 0 again at one table by the same agents (the ``pimc`` ones at the even seats keeping
    ``memo_size`` decisions; ``between`` runs before the second and third game): every action, the searchers'
    stats and the searches each game ran."""
    searched: list[int] = []
    decide = PIMCAgent._decide
    monkeypatch.setattr(PIMCAgent, "_decide", lambda self, *a: searched.append(1) or decide(self, *a))
    agents = lineup()
    for agent in agents[::2]:
        agent.memo_size = memo_size
    runner = MatchRunner(game)  # one table for the three games (a new Game is a new table to the search)
    actions, work = [], []
    for d in (0, 1, 0):
        if work:
            between(agents)
        before = len(searched)
        dealer, spec = make_deal(game, 5, d)
        runner.play(agents, dealer=dealer, deal=spec, session_seed=d,
                    seed_for=lambda k, s, d=d: agent_seed(5, d, k, s),
                    on_decision=lambda st, s, o, m, i, a: actions.append((s, a)))
        work.append(len(searched) - before)
    monkeypatch.setattr(PIMCAgent, "_decide", decide)
    return actions, [dict(a.stats) for a in agents[::2]], work


def test_a_decision_that_comes_again_is_replayed_with_what_it_left_behind(monkeypatch):
    """The same seeds and the same views give the same decisions: a game played again by the same agents is
    decided from the kept decisions (no search runs) after another game in between, with the same actions and
    the same work counted as by agents that keep none and search every decision."""
    game = Game(make_config("mauscheln", 4, max_deals=1))

    def lineup() -> list:
        return [make_agent("pimc", seed=3, **FAST), make_agent("expert"), make_agent("pimc", seed=4, **FAST),
                make_agent("random")]

    kept, kept_stats, kept_work = _replayed_games(monkeypatch, game, lineup, PIMCAgent.memo_size)
    plain, plain_stats, plain_work = _replayed_games(monkeypatch, game, lineup, 0)
    assert kept == plain and kept_stats == plain_stats
    assert kept_work[0] > 0 and kept_work[2] == 0 and plain_work[2] == plain_work[0]


def test_a_plan_left_from_another_search_is_checked_not_keyed():
    """A decision is replayed whatever exchange plans the search's inner experts carry, as long as none of them
    steers the first decision that expert makes in the search (one in the exchange, with the planned hand); a
    plan that steered it must come again for the replay."""
    plan = (0b1011, [1, 3], 0)
    exchange, play = (True, 0b1011), (False, 0)
    unsteered, steered = (exchange, None), (exchange, plan)
    assert PIMCAgent._replayable((unsteered, (play, None), (None, None)), [None, plan, plan])
    assert PIMCAgent._replayable((unsteered,), [(0b1111, [1], 0)])  # planned for another hand: not followed
    assert not PIMCAgent._replayable((unsteered,), [plan])  # the plan would steer it now
    assert PIMCAgent._replayable((steered,), [(0b1011, [1, 3], 0)])
    assert not PIMCAgent._replayable((steered,), [None])
    assert not PIMCAgent._replayable((steered,), [(0b1011, [3], 0)])


def test_plans_left_behind_do_not_stop_a_replay_or_change_a_game(monkeypatch):
    """At a table whose experts plan their exchanges (Muschka): a game played again after another is decided
    from the kept decisions although each inner expert now carries a plan that fits no hand, with the same
    actions and the same work counted as by agents that keep no decision."""
    game = Game(make_config("muschka", 4, max_deals=1))

    def lineup() -> list:
        return [make_agent("pimc", seed=3, **FAST), make_agent("expert"), make_agent("pimc", seed=4, **FAST),
                make_agent("expert")]

    def plan_for_no_hand(agents: list) -> None:  # no decision follows a plan for a hand of no cards
        for agent in agents[::2]:
            for model in agent._models:
                model._brain._plan = (0, [], 0)

    kept, kept_stats, kept_work = _replayed_games(monkeypatch, game, lineup, PIMCAgent.memo_size, plan_for_no_hand)
    plain, plain_stats, plain_work = _replayed_games(monkeypatch, game, lineup, 0, plan_for_no_hand)
    assert kept == plain and kept_stats == plain_stats
    assert kept_work[0] > 0 and kept_work[2] == 0 and plain_work[2] == plain_work[0]
