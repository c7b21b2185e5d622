"""What every tensor agent shares: the layout check, the batch's decoded features, the fallback draw.

A *tensor strategy* is the scripted strategy of one ruleset and one level
(``beginner``, ``expert``) as a function of ``(obs, mask)`` for a whole batch
of decisions: ``act(obs float32[B, D], mask bool[B, A]) -> int64[B]``. It
mirrors one Python strategy of :mod:`agents.scripted` (its class attribute
``python``) decision for decision and takes every static fact from an instance
of it (action ids, rank order, card power, the required action vocabulary), so
the two cannot drift apart on a table.

It reads the observation through the schema only
(:class:`mauscheln_env.observation.Observer`: ``offsets``, ``by_name`` and the
pieces' codecs and labels), never an engine state, so it can know nothing a
seat cannot see. :func:`check_layout` refuses, at construction, a game whose
observation it cannot read (:class:`~mauscheln_env.errors.ConfigError`).

## The rule that turns a strategy's answer into an action (as :class:`agents.scripted.baselines._ScriptedAgent`)

* one legal action: that action;
* the strategy's answer where it has one and it is legal;
* otherwise (no rule for the phase, no phase, an answer that is not legal) a
  uniformly random legal action, drawn as **legal[floor(u * count)]** from one
  uniform ``u`` in [0, 1) per row: the ``count`` legal actions in increasing
  id order, ``u`` from the agent's seeded ``torch.Generator`` unless the caller
  passes ``u`` (``act(obs, mask, u=...)``). The Python agent draws
  ``rng.integers(count)`` at such a row; given the same ``u`` through
  :class:`SharedUniform` as its ``rng`` it makes the same choice, and the tests
  check exactly that. Everywhere else both are deterministic and equal.

Rows with no legal action get action 0.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import torch

from agents.scripted.common import Strategy
from agents.tensor.batched_expert import order_keys, pick, pick_by_uniform, seeded_generator
from mauscheln_env.cards import SUITS
from mauscheln_env.engine import PLAYING_ROLES, Game, Role
from mauscheln_env.errors import ConfigError
from mauscheln_env.observation import (
    Cards,
    Observer,
    OneHot,
    SeatFlags,
    SeatLabels,
    SeatNumbers,
    SeatOneHot,
    TrickCards,
    TrickLeaders,
)

CORE_PIECES: dict[str, type] = {
    "phase": OneHot, "dealer": SeatOneHot, "live": SeatFlags, "hand": Cards, "own_discards": Cards,
    "trump_card": OneHot, "trump_taken_by": SeatOneHot, "roles": SeatLabels, "trick_cards": TrickCards,
    "trick_leader": TrickLeaders, "tricks_won": SeatNumbers,
}
"""The pieces (and their codecs) every tensor agent reads."""


def check_layout(game: Any, who: str, extra: dict[str, type] | None = None) -> Observer:
    """The game's observer, after checking that its layout has every piece ``who`` reads, with the codec and
    shape it expects; anything else raises :class:`ConfigError` naming the piece."""
    if not isinstance(game, Game):
        raise ConfigError(f"{who} needs a mauscheln_env Game, got {type(game).__name__}")
    observer = Observer(game)
    n, N, T = game.n, game.num_cards, game.num_tricks
    shapes = {"phase": (len(game.spec.phases),), "dealer": (n,), "live": (n,), "hand": (N,), "own_discards": (N,),
              "trump_card": (N,), "trump_taken_by": (n,), "roles": (n, len(game.spec.roles)),
              "trick_cards": (T, n, N), "trick_leader": (T, n), "tricks_won": (n,)}
    for name, codec in {**CORE_PIECES, **(extra or {})}.items():
        piece = observer.by_name.get(name)
        if piece is None:
            raise ConfigError(f"{who} cannot read ruleset {game.config.ruleset!r}: its observation lacks the piece "
                              f"{name!r}; it reads {sorted({**CORE_PIECES, **(extra or {})})}")
        if not isinstance(piece.codec, codec) or piece.shape != shapes.get(name, piece.shape):
            raise ConfigError(f"{who} cannot read ruleset {game.config.ruleset!r}: piece {name!r} is "
                              f"{type(piece.codec).__name__}{piece.shape}; allowed: {codec.__name__}"
                              f"{shapes.get(name, piece.shape)}")
    if tuple(observer.by_name["phase"].codec.labels) != tuple(game.spec.phases):
        raise ConfigError(f"{who}: the phase one-hot of {game.config.ruleset!r} does not follow the spec's phases")
    if tuple(observer.by_name["roles"].codec.labels) != tuple(game.spec.roles):
        raise ConfigError(f"{who}: the role labels of {game.config.ruleset!r} do not follow the spec's roles")
    return observer


class SharedUniform:
    """A stand-in for a Python agent's ``rng`` that draws ``integers(k)`` as ``floor(u * k)`` from given
    uniforms, one per call: with the tensor agent's ``u`` it makes the tensor agent's fallback choice."""

    def __init__(self, uniforms: Any = ()) -> None:
        self.uniforms = list(uniforms)

    def integers(self, k: int, *args: Any, **kwargs: Any) -> int:
        u = self.uniforms.pop(0)
        return min(k - 1, int(np.floor(np.float32(u) * np.float32(k))))


class TensorAgent:
    """The registered tensor agent of one level: a batch of decisions from ``(obs, mask)``.

    Subclasses say what the strategy answers (:meth:`propose`: an action per row, -1 for "no rule");
    this class turns that into actions by the rule of the module docstring.
    """

    name: ClassVar[str] = ""
    vectorized: ClassVar[bool] = True
    """Whether the strategy runs as tensor code over the batch (False: a Python loop over the rows)."""

    def __init__(self, game: Game, device: torch.device | str = "cpu", seed: int = 0) -> None:
        self.game = game
        self.device, self.generator = seeded_generator(seed, device)
        self.num_actions = game.num_actions

    def propose(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """int64[B]: the strategy's answer per row, -1 where it has none."""
        raise NotImplementedError

    @torch.no_grad()
    def act(self, obs: torch.Tensor, mask: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        """obs float32[B, D] (each row the acting seat's observation), mask bool[B, A] -> int64[B].

        ``u`` (float32[B] in [0, 1)): the uniforms of the fallback draw; drawn from the agent's generator
        when omitted (one per row, every call)."""
        if obs.dim() != 2 or obs.shape[1] != self.obs_size:
            raise ValueError(f"obs has shape {tuple(obs.shape)}; allowed: [B, {self.obs_size}]")
        if mask.dim() != 2 or mask.shape != (obs.shape[0], self.num_actions):
            raise ValueError(f"mask has shape {tuple(mask.shape)}; allowed: [{obs.shape[0]}, {self.num_actions}]")
        obs = obs.to(self.device, torch.float32)
        mask = mask.to(self.device, torch.bool)
        B = obs.shape[0]
        if u is None:
            u = torch.rand(B, generator=self.generator, device=self.device)
        u = u.to(self.device, torch.float32)
        count = mask.sum(dim=1)
        first = mask.to(torch.uint8).argmax(dim=1)
        if B == 0:
            return first
        answer = self.propose(obs, mask)
        rows = torch.arange(B, device=self.device)
        ok = (answer >= 0) & mask[rows, answer.clamp(0, self.num_actions - 1)]
        fallback = pick_by_uniform(mask, u)
        action = torch.where(ok, answer, fallback)
        return torch.where(count == 1, first, torch.where(count == 0, torch.zeros_like(first), action))

    @property
    def obs_size(self) -> int:
        raise NotImplementedError


class Features:
    """What one batch of observations shows, as tensors, in relative seats (computed on first use)."""

    def __init__(self, agent: VectorAgent, obs: torch.Tensor, mask: torch.Tensor) -> None:
        self.a = agent
        self.obs = obs
        self.mask = mask
        self.B = obs.shape[0]
        self.rows = torch.arange(self.B, device=obs.device)

    def cut(self, name: str) -> torch.Tensor:
        off, size = self.a.piece[name]
        return self.obs[:, off:off + size]

    @cached_property
    def phase(self) -> torch.Tensor:
        """int64[B]: the phase's index in the spec's phases, -1 when none."""
        p = self.cut("phase")
        return torch.where(p.sum(dim=1) > 0, p.argmax(dim=1), -1)

    @cached_property
    def hand(self) -> torch.Tensor:
        return self.cut("hand").bool()

    @cached_property
    def legal(self) -> torch.Tensor:
        """bool[B, N]: the legal cards."""
        return self.mask[:, :self.a.N]

    @cached_property
    def trump_card(self) -> torch.Tensor:
        """int64[B]: the turned card; N - 1 where none is turned (the Python agents read card -1)."""
        t = self.cut("trump_card")
        return torch.where(t.sum(dim=1) > 0, t.argmax(dim=1), self.a.N - 1)

    @cached_property
    def suit(self) -> torch.Tensor:
        """int64[B]: the trump suit as the plain strategies take it (the turned card's suit)."""
        return self.a.card_suit[self.trump_card]

    @cached_property
    def trump(self) -> torch.Tensor:
        return self.a.trump.index_select(0, self.suit)

    @cached_property
    def weak(self) -> torch.Tensor:
        return self.a.weak_key.index_select(0, self.suit)

    @cached_property
    def strong(self) -> torch.Tensor:
        return self.a.strong_key.index_select(0, self.suit)

    def weakest(self, cards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per row, the weakest card of ``cards`` (min by (power, card)) and whether there is one."""
        return pick(cards, self.weak)

    def strongest(self, cards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per row, the strongest card of ``cards`` (max by (power, -card)) and whether there is one."""
        return pick(cards, self.strong)

    @cached_property
    def hand_trumps(self) -> torch.Tensor:
        return self.hand & self.trump

    @cached_property
    def n_trumps(self) -> torch.Tensor:
        return self.hand_trumps.sum(dim=1)

    @cached_property
    def roles(self) -> torch.Tensor:
        """bool[B, n, R]: the role one-hot per relative seat."""
        return self.cut("roles").view(self.B, self.a.n, -1).bool()

    def role(self, role: Role) -> torch.Tensor:
        """bool[B, n]: the seats in ``role``."""
        i = self.a.role_pos.get(role)
        if i is None:
            return torch.zeros(self.B, self.a.n, dtype=torch.bool, device=self.obs.device)
        return self.roles[:, :, i]

    @cached_property
    def live(self) -> torch.Tensor:
        return self.cut("live").bool()

    @cached_property
    def dealer(self) -> torch.Tensor:
        """int64[B]: the dealer's relative seat."""
        return self.cut("dealer").argmax(dim=1)

    def action(self, name: str) -> int:
        return self.a.ids[name]

    def legal_action(self, name: str) -> torch.Tensor:
        """bool[B]: whether the named action is legal (False where the game has no such action)."""
        i = self.a.ids.get(name)
        if i is None:
            return torch.zeros(self.B, dtype=torch.bool, device=self.obs.device)
        return self.mask[:, i]

    def const(self, action: int) -> torch.Tensor:
        return torch.full((self.B,), action, dtype=torch.int64, device=self.obs.device)

    # ------------------------------------------------------------------ the trick in progress
    @cached_property
    def current(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(whether a trick is in progress, its winning card, the trick's leader) per row.

        The trick in progress is the last one with a leader while fewer of its cards lie than seats play
        the tricks; its cards are played from its leader in the rules' direction (the info's ``trick``)."""
        a, B, n, T = self.a, self.B, self.a.n, self.a.T
        leaders = self.cut("trick_leader").view(B, T, n)
        started = leaders.sum(dim=(1, 2)).to(torch.int64)
        t_cur = (started - 1).clamp_min(0)
        cur = self.cut("trick_cards").view(B, T, n, a.N)[self.rows, t_cur]  # [B, n, N]
        has = cur.sum(dim=2) > 0
        card = (cur @ a.card_ids).to(torch.int64)
        players = (self.roles & a.playing[None, None, :]).any(dim=2).sum(dim=1)
        in_progress = (started > 0) & (has.sum(dim=1) < players)
        leader = (leaders[self.rows, t_cur] @ a.seat_ids).to(torch.int64)
        order = a.order[leader]
        card_in, has_in = card.gather(1, order), has.gather(1, order)
        win = card_in[:, 0]
        for k in range(1, n):
            c = card_in[:, k]
            win = torch.where(has_in[:, k] & a.beats_flat[(self.suit * a.N + win) * a.N + c], c, win)
        return in_progress, win, leader


Handler = Callable[[Features], torch.Tensor]


class VectorAgent(TensorAgent):
    """A tensor strategy whose rules are tensor code: one method ``_on_<phase>(f) -> int64[B]`` per phase it
    has rules for (the phases of its Python strategy), evaluated for every row; the row's phase picks.

    ``python``: the Python strategy class it mirrors (its static facts are taken from an instance)."""

    python: ClassVar[type[Strategy]] = Strategy
    partial: ClassVar[bool] = False
    """Whether phases without a tensor rule are allowed (a subclass answers them otherwise: ``row_phases``)."""

    def __init__(self, game: Game, device: torch.device | str = "cpu", seed: int = 0, **params: Any) -> None:
        observer = check_layout(game, f"tensor {self.name or type(self).__name__}")
        super().__init__(game, device, seed)
        brain = self.python(game, **params)
        self.brain = brain
        dev = self.device

        def tensor(x: Any, dtype: torch.dtype = torch.int64) -> torch.Tensor:
            return torch.as_tensor(np.asarray(x), dtype=dtype, device=dev).contiguous()

        n, N, T = game.n, game.num_cards, game.num_tricks
        self.n, self.N, self.T = n, N, T
        self._obs_size = observer.size
        self.piece = {p.name: (observer.offsets[p.name], p.size) for p in observer.pieces}
        self.ids = dict(game.action_ids)
        spec = game.spec
        self.role_pos = {Role[name.upper()]: i for i, name in enumerate(spec.roles)}
        self.playing = tensor([Role[name.upper()] in PLAYING_ROLES for name in spec.roles], torch.bool)
        self.card_suit = tensor(game.deck.suit)
        self.rank_pos = tensor(brain._rank_pos)
        self.is_ace = self.rank_pos == 0
        self.suit_cards = tensor([[game.deck.suit_mask[s] >> c & 1 for s in range(len(SUITS))] for c in range(N)],
                                 torch.float32)  # [N, 4]
        beats = np.array([[[t.beats[c] >> j & 1 for j in range(N)] for c in range(N)] for t in game.tables], bool)
        self.beats = tensor(beats.reshape(-1, N), torch.bool)  # row s * N + c: the cards that beat c
        self.beats_flat = self.beats.reshape(-1)
        self.trump = tensor([[t.trump_mask >> c & 1 for c in range(N)] for t in game.tables], torch.bool)
        weak, strong = order_keys(np.array(brain._power))
        self.weak_key, self.strong_key = tensor(weak, torch.int32), tensor(strong, torch.int32)
        self.card_ids = tensor(np.arange(N), torch.float32)
        self.seat_ids = tensor(np.arange(n), torch.float32)
        self.order = tensor([[(lead + game.direction * k) % n for k in range(n)] for lead in range(n)])
        self.handlers: list[tuple[int, Handler]] = []
        self.row_phases: list[int] = []
        """The phases the Python strategy has a rule for and this class has none (``partial`` only)."""
        if brain._supported:
            for i, phase in enumerate(spec.phases):
                if getattr(brain, f"_on_{phase}", None) is not None:
                    handler = getattr(self, f"_on_{phase}", None)
                    if handler is None and self.partial:
                        self.row_phases.append(i)
                    elif handler is None:
                        raise ConfigError(f"tensor {self.name}: {type(self).__name__} lacks the rule for phase "
                                          f"{phase!r} that {self.python.__name__} has")
                    else:
                        self.handlers.append((i, handler))

    @property
    def obs_size(self) -> int:
        return self._obs_size

    def features(self, obs: torch.Tensor, mask: torch.Tensor) -> Features:
        return Features(self, obs, mask)

    def propose(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        f = self.features(obs, mask)
        answer = f.const(-1)
        for i, handler in self.handlers:
            rows = f.phase == i
            if bool(rows.any()):
                answer = torch.where(rows, handler(f), answer)
        return answer

    # ------------------------------------------------------------------ shared rules
    def next_mark(self, f: Features, throw: torch.Tensor) -> torch.Tensor:
        """:func:`agents.scripted.common.next_mark`: the weakest legal card of ``throw``, else ``done``
        where legal, else the weakest legal card."""
        mark, any_mark = f.weakest(throw & f.legal)
        weakest, _ = f.weakest(f.legal)
        done = self.ids["done"]
        return torch.where(any_mark, mark, torch.where(f.legal_action("done"), done, weakest))

    def play_high_or_low(self, f: Features) -> torch.Tensor:
        """:func:`agents.scripted.common.play_high_or_low`: lead the strongest card; follow with the
        strongest card that wins, else the weakest."""
        in_progress, win, _ = f.current
        winners = f.legal & self.beats.index_select(0, f.suit * self.N + win)
        strong_win, any_win = f.strongest(winners)
        weakest, _ = f.weakest(f.legal)
        strongest, _ = f.strongest(f.legal)
        return torch.where(in_progress, torch.where(any_win, strong_win, weakest), strongest)

    def ace_or(self, f: Features, yes: str, no: str) -> torch.Tensor:
        """``yes`` when the turned card is an ace (the top rank), else ``no`` (the beginners' knock)."""
        return torch.where(self.is_ace[f.trump_card], self.ids[yes], self.ids[no])
