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

from mauscheln_env.engine import Game, Role, State
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
    """Reads :class:`Knowledge` from ``(observation, info)`` for one game's layout.

    Every fact comes from the observation schema's own decoders
    (:meth:`mauscheln_env.observation.Observer.decode`), so this module knows
    piece names, not offsets or encodings.
    """

    PIECES = ("phase", "to_act", "live", "hand", "own_discards", "own_drawn", "trump_card", "trump_suit",
              "trump_taken_by",
              "roles", "exchanged", "trick_cards", "trick_leader")
    """The pieces every ruleset's observation has and :meth:`read` decodes (plus ``knock`` where present)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.observer = Observer(game)
        self._slices = {p.name: (self.observer.slice(p.name), p.shape) for p in self.observer.pieces}
        self._names = set(self._slices)
        missing = set(self.PIECES) - self._names
        if missing:
            raise ValueError(f"the observation of this ruleset lacks the pieces {sorted(missing)}")
        self._read = (*self.PIECES, "knock") if "knock" in self._names else self.PIECES
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
        """Decode the observation's pieces and the exact chips and pot from ``info``."""
        legal = None if action_mask is None else np.flatnonzero(action_mask).tolist()
        return self._knowledge(self.observer.decode(obs, seat, self._read), info, seat, legal)

    def read_state(self, state: State, info: dict[str, Any], seat: int, legal: list[int] | None = None) -> Knowledge:
        """:meth:`read` of ``seat``'s observation of ``state`` (and its sorted ``legal`` actions), from the
        pieces' values without the observation vector (:meth:`~mauscheln_env.observation.Observer.values`)."""
        return self._knowledge(self.observer.values(state, seat, self._read), info, seat, legal)

    def _knowledge(self, v: dict[str, Any], info: dict[str, Any], seat: int, legal: list[int] | None) -> Knowledge:
        g = self.game
        n = g.n
        phase = v["phase"]
        knock = v.get("knock")
        roles = self._roles
        trump_card = v["trump_card"]
        index = g.deck.index
        current = [(int(s), index[c]) for s, c in info.get("trick", [])]
        return Knowledge(
            seat=seat,
            n=n,
            phase="over" if phase is None else self._phases[phase],
            to_act=v["to_act"],
            dealer=int(info["dealer"]),
            live=v["live"],
            hand=v["hand"],
            discards=v["own_discards"],
            drawn=v["own_drawn"],
            trump_card=-1 if trump_card is None else trump_card,
            # The trump suit as the table shows it: a turned-up Pamphile's suit is the one the dealer named.
            trump_suit=v["trump_suit"] if v["trump_suit"] is not None else g.deck.suit[-1 if trump_card is None
                                                                                       else trump_card],
            trump_holder=v["trump_taken_by"],
            knocked=None if knock is None else knock == 0,
            roles=[Role.UNDECIDED if r is None else roles[r] for r in v["roles"]],
            exchanged=[None if x is None or x == 0 else x - 1 for x in v["exchanged"]],
            trick_cards=v["trick_cards"],
            trick_leaders=v["trick_leader"],
            current_trick=current,
            tricks_won=[int(x) for x in info.get("tricks_won", [0] * n)],
            pot=int(info["pot"]),
            chips=[int(x) for x in info["chips"]],
            legal=[] if legal is None else legal,
        )
