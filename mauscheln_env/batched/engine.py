"""The batched engine as a :class:`~mauscheln_env.vector.VectorEnv`: B sessions of any ruleset as tensors.

:class:`BatchedMauscheln` plays every configuration whose rule objects have
kernels (:mod:`mauscheln_env.batched.program`): all five rulesets, at every
player count, with their options. It mirrors the reference engine rule for rule
and its observer value for value (``tests/test_batched.py`` checks masks,
observations, ``state()``, rewards and session ends at every step).

## How a step runs

1. :meth:`Program.advance`, a pure function of the state: a seat that says
   ``done`` draws (``finish_exchange``), every session applies its action with
   the kernel of its phase, then enters the following stages until a decision
   is asked, the deal ends, or a stage that runs outside the fused step (it
   draws chance: dealing, Vierling, the stakes, the queue, the mouche check)
   pauses it. With ``compile=True`` this goes through ``torch.compile``; a
   seat whose draw reshuffles the stock (chance) draws eagerly just before
   (:meth:`Program.draw_first`). Eagerly (``compile=False``) the same kernels run
   each on the rows of its phase only (:meth:`Program.advance_rows`, through
   :class:`~mauscheln_env.batched.state.RowView`).
2. The paused sessions continue (the stages that draw chance).
3. Deals that ended are settled by the scoring kernel (RULES.md §3), seats
   without chips are eliminated, sessions end or move the deal on (§3.5), ended
   sessions restart, and new deals begin (stakes, cards, the stages up to the
   first decision).
4. The legal mask and observation of every seat to act (also compiled).

Steps 2 and 3 run eagerly on the rows concerned (found with ``nonzero``),
which are few in any step: the fused kernels do the common work for all rows.

## Chance

Every random number comes from the engine's ``torch.Generator`` and is drawn
outside the fused step: the first dealer of a session (by lot), each deal's deck
order (``rand`` then ``argsort``: a uniform permutation, top card first) when the
deal begins, a Vierling redeal's deck order, and each reshuffle's permutation of
the discard pile. A permutation stands for the reference's
``rng.permutation(k)`` (``mauscheln_env.engine``, "Chance"): with
``record_chance=True`` the engine lists, after every ``reset`` and ``step``, the
permutations each session drew, in order (:attr:`chance_log`), and a reference
session given those through a stand-in ``rng`` deals and reshuffles exactly the
same cards. The same seed and actions give the same run on a given device.

Given per-session sources (:meth:`BatchedMauscheln.use_chance`, e.g. the
numpy generators a reference session would get), the engine draws each
session's permutations from its own source instead, so that a duplicate
evaluation replays exactly the reference's chance.

## Buffers

With ``copy=True`` (default) every step returns fresh ``obs`` and ``mask``
tensors. With ``copy=False`` they are internal buffers overwritten by the next
``step``/``reset``: copy them before stepping again, and do not write into them
(a compiled engine clears only the one-hot cells its last step set; a value
written elsewhere would stay). A trainer that copies into its own storage
should use ``copy=False``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from mauscheln_env.batched.observe import Encoder
from mauscheln_env.batched.ops import compiled, mask
from mauscheln_env.batched.program import PAUSE_STAGE, PAUSE_STEP, Program
from mauscheln_env.batched.state import RowView, TableState
from mauscheln_env.batched.statics import Statics
from mauscheln_env.config import RuleConfig
from mauscheln_env.engine import Game, Phase
from mauscheln_env.errors import ConfigError, IllegalActionError, MauschelnError
from mauscheln_env.observation import Observer
from mauscheln_env.vector import (
    DEAL_MOUCHE,
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

MAX_ACTION_BITS = 63
"""Actions are bits of one ``int64`` mask."""


def check_supported(config: RuleConfig) -> Program:
    """Raise :class:`ConfigError` unless the batched engine implements ``config`` exactly; its program on the CPU."""
    if not isinstance(config, RuleConfig):
        raise ConfigError(f"config must be a RuleConfig (see make_config), got {type(config).__name__}")
    if config.num_actions > MAX_ACTION_BITS:
        raise ConfigError(f"{config.num_cards} cards and {len(config.named_actions)} named actions do not fit the "
                          f"batched engine's 64-bit action masks; allowed: at most {MAX_ACTION_BITS} actions")
    game = Game(config)
    k = Statics(game, torch.device("cpu"))
    program = Program(game, k)
    Encoder(Observer(game), k)
    Encoder(Observer(game, omniscient=True), k)
    return program


def queue_bound(game: Game, money: int) -> int:
    """Most items Mouche's queue can hold: one per chip in play, and at most n - 1 per settled deal."""
    options = game.options
    deals = options.max_session_deals
    for bound in (options.get("max_deals"), None if options.get("rounds") is None else options["rounds"] * game.n):
        if bound is not None:
            deals = min(deals, bound)
    return max(1, min(money, deals * (game.n - 1)))


def _fill_ones(flat: torch.Tensor, ones: torch.Tensor) -> None:
    """Set the one-hot cells ``ones`` (flat indices) of the observation buffer, given as ``out.view(-1)``, to 1.

    Compiled on its own graph it is a plain parallel scatter, faster than ``index_fill_`` on the CPU (inside the
    observation's graph the mutation makes inductor copy the whole buffer). The caller flattens the buffer:
    inductor writes into a view made inside the graph in place only when the input starts its storage, and a
    buffer of rows further into a block (the workers of ``SubprocVectorEnv``) would be copied whole, and back,
    on every call."""
    flat.index_fill_(0, ones.view(-1), 1.0)


def _clear_ones(flat: torch.Tensor, ones: torch.Tensor) -> None:
    """Set the cells ``ones`` back to 0 (compiled: the last step's one-hot cells, in place of clearing ``out``)."""
    flat.index_fill_(0, ones.view(-1), 0.0)


class BatchedMauscheln(VectorEnv):
    """``batch_size`` sessions of any ruleset as tensors on ``device`` (see the module docstring).

    ``final_observations=True`` adds ``info["final_index"]`` and ``info["final_obs"]`` (every seat's
    observation of each ended session). ``validate=False`` skips the check that every action is in the mask.
    ``compile=True`` runs the step's fused kernels (applying the actions; the mask and observation of
    every seat to act; clearing and setting the observation's one-hot cells) through ``torch.compile``, with results
    identical to the eager code; the first
    ``reset`` then compiles (seconds to minutes; the CPU needs a C++ compiler). torch.compile counts
    recompiles of a function over every engine in the process (``torch._dynamo.config.recompile_limit``, 8
    by default) and past that runs it eagerly: a process that builds compiled engines of many shapes or
    configurations calls ``torch._dynamo.reset()`` before each (the benchmark and the tests do). ``record_chance=True``
    keeps :attr:`chance_log` (the chance contract; for differential tests).
    """

    def __init__(self, config: RuleConfig, batch_size: int, device: str | torch.device = "cpu",
                 seed: int | None = None, *, final_observations: bool = False, copy: bool = True,
                 validate: bool = True, compile: bool = False, record_chance: bool = False) -> None:
        check_supported(config)
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ConfigError(f"batch_size={batch_size!r} is not allowed; allowed: a whole number >= 1")
        for name, value in (("final_observations", final_observations), ("copy", copy), ("validate", validate),
                            ("compile", compile), ("record_chance", record_chance)):
            if not isinstance(value, bool):
                raise ConfigError(f"{name}={value!r} is not allowed; allowed: True or False")
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
        self.compiled = compile
        self._gen = torch.Generator(device=self.device)
        if seed is None:
            self._gen.seed()
        else:
            self._gen.manual_seed(int(seed))
        self.k = k = Statics(game, self.device)
        self.program = Program(game, k)
        self.rules = self.program.rules
        self.rules.generator = self._gen
        self.scoring = self.program.scoring
        self.encoder = Encoder(self.observer, k)
        self.state_encoder = Encoder(self.state_observer, k)
        self.record_chance = record_chance
        self.chance_log: list[list[list[int]]] | None = None
        """With ``record_chance``: per session, the permutations drawn in the last ``reset`` or ``step``."""
        self._money = game.options.get("bankroll", 0) * game.n
        q = queue_bound(game, self._money) if getattr(self.scoring, "queue", False) else 1
        self.st = TableState.zeros(batch_size, game.n, game.num_cards, game.num_tricks, q, self.device)
        self.st.phase.fill_(int(Phase.OVER))
        self._bar = torch.arange(batch_size, device=self.device)
        self._row_obs = self._bar * self.obs_size
        self._mask_t: torch.Tensor | None = None
        self._obs_buf: torch.Tensor | None = None
        self._mask_buf: torch.Tensor | None = None
        self._set_ones: torch.Tensor | None = None
        """Compiled, into its own buffer: the one-hot cells the last step set (all other cells are rewritten)."""
        self._advance_step, self._acting_step, self._fill_ones = self.program.advance, self._acting, _fill_ones
        self._clear_ones = _clear_ones
        if compile:
            self._advance_step, self._acting_step = compiled(self.program.advance), compiled(self._acting)
            self._fill_ones, self._clear_ones = compiled(_fill_ones), compiled(_clear_ones)

    # ------------------------------------------------------------------ the state by name (read-only views)
    @property
    def dealer(self) -> torch.Tensor:
        return self.st.dealer

    @property
    def chips(self) -> torch.Tensor:
        return self.st.chips

    @property
    def pot(self) -> torch.Tensor:
        return self.st.pot

    @property
    def phase(self) -> torch.Tensor:
        return self.st.phase

    @property
    def to_act(self) -> torch.Tensor:
        return self.st.to_act

    @property
    def roles(self) -> torch.Tensor:
        """``int64[B, n]``: each seat's ``Role`` value in the current deal (``deal.roles``)."""
        return self.st.roles

    @property
    def alive(self) -> torch.Tensor:
        """``int64[B]``: the live seats of each session as a bit mask (bit s: seat s; ``session.alive``)."""
        return self.st.alive

    @property
    def deck_order(self) -> torch.Tensor:
        """The current deal's deck order (top card first) by session."""
        return self.st.deck

    def use_chance(self, sources: Any) -> None:
        """Draw each session's chance from its own source: ``sources[b].permutation(k)`` (e.g. a
        ``numpy.random.Generator``) gives every later permutation of session ``b`` (a deal's deck order, a
        reshuffle, a redeal), in the order the reference engine draws them from its ``rng`` (the chance
        contract, module docstring). A reference session given the same generator as its ``rng`` then deals
        and reshuffles exactly the same cards. ``None``: back to the engine's own generator."""
        if sources is not None:
            sources = list(sources)
            if len(sources) != self.num_envs or not all(callable(getattr(x, "permutation", None)) for x in sources):
                raise MauschelnError(f"use_chance needs one source per session ({self.num_envs}), each with a "
                                     "permutation(k) method (e.g. numpy.random.default_rng(seed)), or None")
        self.rules.chance_sources = sources

    # ------------------------------------------------------------------ rows outside the fused step
    def _on_rows(self, idx: torch.Tensor, fn: Any) -> None:
        """Run ``fn(rows, all_rows_mask)`` on the sessions ``idx`` (a :class:`RowView`) and write them back."""
        view = RowView(self.st, idx)
        fn(view, torch.full_like(idx, -1))
        view.commit()

    def _log_start(self) -> None:
        self.chance_log = [[] for _ in range(self.num_envs)] if self.record_chance else None
        self.rules.chance_log = self.chance_log

    # ------------------------------------------------------------------ sessions and deals
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None, *,
              deals: Any = None) -> VecReset:
        """Start ``batch_size`` new sessions. ``deals`` is a shortcut for ``options["deals"]``."""
        opts = check_reset_options(options)
        if deals is not None:
            opts["deals"] = deals
        if seed is not None:
            self._gen.manual_seed(int(seed))
        self._log_start()
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
        if getattr(self.scoring, "queue", False):
            money = max(self._money, 0 if chips is None else int(chips.sum(1).max()))
            self.st.resize_queue(queue_bound(self.game, money + (0 if pot is None else int(pot.max()))))
        self._new_sessions(self._bar, dealer)
        if chips is not None and self.scoring.uses_chips:
            self.st.chips.copy_(chips)
        if pot is not None:
            self.st.pot.copy_(pot)
        self._start_deals(self._bar, orders, dealer if orders is not None else None)
        obs, mask_ = self._outputs()
        return VecReset(obs, mask_, self.st.to_act.clone())

    def _new_sessions(self, idx: torch.Tensor, dealer: torch.Tensor | None = None) -> None:
        """``Game.new_session`` bookkeeping for sessions ``idx`` (before their first deal); the dealer by lot."""
        st, n = self.st, self.num_players
        if dealer is None:
            dealer = torch.randint(n, (idx.shape[0],), generator=self._gen, device=self.device)
        scoring = self.scoring
        st.chips.index_fill_(0, idx, self.config.options["bankroll"] if scoring.uses_chips else 0)
        st.scores.index_fill_(0, idx, 0 if scoring.uses_chips else scoring.start_score)
        for t in (st.pot, st.reserve, st.queue, st.queue_len, st.deals, st.streak):
            t.index_fill_(0, idx, 0)
        st.alive.index_fill_(0, idx, self.k.all_seats)
        st.dealer.index_copy_(0, idx, dealer)

    def _start_deals(self, idx: torch.Tensor, orders: torch.Tensor | None = None,
                     order_dealer: torch.Tensor | None = None) -> None:
        """``Game.start_deal`` for sessions ``idx``: a fresh deal, its deck order, the stages to the first decision."""
        if idx.shape[0] == 0:
            return
        program, k = self.program, self.k

        self.st.fresh_deal_(idx, self.scoring.uses_chips)

        def start(sub: TableState, m: torch.Tensor) -> None:
            if orders is None:
                sub.deck = self.rules.permutations(sub, torch.full_like(m, k.N), m)
            else:
                sub.deck = orders.clone()  # given at a reset: one per session, dealt for the reset's dealer
                sub.order_dealer = order_dealer.clone()
            program.resolve(sub, slow=True)

        self._on_rows(idx, start)

    # ------------------------------------------------------------------ step
    def step(self, actions: torch.Tensor) -> VecStep:
        """One action per session; see :class:`~mauscheln_env.vector.VectorEnv`."""
        if self._mask_t is None:
            raise MauschelnError("call reset() before step()")
        a = self._check_actions(actions)
        self._log_start()
        B, n, dev = self.num_envs, self.num_players, self.device
        st, program = self.st, self.program
        if self.compiled:
            drawn = program.reshuffling_draws(st, a)
            if drawn.shape[0]:  # their draw reshuffles (chance): here; the rest of their step in the graph
                self._on_rows(drawn, program.draw_first)
            st.assign_(self._advance_step(st, a))
            deferred = (st.pause == PAUSE_STEP).nonzero()[:, 0]
            if deferred.shape[0]:  # advance's own deferral, empty after reshuffling_draws; else: the step here
                def redo(sub: TableState, m: torch.Tensor) -> None:
                    sub.pause = torch.zeros_like(sub.pause)
                    program.advance_rows(sub, a.index_select(0, deferred))

                self._on_rows(deferred, redo)
        else:
            program.advance_rows(st, a)
        paused = (st.pause == PAUSE_STAGE).nonzero()[:, 0]
        if paused.shape[0]:
            def resume(sub: TableState, m: torch.Tensor) -> None:
                sub.pause = torch.zeros_like(sub.pause)
                program.resolve(sub, slow=True)

            self._on_rows(paused, resume)
        ended = st.end_kind.nonzero()[:, 0]
        rewards = torch.zeros(B, n, dtype=torch.float32, device=dev)
        kind = torch.zeros(B, dtype=torch.int64, device=dev)
        end_seat = torch.full((B,), -1, dtype=torch.int64, device=dev)
        terminated = torch.zeros(B, dtype=torch.bool, device=dev)
        truncated = torch.zeros(B, dtype=torch.bool, device=dev)
        new_deal = torch.zeros(B, dtype=torch.bool, device=dev)
        restart = ended[:0]
        if ended.shape[0]:
            restart = self._end_deals(ended, rewards, kind, end_seat, terminated, truncated)
            new_deal[ended] = True
        info: dict[str, torch.Tensor] = {"deal_kind": kind, "new_deal": new_deal, "end_seat": end_seat}
        final_chips = st.chips.index_select(0, restart)
        if self.final_observations:
            info["final_index"] = restart
            sub = RowView(st, restart.repeat_interleave(n))
            info["final_obs"] = self.encoder.encode(sub, self.k.seat_ar.repeat(restart.shape[0])).view(
                restart.shape[0], n, self.obs_size)
        if restart.shape[0]:
            self._new_sessions(restart)
        self._start_deals(ended)
        info["final_chips"] = st.chips.clone().index_copy_(0, restart, final_chips)
        obs, mask_ = self._outputs()
        return VecStep(obs, mask_, st.to_act.clone(), rewards, terminated, truncated, info)

    def _end_deals(self, idx: torch.Tensor, rewards: torch.Tensor, kind: torch.Tensor, end_seat: torch.Tensor,
                   terminated: torch.Tensor, truncated: torch.Tensor) -> torch.Tensor:
        """Settle the deals of sessions ``idx`` (RULES.md §3), eliminate and end sessions or move the deal on
        (§3.5, ``Game.next_deal``). Fills the step's outputs for them; returns the sessions that ended."""
        k, scoring, program, cfg = self.k, self.scoring, self.program, self.config
        out: dict[str, torch.Tensor] = {}

        def settle(sub: TableState, m: torch.Tensor) -> None:
            ek = sub.end_kind
            seat = sub.end_seat.clamp(min=0)
            for code, fn in ((DEAL_SETTLED, lambda r: scoring.settle(sub, r)),
                             (DEAL_NO_PLAY, lambda r: scoring.no_play(sub, r, seat)),
                             (DEAL_MOUCHE, lambda r: scoring.mouche(sub, r, seat))):
                rows_m = mask(ek == code)
                if bool(rows_m.any()):
                    fn(rows_m)
            if scoring.uses_chips:
                out["rewards"] = (sub.chips - sub.start).to(torch.float32)
            else:
                out["rewards"] = (sub.start - sub.scores).to(torch.float32)
            out["kind"] = ek.clone()
            out["seat"] = torch.where((ek == DEAL_NO_PLAY) | (ek == DEAL_MOUCHE), sub.end_seat, -1)
            counted = ek != DEAL_THROW_IN
            sub.deals = sub.deals + counted
            sub.streak = torch.where(counted, 0, sub.streak + 1)
            if scoring.uses_chips:
                sub.alive = sub.alive & ((mask(sub.chips > 0) & k.seat_bit).sum(1))
            done = k.count(sub.alive) < 3
            if cfg.options.get("max_deals") is not None:
                done = done | (sub.deals >= cfg.options["max_deals"])
            if program.rounds is not None:
                done = done | (sub.deals >= program.rounds * k.n)
            if program.ends_at_zero:
                done = done | (sub.scores == 0).any(1)
            cut = ~done & ((sub.streak >= cfg.options["max_throw_ins"])
                           | (sub.deals >= cfg.options["max_session_deals"]))
            over = done | cut
            sub.phase = torch.where(over, int(Phase.OVER), sub.phase)
            sub.dealer = torch.where(over, sub.dealer, k.succ(sub.dealer, sub.alive))
            out["done"], out["cut"] = done, cut

        self._on_rows(idx, settle)
        rewards.index_copy_(0, idx, out["rewards"])
        kind.index_copy_(0, idx, out["kind"])
        end_seat.index_copy_(0, idx, out["seat"])
        terminated.index_copy_(0, idx, out["done"])
        truncated.index_copy_(0, idx, out["cut"])
        return idx[out["done"] | out["cut"]]

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
            problems.append(f"session {b}: action {shown} is not legal for seat {int(self.st.to_act[b])} in phase "
                            f"{Phase(int(self.st.phase[b])).name.lower()}; legal: {legal}")
        raise IllegalActionError("; ".join(problems))

    # ------------------------------------------------------------------ masks and observations
    def use_buffers(self, obs: torch.Tensor, mask_: torch.Tensor) -> None:
        """Write every later ``obs`` and ``mask`` into these tensors (``float32[B, D]``, ``bool[B, A]``).

        They may be row blocks of larger (shared-memory) tensors: that is how the workers of
        :class:`~mauscheln_env.vecenv.SubprocVectorEnv` fill one output; ``step`` and ``reset`` then
        return them, as with ``copy=False``.
        """
        B, D, A = self.num_envs, self.obs_size, self.num_actions
        if (obs.shape != (B, D) or obs.dtype != torch.float32 or mask_.shape != (B, A) or mask_.dtype != torch.bool
                or obs.device != self.device or mask_.device != self.device
                or not obs.is_contiguous() or not mask_.is_contiguous()):
            raise MauschelnError(f"use_buffers needs contiguous float32[{B}, {D}] and bool[{B}, {A}] on {self.device}")
        self._obs_buf, self._mask_buf, self.copy = obs, mask_, False
        self._set_ones = None  # cleared whole at the next step

    def _outputs(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Mask and observation of the seat to act; keeps the mask to validate the next actions.

        Into its own buffer (``copy=False``) the observation is written in place. Every card and number cell
        is rewritten each step, so only the one-hot cells need clearing. Eagerly the buffer is cleared whole:
        one sequential pass beats ``index_fill_`` over the ~40 scattered cells per row the previous step set.
        Compiled, those cells are cleared by a scatter graph of their own instead, which beats clearing the
        whole buffer.
        """
        if self.copy:
            out = torch.zeros(self.num_envs, self.obs_size, dtype=torch.float32, device=self.device)
        else:
            if self._obs_buf is None:
                self._obs_buf = torch.empty(self.num_envs, self.obs_size, dtype=torch.float32, device=self.device)
            out = self._obs_buf
            if self.compiled and self._set_ones is not None:
                self._clear_ones(out.view(-1), self._set_ones)
            else:
                out.zero_()
        legal, ones, numbers = self._acting_step(self.st, out)
        self._fill_ones(out.view(-1), ones)
        self.encoder.write_numbers(out, numbers)
        if self.compiled and not self.copy:
            self._set_ones = ones
        legal = legal.view(torch.bool)  # compiled code makes uint8 (its bool stores are slow on the CPU)
        if self._mask_buf is not None:
            legal = self._mask_buf.copy_(legal)
        self._mask_t = legal
        return out, legal.clone() if self.copy else legal

    def _acting(self, st: TableState, out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Legal mask and observation parts of every seat to act (``compile`` fuses this): writes the card sets
        into ``out`` and returns the mask (uint8), the flat one-hot indices and the numbers."""
        k = self.k
        ones, numbers, cards = self.encoder.parts_of(st, st.to_act, self._row_obs)
        self.encoder.write_cards(out, cards)
        if torch.compiler.is_compiling():
            bits = self.program.legal(st)
            legal = ((bits[:, None] >> k.action_ar) & 1).to(torch.uint8)
        else:
            bits = self.program.legal_rows(st)
            legal = k.expand(bits[:, None], self.num_actions, as_bool=True)[:, 0].contiguous()
        return legal, ones, numbers

    def observe(self, seats: torch.Tensor | int) -> torch.Tensor:
        """``float32[B, D]``: ``Observer.encode(state, seat)`` for one seat per session (or one seat for all)."""
        if self._mask_t is None:
            raise MauschelnError("call reset() first")
        me = torch.as_tensor(seats, device=self.device).to(torch.int64).expand(self.num_envs).contiguous()
        if bool(((me < 0) | (me >= self.num_players)).any()):
            raise MauschelnError(f"seats must lie in 0..{self.num_players - 1}, got {seats!r}")
        return self.encoder.encode(self.st, me)

    def state(self) -> torch.Tensor:
        """``float32[B, state_size]``: ``Observer(game, omniscient=True).encode`` of every session."""
        if self._mask_t is None:
            raise MauschelnError("call reset() first")
        return self.state_encoder.encode(self.st, torch.zeros(self.num_envs, dtype=torch.int64, device=self.device))

    def observe_rows(self, rows: torch.Tensor, seats: torch.Tensor) -> torch.Tensor:
        """``float32[len(rows), D]``: the observation of seat ``seats[i]`` in session ``rows[i]``, encoding only
        those sessions (rows may repeat); ``observe(seats)[rows]`` without encoding the whole batch."""
        rows, seats = self._rows(rows), torch.as_tensor(seats, device=self.device).to(torch.int64)
        if seats.shape != rows.shape:
            raise MauschelnError(f"rows and seats must have one shape, got {tuple(rows.shape)} and "
                                 f"{tuple(seats.shape)}")
        if bool(((seats < 0) | (seats >= self.num_players)).any()):
            raise MauschelnError(f"seats must lie in 0..{self.num_players - 1}")
        return self.encoder.encode(self.st.select(rows), seats)

    def state_rows(self, rows: torch.Tensor) -> torch.Tensor:
        """``float32[len(rows), state_size]``: ``state()[rows]``, encoding only those sessions."""
        rows = self._rows(rows)
        return self.state_encoder.encode(self.st.select(rows), torch.zeros_like(rows))

    def _rows(self, rows: torch.Tensor) -> torch.Tensor:
        if self._mask_t is None:
            raise MauschelnError("call reset() first")
        rows = torch.as_tensor(rows, device=self.device)
        if rows.dim() != 1 or rows.dtype not in (torch.int32, torch.int64):
            raise MauschelnError(f"rows must be a 1-d integer tensor of session indices, got {rows.dtype} "
                                 f"of shape {tuple(rows.shape)}")
        rows = rows.to(torch.int64)
        if bool(((rows < 0) | (rows >= self.num_envs)).any()):
            raise MauschelnError(f"rows must lie in 0..{self.num_envs - 1}")
        return rows
