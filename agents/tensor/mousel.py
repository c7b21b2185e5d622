"""Tensor ``beginner`` for ``mousel`` (mirroring :class:`agents.scripted.mousel.MouselBeginner`).

The expert (the trick model) is the Python one row by row (:class:`agents.tensor.rows.RowAgent`).
"""

from __future__ import annotations

import torch

from agents.scripted.mousel import MouselBeginner
from agents.tensor.common import Features, VectorAgent


def forehand_seat(agent: VectorAgent, f: Features) -> torch.Tensor:
    """int64[B]: relative seat of the first live seat after the dealer in the rules' direction."""
    n, d = agent.n, agent.game.direction
    fore = f.dealer
    for k in range(n, 0, -1):  # the nearest live seat wins: walk from the farthest
        s = (f.dealer + d * k) % n
        fore = torch.where(f.live[f.rows, s], s, fore)
    return fore


class MouselBeginnerT(VectorAgent):
    """The first and fourth sentence of [004] "Strategi", as tensor code."""

    name = "beginner"
    python = MouselBeginner

    def _on_knock(self, f: Features) -> torch.Tensor:
        return self.ace_or(f, "knock", "no_knock")

    def _on_declare(self, f: Features) -> torch.Tensor:
        forehand = forehand_seat(self, f) == 0
        go = (f.n_trumps >= 2) | ((f.n_trumps == 1) & ~forehand)
        return torch.where(go, self.ids["in"], self.ids["out"])

    def _on_exchange(self, f: Features) -> torch.Tensor:
        return self.next_mark(f, f.hand & ~f.trump)

    def _on_play(self, f: Features) -> torch.Tensor:
        return self.play_high_or_low(f)
