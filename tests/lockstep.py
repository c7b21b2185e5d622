"""The lockstep harness: the batched engine against the reference engine and observer, step by step.

Both engines get the same first deals (given at reset) and the same actions.
Every later random draw is the batched engine's: it lists the permutations it
drew (``record_chance=True``: deck orders, Vierling redeals, reshuffles), and
the reference draws them through a stand-in ``rng`` (:class:`ScriptedRng`,
the engine's chance hook). At every step masks, observations of the acting
seat and of a random other seat, ``state()``, rewards, deal kinds, session ends
(terminated/truncated), final observations and chips must agree exactly.
:func:`run_lockstep` returns counts of what happened, for coverage floors.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
import torch

from mauscheln_env import DealSpec, Game, Observer
from mauscheln_env.batched import BatchedMauscheln
from mauscheln_env.engine import DealKind, Phase
from mauscheln_env.vector import DEAL_KINDS, DEAL_NONE, deal_spec_to_order


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Small batches gain nothing from intra-op threads, and on a busy CI machine a parallel op waits for a
    descheduled worker (import it into a test module to use it). Restored afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class LockstepError(AssertionError):
    """The engines disagree."""


class ScriptedRng:
    """Stands in for ``State.rng``: hands the reference the permutations the batched engine drew."""

    def __init__(self) -> None:
        self.orders: list[list[int]] = []

    def permutation(self, k: int) -> np.ndarray:
        if not self.orders:
            raise LockstepError(f"the reference draws a permutation of {k} that the batched engine did not draw")
        order = self.orders.pop(0)
        if len(order) != k:
            raise LockstepError(f"the reference draws a permutation of {k}, the batched engine drew one of "
                                f"{len(order)}")
        return np.asarray(order)

    def integers(self, *args: Any, **kwargs: Any) -> int:  # pragma: no cover - the harness names every dealer
        raise LockstepError("the lockstep harness gives every session's dealer explicitly")


def first_difference(observer: Observer, expected: np.ndarray, got: np.ndarray) -> str | None:
    if np.array_equal(expected, got):
        return None
    ev, gv = observer.views(expected), observer.views(got)
    bad = {k: (ev[k].tolist(), gv[k].tolist()) for k in ev if not np.array_equal(ev[k], gv[k])}
    return f"pieces {sorted(bad)} differ (reference, batched): {bad}"


def rigged_deal(game: Game, rng: np.random.Generator, dealer: int, kind: str) -> DealSpec:
    """A deal that exercises a rare rule: ``quartet`` (a seat holds four of a rank), ``quartets`` (the stock
    keeps dealing quartets until it runs short: the Vierling void), ``jack_of_clubs_up`` (the Pamphile turned
    up), ``flush`` (a seat holds five cards of one suit: a mouche)."""
    deck = game.deck
    N, H, n = game.num_cards, game.hand_size, game.n
    order = game.deal_from_deck(rng.permutation(N).tolist(), dealer)
    hands = [list(h) for h in order.hands]
    rest = [c for c in range(N)]
    seats = game.live_from([True] * n, (dealer + game.direction) % n)
    if kind in ("quartet", "quartets"):
        by_rank: dict[int, list[int]] = {}
        for c in range(N):
            by_rank.setdefault(deck.rank[c], []).append(c)
        quads = [cards for cards in by_rank.values() if len(cards) == 4]
        rng.shuffle(quads)
        seat = seats[int(rng.integers(n))]
        hands = [[] for _ in range(n)]
        hands[seat] = quads[0]
        fits = (N - n * H - 1) // 4  # replacement quartets until the stock runs short: the deal is void (D19)
        stock_top = [c for q in quads[1:1 + fits] for c in q] if kind == "quartets" else []
        used = set(hands[seat]) | set(stock_top)
        rest = [c for c in rng.permutation(N).tolist() if c not in used]
        for s in range(n):
            if s != seat:
                hands[s], rest = rest[:H], rest[H:]
        trump, rest = rest[0], rest[1:]
        return DealSpec(tuple(tuple(h) for h in hands), trump, tuple(stock_top + rest))
    if kind == "jack_of_clubs_up":
        jc = deck.index["JC"]
        cards = [c for c in rng.permutation(N).tolist() if c != jc]
        hands = [tuple(cards[s * H:(s + 1) * H]) for s in range(n)]
        return DealSpec(tuple(hands), jc, tuple(cards[n * H:]))
    if kind == "flush":
        suit = int(rng.integers(4))
        in_suit = [c for c in rng.permutation(N).tolist() if deck.suit[c] == suit][:H]
        seat = seats[int(rng.integers(n))]
        cards = [c for c in rng.permutation(N).tolist() if c not in in_suit]
        hands = []
        for s in range(n):
            if s == seat:
                hands.append(tuple(in_suit))
            else:
                hands.append(tuple(cards[:H]))
                cards = cards[H:]
        return DealSpec(tuple(hands), cards[0], tuple(cards[1:]))
    raise ValueError(kind)


def run_lockstep(config: Any, num_envs: int, steps: int, *, seed: int, weights: dict[str, float] | None = None,
                 deal_input: str = "spec", start_chips: bool = False, copy: bool = False, compile: bool = False,
                 rigged: tuple[str, ...] = ()) -> Counter:
    """Step both engines in lockstep (see the module docstring); return what happened."""
    game = Game(config)
    observer, state_observer = Observer(game), Observer(game, omniscient=True)
    n, N = game.n, game.num_cards
    if compile:  # torch.compile counts recompiles per function over every engine in the process: start afresh
        torch._dynamo.reset()
    env = BatchedMauscheln(config, num_envs, seed=seed, final_observations=True, copy=copy, compile=compile,
                           record_chance=True)
    stats: Counter = Counter()
    on_rows = env._on_rows

    def counted(idx: torch.Tensor, fn: Any) -> None:  # which rows ran outside the fused step, and why
        stats[f"rows_{fn.__name__}"] += idx.shape[0]
        on_rows(idx, fn)

    env._on_rows = counted
    np_rng = np.random.default_rng(seed)
    dealers = np_rng.integers(n, size=num_envs)
    specs = []
    for b, d in enumerate(dealers):
        kind = rigged[b % (2 * len(rigged))] if rigged and b % (2 * len(rigged)) < len(rigged) else None
        if kind is None:
            specs.append(game.deal_from_deck(np_rng.permutation(N).tolist(), int(d)))
        else:
            specs.append(rigged_deal(game, np_rng, int(d), kind))
    options: dict[str, Any] = {"dealer": torch.as_tensor(dealers)}
    chips = pot = None
    if start_chips:
        bankroll = config.options.get("bankroll", 25)
        stake = max(game.stake, 1)
        chips = np_rng.integers(1, bankroll + 1, size=(num_envs, n))
        pot = np_rng.integers(0, 3 * stake, size=num_envs)
        options.update(chips=torch.as_tensor(chips), pot=torch.as_tensor(pot))
    if deal_input == "spec":
        options["deals"] = specs
    else:  # deck orders, as game.deal_from_deck deals them
        options["deals"] = torch.as_tensor(np.stack([deal_spec_to_order(game, s, int(d))
                                                     for s, d in zip(specs, dealers)]))
    out = env.reset(options=options)
    rngs = [ScriptedRng() for _ in range(num_envs)]
    for b in range(num_envs):
        rngs[b].orders.extend(env.chance_log[b])
        stats["redeals"] += len(env.chance_log[b])  # the first deals are given: anything drawn is a redeal
    states = [
        game.new_session(rngs[b], dealer=int(dealers[b]), deal=specs[b],
                         chips=None if chips is None else chips[b].tolist(), pot=0 if pot is None else int(pot[b]))
        for b in range(num_envs)
    ]
    gen = torch.Generator().manual_seed(seed)
    w = torch.ones(game.num_actions)
    for name, weight in (weights or {}).items():
        if name in game.action_ids:
            w[game.action_ids[name]] = weight

    def check(cond: bool, where: str) -> None:
        if not cond:
            raise LockstepError(where)

    def compare(obs: torch.Tensor, mask: torch.Tensor, to_act: torch.Tensor, where: str) -> None:
        obs_np, mask_np, to_act_np = obs.numpy(), mask.numpy(), to_act.numpy()
        full = env.state().numpy()
        others = torch.randint(n, (num_envs,), generator=gen)
        other_obs = env.observe(others).numpy()
        for b, st in enumerate(states):
            check(int(to_act_np[b]) == st.to_act, f"{where} session {b}: to_act {int(to_act_np[b])} != {st.to_act}")
            legal = game.legal_actions(st)
            got = np.flatnonzero(mask_np[b]).tolist()
            check(got == legal, f"{where} session {b}: mask ({Phase(st.phase).name}) batched "
                                f"{[game.action_to_str(x) for x in got]} reference "
                                f"{[game.action_to_str(x) for x in legal]}")
            for enc, exp, have, what in ((observer, observer.encode(st, st.to_act), obs_np[b], "obs"),
                                         (state_observer, state_observer.encode(st), full[b], "state"),
                                         (observer, observer.encode(st, int(others[b])), other_obs[b],
                                          f"seat {int(others[b])}")):
                diff = first_difference(enc, exp, have)
                check(diff is None, f"{where} session {b} {what}: {diff}")
            stats[f"phase_{Phase(st.phase).name.lower()}"] += 1
            d = st.deal
            if st.phase is Phase.EXCHANGE and d.knocked and st.to_act == st.session.dealer:
                stats["knocker_exchanges"] += 1
            if st.session.escrow:
                stats["queue_items"] += 1
            if d.shown():
                stats["quartets_shown"] += 1

    compare(out.obs, out.mask, out.to_act, "reset")
    for t in range(steps):
        probs = out.mask.to(torch.float32) * w
        actions = torch.multinomial(probs, 1, generator=gen)[:, 0]
        res = env.step(actions)
        new_deal = res.info["new_deal"].numpy()
        final_index = res.info["final_index"].tolist()
        for b, st in enumerate(states):
            drawn = env.chance_log[b]
            decks = sum(len(order) == N for order in drawn)
            stats["reshuffles"] += len(drawn) - decks
            stats["redeals"] += decks - bool(new_deal[b])  # a Vierling void: the same dealer deals again
            rngs[b].orders.extend(drawn)
            results = game.apply(st, int(actions[b]))
            expected = np.zeros(n, dtype=np.float32)
            for r in results:
                expected += r.deltas
                stats[str(r.kind)] += 1
            where = f"step {t} session {b}"
            check(np.array_equal(res.rewards[b].numpy(), expected),
                  f"{where}: rewards {res.rewards[b].tolist()} != {expected.tolist()}")
            kind = DEAL_KINDS[results[-1].kind] if results else DEAL_NONE
            check(int(res.info["deal_kind"][b]) == kind, f"{where}: deal kind")
            seat = (results[-1].mauschler if results and results[-1].kind in (DealKind.NO_PLAY, DealKind.MOUCHE)
                    else -1)
            check(int(res.info["end_seat"][b]) == seat, f"{where}: end seat {int(res.info['end_seat'][b])} != {seat}")
            check(bool(new_deal[b]) == bool(results), f"{where}: new deal")
            check(res.info["final_chips"][b].tolist() == st.session.chips, f"{where}: final chips")
            if st.phase is Phase.OVER:
                stats["truncated" if st.session.truncated else "terminated"] += 1
                stats["eliminations"] += n - sum(st.session.alive)
                check(bool(res.truncated[b]) == st.session.truncated
                      and bool(res.terminated[b]) != st.session.truncated, f"{where}: terminated/truncated")
                check(b in final_index, f"{where}: no final observation")
                j = final_index.index(b)
                for s in range(n):
                    diff = first_difference(observer, observer.encode(st, s), res.info["final_obs"][j, s].numpy())
                    check(diff is None, f"{where} final obs of seat {s}: {diff}")
                states[b] = st = game.new_session(rngs[b], dealer=int(env.dealer[b]))
            else:
                check(not res.terminated[b] and not res.truncated[b] and b not in final_index, where)
            pending = bool(rngs[b].orders)
            check(not pending or st.deal.undealt, f"{where}: the engines disagree on the random draws "
                                                  f"({len(rngs[b].orders)} left over)")
        compare(res.obs, res.mask, res.to_act, f"step {t}")
        out = res
    return stats
