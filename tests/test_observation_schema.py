"""The observation schema: one list of pieces, each with its reader, encoder and decoder.

The observer's fast encoder is compiled from the pieces' own encoders; these tests check that it equals
the pieces encoded one by one, that each piece writes only its own cells, that decoding a piece gives
back the value its reader read, and that ``Observer.values`` (the pieces read without the encoding) equals
the decoding exactly, on every ruleset at its smallest and largest table with every option on.
"""

from __future__ import annotations

import numpy as np
import pytest

from mauscheln_env import RULESETS, Game, make_config
from mauscheln_env.observation import (
    Cards,
    Numbers,
    Observer,
    OneHot,
    SeatFlags,
    SeatLabels,
    SeatNumbers,
    SeatOneHot,
    TrickCards,
    TrickLeaders,
)

CASES = [(name, n) for name, spec in RULESETS.items() for n in sorted({spec.min_players, spec.max_players})]


def _states(game: Game, sessions: int = 4):
    rng = np.random.default_rng(0)
    for k in range(sessions):
        state = game.new_session(np.random.default_rng(k))
        while not state.over:
            yield state
            legal = game.legal_actions(state)
            game.apply(state, legal[int(rng.integers(len(legal)))])
        yield state


def _expected(piece, value, observer, seat):
    """What the piece's decoder should give back for the value its reader read."""
    codec = piece.codec
    if isinstance(codec, SeatLabels):
        lookup = piece.names.get(codec.lookup) if codec.lookup else None
        return [lookup[v] if lookup is not None else v for v in value]
    if isinstance(codec, (SeatNumbers, Numbers)):
        return [float(x) for x in value]
    if isinstance(codec, TrickCards):
        n = observer.game.n
        cards = [[None] * n for _ in range(piece.shape[0])]
        for t, trick in enumerate(value):
            for s, c in trick:
                cards[t][s] = c
        return cards
    if isinstance(codec, TrickLeaders):
        return [trick[0][0] for trick in value] + [None] * (piece.shape[0] - len(value))
    return value


@pytest.mark.parametrize("ruleset,n", CASES)
@pytest.mark.parametrize("omniscient", [False, True])
def test_fused_encoder_equals_the_pieces_and_decoders_invert_them(ruleset, n, omniscient):
    game = Game(make_config(ruleset, n, max_deals=3, **RULESETS[ruleset].showcase))
    observer = Observer(game, omniscient=omniscient)
    encoders = [(p, observer.offsets[p.name], p.encoder(observer.offsets[p.name])) for p in observer.pieces]
    checked = 0
    for state in _states(game):
        for seat in ([0] if omniscient else sorted({0, state.to_act or 0, n - 1})):
            fused = observer.encode(state, seat)
            alone = np.zeros(observer.size, dtype=np.float32)
            me = 0 if omniscient else seat
            rel = [(s - me) % n for s in range(n)]
            absolute = [(me + r) % n for r in range(n)]
            for piece, off, enc in encoders:
                part = np.zeros(observer.size, dtype=np.float32)
                part[enc(state, me, rel, absolute, part)] = 1.0
                outside = np.ones(observer.size, dtype=bool)
                outside[off:off + piece.size] = False
                assert not part[outside].any(), f"{piece.name} writes outside its cells"
                alone += part
                decoded = observer.decode(fused, me, [piece.name])[piece.name]
                # the observer reads binary pieces from the ones of the whole array; the codec alone, from its view
                view = fused[off:off + piece.size].reshape(piece.shape)
                assert piece.codec.decode(view, absolute) == decoded, piece.name
                want = _expected(piece, piece.value(state, me), observer, me)
                if isinstance(piece.codec, (SeatNumbers, Numbers)):
                    np.testing.assert_allclose(decoded, want, rtol=1e-6, atol=1e-6, err_msg=piece.name)
                elif isinstance(piece.codec, (OneHot, SeatOneHot, SeatFlags, Cards, SeatLabels, TrickCards,
                                              TrickLeaders)):
                    assert decoded == want, piece.name
            np.testing.assert_array_equal(fused, alone)
            names = [p.name for p in observer.pieces]
            assert observer.values(state, me, names) == observer.decode(fused, me, names)  # exactly
            checked += 1
    assert checked > 50


def test_every_codec_of_the_core_layout_is_tested():
    game = Game(make_config("mouche", 4, **RULESETS["mouche"].showcase))
    kinds = {type(p.codec) for p in Observer(game).pieces} | {type(p.codec) for p in Observer(game, True).pieces}
    assert {OneHot, SeatOneHot, SeatFlags, SeatNumbers, Numbers, Cards, SeatLabels, TrickCards, TrickLeaders} <= kinds
