"""Tensor ``beginner`` for ``mouche`` and the deciding rulesets (mirroring
:class:`agents.scripted.mouche.DecideBeginner` and :class:`~agents.scripted.mouche.MoucheBeginner`).

The expert (the trick model) is the Python one row by row (:class:`agents.tensor.rows.RowAgent`).
"""

from __future__ import annotations

import torch

from agents.scripted.mouche import DecideBeginner, MoucheBeginner
from agents.tensor.common import Features, VectorAgent
from mauscheln_env.cards import SUITS


class DecideBeginnerT(VectorAgent):
    """Stay with trumps, exchange around a trump or a top card, pass with nothing; play high or low."""

    name = "beginner"
    python = DecideBeginner

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        rules = self.brain.rules
        wild = torch.zeros(self.N, dtype=torch.bool, device=self.device)
        if rules.pamphile_wild and rules.jc is not None:
            wild[rules.jc] = True
        self.suited = ~wild  # the cards whose suit a flush counts (the wild Pamphile is any suit)
        self.hand_size = rules.hand_size

    def _flush(self, f: Features) -> torch.Tensor:
        """Five dealt cards of one suit (:func:`agents.scripted.mouche._flush`)."""
        suits = ((f.hand & self.suited[None, :]).to(torch.float32) @ self.suit_cards) > 0
        return (f.hand.sum(dim=1) == self.hand_size) & (suits.sum(dim=1) == 1)

    def _keep(self, f: Features) -> torch.Tensor:
        return f.hand & (f.trump | self.is_ace[None, :])

    def _on_decide(self, f: Features) -> torch.Tensor:
        keep = self._keep(f)
        throw = f.hand & ~keep
        stay = self.ids["stay"]
        mark = self.next_mark(f, throw)
        out = torch.where(f.legal_action("pass"), self.ids["pass"], mark)
        out = torch.where(keep.any(dim=1), torch.where(throw.any(dim=1), mark, stay), out)
        return torch.where(self._flush(f) | (f.n_trumps >= 2), stay, out)

    def _on_exchange(self, f: Features) -> torch.Tensor:
        return self.next_mark(f, f.hand & ~self._keep(f))

    def _on_play(self, f: Features) -> torch.Tensor:
        return self.play_high_or_low(f)


class MoucheBeginnerT(DecideBeginnerT):
    """[003] "Tipps für Einsteiger" as tensor code: announce the Pamphile, name the suit held most."""

    python = MoucheBeginner

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.name_ids = torch.tensor([self.ids.get("trump:" + s, -1) for s in SUITS], device=self.device)

    def _on_announce(self, f: Features) -> torch.Tensor:
        return f.const(self.ids["announce"])

    def _on_name_trump(self, f: Features) -> torch.Tensor:
        counts = f.hand.to(torch.float32) @ self.suit_cards  # [B, 4]
        tie = torch.arange(len(SUITS) - 1, -1, -1, device=self.device, dtype=torch.float32)
        return self.name_ids[(counts * len(SUITS) + tie).argmax(dim=1)]
