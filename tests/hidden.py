"""Shuffling the cards a seat cannot see, for the information-hygiene tests of the agents."""

from __future__ import annotations

import numpy as np

from mauscheln_env import Game


def perturb_hidden(game: Game, state, seat: int, rng: np.random.Generator):
    """A copy of ``state`` in which every card ``seat`` cannot see changes place among the hidden places.

    READS AND WRITES ENGINE STATE (hands, stock, dead, discards, drawn, blind, dealt, the discard pile,
    the ace-of-spades holder): the one place of the agents' tests the state split of the rule-objects refactor
    has to port. Cards whose place is public stay where they are: the trump card a seat took into his
    hand (knock, Béatrix) and the Pamphile its holder announced.
    """
    st = game.clone(state)
    public = 0
    if st.trump_holder is not None:
        public |= 1 << st.trump_card
    if st.announced is not None and game.jc is not None:
        public |= 1 << game.jc
    hidden = sum(1 << c for c in st.stock) | st.dead | st.discard_pile
    for s in range(game.n):
        if s != seat:
            hidden |= st.hands[s]
    # Not hidden: the seat's own cards and discards (a reshuffle may have dealt a discard on), every
    # card played, the public ones.
    hidden &= ~(public | st.hands[seat] | st.discards[seat] | _played_all(st))
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
        for name in ("hands", "discards", "drawn", "blind", "dealt"):
            getattr(st, name)[s] = m(getattr(st, name)[s])
    st.stock = [perm.get(c, c) for c in st.stock]
    st.dead = m(st.dead)
    st.discard_pile = (st.discard_pile & st.discards[seat]) | m(state.discard_pile & ~state.discards[seat])
    if st.as_holder is not None and game.as_card is not None:
        st.as_holder = next((s for s in range(game.n) if (st.hands[s] | _played(st, s)) >> game.as_card & 1), None)
    game.check_invariants(st)
    return st


def _played_all(state) -> int:
    return sum(_played(state, s) for s in range(len(state.hands)))


def _played(state, seat: int) -> int:
    mask = 0
    for trick in [*state.tricks, state.trick]:
        for s, c in trick:
            if s == seat:
                mask |= 1 << c
    return mask
