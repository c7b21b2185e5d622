"""Tensor ``beginner`` for ``muschka`` (mirroring :class:`agents.scripted.muschka.MuschkaBeginner`: the
Mouche beginners' rules with the ace high).

The expert (the trick model, played for the score) is the Python one row by row
(:class:`agents.tensor.rows.RowAgent`).
"""

from __future__ import annotations

from agents.scripted.muschka import MuschkaBeginner
from agents.tensor.mouche import DecideBeginnerT


class MuschkaBeginnerT(DecideBeginnerT):
    """The Mouche beginners' rules with the ace high, as tensor code."""

    python = MuschkaBeginner
