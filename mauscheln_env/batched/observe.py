"""Observations of the batched engine, from the one observation schema.

The layout is ``Observer(game).pieces`` (and ``Observer(game, omniscient=True)``
for ``state()``): every offset, shape, label order and scale comes from the
pieces and their codecs. A piece's **value** is read from the tensor state by
the reader of its name (:data:`READERS`, the tensor form of the piece's
``read`` expression), and written by the tensor encoder of its **codec kind**
(:data:`CODECS`), one encoder per kind, used for every piece of that kind. A
piece whose name has no reader, or whose codec has no encoder, is refused with
a :class:`~mauscheln_env.errors.ConfigError`.

An encoder returns one of three things, so that a whole observation is written
with few operations: the flat indices of its ones (one-hot kinds; an absent
entry points at a cell of a number piece, which is written afterwards), float
values (number kinds, computed in ``float64`` and rounded to ``float32`` as the
reference's Python floats are), or card sets as bit masks (expanded into 0/1
cells).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from mauscheln_env.batched.ops import mask, pick, seat_get
from mauscheln_env.batched.state import TableState
from mauscheln_env.batched.statics import Statics
from mauscheln_env.engine import Phase, Role
from mauscheln_env.errors import ConfigError
from mauscheln_env.observation import (
    CardList,
    Cards,
    Numbers,
    Observer,
    OneHot,
    SeatCards,
    SeatFlags,
    SeatLabels,
    SeatNumbers,
    SeatOneHot,
    TrickCards,
    TrickLeaders,
)


@dataclass
class View:
    """What readers and encoders need about the observing seats ``me`` (one per row)."""

    st: TableState
    me: torch.Tensor
    rot: torch.Tensor
    """``int64[M, n]``: the absolute seat at each relative position, ``(me + r) mod n``."""
    n: int
    k: Statics
    tables: dict[str, torch.Tensor]

    def rel(self, seat: torch.Tensor) -> torch.Tensor:
        """``(seat - me) mod n`` for seats in range (broadcasting over a trailing seat axis if given)."""
        me = self.me if seat.dim() == 1 else self.me[:, None]
        d = seat - me
        return d + (self.n & (d >> 63))

    def own(self, t: torch.Tensor) -> torch.Tensor:
        """The observer's entry of a per-seat field."""
        return seat_get(t, self.me)

    def blind_me(self) -> torch.Tensor:
        st = self.st
        return st.blind & mask(self.me == st.dealer)

    def relative(self, t: torch.Tensor) -> torch.Tensor:
        """A per-seat field in relative order."""
        if not torch.compiler.is_compiling():
            return t.gather(1, self.rot)
        # Compiled: column by column, each a choice among the n seats (exact: rot is in range by construction).
        # The gather's indirect loads make inductor loop over the seats inside the batch loop, a row at a time.
        n = self.n
        cols = []
        for r in range(n):
            seat = self.rot[:, r]
            col = t[:, 0]
            for s in range(1, n):
                col = torch.where(seat == s, t[:, s], col)
            cols.append(col)
        return torch.stack(cols, 1)


# ---------------------------------------------------------------------- readers (piece name -> value)


def _f(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.float64)


def _hand(v: View) -> torch.Tensor:
    st = v.st
    unseen = mask((v.me == st.dealer) & (st.unseen != 0))
    return v.own(st.hands) & ~v.blind_me() & ~unseen


READERS: dict[str, Callable[[View], torch.Tensor]] = {
    "phase": lambda v: v.tables["phase_pos"].index_select(0, v.st.phase),
    "to_act": lambda v: pick(mask(v.st.phase != int(Phase.OVER)), v.st.to_act, -1),
    "dealer": lambda v: v.st.dealer,
    "live": lambda v: v.st.alive,
    "chips": lambda v: _f(v.st.chips),
    "pot": lambda v: _f(v.st.pot)[:, None],
    "scores": lambda v: _f(v.st.scores),
    "progress": lambda v: _f(v.st.deals)[:, None],
    "hand": _hand,
    "own_discards": lambda v: v.own(v.st.discards),
    "own_drawn": lambda v: v.own(v.st.drawn) & ~v.blind_me(),
    "hands": lambda v: v.st.hands,
    "discards": lambda v: v.st.discards,
    "drawn": lambda v: v.st.drawn,
    "stock": lambda v: v.st.stock_bits,
    "dead": lambda v: v.st.dead,
    "trump_card": lambda v: pick(mask(v.st.undealt != 0), -1, v.st.trump_card),
    "trump_suit": lambda v: pick(mask(v.st.undealt != 0), -1, v.st.trump_suit),
    "trump_taken_by": lambda v: v.st.holder,
    "knock": lambda v: v.st.knocked - 1,  # knocked 1 -> "knocked" (0), declined 2 -> "declined" (1)
    "roles": lambda v: v.tables["role_pos"].index_select(0, v.st.roles.reshape(-1)).view_as(v.st.roles),
    "exchanged": lambda v: v.st.exchanged,  # 0: not yet, else 1 + cards exchanged: the label index
    "trick_cards": lambda v: v.st.tcards,
    "trick_leader": lambda v: v.st.tlead,
    "tricks_won": lambda v: _f(v.st.won & mask((v.st.tdone > 0) | (v.st.tcount > 0))[:, None]),
    "revealed": lambda v: v.st.revealed,
    "trump_face_up": lambda v: _f(v.st.face_up)[:, None],
    "reserve": lambda v: _f(v.st.reserve)[:, None],
    "pushes": lambda v: (_f(v.st.pushes) / v.n)[:, None],
    "escrow": lambda v: torch.stack([_f(v.st.queue.sum(1)), _f(v.st.queue_len) / v.n], 1),
    "announced": lambda v: v.st.announced,
}
"""Piece name -> the tensor form of its reader (``Piece.read``), as the value its codec encodes."""


# ---------------------------------------------------------------------- codec encoders (codec kind -> tensors)

ONES, NUMBERS, CARDS = "ones", "numbers", "cards"


def _one_hot(piece: Any, off: int, value: torch.Tensor, v: View, dummy: torch.Tensor) -> torch.Tensor:
    return pick(mask(value >= 0), off + value, dummy)[:, None]


def _seat_one_hot(piece: Any, off: int, value: torch.Tensor, v: View, dummy: torch.Tensor) -> torch.Tensor:
    return pick(mask(value >= 0), off + v.rel(value.clamp(min=0)), dummy)[:, None]


def _seat_flags(piece: Any, off: int, value: torch.Tensor, v: View, dummy: torch.Tensor) -> torch.Tensor:
    on = mask(((value[:, None] >> v.rot) & 1) != 0)
    return pick(on, off + v.k.seat_ar, dummy[:, None])


def _seat_labels(piece: Any, off: int, value: torch.Tensor, v: View, dummy: torch.Tensor) -> torch.Tensor:
    width = len(piece.codec.labels)
    return off + v.k.seat_ar * width + v.relative(value)


def _trick_cards(piece: Any, off: int, value: torch.Tensor, v: View, dummy: torch.Tensor) -> torch.Tensor:
    k = v.k
    cards = value[:, :k.T * k.n]
    base = v.tables["trick_base"].index_select(0, v.me) + off  # trick t, relative seat of the player
    return pick(mask(cards >= 0), base + cards, dummy[:, None])


def _trick_leaders(piece: Any, off: int, value: torch.Tensor, v: View, dummy: torch.Tensor) -> torch.Tensor:
    k = v.k
    lead = value[:, :k.T]
    idx = off + torch.arange(k.T, device=k.device) * k.n + v.rel(lead.clamp(min=0))
    return pick(mask(lead >= 0), idx, dummy[:, None])


def _seat_numbers(piece: Any, value: torch.Tensor, v: View) -> torch.Tensor:
    return v.relative(value) * piece.codec.scale


def _numbers(piece: Any, value: torch.Tensor, v: View) -> torch.Tensor:
    return value * torch.tensor(piece.codec.scales, dtype=torch.float64, device=v.k.device)


def _cards(piece: Any, value: torch.Tensor, v: View) -> torch.Tensor:
    return value[:, None]


def _seat_cards(piece: Any, value: torch.Tensor, v: View) -> torch.Tensor:
    return v.relative(value)


CODECS: dict[type, tuple[str, Callable[..., torch.Tensor]]] = {
    OneHot: (ONES, _one_hot),
    SeatOneHot: (ONES, _seat_one_hot),
    SeatFlags: (ONES, _seat_flags),
    SeatLabels: (ONES, _seat_labels),
    TrickCards: (ONES, _trick_cards),
    TrickLeaders: (ONES, _trick_leaders),
    SeatNumbers: (NUMBERS, _seat_numbers),
    Numbers: (NUMBERS, _numbers),
    Cards: (CARDS, _cards),
    CardList: (CARDS, _cards),
    SeatCards: (CARDS, _seat_cards),
}
"""Codec kind -> (what it produces, its tensor encoder)."""


def _runs(parts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge (offset, width) parts that follow each other in the layout into runs."""
    runs: list[tuple[int, int]] = []
    for off, width in parts:
        if runs and runs[-1][0] + runs[-1][1] == off:
            runs[-1] = (runs[-1][0], runs[-1][1] + width)
        else:
            runs.append((off, width))
    return runs


class Encoder:
    """One observer's layout as tensor code (see the module docstring)."""

    def __init__(self, observer: Observer, k: Statics) -> None:
        self.observer = observer
        self.k = k
        self.size = observer.size
        game = observer.game
        spec = game.spec
        phase_pos = [-1] * (max(int(p) for p in Phase) + 1)
        for i, name in enumerate(spec.phases):
            phase_pos[int(Phase[name.upper()])] = i
        role_pos = [0] * (max(int(r) for r in Role) + 1)
        for i, name in enumerate(spec.roles):
            role_pos[int(Role[name.upper()])] = i
        n, N = k.n, k.N
        trick_base = [[t * n * N + ((s - me) % n) * N for t in range(k.T) for s in range(n)] for me in range(n)]
        self.tables = {"phase_pos": k.long(phase_pos), "role_pos": k.long(role_pos),
                       "trick_base": k.long(trick_base).view(n, k.T * n)}
        self.parts: list[tuple[Any, int, str, Callable[..., torch.Tensor], Callable[[View], torch.Tensor]]] = []
        numbers: list[tuple[int, int]] = []
        cards: list[tuple[int, int]] = []
        for piece in observer.pieces:
            if piece.name not in READERS:
                raise ConfigError(f"the batched engine cannot encode the observation piece {piece.name!r}; "
                                  f"supported pieces: {', '.join(READERS)}")
            if type(piece.codec) not in CODECS:
                raise ConfigError(f"the batched engine has no encoder for codec {type(piece.codec).__name__} "
                                  f"(piece {piece.name!r}); supported: {', '.join(c.__name__ for c in CODECS)}")
            kind, enc = CODECS[type(piece.codec)]
            off = observer.offsets[piece.name]
            self.parts.append((piece, off, kind, enc, READERS[piece.name]))
            if kind == NUMBERS:
                numbers.append((off, piece.size))
            elif kind == CARDS:
                cards.append((off, piece.size))
        self.dummy = observer.offsets["progress"]
        """Where absent one-hot entries point: a number cell, written after the ones."""
        self.number_runs = _runs(numbers)
        self.card_runs = _runs(cards)
        self.omniscient = observer.omniscient

    def parts_of(self, st: TableState, me: torch.Tensor, row: torch.Tensor | None = None
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(ones int64[M, W], numbers float32[M, Wn], cards int64[M, K])`` of seats ``me``. ``ones`` are
        offsets within a row, plus ``row`` (``int64[M]``, each row's first cell in a flat buffer) when given: added
        piece by piece, so that compiled code adds them as it computes each piece, not in a pass of its own."""
        k = self.k
        n = k.n
        rot = me[:, None] + k.seat_ar
        rot = rot - (n & ((n - 1 - rot) >> 63))
        v = View(st, me, rot, n, k, self.tables)
        dummy = torch.full_like(me, self.dummy)
        ones, numbers, cards = [], [], []
        for piece, off, kind, enc, read in self.parts:
            value = read(v)
            if kind == ONES:
                at = enc(piece, off, value, v, dummy)
                ones.append(at if row is None else at + row[:, None])
            elif kind == NUMBERS:
                numbers.append(enc(piece, value, v))
            else:
                cards.append(enc(piece, value, v))
        num = torch.cat(numbers, 1).to(torch.float32)
        return torch.cat(ones, 1), num, torch.cat(cards, 1)

    def write_numbers(self, out: torch.Tensor, numbers: torch.Tensor) -> None:
        col = 0
        for off, width in self.number_runs:
            out[:, off:off + width] = numbers[:, col:col + width]
            col += width

    def write_cards(self, out: torch.Tensor, masks: torch.Tensor) -> None:
        """The card sets ``int64[M, K]`` as 0/1 floats into their cells."""
        k = self.k
        N = k.N
        M = masks.shape[0]
        if torch.compiler.is_compiling() and N % 16 == 0:  # fused: the bits by shifting, straight into the output
            cells = ((masks[:, :, None] >> k.card_ar) & 1).to(torch.float32)
        elif torch.compiler.is_compiling():
            # Fused, set by set: inductor's CPU code does not vectorize one loop over K * N cells when N is no
            # multiple of 16 (it divides each index by N); a loop of N cells per set does (twice as fast).
            sets = [((masks[:, j, None] >> k.card_ar) & 1).to(torch.float32) for j in range(masks.shape[1])]
            cells = torch.cat(sets, 1).view(M, -1, N)
        else:  # eager: one lookup of 8 floats per byte beats shifting every bit
            cells = k.expand(masks, N)
        col = 0
        for off, width in self.card_runs:
            K = width // N
            out[:, off:off + width].view(M, K, N).copy_(cells[:, col:col + K])
            col += K

    def encode(self, st: TableState, me: torch.Tensor) -> torch.Tensor:
        """``float32[M, size]``: the observations of seats ``me``, one per row of ``st``."""
        M = me.shape[0]
        out = torch.zeros(M, self.size, dtype=torch.float32, device=self.k.device)
        ones, numbers, cards = self.parts_of(st, me)
        row = torch.arange(M, device=self.k.device)[:, None] * self.size
        out.view(-1).index_fill_(0, (ones + row).view(-1), 1.0)
        self.write_numbers(out, numbers)
        self.write_cards(out, cards)
        return out
