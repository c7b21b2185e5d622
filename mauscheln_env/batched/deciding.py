"""Kernels of Mouche's and Muschka's stages: deciding (with Béatrix and the ace of spades), the Pamphile, the
queue and the mouche check.

Each mirrors one stage or hook class of ``mauscheln_env/rulesets/mouche.py`` or
``muschka.py`` (named in its docstring), chosen by type in
:mod:`mauscheln_env.batched.program`.
"""

from __future__ import annotations

from typing import Any

import torch

from mauscheln_env.batched.base import DEAL_MOUCHE, DEAL_NO_PLAY, Kernel, Rules, XTurn, role_bits
from mauscheln_env.batched.ops import any_rows, mask, pick, seat_get, seat_onehot
from mauscheln_env.batched.state import TableState
from mauscheln_env.engine import Phase, Role
from mauscheln_env.rulesets.mouche import POINTS


class DecideK(Kernel):
    """``mouche.Decide`` (§2.5 step 3): from forehand to the dealer, once each: ``pass``, ``stay``, or a card
    that starts an exchange of 1-5 cards; the lone rule. Its hooks: ``Beatrix`` (D31: the dealer may ``swap``
    a card for the trump card, then may not pass) and ``AceOfSpades`` (§2.7: its holder may not pass)."""

    phases = (Phase.DECIDE, Phase.SWAP)

    def __init__(self, stage: Any, index: int, rules: Rules, beatrix: Any, ace_of_spades: Any) -> None:
        super().__init__(stage, index, rules)
        self.beatrix = beatrix
        self.ace = None if ace_of_spades is None else int(ace_of_spades.ace_of_spades)
        jc = rules.k.card["JC"]
        self.pamphile_card = jc if beatrix is not None and beatrix.pamphile else None

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        self.ask(st, m, Phase.DECIDE, self.rules.forehand(st))

    def legal(self, st: TableState, phase: Phase) -> torch.Tensor:
        k = self.k
        seat = st.to_act
        hand = seat_get(st.hands, seat)
        if phase is Phase.SWAP:
            return hand
        forbid = torch.zeros_like(hand)
        if self.beatrix is not None:
            forbid = forbid | mask(st.swapped != 0)
        if self.ace is not None:
            forbid = forbid | mask(((hand >> self.ace) & 1) != 0)
        acts = hand | k.bit("stay") | (k.bit("pass") & ~forbid)
        if self.beatrix is not None:
            ok = (seat == st.dealer) & (st.swapped == 0) & (st.face_up != 0)
            if self.pamphile_card is not None:
                ok = ok & (st.trump_card != self.pamphile_card)
            acts = acts | (k.bit("swap") & mask(ok))
        return acts

    def act(self, st: TableState, phase: Phase, a: torch.Tensor, m: torch.Tensor) -> None:
        k, rules = self.k, self.rules
        seat = st.to_act
        if phase is Phase.SWAP:  # the card given for the trump card; then he stays or exchanges
            bit = k.cards_bit(a) & m
            one = seat_onehot(seat, k.seat_ar) & bit[:, None]
            st.hands = st.hands ^ one
            st.discards = st.discards | one
            st.pile = st.pile | bit
            rules.take_trump_card(st, m, seat)
            st.swapped = st.swapped | (m & 1)
            st.phase = pick(m, int(Phase.DECIDE), st.phase)
            return
        passes = m & mask(a == k.ids["pass"])
        stays = m & mask(a == k.ids["stay"])
        swaps = m & mask(a == k.ids["swap"]) if self.beatrix is not None else torch.zeros_like(m)
        card = m & mask(a < k.N)
        rules.fold(st, passes, seat)
        rules.set_role(st, stays, seat, Role.STAYED)
        st.phase = pick(swaps, int(Phase.SWAP), st.phase)
        rules.set_role(st, card, seat, Role.EXCHANGED)
        st.marked = st.marked & ~card
        rules.mark(st, card, seat, a)
        st.phase = pick(card, int(Phase.EXCHANGE), st.phase)
        st.xturn = pick(card, int(XTurn.DECIDE), st.xturn)
        st.xmin = pick(card, 1, st.xmin)
        st.xcap = pick(card, k.H, st.xcap)
        self.next_seat(st, passes | stays)

    def next_seat(self, st: TableState, m: torch.Tensor) -> None:
        """``Decide.next_seat``: the next seat (or the lone rule), else the deal goes on with the seats still in."""
        if not any_rows(m):
            return
        k, rules = self.k, self.rules
        seat = st.to_act
        last = m & mask(seat == st.dealer)
        going = m & ~last
        nxt = k.succ(seat, st.alive)
        st.to_act = pick(going, nxt, st.to_act)
        outs = role_bits(st.roles, (Role.OUT,), k.seat_bit)
        lone = going & mask((st.alive & ~outs & ~k.seat_bits(nxt)) == 0)
        rules.set_role(st, lone, nxt, Role.STAYED)
        self.end(st, lone, DEAL_NO_PLAY, nxt)
        players = rules.playing(st)
        first = k.first_from(rules.forehand(st), players)
        single = last & mask(k.count(players) == 1)
        self.end(st, single, DEAL_NO_PLAY, first)
        on = last & ~single
        st.leader = pick(on, first, st.leader)
        self.done(st, on)


class NameTrumpK(Kernel):
    """``mouche.NameTrump`` (D30): a turned-up Pamphile: the dealer names the trump suit."""

    phases = (Phase.NAME_TRUMP,)

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        turned = m & mask(st.trump_card == self.k.card["JC"])
        self.ask(st, turned, Phase.NAME_TRUMP, st.dealer)
        self.done(st, m & ~turned)

    def legal(self, st: TableState, phase: Phase) -> torch.Tensor:
        return torch.full_like(st.phase, sum(1 << a for a in self.k.trump_actions))

    def act(self, st: TableState, phase: Phase, a: torch.Tensor, m: torch.Tensor) -> None:
        suit = torch.zeros_like(a)
        for i, action in enumerate(self.k.trump_actions):
            suit = pick(mask(a == action), i, suit)
        st.trump_suit = pick(m, suit, st.trump_suit)
        self.done(st, m)


class AnnounceK(Kernel):
    """``mouche.PamphileBonus`` (D29): the Pamphile's holder may ``announce`` it: min(1, chips) from every
    other live seat, player to player."""

    phases = (Phase.ANNOUNCE,)

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        k = self.k
        has = ((st.hands >> k.card["JC"]) & 1) != 0
        ask = m & mask(has.any(1))
        self.ask(st, ask, Phase.ANNOUNCE, (mask(has) & k.seat_ar).sum(1))
        self.done(st, m & ~ask)

    def legal(self, st: TableState, phase: Phase) -> torch.Tensor:
        return torch.full_like(st.phase, self.k.bit("announce") | self.k.bit("silent"))

    def act(self, st: TableState, phase: Phase, a: torch.Tensor, m: torch.Tensor) -> None:
        k = self.k
        seat = st.to_act
        yes = m & mask(a == k.ids["announce"])
        st.announced = pick(yes, seat, st.announced)
        one = seat_onehot(seat, k.seat_ar)
        others = yes[:, None] & ~one & mask(((st.alive[:, None] >> k.seat_ar) & 1) != 0)
        paid = st.chips.clamp(max=1) & others
        st.chips = st.chips - paid + (one & paid.sum(1)[:, None])
        self.done(st, m)


class QueueK(Kernel):
    """``mouche.QueueIntoPot`` (§2.6, D32): at each ante one queued item, the oldest (or the largest), enters
    the pot."""

    slow = True

    def __init__(self, stage: Any, index: int, rules: Rules) -> None:
        super().__init__(stage, index, rules)
        self.largest = bool(stage.largest)

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        has = m & mask(st.queue_len > 0)
        if any_rows(has):
            Q = st.queue.shape[1]
            slots = torch.arange(Q, device=self.k.device)
            if self.largest:  # the first of the largest, as max() over the list finds it
                i = torch.where(slots < st.queue_len[:, None], st.queue, -1).argmax(1)
            else:
                i = torch.zeros_like(st.queue_len)
            item = st.queue.gather(1, i[:, None])[:, 0]
            shifted = st.queue.gather(1, (slots + (slots >= i[:, None]).to(torch.int64)).clamp(max=Q - 1))
            shifted = torch.where(slots == Q - 1, 0, shifted)
            st.queue = pick(has[:, None], shifted, st.queue)
            st.queue_len = st.queue_len - (has & 1)
            st.pot = st.pot + (item & has)
        self.done(st, m)


class MoucheCheckK(Kernel):
    """``mouche.MoucheCheck`` (§2.5 step 4, D27): the best mouche (five dealt cards of one suit, kept) takes the
    pot: trump suit first, then points, then the seat nearer the dealer's right."""

    slow = True

    def __init__(self, stage: Any, index: int, rules: Rules) -> None:
        super().__init__(stage, index, rules)
        k = self.k
        deck = rules.game.deck
        self.points = torch.tensor([POINTS.get(code[0], int(code[0]) if code[0].isdigit() else 10)
                                    for code in deck.codes], dtype=torch.int64, device=k.device)
        self.wild = k.card_bit[k.card["JC"]] if stage.pamphile_wild else 0

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        k, rules = self.k, self.rules
        n = k.n
        hands = st.hands
        seats = k.seat_ar
        cand = (st.roles == int(Role.STAYED)) & ~((st.swapped[:, None] != 0) & (seats == st.dealer[:, None]))
        suit = torch.full_like(hands, -1)
        for s in range(4):
            inside = (hands != 0) & ((hands & ~(k.suit_masks[s] | self.wild)) == 0)
            suit = torch.where(inside & (suit < 0), s, suit)
        flush = cand & (suit >= 0)
        cards = ((hands[:, :, None] >> k.card_ar) & 1) != 0
        points = (cards.to(torch.int64) * self.points).sum(2)
        fh = rules.forehand(st)
        rank = ((seats - fh[:, None]) * k.direction) % n  # decision order from forehand
        key = ((suit == st.trump_suit[:, None]).to(torch.int64) * 4096 + points) * 16 + (n - rank)
        key = torch.where(flush, key, -1)
        best = key.argmax(1)
        found = m & mask(flush.any(1))
        self.end(st, found, DEAL_MOUCHE, best)
        self.done(st, m & ~found)
