"""The match runner: agents play sessions directly on the engine.

For speed there are no PettingZoo wrappers in the loop, but every agent sees
exactly what the environment would give it: the observation, mask and info
come from ``raw_env.observe``/``raw_env.infos`` via :class:`agents.views.EnvView`.

Duplicate deals: :func:`make_deal` fixes a deal in full (every hand, the trump
card, the stock order, and the dealer) from ``(seed, index)``; later deals of a
multi-deal session come from the session's seeded shuffle, so every replay of
the same duplicate deal sees the same cards in the same order. Agents are
reseeded before every deal with :func:`agent_seed`, a function of the deal and
the seat (common random numbers): whoever sits at a seat draws the same random
numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from agents.base import Agent
from agents.views import EnvView
from mauscheln_env.engine import ROLE_NAMES, DealKind, DealResult, DealSpec, Game, Phase, Role, State
from mauscheln_env.errors import IllegalActionError

ROLE_KEYS = ("mauschler", "goer", "out", "declined", "undecided", "eliminated")
"""Final roles counted per seat and deal; ``declined`` at the end of a deal means it was thrown in."""


def agent_seed(base_seed: int, *keys: int) -> int:
    """A 63-bit seed derived from ``base_seed`` and integer keys (deal, deal-in-session, seat, ...).

    A splitmix64 chain: cheap, deterministic across processes and platforms.
    """
    x = int(base_seed) & _MASK64
    for key in keys:
        x = _splitmix64(x ^ (int(key) * 0x9E3779B97F4A7C15 & _MASK64))
    return _splitmix64(x) >> 1


_MASK64 = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def make_deal(game: Game, seed: int, index: int) -> tuple[int, DealSpec]:
    """The duplicate deal ``index`` of a series: ``(dealer, DealSpec)``, all seats live.

    The deck order and the dealer are drawn from ``default_rng([seed, index])``
    and dealt by the engine's own pattern (``Game.deal_from_deck``).
    """
    rng = np.random.default_rng([int(seed), int(index)])
    dealer = int(rng.integers(game.n))
    order = rng.permutation(game.num_cards).tolist()
    return dealer, game.deal_from_deck(order, dealer)


FORMATS = ("alone", "field")
"""The two formats of a duplicate deal: one candidate against a field of baselines, and the reverse."""


def game_order(n: int) -> list[tuple[str, int]]:
    """The ``2 n`` games of a duplicate deal in the order they are played: ``(format, lone seat)``."""
    return [(fmt, r) for fmt in FORMATS for r in range(n)]


def lineup_of(fmt: str, lone: int, n: int) -> list[bool]:
    """Which seats the candidate holds in the game ``(fmt, lone)``: only ``lone`` in format alone, all
    but ``lone`` in format field."""
    return [(s == lone) == (fmt == "alone") for s in range(n)]


SESSION_KEY = 7919
"""The key that turns a series seed and a deal index into the session seed: ``agent_seed(seed, d, SESSION_KEY)``."""


@dataclass(frozen=True)
class FixedDeal:
    """One duplicate deal with everything that makes its games reproducible.

    ``spec`` is the first deal in full and ``dealer`` deals it; ``session_seed`` seeds the session's
    generator, from which the engine draws every later shuffle (a redeal after a throw-in, a reshuffled
    stock, the next deal of a multi-deal session); before deal ``k`` of the session the agent at seat
    ``s`` is reset with ``agent_seed(*agent_key, k, s)`` (common random numbers).
    """

    dealer: int
    spec: DealSpec
    session_seed: int
    agent_key: tuple[int, ...]

    def seed_for(self, k: int, seat: int, *extra: int) -> int:
        """The seed of the agent at ``seat`` before deal ``k`` of the session (``extra`` keys: no CRN)."""
        return agent_seed(*self.agent_key, k, seat, *extra)


def series_deal(game: Game, seed: int, index: int) -> FixedDeal:
    """Deal ``index`` of the duplicate series ``seed``: :func:`make_deal`, the session seed
    ``agent_seed(seed, index, SESSION_KEY)`` and the agent key ``(seed, index)``."""
    dealer, spec = make_deal(game, seed, index)
    return FixedDeal(dealer, spec, agent_seed(seed, index, SESSION_KEY), (int(seed), int(index)))


def deal_to_codes(game: Game, dealer: int, spec: DealSpec) -> dict:
    """A deal as plain data (the env's reset option ``deal`` plus the dealer)."""
    codes = game.deck.codes
    return {
        "dealer": dealer,
        "hands": {s: [codes[c] for c in h] for s, h in enumerate(spec.hands)},
        "trump": codes[spec.trump],
        "stock": [codes[c] for c in spec.stock],
    }


@dataclass
class SessionRecord:
    """The outcome of one session: chip changes and the roles each seat took in each deal."""

    deltas: list[int]
    deals: int = 0
    settled: int = 0
    roles: list[list[str]] = field(default_factory=list)
    results: list[DealResult] = field(default_factory=list)
    decisions: int = 0


class MatchRunner:
    """Plays sessions of one rules configuration; reuse it for many sessions (it keeps one EnvView)."""

    def __init__(self, game: Game | None = None, view: EnvView | None = None) -> None:
        if view is None:
            if game is None:
                raise ValueError("MatchRunner needs a Game or an EnvView")
            view = EnvView(game.config)
        self.view = view
        self.game = view.game

    def play(
        self,
        agents: Sequence[Agent],
        *,
        dealer: int,
        deal: DealSpec | None = None,
        session_seed: int = 0,
        chips: list[int] | None = None,
        pot: int = 0,
        seed_for: Callable[[int, int], int | None] | None = None,
        keep_results: bool = False,
        check_invariants: bool = False,
        on_decision: Callable[[State, int, np.ndarray, np.ndarray, dict, int], None] | None = None,
    ) -> SessionRecord:
        """Play one session with ``agents[seat]`` at each seat.

        ``seed_for(deal_number, seat)`` gives the seed each agent is reset with
        before each deal of the session (``deal_number`` counts deals from 0,
        throw-ins included); None leaves the agents' generators running.
        ``on_decision(state, seat, obs, mask, info, action)`` is called after
        each decision (tests use it to probe the agents).
        """
        game = self.game
        n = game.n
        if len(agents) != n:
            raise ValueError(f"{len(agents)} agents for {n} seats; allowed: exactly one agent per seat")
        if not isinstance(pot, (int, np.integer)) or isinstance(pot, (bool, np.bool_)) or pot < 0:
            raise ValueError(f"pot={pot!r} is not allowed; allowed: a whole number >= 0")
        for seat, agent in enumerate(agents):
            agent.setup(game, seat)
        state = game.new_session(np.random.default_rng(session_seed), dealer=dealer, chips=chips, pot=pot, deal=deal)
        view = self.view
        view.bind(state)
        record = SessionRecord(deltas=[0] * n)
        deal_number = 0
        live = list(state.session.alive)  # seats dealt in to the current deal
        self._reset_agents(agents, seed_for, deal_number)
        while state.phase is not Phase.OVER:
            seat = state.to_act
            agent = agents[seat]
            forced = None
            if agent.plays_forced_blind and on_decision is None:
                legal = game.legal_actions(state)
                if len(legal) == 1:
                    forced = legal[0]
            if forced is not None:  # the agent would answer without looking: skip building its view
                action = forced
            else:
                view.refresh()
                obs, mask, info = view.seat_view(seat)
                action = agent.act(obs, mask, info)
                if on_decision is not None:
                    on_decision(state, seat, obs, mask, info, action)
            before = list(state.deal.roles)
            try:
                results = game.apply(state, action)
            except IllegalActionError as exc:
                raise IllegalActionError(f"agent {agent!r} at seat {seat}: {exc}") from exc
            record.decisions += 1
            if check_invariants:
                game.check_invariants(state)
            if not results:
                continue
            for result in results:
                record.deals += 1
                record.settled += result.kind is not DealKind.THROW_IN
                for s in range(n):
                    record.deltas[s] += result.deltas[s]
                record.roles.append(_final_roles(live, before, result))
                if keep_results:
                    record.results.append(result)
            live = list(state.session.alive)
            if state.phase is not Phase.OVER:
                deal_number += 1
                self._reset_agents(agents, seed_for, deal_number)
        return record

    @staticmethod
    def _reset_agents(agents: Sequence[Agent], seed_for: Callable[[int, int], int | None] | None, k: int) -> None:
        for seat, agent in enumerate(agents):
            agent.reset(None if seed_for is None else seed_for(k, seat))


def _final_roles(live: list[bool], before: list[Role], result: DealResult) -> list[str]:
    """Each seat's role at the end of a deal (``eliminated`` for seats not dealt in).

    The deal's last action changed at most the acting seat's role, and the
    result's kind says how: a thrown-in deal leaves everyone ``declined``; after
    ``no_play`` everyone but the mauschler is ``out``; a settled deal ends on a
    card, which changes no role.
    """
    roles = []
    for s, role in enumerate(before):
        if not live[s]:
            roles.append("eliminated")
        elif result.kind is DealKind.THROW_IN:
            roles.append("declined")
        elif result.kind is DealKind.NO_PLAY:
            roles.append("mauschler" if s == result.mauschler else "out")
        else:
            roles.append(ROLE_NAMES[role])
    return roles
