"""Structured knowledge of one seat, derived from its observation and info only.

:class:`KnowledgeReader` slices an observation by the named pieces of
:class:`mauscheln_env.observation.Observer` (the same list that documents the
layout) and turns them into plain Python facts in the **absolute** seat frame:
own hand, discards and draws as card bit masks, the trump card, who took it,
the knock, roles, exchange counts, every card played and by whom, tricks won,
pot and chips. Nothing here reads an engine state, so an agent that builds its
view with this module can know no more than its seat may know.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mauscheln_env.engine import Game, Role
from mauscheln_env.observation import Observer


@dataclass
class Knowledge:
    """What one seat knows at a decision, in absolute seats. Card sets are bit masks."""

    seat: int
    n: int
    phase: str
    to_act: int | None
    dealer: int
    live: list[bool]
    hand: int
    discards: int
    drawn: int
    trump_card: int
    trump_suit: int
    trump_holder: int | None
    knocked: bool | None
    roles: list[Role]
    exchanged: list[int | None]
    trick_cards: list[list[int | None]]
    """``trick_cards[t][s]``: the card seat ``s`` played to trick ``t`` (None if not yet)."""
    trick_leaders: list[int | None]
    current_trick: list[tuple[int, int]]
    """The trick in progress as ``(seat, card)`` in play order (from the info dict)."""
    tricks_won: list[int]
    pot: int
    chips: list[int]
    legal: list[int] = field(default_factory=list)

    # ------------------------------------------------------------------ derived facts
    @property
    def tricks_done(self) -> int:
        """Completed tricks (the trick in progress not counted)."""
        started = sum(1 for leader in self.trick_leaders if leader is not None)
        return started - (1 if self.current_trick else 0)

    def played_by(self, seat: int) -> int:
        """Cards ``seat`` has played in this deal."""
        mask = 0
        for cards in self.trick_cards:
            c = cards[seat]
            if c is not None:
                mask |= 1 << c
        return mask

    @property
    def played(self) -> int:
        """Every card played in this deal."""
        mask = 0
        for cards in self.trick_cards:
            for c in cards:
                if c is not None:
                    mask |= 1 << c
        return mask

    @property
    def participants(self) -> list[int]:
        """Seats that play the tricks (the mauschler and the goers)."""
        return [s for s in range(self.n) if self.roles[s] in (Role.MAUSCHLER, Role.GOER)]

    def known_out_of_play(self) -> int:
        """Cards this seat knows are in nobody else's hand: own hand, own discards, played, face-up trump."""
        mask = self.hand | self.discards | self.played
        if self.trump_holder is None or self.trump_holder == self.seat:
            mask |= 1 << self.trump_card
        return mask


class KnowledgeReader:
    """Reads :class:`Knowledge` from ``(observation, info)`` for one game's layout."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.observer = Observer(game)
        self._slices = {p.name: (self.observer.slice(p.name), p.shape) for p in self.observer.pieces}
        self._names = set(self._slices)
        n = game.n
        self._abs = [[(me + r) % n for r in range(n)] for me in range(n)]
        missing = set(_PIECE_CODES) - self._names - _OPTIONAL_PIECES
        if missing:
            raise ValueError(f"the observation of this ruleset lacks the pieces {sorted(missing)}")
        self._decode = _decode_table(self.observer)
        spec = game.config.spec
        self._phases = tuple(spec.phases)  # the observation's phase one-hot follows the spec's order
        self._roles = tuple(Role[name.upper()] for name in spec.roles)

    def piece(self, obs: np.ndarray, name: str) -> np.ndarray:
        """One named piece of ``obs``, reshaped (a view, no copy)."""
        sl, shape = self._slices[name]
        return obs[sl].reshape(shape)

    def has(self, name: str) -> bool:
        return name in self._names

    def mask_of(self, vector: np.ndarray) -> int:
        """Bit mask of the nonzero entries of a card-indexed vector."""
        mask = 0
        for c in np.flatnonzero(vector).tolist():
            mask |= 1 << c
        return mask

    def read(self, obs: np.ndarray, info: dict[str, Any], seat: int, action_mask: np.ndarray | None = None) -> Knowledge:
        """Decode the nonzero entries of ``obs`` (one pass) and the exact chips from ``info``."""
        g = self.game
        n = g.n
        T = g.num_tricks
        absolute = self._abs[seat]  # relative -> absolute
        phase = "over"
        to_act = None
        live = [False] * n
        roles = [Role.UNDECIDED] * n
        exchanged: list[int | None] = [None] * n
        trump_holder = None
        knocked = None
        trick_cards: list[list[int | None]] = [[None] * n for _ in range(T)]
        leaders: list[int | None] = [None] * T
        hand = discards = drawn = 0
        trump_card = -1
        decode = self._decode
        role_of = self._roles
        for i in np.flatnonzero(obs).tolist():
            code, a, b, c = decode[i]
            if code == _TRICK:
                trick_cards[a][absolute[b]] = c
            elif code == _HAND:
                hand |= 1 << a
            elif code == _ROLES:
                roles[absolute[a]] = role_of[b]
            elif code == _EXCH:
                exchanged[absolute[a]] = None if b == 0 else b - 1
            elif code == _LIVE:
                live[absolute[a]] = True
            elif code == _LEADER:
                leaders[a] = absolute[b]
            elif code == _DISC:
                discards |= 1 << a
            elif code == _DRAWN:
                drawn |= 1 << a
            elif code == _PHASE:
                phase = self._phases[a]
            elif code == _TO_ACT:
                to_act = absolute[a]
            elif code == _TRUMP:
                trump_card = a
            elif code == _TAKEN:
                trump_holder = absolute[a]
            elif code == _KNOCK:
                knocked = a == 0
        index = g.deck.index
        current = [(int(s), index[c]) for s, c in info.get("trick", [])]
        return Knowledge(
            seat=seat,
            n=n,
            phase=phase,
            to_act=to_act,
            dealer=int(info["dealer"]),
            live=live,
            hand=hand,
            discards=discards,
            drawn=drawn,
            trump_card=trump_card,
            trump_suit=g.deck.suit[trump_card],
            trump_holder=trump_holder,
            knocked=knocked,
            roles=roles,
            exchanged=exchanged,
            trick_cards=trick_cards,
            trick_leaders=leaders,
            current_trick=current,
            tricks_won=[int(x) for x in info.get("tricks_won", [0] * n)],
            pot=int(info["pot"]),
            chips=[int(x) for x in info["chips"]],
            legal=[] if action_mask is None else np.flatnonzero(action_mask).tolist(),
        )


_PIECE_CODES = {
    "phase": 1, "to_act": 2, "live": 3, "hand": 4, "own_discards": 5, "own_drawn": 6, "trump_card": 7,
    "trump_taken_by": 8, "knock": 9, "roles": 10, "exchanged": 11, "trick_cards": 12, "trick_leader": 13,
}
_OPTIONAL_PIECES = frozenset({"knock"})
_PHASE, _TO_ACT, _LIVE, _HAND, _DISC, _DRAWN, _TRUMP, _TAKEN, _KNOCK, _ROLES, _EXCH, _TRICK, _LEADER = range(1, 14)


def _decode_table(observer: Observer) -> list[tuple[int, int, int, int]]:
    """Per observation index: (piece code, then the index inside the piece's shape, padded with 0)."""
    table: list[tuple[int, int, int, int]] = [(0, 0, 0, 0)] * observer.size
    for p in observer.pieces:
        code = _PIECE_CODES.get(p.name, 0)
        off = observer.offsets[p.name]
        for local in range(p.size):
            idx = np.unravel_index(local, p.shape)
            padded = [int(x) for x in idx] + [0] * (3 - len(idx))
            table[off + local] = (code, *padded)
    return table
