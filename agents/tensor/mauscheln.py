"""Tensor ``beginner`` and ``expert`` for ``mauscheln`` (mirroring :mod:`agents.scripted.mauscheln`).

The expert is :class:`agents.tensor.batched_expert.BatchedExpert` (tensor code, every
option but Vierling, Belli and Weli); with those options on, the expert is the
Python one row by row (:class:`agents.tensor.rows.RowAgent`).
"""

from __future__ import annotations

from typing import Any

import torch

from agents.scripted.mauscheln import MauschelnBeginner
from agents.tensor.batched_expert import BatchedExpert, batched_expert_supports
from agents.tensor.common import Features, TensorAgent, VectorAgent, check_layout
from agents.tensor.rows import RowExpert
from mauscheln_env.engine import Game


class MauschelnBeginnerT(VectorAgent):
    """[001] "Tipps für Einsteiger" as tensor code (see :class:`MauschelnBeginner`)."""

    name = "beginner"
    python = MauschelnBeginner

    def _on_knock(self, f: Features) -> torch.Tensor:
        return self.ace_or(f, "knock", "no_knock")

    def _on_declare(self, f: Features) -> torch.Tensor:
        ranks = self.rank_pos[None, :]
        trumps = f.hand_trumps
        high = (trumps & (ranks <= 3)).sum(dim=1)  # A K Q J
        strong = (trumps & (ranks <= 1)).any(dim=1) | (high >= 2)
        return torch.where(strong, self.ids["mauscheln"], self.ids["pass"])

    def _on_go_with(self, f: Features) -> torch.Tensor:
        go = (f.n_trumps > 0) | (f.hand & self.is_ace[None, :]).any(dim=1)
        return torch.where(go, self.ids["go"], self.ids["pass"])

    def _on_exchange(self, f: Features) -> torch.Tensor:
        return self.next_mark(f, f.hand & ~f.trump & ~self.is_ace[None, :])

    def _on_play(self, f: Features) -> torch.Tensor:
        return self.play_high_or_low(f)


class MauschelnExpertT(TensorAgent):
    """:class:`BatchedExpert` under the rule of :class:`agents.tensor.common.TensorAgent` (a row in no phase
    gets the fallback draw, as the Python agent plays a random action there)."""

    name = "expert"

    def __init__(self, game: Game, device: torch.device | str = "cpu", seed: int = 0, risk: float = 0.0) -> None:
        self.inner = BatchedExpert(game, device, risk=risk)
        super().__init__(game, device, seed)
        observer = check_layout(game, "tensor expert")
        self._phase = observer.slice("phase")

    @property
    def obs_size(self) -> int:
        return self.inner.obs_size

    def propose(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        action = self.inner.act(obs, mask)
        return torch.where(obs[:, self._phase].sum(dim=1) > 0, action, -1)


def mauscheln_expert(game: Game, device: torch.device | str = "cpu", seed: int = 0, **params: Any) -> TensorAgent:
    """The tensor expert where :class:`BatchedExpert` plays the options, else the Python one row by row."""
    if batched_expert_supports(game):
        return MauschelnExpertT(game, device, seed, **params)
    return RowExpert(game, device, seed, **params)
