"""Batched Mauscheln engine: thousands of sessions stepped at once in PyTorch tensors.

:class:`BatchedMauscheln` mirrors the reference engine (:mod:`mauscheln_env.engine`)
rule for rule and the reference observer (:class:`~mauscheln_env.observation.Observer`)
value for value; ``tests/test_batched.py`` checks masks, observations, rewards
and session ends against them at every step of thousands of random sessions.
It implements :class:`~mauscheln_env.vector.VectorEnv` (see there for the
reset/step contract, rewards, auto-reset and ``info``). Every tensor lives on
one torch device; a step is tensor code over the whole batch (no Python loop
over sessions), so the same code serves a trainer on CPU and on GPU.

Supported: ruleset ``mauscheln`` (RULES.md §2.1) at 3-7 players with the
options ``knock``, ``knock_min_rank``, ``stake``, ``bankroll``, ``max_deals``,
``max_throw_ins``, ``max_session_deals`` and ``deck_size``. Anything else (another ruleset, or an
option such as ``vierling``, ``belli`` or ``weli`` away from its default)
raises :class:`~mauscheln_env.errors.ConfigError` naming what is supported;
rulesets are added to :data:`SUPPORTED` one at a time.

## Tensor state

B sessions, n seats, N cards, H = 4 cards per hand, T = 4 tricks. A set of
cards is an ``int64`` bit mask (bit c = card c of ``config.deck``; N <= 52), a
set of seats an ``int64`` mask of n bits. Seats are absolute. Sentinels:
``NO_SEAT`` = -1 and, for empty trick slots, ``ABSENT`` = -2**40. Everything is ``int64`` unless marked.

| tensor | shape | meaning (reference ``State`` field) |
| --- | --- | --- |
| `chips`, `deal_start_chips` | [B, n] | chips by seat; chips when the current deal started (before the ante) |
| `pot` | [B] | the pot |
| `alive_bits` | [B] | seats still in the session (``alive``) |
| `dealer`, `deals_settled`, `throw_in_streak` | [B] | |
| `phase` | [B] | ``Phase`` value: KNOCK 0, DECLARE 1, GO_WITH 2, EXCHANGE 3, PLAY 4, OVER 5 |
| `to_act` | [B] | seat to act |
| `hands`, `discards`, `drawn` | [B, n] | card masks by seat |
| `dealer_blind` | [B] bool | the dealer has not looked at his hand (``not seen[dealer]``; only the dealer can be blind) |
| `blind` | [B] | the knocking dealer's blind stock cards (``blind[dealer]``) |
| `dead` | [B] | hands of seats that passed on going with |
| `deck_order` | [B, N] | the current deal's shuffled deck, top card first |
| `stock_pos`, `stock_bits` | [B] | index in `deck_order` of the stock's top card; the stock as a card mask |
| `trump_card`, `trump_suit`, `trump_holder` | [B] | `trump_holder` is NO_SEAT until a knocker takes the card |
| `knocked` | [B] | 0 not decided (``None``), 1 knocked, 2 declined to knock |
| `roles`, `exchanged` | [B, n] | ``Role`` value; 0 not yet exchanged, else 1 + cards exchanged |
| `mauschler` | [B] | NO_SEAT while nobody declared |
| `goers` | [B] | seat mask of the seats that go with; participants = goers + mauschler |
| `marked`, `xmin`, `xcap` | [B] | cards marked by the exchanging seat; bounds on the marks |
| `trick_cards` | [B, T*n + 1] | card played in trick t by seat s at column t*n + s (ABSENT if none); last column is scratch |
| `trick_leader` | [B, T + 1] | seat that led trick t (ABSENT if none); last column is scratch |
| `tricks_done`, `trick_count` | [B] | completed tricks; cards in the current trick |
| `win_seat`, `win_card`, `led_suit` | [B] | the current trick's winning seat and card so far, its led suit |
| `tricks_won` | [B, n] | |

There are no queues: ``next_seat[s, mask]`` (a table over seats and n-bit
seat masks) is the first seat of ``mask`` after s clockwise, which gives
``succ`` (mask = live seats), the declaring and going-with order, the
exchange order and the play order (mask = participants). Legality is the
profile-M mask algebra of :func:`mauscheln_env.tricks.legal_follow` on the
reference's own ``TrumpTables``.

## How a step runs

First the seats that say ``done`` draw (on the few sessions concerned, found
with ``nonzero``). Then every session applies its action in one pure function
of the state (``_advance``): branch-free integer code where conditions
become all-ones/zero ``int64`` masks and ``m ? x : y`` is ``y ^ ((x ^ y) & m)``
(``torch.where`` on int64 is several times slower on the CPU for large batches); per-seat fields are
read and written through flat indices (``index_select``, ``index_add``,
``index_copy``). Then the other rare events run on the sessions they concern:
the settlement of ended deals (RULES.md §3.1, §3.5), auto-resets and new
deals. Last, one more pure function (``_acting``) gives the mask and
observation of every seat to act. With ``compile=True`` those two functions,
which are most of a step, go through ``torch.compile``: the same code, fused
into a few loops over the batch instead of hundreds of tensor operations.

## Observations

``obs`` has exactly the layout of ``Observer(game).encode(state, seat)``
(offsets from the same :func:`~mauscheln_env.observation.observation_pieces`).
Per step: one ``index_fill_`` of the flat positions of every
one-hot 1 (phase, seats, roles, exchange counts, trump suit, knock, every card
played and trick leader, relative to the observer; absent entries point at the
``pot`` cell, which is written afterwards, and relative seats are ``d + (n & (d >> 63))``
rather than ``d % n``, which is slower); the hand, discard, draw and
trump-card masks expanded through a byte table (eager) or by shifts (compiled);
chips, pot, progress and tricks won computed in float64 and rounded to float32 like the reference.
:meth:`BatchedMauscheln.state` gives ``Observer(game, omniscient=True)``.
The legal mask is one ``int64`` bit mask over all A actions expanded the same way.

## Dealing and determinism

Each new deal is a uniform random permutation of the deck (``argsort`` of
``torch.rand`` from the engine's ``torch.Generator``), dealt by the ruleset's
pattern exactly as ``Game.deal_from_deck`` does (1,1,T,1,1 from forehand,
dealer last; the stock is drawn from the top). Random numbers are drawn only
when sessions or deals start, in session order, so the same seed and actions
give the same run on a given device. ``reset(seed)`` reseeds; ``seed=None``
at construction seeds from the OS.

## Buffers

With ``copy=True`` (default) every step returns fresh ``obs`` and ``mask``
tensors. With ``copy=False`` they are internal buffers overwritten by the next
``step``/``reset``: copy them (a rollout buffer does anyway) before stepping
again, and do not write into them: each step clears only the one-hot cells
the previous step set (every other cell is overwritten), which saves zeroing
the whole buffer (about a sixth of a step at B = 8192). A fresh
multi-megabyte output every step costs page faults on the CPU (4 players,
B = 4096: 2.8 instead of 1.8 µs of CPU per decision), so a trainer that
copies into its own storage should use ``copy=False``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

from mauscheln_env.config import RuleConfig
from mauscheln_env.engine import Game, Phase, Role
from mauscheln_env.errors import ConfigError, IllegalActionError, MauschelnError
from mauscheln_env.observation import Observer
from mauscheln_env.rulesets.base import RulesetSpec
from mauscheln_env.rulesets.mauscheln import SPEC as MAUSCHELN
from mauscheln_env.vector import (
    DEAL_NO_PLAY,
    DEAL_SETTLED,
    DEAL_THROW_IN,
    VecReset,
    VecStep,
    VectorEnv,
    check_reset_options,
    deal_orders_from,
    per_env,
)

NO_SEAT = -1
ABSENT = -(1 << 40)
"""Sentinel of an empty trick slot (no card played, no leader yet): so negative that every observation
index computed from it falls below the row's ``pot`` cell, where a ``maximum`` sends it."""
KNOCK_UNDECIDED, KNOCK_YES, KNOCK_NO = 0, 1, 2

KNOCK, DECLARE, GO_WITH, EXCHANGE, PLAY, OVER = (
    int(Phase.KNOCK), int(Phase.DECLARE), int(Phase.GO_WITH), int(Phase.EXCHANGE), int(Phase.PLAY), int(Phase.OVER)
)
UNDECIDED, DECLINED, MAUSCHLER, GOER, OUT = (
    int(Role.UNDECIDED), int(Role.DECLINED), int(Role.MAUSCHLER), int(Role.GOER), int(Role.OUT)
)
_PHASES = (KNOCK, DECLARE, GO_WITH, EXCHANGE, PLAY)
_ROLES = (UNDECIDED, DECLINED, MAUSCHLER, GOER, OUT)

SUPPORTED: dict[str, tuple[RulesetSpec, frozenset[str]]] = {
    "mauscheln": (
        MAUSCHELN,
        frozenset({"stake", "bankroll", "deck_size", "knock", "knock_min_rank", "max_deals", "max_throw_ins",
                   "max_session_deals"}),
    ),
}
"""Ruleset name -> (the rules spec this engine mirrors, the options it implements)."""

_SPEC_FIELDS = ("direction", "hand_size", "deal_pattern", "rank_order", "trick_profile", "stock_policy",
                "named_actions", "bidding", "scoring", "phases", "roles")
"""Spec fields that decide the rules; a config must match the supported spec in every one it has."""


def check_supported(config: RuleConfig) -> None:
    """Raise :class:`ConfigError` unless the batched engine implements ``config`` exactly."""
    if not isinstance(config, RuleConfig):
        raise ConfigError(f"config must be a RuleConfig (see make_config), got {type(config).__name__}")
    supported = "; ".join(f"{name} (options: {', '.join(sorted(opts))})" for name, (_, opts) in SUPPORTED.items())
    entry = SUPPORTED.get(config.ruleset)
    if entry is None:
        raise ConfigError(f"the batched engine does not implement ruleset {config.ruleset!r}; supported: {supported}")
    spec, options = entry
    for name in _SPEC_FIELDS:
        if getattr(config.spec, name, None) != getattr(spec, name, None):
            raise ConfigError(
                f"the batched engine implements {spec.name} with {name}={getattr(spec, name, None)!r}, "
                f"not {getattr(config.spec, name, None)!r}; supported: {supported}"
            )
    if not spec.min_players <= config.num_players <= spec.max_players:
        raise ConfigError(f"num_players={config.num_players} is not supported; supported: "
                          f"{spec.min_players}-{spec.max_players}")
    if config.num_cards + len(config.named_actions) > 63:
        raise ConfigError(f"{config.num_cards} cards and {len(config.named_actions)} named actions do not fit the "
                          "engine's 64-bit action masks")
    for name, value in config.options.items():
        if name in options:
            continue
        default = config.spec.options[name].default if name in config.spec.options else None
        if value != default:
            raise ConfigError(
                f"the batched engine does not implement option {name}={value!r} of {config.ruleset}; "
                f"supported: {supported}"
            )


def _mask(cond: torch.Tensor) -> torch.Tensor:
    """A bool tensor as ``int64`` all ones (True) or zero (False), for :func:`_pick` and ``&``."""
    return cond.to(torch.int64).neg_()


def _pick(m: torch.Tensor, x: torch.Tensor | int, y: torch.Tensor | int) -> torch.Tensor:
    """``x`` where the mask ``m`` (from :func:`_mask`) is set, else ``y``; integer tensors only."""
    return y ^ ((x ^ y) & m)


def _compiled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` through ``torch.compile`` (one graph, static shapes); a failure to compile is a ConfigError."""
    compiled = torch.compile(fn, fullgraph=True, dynamic=False)

    def call(*args: Any) -> Any:
        try:
            return compiled(*args)
        except torch._dynamo.exc.TorchDynamoException as exc:
            raise ConfigError(f"compile=True: torch.compile failed on this machine ({type(exc).__name__}: "
                              f"{str(exc).strip().splitlines()[0]}); allowed: compile=False, or a working torch.compile "
                              "(on the CPU it needs a C++ compiler)") from exc

    return call


class BatchedMauscheln(VectorEnv):
    """``batch_size`` Mauscheln sessions as tensors on ``device`` (see the module docstring).

    ``final_observations=True`` adds ``info["final_index"]`` and
    ``info["final_obs"]`` (every seat's observation of each ended session).
    ``validate=False`` skips the check that every action is in the mask (an
    illegal action then corrupts that session's state silently).

    ``compile=True`` runs the two kernels of a step (applying the actions;
    the mask and observation of every seat to act) through ``torch.compile``
    (fused C++/OpenMP loops on the CPU, Triton on a GPU), with results
    identical to the eager code (tested against the reference engine). The
    first ``reset`` then takes seconds to tens of seconds (cached on disk
    afterwards) and the CPU needs a C++ compiler. Each batch size and player
    count is one compiled variant; torch keeps at most
    ``torch._dynamo.config.recompile_limit`` (8) per process and runs further
    ones eagerly (with a warning from torch).
    """

    def __init__(self, config: RuleConfig, batch_size: int, device: str | torch.device = "cpu",
                 seed: int | None = None, *, final_observations: bool = False, copy: bool = True,
                 validate: bool = True, compile: bool = False) -> None:
        check_supported(config)
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ConfigError(f"batch_size={batch_size!r} is not allowed; allowed: a whole number >= 1")
        for name, flag in (("final_observations", final_observations), ("copy", copy), ("validate", validate),
                           ("compile", compile)):
            if not isinstance(flag, bool):
                raise ConfigError(f"{name}={flag!r} is not allowed; allowed: True or False")
        try:
            self.device = torch.device(device)
            torch.empty(0, device=self.device)
        except (RuntimeError, TypeError) as exc:
            raise ConfigError(f"device {device!r} is not available: {exc}") from exc
        self.config = config
        self.game = game = Game(config)
        self.observer = Observer(game)
        self.state_observer = Observer(game, omniscient=True)
        self.num_envs = batch_size
        self.num_players = config.num_players
        self.num_cards = game.num_cards
        self.num_actions = config.num_actions
        self.obs_size = self.observer.size
        self.state_size = self.state_observer.size
        self.final_observations = final_observations
        self.copy = copy
        self.validate = validate
        self._gen = torch.Generator(device=self.device)
        if seed is None:
            self._gen.seed()
        else:
            self._gen.manual_seed(int(seed))
        self._build_tables()
        self._alloc_state()
        self._mask_t: torch.Tensor | None = None
        self._obs_buf: torch.Tensor | None = None
        self._obs_ones: torch.Tensor | None = None
        """Flat indices of the one-hot cells set in ``_obs_buf`` by the last step (cleared before the next)."""
        self._mask_buf: torch.Tensor | None = None
        self.compiled = compile
        self._acting_step, self._advance_step = self._acting, self._advance
        if compile:
            self._acting_step, self._advance_step = _compiled(self._acting), _compiled(self._advance)

    # ------------------------------------------------------------------ static tables
    def _long(self, values: Any) -> torch.Tensor:
        return torch.as_tensor(np.asarray(values, dtype=np.int64), device=self.device)

    def _build_tables(self) -> None:
        g, dev = self.game, self.device
        B, n, N, H, T = self.num_envs, g.n, g.num_cards, g.hand_size, g.num_tricks
        A = self.num_actions
        self._bar = torch.arange(B, dtype=torch.int64, device=dev)
        self._row_n = self._bar * n  # flat offset of row b in a [B, n] tensor
        self._row_N = self._bar * N
        self._row_tc = self._bar * (T * n + 1)
        self._row_tl = self._bar * (T + 1)
        self._seat_ar = self._long(range(n))
        self._seat_bit = self._long([1 << s for s in range(n)])
        self._hand_ar = self._long(range(H))
        # Card tables (index N: a named action, no card, bit 0).
        self._card_bit = self._long([1 << c for c in range(N)] + [0])
        self._suit_of = self._long(list(g.deck.suit) + [0])
        self._suit_bits = self._long(g.deck.suit_mask)
        if any(t.trump_mask != g.deck.suit_mask[t.trump_suit] or tuple(t.eff_suit) != tuple(g.deck.suit)
               for t in g.tables):
            raise ConfigError("the batched engine supports plain suit trumps only (no permanent trumps)")
        self._beats = self._long([b for t in g.tables for b in t.beats])  # beats[trump_suit * N + winning card]
        self._knock_ok = torch.tensor(
            [bool(g.options.knock) and g.rank_pos[c] <= g.spec.rank_order.index(g.options.knock_min_rank)
             for c in range(N)], device=dev
        )
        # Seat tables over n-bit seat masks.
        S = 1 << n
        nxt = np.zeros((n, S), dtype=np.int64)
        order = np.zeros((n, S, n), dtype=np.int64)
        for s in range(n):
            for m in range(S):
                after = [(s + k) % n for k in range(1, n + 1) if m >> ((s + k) % n) & 1]
                nxt[s, m] = after[0] if after else s
                from_s = [(s + k) % n for k in range(n) if m >> ((s + k) % n) & 1]
                order[s, m, :len(from_s)] = from_s
        self._next = self._long(nxt.reshape(-1))
        self._order = self._long(order.reshape(n * S, n))
        self._pop = self._long([bin(m).count("1") for m in range(S)])
        # Dealing: slot of deck position p when L seats are dealt in (index in the order from forehand,
        # n for the trump card, n + 1 for the stock), walking the ruleset's deal pattern.
        slot = np.full((n + 1, N), n + 1, dtype=np.int64)
        trump_pos = np.zeros(n + 1, dtype=np.int64)
        dealt = np.zeros(n + 1, dtype=np.int64)
        for L in range(1, n + 1):
            p = 0
            for step in g.deal_pattern:
                if step == "T":
                    slot[L, p] = n
                    trump_pos[L] = p
                    p += 1
                else:
                    for i in range(L):
                        slot[L, p:p + step] = i
                        p += step
            dealt[L] = p
        self._deal_slot = self._long(slot)
        self._trump_pos = self._long(trump_pos)
        self._dealt = self._long(dealt)
        # Named actions: legal per phase as bits over the action ids (DONE is decided by the marks).
        ids = g.action_ids
        self._a_knock, self._a_no_knock = ids["knock"], ids["no_knock"]
        self._a_mauscheln, self._a_pass, self._a_go, self._a_done = ids["mauscheln"], ids["pass"], ids["go"], ids["done"]
        named = [0] * (OVER + 1)
        named[KNOCK] = 1 << self._a_knock | 1 << self._a_no_knock
        named[DECLARE] = 1 << self._a_mauscheln | 1 << self._a_pass
        named[GO_WITH] = 1 << self._a_go | 1 << self._a_pass
        self._named_bits = self._long(named)
        self._done_bit = 1 << self._a_done
        # Bit masks -> per-position values, one byte at a time.
        bits = (torch.arange(256)[:, None] >> torch.arange(8)) & 1
        self._lut_f = bits.to(torch.float32).to(dev)
        self._lut_b = bits.to(torch.bool).to(dev)
        self._shift_N = 8 * self._long(range((N + 7) // 8))
        self._card_ar = self._long(range(N))
        self._action_ar = self._long(range(A))
        self._shift_A = 8 * self._long(range((A + 7) // 8))
        # Observation layouts and scales (as Observer computes them, in float64).
        pieces = self.observer.by_name  # the scales of the schema's codecs: chips, pot, progress, tricks won
        self._number_scale = torch.tensor(
            [pieces["chips"].codec.scale] * n + [pieces["pot"].codec.scales[0], pieces["progress"].codec.scales[0]]
            + [pieces["tricks_won"].codec.scale] * n, dtype=torch.float64, device=dev)
        self._layout = {False: self._layout_for(self.observer), True: self._layout_for(self.state_observer)}
        self._row_cache: dict[tuple[bool, int], dict[str, torch.Tensor]] = {}
        self._rows(False, B)  # filled here, so that compiled code only reads the cache

    def _layout_for(self, observer: Observer) -> dict[str, Any]:
        g = self.game
        n, N, T = g.n, g.num_cards, g.num_tricks
        o = observer.offsets
        names = [p.name for p in observer.pieces]
        shapes = {p.name: p.shape for p in observer.pieces}
        if names[4:7] != ["chips", "pot", "progress"]:
            raise RuntimeError("the observation layout changed: chips, pot, progress must be adjacent")
        if not o["pot"] < min(o["trick_cards"], o["trick_leader"]):
            raise RuntimeError("the observation layout changed: the pot cell must precede the trick pieces")
        cards = ["hands", "discards", "drawn", "stock", "dead"] if observer.omniscient else ["hand", "own_discards",
                                                                                              "own_drawn"]
        i = names.index(cards[0])
        if names[i:i + len(cards) + 1] != [*cards, "trump_card"]:
            raise RuntimeError(f"the observation layout changed: {cards} and trump_card must be adjacent")
        # The one-hots index phases and roles by their enum values: the labels of the pieces' codecs
        # (the schema's order) must agree with those values.
        for name, values, enum in (("phase", _PHASES, Phase), ("roles", _ROLES, Role)):
            order = observer.by_name[name].codec.labels
            if tuple(order[:len(values)]) != tuple(enum(v).name.lower() for v in values):
                raise RuntimeError(f"the observation's {name} one-hot order {order} is not the engine's enum order")
        if shapes["phase"][0] < len(_PHASES) or shapes["roles"][1] < len(_ROLES):
            raise RuntimeError("the observation layout changed: phase or roles one-hot too small")
        seats = self._seat_ar
        return {
            "size": observer.size,
            "dummy": o["pot"],  # where absent one-hot entries point: the pot cell is written afterwards
            "phase": o["phase"], "to_act": o["to_act"], "dealer": o["dealer"], "live": o["live"] + seats,
            "roles": o["roles"] + seats * shapes["roles"][1], "exchanged": o["exchanged"] + seats * shapes["exchanged"][1],
            "trump_suit": o["trump_suit"], "taken": o["trump_taken_by"], "knock": o["knock"],
            "leader": o["trick_leader"] + self._long(range(T)) * n,
            "tcards": (o["trick_cards"] + self._long(range(T)) * (n * N))[:, None],
            "chips": o["chips"], "won": o["tricks_won"], "cards": o[cards[0]],
        }

    # ------------------------------------------------------------------ state
    def _alloc_state(self) -> None:
        B, n, N, T = self.num_envs, self.num_players, self.num_cards, self.game.num_tricks
        dev = self.device

        def z(*shape: int) -> torch.Tensor:
            return torch.zeros(*shape, dtype=torch.int64, device=dev)

        self.chips, self.deal_start_chips, self.pot = z(B, n), z(B, n), z(B)
        self.alive_bits, self.dealer, self.deals_settled, self.throw_in_streak = z(B), z(B), z(B), z(B)
        self.phase, self.to_act = torch.full((B,), OVER, dtype=torch.int64, device=dev), z(B)
        self.hands, self.discards, self.drawn = z(B, n), z(B, n), z(B, n)
        self.dealer_blind = torch.zeros(B, dtype=torch.bool, device=dev)
        self.blind, self.dead = z(B), z(B)
        self.deck_order, self.stock_pos, self.stock_bits = z(B, N), z(B), z(B)
        self.trump_card, self.trump_suit, self.trump_holder = z(B), z(B), z(B)
        self.knocked, self.roles, self.exchanged, self.mauschler, self.goers = z(B), z(B, n), z(B, n), z(B), z(B)
        self.marked, self.xmin, self.xcap = z(B), z(B), z(B)
        self.trick_cards = torch.full((B, T * n + 1), ABSENT, dtype=torch.int64, device=dev)
        self.trick_leader = torch.full((B, T + 1), ABSENT, dtype=torch.int64, device=dev)
        self.tricks_done, self.trick_count = z(B), z(B)
        self.win_seat, self.win_card, self.led_suit = z(B), z(B), z(B)
        self.tricks_won = z(B, n)

    def _succ(self, seat: torch.Tensor, seats: torch.Tensor) -> torch.Tensor:
        """First seat of the seat mask ``seats`` after ``seat`` clockwise (``succ`` over the live seats)."""
        return self._next.index_select(0, (seat << self.num_players) + seats)

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None, *,
              deals: Any = None) -> VecReset:
        """Start ``batch_size`` new sessions. ``deals`` is a shortcut for ``options["deals"]``."""
        opts = check_reset_options(options)
        if deals is not None:
            opts["deals"] = deals
        if seed is not None:
            self._gen.manual_seed(int(seed))
        B, n, dev = self.num_envs, self.num_players, self.device

        def tensor(x: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(x).to(dev)

        chips = tensor(per_env(opts["chips"], B, n, "chips", 1)) if "chips" in opts else None
        pot = tensor(per_env(opts["pot"], B, None, "pot", 0)) if "pot" in opts else None
        dealer = tensor(per_env(opts["dealer"], B, None, "dealer", 0, n - 1)) if "dealer" in opts else None
        orders = None
        if "deals" in opts:
            if dealer is None:
                dealer = torch.randint(n, (B,), generator=self._gen, device=dev)
            orders = tensor(deal_orders_from(self.game, opts["deals"], dealer.cpu().numpy()))
        self._new_sessions(self._bar, dealer)
        if chips is not None:
            self.chips.copy_(chips)
        if pot is not None:
            self.pot.copy_(pot)
        self._start_deal(self._bar, orders)
        obs, mask = self._outputs(fresh=True)
        return VecReset(obs, mask, self.to_act.clone())

    def _new_sessions(self, idx: torch.Tensor, dealer: torch.Tensor | None = None) -> None:
        """Fresh session bookkeeping for sessions ``idx`` (before their first deal); the dealer by lot."""
        if dealer is None:
            dealer = torch.randint(self.num_players, (idx.shape[0],), generator=self._gen, device=self.device)
        self.chips.index_fill_(0, idx, self.config.bankroll)
        self.pot.index_fill_(0, idx, 0)
        self.alive_bits.index_fill_(0, idx, (1 << self.num_players) - 1)
        self.dealer.index_copy_(0, idx, dealer)
        self.deals_settled.index_fill_(0, idx, 0)
        self.throw_in_streak.index_fill_(0, idx, 0)

    def _start_deal(self, idx: torch.Tensor, orders: torch.Tensor | None = None) -> None:
        """Ante and deal for sessions ``idx`` (``Game._start_deal``); ``orders`` fixes the deck orders."""
        k = idx.shape[0]
        if k == 0:
            return
        n, N, dev = self.num_players, self.num_cards, self.device
        dealer = self.dealer.index_select(0, idx)
        alive = self.alive_bits.index_select(0, idx)
        chips = self.chips.index_select(0, idx)
        self.deal_start_chips.index_copy_(0, idx, chips)
        ante = chips.gather(1, dealer[:, None]).clamp(max=self.config.stake)
        self.chips.index_copy_(0, idx, chips.scatter_add(1, dealer[:, None], -ante))
        self.pot.index_add_(0, idx, ante[:, 0])
        if orders is None:
            orders = torch.rand(k, N, generator=self._gen, device=dev).argsort(dim=1)
        self.deck_order.index_copy_(0, idx, orders)
        L = self._pop.index_select(0, alive)
        forehand = self._succ(dealer, alive)
        seats = self._order.index_select(0, (forehand << n) + alive)  # live seats from forehand
        seats = torch.cat([seats, torch.full((k, 2), n, dtype=torch.int64, device=dev)], 1)
        seats[:, -1] = n + 1
        dest = seats.gather(1, self._deal_slot.index_select(0, L))  # [k, N]: seat, n (trump) or n + 1 (stock)
        sets = torch.zeros(k, n + 2, dtype=torch.int64, device=dev)
        sets.scatter_add_(1, dest, self._card_bit.index_select(0, orders.view(-1)).view(k, N))
        self.hands.index_copy_(0, idx, sets[:, :n].contiguous())
        self.stock_bits.index_copy_(0, idx, sets[:, n + 1].contiguous())
        trump = orders.gather(1, self._trump_pos.index_select(0, L)[:, None])[:, 0]
        self.trump_card.index_copy_(0, idx, trump)
        self.trump_suit.index_copy_(0, idx, self._suit_of.index_select(0, trump))
        self.stock_pos.index_copy_(0, idx, self._dealt.index_select(0, L))
        for t in (self.discards, self.drawn, self.roles, self.exchanged, self.tricks_won, self.blind, self.dead,
                  self.knocked, self.goers, self.marked, self.xmin, self.xcap, self.tricks_done, self.trick_count,
                  self.win_seat, self.win_card, self.led_suit):
            t.index_fill_(0, idx, 0)
        self.trump_holder.index_fill_(0, idx, NO_SEAT)
        self.mauschler.index_fill_(0, idx, NO_SEAT)
        self.trick_leader.index_fill_(0, idx, ABSENT)
        self.trick_cards.index_fill_(0, idx, ABSENT)
        knock = self._knock_ok.index_select(0, trump)
        self.phase.index_copy_(0, idx, torch.where(knock, KNOCK, DECLARE))
        self.to_act.index_copy_(0, idx, torch.where(knock, dealer, forehand))
        self.dealer_blind.index_copy_(0, idx, knock)

    # ------------------------------------------------------------------ step
    def step(self, actions: torch.Tensor) -> VecStep:
        """One action per session; see :class:`~mauscheln_env.vector.VectorEnv`."""
        if self._mask_t is None:
            raise MauschelnError("call reset() before step()")
        a = self._check_actions(actions)
        B, n = self.num_envs, self.num_players
        # A seat saying "done" draws first (Game._finish_exchange), on the few sessions concerned: nothing
        # the rest of the step changes for them is read by the draw, and the next exchange's cap needs the stock.
        self._draw(((self.phase == EXCHANGE) & (a == self._a_done)).nonzero()[:, 0])
        new = self._advance_step(a)
        settled, no_play, throw_in, deal_end, parts = (new.pop(k) for k in ("settled", "no_play", "throw_in",
                                                                               "deal_end", "parts"))
        for name, value in new.items():
            setattr(self, name, value)

        # Deals that ended: settlement, session end, auto-reset, the next deal.
        ended = deal_end.nonzero()[:, 0]
        rewards = torch.zeros(B, n, dtype=torch.float32, device=self.device)
        kind = torch.zeros(B, dtype=torch.int64, device=self.device)
        terminated = torch.zeros(B, dtype=torch.bool, device=self.device)
        truncated = torch.zeros(B, dtype=torch.bool, device=self.device)
        info: dict[str, torch.Tensor] = {"deal_kind": kind, "new_deal": deal_end}
        restart = ended[:0]
        if ended.shape[0]:
            restart = self._end_deals(ended, settled, no_play, throw_in, parts, rewards, kind, terminated, truncated)
        final_chips = self.chips.index_select(0, restart)
        if self.final_observations:
            info["final_index"] = restart
            info["final_obs"] = self._encode(self._seat_ar.repeat(restart.shape[0]), rows=restart.repeat_interleave(n)
                                             ).view(restart.shape[0], n, self.obs_size)
        if restart.shape[0]:
            self._new_sessions(restart)
        self._start_deal(ended)
        info["final_chips"] = self.chips.clone().index_copy_(0, restart, final_chips)
        obs, mask = self._outputs()
        return VecStep(obs, mask, self.to_act.clone(), rewards, terminated, truncated, info)

    def _advance(self, a: torch.Tensor) -> dict[str, torch.Tensor]:
        """The state after every session applies its action ``a`` (``Game.apply``), as new tensors.

        A pure function of the state (after :meth:`_draw`): it returns the fields that change, by name,
        and the flags of the deals that end here (``settled``, ``no_play``, ``throw_in``, ``deal_end``)
        with the participants (``parts``) their settlement needs. ``compile`` fuses it.
        """
        n, N, T, H = self.num_players, self.num_cards, self.game.num_tricks, self.game.hand_size
        seat = self.to_act
        fs = self._row_n + seat  # flat index of (session, acting seat) in [B, n] tensors
        ph = self.phase
        p_knock, p_decl, p_go, p_x, play = ph == KNOCK, ph == DECLARE, ph == GO_WITH, ph == EXCHANGE, ph == PLAY
        is_pass = a == self._a_pass
        mark = p_x & (a < N)
        x_done = p_x & (a == self._a_done)
        go_pass = p_go & is_pass
        go_go = p_go & (a == self._a_go)
        decl_pass = p_decl & is_pass
        become = (p_knock & (a == self._a_knock)) | (p_decl & (a == self._a_mauscheln))
        no_knock = p_knock & (a == self._a_no_knock)
        m_play, m_mark, m_go_pass, m_become = _mask(play), _mask(mark), _mask(go_pass), _mask(become)
        m_go_go = _mask(go_go)
        bit = self._card_bit.index_select(0, a.clamp(max=N))  # 0 for a named action
        hand = self.hands.view(-1).index_select(0, fs)

        # Knocking, declaring, going with (Game.apply: KNOCK, DECLARE, GO_WITH).
        role = self.roles.view(-1).index_select(0, fs)
        m_decl_pass = _mask(decl_pass)
        target = (MAUSCHLER & m_become) | (GOER & m_go_go) | (OUT & m_go_pass) | (DECLINED & m_decl_pass)
        changed = m_become | m_go_go | m_go_pass | m_decl_pass
        roles = self.roles.view(-1).index_add(0, fs, (target - role) & changed).view_as(self.roles)
        mauschler = _pick(m_become, seat, self.mauschler)
        knocked = _pick(_mask(p_knock), KNOCK_NO - become.to(torch.int64), self.knocked)
        dealer_blind = self.dealer_blind & ~no_knock
        dead = self.dead | (hand & m_go_pass)
        goers = self.goers | (self._seat_bit.index_select(0, seat) & m_go_go)
        next_live = self._succ(seat, self.alive_bits)
        go_over = p_go & (next_live == mauschler)
        no_play = go_over & (goers == 0)
        start_x = go_over & ~no_play
        parts = goers | self._seat_bit.index_select(0, mauschler.clamp(min=0))

        # Exchanging: a card marks it.
        marked = self.marked + mark
        discards = self.discards.view(-1).index_add(0, fs, bit & m_mark).view_as(self.discards)

        # Playing a card (Game._play).
        first = self.trick_count == 0
        m_lead = _mask(play & first)
        led_suit = _pick(m_lead, self._suit_of.index_select(0, a.clamp(max=N)), self.led_suit)
        beaten = (self._beats.index_select(0, self.trump_suit * N + self.win_card) & bit) != 0
        m_take = _mask(play & (first | beaten))
        win_card = _pick(m_take, a, self.win_card)
        win_seat = _pick(m_take, seat, self.win_seat)
        done_tricks = self.tricks_done
        trick_cards = self.trick_cards.view(-1).index_copy(
            0, self._row_tc + _pick(m_play, done_tricks * n + seat, T * n), a).view_as(self.trick_cards)
        trick_leader = self.trick_leader.view(-1).index_copy(
            0, self._row_tl + _pick(m_lead, done_tricks, T), seat).view_as(self.trick_leader)
        count = self.trick_count + play
        trick_full = play & (count == self._pop.index_select(0, parts))
        tricks_won = self.tricks_won.view(-1).index_add(
            0, self._row_n + win_seat, trick_full.to(torch.int64)).view_as(self.tricks_won)
        m_full = _mask(trick_full)
        tricks_done = done_tricks + trick_full
        settled = trick_full & (tricks_done == T)

        # Cards leaving the acting hand: a marked or played card, a passer's dead hand.
        hands = self.hands.view(-1).index_add(
            0, fs, -((bit & (m_mark | m_play)) | (hand & m_go_pass))).view_as(self.hands)

        # Who acts next, in which phase.
        next_part = self._succ(seat, parts)
        x_over = x_done & (next_part == mauschler)
        x_next = x_done & ~x_over
        m_start_x, m_x_over = _mask(start_x), _mask(x_over)
        to_act = _pick(_mask(p_knock | p_decl | p_go), next_live, seat)
        to_act = _pick(m_start_x | m_x_over, mauschler, to_act)
        to_act = _pick(_mask(x_next), next_part, to_act)
        to_act = _pick(m_play, _pick(m_full, win_seat, next_part), to_act)
        phase = _pick(m_become, GO_WITH, ph)
        phase = _pick(_mask(no_knock), DECLARE, phase)
        phase = _pick(m_start_x, EXCHANGE, phase)
        phase = _pick(m_x_over, PLAY, phase)

        # Opening an exchange (Game._open_exchange); the knocking dealer looks at his hand.
        opened = start_x | x_next
        knocker_opens = opened & (knocked == KNOCK_YES) & (to_act == self.dealer)
        m_open = _mask(opened)
        throw_in = decl_pass & (seat == self.dealer)
        return {
            "roles": roles, "mauschler": mauschler, "knocked": knocked, "dead": dead, "goers": goers,
            "discards": discards, "led_suit": led_suit, "win_card": win_card, "win_seat": win_seat,
            "trick_cards": trick_cards, "trick_leader": trick_leader, "trick_count": count & ~m_full,
            "tricks_done": tricks_done, "tricks_won": tricks_won, "hands": hands, "to_act": to_act, "phase": phase,
            "dealer_blind": dealer_blind & ~knocker_opens,
            "marked": marked & ~m_open,
            "xmin": _pick(m_open, knocker_opens.to(torch.int64), self.xmin),
            "xcap": _pick(m_open, (N - self.stock_pos + knocker_opens).clamp(max=H), self.xcap),
            "blind": self.blind & ~m_x_over,  # every goer has exchanged: the knocker sees his blind cards
            "settled": settled, "no_play": no_play, "throw_in": throw_in,
            "deal_end": settled | no_play | throw_in, "parts": parts,
        }

    def _draw(self, idx: torch.Tensor) -> None:
        """Finish the exchanges of sessions ``idx`` (their seat said ``done``): draw, record, reveal."""
        if idx.shape[0] == 0:
            return
        N, H = self.num_cards, self.game.hand_size
        seat = self.to_act.index_select(0, idx)
        k = self.marked.index_select(0, idx)
        knocker = (self.knocked.index_select(0, idx) == KNOCK_YES) & (seat == self.dealer.index_select(0, idx))
        ndraw = k - knocker.to(torch.int64)  # a knocker gets the trump card plus k - 1 blind cards
        start = self.stock_pos.index_select(0, idx)
        pos = (start[:, None] + self._hand_ar).clamp(max=N - 1)
        cards = self.deck_order.index_select(0, idx).gather(1, pos)
        got = (self._card_bit.index_select(0, cards.view(-1)).view(-1, H) & _mask(self._hand_ar < ndraw[:, None])).sum(1)
        self.stock_pos.index_add_(0, idx, ndraw)
        self.stock_bits.index_add_(0, idx, -got)
        m_knocker = _mask(knocker)
        got_all = got | (self._card_bit.index_select(0, self.trump_card.index_select(0, idx)) & m_knocker)
        fs = self._row_n.index_select(0, idx) + seat
        self.hands.view(-1).index_add_(0, fs, got_all)
        self.drawn.view(-1).index_add_(0, fs, got_all)
        self.exchanged.view(-1).index_add_(0, fs, k + 1)
        self.blind.index_copy_(0, idx, _pick(m_knocker, got, self.blind.index_select(0, idx)))
        self.trump_holder.index_copy_(0, idx, _pick(m_knocker, seat, self.trump_holder.index_select(0, idx)))

    def _end_deals(self, idx: torch.Tensor, settled: torch.Tensor, no_play: torch.Tensor, throw_in: torch.Tensor,
                   parts: torch.Tensor, rewards: torch.Tensor, kind: torch.Tensor, terminated: torch.Tensor,
                   truncated: torch.Tensor) -> torch.Tensor:
        """Settle the deals of sessions ``idx`` (RULES.md §3.1), eliminate, end sessions (§3.5).

        Fills ``rewards``, ``kind``, ``terminated`` and ``truncated`` for those sessions, marks ended
        sessions OVER, moves the dealer on in the others, and returns the ended sessions.
        """
        where = torch.where
        T, cfg = self.game.num_tricks, self.config
        settled, no_play, throw_in = settled[idx], no_play[idx], throw_in[idx]
        pot = self.pot.index_select(0, idx)
        chips = self.chips.index_select(0, idx)
        won = self.tricks_won.index_select(0, idx)
        mauschler = self.mauschler.index_select(0, idx)
        part = (((parts.index_select(0, idx)[:, None] >> self._seat_ar) & 1) != 0) & settled[:, None]
        credit = where(part, won * (pot // T)[:, None], 0)  # credits first (D6) ...
        chips += credit
        need = where(self.roles.index_select(0, idx) == MAUSCHLER, 2, 1)
        owed = where(part, pot[:, None] * (need - won).clamp(min=0), 0)  # ... then a bete of P per missing trick
        paid = torch.minimum(owed, chips)
        chips -= paid
        chips.scatter_add_(1, mauschler.clamp(min=0)[:, None], where(no_play, pot, 0)[:, None])  # nobody went with
        pot = where(no_play, 0, pot - credit.sum(1) + paid.sum(1))
        rewards.index_copy_(0, idx, (chips - self.deal_start_chips.index_select(0, idx)).to(rewards.dtype))
        kind.index_copy_(0, idx, where(settled, DEAL_SETTLED, where(no_play, DEAL_NO_PLAY, DEAL_THROW_IN)))
        counted = settled | no_play
        deals = self.deals_settled.index_select(0, idx) + counted
        streak = where(counted, 0, self.throw_in_streak.index_select(0, idx) + throw_in)
        alive = self.alive_bits.index_select(0, idx) & ((chips > 0).to(torch.int64) * self._seat_bit).sum(1)
        done = self._pop.index_select(0, alive) < 3
        if cfg.max_deals is not None:
            done |= deals >= cfg.max_deals
        cut = ~done & ((streak >= cfg.max_throw_ins) | (deals >= cfg.max_session_deals))
        terminated.index_copy_(0, idx, done)
        truncated.index_copy_(0, idx, cut)
        over = done | cut
        dealer = self.dealer.index_select(0, idx)
        self.dealer.index_copy_(0, idx, where(over, dealer, self._succ(dealer, alive)))
        self.phase.index_copy_(0, idx, where(over, OVER, self.phase.index_select(0, idx)))
        self.chips.index_copy_(0, idx, chips)
        self.pot.index_copy_(0, idx, pot)
        self.deals_settled.index_copy_(0, idx, deals)
        self.throw_in_streak.index_copy_(0, idx, streak)
        self.alive_bits.index_copy_(0, idx, alive)
        return idx[over]

    def _check_actions(self, actions: torch.Tensor) -> torch.Tensor:
        if not isinstance(actions, torch.Tensor):
            actions = torch.as_tensor(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.is_floating_point or actions.dtype == torch.bool:
            raise IllegalActionError(f"actions must be an integer tensor of shape ({self.num_envs},), "
                                     f"got {tuple(actions.shape)} {actions.dtype}")
        a = actions.to(device=self.device, dtype=torch.int64)
        if self.validate:
            A = self.num_actions
            flat = self._bar * A + a.clamp(0, A - 1)
            ok = (a >= 0) & (a < A) & self._mask_t.view(-1).index_select(0, flat)
            if not bool(ok.all()):
                self._raise_illegal(a, ok)
        return a

    def _raise_illegal(self, a: torch.Tensor, ok: torch.Tensor) -> None:
        problems = []
        for b in (~ok).nonzero()[:, 0][:5].tolist():
            legal = ", ".join(self.game.action_to_str(x) for x in self._mask_t[b].nonzero()[:, 0].tolist())
            act = int(a[b])
            shown = self.game.action_to_str(act) if 0 <= act < self.num_actions else repr(act)
            problems.append(f"session {b}: action {shown} is not legal for seat {int(self.to_act[b])} in phase "
                            f"{Phase(int(self.phase[b])).name.lower()}; legal: {legal}")
        raise IllegalActionError("; ".join(problems))

    # ------------------------------------------------------------------ masks and observations
    def use_buffers(self, obs: torch.Tensor, mask: torch.Tensor) -> None:
        """Write every later ``obs`` and ``mask`` into these tensors (``float32[B, D]``, ``bool[B, A]``).

        They may be row blocks of larger (shared-memory) tensors: that is how the workers of
        :class:`~mauscheln_env.vector.SubprocVectorEnv` fill one output; ``step`` and ``reset`` then
        return them, as with ``copy=False``.
        """
        B, D, A = self.num_envs, self.obs_size, self.num_actions
        if (obs.shape != (B, D) or obs.dtype != torch.float32 or mask.shape != (B, A) or mask.dtype != torch.bool
                or obs.device != self.device or mask.device != self.device
                or not obs.is_contiguous() or not mask.is_contiguous()):
            raise MauschelnError(f"use_buffers needs contiguous float32[{B}, {D}] and bool[{B}, {A}] on {self.device}")
        self._obs_buf, self._mask_buf, self.copy = obs, mask, False
        self._obs_ones = None

    def _outputs(self, fresh: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Mask and observation of the seat to act; keeps the mask to validate the next actions.

        Into its own buffer (``copy=False``) the observation is written
        incrementally: only the one-hot cells the previous step set are cleared,
        because every other cell (numbers, card sets) is overwritten anyway.
        ``fresh`` (every reset) clears the whole buffer instead.
        """
        if self.copy:
            out = torch.zeros(self.num_envs, self.obs_size, dtype=torch.float32, device=self.device)
        else:
            if self._obs_buf is None:
                self._obs_buf = torch.empty(self.num_envs, self.obs_size, dtype=torch.float32, device=self.device)
            out = self._obs_buf
            if fresh or self._obs_ones is None:
                out.zero_()
            else:
                out.view(-1).index_fill_(0, self._obs_ones.view(-1), 0.0)
        mask, ones, numbers = self._acting_step(out)
        out.view(-1).index_fill_(0, ones.view(-1), 1.0)
        self._write_numbers(out, numbers)
        self._obs_ones = None if self.copy else ones
        mask = mask.view(torch.bool)  # compiled code makes uint8 (its bool stores are slow on the CPU)
        if self._mask_buf is not None:
            mask = self._mask_buf.copy_(mask)
        self._mask_t = mask
        return out, mask.clone() if self.copy else mask

    def _acting(self, out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Legal mask and observation parts of every seat to act (``compile`` fuses this).

        Writes the card sets into ``out`` (their cells are disjoint from the one-hots and numbers) and
        returns the mask, the one-hot indices and the numbers (see :meth:`_encode_parts`).
        """
        ones, numbers, masks = self._encode_parts(self.to_act, None, False, True)
        self._write_cards(out, masks)
        return self._legal_mask(), ones, numbers

    def _legal_mask(self) -> torch.Tensor:
        """``bool[B, A]``: the legal actions of the seat to act (``Game.legal_actions``)."""
        N, phase = self.num_cards, self.phase
        hand = self.hands.view(-1).index_select(0, self._row_n + self.to_act)
        beats = self._beats.index_select(0, self.trump_suit * N + self.win_card)
        follow = hand & self._suit_bits.index_select(0, self.led_suit)
        trumps = hand & self._suit_bits.index_select(0, self.trump_suit)
        follow_beat, trump_beat = follow & beats, trumps & beats
        # legal_follow, profile M: follow and beat, else follow; else trump and beat, else trump; else anything.
        answer = _pick(_mask(trumps != 0), _pick(_mask(trump_beat != 0), trump_beat, trumps), hand)
        answer = _pick(_mask(follow != 0), _pick(_mask(follow_beat != 0), follow_beat, follow), answer)
        cards = _pick(_mask(self.trick_count == 0), hand, answer) & _mask(phase == PLAY)
        exchanging = phase == EXCHANGE
        cards |= hand & _mask(exchanging & (self.marked < self.xcap))
        legal = cards | self._named_bits.index_select(0, phase) | (
            self._done_bit & _mask(exchanging & (self.marked >= self.xmin)))
        if torch.compiler.is_compiling():  # fused: the bits by shifting, as uint8 (the caller views it as bool)
            return ((legal[:, None] >> self._action_ar) & 1).to(torch.uint8)
        return self._expand(legal[:, None], self._lut_b, self._shift_A, self.num_actions)[:, 0].contiguous()

    def _expand(self, masks: torch.Tensor, lut: torch.Tensor, shifts: torch.Tensor, width: int) -> torch.Tensor:
        """Bit masks ``int64[M, K]`` -> ``[M, K, width]`` values (bit i -> position i) through a byte table."""
        M, K = masks.shape
        by = ((masks[:, :, None] >> shifts) & 255).view(-1)
        return lut.index_select(0, by).view(M, K, shifts.shape[0] * 8)[:, :, :width]

    def observe(self, seats: torch.Tensor | int) -> torch.Tensor:
        """``float32[B, D]``: ``Observer.encode(state, seat)`` for one seat per session (or one seat for all)."""
        if self._mask_t is None:
            raise MauschelnError("call reset() first")
        me = torch.as_tensor(seats, device=self.device).to(torch.int64).expand(self.num_envs).contiguous()
        if bool(((me < 0) | (me >= self.num_players)).any()):
            raise MauschelnError(f"seats must lie in 0..{self.num_players - 1}, got {seats!r}")
        return self._encode(me)

    def state(self) -> torch.Tensor:
        """``float32[B, state_size]``: ``Observer(game, omniscient=True).encode`` of every session."""
        if self._mask_t is None:
            raise MauschelnError("call reset() first")
        return self._encode(torch.zeros(self.num_envs, dtype=torch.int64, device=self.device), omniscient=True)

    def _rows(self, omniscient: bool, M: int) -> dict[str, torch.Tensor]:
        """Flat offsets of the one-hot pieces for M observation rows (cached for the whole batch)."""
        key = (omniscient, M)
        cached = self._row_cache.get(key)
        if cached is not None:
            return cached
        lay = self._layout[omniscient]
        row = torch.arange(M, dtype=torch.int64, device=self.device) * lay["size"]
        r2 = row[:, None]
        rows = {
            "dummy": row + lay["dummy"], "dummy2": (row + lay["dummy"])[:, None],
            "phase": row + lay["phase"], "to_act": row + lay["to_act"], "dealer": row + lay["dealer"],
            "trump_suit": row + lay["trump_suit"], "taken": row + lay["taken"], "knock": row + lay["knock"] - 1,
            "live": r2 + lay["live"], "roles": r2 + lay["roles"], "exchanged": r2 + lay["exchanged"],
            "leader": r2 + lay["leader"], "tcards": r2[:, :, None] + lay["tcards"],
            "seat_rows": torch.arange(M, dtype=torch.int64, device=self.device)[:, None] * self.num_players,
        }
        if M == self.num_envs:
            self._row_cache[key] = rows
        return rows

    def _encode(self, me: torch.Tensor, rows: torch.Tensor | None = None, omniscient: bool = False) -> torch.Tensor:
        """Observations of seats ``me`` (one per row) of sessions ``rows`` (default: every session in order)."""
        out = torch.zeros(me.shape[0], self._layout[omniscient]["size"], dtype=torch.float32, device=self.device)
        ones, numbers, masks = self._encode_parts(me, rows, omniscient, False)
        out.view(-1).index_fill_(0, ones.view(-1), 1.0)
        self._write_numbers(out, numbers, omniscient)
        self._write_cards(out, masks, omniscient)
        return out

    def _write_numbers(self, out: torch.Tensor, numbers: torch.Tensor, omniscient: bool = False) -> None:
        """Chips, pot and progress, then tricks won (after the one-hots: the pot cell is their dummy cell)."""
        n, lay = self.num_players, self._layout[omniscient]
        o, w = lay["chips"], lay["won"]
        out[:, o:o + n + 2] = numbers[:, :n + 2]
        out[:, w:w + n] = numbers[:, n + 2:]

    def _write_cards(self, out: torch.Tensor, masks: torch.Tensor, omniscient: bool = False) -> None:
        """The card sets ``int64[M, K]`` (bit masks) as 0/1 floats into their cells of ``out``."""
        M, K = masks.shape
        N, o = self.num_cards, self._layout[omniscient]["cards"]
        if torch.compiler.is_compiling():  # fused: the bits by shifting, straight into the output
            cards = ((masks[:, :, None] >> self._card_ar) & 1).to(torch.float32)
        else:  # eager: one lookup of 8 floats per byte beats shifting every bit
            cards = self._expand(masks, self._lut_f, self._shift_N, N)
        out[:, o:o + K * N].view(M, K, N).copy_(cards)

    def _encode_parts(self, me: torch.Tensor, rows: torch.Tensor | None, omniscient: bool,
                      acting: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """What an observation holds, as a pure function of the state.

        Returns the flat indices of every one-hot 1 (``int64[M, W]``, laid out row by row, so that setting
        and clearing them walks the buffer once), the numbers (``float32[M, 2n + 2]``: chips, pot, progress,
        tricks won) and the card sets as bit masks (``int64[M, K]``).
        """
        def sel(t: torch.Tensor) -> torch.Tensor:
            return t if rows is None else t.index_select(0, rows)

        n, N, T = self.num_players, self.num_cards, self.game.num_tricks
        M = me.shape[0]
        r = self._rows(omniscient, M)
        phase, dealer, holder, knocked = sel(self.phase), sel(self.dealer), sel(self.trump_holder), sel(self.knocked)
        me2 = me[:, None]

        def rel(seat: torch.Tensor, me: torch.Tensor) -> torch.Tensor:  # (seat - me) mod n, for seat >= 0
            d = seat - me
            return d + (n & (d >> 63))

        rot = me2 + self._seat_ar
        rot -= n & ((n - 1 - rot) >> 63)  # absolute seat of relative seat r: (me + r) mod n
        rel_flat = (r["seat_rows"] + rot).view(-1)  # per-seat values in relative order via index_select
        dummy, dummy2 = r["dummy"], r["dummy2"]
        if acting:  # the seat to act of a live session: its phase is set and it is relative seat 0
            first = [r["phase"] + phase, r["to_act"]]
        else:
            m_active = _mask(phase != OVER)
            first = [_pick(m_active, r["phase"] + phase, dummy),
                     _pick(m_active, r["to_act"] + rel(sel(self.to_act), me), dummy)]
        singles = torch.stack([
            *first,
            r["dealer"] + rel(dealer, me),
            r["trump_suit"] + sel(self.trump_suit),
            _pick(_mask(holder >= 0), r["taken"] + rel(holder, me), dummy),
            _pick(_mask(knocked > 0), r["knock"] + knocked, dummy),
        ], 1)
        live = _pick(((sel(self.alive_bits)[:, None] >> rot) & 1).neg_(), r["live"], dummy2)
        roles = r["roles"] + sel(self.roles).view(-1).index_select(0, rel_flat).view(M, n)
        exchanged = r["exchanged"] + sel(self.exchanged).view(-1).index_select(0, rel_flat).view(M, n)
        # Empty trick slots hold ABSENT: their indices fall below the pot cell and maximum() sends them there.
        lead = torch.maximum(r["leader"] + rel(sel(self.trick_leader)[:, :T], me2), dummy2)
        played = sel(self.trick_cards)[:, :T * n].view(M, T, n)
        cards = torch.maximum(r["tcards"] + (rel(self._seat_ar, me2) * N)[:, None, :] + played, dummy2[:, :, None])
        ones = torch.cat([singles, live, roles, exchanged, lead, cards.view(M, T * n)], 1)
        # Numbers (chips, pot, progress; tricks won), in float64 then rounded to float32 as the reference does.
        numbers = torch.cat([sel(self.chips).view(-1).index_select(0, rel_flat).view(M, n), sel(self.pot)[:, None],
                             sel(self.deals_settled)[:, None],
                             sel(self.tricks_won).view(-1).index_select(0, rel_flat).view(M, n)], 1)
        numbers = (numbers.to(torch.float64) * self._number_scale).to(torch.float32)
        # Card sets, then the trump card.
        trump_bit = self._card_bit.index_select(0, sel(self.trump_card))[:, None]
        if omniscient:
            masks = torch.cat([sel(self.hands), sel(self.discards), sel(self.drawn), sel(self.stock_bits)[:, None],
                               sel(self.dead)[:, None], trump_bit], 1)
        else:
            fs = (r["seat_rows"][:, 0] + me)
            blind = sel(self.blind) & _mask(me == dealer)
            seen = ~_mask((me == dealer) & sel(self.dealer_blind))
            masks = torch.stack([
                sel(self.hands).view(-1).index_select(0, fs) & ~blind & seen,
                sel(self.discards).view(-1).index_select(0, fs),
                sel(self.drawn).view(-1).index_select(0, fs) & ~blind,
                trump_bit[:, 0],
            ], 1)
        return ones, numbers, masks
