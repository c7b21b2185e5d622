"""Numeric infos: the contract's infos as fixed-shape numbers, for pipelines that batch infos.

TorchRL's ``PettingZooWrapper`` turns every info value into a tensor, and
Tianshou's collectors stack infos into their replay buffers; the contract's
string and variable-length infos (``"phase": "play"``, ``"hand": ["QH", ...]``,
``"legal"``) stop both (``TypeError: new(): invalid data type 'str'``, a shape
mismatch in the buffer). :class:`NumericInfoWrapper` keeps the environment as
it is and replaces only ``infos`` by numbers; the string infos stay the
default everywhere else::

    import mauscheln_env
    from mauscheln_env.integrations.numeric import NumericInfoWrapper

    env = NumericInfoWrapper(mauscheln_env.env(num_players=4))

The numeric infos of an agent (every value a number or a fixed-length array):

| key | shape | value |
| --- | --- | --- |
| ``phase`` | () | ``mauscheln_env.Phase`` value of the phase |
| ``dealer`` | () | the dealer's seat |
| ``pot`` | () | chips in the pot |
| ``chips`` | (n,) | chips by seat |
| ``scores`` | (n,) | muschka only: scores by seat |
| ``trump`` | () | card id of the trump card (the card's action id) |
| ``hand`` | (N,) | 1 for each own card the seat has seen (N cards in the deck) |
| ``roles`` | (n,) | ``mauscheln_env.Role`` value by seat; ``len(Role)`` for an eliminated seat |
| ``trick`` | (n,) | card id each seat played to the current trick; N where it has not |
| ``tricks_won`` | (n,) | tricks won in this deal by seat |

The legal actions are in the observation's ``action_mask``; ``legal`` is left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper

from mauscheln_env.engine import Phase, Role
from mauscheln_env.errors import MauschelnError

ELIMINATED = len(Role)
"""Role code of an eliminated seat in :class:`NumericInfoWrapper`'s ``roles``."""


class NumericInfoWrapper(BaseWrapper):
    """``infos`` as fixed-shape numbers (see the module docstring); everything else unchanged."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        raw = env.unwrapped
        self._num_cards = raw.config.num_cards
        self._codes = {raw.action_to_str(c): c for c in range(self._num_cards)}
        self._cache: tuple[int, dict[str, dict[str, Any]]] | None = None
        self._version = 0

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._version += 1
        super().reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        self._version += 1
        super().step(action)

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        if self._cache is None or self._cache[0] != self._version:
            self._cache = (self._version, {a: self.numeric(info) for a, info in self.env.infos.items()})
        return self._cache[1]

    def numeric(self, info: dict[str, Any]) -> dict[str, Any]:
        """The numeric form of one agent's contract infos."""
        codes, n_cards = self._codes, self._num_cards
        hand = np.zeros(n_cards, dtype=np.int64)
        for card in info["hand"]:
            hand[codes[card]] = 1
        chips = info["chips"]
        trick = np.full(len(chips), n_cards, dtype=np.int64)
        for seat, card in info["trick"]:
            trick[seat] = codes[card]
        out = {
            "phase": int(_phase(info["phase"])),
            "dealer": int(info["dealer"]),
            "pot": int(info["pot"]),
            "chips": np.asarray(chips, dtype=np.int64),
            "trump": codes[info["trump"]],
            "hand": hand,
            "roles": np.asarray([_role(r) for r in info["roles"]], dtype=np.int64),
            "trick": trick,
            "tricks_won": np.asarray(info["tricks_won"], dtype=np.int64),
        }
        if "scores" in info:
            out["scores"] = np.asarray(info["scores"], dtype=np.int64)
        return out

    def __str__(self) -> str:
        return str(self.env)


def _phase(name: str) -> int:
    try:
        return Phase[name.upper()].value
    except KeyError:
        raise MauschelnError(f"info phase {name!r} is not a Phase; allowed: {', '.join(p.name.lower() for p in Phase)}") from None


def _role(name: str) -> int:
    if name == "eliminated":
        return ELIMINATED
    try:
        return Role[name.upper()].value
    except KeyError:
        raise MauschelnError(f"info role {name!r} is not a Role; allowed: eliminated, "
                             f"{', '.join(r.name.lower() for r in Role)}") from None
