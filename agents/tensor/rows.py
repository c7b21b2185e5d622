"""A Python strategy behind the tensor interface: ``act(obs, mask)`` row by row, from the observation alone.

:class:`RowAgent` runs the very Python strategy of :mod:`agents.scripted` on
each row of a batch, with the ``info`` the strategy reads rebuilt from the
observation (nothing else is at hand on the batched backend), in the frame of
relative seats (the acting seat is seat 0):

| info field | from the observation |
| --- | --- |
| ``phase`` | the ``phase`` one-hot (labels: the spec's phases) |
| ``dealer`` | the ``dealer`` one-hot |
| ``pot``, ``chips``, ``scores`` | ``round(value / scale)`` of the pieces of those names (0 where the scoring has none) |
| ``tricks_won`` | ``round(tricks_won * num_tricks)`` |
| ``trick`` | the last trick with a leader while fewer of its cards lie than seats play the tricks, in play order from its leader |
| ``hand`` | the ``hand`` piece |

Its decisions are those of the Python agent given the same observation
(``tests/test_tensor_agents.py``): the trick-model strategies make no
decision that depends on the seat's absolute number, and the one memory they
keep between decisions (the rest of an exchange planned at its first card) is
cleared before each row: the plan is a shortcut, and planning again from the
observation gives the same card. It is as fast as the Python agent (a loop
over the rows, in Python). The trick-model experts
(:mod:`agents.tensor.trick`) use it for the phases that are not tensor code
yet (bidding, exchange), and the registry for the tables the tensor code does
not play (Mauscheln with Vierling, Belli or Weli).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch

from agents.scripted import strategy_class
from agents.scripted.common import Strategy
from agents.tensor.common import TensorAgent, check_layout
from mauscheln_env.engine import PLAYING_ROLES, Game, Role
from mauscheln_env.observation import Numbers, SeatNumbers


class InfoFromObservation:
    """Rebuilds the ``info`` dict a Python strategy reads from one observation (relative seats)."""

    def __init__(self, game: Game, who: str) -> None:
        self.observer = observer = check_layout(game, who)
        self.game = game
        self.phases = tuple(game.spec.phases)
        self.codes = tuple(game.deck.codes)
        self.playing = np.array([Role[name.upper()] in PLAYING_ROLES for name in game.spec.roles], dtype=bool)
        self.order = np.array([[(lead + game.direction * k) % game.n for k in range(game.n)]
                               for lead in range(game.n)])
        self.numbers = {}
        for name, codec in (("pot", Numbers), ("chips", SeatNumbers), ("scores", SeatNumbers)):
            piece = observer.by_name.get(name)
            if piece is not None and isinstance(piece.codec, codec):
                self.numbers[name] = observer.slice(name), piece.codec
        self.slices = {name: (observer.slice(name), observer.by_name[name].shape)
                       for name in ("phase", "dealer", "hand", "roles", "trick_cards", "trick_leader", "tricks_won")}

    def _piece(self, obs: np.ndarray, name: str) -> np.ndarray:
        sl, shape = self.slices[name]
        return obs[:, sl].reshape(obs.shape[0], *shape)

    def _scaled(self, obs: np.ndarray, name: str, n: int) -> list[list[int]]:
        entry = self.numbers.get(name)
        if entry is None:
            return [[0] * n] * obs.shape[0]
        sl, codec = entry
        scale = codec.scale if isinstance(codec, SeatNumbers) else codec.scales[0]
        if not scale:
            return [[0] * n] * obs.shape[0]
        return np.rint(obs[:, sl].astype(np.float64) / scale).astype(np.int64).tolist()  # round half to even

    def infos(self, obs: np.ndarray) -> list[dict[str, Any]]:
        """The info of each row of ``obs`` (float32[B, D])."""
        g = self.game
        B, n, T = obs.shape[0], g.n, g.num_tricks
        rows = np.arange(B)
        phase = self._piece(obs, "phase")
        phase_idx = np.where(phase.any(axis=1), phase.argmax(axis=1), -1).tolist()
        dealer = self._piece(obs, "dealer").argmax(axis=1).tolist()
        players = (self._piece(obs, "roles").astype(bool) & self.playing[None, None, :]).any(axis=2).sum(axis=1)
        leaders = self._piece(obs, "trick_leader").astype(bool)  # [B, T, n]; tricks fill in order
        started = leaders.any(axis=2).sum(axis=1)
        t_cur = np.maximum(started - 1, 0)
        cur = self._piece(obs, "trick_cards")[rows, t_cur].astype(bool)  # [B, n, N]
        has = cur.any(axis=2)
        lead = leaders[rows, t_cur].argmax(axis=1)
        order = self.order[lead]  # [B, n]: seats in play order from the leader
        in_progress = ((started > 0) & (has.sum(axis=1) < players)).tolist()
        cards_in = np.take_along_axis(cur.argmax(axis=2), order, axis=1).tolist()
        has_in = np.take_along_axis(has, order, axis=1).tolist()
        order = order.tolist()
        won = np.rint(self._piece(obs, "tricks_won").astype(np.float64) * T).astype(np.int64).tolist()
        pot, chips, scores = self._scaled(obs, "pot", 1), self._scaled(obs, "chips", n), self._scaled(obs, "scores", n)
        hand_rows, hand_cards = np.nonzero(self._piece(obs, "hand"))
        hands: list[list[str]] = [[] for _ in range(B)]
        for b, c in zip(hand_rows.tolist(), hand_cards.tolist()):
            hands[b].append(self.codes[c])
        out = []
        for b in range(B):
            trick = []
            if in_progress[b]:
                trick = [(s, self.codes[c]) for s, c, h in zip(order[b], cards_in[b], has_in[b]) if h]
            out.append({
                "phase": self.phases[phase_idx[b]] if phase_idx[b] >= 0 else None,
                "dealer": dealer[b], "pot": pot[b][0], "chips": chips[b], "scores": scores[b],
                "tricks_won": won[b], "trick": trick, "hand": hands[b],
            })
        return out

    def info(self, obs: np.ndarray) -> dict[str, Any]:
        """The info of one observation."""
        return self.infos(obs[None, :])[0]


class RowAgent(TensorAgent):
    """The Python strategy of one level, row by row, behind ``act(obs, mask)`` (see the module docstring)."""

    level: ClassVar[str] = ""
    vectorized = False
    params: ClassVar[tuple[str, ...]] = ()
    """The keyword parameters the level takes (as its Python agent)."""

    def __init__(self, game: Game, device: torch.device | str = "cpu", seed: int = 0, **params: Any) -> None:
        who = f"tensor {self.level}"
        unknown = set(params) - set(self.params)
        if unknown:
            raise ValueError(f"tensor {self.level}: unknown parameters {sorted(unknown)}; allowed: "
                             f"{sorted(self.params) or 'none'}")
        risk = params.get("risk", 0.0)
        if not isinstance(risk, (int, float)) or isinstance(risk, bool) or not -2.0 <= risk <= 2.0:
            raise ValueError(f"risk={risk!r} is not allowed; allowed: a number from -2 (cautious) to 2 (bold)")
        self.reader = InfoFromObservation(game, who)
        super().__init__(game, device, seed)
        cls = strategy_class(game.config.ruleset, self.level)
        self.brain: Strategy = cls(game, **params) if params and cls is not Strategy else cls(game)
        self.brain.bind(0)
        self._obs_size = self.reader.observer.size

    @property
    def obs_size(self) -> int:
        return self._obs_size

    def propose(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        obs_np = obs.detach().cpu().numpy()
        mask_np = mask.detach().cpu().numpy()
        out = np.full(obs_np.shape[0], -1, dtype=np.int64)
        brain = self.brain
        choice = np.flatnonzero(mask_np.sum(axis=1) >= 2)
        infos = self.reader.infos(obs_np[choice])
        for b, info in zip(choice.tolist(), infos):
            legal = np.flatnonzero(mask_np[b]).tolist()
            brain.bind(0)  # stateless: forgets any exchange plan, which is then made again from this observation
            action = brain.decide(obs_np[b], mask_np[b], info, legal)
            if action is not None:
                out[b] = int(action)
        return torch.from_numpy(out).to(self.device)


class RowBeginner(RowAgent):
    """The Python ``beginner`` of the ruleset, row by row."""

    name = "beginner"
    level = "beginner"


class RowExpert(RowAgent):
    """The Python ``expert`` of the ruleset, row by row (keyword ``risk`` as :class:`ExpertAgent`)."""

    name = "expert"
    level = "expert"
    params = ("risk",)
