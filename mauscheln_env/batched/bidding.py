"""Kernels of the bidding stages: the knocks, declaring and going with, Mousel's in or out, classic stakes.

Each mirrors one stage class of the ruleset modules (named in its docstring) and
is chosen for it by type (:mod:`mauscheln_env.batched.program`). The queues of
the reference become seat arithmetic: declaring runs from forehand to the
dealer, going with from the mauschler's left round to his right, each over the
live seats in the rules' direction.
"""

from __future__ import annotations

from typing import Any

import torch

from mauscheln_env.batched.base import DEAL_NO_PLAY, DEAL_THROW_IN, Kernel, Rules, XTurn, role_bits
from mauscheln_env.batched.ops import any_rows, mask, pick, seat_get
from mauscheln_env.batched.state import TableState
from mauscheln_env.engine import Phase, Role

# ---------------------------------------------------------------------- the knocks


class KnockK(Kernel):
    """``BlindKnock``: the dealer's blind knock on a trump card of at least ``min_rank`` (D9).

    A knock makes the dealer the mauschler and jumps to going with (``ModernKnock``, ``ClassicKnock``: §2.2,
    §2.3 step 4) or makes him Mousel's committed player (``MouselKnock``, §2.4 step 3, ``committed=True``).
    """

    phases = (Phase.KNOCK,)

    def __init__(self, stage: Any, index: int, rules: Rules, committed: bool, goto: int | None) -> None:
        super().__init__(stage, index, rules)
        k = self.k
        limit = rules.game.spec.rank_order.index(stage.min_rank)
        self.may = k.long([int(p <= limit) for p in rules.game.rank_pos] + [0])
        self.committed = committed
        self.goto = goto

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        ask = m & mask(self.may.index_select(0, st.trump_card) != 0)
        st.unseen = st.unseen | (ask & 1)  # the knock decision is blind
        self.ask(st, ask, Phase.KNOCK, st.dealer)
        self.done(st, m & ~ask)

    def legal(self, st: TableState, phase: Phase) -> torch.Tensor:
        return torch.full_like(st.phase, self.k.bit("knock") | self.k.bit("no_knock"))

    def act(self, st: TableState, phase: Phase, a: torch.Tensor, m: torch.Tensor) -> None:
        yes = m & mask(a == self.k.ids["knock"])
        no = m & ~yes
        st.knocked = pick(m, pick(yes, 1, 2), st.knocked)
        st.unseen = st.unseen & ~no
        st.mauschler = pick(yes, st.to_act, st.mauschler)
        self.rules.set_role(st, yes, st.to_act, Role.COMMITTED if self.committed else Role.MAUSCHLER)
        self.done(st, no)
        self.done(st, yes, self.goto)


class ForcedKnockK(Kernel):
    """``ForcedKnock`` (§2.3 step 3, D10, D15): on a new pot the dealer is mauschler, every other seat plays,
    and the only exchange is his: discard exactly one card and take the trump card."""

    def __init__(self, stage: Any, index: int, rules: Rules, exchange: int) -> None:
        super().__init__(stage, index, rules)
        self.exchange = exchange

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        k = self.k
        forced = m & mask(st.new_pot != 0)
        dealer = st.dealer
        st.mauschler = pick(forced, dealer, st.mauschler)
        st.knocked = pick(forced, 1, st.knocked)
        live = ((st.alive[:, None] >> k.seat_ar) & 1) != 0
        roles = torch.where(k.seat_ar == dealer[:, None], int(Role.MAUSCHLER), int(Role.GOER))
        st.roles = pick(forced[:, None] & mask(live), roles, st.roles)
        st.parts = pick(forced, st.alive, st.parts)
        st.xfirst = pick(forced, dealer, st.xfirst)
        st.xturn = pick(forced, int(XTurn.FINAL), st.xturn)
        st.leader = pick(forced, dealer, st.leader)
        self.done(st, forced, self.exchange)
        self.done(st, m & ~forced)


# ---------------------------------------------------------------------- declaring and going with


class DeclareK(Kernel):
    """``mauscheln.Declare`` (§2.1 step 5): from forehand to the dealer, ``mauscheln`` or ``pass``; the first
    ``mauscheln`` makes the mauschler; all ``pass``: a throw-in. ``Mauschelzwang`` (D13): the trump-ace holder
    may only declare."""

    phases = (Phase.DECLARE,)

    def __init__(self, stage: Any, index: int, rules: Rules, compulsion: bool) -> None:
        super().__init__(stage, index, rules)
        self.compulsion = compulsion

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        self.ask(st, m, Phase.DECLARE, self.rules.forehand(st))

    def legal(self, st: TableState, phase: Phase) -> torch.Tensor:
        k = self.k
        both = k.bit("mauscheln") | k.bit("pass")
        if not self.compulsion:
            return torch.full_like(st.phase, both)
        ace = k.cards_bit(k.trump_ace.index_select(0, st.trump_suit))
        bound = mask((seat_get(st.hands, st.to_act) & ace) != 0)
        return pick(bound, k.bit("mauscheln"), both)

    def act(self, st: TableState, phase: Phase, a: torch.Tensor, m: torch.Tensor) -> None:
        k, rules = self.k, self.rules
        seat = st.to_act
        declares = m & mask(a == k.ids["mauscheln"])
        passes = m & ~declares
        st.mauschler = pick(declares, seat, st.mauschler)
        rules.set_role(st, declares, seat, Role.MAUSCHLER)
        rules.set_role(st, passes, seat, Role.DECLINED)
        self.done(st, declares)
        last = passes & mask(seat == st.dealer)
        self.end(st, last, DEAL_THROW_IN)
        st.to_act = pick(passes & ~last, k.succ(seat, st.alive), st.to_act)


class GoWithK(Kernel):
    """``mauscheln.GoWith`` (§2.1 step 6, D7): from the mauschler's left over every other seat, ``go`` or
    ``pass``, once; nobody goes: he takes the pot. ``Mitgehzwang`` (D14): the last seat must go if nobody did.

    The exchange plan: the mauschler first (a knocker's turn of ``knock_turn``), then the goers.
    """

    phases = (Phase.GO_WITH,)

    def __init__(self, stage: Any, index: int, rules: Rules, compulsion: bool, knock_turn: XTurn) -> None:
        super().__init__(stage, index, rules)
        self.compulsion = compulsion
        self.knock_turn = knock_turn

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        self.ask(st, m, Phase.GO_WITH, self.k.succ(st.mauschler, st.alive))

    def legal(self, st: TableState, phase: Phase) -> torch.Tensor:
        k = self.k
        both = k.bit("go") | k.bit("pass")
        if not self.compulsion:
            return torch.full_like(st.phase, both)
        last = k.succ(st.to_act, st.alive) == st.mauschler
        nobody = role_bits(st.roles, (Role.GOER,), k.seat_bit) == 0
        return pick(mask(last & nobody), k.bit("go"), both)

    def act(self, st: TableState, phase: Phase, a: torch.Tensor, m: torch.Tensor) -> None:
        k, rules = self.k, self.rules
        seat = st.to_act
        goes = m & mask(a == k.ids["go"])
        rules.set_role(st, goes, seat, Role.GOER)
        rules.fold(st, m & ~goes, seat)
        nxt = k.succ(seat, st.alive)
        m_last = m & mask(nxt == st.mauschler)
        st.to_act = pick(m & ~m_last, nxt, st.to_act)
        if not any_rows(m_last):
            return
        goers = role_bits(st.roles, (Role.GOER,), k.seat_bit)
        nobody = m_last & mask(goers == 0)
        self.end(st, nobody, DEAL_NO_PLAY, st.mauschler)
        play = m_last & ~nobody
        mauschler = st.mauschler
        st.parts = pick(play, goers | k.seat_bits(mauschler), st.parts)
        st.xfirst = pick(play, mauschler, st.xfirst)
        st.xturn = pick(play, pick(mask(st.knocked == 1), int(self.knock_turn), int(XTurn.NORMAL)), st.xturn)
        st.leader = pick(play, mauschler, st.leader)
        self.done(st, play)


# ---------------------------------------------------------------------- Mousel


class MouselDeclareK(Kernel):
    """``mousel.MouselDeclare`` (§2.4 steps 4-6, D24): ``in`` / ``in_lead`` / ``out`` from forehand (a knocking
    dealer skipped), the auto rule, a single IN takes the pot, the committed player, the exchange order."""

    phases = (Phase.DECLARE,)

    def __init__(self, stage: Any, index: int, rules: Rules) -> None:
        super().__init__(stage, index, rules)
        self.volunteer = bool(stage.volunteer_leader)

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        self.ask(st, m, Phase.DECLARE, self.rules.forehand(st))  # forehand is never a knocking dealer (n >= 3)

    def legal(self, st: TableState, phase: Phase) -> torch.Tensor:
        k = self.k
        acts = torch.full_like(st.phase, k.bit("in") | k.bit("out"))
        if self.volunteer:
            none = role_bits(st.roles, (Role.COMMITTED,), k.seat_bit) == 0
            acts = acts | (k.bit("in_lead") & mask(none & (st.knocked != 1)))
        return acts

    def act(self, st: TableState, phase: Phase, a: torch.Tensor, m: torch.Tensor) -> None:
        k, rules = self.k, self.rules
        seat = st.to_act
        out = m & mask(a == k.ids["out"])
        lead = m & mask(a == k.ids["in_lead"]) if self.volunteer else torch.zeros_like(m)
        rules.fold(st, out, seat)
        rules.set_role(st, lead, seat, Role.COMMITTED)
        st.mauschler = pick(lead, seat, st.mauschler)
        rules.set_role(st, m & ~out & ~lead, seat, Role.IN)
        nxt = k.succ(seat, st.alive)
        last = m & mask((seat == st.dealer) | ((st.knocked == 1) & (nxt == st.dealer)))
        going = m & ~last
        outs = role_bits(st.roles, (Role.OUT,), k.seat_bit)
        auto = going & mask((st.alive & ~outs & ~k.seat_bits(nxt)) == 0)  # every other seat is out
        rules.set_role(st, auto, nxt, Role.IN)
        st.to_act = pick(going & ~auto, nxt, st.to_act)
        ended = last | auto
        if not any_rows(ended):
            return
        fh = rules.forehand(st)
        ins = role_bits(st.roles, (Role.IN, Role.COMMITTED), k.seat_bit)
        single = ended & mask(k.count(ins) == 1)
        self.end(st, single, DEAL_NO_PLAY, k.first_from(fh, ins))
        play = ended & ~single
        fh_commits = play & mask((st.mauschler < 0) & (seat_get(st.roles, fh) == int(Role.IN)))
        rules.set_role(st, fh_commits, fh, Role.COMMITTED)
        st.mauschler = pick(fh_commits, fh, st.mauschler)
        first = pick(mask(st.mauschler >= 0), st.mauschler, k.first_from(fh, ins))
        st.parts = pick(play, ins, st.parts)
        st.xfirst = pick(play, first, st.xfirst)
        st.xturn = pick(play, pick(mask(st.knocked == 1), int(XTurn.KNOCKER), int(XTurn.NORMAL)), st.xturn)
        st.leader = pick(play, first, st.leader)
        self.done(st, play)


# ---------------------------------------------------------------------- classic stakes


class StakesK(Kernel):
    """``mauscheln_classic.ClassicStakes`` (§2.3 step 1, D15-D17): the dealer stakes, or with Schieben the seat
    due to deal stakes and chooses ``deal`` or ``push``; then the cap with its reserve; whether the pot is new."""

    slow = True
    phases = (Phase.OFFER,)

    def __init__(self, stage: Any, index: int, rules: Rules) -> None:
        super().__init__(stage, index, rules)
        self.schieben = bool(stage.schieben)
        self.cap = stage.cap

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        st.pot_was_empty = pick(m, ((st.pot == 0) & (st.reserve == 0)).to(torch.int64), st.pot_was_empty)
        self.rules.ante(st, m, st.dealer)
        if self.schieben:
            self.ask(st, m, Phase.OFFER, st.dealer)
            return
        self.normalise(st, m)
        self.done(st, m)

    def legal(self, st: TableState, phase: Phase) -> torch.Tensor:
        k = self.k
        must = mask(st.pushes >= k.count(st.alive))  # the offer would return to the first seat: he deals
        return k.bit("deal") | (k.bit("push") & ~must)

    def act(self, st: TableState, phase: Phase, a: torch.Tensor, m: torch.Tensor) -> None:
        k, rules = self.k, self.rules
        seat = st.to_act
        push = m & mask(a == k.ids["push"])
        deal = m & ~push
        st.pushes = st.pushes + (push & 1)
        nxt = k.succ(seat, st.alive)
        rules.ante(st, push, nxt)  # back at the first seat after a full round: he pays again and must deal
        st.to_act = pick(push, nxt, st.to_act)
        st.dealer = pick(deal, seat, st.dealer)
        self.normalise(st, deal)
        self.done(st, deal)

    def normalise(self, st: TableState, m: torch.Tensor) -> None:
        """§3.2 (D17): above the cap the overflow goes to the reserve; below it the reserve tops the pot up."""
        topped = torch.zeros_like(m)
        if self.cap is not None:
            cap = self.cap
            over = m & mask(st.pot > cap)
            st.reserve = st.reserve + ((st.pot - cap) & over)
            under = m & ~over & mask(st.reserve > 0)
            x = torch.minimum(st.reserve, cap - st.pot) & under
            topped = under & mask(x > 0)
            st.pot = pick(over, cap, st.pot + x)
            st.reserve = st.reserve - x
        new = (st.pot_was_empty != 0) & (st.pushes == 0) & (topped == 0)
        st.new_pot = pick(m, new.to(torch.int64), st.new_pot)
