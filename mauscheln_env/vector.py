"""Vector environments: many Mauscheln sessions stepped together, as torch tensors.

A trainer steps ``num_envs`` independent sessions at once and does not care
whether a Python loop over the reference engine (:class:`ReferenceVectorEnv`),
the batched tensor engine (:class:`mauscheln_env.batched.BatchedMauscheln`) or
batched engines in worker processes (:class:`mauscheln_env.vecenv.SubprocVectorEnv`) runs
underneath; :func:`mauscheln_env.vecenv.make_vector_env` builds any of them by name, and
:func:`sample_legal` draws uniformly random legal actions from a mask. All
implement :class:`VectorEnv`:

| member | meaning |
| --- | --- |
| `num_envs` (B), `num_players` (n), `obs_size` (D), `num_actions` (A), `state_size` | sizes, from the config |
| `reset(seed=None, options=None) -> VecReset(obs, mask, to_act)` | start B new sessions |
| `step(actions) -> VecStep(obs, mask, to_act, rewards, terminated, truncated, info)` | one decision per session |
| `observe(seats)`, `state()` | observations of any seat; the full hidden state |

Tensors (on ``env.device``; the reference loop is CPU only):

- ``obs``: ``float32[B, D]``, the observation of the seat to act, exactly
  ``Observer(game).encode(state, to_act)`` (egocentric, perfect recall).
- ``mask``: ``bool[B, A]``, the legal actions of that seat.
- ``to_act``: ``int64[B]``, the absolute seat to act.
- ``rewards``: ``float32[B, n]`` by absolute seat: the chip deltas
  (``DealResult.deltas``: ante, trick credits, bêtes) of a deal that ended in
  this step, else 0. Exact for chip totals below 2**24.
- ``terminated``: ``bool[B]``, the session ended by its rules (``max_deals``
  settled deals, or fewer than 3 seats with chips). This is the issue's
  ``done``. ``truncated``: ``bool[B]``, the session was cut after
  ``max_throw_ins`` consecutive throw-ins. The two are exclusive.

**Auto-reset (same step).** When a session ends, its final reward is in the
``rewards`` of that step, ``terminated`` or ``truncated`` is set, and the
session is replaced at once by a new one (the ruleset's bankroll, an empty pot,
the first dealer by lot): the returned ``obs``, ``mask`` and ``to_act`` already
belong to the new session's first decision, as in gymnasium's vector envs with
``autoreset_mode=SAME_STEP``. The new session's first ante is not a reward of
this step; it is part of the first deal's delta, paid when that deal ends.

``info`` (a dict of tensors, the same keys in every implementation):

| key | shape | meaning |
| --- | --- | --- |
| `deal_kind` | int64[B] | how a deal ended in this step: `DEAL_NONE` 0, `DEAL_SETTLED` 1, `DEAL_NO_PLAY` 2, `DEAL_THROW_IN` 3, `DEAL_MOUCHE` 4 |
| `new_deal` | bool[B] | a new deal was dealt in this step (after a deal ended, or by auto-reset) |
| `end_seat` | int64[B] | the seat that took the pot of a deal that ended in this step without play (`DEAL_NO_PLAY`) or by a mouche (`DEAL_MOUCHE`): ``DealResult.mauschler``; -1 otherwise |
| `final_chips` | int64[B, n] | chips after this step (a new deal's ante paid); for a session that ended in this step, its final chips before the auto-reset |
| `final_index` | int64[k] | only with ``final_observations=True``: the sessions that ended in this step |
| `final_obs` | float32[k, n, D] | only with ``final_observations=True``: every seat's observation of the ended state |

Every implementation validates actions (an action outside ``mask`` raises
:class:`~mauscheln_env.errors.IllegalActionError` and changes nothing) and is
deterministic: the same seed and actions give the same tensors. The reference
loop and the batched engine deal from different random streams, so the same
seed gives them different deals; feed deals through
``reset(options={"deals": ...})`` to compare them. Built with ``copy=False``
(batched engine, worker processes), ``obs`` and ``mask`` are buffers that the
next ``step`` overwrites; otherwise every call returns fresh tensors.

Reset ``options`` (each for every session, or one value for all):
``dealer`` (int or int64[B]), ``chips`` (n ints or int64[B, n], each >= 1),
``pot`` (int or int64[B], >= 0), ``deals`` (int64[B, N] deck orders, top card
first, dealt by ``Game.deal_from_deck``; or a sequence of B
:class:`~mauscheln_env.engine.DealSpec`). These fix the first deal of each
session started by this ``reset``; later sessions use the ruleset defaults.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from mauscheln_env.config import RuleConfig
from mauscheln_env.engine import DealKind, DealSpec, Game, Phase, State
from mauscheln_env.errors import ConfigError, DealError, IllegalActionError, MauschelnError
from mauscheln_env.observation import Observer

DEAL_NONE = 0
DEAL_SETTLED = 1
DEAL_NO_PLAY = 2
DEAL_THROW_IN = 3
DEAL_MOUCHE = 4
DEAL_KINDS = {DealKind.SETTLED: DEAL_SETTLED, DealKind.NO_PLAY: DEAL_NO_PLAY, DealKind.THROW_IN: DEAL_THROW_IN,
              DealKind.MOUCHE: DEAL_MOUCHE}
"""``DealResult.kind`` -> the code in ``info["deal_kind"]``."""

RESET_OPTIONS = ("dealer", "chips", "pot", "deals")


class VecReset(NamedTuple):
    """What :meth:`VectorEnv.reset` returns."""

    obs: torch.Tensor
    mask: torch.Tensor
    to_act: torch.Tensor


class VecStep(NamedTuple):
    """What :meth:`VectorEnv.step` returns (unpacks as a 7-tuple)."""

    obs: torch.Tensor
    mask: torch.Tensor
    to_act: torch.Tensor
    rewards: torch.Tensor
    terminated: torch.Tensor
    truncated: torch.Tensor
    info: dict[str, torch.Tensor]


class VectorEnv(abc.ABC):
    """B Mauscheln sessions stepped together (see the module docstring)."""

    config: RuleConfig
    num_envs: int
    num_players: int
    num_actions: int
    obs_size: int
    state_size: int
    device: torch.device

    @abc.abstractmethod
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> VecReset:
        """Start ``num_envs`` new sessions; ``seed`` reseeds the dealing."""

    @abc.abstractmethod
    def step(self, actions: torch.Tensor) -> VecStep:
        """Apply one action per session (the acting seat's) and auto-reset ended sessions."""

    @abc.abstractmethod
    def observe(self, seats: torch.Tensor | int) -> torch.Tensor:
        """``float32[B, D]``: the observation of ``seats`` (one seat per session, or one for all)."""

    @abc.abstractmethod
    def state(self) -> torch.Tensor:
        """``float32[B, state_size]``: ``Observer(game, omniscient=True).encode`` of every session."""

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op unless an implementation holds resources
        """Release resources (nothing to release by default)."""


def sample_legal(mask: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One uniformly random legal action per row of ``mask`` (``bool[B, A]``, at least one True per row).

    ``int64[B]`` on ``mask``'s device: draws r in [0, #legal) and returns the
    position of the r-th legal action (a cumulative count in ``uint8``, so
    ``A`` must stay below 256). That position is the number of cumulative counts
    at most r; the counts never decrease, so ``searchsorted`` finds it by bisection,
    in place of comparing and summing all ``A`` (same result, less work per row).
    """
    if mask.dtype != torch.bool or mask.dim() != 2 or mask.shape[1] > 255:
        raise MauschelnError(f"mask must be bool[B, A] with A < 256, got {mask.dtype} {tuple(mask.shape)}")
    counts = mask.view(torch.uint8).cumsum(1, dtype=torch.uint8)
    draw = torch.rand(mask.shape[0], generator=generator, device=mask.device) * counts[:, -1]
    return torch.searchsorted(counts, draw.to(torch.uint8)[:, None], right=True)[:, 0]


# ---------------------------------------------------------------------- option parsing


def per_env(value: Any, num_envs: int, width: int | None, name: str, low: int, high: int | None = None) -> np.ndarray:
    """A reset option as an ``int64`` array ``[B]`` (``width=None``) or ``[B, width]``.

    Accepts one value for all sessions or one per session; raises
    :class:`MauschelnError` naming the option and what is allowed.
    """
    shape = (num_envs,) if width is None else (num_envs, width)
    allowed = f"whole numbers >= {low}" + ("" if high is None else f" and <= {high}")
    try:
        arr = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
    except Exception as exc:  # noqa: BLE001 - anything unconvertible is a bad option value
        raise MauschelnError(f"reset option {name}={value!r} is not allowed; allowed: {allowed}") from exc
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise MauschelnError(f"reset option {name} must hold {allowed}, got dtype {arr.dtype}")
    single = () if width is None else (width,)
    if arr.shape == single:
        arr = np.broadcast_to(arr, shape)
    if arr.shape != shape:
        raise MauschelnError(f"reset option {name} has shape {arr.shape}; allowed: {single or 'a scalar'} or {shape}")
    if (arr < low).any() or (high is not None and (arr > high).any()):
        raise MauschelnError(f"reset option {name}={value!r} is not allowed; allowed: {allowed}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def check_reset_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Reject unknown reset options (a vector env is used by code, not by hand: no warning, an error)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise MauschelnError(f"reset options must be a dict, got {type(options).__name__}")
    unknown = sorted(set(options) - set(RESET_OPTIONS), key=str)
    if unknown:
        raise MauschelnError(f"unknown reset option(s) {unknown}; known: {', '.join(RESET_OPTIONS)}")
    return {k: v for k, v in options.items() if v is not None}


def deal_orders_from(game: Game, deals: Any, dealers: np.ndarray) -> np.ndarray:
    """``deals`` (deck orders ``[B, N]`` or B :class:`DealSpec`) as deck orders ``int64[B, N]``.

    Every seat is live at a reset, so a :class:`DealSpec` maps back to the one
    deck order (hands sorted) that ``game.deal_from_deck`` deals into it.
    Raises :class:`DealError` for anything that is not a full deal of this deck.
    """
    num_envs, N = dealers.shape[0], game.num_cards
    if isinstance(deals, Sequence) and len(deals) and isinstance(deals[0], DealSpec):
        if len(deals) != num_envs:
            raise DealError(f"deals has {len(deals)} DealSpec; one per session ({num_envs}) is needed")
        orders = np.stack([deal_spec_to_order(game, spec, int(d)) for spec, d in zip(deals, dealers)])
    else:
        try:
            orders = deals.detach().cpu().numpy() if isinstance(deals, torch.Tensor) else np.asarray(deals)
        except Exception as exc:  # noqa: BLE001
            raise DealError(f"deals must be int64[{num_envs}, {N}] deck orders or {num_envs} DealSpec") from exc
        if orders.shape != (num_envs, N) or not np.issubdtype(orders.dtype, np.integer):
            raise DealError(
                f"deals must be integer deck orders of shape ({num_envs}, {N}) or a list of DealSpec; "
                f"got shape {orders.shape}, dtype {orders.dtype}"
            )
        orders = orders.astype(np.int64)
    bad = np.flatnonzero((np.sort(orders, axis=1) != np.arange(N)).any(axis=1))
    if bad.size:
        raise DealError(
            f"deals of session(s) {bad[:8].tolist()} are not permutations of the {N} cards of this deck"
        )
    return orders


def deal_spec_to_order(game: Game, spec: DealSpec, dealer: int) -> np.ndarray:
    """The deck order (top first) that ``game.deal_from_deck`` deals into ``spec`` with every seat live."""
    n, H = game.n, game.hand_size
    if not isinstance(spec, DealSpec) or len(spec.hands) != n:
        raise DealError(f"a DealSpec with {n} hands is needed, got {spec!r}")
    for s, hand in enumerate(spec.hands):
        if len(hand) != H:
            raise DealError(f"hand of seat {s} has {len(hand)} cards; a hand in {game.config.ruleset} has {H}")
    seats = game.live_from([True] * n, game.next_live([True] * n, dealer))  # from forehand, dealer last
    hands = {s: sorted(spec.hands[s]) for s in range(n)}
    taken = dict.fromkeys(range(n), 0)
    order: list[int] = []
    for step in game.deal_pattern:
        if step == "T":
            order.append(spec.trump)
            continue
        for s in seats:
            order.extend(hands[s][taken[s]:taken[s] + step])
            taken[s] += step
    order.extend(spec.stock)
    if len(order) != game.num_cards:
        raise DealError(f"the deal holds {len(order)} cards; a full deal of this deck has {game.num_cards} "
                        f"(hands, the trump card and the stock)")
    return np.asarray(order, dtype=np.int64)


# ---------------------------------------------------------------------- reference loop


class ReferenceVectorEnv(VectorEnv):
    """:class:`VectorEnv` as a plain Python loop over reference ``Game``/``State``/``Observer`` objects.

    The ground truth the batched engine is tested against, and a drop-in for
    small runs. Session ``i`` deals from its own ``numpy`` generator, spawned
    from ``seed`` by :class:`numpy.random.SeedSequence`; CPU tensors only.
    """

    def __init__(self, config: RuleConfig, num_envs: int, seed: int | None = None, *,
                 final_observations: bool = False) -> None:
        if not isinstance(config, RuleConfig):
            raise ConfigError(f"config must be a RuleConfig (see make_config), got {type(config).__name__}")
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ConfigError(f"num_envs={num_envs!r} is not allowed; allowed: a whole number >= 1")
        self.config = config
        self.game = Game(config)
        self.observer = Observer(self.game)
        self.state_observer = Observer(self.game, omniscient=True)
        self.num_envs = num_envs
        self.num_players = config.num_players
        self.num_actions = config.num_actions
        self.obs_size = self.observer.size
        self.state_size = self.state_observer.size
        self.device = torch.device("cpu")
        self.final_observations = final_observations
        self._seed = seed
        self.states: list[State] = []
        self._rngs: list[np.random.Generator] = []

    def _spawn(self, seed: int | None) -> None:
        children = np.random.SeedSequence(seed).spawn(self.num_envs)
        self._rngs = [np.random.default_rng(c) for c in children]

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> VecReset:
        opts = check_reset_options(options)
        B, n = self.num_envs, self.num_players
        if seed is not None or not self._rngs:
            self._spawn(seed if seed is not None else self._seed)
        dealers = per_env(opts["dealer"], B, None, "dealer", 0, n - 1) if "dealer" in opts else None
        chips = per_env(opts["chips"], B, n, "chips", 1) if "chips" in opts else None
        pots = per_env(opts["pot"], B, None, "pot", 0) if "pot" in opts else None
        orders = None
        if "deals" in opts:
            if dealers is None:
                dealers = np.asarray([int(r.integers(n)) for r in self._rngs], dtype=np.int64)
            orders = deal_orders_from(self.game, opts["deals"], dealers)
        self.states = []
        for b, rng in enumerate(self._rngs):
            deal = None
            if orders is not None:
                deal = {"spec": self._spec_from_order(orders[b], int(dealers[b]))}
            self.states.append(self.game.new_session(
                rng,
                dealer=None if dealers is None else int(dealers[b]),
                chips=None if chips is None else chips[b].tolist(),
                pot=0 if pots is None else int(pots[b]),
                deal=deal,
            ))
        return VecReset(*self._outputs())

    def _spec_from_order(self, order: np.ndarray, dealer: int) -> DealSpec:
        return self.game.deal_from_deck(order.tolist(), dealer)

    def step(self, actions: torch.Tensor) -> VecStep:
        if not self.states:
            raise MauschelnError("call reset() before step()")
        acts = torch.as_tensor(actions).detach().cpu()
        if acts.shape != (self.num_envs,) or acts.dtype.is_floating_point or acts.dtype == torch.bool:
            raise IllegalActionError(f"actions must be an integer tensor of shape ({self.num_envs},), "
                                     f"got {tuple(acts.shape)} {acts.dtype}")
        acts_list = acts.tolist()
        g = self.game
        for b, (state, a) in enumerate(zip(self.states, acts_list)):
            if not g.is_legal(state, a):
                legal = ", ".join(g.action_to_str(x) for x in g.legal_actions(state))
                raise IllegalActionError(f"session {b}: action {a} is not legal for seat {state.to_act}; legal: {legal}")
        B, n = self.num_envs, self.num_players
        rewards = np.zeros((B, n), dtype=np.float32)
        kinds = np.zeros(B, dtype=np.int64)
        end_seat = np.full(B, -1, dtype=np.int64)
        new_deal = np.zeros(B, dtype=bool)
        term = np.zeros(B, dtype=bool)
        trunc = np.zeros(B, dtype=bool)
        final_chips = np.zeros((B, n), dtype=np.int64)
        final_index: list[int] = []
        final_obs: list[np.ndarray] = []
        for b, a in enumerate(acts_list):
            state = self.states[b]
            results = g.apply(state, a)
            for r in results:
                rewards[b] += r.deltas
                kinds[b] = DEAL_KINDS[r.kind]
                end_seat[b] = r.mauschler if r.kind in (DealKind.NO_PLAY, DealKind.MOUCHE) else -1
            final_chips[b] = state.session.chips
            if state.phase is Phase.OVER:
                trunc[b] = state.session.truncated
                term[b] = not state.session.truncated
                if self.final_observations:
                    final_index.append(b)
                    final_obs.append(np.stack([self.observer.encode(state, s) for s in range(n)]))
                self.states[b] = g.new_session(self._rngs[b])
                new_deal[b] = True
            elif results:
                new_deal[b] = True
        info = {
            "deal_kind": torch.from_numpy(kinds),
            "new_deal": torch.from_numpy(new_deal),
            "end_seat": torch.from_numpy(end_seat),
            "final_chips": torch.from_numpy(final_chips),
        }
        if self.final_observations:
            info["final_index"] = torch.tensor(final_index, dtype=torch.int64)
            info["final_obs"] = (torch.from_numpy(np.stack(final_obs)) if final_obs
                                 else torch.zeros(0, n, self.obs_size))
        obs, mask, to_act = self._outputs()
        return VecStep(obs, mask, to_act, torch.from_numpy(rewards), torch.from_numpy(term),
                       torch.from_numpy(trunc), info)

    def _outputs(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        B, g = self.num_envs, self.game
        obs = np.empty((B, self.obs_size), dtype=np.float32)
        mask = np.zeros((B, self.num_actions), dtype=bool)
        to_act = np.empty(B, dtype=np.int64)
        for b, state in enumerate(self.states):
            obs[b] = self.observer.encode(state, state.to_act)
            mask[b, g.legal_actions(state)] = True
            to_act[b] = state.to_act
        return torch.from_numpy(obs), torch.from_numpy(mask), torch.from_numpy(to_act)

    def observe(self, seats: torch.Tensor | int) -> torch.Tensor:
        seats_arr = per_env(seats, self.num_envs, None, "seats", 0, self.num_players - 1)
        return torch.from_numpy(np.stack([self.observer.encode(s, int(seat))
                                          for s, seat in zip(self.states, seats_arr)]))

    def state(self) -> torch.Tensor:
        return torch.from_numpy(np.stack([self.state_observer.encode(s) for s in self.states]))


# ---------------------------------------------------------------------- worker processes
