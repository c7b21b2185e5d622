"""Kernels of the card flow every ruleset shares: stakes, the deal, the exchange, the tricks, the settlement stage.

Each mirrors the core stage of :mod:`mauscheln_env.engine` of the same role
(``Ante``, ``DealCards``, ``Exchange`` with its turns, ``Play`` with the trick
hooks, ``Settle``) and the ``mauscheln`` ruleset's Vierling (it redeals: chance).
The tricks follow :func:`mauscheln_env.tricks.legal_follow` for the ruleset's
profile, on the reference's own trump tables (permanent trumps included).
"""

from __future__ import annotations

from typing import Any

import torch

from mauscheln_env.batched.base import DEAL_SETTLED, Kernel, Rules, XTurn
from mauscheln_env.batched.ops import any_rows, mask, pick, rows, seat_add, seat_get, seat_onehot
from mauscheln_env.batched.state import TableState
from mauscheln_env.engine import Phase, StockPolicy
from mauscheln_env.tricks import TrickProfile

# ---------------------------------------------------------------------- stakes and the deal


class AnteK(Kernel):
    """``Ante``: the dealer pays min(stake, chips) into the pot (RULES.md §1.6)."""

    slow = True

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        self.rules.ante(st, m, st.dealer)
        self.done(st, m)


def deal_cards(rules: Rules, st: TableState, m: torch.Tensor) -> None:
    """``Game.deal_cards``: the deck order in ``st.deck`` dealt by the pattern from forehand, dealer last.

    The order is dealt for ``order_dealer`` when the caller fixed the deal for that dealer (a reset's given
    deal keeps its hands by seat, as the reference's ``deal.given`` does), else for the actual dealer.
    """
    k = rules.k
    n, N = k.n, k.N
    M = st.phase.shape[0]
    dealer = torch.where(st.order_dealer >= 0, st.order_dealer, st.dealer)
    L = k.count(st.alive)
    fh = k.succ(dealer, st.alive)
    seats = k.order_tab.index_select(0, (fh << n) + st.alive)  # live seats from forehand
    seats = torch.cat([seats, torch.full((M, 2), n, dtype=torch.int64, device=k.device)], 1)
    seats[:, -1] = n + 1
    dest = seats.gather(1, k.deal_slot.index_select(0, L))  # [M, N]: seat, n (trump card) or n + 1 (stock)
    sets = torch.zeros(M, n + 2, dtype=torch.int64, device=k.device)
    sets.scatter_add_(1, dest, k.card_bit.index_select(0, st.deck.reshape(-1)).view(M, N))
    r = rows(m)
    st.hands = pick(r, sets[:, :n], st.hands)
    st.stock = pick(r, st.deck, st.stock)
    st.stock_pos = pick(m, k.dealt.index_select(0, L), st.stock_pos)
    st.stock_n = pick(m, N - k.dealt.index_select(0, L), st.stock_n)
    st.stock_bits = pick(m, sets[:, n + 1], st.stock_bits)
    trump = st.deck.gather(1, k.trump_pos.index_select(0, L)[:, None])[:, 0]
    st.trump_card = pick(m, trump, st.trump_card)
    st.trump_suit = pick(m, k.suit_of.index_select(0, trump), st.trump_suit)
    st.face_up = pick(m, 1, st.face_up)
    st.undealt = st.undealt & ~m


class DealK(Kernel):
    """``DealCards``: deal by the ruleset's pattern and turn the trump card (RULES.md §1.5)."""

    slow = True

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        deal_cards(self.rules, st, m)
        self.done(st, m)


class VierlingK(Kernel):
    """``mauscheln.Vierling`` (§2.2, D19): quartets dealt are shown, paid for and replaced from the stock,
    seat by seat from forehand and again on the new cards; a stock too short voids the deal, which the same
    dealer redeals (a new deck order: chance) without a new ante."""

    slow = True

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        k, rules = self.k, self.rules
        fh = rules.forehand(st)
        order = k.order_tab.index_select(0, (fh << k.n) + st.alive)
        L = k.count(st.alive)
        pos = torch.zeros_like(st.phase)
        busy = m.clone()
        while any_rows(busy):
            seat = order.gather(1, pos.clamp(max=k.n - 1)[:, None])[:, 0]
            hand = seat_get(st.hands, seat)
            low = (hand & -hand).clamp(min=1)
            low_card = torch.log2(low.to(torch.float64)).to(torch.int64)  # exact for one set bit below 2**53
            same_rank = k.rank_masks.index_select(0, k.rank_of.index_select(0, low_card))
            quartet = busy & mask((hand != 0) & ((hand & ~same_rank) == 0))
            short = quartet & mask(st.stock_n < 4)
            replace = quartet & ~short
            if any_rows(replace):
                self._replace(st, replace, seat, hand)
            if any_rows(short):
                self._redeal(st, short)
            step = busy & ~quartet
            pos = pick(short, 0, pos + (step & 1))
            busy = busy & ~mask(pos >= L)
        self.done(st, m)

    def _replace(self, st: TableState, m: torch.Tensor, seat: torch.Tensor, hand: torch.Tensor) -> None:
        k, rules = self.k, self.rules
        shown = hand & m
        one = seat_onehot(seat, k.seat_ar)
        st.revealed = st.revealed | shown
        st.pile = st.pile | shown
        st.discards = st.discards | (one & shown[:, None])
        rules.ante(st, m, seat)
        got = take_from_stock(rules, st, m, torch.full_like(st.stock_n, 4) & m)
        st.hands = pick(one & m[:, None], got[:, None], st.hands)
        st.drawn = st.drawn | (one & got[:, None])

    def _redeal(self, st: TableState, m: torch.Tensor) -> None:
        """``Game.redeal``: a fresh deal object (cards only; the stakes and quartet payments stay), new cards."""
        rules = self.rules
        st.deck = pick(rows(m), rules.permutations(st, torch.full_like(st.phase, self.k.N), m), st.deck)
        st.order_dealer = pick(m, -1, st.order_dealer)
        for name in ("discards", "drawn"):
            setattr(st, name, getattr(st, name) & ~rows(m))
        st.pile, st.dead, st.revealed = st.pile & ~m, st.dead & ~m, st.revealed & ~m
        deal_cards(rules, st, m)


def take_from_stock(rules: Rules, st: TableState, m: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """Take ``count`` cards from the top of the stock (no refill; the caller knows they are there)."""
    k = rules.k
    H = max(k.H, 4)
    ar = torch.arange(H, device=k.device)
    pos = (st.stock_pos[:, None] + ar).clamp(max=k.N - 1)
    cards = st.stock.gather(1, pos)
    got = (k.card_bit.index_select(0, cards.reshape(-1)).view(-1, H) & mask(ar < count[:, None])).sum(1) & m
    st.stock_pos = st.stock_pos + (count & m)
    st.stock_n = st.stock_n - (count & m)
    st.stock_bits = st.stock_bits & ~got
    return got


def draw(rules: Rules, st: TableState, m: torch.Tensor, count: torch.Tensor, refill_ok: bool = True) -> torch.Tensor:
    """``Game.draw``: ``count`` cards under the shortage policy; an empty stock is refilled (RULES.md §1.7).

    The refill (D12, D26; D11 for RESHUFFLE_TRUMP) shuffles the discard pile, ascending card order as the
    reference lists it, plus the face-up trump card when the policy takes it and the dealer did not knock; the
    reference's ``rng.permutation(k)`` of that list is drawn here (and logged: the chance contract), and the
    new stock is drawn from the permuted list's end. ``refill_ok=False`` (the fused step): the caller has
    deferred every row that would need a refill.
    """
    count = count & m
    first = torch.minimum(count, st.stock_n)
    got = take_from_stock(rules, st, m, first)
    rest = count - first
    short = m & mask(rest > 0)
    if refill_ok and rules.policy is not StockPolicy.CAP and any_rows(short):
        refill(rules, st, short)
        got = got | take_from_stock(rules, st, short, rest)
    return got


def refill(rules: Rules, st: TableState, m: torch.Tensor) -> None:
    """``ReshuffleStock.refill`` on rows ``m`` (their stock is empty)."""
    k = rules.k
    N = k.N
    in_pile = ((st.pile[:, None] >> k.card_ar) & 1) != 0
    pool = torch.where(in_pile, k.card_ar, N + k.card_ar).sort(dim=1).values  # the pile ascending, then fillers
    size = in_pile.sum(1)
    bits = st.pile
    if rules.policy is StockPolicy.RESHUFFLE_TRUMP:  # the face-up trump card goes in, unless the dealer knocked
        with_trump = m & mask((st.face_up != 0) & (st.knocked != 1))
        slot = size.clamp(max=N - 1)[:, None]
        pool = pool.scatter(1, slot, pick(with_trump, st.trump_card, pool.gather(1, slot)[:, 0])[:, None])
        size = size + (with_trump & 1)
        bits = bits | (k.cards_bit(st.trump_card) & with_trump)
        st.face_up = st.face_up & ~with_trump
    perm = rules.permutations(st, size, m)  # perm[:, :size] is the reference's rng.permutation(size)
    shuffled = pool.gather(1, perm)  # the reference's new stock list, drawn from its end
    top_first = shuffled.gather(1, (size[:, None] - 1 - k.card_ar).clamp(min=0))
    st.stock = pick(rows(m), top_first, st.stock)
    st.stock_pos = st.stock_pos & ~m
    st.stock_n = pick(m, size, st.stock_n)
    st.stock_bits = pick(m, bits, st.stock_bits)
    st.pile = st.pile & ~m


# ---------------------------------------------------------------------- the exchange


def needs_refill(rules: Rules, st: TableState, m: torch.Tensor) -> torch.Tensor:
    """Rows of ``m`` (saying ``done``) whose draw empties the stock and needs a reshuffle (chance)."""
    if rules.policy is StockPolicy.CAP:
        return torch.zeros_like(m)
    knocker = mask(st.xturn == int(XTurn.KNOCKER)) & 1
    final = mask(st.xturn == int(XTurn.FINAL))
    return m & ~final & mask(st.marked - knocker > st.stock_n)


def finish_exchange(rules: Rules, st: TableState, m: torch.Tensor, refill_ok: bool = True) -> None:
    """The turn's ``finish`` at ``done`` (draws: chance under a reshuffle policy), on rows ``m``.

    NORMAL and DECIDE draw |D|; KNOCKER takes the trump card and |D| - 1 blind cards; BLIND draws |D| blind;
    FINAL takes the trump card.
    """
    k = rules.k
    seat, kk, turn = st.to_act, st.marked, st.xturn
    knocker, blind, final = (mask(turn == int(x)) & m for x in (XTurn.KNOCKER, XTurn.BLIND, XTurn.FINAL))
    counted = m & ~final
    one = seat_onehot(seat, k.seat_ar)
    st.exchanged = pick(one & counted[:, None], (kk + 1)[:, None], st.exchanged)
    if any_rows(knocker | final):
        rules.take_trump_card(st, knocker | final, seat)
    got = draw(rules, st, counted, kk - (knocker & 1), refill_ok)
    st.hands = st.hands | (one & got[:, None])
    st.drawn = st.drawn | (one & got[:, None])
    st.blind = pick(knocker | blind, got, st.blind)


class ExchangeK(Kernel):
    """``Exchange`` and the exchange decisions (``Phase.EXCHANGE``): mark cards, then ``done``.

    The plan the bidding left is its first seat (``xfirst``), the kind of its first turn (``xturn``) and the
    participants; the next exchanger is the next participant, and a classic knocker's plan ends with his
    final turn. An exchange chosen while deciding returns to the Decide kernel.
    """

    phases = (Phase.EXCHANGE,)

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        self.rules.open_turn(st, m, st.xfirst, st.xturn)

    def legal(self, st: TableState, phase: Phase) -> torch.Tensor:
        k, rules = self.k, self.rules
        hand = seat_get(st.hands, st.to_act) & ~rules.blind_of(st, st.to_act)
        return (hand & mask(st.marked < st.xcap)) | (k.bit("done") & mask(st.marked >= st.xmin))

    def act(self, st: TableState, phase: Phase, a: torch.Tensor, m: torch.Tensor) -> None:
        k, rules = self.k, self.rules
        seat = st.to_act
        marks = m & mask(a < k.N)
        if any_rows(marks):
            rules.mark(st, marks, seat, a)
        done = m & mask(a == k.ids["done"])  # the draw happened before this step's kernels (finish_exchange)
        decide_turn = done & mask(st.xturn == int(XTurn.DECIDE))
        if rules.decide is not None and any_rows(decide_turn):
            st.phase = pick(decide_turn, int(Phase.DECIDE), st.phase)
            rules.decide.next_seat(st, decide_turn)
        turn_done = done & ~decide_turn
        final = mask(st.xturn == int(XTurn.FINAL))
        nxt = k.succ(seat, st.parts)
        wrapped = mask(nxt == st.xfirst)
        go_on = turn_done & ~final & ~wrapped
        rules.open_turn(st, go_on, nxt, XTurn.NORMAL)
        over = turn_done & ~go_on
        if rules.final_after_goers:
            to_final = over & ~final & mask(st.knocked == 1)
            rules.open_turn(st, to_final, st.xfirst, XTurn.FINAL)
            over = over & ~to_final
        st.blind = st.blind & ~over  # every goer has exchanged: a knocker sees his cards
        self.done(st, over)


# ---------------------------------------------------------------------- the tricks


def legal_follow(profile: TrickProfile, hand: torch.Tensor, led: torch.Tensor, trumps_all: torch.Tensor,
                 beats: torch.Tensor) -> torch.Tensor:
    """:func:`mauscheln_env.tricks.legal_follow` on tensors: ``profile`` is static (one fused formula)."""
    follow = hand & led
    has_follow = mask(follow != 0)
    if profile is TrickProfile.R:
        on_suit = follow
    else:
        fb = follow & beats
        on_suit = pick(mask(fb != 0), fb, follow)
    trumps = hand & trumps_all
    tb = trumps & beats
    if profile is TrickProfile.M:
        off_suit = pick(mask(trumps != 0), pick(mask(tb != 0), tb, trumps), hand)
    elif profile is TrickProfile.F:
        off_suit = pick(mask(tb != 0), tb, hand)
    else:
        off_suit = pick(mask(trumps != 0), trumps, hand)
    return pick(has_follow, on_suit, off_suit)


class TrickHookK:
    """A trick hook's kernel (``TrickHook``): ``start``, ``beats``, ``trick_done``; defaults do nothing."""

    def __init__(self, hook: Any, rules: Rules) -> None:
        self.hook = hook
        self.rules = rules
        self.k = rules.k

    def start(self, st: TableState, m: torch.Tensor) -> None:
        pass

    def beats(self, st: TableState, m: torch.Tensor, seat: torch.Tensor, card: torch.Tensor) -> torch.Tensor:
        """Rows where the hook decided the trick's winner (it updated it); the tables decide the others."""
        return torch.zeros_like(m)

    def trick_done(self, st: TableState, m: torch.Tensor, cards: torch.Tensor) -> None:
        pass


class BelliK(TrickHookK):
    """``mauscheln.BelliPenalty`` (D20): the Belli and the trump ace in one trick: a penalty due at settlement."""

    def __init__(self, hook: Any, rules: Rules) -> None:
        super().__init__(hook, rules)
        r, N = rules.game.rules, self.k.N
        self.belli = self.k.long([N if c is None else c for c in r.belli_card])
        self.ace = self.k.long([N if c is None else c for c in r.trump_ace])
        self.to_ace = bool(hook.to_ace)

    def trick_done(self, st: TableState, m: torch.Tensor, cards: torch.Tensor) -> None:
        k = self.k
        belli = cards == self.belli.index_select(0, st.trump_suit)[:, None]
        ace = cards == self.ace.index_select(0, st.trump_suit)[:, None]
        meet = m & mask(belli.any(1) & ace.any(1))
        payer = (mask(belli) & k.seat_ar).sum(1)
        to = (mask(ace) & k.seat_ar).sum(1) if self.to_ace else torch.full_like(payer, -1)
        st.belli_payer = pick(meet, payer, st.belli_payer)
        st.belli_to = pick(meet, to, st.belli_to)


class AceOfSpadesK(TrickHookK):
    """``muschka.AceOfSpades`` (D35): who holds the AS when play starts; the AS beats a led trump ace."""

    def __init__(self, hook: Any, rules: Rules) -> None:
        super().__init__(hook, rules)
        self.card = int(hook.ace_of_spades)
        self.spades = int(hook.spades)

    def start(self, st: TableState, m: torch.Tensor) -> None:
        k = self.k
        has = (((st.hands >> self.card) & 1) != 0) & (((st.parts[:, None] >> k.seat_ar) & 1) != 0)
        seat = pick(mask(has.any(1)), (mask(has) & k.seat_ar).sum(1), -1)
        st.as_holder = pick(m, seat, st.as_holder)

    def beats(self, st: TableState, m: torch.Tensor, seat: torch.Tensor, card: torch.Tensor) -> torch.Tensor:
        k = self.k
        takes = m & ~mask(st.locked != 0) & mask((card == self.card) & (st.trump_suit != self.spades)
                                                  & (st.led_card == k.trump_ace.index_select(0, st.trump_suit)))
        st.win_card = pick(takes, card, st.win_card)
        st.win_seat = pick(takes, seat, st.win_seat)
        decided = m & (mask(st.locked != 0) | takes)
        st.locked = st.locked | (takes & 1)
        return decided

    def trick_done(self, st: TableState, m: torch.Tensor, cards: torch.Tensor) -> None:
        st.locked = st.locked & ~m


class PlayK(Kernel):
    """``Play`` and the card play (``Phase.PLAY``): tricks from ``deal.leader`` under the ruleset's profile."""

    phases = (Phase.PLAY,)

    def __init__(self, stage: Any, index: int, rules: Rules, hooks: list[TrickHookK]) -> None:
        super().__init__(stage, index, rules)
        self.hooks = hooks
        self.profile: TrickProfile = rules.game.profile

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        """``Game.start_play``: the participants in the rules' direction from the leader."""
        st.parts = pick(m, self.rules.playing(st), st.parts)
        for hook in self.hooks:
            hook.start(st, m)
        self.ask(st, m, Phase.PLAY, st.leader)
        st.tcount = st.tcount & ~m

    def legal(self, st: TableState, phase: Phase) -> torch.Tensor:
        k = self.k
        hand = seat_get(st.hands, st.to_act)
        ts = st.trump_suit
        follow = legal_follow(self.profile, hand, k.eff_mask.index_select(0, ts * 4 + st.led_suit),
                              k.trump_mask.index_select(0, ts), k.beats.index_select(0, ts * k.N + st.win_card))
        return pick(mask(st.tcount == 0), hand, follow)

    def act(self, st: TableState, phase: Phase, a: torch.Tensor, m: torch.Tensor) -> None:
        k = self.k
        n, N, T = k.n, k.N, k.T
        seat, ts = st.to_act, st.trump_suit
        card = a.clamp(max=N)
        bit = k.cards_bit(card) & m
        st.hands = st.hands ^ (seat_onehot(seat, k.seat_ar) & bit[:, None])
        lead = m & mask(st.tcount == 0)
        follows = m & ~lead
        st.led_suit = pick(lead, k.eff_suit.index_select(0, ts * N + card), st.led_suit)
        st.led_card = pick(lead, card, st.led_card)
        decided = lead
        for hook in self.hooks:
            decided = decided | hook.beats(st, follows & ~decided, seat, card)
        beaten = mask((k.beats.index_select(0, ts * N + st.win_card) & bit) != 0)
        take = lead | (follows & ~decided & beaten)
        st.win_card = pick(take, card, st.win_card)
        st.win_seat = pick(take, seat, st.win_seat)
        st.tcards = st.tcards.scatter(1, pick(m, st.tdone * n + seat, T * n)[:, None], card[:, None])
        st.tlead = st.tlead.scatter(1, pick(lead, st.tdone, T)[:, None], seat[:, None])
        st.tcount = st.tcount + (m & 1)
        full = m & mask(st.tcount == k.count(st.parts))
        going = m & ~full
        st.to_act = pick(going, k.succ(seat, st.parts), st.to_act)
        if self.hooks:
            cards = st.tcards.gather(1, (st.tdone * n)[:, None] + k.seat_ar)
            for hook in self.hooks:
                hook.trick_done(st, full, cards)
        st.won = seat_add(st.won, st.win_seat, full & 1, k.seat_ar)
        st.tdone = st.tdone + (full & 1)
        st.tcount = st.tcount & ~full
        st.leader = pick(full, st.win_seat, st.leader)
        st.to_act = pick(full, st.win_seat, st.to_act)
        self.done(st, full & mask(st.tdone == T))


class SettleK(Kernel):
    """``Settle``: the tricks are over; the scoring kernel settles the deal (outside the fused step)."""

    def enter(self, st: TableState, m: torch.Tensor) -> None:
        self.end(st, m, DEAL_SETTLED)

