"""Tensor ``beginner`` for ``mauscheln_classic`` (mirroring :class:`agents.scripted.classic.ClassicBeginner`).

The expert (the trick model) is the Python one row by row (:class:`agents.tensor.rows.RowAgent`).
"""

from __future__ import annotations

import torch

from agents.scripted.classic import ClassicBeginner
from agents.tensor.common import Features, VectorAgent


class ClassicBeginnerT(VectorAgent):
    """The first paragraph of [000] "Spielregeln", literally, as tensor code."""

    name = "beginner"
    python = ClassicBeginner

    def _on_offer(self, f: Features) -> torch.Tensor:
        return f.const(self.ids["deal"])

    def _on_knock(self, f: Features) -> torch.Tensor:
        return self.ace_or(f, "knock", "no_knock")

    def _trump_rank(self, f: Features, rank: int) -> torch.Tensor:
        return (f.hand_trumps & (self.rank_pos == rank)[None, :]).any(dim=1)

    def _on_declare(self, f: Features) -> torch.Tensor:
        strong = (self._trump_rank(f, 0) & (f.n_trumps >= 2)) | (self._trump_rank(f, 1) & self._trump_rank(f, 2))
        return torch.where(strong, self.ids["mauscheln"], self.ids["pass"])

    def _on_go_with(self, f: Features) -> torch.Tensor:
        go = (f.n_trumps >= 2) | self._trump_rank(f, 0) | self._trump_rank(f, 1)
        return torch.where(go, self.ids["go"], self.ids["pass"])

    def _on_exchange(self, f: Features) -> torch.Tensor:
        return self.next_mark(f, f.hand & ~f.trump & ~self.is_ace[None, :])

    def _on_play(self, f: Features) -> torch.Tensor:
        return self.play_high_or_low(f)
