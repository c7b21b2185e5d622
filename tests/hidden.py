"""Shuffling the cards a seat cannot see, for the information-hygiene tests of the agents."""

from __future__ import annotations

import numpy as np

from mauscheln_env import Game


def perturb_hidden(game: Game, state, seat: int, rng: np.random.Generator):
    """A copy of ``state`` in which every card ``seat`` cannot see changes place among the hidden places.

    Writes into the copy's deal (hands, stock, dead, discards, drawn, blind, the discard pile, the
    ace-of-spades holder); the original is untouched. Cards whose place is public stay where they are:
    the trump card a seat took into his hand (knock, Béatrix) and the Pamphile its holder announced.
    """
    st = game.clone(state)
    d = st.deal
    public = 0
    if d.trump_holder is not None:
        public |= 1 << d.trump_card
    jc = game.deck.index.get("JC")
    if getattr(d, "announced", None) is not None and jc is not None:
        public |= 1 << jc
    hidden = sum(1 << c for c in d.stock) | d.dead | d.discard_pile
    for s in range(game.n):
        if s != seat:
            hidden |= d.hands[s]
    # Not hidden: the seat's own cards and discards (a reshuffle may have dealt a discard on), every
    # card played, the public ones.
    hidden &= ~(public | d.hands[seat] | d.discards[seat] | _played_all(d))
    cards = [c for c in range(game.num_cards) if hidden >> c & 1]
    perm = dict(zip(cards, rng.permutation(cards).tolist()))

    def m(mask: int) -> int:
        out = 0
        for c in range(game.num_cards):
            if mask >> c & 1:
                out |= 1 << perm.get(c, c)
        return out

    for s in range(game.n):
        if s == seat:
            continue
        for name in ("hands", "discards", "drawn", "blind"):
            getattr(d, name)[s] = m(getattr(d, name)[s])
    d.stock = [perm.get(c, c) for c in d.stock]
    d.dead = m(d.dead)
    d.discard_pile = (d.discard_pile & d.discards[seat]) | m(state.deal.discard_pile & ~state.deal.discards[seat])
    ace_of_spades = game.deck.index.get("AS")
    if getattr(d, "as_holder", None) is not None and ace_of_spades is not None:
        d.as_holder = next((s for s in range(game.n) if (d.hands[s] | _played(d, s)) >> ace_of_spades & 1), None)
    game.check_invariants(st)
    return st


def _played_all(deal) -> int:
    return sum(_played(deal, s) for s in range(deal.n))


def _played(deal, seat: int) -> int:
    mask = 0
    for trick in [*deal.tricks, deal.trick]:
        for s, c in trick:
            if s == seat:
                mask |= 1 << c
    return mask
