"""Batched Mauscheln engine: thousands of sessions stepped at once in PyTorch tensors.

:class:`BatchedMauscheln` mirrors the reference engine (:mod:`mauscheln_env.engine`)
rule for rule and the reference observer (:class:`~mauscheln_env.observation.Observer`)
value for value; ``tests/test_batched.py`` checks both at every step of thousands
of random sessions. It implements :class:`~mauscheln_env.vector.VectorEnv` (see
there for the step/reset contract, rewards, auto-reset and ``info``). Every tensor
lives on one torch device; ``step`` is branch-free tensor code over the whole
batch (no Python loop over sessions), so the same code serves a trainer on CPU
and on GPU.

Supported: ruleset ``mauscheln`` (RULES.md §2.1) at 3-7 players with every
option it has (``knock``, ``knock_min_rank``, ``stake``, ``bankroll``,
``max_deals``, ``max_throw_ins``, ``deck_size``). Anything else raises
:class:`~mauscheln_env.errors.ConfigError` naming what is supported; later
rulesets are added to :data:`SUPPORTED` one at a time.

## Tensor state

B sessions, n seats, N cards, H = 4 cards per hand, T = 4 tricks. A set of
cards is an ``int64`` bit mask (bit c = card c of ``config.deck``; N <= 52), a
set of seats an ``int64`` mask of n bits. Seats are absolute. Sentinels:
``NO_SEAT`` = -1, ``NO_CARD`` = -1.

| tensor | shape | meaning (reference ``State`` field) |
| --- | --- | --- |
| `chips`, `deal_start_chips` | [B, n] | chips by seat; chips when the current deal started (before the ante) |
| `pot` | [B] | the pot |
| `alive_bits` | [B] | seats still in the session (``alive``) |
| `dealer`, `deals_settled`, `throw_in_streak` | [B] | |
| `phase` | [B] | ``Phase`` value (KNOCK 0 ... PLAY 4, OVER 5) |
| `to_act` | [B] | seat to act |
| `hands`, `discards`, `drawn` | [B, n] | card masks by seat |
| `dealer_blind` | [B] bool | the dealer has not looked at his hand (``not seen[dealer]``; only the dealer can be blind) |
| `blind` | [B] | the knocking dealer's blind stock cards (``blind[dealer]``) |
| `dead` | [B] | hands of seats that passed on going with |
| `deck_order` | [B, N] | the current deal's shuffled deck, top card first |
| `stock_pos`, `stock_bits` | [B] | index in `deck_order` of the stock's top card; the stock as a mask |
| `trump_card`, `trump_suit`, `trump_holder` | [B] | `trump_holder` is NO_SEAT until a knocker takes the card |
| `knocked` | [B] | 0 not decided (``None``), 1 knocked, 2 declined to knock |
| `roles`, `exchanged` | [B, n] | ``Role`` value; 0 not yet exchanged, else 1 + cards exchanged |
| `mauschler` | [B] | NO_SEAT while nobody declared |
| `marked`, `xmin`, `xcap` | [B] | cards marked by the exchanging seat; bounds on the marks |
| `participants` | [B] | seat mask: mauschler and goers, set when the exchange starts |
| `trick_cards` | [B, T*n + 1] | card played in trick t by seat s at column t*n + s (NO_CARD if none); last column is scratch |
| `trick_leader` | [B, T + 1] | seat that led trick t (NO_SEAT if none); last column is scratch |
| `tricks_done`, `trick_count` | [B] | completed tricks; cards in the current trick |
| `win_seat`, `win_card`, `led_suit` | [B] | the current trick's winner so far and led suit |
| `tricks_won` | [B, n] | |

Seat order is a table lookup: ``next_seat[s, mask]`` is the first seat of
``mask`` after s clockwise, which gives ``succ`` (mask = live seats), the
declaring and going-with queues, the exchange order and the play order
(mask = participants) without storing any queue. Legality is the profile-M
mask algebra of :func:`mauscheln_env.tricks.legal_follow` on the reference's
own ``TrumpTables``.

## Observations

``obs`` has exactly the layout of ``Observer(game).encode(state, seat)``
(offsets come from the same :func:`~mauscheln_env.observation.observation_pieces`).
It is built per step as a zero buffer, one ``scatter_`` of the positions of
every one-hot 1 (phase, seats, roles, exchange counts, trump, knock, every
card played and trick leader, relative to the observer), a byte-table lookup
for the hand/discard/draw masks, and the scaled numbers (chips, pot, progress,
tricks won), computed in float64 and rounded to float32 like the reference.
:meth:`BatchedMauscheln.state` gives ``Observer(game, omniscient=True)``.

## Dealing and determinism

Each new deal is a uniform random permutation of the deck (``argsort`` of
``torch.rand`` from the engine's ``torch.Generator``), dealt by the ruleset's
pattern exactly as ``Game.deal_from_deck`` does (1,1,T,1,1 from forehand,
dealer last; the stock is drawn from the top). Random draws happen only when
deals start, in session order, so the same seed and actions give the same run
on a given device. ``reset(seed)`` reseeds; ``seed=None`` at construction
seeds from the OS.

## Buffers

With ``copy=True`` (default) every step returns fresh ``obs`` and ``mask``
tensors. With ``copy=False`` they are internal buffers overwritten by the next
``step``/``reset``: copy them (as a rollout buffer does anyway) before stepping
again. Large fresh allocations cost page faults on the CPU, so ``copy=False``
is the faster choice for big batches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from mauscheln_env.config import MAUSCHELN, RuleConfig, RulesetSpec
from mauscheln_env.engine import Game, Phase, Role
from mauscheln_env.errors import ConfigError, IllegalActionError, MauschelnError
from mauscheln_env.observation import Observer
from mauscheln_env.vector import (
    DEAL_NO_PLAY,
    DEAL_NONE,
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
NO_CARD = -1
KNOCK_UNDECIDED, KNOCK_YES, KNOCK_NO = 0, 1, 2

KNOCK, DECLARE, GO_WITH, EXCHANGE, PLAY, OVER = (
    int(Phase.KNOCK), int(Phase.DECLARE), int(Phase.GO_WITH), int(Phase.EXCHANGE), int(Phase.PLAY), int(Phase.OVER)
)
DECLINED, MAUSCHLER, GOER, OUT = int(Role.DECLINED), int(Role.MAUSCHLER), int(Role.GOER), int(Role.OUT)
_PHASES = (KNOCK, DECLARE, GO_WITH, EXCHANGE, PLAY)
_ROLES = (int(Role.UNDECIDED), DECLINED, MAUSCHLER, GOER, OUT)

SUPPORTED: dict[str, tuple[RulesetSpec, frozenset[str]]] = {
    "mauscheln": (
        MAUSCHELN,
        frozenset({"stake", "bankroll", "deck_size", "knock", "knock_min_rank", "max_deals", "max_throw_ins"}),
    ),
}
"""Ruleset name -> (the rules spec this engine mirrors, the options it implements)."""

_SPEC_FIELDS = ("direction", "hand_size", "deal_pattern", "rank_order", "trick_profile", "stock_policy",
                "named_actions")


def check_supported(config: RuleConfig) -> None:
    """Raise :class:`ConfigError` unless the batched engine implements ``config`` exactly."""
    if not isinstance(config, RuleConfig):
        raise ConfigError(f"config must be a RuleConfig (see make_config), got {type(config).__name__}")
    supported = ", ".join(f"{name} (options: {', '.join(sorted(opts))})" for name, (_, opts) in SUPPORTED.items())
    entry = SUPPORTED.get(config.ruleset)
    if entry is None:
        raise ConfigError(f"the batched engine does not implement ruleset {config.ruleset!r}; supported: {supported}")
    spec, options = entry
    for name in _SPEC_FIELDS:
        if getattr(config.spec, name) != getattr(spec, name):
            raise ConfigError(
                f"the batched engine implements {spec.name} with {name}={getattr(spec, name)!r}, "
                f"not {getattr(config.spec, name)!r}; supported: {supported}"
            )
    if not spec.min_players <= config.num_players <= spec.max_players:
        raise ConfigError(f"num_players={config.num_players} is not supported; supported: "
                          f"{spec.min_players}-{spec.max_players}")
    if config.num_cards > 62:
        raise ConfigError(f"a deck of {config.num_cards} cards does not fit the engine's 64-bit card masks")
    for name, value in config.options.items():
        if name in options:
            continue
        default = config.spec.options[name].default if name in config.spec.options else None
        if value != default:
            raise ConfigError(
                f"the batched engine does not implement option {name}={value!r} of {config.ruleset}; "
                f"supported: {supported}"
            )


class BatchedMauscheln(VectorEnv):
    """``batch_size`` Mauscheln sessions as tensors on ``device`` (see the module docstring).

    ``final_observations=True`` adds ``info["final_index"]`` and
    ``info["final_obs"]`` (every seat's observation of each ended session).
    ``validate=False`` skips the check that every action is in the mask.
    """

    def __init__(self, config: RuleConfig, batch_size: int, device: str | torch.device = "cpu",
                 seed: int | None = None, *, final_observations: bool = False, copy: bool = True,
                 validate: bool = True) -> None:
        check_supported(config)
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ConfigError(f"batch_size={batch_size!r} is not allowed; allowed: a whole number >= 1")
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
        self._mask: torch.Tensor | None = None

    # ------------------------------------------------------------------ static tables
    def _build_tables(self) -> None:
        g, dev = self.game, self.device
        n, N, H = g.n, g.num_cards, g.hand_size
        long = dict(dtype=torch.int64, device=dev)
        self._bar = torch.arange(self.num_envs, **long)
        self._seat_ar = torch.arange(n, **long)
        self._seat_bit = 1 << self._seat_ar
        self._hand_ar = torch.arange(H, **long)
        # Card tables (index N: "no card", bit 0).
        self._card_bit = torch.tensor([1 << c for c in range(N)] + [0], **long)
        self._suit_of = torch.tensor(g.deck.suit, **long)
        self._suit_bits = torch.tensor(g.deck.suit_mask, **long)
        self._beats = torch.tensor([b for t in g.tables for b in t.beats], **long)  # [4 * N]
        if any(t.trump_mask != g.deck.suit_mask[t.trump_suit] or t.eff_suit != g.deck.suit for t in g.tables):
            raise ConfigError("the batched engine supports plain suit trumps only (no permanent trumps)")
        self._knock_ok = torch.tensor(
            [bool(g.knock_option) and g.rank_pos[c] <= g.knock_max_pos for c in range(N)], dtype=torch.bool, device=dev
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
        self._next = torch.from_numpy(nxt.reshape(-1)).to(dev)
        self._order = torch.from_numpy(order.reshape(n * S, n)).to(dev)
        self._pop = torch.tensor([bin(m).count("1") for m in range(S)], **long)
        self._rot = torch.tensor([[(me + r) % n for r in range(n)] for me in range(n)], **long)
        self._relof = torch.tensor([[(s - me) % n for s in range(n)] for me in range(n)], **long)
        # Dealing: slot of deck position p when L seats are dealt in (seat index in order from forehand,
        # n for the trump card, n + 1 for the stock), following the ruleset's deal pattern.
        slot = np.full((n + 1, N), n + 1, dtype=np.int64)
        trump_pos = np.zeros(n + 1, dtype=np.int64)
        dealt = np.zeros(n + 1, dtype=np.int64)
        for L in range(1, n + 1):
            p = 0
            for step in g.config.spec.deal_pattern:
                if step == "T":
                    slot[L, p] = n
                    trump_pos[L] = p
                    p += 1
                else:
                    for i in range(L):
                        slot[L, p:p + step] = i
                        p += step
            dealt[L] = p
        self._deal_slot = torch.from_numpy(slot).to(dev)
        self._trump_pos = torch.from_numpy(trump_pos).to(dev)
        self._dealt = torch.from_numpy(dealt).to(dev)
        # Named actions legal per phase (DONE is decided by the marks).
        names = g.named_actions
        self._a_knock, self._a_no_knock = N + names.index("knock"), N + names.index("no_knock")
        self._a_mauscheln, self._a_pass = N + names.index("mauscheln"), N + names.index("pass")
        self._a_go, self._a_done = N + names.index("go"), N + names.index("done")
        named = torch.zeros(OVER + 1, len(names), dtype=torch.bool, device=dev)
        named[KNOCK, names.index("knock")] = named[KNOCK, names.index("no_knock")] = True
        named[DECLARE, names.index("mauscheln")] = named[DECLARE, names.index("pass")] = True
        named[GO_WITH, names.index("go")] = named[GO_WITH, names.index("pass")] = True
        self._named_by_phase = named
        self._done_col = names.index("done")
        # Bit mask -> per-card values, one byte at a time.
        self._nbytes = (N + 7) // 8
        self._byte_shift = 8 * torch.arange(self._nbytes, **long)
        bits = (torch.arange(256)[:, None] >> torch.arange(8)) & 1
        self._lut_f = bits.to(torch.float32).to(dev)
        self._lut_b = bits.to(torch.bool).to(dev)
        # Observation layouts.
        self._chip_scale = 1.0 / self.config.bankroll
        md = self.config.max_deals
        self._progress_scale = 0.0 if md is None else 1.0 / md
        self._inv_tricks = 1.0 / g.num_tricks
        self._number_scale = torch.tensor([self._chip_scale] * (n + 1) + [self._progress_scale],
                                          dtype=torch.float64, device=dev)
        self._layout = {False: self._layout_for(self.observer), True: self._layout_for(self.state_observer)}

    def _layout_for(self, observer: Observer) -> dict[str, Any]:
        g, dev = self.game, self.device
        n, N, T = g.n, g.num_cards, g.num_tricks
        o = observer.offsets
        names = [p.name for p in observer.pieces]
        if names[4:7] != ["chips", "pot", "progress"]:
            raise RuntimeError("the observation layout changed: chips, pot, progress must be adjacent")
        first_cards = "hands" if observer.omniscient else "hand"
        shapes = {p.name: p.shape for p in observer.pieces}
        # The one-hots index phases and roles by their enum values; where the spec names its own
        # order (a ruleset's ``phases``/``roles``), it must agree with those values.
        for attr, values, enum in (("phases", _PHASES, Phase), ("roles", _ROLES, Role)):
            order = getattr(g.config.spec, attr, None)
            if order is not None and tuple(order[:len(values)]) != tuple(enum(v).name.lower() for v in values):
                raise RuntimeError(f"the observation's {attr} one-hot order {order} is not the engine's enum order")
        if shapes["phase"][0] < len(_PHASES) or shapes["roles"][1] < len(_ROLES):
            raise RuntimeError("the observation layout changed: phase or roles one-hot too small")
        ar = torch.arange(n, dtype=torch.int64, device=dev)
        lay = {
            "size": observer.size,
            "dummy": o["pot"],  # padding index: overwritten by the pot value after the scatter
            "phase": o["phase"], "to_act": o["to_act"], "dealer": o["dealer"], "live": o["live"] + ar,
            "roles": o["roles"] + ar * shapes["roles"][1], "exchanged": o["exchanged"] + ar * shapes["exchanged"][1],
            "trump_card": o["trump_card"], "trump_suit": o["trump_suit"], "taken": o["trump_taken_by"], "knock": o["knock"],
            "leader": o["trick_leader"] + torch.arange(T, dtype=torch.int64, device=dev) * n,
            "tcards": (o["trick_cards"] + torch.arange(T, dtype=torch.int64, device=dev) * (n * N))[:, None],
            "chips": o["chips"], "won": o["tricks_won"], "cards": o[first_cards],
        }
        return lay

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
        self.knocked, self.roles, self.exchanged, self.mauschler = z(B), z(B, n), z(B, n), z(B)
        self.marked, self.xmin, self.xcap, self.participants = z(B), z(B), z(B), z(B)
        self.trick_cards = torch.full((B, T * n + 1), NO_CARD, dtype=torch.int64, device=dev)
        self.trick_leader = torch.full((B, T + 1), NO_SEAT, dtype=torch.int64, device=dev)
        self.tricks_done, self.trick_count = z(B), z(B)
        self.win_seat, self.win_card, self.led_suit = z(B), z(B), z(B)
        self.tricks_won = z(B, n)

    def _succ(self, seat: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """First seat of ``mask`` after ``seat`` clockwise (``succ`` when ``mask`` holds the live seats)."""
        return self._next[(seat << self.num_players) + mask]

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
        if dealer is None:
            dealer = torch.randint(n, (B,), generator=self._gen, device=dev)
        orders = None
        if "deals" in opts:
            orders = tensor(deal_orders_from(self.game, opts["deals"], dealer.cpu().numpy()))
        everyone = self._bar
        self._new_sessions(everyone, dealer)
        if chips is not None:
            self.chips.copy_(chips)
        if pot is not None:
            self.pot.copy_(pot)
        self._start_deal(everyone, orders)
        self._mask = self._legal_mask()
        obs = self._encode(self.to_act, out=None if self.copy else self._out_buffer())
        return VecReset(obs, self._mask.clone() if self.copy else self._mask, self.to_act.clone())

    def _new_sessions(self, idx: torch.Tensor, dealer: torch.Tensor | None = None) -> None:
        """Fresh session bookkeeping for sessions ``idx`` (before their first deal)."""
        k = idx.shape[0]
        if dealer is None:
            dealer = torch.randint(self.num_players, (k,), generator=self._gen, device=self.device)
        self.chips[idx] = self.config.bankroll
        self.pot[idx] = 0
        self.alive_bits[idx] = (1 << self.num_players) - 1
        self.dealer[idx] = dealer
        self.deals_settled[idx] = 0
        self.throw_in_streak[idx] = 0

    def _start_deal(self, idx: torch.Tensor, orders: torch.Tensor | None = None) -> None:
        """Ante and deal for sessions ``idx`` (``Game._start_deal``); ``orders`` fixes the deck orders."""
        k = idx.shape[0]
        if k == 0:
            return
        n, N, dev = self.num_players, self.num_cards, self.device
        dealer = self.dealer[idx]
        alive = self.alive_bits[idx]
        chips = self.chips[idx]
        self.deal_start_chips[idx] = chips
        ante = torch.clamp(chips.gather(1, dealer[:, None]), max=self.config.stake)
        self.chips[idx] = chips.scatter_add(1, dealer[:, None], -ante)
        self.pot[idx] = self.pot[idx] + ante[:, 0]
        if orders is None:
            orders = torch.rand(k, N, generator=self._gen, device=dev).argsort(dim=1)
        self.deck_order[idx] = orders
        L = self._pop[alive]
        fh = self._succ(dealer, alive)
        seats = self._order[(fh << n) + alive]  # live seats from forehand
        seats_ext = torch.cat([seats, torch.full((k, 2), n, dtype=torch.int64, device=dev)], 1)
        seats_ext[:, -1] = n + 1
        dest = seats_ext.gather(1, self._deal_slot[L])  # [k, N]: seat, n (trump) or n + 1 (stock)
        sets = torch.zeros(k, n + 2, dtype=torch.int64, device=dev).scatter_add_(1, dest, self._card_bit[orders])
        self.hands[idx] = sets[:, :n]
        self.stock_bits[idx] = sets[:, n + 1]
        trump = orders.gather(1, self._trump_pos[L][:, None])[:, 0]
        self.trump_card[idx] = trump
        self.trump_suit[idx] = self._suit_of[trump]
        self.stock_pos[idx] = self._dealt[L]
        for t in (self.discards, self.drawn, self.roles, self.exchanged, self.tricks_won):
            t[idx] = 0
        for t in (self.blind, self.dead, self.knocked, self.marked, self.xmin, self.xcap, self.participants,
                  self.tricks_done, self.trick_count, self.win_seat, self.win_card, self.led_suit):
            t[idx] = 0
        self.trump_holder[idx] = NO_SEAT
        self.mauschler[idx] = NO_SEAT
        self.trick_cards[idx] = NO_CARD
        self.trick_leader[idx] = NO_SEAT
        knock = self._knock_ok[trump]
        self.phase[idx] = torch.where(knock, KNOCK, DECLARE)
        self.to_act[idx] = torch.where(knock, dealer, fh)
        self.dealer_blind[idx] = knock

    # ------------------------------------------------------------------ step
    def step(self, actions: torch.Tensor) -> VecStep:
        """One action per session; see :class:`~mauscheln_env.vector.VectorEnv`."""
        if self._mask is None:
            raise MauschelnError("call reset() before step()")
        a = self._check_actions(actions)
        n, N, T, H = self.num_players, self.num_cards, self.game.num_tricks, self.game.hand_size
        where = torch.where
        seat = self.to_act
        seat1 = seat[:, None]
        ph = self.phase
        p_knock, p_decl, p_go = ph == KNOCK, ph == DECLARE, ph == GO_WITH
        p_x, play = ph == EXCHANGE, ph == PLAY
        bit = self._card_bit[a.clamp(max=N)]  # 0 for a named action
        hand = self.hands.gather(1, seat1)[:, 0]
        mark = p_x & (a < N)
        x_done = p_x & (a == self._a_done)
        go_pass = p_go & (a == self._a_pass)
        go_go = p_go & (a == self._a_go)
        decl_pass = p_decl & (a == self._a_pass)
        become = (p_knock & (a == self._a_knock)) | (p_decl & (a == self._a_mauscheln))
        no_knock = p_knock & (a == self._a_no_knock)

        # Declaring, knocking, going with: roles and the mauschler.
        role = self.roles.gather(1, seat1)[:, 0]
        new_role = where(become, MAUSCHLER, where(go_go, GOER, where(go_pass, OUT, where(decl_pass, DECLINED, role))))
        self.roles.scatter_add_(1, seat1, (new_role - role)[:, None])
        mauschler = self.mauschler = where(become, seat, self.mauschler)
        knocked = self.knocked = where(p_knock, where(become, KNOCK_YES, KNOCK_NO), self.knocked)
        self.dealer_blind &= ~no_knock
        self.dead |= where(go_pass, hand, 0)
        next_live = self._succ(seat, self.alive_bits)
        go_over = p_go & (next_live == mauschler)
        goers = ((self.roles == GOER).long() * self._seat_bit).sum(1)
        no_play = go_over & (goers == 0)
        start_x = go_over & (goers != 0)
        parts = self.participants = where(start_x, goers | self._seat_bit[mauschler.clamp(min=0)], self.participants)

        # Exchanging: mark one card, or draw at "done".
        self.marked += mark
        self.discards.scatter_add_(1, seat1, where(mark, bit, 0)[:, None])  # a marked card is not yet a discard
        knocker = x_done & (knocked == KNOCK_YES) & (seat == self.dealer)
        ndraw = where(x_done, self.marked - knocker.long(), 0)
        pos = self.stock_pos[:, None] + self._hand_ar
        cards = self.deck_order.gather(1, pos.clamp(max=N - 1))
        got = where(self._hand_ar < ndraw[:, None], self._card_bit[cards], 0).sum(1)
        self.stock_pos += ndraw
        self.stock_bits -= got
        got_all = got | where(knocker, self._card_bit[self.trump_card], 0)
        self.drawn.scatter_add_(1, seat1, got_all[:, None])
        self.blind = where(knocker, got, self.blind)
        self.trump_holder = where(knocker, seat, self.trump_holder)
        self.exchanged.scatter_add_(1, seat1, where(x_done, self.marked + 1, 0)[:, None])

        # Playing a card.
        first = self.trick_count == 0
        self.led_suit = where(play & first, self._suit_of[a.clamp(max=N - 1)], self.led_suit)
        beaten = (self._beats[self.trump_suit * N + self.win_card] & bit) != 0
        take = play & (first | beaten)
        self.win_card = where(take, a, self.win_card)
        win_seat = self.win_seat = where(take, seat, self.win_seat)
        done_tricks = self.tricks_done
        self.trick_cards.scatter_(1, where(play, done_tricks * n + seat, T * n)[:, None], a[:, None])
        self.trick_leader.scatter_(1, where(play & first, done_tricks, T)[:, None], seat1)
        count = self.trick_count + play
        trick_full = play & (count == self._pop[parts])
        self.tricks_won.scatter_add_(1, win_seat[:, None], trick_full.long()[:, None])
        self.trick_count = where(trick_full, 0, count)
        self.tricks_done = done_tricks + trick_full
        settled = trick_full & (self.tricks_done == T)

        # One hand update for every phase: cards out (mark, play, a dead hand), cards in (draws).
        out = where(mark | play, bit, 0) + where(go_pass, hand, 0)
        self.hands.scatter_add_(1, seat1, (got_all - out)[:, None])

        # Who acts next, in which phase.
        next_part = self._succ(seat, parts)
        x_over = x_done & (next_part == mauschler)
        x_next = x_done & ~x_over
        to_act = where(p_knock | p_decl | p_go, next_live, seat)
        to_act = where(start_x | x_over, mauschler, to_act)
        to_act = where(x_next, next_part, to_act)
        to_act = self.to_act = where(play, where(trick_full, win_seat, next_part), to_act)
        phase = where(become, GO_WITH, ph)
        phase = where(no_knock, DECLARE, phase)
        phase = where(start_x, EXCHANGE, phase)
        phase = where(x_over, PLAY, phase)

        # Opening an exchange (Game._open_exchange); the knocker looks at his hand.
        opened = start_x | x_next
        knocker_opens = opened & (knocked == KNOCK_YES) & (to_act == self.dealer)
        self.dealer_blind &= ~knocker_opens
        self.marked = where(opened, 0, self.marked)
        self.xmin = where(opened, knocker_opens.long(), self.xmin)
        stock_left = N - self.stock_pos
        self.xcap = where(opened, torch.clamp(stock_left + knocker_opens, max=H), self.xcap)
        self.blind = where(x_over, 0, self.blind)  # every goer has exchanged: the knocker sees his cards

        # Deals that ended: settlement (RULES.md §3.1), eliminations, session end (§3.5).
        throw_in = decl_pass & (seat == self.dealer)
        deal_end = settled | no_play | throw_in
        pot = self.pot
        part = ((parts[:, None] >> self._seat_ar) & 1).bool() & settled[:, None]
        won = self.tricks_won
        credit = where(part, won * (pot // T)[:, None], 0)
        chips = self.chips + credit
        need = where(self.roles == MAUSCHLER, 2, 1)
        owed = where(part, pot[:, None] * torch.clamp(need - won, min=0), 0)
        paid = torch.minimum(owed, chips)
        chips -= paid
        chips.scatter_add_(1, mauschler.clamp(min=0)[:, None], where(no_play, pot, 0)[:, None])
        self.chips = chips
        self.pot = where(no_play, 0, pot - credit.sum(1) + paid.sum(1))
        rewards = where(deal_end[:, None], chips - self.deal_start_chips, 0)
        counted = settled | no_play
        self.deals_settled += counted
        self.throw_in_streak = where(counted, 0, self.throw_in_streak + throw_in)
        live_now = ((chips > 0).long() * self._seat_bit).sum(1)
        alive = self.alive_bits = where(deal_end, self.alive_bits & live_now, self.alive_bits)
        ended = self._pop[alive] < 3
        if self.config.max_deals is not None:
            ended |= self.deals_settled >= self.config.max_deals
        terminated = deal_end & ended
        truncated = deal_end & ~ended & (self.throw_in_streak >= self.config.max_throw_ins)
        over = terminated | truncated
        self.phase = where(over, OVER, phase)
        kind = where(settled, DEAL_SETTLED, where(no_play, DEAL_NO_PLAY, where(throw_in, DEAL_THROW_IN, DEAL_NONE)))
        info: dict[str, torch.Tensor] = {"deal_kind": kind, "new_deal": deal_end, "final_chips": chips.clone()}
        if self.final_observations:
            info["final_index"], info["final_obs"] = self._final_observations(over)

        # Next deal, or a new session (auto-reset).
        self.dealer = where(deal_end & ~over, self._succ(self.dealer, alive), self.dealer)
        restart = over.nonzero()[:, 0]
        if restart.shape[0]:
            self._new_sessions(restart)
        self._start_deal(deal_end.nonzero()[:, 0])

        self._mask = self._legal_mask()
        obs = self._encode(self.to_act, out=None if self.copy else self._out_buffer())
        mask = self._mask.clone() if self.copy else self._mask
        return VecStep(obs, mask, self.to_act.clone(), rewards.to(torch.float32), terminated, truncated, info)

    def _check_actions(self, actions: torch.Tensor) -> torch.Tensor:
        if not isinstance(actions, torch.Tensor):
            actions = torch.as_tensor(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.is_floating_point or actions.dtype == torch.bool:
            raise IllegalActionError(f"actions must be an integer tensor of shape ({self.num_envs},), "
                                     f"got {tuple(actions.shape)} {actions.dtype}")
        a = actions.to(device=self.device, dtype=torch.int64)
        if self.validate:
            inside = (a >= 0) & (a < self.num_actions)
            ok = inside & self._mask.gather(1, a.clamp(0, self.num_actions - 1)[:, None])[:, 0]
            if not bool(ok.all()):
                self._raise_illegal(a, ok)
        return a

    def _raise_illegal(self, a: torch.Tensor, ok: torch.Tensor) -> None:
        bad = (~ok).nonzero()[:, 0][:5].tolist()
        parts = []
        for b in bad:
            legal = ", ".join(self.game.action_to_str(x) for x in self._mask[b].nonzero()[:, 0].tolist())
            act = int(a[b])
            shown = self.game.action_to_str(act) if 0 <= act < self.num_actions else repr(act)
            parts.append(f"session {b}: action {shown} is not legal for seat {int(self.to_act[b])} in phase "
                         f"{Phase(int(self.phase[b])).name.lower()}; legal: {legal}")
        raise IllegalActionError("; ".join(parts))

    def _final_observations(self, over: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        idx = over.nonzero()[:, 0]
        n = self.num_players
        rows = idx.repeat_interleave(n)
        seats = self._seat_ar.repeat(idx.shape[0])
        return idx, self._encode(seats, rows=rows).view(idx.shape[0], n, self.obs_size)

    # ------------------------------------------------------------------ masks
    def _legal_mask(self) -> torch.Tensor:
        """``bool[B, A]``: the legal actions of the seat to act (``Game.legal_actions``)."""
        where = torch.where
        N = self.num_cards
        phase = self.phase
        hand = self.hands.gather(1, self.to_act[:, None])[:, 0]
        beats = self._beats[self.trump_suit * N + self.win_card]
        follow = hand & self._suit_bits[self.led_suit]
        trumps = hand & self._suit_bits[self.trump_suit]
        follow_beat, trump_beat = follow & beats, trumps & beats
        answer = where(follow != 0, where(follow_beat != 0, follow_beat, follow),
                       where(trumps != 0, where(trump_beat != 0, trump_beat, trumps), hand))
        play_cards = where(self.trick_count == 0, hand, answer)
        cards = where(phase == PLAY, play_cards, where((phase == EXCHANGE) & (self.marked < self.xcap), hand, 0))
        named = self._named_by_phase[phase]
        named[:, self._done_col] = (phase == EXCHANGE) & (self.marked >= self.xmin)
        return torch.cat([self._bits_to(cards[:, None], self._lut_b)[:, 0], named], 1)

    def _bits_to(self, masks: torch.Tensor, lut: torch.Tensor) -> torch.Tensor:
        """Card masks ``int64[M, K]`` -> per-card values ``[M, K, N]`` through a byte table."""
        M, K = masks.shape
        by = (masks[:, :, None] >> self._byte_shift) & 255
        return lut[by].view(M, K, self._nbytes * 8)[:, :, :self.num_cards]

    # ------------------------------------------------------------------ observations
    def _out_buffer(self) -> torch.Tensor:
        buf = getattr(self, "_obs_buf", None)
        if buf is None:
            buf = self._obs_buf = torch.empty(self.num_envs, self.obs_size, dtype=torch.float32, device=self.device)
        return buf

    def observe(self, seats: torch.Tensor | int) -> torch.Tensor:
        """``float32[B, D]``: ``Observer.encode(state, seat)`` for one seat per session (or one seat for all)."""
        if self._mask is None:
            raise MauschelnError("call reset() first")
        if isinstance(seats, int):
            if not 0 <= seats < self.num_players:
                raise MauschelnError(f"seat {seats} is not a seat; allowed: 0..{self.num_players - 1}")
            me = torch.full((self.num_envs,), seats, dtype=torch.int64, device=self.device)
        else:
            me = torch.as_tensor(seats, device=self.device).to(torch.int64).expand(self.num_envs)
            if bool(((me < 0) | (me >= self.num_players)).any()):
                raise MauschelnError(f"seats must lie in 0..{self.num_players - 1}")
        return self._encode(me)

    def state(self) -> torch.Tensor:
        """``float32[B, state_size]``: ``Observer(game, omniscient=True).encode`` of every session."""
        if self._mask is None:
            raise MauschelnError("call reset() first")
        return self._encode(torch.zeros(self.num_envs, dtype=torch.int64, device=self.device), omniscient=True)

    def _encode(self, me: torch.Tensor, rows: torch.Tensor | None = None, omniscient: bool = False,
                out: torch.Tensor | None = None) -> torch.Tensor:
        """Observations of seats ``me`` (one per row) of sessions ``rows`` (default: all, in order)."""
        def sel(t: torch.Tensor) -> torch.Tensor:
            return t if rows is None else t[rows]

        where = torch.where
        lay = self._layout[omniscient]
        n, N, T = self.num_players, self.num_cards, self.game.num_tricks
        M = me.shape[0]
        if out is None:
            out = torch.zeros(M, lay["size"], dtype=torch.float32, device=self.device)
        else:
            out.zero_()
        dummy = lay["dummy"]
        phase, dealer = sel(self.phase), sel(self.dealer)
        relof = self._relof[me]  # relof[i, s]: seat s relative to the observer
        rot = self._rot[me]  # rot[i, r]: absolute seat of relative seat r
        holder, knocked = sel(self.trump_holder), sel(self.knocked)
        rel3 = relof.gather(1, torch.stack([sel(self.to_act), dealer, holder.clamp(min=0)], 1))
        active = phase != OVER
        trump_card = sel(self.trump_card)
        single = torch.stack([
            where(active, lay["phase"] + phase, dummy),
            where(active, lay["to_act"] + rel3[:, 0], dummy),
            lay["dealer"] + rel3[:, 1],
            lay["trump_card"] + trump_card,
            lay["trump_suit"] + sel(self.trump_suit),
            where(holder >= 0, lay["taken"] + rel3[:, 2], dummy),
            where(knocked > 0, lay["knock"] - 1 + knocked, dummy),
        ], 1)
        alive_rel = ((sel(self.alive_bits)[:, None] >> rot) & 1) != 0
        per_seat = torch.cat([
            where(alive_rel, lay["live"], dummy),
            lay["roles"] + sel(self.roles).gather(1, rot),
            lay["exchanged"] + sel(self.exchanged).gather(1, rot),
        ], 1)
        leaders = sel(self.trick_leader)[:, :T]
        lead_idx = where(leaders >= 0, lay["leader"] + relof.gather(1, leaders.clamp(min=0)), dummy)
        tc = sel(self.trick_cards)[:, :T * n].view(M, T, n)
        tc_idx = where(tc >= 0, lay["tcards"] + (relof * N)[:, None, :] + tc, dummy).view(M, T * n)
        out.scatter_(1, torch.cat([single, per_seat, lead_idx, tc_idx], 1), 1.0)
        # Numbers, in float64 then rounded to float32 as the reference does.
        numbers = torch.cat([sel(self.chips).gather(1, rot), sel(self.pot)[:, None], sel(self.deals_settled)[:, None]], 1)
        o = lay["chips"]
        out[:, o:o + n + 2] = (numbers.to(torch.float64) * self._number_scale).to(torch.float32)
        o = lay["won"]
        out[:, o:o + n] = (sel(self.tricks_won).gather(1, rot).to(torch.float64) * self._inv_tricks).to(torch.float32)
        # Card sets.
        if omniscient:
            masks = torch.cat([sel(self.hands), sel(self.discards), sel(self.drawn), sel(self.stock_bits)[:, None],
                               sel(self.dead)[:, None]], 1)
        else:
            me1 = me[:, None]
            is_dealer = me == dealer
            blind = where(is_dealer, sel(self.blind), 0)
            hidden = is_dealer & sel(self.dealer_blind)
            masks = torch.stack([
                where(hidden, 0, sel(self.hands).gather(1, me1)[:, 0] & ~blind),
                sel(self.discards).gather(1, me1)[:, 0],
                sel(self.drawn).gather(1, me1)[:, 0] & ~blind,
            ], 1)
        K = masks.shape[1]
        o = lay["cards"]
        out[:, o:o + K * N].view(M, K, N).copy_(self._bits_to(masks, self._lut_f))
        return out
