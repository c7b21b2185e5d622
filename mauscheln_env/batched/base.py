"""What every kernel of the batched engine is, and the primitives the rule kernels share.

A :class:`Kernel` mirrors one stage of a ruleset's deal procedure (a
:class:`~mauscheln_env.engine.Stage` in ``game.stages``): :meth:`Kernel.enter`
is the stage's ``enter`` for the rows (sessions) whose deal enters it, and a
stage that asks decisions has :meth:`Kernel.legal` and :meth:`Kernel.act` for
each of its phases. A kernel either asks a decision (sets ``phase`` and
``to_act``), passes on (``entering`` := the next stage, or the stage a "go to
step k" names), or ends the deal (``end_kind``, settled afterwards by the
scoring kernel). Row masks are ``int64`` all-ones/zero (:func:`~.ops.mask`).

The :class:`Rules` object gives kernels the configuration's shared pieces: the
static tables (``k``), the stage indices for jumps, and the primitives below
(fold, ante, mark, take the trump card, open an exchange turn), each the tensor
form of the :class:`~mauscheln_env.engine.Game` method of the same name.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from mauscheln_env.batched.ops import mask, pick, rows, seat_get, seat_onehot, seat_put
from mauscheln_env.batched.state import TableState, sessions_of
from mauscheln_env.engine import PLAYING_ROLES, Phase, Role, StockPolicy

if TYPE_CHECKING:
    from mauscheln_env.batched.statics import Statics

DEAL_SETTLED, DEAL_NO_PLAY, DEAL_THROW_IN, DEAL_MOUCHE = 1, 2, 3, 4
"""``end_kind`` codes: the ``DEAL_*`` codes of :mod:`mauscheln_env.vector`."""


class XTurn(IntEnum):
    """The kinds of exchange turn (the reference's :class:`~mauscheln_env.engine.ExchangeTurn` objects)."""

    NORMAL = 0
    """Discard 0..cap, draw as many (``ExchangeTurn``)."""
    KNOCKER = 1
    """The modern knocker: discard 1..cap, the trump card plus k - 1 blind stock cards (``ModernKnockTurn``)."""
    BLIND = 2
    """Classic 4b: discard 0..4, draw as many blind (``ClassicBlindTurn``)."""
    FINAL = 3
    """Classic 4d / forced knock: discard exactly 1, take the trump card (``ClassicFinalTurn``)."""
    DECIDE = 4
    """An exchange chosen while deciding (Mouche, Muschka): 1..5 cards, then back to deciding (``DecideTurn``)."""


def role_bits(roles: torch.Tensor, values: Any, seat_bit: torch.Tensor) -> torch.Tensor:
    """Seat mask of the seats whose role is one of ``values``."""
    hit = torch.zeros_like(roles, dtype=torch.bool)
    for v in values:
        hit = hit | (roles == int(v))
    return (mask(hit) & seat_bit).sum(1)


PLAYING = tuple(int(r) for r in PLAYING_ROLES)


def ask(st: TableState, m: torch.Tensor, phase: Phase, seat: torch.Tensor | int) -> None:
    """Rows ``m`` are asked the decision ``phase`` by ``seat`` (``Game.ask``)."""
    st.phase = pick(m, int(phase), st.phase)
    st.to_act = pick(m, seat, st.to_act)
    st.entering = pick(m, -1, st.entering)


class Kernel:
    """One stage of the deal procedure as tensor code (see the module docstring)."""

    slow = False
    """Entered only outside the fused step (it draws chance or does heavy work once per deal): a row that reaches
    it in the fused step pauses there, and the engine continues it on the rows concerned."""
    phases: tuple[Phase, ...] = ()

    def __init__(self, stage: Any, index: int, rules: Rules) -> None:
        self.stage = stage
        self.index = index
        self.rules = rules
        self.k: Statics = rules.k

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        """Rows ``m`` enter this stage (the reference's ``Stage.enter``)."""
        self.done(st, m)

    def done(self, st: TableState, m: torch.Tensor, target: int | None = None) -> None:
        """Rows ``m`` finished this stage: the next one is entered (``Game.proceed``), or ``target``."""
        st.entering = pick(m, self.index + 1 if target is None else target, st.entering)

    def ask(self, st: TableState, m: torch.Tensor, phase: Phase, seat: torch.Tensor | int) -> None:
        """Rows ``m`` are asked the decision ``phase`` by ``seat`` (``Game.ask``)."""
        ask(st, m, phase, seat)

    def end(self, st: TableState, m: torch.Tensor, kind: int, seat: torch.Tensor | int = -1) -> None:
        """Rows ``m`` end the deal: ``kind`` (``DEAL_*``), ``seat`` takes the pot (no play, mouche)."""
        st.end_kind = pick(m, kind, st.end_kind)
        st.end_seat = pick(m, seat, st.end_seat)
        st.entering = pick(m, -1, st.entering)

    def legal(self, st: TableState, phase: Phase) -> torch.Tensor:
        """The legal actions of the seat to act as a bit mask over the action ids (rows in ``phase``)."""
        raise NotImplementedError

    def act(self, st: TableState, phase: Phase, a: torch.Tensor, m: torch.Tensor) -> None:
        """Rows ``m`` (in ``phase``) apply their action ``a`` (the reference's ``Stage.act``)."""
        raise NotImplementedError


class Rules:
    """The configuration's kernels and the primitives they share (built by :mod:`mauscheln_env.batched.program`)."""

    def __init__(self, game: Any, k: Statics) -> None:
        self.game = game
        self.k = k
        self.policy: StockPolicy = game.stock_policy
        self.kernels: list[Kernel] = []
        self.decide: Any = None
        """The Decide kernel (its exchanges return to it), if the ruleset decides."""
        self.final_after_goers = False
        """A knocker's plan ends with a final turn (classic 4d)."""
        self.generator: torch.Generator | None = None
        """The engine's random source (set by the engine); chance is drawn only outside the fused step."""
        self.chance_log: list[list[list[int]]] | None = None
        """With the engine's ``record_chance``: every permutation drawn, per session, in the order drawn."""
        self.chance_sources: Any = None
        """Set by :meth:`BatchedMauscheln.use_chance`: per session, an object whose ``permutation(k)`` gives that
        session's permutations (instead of :attr:`generator`)."""

    def index_of(self, stage_type: type) -> int:
        """Index of the first stage of ``stage_type`` (the reference's ``Game.goto``)."""
        for i, stage in enumerate(self.game.stages):
            if isinstance(stage, stage_type):
                return i
        raise RuntimeError(f"no {stage_type.__name__} stage in {self.game.stages}")

    # ------------------------------------------------------------------ chance
    def permutations(self, st: TableState, size: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        """``int64[M, N]``: in each row of ``m`` a uniform permutation of ``0..size-1`` in its first ``size``
        columns (the reference's ``rng.permutation(size)``), drawn in row order; other rows get the identity.

        Drawn from :attr:`generator`, or from each session's own source when the engine was given
        :attr:`chance_sources`. Every draw is appended to ``chance_log`` (by the sessions the rows of ``st``
        are) when the engine records chance. Never inside the fused step.
        """
        k = self.k
        M, N = m.shape[0], k.N
        out = k.card_ar.expand(M, N).clone()
        idx = m.nonzero()[:, 0]
        if idx.shape[0] == 0:
            return out
        sz = size.index_select(0, idx)
        sessions = None
        if self.chance_sources is not None or self.chance_log is not None:
            above = sessions_of(st)
            sessions = idx if above is None else above.index_select(0, idx)
        if self.chance_sources is not None:  # each session's own source, in row order
            perm = k.card_ar.expand(idx.shape[0], N).clone()
            for i, (row, count) in enumerate(zip(sessions.tolist(), sz.tolist())):
                drawn = self.chance_sources[row].permutation(count)
                perm[i, :count] = torch.as_tensor(np.asarray(drawn, dtype=np.int64), device=k.device)
        else:
            u = torch.rand(idx.shape[0], N, generator=self.generator, device=k.device)
            u = torch.where(k.card_ar < sz[:, None], u, 2.0)
            perm = u.argsort(dim=1)
        out.index_copy_(0, idx, perm)
        if self.chance_log is not None:
            for row, count, p in zip(sessions.tolist(), sz.tolist(), perm.tolist()):
                self.chance_log[row].append(p[:count])
        return out

    # ------------------------------------------------------------------ primitives
    def forehand(self, st: TableState) -> torch.Tensor:
        return self.k.succ(st.dealer, st.alive)

    def fold(self, st: TableState, m: torch.Tensor, seat: torch.Tensor) -> None:
        """``Game.fold``: ``seat`` passes: out of the deal, its hand dead."""
        k = self.k
        hand = seat_get(st.hands, seat)
        st.roles = seat_put(st.roles, seat, int(Role.OUT), m, k.seat_ar)
        st.dead = st.dead | (hand & m)
        st.hands = seat_put(st.hands, seat, 0, m, k.seat_ar)

    def set_role(self, st: TableState, m: torch.Tensor, seat: torch.Tensor, role: Role) -> None:
        st.roles = seat_put(st.roles, seat, int(role), m, self.k.seat_ar)

    def ante(self, st: TableState, m: torch.Tensor, seat: torch.Tensor, amount: int | None = None) -> None:
        """``Game.ante``: ``seat`` pays min(amount, chips) into the pot (default: the stake)."""
        owed = self.k.stake if amount is None else amount
        paid = seat_get(st.chips, seat).clamp(max=owed) & m
        st.chips = st.chips - (seat_onehot(seat, self.k.seat_ar) & paid[:, None])
        st.pot = st.pot + paid

    def mark(self, st: TableState, m: torch.Tensor, seat: torch.Tensor, card: torch.Tensor) -> None:
        """``Game.mark``: ``seat`` marks ``card`` for discarding; it leaves the hand face down at once."""
        bit = self.k.cards_bit(card) & m
        one = seat_onehot(seat, self.k.seat_ar) & bit[:, None]
        st.hands = st.hands ^ one
        st.discards = st.discards | one
        st.pile = st.pile | bit
        st.marked = st.marked + (m & 1)

    def take_trump_card(self, st: TableState, m: torch.Tensor, seat: torch.Tensor) -> None:
        """``Game.take_trump_card``: ``seat`` takes the face-up trump card into hand."""
        bit = self.k.cards_bit(st.trump_card) & m
        one = seat_onehot(seat, self.k.seat_ar) & bit[:, None]
        st.holder = pick(m, seat, st.holder)
        st.face_up = st.face_up & ~m
        st.hands = st.hands | one
        st.drawn = st.drawn | one

    def cap(self, st: TableState, extra: int = 0) -> torch.Tensor:
        """``StockRule.cap``: most cards an exchange may take now under the shortage policy."""
        limit = self.k.exchange_limit
        if self.policy is StockPolicy.CAP:
            return (st.stock_n + extra).clamp(max=limit)
        return torch.full_like(st.stock_n, limit)

    def open_turn(self, st: TableState, m: torch.Tensor, seat: torch.Tensor, kind: torch.Tensor | int) -> None:
        """``Game.open_exchange`` with the turn's ``open``: ``seat`` exchanges next, a turn of ``kind``."""
        k = self.k
        kind_t = kind if isinstance(kind, torch.Tensor) else torch.full_like(st.phase, int(kind))
        knocker, blind, final = (mask(kind_t == int(x)) for x in (XTurn.KNOCKER, XTurn.BLIND, XTurn.FINAL))
        ask(st, m, Phase.EXCHANGE, seat)
        st.xturn = pick(m, kind_t, st.xturn)
        st.marked = st.marked & ~m
        st.unseen = st.unseen & ~(m & (knocker | blind | final))  # he now looks at his hand
        st.blind = st.blind & ~(m & final)  # 4d: he picks up and sees his cards
        xcap = pick(knocker, self.cap(st, 1), pick(final, 1, pick(blind, k.exchange_limit, self.cap(st))))
        st.xmin = pick(m, (knocker | final) & 1, st.xmin)
        st.xcap = pick(m, xcap, st.xcap)

    def playing(self, st: TableState) -> torch.Tensor:
        """Seat mask of the seats in the deal (``PLAYING_ROLES``)."""
        return role_bits(st.roles, PLAYING, self.k.seat_bit)

    def blind_of(self, st: TableState, seat: torch.Tensor) -> torch.Tensor:
        """``deal.blind[seat]``: only the knocking dealer holds blind cards."""
        return st.blind & mask(seat == st.dealer)


def per_seat(m: torch.Tensor) -> torch.Tensor:
    """A row mask for a per-seat field."""
    return rows(m)
