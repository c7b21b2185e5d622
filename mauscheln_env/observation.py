"""The observation schema: named pieces over one flat ``float32`` array, each with its encoder and decoder.

The observer is kept apart from the rules (OpenSpiel style): the engine never
builds arrays. A :class:`Piece` is a name, a shape, a meaning, a **reader**
(the value the piece shows, read from a :class:`~mauscheln_env.engine.State`
for one seat) and a **codec** (how that value is written into the array and
read back from it). Everything that knows the layout takes it from the
pieces: :class:`Observer` encodes with the codecs, the environment's docs
table and ``Box`` shapes come from the same list, :meth:`Observer.decode`
(what :mod:`agents.knowledge` reads) inverts each codec, and the batched
engine and the tensor agents take offsets, widths and label orders from the
pieces and their codecs.

An observation is **egocentric**: per-seat pieces are indexed by the relative
seat ``(seat - observer) mod n``, so index 0 is the observer, 1 the seat to his
left, and so on. It has perfect recall within the deal (every public
declaration, exchange count and card played, in which trick and by whom, plus
the observer's own hand, discards and draws) and the public session state
(chips, pot, dealer, live seats, progress). ``state()`` uses the same pieces in
the absolute frame (seat 0 first) and adds the hidden ones (every hand,
discard and draw, the stock, the dead cards).

## When a piece is present

One rule: **a piece is present exactly when the configured game has the rule
that writes it.** The core pieces (:func:`observation_pieces`) are written by
the engine core for every ruleset: chips and pot where the scoring uses chips
(scores instead in Muschka), the dealer's ``knock`` where the ruleset's phases
include the knock decision. Every other piece belongs to a rule object that
the ruleset module adds for its options (``rules(game).pieces``): Vierling's
``revealed``, the classic reshuffle's ``trump_face_up``, the cap's
``reserve``, Schieben's ``pushes``, the queue's ``escrow``, the Pamphile
bonus's ``announced``. Pieces appear in that order: core pieces, then the
ruleset's.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mauscheln_env.engine import Game, Phase, Role, State

# ---------------------------------------------------------------------- codecs
#
# A codec writes a piece's value with a few lines of Python source (``source``): the lines append the
# flat index of every 1 to ``ones`` through ``ap`` and write every other value into ``out``; ``rel[x]``
# is the observer-relative seat of absolute seat ``x`` and ``absolute[r]`` the inverse. The observer
# compiles the lines of all its pieces into one function (the fast path of every step), and each piece
# alone into its own reference encoder (:meth:`Piece.encoder`). ``decode`` reads a piece back; a
# piece of 0/1 cells (``binary``) is read from the flat indices of its ones (``decode_ones``), so that
# :meth:`Observer.decode` finds the ones of a whole observation with one ``flatnonzero``.


class Codec:
    """How a piece's value is laid out: :meth:`source` writes it, :meth:`decode` reads it back."""

    binary = True
    """Every cell is 0 or 1 and the value is read from where the ones are (:meth:`decode_ones`)."""

    def source(self, off: int, value: str) -> list[str]:
        """Lines that encode the value of the expression ``value`` at offset ``off``."""
        raise NotImplementedError

    def decode(self, view: np.ndarray, absolute: list[int]) -> Any:
        """The value shown by ``view`` (the piece's cells, in its shape)."""
        return self.decode_ones(np.flatnonzero(view).tolist(), view.shape, absolute)

    def decode_ones(self, ones: list[int], shape: tuple[int, ...], absolute: list[int]) -> Any:
        """The value of a binary piece of ``shape`` from the ascending flat indices of its ones (piece-relative)."""
        raise NotImplementedError

    def reader(self, value: str) -> str:
        """The expression whose result :meth:`value` takes, from the piece's reader expression ``value``."""
        return value

    def value(self, raw: Any, shape: tuple[int, ...], absolute: list[int]) -> Any:
        """What :meth:`decode` reads back from the encoding of ``raw`` (the value of :meth:`reader`), computed
        without encoding it (:meth:`Observer.values`)."""
        raise NotImplementedError


@dataclass(frozen=True)
class OneHot(Codec):
    """An index into ``labels`` (or None: all zeros)."""

    labels: tuple[str, ...]

    def source(self, off, value):
        return [f"v = {value}", "if v is not None:", f"    ap({off} + v)"]

    def decode_ones(self, ones, shape, absolute):
        return ones[0] if ones else None

    def value(self, raw, shape, absolute):
        return None if raw is None else int(raw)


@dataclass(frozen=True)
class SeatOneHot(Codec):
    """An absolute seat (or None), shown at its relative position."""

    def source(self, off, value):
        return [f"v = {value}", "if v is not None:", f"    ap({off} + rel[v])"]

    def decode_ones(self, ones, shape, absolute):
        return absolute[ones[0]] if ones else None

    def value(self, raw, shape, absolute):
        return None if raw is None else int(raw)


@dataclass(frozen=True)
class SeatFlags(Codec):
    """One flag per seat (a list by absolute seat)."""

    def source(self, off, value):
        return [f"v = {value}", "for r, x in enumerate(absolute):", "    if v[x]:", f"        ap({off} + r)"]

    def decode_ones(self, ones, shape, absolute):
        flags = [False] * len(absolute)
        for r in ones:
            flags[absolute[r]] = True
        return flags

    def value(self, raw, shape, absolute):
        return [bool(raw[x]) for x in range(len(absolute))]


@dataclass(frozen=True)
class SeatNumbers(Codec):
    """A number per seat (a list by absolute seat), times ``scale``."""

    num_players: int
    scale: float
    binary = False

    def source(self, off, value):
        return [f"v = {value}", f"out[{off}:{off + self.num_players}] = [v[x] * {self.scale!r} for x in absolute]"]

    def decode(self, view, absolute):
        values = [0.0] * len(absolute)
        for r, x in enumerate(absolute):
            values[x] = float(view[r]) / self.scale if self.scale else 0.0
        return values

    def value(self, raw, shape, absolute):  # the float32 cell's rounding included
        return [float(np.float32(raw[x] * self.scale)) / self.scale if self.scale else 0.0
                for x in range(len(absolute))]


@dataclass(frozen=True)
class Numbers(Codec):
    """A fixed number of values (a tuple), each times its scale."""

    scales: tuple[float, ...]
    binary = False

    def source(self, off, value):
        return [f"v = {value}"] + [f"out[{off + i}] = v[{i}] * {scale!r}" for i, scale in enumerate(self.scales)]

    def decode(self, view, absolute):
        return [float(view[i]) / s if s else 0.0 for i, s in enumerate(self.scales)]

    def value(self, raw, shape, absolute):  # the float32 cells' rounding included
        return [float(np.float32(raw[i] * s)) / s if s else 0.0 for i, s in enumerate(self.scales)]


@dataclass(frozen=True)
class Cards(Codec):
    """A set of cards as a bit mask over the deck."""

    def source(self, off, value):
        return [f"m = {value}", "while m:", "    low = m & -m", f"    ap({off} + low.bit_length() - 1)",
                "    m ^= low"]

    def decode_ones(self, ones, shape, absolute):
        mask = 0
        for c in ones:
            mask |= 1 << c
        return mask

    def value(self, raw, shape, absolute):
        return int(raw)


@dataclass(frozen=True)
class CardList(Codec):
    """A collection of card ids (e.g. the stock), shown as a set."""

    def source(self, off, value):
        return [f"for c in {value}:", f"    ap({off} + c)"]

    def decode_ones(self, ones, shape, absolute):
        return list(ones)

    def value(self, raw, shape, absolute):
        return sorted(set(raw))


@dataclass(frozen=True)
class SeatCards(Codec):
    """A card mask per seat (a list by absolute seat), rows by relative seat."""

    num_cards: int

    def source(self, off, value):
        return [f"v = {value}", f"base = {off}", "for x in absolute:", "    m = v[x]", "    while m:",
                "        low = m & -m", "        ap(base + low.bit_length() - 1)", "        m ^= low",
                f"    base += {self.num_cards}"]

    def decode_ones(self, ones, shape, absolute):
        masks = [0] * len(absolute)
        for i in ones:
            r, c = divmod(i, self.num_cards)
            masks[absolute[r]] |= 1 << c
        return masks

    def value(self, raw, shape, absolute):
        return [int(raw[x]) for x in range(len(absolute))]


@dataclass(frozen=True)
class SeatLabels(Codec):
    """One label per seat, one-hot rows by relative seat.

    The value is a list by absolute seat; ``lookup`` (a name the piece binds,
    or None) maps each entry to its label's index.
    """

    labels: tuple[str, ...]
    lookup: str | None = None

    def source(self, off, value):
        item = "v[x]" if self.lookup is None else f"{self.lookup}[v[x]]"
        return [f"v = {value}", f"base = {off}", "for x in absolute:", f"    ap(base + {item})",
                f"    base += {len(self.labels)}"]

    def decode_ones(self, ones, shape, absolute):
        values: list[int | None] = [None] * len(absolute)
        width = len(self.labels)
        for i in ones:
            r, v = divmod(i, width)
            values[absolute[r]] = v
        return values

    def reader(self, value):
        return value if self.lookup is None else f"[{self.lookup}[x] for x in {value}]"

    def value(self, raw, shape, absolute):
        return [int(raw[x]) for x in range(len(absolute))]


@dataclass(frozen=True)
class TrickCards(Codec):
    """The tricks so far (lists of ``(seat, card)``) -> one-hot ``[trick, relative seat, card]``."""

    num_players: int
    num_cards: int

    def source(self, off, value):
        return [f"base = {off}", f"for trick in {value}:", "    for x, c in trick:",
                f"        ap(base + rel[x] * {self.num_cards} + c)", f"    base += {self.num_players * self.num_cards}"]

    def decode_ones(self, ones, shape, absolute):
        n, width = self.num_players, self.num_cards
        cards: list[list[int | None]] = [[None] * n for _ in range(shape[0])]
        for i in ones:
            t, rest = divmod(i, n * width)
            r, c = divmod(rest, width)
            cards[t][absolute[r]] = c
        return cards

    def value(self, raw, shape, absolute):
        cards: list[list[int | None]] = [[None] * self.num_players for _ in range(shape[0])]
        for t, trick in enumerate(raw):
            for x, c in trick:
                cards[t][x] = c
        return cards


@dataclass(frozen=True)
class TrickLeaders(Codec):
    """The tricks so far (lists of ``(seat, card)``) -> one-hot ``[trick, relative seat of its leader]``."""

    num_players: int

    def source(self, off, value):
        return [f"base = {off}", f"for trick in {value}:", "    ap(base + rel[trick[0][0]])",
                f"    base += {self.num_players}"]

    def decode_ones(self, ones, shape, absolute):
        leaders: list[int | None] = [None] * shape[0]
        for i in ones:
            t, r = divmod(i, self.num_players)
            leaders[t] = absolute[r]
        return leaders

    def value(self, raw, shape, absolute):
        leaders: list[int | None] = [None] * shape[0]
        for t, trick in enumerate(raw):
            leaders[t] = trick[0][0]
        return leaders


# ---------------------------------------------------------------------- pieces

Encoder = Callable[[State, int, list, list, np.ndarray], list]
"""``encoder(state, me, rel, absolute, out) -> ones``: writes ``out``, returns the flat indices of its ones."""

_HEAD = ["d = st.deal", "s = st.session", "ones = []", "ap = ones.append"]


@dataclass(frozen=True)
class Piece:
    """One named piece of the observation: its shape, meaning, reader and codec.

    ``read`` is a Python expression of the value the piece shows to the
    observer ``me``, over ``st`` (the :class:`State`), ``d`` (its deal), ``s``
    (its session) and the objects in ``names``; the codec lays it out.
    """

    name: str
    shape: tuple[int, ...]
    doc: str
    read: str
    codec: Codec
    names: Mapping[str, Any] = field(default_factory=dict)

    @property
    def size(self) -> int:
        size = 1
        for d in self.shape:
            size *= d
        return size

    def value(self, state: State, seat: int) -> Any:
        """The piece's value for ``seat`` (its reader, evaluated)."""
        scope = {"st": state, "d": state.deal, "s": state.session, "me": seat}
        return eval(self.read, dict(self.names), scope)  # noqa: S307 - our own reader expression

    def encoder(self, off: int) -> Encoder:
        """This piece's reference encoder, at offset ``off``."""
        return _compile([self], [off])


def _compile(pieces: Sequence[Piece], offsets: Sequence[int]) -> Encoder:
    """One function that encodes every piece in turn (see the codecs above)."""
    lines = ["def encode(st, me, rel, absolute, out):", *("    " + line for line in _HEAD)]
    names: dict[str, Any] = {}
    for piece, off in zip(pieces, offsets):
        for key, obj in piece.names.items():
            if key in names and names[key] is not obj:
                raise RuntimeError(f"observation pieces bind the name {key!r} to different objects")
            names[key] = obj
        lines.append(f"    # {piece.name}")
        lines += ["    " + line for line in piece.codec.source(off, piece.read)]
    lines.append("    return ones")
    namespace = dict(names)
    exec(compile("\n".join(lines), f"<observation encoder: {', '.join(p.name for p in pieces)}>", "exec"),  # noqa: S102
         namespace)
    encode = namespace["encode"]
    encode.source = "\n".join(lines)
    return encode


def observation_pieces(game: Game, omniscient: bool = False) -> list[Piece]:
    """The named pieces of an observation (``omniscient=False``) or of ``state()``; see "When a piece is present"."""
    n, N, H, T = game.n, game.num_cards, game.hand_size, game.num_tricks
    spec = game.spec
    frame = "seat" if omniscient else "relative seat"
    cfg = game.config
    scoring = game.scoring
    unit = 1.0 / scoring.unit(game)
    phase_pos: list[int | None] = [None] * len(Phase)
    for i, name in enumerate(spec.phases):
        phase_pos[Phase[name.upper()]] = i
    role_pos = [0] * len(Role)
    for i, name in enumerate(spec.roles):
        role_pos[Role[name.upper()]] = i
    progress = 0.0 if cfg.max_deals is None else 1.0 / cfg.max_deals
    tricks = "(d.tricks + [d.trick] if d.trick else d.tricks)"
    pieces = [
        Piece("phase", (len(spec.phases),), f"one-hot: {', '.join(spec.phases)} (all 0 when over)",
              "phase_pos[st.phase]", OneHot(tuple(spec.phases)), {"phase_pos": phase_pos}),
        Piece("to_act", (n,), f"one-hot {frame} to act", "st.to_act", SeatOneHot()),
        Piece("dealer", (n,), f"one-hot {frame} of the dealer", "s.dealer", SeatOneHot()),
        Piece("live", (n,), f"1 per {frame} still in the session (not eliminated)", "s.alive", SeatFlags()),
    ]
    if scoring.uses_chips:
        pieces += [
            Piece("chips", (n,), f"chips per {frame} / bankroll", "s.chips", SeatNumbers(n, unit)),
            Piece("pot", (1,), "pot / bankroll", "(s.pot,)", Numbers((unit,))),
        ]
    else:
        pieces.append(Piece("scores", (n,), f"score per {frame} / start score", "s.scores", SeatNumbers(n, unit)))
    pieces.append(Piece("progress", (1,), "settled deals / max_deals (0 when unlimited)", "(s.deals_settled,)",
                        Numbers((progress,))))
    if omniscient:
        pieces += [
            Piece("hands", (n, N), "every hand, by seat", "d.hands", SeatCards(N)),
            Piece("discards", (n, N), "every seat's exchange discards", "d.discards", SeatCards(N)),
            Piece("drawn", (n, N), "cards each seat received from the stock or the trump card", "d.drawn",
                  SeatCards(N)),
            Piece("stock", (N,), "cards still in the stock", "d.stock", CardList()),
            Piece("dead", (N,), "hands of seats that passed", "d.dead", Cards()),
        ]
    else:
        pieces += [
            Piece("hand", (N,), "own cards seen (a blind knocker sees none until his exchange)",
                  "visible_hand(st, me)", Cards(), {"visible_hand": game.visible_hand}),
            Piece("own_discards", (N,), "own exchange discards (also cards marked so far)", "d.discards[me]", Cards()),
            Piece("own_drawn", (N,), "cards received by own exchange, once seen", "d.drawn[me] & ~d.blind[me]",
                  Cards()),
        ]
    pieces += [
        Piece("trump_card", (N,), "one-hot: the card turned for trump", "None if d.undealt else d.trump_card",
              OneHot(tuple(game.deck.codes))),
        Piece("trump_suit", (4,), "one-hot: C, S, H, D", "None if d.undealt else d.trump_suit",
              OneHot(("C", "S", "H", "D"))),
        Piece("trump_taken_by", (n,), f"one-hot {frame} that took the trump card into hand", "d.trump_holder",
              SeatOneHot()),
    ]
    if "knock" in spec.phases:
        pieces.append(Piece("knock", (2,), "[dealer knocked, dealer declined to knock]",
                            "None if d.knocked is None else 1 - d.knocked", OneHot(("knocked", "declined"))))
    exchange_pos = {None: 0, **{k: k + 1 for k in range(H + 1)}}
    pieces += [
        Piece("roles", (n, len(spec.roles)), f"one-hot role per {frame}: {', '.join(spec.roles)}", "d.roles",
              SeatLabels(tuple(spec.roles), "role_pos"), {"role_pos": role_pos}),
        Piece("exchanged", (n, H + 2), f"one-hot per {frame}: not yet, then 0..{H} cards exchanged", "d.exchanged",
              SeatLabels(("not yet", *map(str, range(H + 1))), "exchange_pos"), {"exchange_pos": exchange_pos}),
        Piece("trick_cards", (T, n, N), f"card played in trick t by {frame}", tricks, TrickCards(n, N)),
        Piece("trick_leader", (T, n), f"one-hot {frame} that led trick t", tricks, TrickLeaders(n)),
        # Shown once the card play has begun: a Muschka lone seat, credited with every trick without
        # play, still shows none (the layout of mauscheln_v1).
        Piece("tricks_won", (n,), f"tricks won per {frame} / {T} (0 until a card is played)",
              "d.tricks_won if d.tricks or d.trick else no_tricks", SeatNumbers(n, 1.0 / T), {"no_tricks": [0] * n}),
    ]
    for piece in game.rules.pieces:
        pieces.append(piece(game, frame) if callable(piece) and not isinstance(piece, Piece) else piece)
    return pieces


class Observer:
    """Encodes a :class:`State` for one seat (or for nobody: the full state) and decodes observations back."""

    def __init__(self, game: Game, omniscient: bool = False) -> None:
        self.game = game
        self.omniscient = omniscient
        self.pieces = observation_pieces(game, omniscient)
        self.offsets: dict[str, int] = {}
        off = 0
        for p in self.pieces:
            self.offsets[p.name] = off
            off += p.size
        self.size = off
        self.by_name = {p.name: p for p in self.pieces}
        self._spans = {p.name: (p.codec, self.offsets[p.name], self.offsets[p.name] + p.size, p.shape)
                       for p in self.pieces}
        n = game.n
        self._rel = [[(s - me) % n for s in range(n)] for me in range(n)]
        self._abs = [[(me + r) % n for r in range(n)] for me in range(n)]
        self._encode = _compile(self.pieces, [self.offsets[p.name] for p in self.pieces])
        self._readers: dict[tuple[str, ...], Callable[[State, int], tuple]] = {}

    def slice(self, name: str) -> slice:
        off = self.offsets[name]
        return slice(off, off + self.by_name[name].size)

    def views(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named, reshaped views into a flat observation (no copies)."""
        return {p.name: obs[self.slice(p.name)].reshape(p.shape) for p in self.pieces}

    def encode(self, state: State, seat: int | None = None) -> np.ndarray:
        """Observation of ``seat``; with an omniscient observer ``seat`` is ignored.

        The pieces' encoders, compiled into one function, gather the flat
        indices of every 1 (written with a single fancy assignment) and write
        the other values.
        """
        me = 0 if self.omniscient else seat
        out = np.zeros(self.size, dtype=np.float32)
        out[self._encode(state, me, self._rel[me], self._abs[me], out)] = 1.0
        return out

    def decode(self, obs: np.ndarray, seat: int, names: Sequence[str] | None = None) -> dict[str, Any]:
        """The values of the named pieces (every piece by default) as ``seat``'s observation shows them.

        Seats come back absolute; card sets as bit masks; numbers unscaled.
        """
        absolute = self._abs[0 if self.omniscient else seat]
        ones = None  # the flat indices of every one of obs, found once for all binary pieces
        out = {}
        for name in names if names is not None else self.by_name:
            codec, off, end, shape = self._spans[name]
            if codec.binary:
                if ones is None:
                    ones = np.flatnonzero(obs).tolist()
                lo = bisect_left(ones, off)
                hi = bisect_left(ones, end, lo)
                out[name] = codec.decode_ones([i - off for i in ones[lo:hi]] if off else ones[lo:hi], shape, absolute)
            else:
                out[name] = codec.decode(obs[off:end].reshape(shape), absolute)
        return out


    def values(self, state: State, seat: int, names: Sequence[str]) -> dict[str, Any]:
        """``decode(encode(state, seat), seat, names)`` without the observation: each named piece's reader
        evaluated and put in the form :meth:`decode` gives (the search's model players read their view so)."""
        me = 0 if self.omniscient else seat
        key = tuple(names)
        read = self._readers.get(key)
        if read is None:
            read = self._readers[key] = _compile_readers([self.by_name[name] for name in key])
        absolute = self._abs[me]
        out = {}
        for name, raw in zip(key, read(state, me)):
            codec, _, _, shape = self._spans[name]
            out[name] = codec.value(raw, shape, absolute)
        return out


def _compile_readers(pieces: Sequence[Piece]) -> Callable[[State, int], tuple]:
    """One function that evaluates the readers of ``pieces`` (as their codecs take them) into a tuple."""
    names: dict[str, Any] = {}
    for piece in pieces:
        names.update(piece.names)
    lines = ["def read(st, me):", "    d = st.deal", "    s = st.session",
             "    return (" + "".join(f"{p.codec.reader(p.read)}, " for p in pieces) + ")"]
    exec(compile("\n".join(lines), f"<observation readers: {', '.join(p.name for p in pieces)}>", "exec"),  # noqa: S102
         names)
    return names["read"]


def layout_table(observer: Observer) -> str:
    """The layout as a Markdown table (used by the docs and ``describe_observation``)."""
    rows = ["| piece | shape | offset | meaning |", "| --- | --- | --- | --- |"]
    for p in observer.pieces:
        rows.append(f"| `{p.name}` | {p.shape} | {observer.offsets[p.name]} | {p.doc} |")
    rows.append(f"| total | ({observer.size},) | | |")
    return "\n".join(rows)


__all__ = [
    "CardList", "Cards", "Codec", "Numbers", "Observer", "OneHot", "Piece", "SeatCards", "SeatFlags", "SeatLabels",
    "SeatNumbers", "SeatOneHot", "TrickCards", "TrickLeaders", "layout_table", "observation_pieces",
]
