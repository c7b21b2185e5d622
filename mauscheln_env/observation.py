"""Observation and state encoding: named pieces over one flat ``float32`` array.

The observer is kept apart from the rules (OpenSpiel style): the engine never
builds arrays, and the layout table in the environment's documentation, the
``Box`` shapes and the slicing helpers all come from :func:`observation_pieces`.

An observation is **egocentric**: per-seat pieces are indexed by the relative
seat ``(seat - observer) mod n``, so index 0 is the observer, 1 the seat to his
left, and so on. It has perfect recall within the deal (every public
declaration, exchange count and card played, in which trick and by whom, plus
the observer's own hand, discards and draws) and the public session state
(chips, pot, dealer, live seats, progress).

``state()`` uses the same pieces in the absolute frame (seat 0 first) and adds
the hidden ones (every hand, discard and draw, the stock, the dead cards).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mauscheln_env.cards import iter_bits
from mauscheln_env.engine import Game, Phase, Role, State


@dataclass(frozen=True)
class Piece:
    name: str
    shape: tuple[int, ...]
    doc: str

    @property
    def size(self) -> int:
        size = 1
        for d in self.shape:
            size *= d
        return size


def observation_pieces(game: Game, omniscient: bool = False) -> list[Piece]:
    """The named pieces of an observation (``omniscient=False``) or of ``state()``.

    Pieces that only some rulesets or options need (``knock``, ``pot``,
    ``revealed``, ``reserve``, ...) are present only there; everything else has
    the same name, order and meaning in every ruleset.
    """
    n, N, H, T = game.n, game.num_cards, game.hand_size, game.num_tricks
    spec = game.spec
    frame = "seat" if omniscient else "relative seat"
    points = game.scoring == "points"
    pieces = [
        Piece("phase", (len(spec.phases),), f"one-hot: {', '.join(spec.phases)} (all 0 when over)"),
        Piece("to_act", (n,), f"one-hot {frame} to act"),
        Piece("dealer", (n,), f"one-hot {frame} of the dealer"),
        Piece("live", (n,), f"1 per {frame} still in the session (not eliminated)"),
        Piece("scores", (n,), f"score per {frame} / start score") if points
        else Piece("chips", (n,), f"chips per {frame} / bankroll"),
    ]
    if not points:
        pieces.append(Piece("pot", (1,), "pot / bankroll"))
    pieces.append(Piece("progress", (1,), "settled deals / max_deals (0 when unlimited)"))
    if omniscient:
        pieces += [
            Piece("hands", (n, N), "every hand, by seat"),
            Piece("discards", (n, N), "every seat's exchange discards"),
            Piece("drawn", (n, N), "cards each seat received from the stock or the trump card"),
            Piece("stock", (N,), "cards still in the stock"),
            Piece("dead", (N,), "hands of seats that passed"),
        ]
    else:
        pieces += [
            Piece("hand", (N,), "own cards seen (a blind knocker sees none until his exchange)"),
            Piece("own_discards", (N,), "own exchange discards (also cards marked so far)"),
            Piece("own_drawn", (N,), "cards received by own exchange, once seen"),
        ]
    pieces += [
        Piece("trump_card", (N,), "one-hot: the card turned for trump"),
        Piece("trump_suit", (4,), "one-hot: C, S, H, D"),
        Piece("trump_taken_by", (n,), f"one-hot {frame} that took the trump card into hand"),
    ]
    if "knock" in spec.phases:
        pieces.append(Piece("knock", (2,), "[dealer knocked, dealer declined to knock]"))
    pieces += [
        Piece("roles", (n, len(spec.roles)), f"one-hot role per {frame}: {', '.join(spec.roles)}"),
        Piece("exchanged", (n, H + 2), f"one-hot per {frame}: not yet, then 0..{H} cards exchanged"),
        Piece("trick_cards", (T, n, N), f"card played in trick t by {frame}"),
        Piece("trick_leader", (T, n), f"one-hot {frame} that led trick t"),
        Piece("tricks_won", (n,), f"tricks won per {frame} / {T}"),
    ]
    if game.vierling:
        pieces.append(Piece("revealed", (N,), "cards shown to everyone (Vierling quartets)"))
    if game.stock_policy == "RESHUFFLE_TRUMP":
        pieces.append(Piece("trump_face_up", (1,), "1 while the trump card lies face up"))
    if game.cap is not None:
        pieces.append(Piece("reserve", (1,), "reserve of the pot cap / bankroll"))
    if game.schieben:
        pieces.append(Piece("pushes", (1,), "times the deal was pushed this deal / seats"))
    if game.queue_option:
        pieces.append(Piece("escrow", (2,), "[queued mouche payments / bankroll, queued items / seats]"))
    if game.pamphile_bonus:
        pieces.append(Piece("announced", (n,), f"one-hot {frame} that announced the Pamphile"))
    return pieces


class Observer:
    """Encodes a :class:`State` for one seat (or for nobody: the full state)."""

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
        cfg = game.config
        self._chip_scale = 1.0 / (cfg.start_score if game.scoring == "points" else cfg.bankroll)
        self._progress_scale = 0.0 if cfg.max_deals is None else 1.0 / cfg.max_deals
        # Precomputed offsets and seat rotations for encode().
        n, N = game.n, game.num_cards
        o = self.offsets
        names = [p.name for p in self.pieces]
        self._o_pot = o.get("pot")
        self._o_progress = o["progress"]
        self._o_knock = o.get("knock")
        self._phase_pos = [None] * len(Phase)
        for i, name in enumerate(game.spec.phases):
            self._phase_pos[Phase[name.upper()]] = i
        self._role_pos = [0] * len(Role)
        for i, name in enumerate(game.spec.roles):
            self._role_pos[Role[name.upper()]] = i
        self._num_roles = len(game.spec.roles)
        self._extras = [name for name in ("revealed", "trump_face_up", "reserve", "pushes", "escrow", "announced")
                        if name in names]
        self._rel = [[(s - me) % n for s in range(n)] for me in range(n)]
        self._abs = [[(me + r) % n for r in range(n)] for me in range(n)]
        self._o_phase, self._o_to_act, self._o_dealer = o["phase"], o["to_act"], o["dealer"]
        self._o_live, self._o_roles = o["live"], o["roles"]
        self._o_chips = o["scores"] if game.scoring == "points" else o["chips"]
        self._o_x, self._x_width = o["exchanged"], game.hand_size + 2
        self._o_trump_card, self._o_trump_suit = o["trump_card"], o["trump_suit"]
        self._o_taken = o["trump_taken_by"]
        self._o_tl, self._o_tw = o["trick_leader"], o["tricks_won"]
        self._inv_tricks = 1.0 / game.num_tricks
        if not omniscient:
            self._o_hand, self._o_disc, self._o_drawn = o["hand"], o["own_discards"], o["own_drawn"]
        self._trick_seat_base = [
            [o["trick_cards"] + self._rel[me][s] * N for s in range(n)] for me in range(n)
        ]

    def slice(self, name: str) -> slice:
        off = self.offsets[name]
        size = next(p.size for p in self.pieces if p.name == name)
        return slice(off, off + size)

    def views(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named, reshaped views into a flat observation (no copies)."""
        return {p.name: obs[self.slice(p.name)].reshape(p.shape) for p in self.pieces}

    def encode(self, state: State, seat: int | None = None) -> np.ndarray:
        """Observation of ``seat``; with an omniscient observer ``seat`` is ignored.

        Written for speed (it runs once per decision): the indices of every 1
        are gathered in pure Python and written with a single fancy assignment.
        """
        g = self.game
        n, N = g.n, g.num_cards
        o = self.offsets
        me = 0 if self.omniscient else seat
        rel = self._rel[me]  # rel[absolute seat] -> relative seat
        absolute = self._abs[me]  # absolute[relative seat] -> absolute seat
        out = np.zeros(self.size, dtype=np.float32)
        idx: list[int] = []
        ap = idx.append
        phase = state.phase
        if phase is not Phase.OVER:
            ap(self._o_phase + self._phase_pos[phase])
            ap(self._o_to_act + rel[state.to_act])
        ap(self._o_dealer + rel[state.dealer])
        alive, roles, exchanged = state.alive, state.roles, state.exchanged
        chips = state.scores if g.scoring == "points" else state.chips
        o_live, o_roles, o_x, xw = self._o_live, self._o_roles, self._o_x, self._x_width
        role_pos, nr = self._role_pos, self._num_roles
        for r in range(n):
            s = absolute[r]
            if alive[s]:
                ap(o_live + r)
            ap(o_roles + r * nr + role_pos[roles[s]])
            k = exchanged[s]
            ap(o_x + r * xw + (0 if k is None else k + 1))
        scale = self._chip_scale
        o_chips = self._o_chips
        out[o_chips:o_chips + n] = [chips[s] * scale for s in absolute]
        if self._o_pot is not None:
            out[self._o_pot] = state.pot * scale
        out[self._o_progress] = state.deals_settled * self._progress_scale
        if self.omniscient:
            for name, masks in (("hands", state.hands), ("discards", state.discards), ("drawn", state.drawn)):
                base = o[name]
                for s in range(n):
                    m = masks[s]
                    while m:
                        low = m & -m
                        ap(base + low.bit_length() - 1)
                        m ^= low
                    base += N
            base = o["stock"]
            for c in state.stock:
                ap(base + c)
            base = o["dead"]
            m = state.dead
            while m:
                low = m & -m
                ap(base + low.bit_length() - 1)
                m ^= low
        else:
            for base, m in (
                (self._o_hand, g.visible_hand(state, seat)),
                (self._o_disc, state.discards[seat]),
                (self._o_drawn, state.drawn[seat] & ~state.blind[seat]),
            ):
                while m:
                    low = m & -m
                    ap(base + low.bit_length() - 1)
                    m ^= low
        if not state.undealt:
            ap(self._o_trump_card + state.trump_card)
            ap(self._o_trump_suit + state.trump_suit)
        if state.trump_holder is not None:
            ap(self._o_taken + rel[state.trump_holder])
        if state.knocked is not None and self._o_knock is not None:
            ap(self._o_knock + (0 if state.knocked else 1))
        if state.tricks or state.trick:
            seat_base = self._trick_seat_base[me]  # offset of (trick 0, seat s, card 0)
            o_tl = self._o_tl
            stride = n * N
            t_off = 0
            tl = 0
            for trick in state.tricks:
                ap(o_tl + tl + rel[trick[0][0]])
                for s, c in trick:
                    ap(seat_base[s] + t_off + c)
                t_off += stride
                tl += n
            trick = state.trick
            if trick:
                ap(o_tl + tl + rel[trick[0][0]])
                for s, c in trick:
                    ap(seat_base[s] + t_off + c)
            o_tw = self._o_tw
            won = state.tricks_won
            inv_t = self._inv_tricks
            out[o_tw:o_tw + n] = [won[s] * inv_t for s in absolute]
        out[idx] = 1.0
        if self._extras:
            self._encode_extras(state, me, rel, out)
        return out

    def _encode_extras(self, state: State, me: int, rel: list[int], out: np.ndarray) -> None:
        """Pieces that only some rulesets and options have."""
        o = self.offsets
        n = self.game.n
        for name in self._extras:
            off = o[name]
            if name == "revealed":
                for c in iter_bits(state.revealed):
                    out[off + c] = 1.0
            elif name == "trump_face_up":
                out[off] = float(state.trump_face_up)
            elif name == "reserve":
                out[off] = state.reserve * self._chip_scale
            elif name == "pushes":
                out[off] = state.pushes / n
            elif name == "escrow":
                out[off] = sum(state.escrow) * self._chip_scale
                out[off + 1] = len(state.escrow) / n
            elif name == "announced" and state.announced is not None:
                out[off + rel[state.announced]] = 1.0


def layout_table(observer: Observer) -> str:
    """The layout as a Markdown table (used by the docs and ``describe_observation``)."""
    rows = ["| piece | shape | offset | meaning |", "| --- | --- | --- | --- |"]
    for p in observer.pieces:
        rows.append(f"| `{p.name}` | {p.shape} | {observer.offsets[p.name]} | {p.doc} |")
    rows.append(f"| total | ({observer.size},) | | |")
    return "\n".join(rows)
