"""Duplicate evaluation on the batched engine: every game of many duplicate deals at once.

:func:`agents.evaluation.duplicate.evaluate_pair` plays a pairing on the reference engine,
one game at a time (``backend="reference"``), or here (``backend="batched"``):
the ``2 n`` games of each duplicate deal of a block (format ``alone`` and
``field``, each lone seat; :func:`agents.evaluation.match.game_order`) are rows of one
:class:`~mauscheln_env.batched.BatchedMauscheln`, reset with the deal's cards
and dealer (:func:`agents.evaluation.match.series_deal`, the same deals as the reference
backend), and the candidate and the baseline are the tensor forms of the agents
(:func:`agents.tensor.batched_opponent`: ``random``, ``beginner``, ``expert``,
``learned``, and agents whose class sets :attr:`~agents.base.Agent.tensor_form`), each acting on the rows where a seat it holds is to act. The
per-deal figures, role counts and summaries are those of the reference backend,
computed the same way.

What is the same and what is not
    The deals, the chance and the agents' decisions are those of the reference
    backend: every game draws its permutations (a reshuffled stock, a redeal
    after a throw-in or a Vierling) from its deal's session generator, as
    :meth:`agents.evaluation.match.MatchRunner.play` gives the reference engine
    (:meth:`~mauscheln_env.batched.BatchedMauscheln.use_chance`); ``beginner``
    and ``expert`` decide as their Python agents wherever they have a rule, and
    a greedy learned policy plays its most likely action. Only the agents' own
    random draws (``random``, a sampling ``learned`` policy, a scripted agent's
    fallback when no rule applies) come from another source: uniforms derived
    from ``(seed, deal, deal-in-session, seat, decision)``, common random
    numbers as on the reference backend (whoever sits at a seat of a deal
    draws the same numbers; ``crn=False`` adds the agent and the game to the
    key), but not the reference agents' numpy streams.

    So a deal without such draws gives the same figures on both backends
    (``tests/test_batched_eval.py`` checks this deal by deal on every
    ruleset), and the others are equally valid samples of the same game. No
    figure depends on how the deals are cut into blocks (:func:`blocks`), on
    ``workers`` or on ``start``: the engine's own generator, seeded by
    ``(seed, first deal of the block)``, only deals the sessions that start
    after a game is over, which are not counted.

Only single-deal sessions (``session_deals=1``) run here, and only agents with
a tensor form: :func:`batched_reason` says why a pairing cannot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from agents.base import parse_agent_spec, spec_files_stamp
from agents.evaluation.match import FORMATS, ROLE_KEYS, FixedDeal, agent_seed, game_order, lineup_of, series_deal
from mauscheln_env.engine import ROLE_NAMES, Game, Role
from mauscheln_env.errors import MauschelnError
from mauscheln_env.vector import DEAL_NO_PLAY, DEAL_THROW_IN

ROWS_PER_BLOCK = 8192
"""About how many games (rows of the engine) one block plays at once."""
ENGINE_KEY = 104_729
"""The key that turns a series seed and a block's first deal into the engine's seed."""
_GOLDEN = 0x9E3779B97F4A7C15 - (1 << 64)


def block_size(n: int) -> int:
    """Duplicate deals per block at ``n`` players (each deal is ``2 n`` games)."""
    return max(1, ROWS_PER_BLOCK // (2 * n))


def blocks(start: int, stop: int, n: int) -> list[tuple[int, int]]:
    """The deals ``start .. stop-1`` cut at multiples of :func:`block_size`."""
    size = block_size(n)
    cuts = [start, *range((start // size + 1) * size, stop, size), stop]
    return [(lo, hi) for lo, hi in zip(cuts, cuts[1:]) if hi > lo]


def batched_reason(candidate: str, baseline: str, settings: Any) -> str | None:
    """Why the pairing cannot run on the batched backend, or None when it can."""
    from agents.tensor import BATCHED_OPPONENTS, batched_opponent, has_tensor_form
    from mauscheln_env.batched import check_supported

    if settings.session_deals != 1:
        return f"session_deals={settings.session_deals}: the batched backend plays single deals only"
    config = settings.config()
    try:
        check_supported(config)
    except MauschelnError as exc:
        return f"the batched engine cannot play this table: {exc}"
    game = Game(config)
    for spec in (candidate, baseline):
        name, params = parse_agent_spec(spec)
        if not has_tensor_form(name):
            return (f"{name!r} has no tensor form (agents with one: {', '.join(sorted(BATCHED_OPPONENTS))}, and "
                    "agents whose class sets tensor_form)")
        try:
            batched_opponent(name, game, "cpu", 0, **params)
        except (ValueError, MauschelnError) as exc:
            return f"{spec!r} has no tensor form with these parameters: {exc}"
    return None


# ---------------------------------------------------------------------- common random numbers
def _shr(x: torch.Tensor, k: int) -> torch.Tensor:
    """Logical right shift of int64 bit patterns."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def _mix(x: torch.Tensor) -> torch.Tensor:
    """splitmix64's finaliser on int64 bit patterns (wrapping arithmetic)."""
    x = x + _GOLDEN
    x = (x ^ _shr(x, 30)) * (0xBF58476D1CE4E5B9 - (1 << 64))
    x = (x ^ _shr(x, 27)) * (0x94D049BB133111EB - (1 << 64))
    return x ^ _shr(x, 31)


def uniforms(base: torch.Tensor, *keys: torch.Tensor) -> torch.Tensor:
    """float32 uniforms in [0, 1), one per element of ``base`` (int64 seeds), mixed with the integer ``keys``."""
    x = base
    for key in keys:
        x = _mix(x ^ (key * _GOLDEN))
    return _shr(_mix(x), 40).to(torch.float32) * (1.0 / (1 << 24))


# ---------------------------------------------------------------------- one block
_CACHE: dict[Any, Any] = {}


def _agent(spec: str, game: Game, key: Any) -> Any:
    """The tensor form of ``spec``, cached per process; a checkpoint file rewritten since is read again."""
    from agents.tensor import batched_opponent

    name, params = parse_agent_spec(spec)
    cache_key = ("agent", spec, key, spec_files_stamp(spec))
    agent = _CACHE.get(cache_key)
    if agent is None:
        agent = _CACHE[cache_key] = batched_opponent(name, game, "cpu", 0, **params)
    return agent


def play_block_batched(settings: Any, candidate: str, baseline: str, start: int, stop: int,
                       deals: Sequence[FixedDeal] | None = None) -> dict[str, Any]:
    """Play duplicate deals ``start .. stop-1`` of one pairing in both formats on the batched engine.

    The same contract as :func:`agents.evaluation.duplicate.play_block` (per-deal means ``[alone cand, alone base, field
    cand, field base]``, role counts, games); see the module docstring for what differs.
    """
    from mauscheln_env.batched import BatchedMauscheln

    if settings.session_deals != 1:  # evaluate_pair asked batched_reason first; this guards direct calls
        raise MauschelnError(f"session_deals={settings.session_deals}: the batched backend plays single deals only")
    config = settings.config()
    key = repr(config.to_dict())
    game = _CACHE.get(("game", key))
    if game is None:
        game = _CACHE[("game", key)] = Game(config)
    n = game.n
    D = stop - start
    if deals is not None and len(deals) != D:
        raise ValueError(f"{len(deals)} deals for the indices {start}..{stop - 1}; allowed: one per index")
    fixed = [deals[i] if deals is not None else series_deal(game, settings.seed, d)
             for i, d in enumerate(range(start, stop))]
    order = game_order(n)
    G = len(order)
    B = D * G
    lineups = np.array([lineup_of(fmt, r, n) for fmt, r in order], dtype=bool)  # [G, n]: the candidate's seats
    holds = torch.from_numpy(np.tile(lineups, (D, 1)))  # [B, n]
    env = BatchedMauscheln(config, B, seed=agent_seed(settings.seed, start, ENGINE_KEY), copy=False)
    # Chance from the start (a Vierling redeal can come before the first decision): each game draws from its
    # deal's session generator, as MatchRunner.play gives the reference engine.
    env.use_chance([np.random.default_rng(f.session_seed) for f in fixed for _ in range(G)])
    res = env.reset(options={"deals": [f.spec for f in fixed for _ in range(G)],
                             "dealer": [f.dealer for f in fixed for _ in range(G)], "pot": settings.pot})
    cand, base = _agent(candidate, game, key), _agent(baseline, game, key)

    # Common random numbers: one seed per deal and seat (the reference's agent key); without CRN per game and agent.
    if settings.crn:
        per_deal_seat = np.array([[agent_seed(*f.agent_key, 0, s) for s in range(n)] for f in fixed], dtype=np.int64)
        seeds = np.repeat(per_deal_seat, G, axis=0)
    else:
        seeds = np.array([[agent_seed(*f.agent_key, 0, s, 1 if lineups[g, s] else 2, FORMATS.index(fmt), r)
                           for s in range(n)] for f in fixed for g, (fmt, r) in enumerate(order)], dtype=np.int64)
    seeds_t = torch.from_numpy(seeds)
    bar = torch.arange(B)
    decisions = torch.zeros(B, n, dtype=torch.int64)  # per seat, in the current deal
    deal_no = torch.zeros(B, dtype=torch.int64)  # deal of the session (a throw-in is redealt)
    active = torch.ones(B, dtype=torch.bool)
    deltas = torch.zeros(B, n, dtype=torch.float64)
    names = list(ROLE_KEYS) + [ROLE_NAMES[r] for r in Role if ROLE_NAMES[r] not in ROLE_KEYS]
    by_value = np.zeros(max(int(r) for r in Role) + 1, dtype=np.int64)
    for r in Role:
        by_value[int(r)] = names.index(ROLE_NAMES[r])
    role_counts = np.zeros((2, len(names)), dtype=np.int64)  # candidate, baseline
    obs, mask, to_act = res.obs, res.mask, res.to_act
    while bool(active.any()):
        actions = mask.to(torch.uint8).argmax(dim=1)  # rows whose game is over: any legal action
        seat = to_act.clamp(0, n - 1)[:, None]
        u = uniforms(seeds_t.gather(1, seat)[:, 0], deal_no, decisions.gather(1, seat)[:, 0])
        mine = holds.gather(1, seat)[:, 0]
        for agent, rows_of in ((cand, active & mine), (base, active & ~mine)):
            rows = rows_of.nonzero()[:, 0]
            if rows.shape[0]:
                actions[rows] = agent.act(obs.index_select(0, rows), mask.index_select(0, rows),
                                          u.index_select(0, rows))
        decisions[bar, seat[:, 0]] += 1
        roles_before, alive_before = env.roles.clone(), env.alive.clone()
        res = env.step(actions)
        obs, mask, to_act = res.obs, res.mask, res.to_act
        deltas += torch.where(active[:, None], res.rewards.to(torch.float64), 0.0)
        kind = res.info["deal_kind"]
        ended = (active & (kind != 0)).nonzero()[:, 0]
        if ended.shape[0]:  # each seat's role at the end of the deal, as agents.evaluation.match._final_roles says
            idx = ended.numpy()
            k = kind.numpy()[idx][:, None]
            live = ((alive_before.numpy()[idx][:, None] >> np.arange(n)) & 1).astype(bool)
            who = res.info["end_seat"].numpy()[idx][:, None]
            final = by_value[roles_before.numpy()[idx]]
            final = np.where(k == DEAL_THROW_IN, names.index("declined"), final)
            final = np.where(k == DEAL_NO_PLAY, np.where(np.arange(n) == who, names.index("mauschler"),
                                                         names.index("out")), final)
            final = np.where(live, final, names.index("eliminated"))
            np.add.at(role_counts, (np.where(holds.numpy()[idx], 0, 1).ravel(), final.ravel()), 1)
            decisions[ended] = 0
            deal_no[ended] += 1
        active &= ~(res.terminated | res.truncated)
    per_game = deltas.view(D, G, n).numpy()
    sums = np.zeros((D, 4), dtype=np.float64)  # alone: lone, field; field: field, lone (chip sums, exact)
    for g, (fmt, r) in enumerate(order):
        lone = per_game[:, g, r]
        rest = per_game[:, g].sum(axis=1) - lone
        cols = (0, 1) if fmt == "alone" else (3, 2)
        sums[:, cols[0]] += lone
        sums[:, cols[1]] += rest
    per_deal = sums / np.array([n, n * (n - 1), n * (n - 1), n], dtype=np.float64)
    roles = {who: {name: int(role_counts[i, j]) for j, name in enumerate(names)
                   if name in ROLE_KEYS or role_counts[i, j]}
             for i, who in enumerate(("candidate", "baseline"))}
    return {"start": start, "per_deal": per_deal, "roles": roles, "games": B, "actions": None}
