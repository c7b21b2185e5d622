"""Settlement kernels (RULES.md §3) and the end of a deal: eliminations, the session's end, the next dealer.

One kernel per scoring object of the ruleset modules (``PerTrickBete``,
``FlatBete``, ``MoucheScoring``, ``PointsScoring``), chosen by type in
:mod:`mauscheln_env.batched.program`. They run outside the fused step, on the
few sessions whose deal ended, and mirror the reference's order of payments:
credits before debits (D6), each payment min(owed, chips) (D5).
"""

from __future__ import annotations

from typing import Any

import torch

from mauscheln_env.batched.base import Rules
from mauscheln_env.batched.ops import any_rows, mask, pick, seat_get, seat_onehot
from mauscheln_env.batched.state import TableState
from mauscheln_env.engine import Role


class ScoringK:
    """``ScoringRule``: settle the tricks, a deal without play, a mouche hand (kinds that have one)."""

    uses_chips = True

    def __init__(self, scoring: Any, rules: Rules) -> None:
        self.scoring = scoring
        self.rules = rules
        self.k = rules.k

    def settle(self, st: TableState, m: torch.Tensor) -> None:
        raise NotImplementedError

    def no_play(self, st: TableState, m: torch.Tensor, seat: torch.Tensor) -> None:
        """``Game.settle_no_play``: ``seat`` takes the whole pot; nobody pays."""
        st.chips = st.chips + (seat_onehot(seat, self.k.seat_ar) & (st.pot & m)[:, None])
        st.pot = st.pot & ~m

    def mouche(self, st: TableState, m: torch.Tensor, seat: torch.Tensor) -> None:
        raise NotImplementedError(f"{type(self.scoring).__name__} has no mouche hand")

    def credit_tricks(self, st: TableState, m: torch.Tensor, pot: torch.Tensor) -> torch.Tensor:
        """``Game.credit_tricks``: each participant receives its tricks times ⌊P/T⌋ from the pot."""
        k = self.k
        part = mask(((st.parts[:, None] >> k.seat_ar) & 1) != 0) & m[:, None]
        credit = (st.won * (pot // k.T)[:, None]) & part
        st.chips = st.chips + credit
        st.pot = st.pot - credit.sum(1)
        return part


class PerTrickK(ScoringK):
    """``PerTrickBete`` (§3.1) and ``FlatBete`` (Mousel, D24): ⌊P/4⌋ per trick, then a bête of P per missing
    trick (or one flat P) for the mauschler / committed player (2 tricks) and every other participant (1);
    then the Belli penalty (D20), which is not part of P."""

    def __init__(self, scoring: Any, rules: Rules, flat: bool) -> None:
        super().__init__(scoring, rules)
        self.flat = flat
        self.belli = scoring.penalty is not None

    def settle(self, st: TableState, m: torch.Tensor) -> None:
        k = self.k
        pot = st.pot.clone()
        part = self.credit_tricks(st, m, pot)
        two = (st.roles == int(Role.MAUSCHLER)) | (st.roles == int(Role.COMMITTED))
        need = torch.where(two, 2, 1)
        if self.flat:
            owed = pot[:, None] & mask(st.won < need)
        else:
            owed = pot[:, None] * (need - st.won).clamp(min=0)
        paid = torch.minimum(owed & part, st.chips)
        st.chips = st.chips - paid
        st.pot = st.pot + paid.sum(1)
        if self.belli:
            due = m & mask(st.belli_payer >= 0)
            if any_rows(due):
                payer = st.belli_payer.clamp(min=0)
                fine = seat_get(st.chips, payer).clamp(max=k.stake) & due
                st.chips = st.chips - (seat_onehot(payer, k.seat_ar) & fine[:, None])
                to_ace = mask(st.belli_to >= 0)
                st.chips = st.chips + (seat_onehot(st.belli_to, k.seat_ar) & (fine & to_ace)[:, None])
                st.pot = st.pot + (fine & ~to_ace)


class MoucheK(ScoringK):
    """``MoucheScoring`` (§3.3): ⌊P/5⌋ per trick, a participant without a trick pays P (``mery_cap``: at most
    M, D33); a mouche hand takes P (and under ``collect_1730`` the whole queue) and every other seat still in
    pays; with the queue each payment becomes a queued item, in order from forehand (D32)."""

    def __init__(self, scoring: Any, rules: Rules) -> None:
        super().__init__(scoring, rules)
        self.queue = bool(scoring.queue)
        self.collect = bool(scoring.collect_1730)
        self.cap = scoring.mery_cap

    def settle(self, st: TableState, m: torch.Tensor) -> None:
        pot = st.pot.clone()
        part = self.credit_tricks(st, m, pot)
        self._pay(st, m, pot, part & mask(st.won == 0))

    def mouche(self, st: TableState, m: torch.Tensor, seat: torch.Tensor) -> None:
        k = self.k
        pot = st.pot.clone()
        credit = pot & m
        if self.queue and self.collect:
            takes = m & mask(st.queue_len > 0)
            credit = credit + (st.queue.sum(1) & takes)
            st.queue = st.queue & ~takes[:, None]
            st.queue_len = st.queue_len & ~takes
        st.pot = st.pot & ~m
        one = seat_onehot(seat, k.seat_ar)
        st.chips = st.chips + (one & credit[:, None])
        players = mask(((self.rules.playing(st)[:, None] >> k.seat_ar) & 1) != 0)
        self._pay(st, m, pot, players & ~one & m[:, None])

    def _pay(self, st: TableState, m: torch.Tensor, pot: torch.Tensor, payers: torch.Tensor) -> None:
        """Each of ``payers`` pays min(P, M, chips): into the pot, or as one queued item each."""
        k = self.k
        owed = pot if self.cap is None else pot.clamp(max=self.cap)
        paid = torch.minimum(owed[:, None] & payers, st.chips)
        st.chips = st.chips - paid
        if not self.queue:
            st.pot = st.pot + paid.sum(1)
            return
        order = k.order_tab.index_select(0, (self.rules.forehand(st) << k.n) + st.alive)
        live = k.count(st.alive)
        items = paid.gather(1, order) & mask(k.seat_ar < live[:, None])  # in order from forehand
        nonzero = items > 0
        need = st.queue_len + nonzero.sum(1)
        if any_rows(mask(need > st.queue.shape[1])):
            st.resize_queue(int(need.max()))
        slot = torch.where(nonzero, st.queue_len[:, None] + nonzero.cumsum(1) - 1, st.queue.shape[1])
        grown = torch.cat([st.queue, torch.zeros_like(st.queue[:, :1])], 1)
        st.queue = grown.scatter(1, slot, torch.where(nonzero, items, 0))[:, :-1]
        st.queue_len = need


class PointsK(ScoringK):
    """``PointsScoring`` (Muschka, §3.4, D35): -1 per trick or +5 with none, the ace of spades' holder 5 more
    (10 with spades trump) or +10 without a trick; below 0 the score restarts; a lone seat is credited with
    every trick."""

    uses_chips = False

    def __init__(self, scoring: Any, rules: Rules) -> None:
        super().__init__(scoring, rules)
        self.start_score = int(scoring.start_score)
        self.spades = int(scoring.spades)

    def settle(self, st: TableState, m: torch.Tensor) -> None:
        k = self.k
        part = mask(((st.parts[:, None] >> k.seat_ar) & 1) != 0) & m[:, None]
        t = st.won
        delta = torch.where(t > 0, -t, 5)
        holder = k.seat_ar == st.as_holder[:, None]
        extra = torch.where(st.trump_suit == self.spades, 10, 5)[:, None]
        delta = torch.where(holder, torch.where(t >= 1, delta - extra, 10), delta)
        new = st.scores + delta
        new = torch.where(new < 0, self.start_score, new)
        st.scores = pick(part, new, st.scores)

    def no_play(self, st: TableState, m: torch.Tensor, seat: torch.Tensor) -> None:
        """``settle_lone``: the sole remaining seat is credited with all five tricks; nothing is played."""
        k = self.k
        st.parts = pick(m, k.seat_bits(seat), st.parts)
        st.won = pick(seat_onehot(seat, k.seat_ar) & m[:, None], k.T, st.won)
        self.settle(st, m)

