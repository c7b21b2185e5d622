"""What the learner does at each decision phase, counted during a rollout and logged as rates
(TensorBoard ``charts/phase/...``)."""

from __future__ import annotations

import torch

from mauscheln_env.engine import Game


class PhaseStats:
    """How often the learner takes each action of each decision phase, by seat (relative to the dealer) and
    pot size: declare ``mauscheln`` or ``pass``, go with, knock, Mousel's ``in`` / ``out``, Mouche's and
    Muschka's ``stay`` / ``pass``, trump naming, the exchange (``card``: a card marked, ``done``). Every phase
    but the trick play is counted, every action by its string (card actions together as ``card``), so each
    ruleset gets its own rates without a rule of its own here. TensorBoard tags
    ``charts/<phase>/<action>_rate/{all, seat_after_dealer_<p>, pot_lt_8, pot_8_23, pot_ge_24}``.
    """

    BUCKETS = ("pot_lt_8", "pot_8_23", "pot_ge_24")

    def __init__(self, game: Game) -> None:
        from mauscheln_env.observation import Observer

        self.game = game
        observer = Observer(game)
        self.phase_slice = observer.slice("phase")
        self.dealer_slice = observer.slice("dealer")
        self.pot_index = observer.offsets.get("pot")
        self.scale = float(game.config.options.get("bankroll", 1))
        self.phases = [(k, name) for k, name in enumerate(game.spec.phases) if name != "play"]
        named = {i: name for name, i in game.action_ids.items()}  # the others are cards
        self.labels = [named.get(i, "card") for i in range(game.num_actions)]
        self.counts: dict[str, torch.Tensor] = {}  # per phase: int64[A, n, 3] learner decisions

    def record(self, obs: torch.Tensor, action: torch.Tensor, seat: torch.Tensor, learner: torch.Tensor) -> None:
        phase = obs[:, self.phase_slice].argmax(1)
        has_phase = obs[:, self.phase_slice].sum(1) > 0
        dealer_rel = obs[:, self.dealer_slice].argmax(1)  # the dealer, seen from the acting seat
        position = (-dealer_rel) % self.game.n  # acting seat's place after the dealer: 0 = dealer
        pot = obs[:, self.pot_index] * self.scale if self.pot_index is not None else torch.zeros_like(phase, dtype=torch.float)
        bucket = torch.where(pot < 8, 0, torch.where(pot < 24, 1, 2))
        n, a = self.game.n, self.game.num_actions
        cell = (action * n + position) * 3 + bucket
        for k, name in self.phases:  # one count per (action, position, pot bucket), summed on the tensors
            sel = learner & has_phase & (phase == k)  # counted by weight, not selected: no read-back on CUDA
            counts = torch.zeros(a * n * 3, dtype=torch.long, device=cell.device).index_add_(
                0, cell, sel.long()).view(a, n, 3)
            if name in self.counts:
                self.counts[name] += counts
            else:
                self.counts[name] = counts

    def summary(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for phase, counts in self.counts.items():
            grouped: dict[str, torch.Tensor] = {}
            for action, label in enumerate(self.labels):
                grouped[label] = grouped.get(label, 0) + counts[action].double()
            total = counts.sum(0).double()  # [n, 3]
            if total.sum() == 0:
                continue
            for label, hits in grouped.items():
                if hits.sum() == 0:
                    continue
                tag = f"{phase}/{label}_rate"
                rows = {f"{tag}/all": (hits.sum(), total.sum())}
                rows.update({f"{tag}/seat_after_dealer_{p}": (hits[p].sum(), total[p].sum())
                             for p in range(self.game.n)})
                rows.update({f"{tag}/{b}": (hits[:, k].sum(), total[:, k].sum()) for k, b in enumerate(self.BUCKETS)})
                out.update({key: float(h / t) for key, (h, t) in rows.items() if t > 0})
        return out
