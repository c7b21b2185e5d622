"""A configuration's batched program: its kernels, chosen from the reference's rule objects by type.

``Program(game, statics)`` walks ``game.stages`` (the ruleset's deal procedure),
``game.trick_hooks``, ``game.scoring`` and ``game.end_hooks`` and gives each rule
object the kernel that mirrors it (:data:`STAGE_KERNELS` and friends). A rule
object without a kernel is refused with a
:class:`~mauscheln_env.errors.ConfigError` naming what is supported. Adding a
ruleset to the batched engine is adding kernels for its new rule objects here.

A step of the engine is then three pure functions of the state:

* :meth:`Program.advance`: every session applies its action (the kernel of its
  phase), then enters the stages that follow (:meth:`Program.resolve`) until a
  decision is asked, the deal ends, or a stage that runs outside the fused step
  (``slow``: dealing, Vierling, the stakes, the mouche check) pauses it;
* :meth:`Program.legal`: the legal actions of the seat to act;
* the observation (:mod:`mauscheln_env.batched.observe`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from mauscheln_env.batched.base import Kernel, Rules, XTurn
from mauscheln_env.batched.bidding import DeclareK, ForcedKnockK, GoWithK, KnockK, MouselDeclareK, StakesK
from mauscheln_env.batched.cards import (
    AceOfSpadesK,
    AnteK,
    BelliK,
    DealK,
    ExchangeK,
    PlayK,
    SettleK,
    TrickHookK,
    VierlingK,
    finish_exchange,
    needs_refill,
)
from mauscheln_env.batched.deciding import AnnounceK, DecideK, MoucheCheckK, NameTrumpK, QueueK
from mauscheln_env.batched.ops import any_rows, mask, pick
from mauscheln_env.batched.settle import MoucheK, PerTrickK, PointsK, ScoringK
from mauscheln_env.batched.state import RowView, TableState
from mauscheln_env.batched.statics import Statics
from mauscheln_env.engine import Ante, DealCards, Exchange, Game, Phase, Play, Settle, StockPolicy
from mauscheln_env.errors import ConfigError
from mauscheln_env.rulesets.mauscheln import BelliPenalty, Declare, GoWith, ModernKnock, PerTrickBete, Vierling
from mauscheln_env.rulesets.mauscheln_classic import (
    ClassicKnock,
    ClassicStakes,
    ForcedKnock,
    Mauschelzwang,
    Mitgehzwang,
)
from mauscheln_env.rulesets.mouche import (
    Beatrix,
    Decide,
    MoucheCheck,
    MoucheScoring,
    NameTrump,
    PamphileBonus,
    QueueIntoPot,
    RoundsOver,
)
from mauscheln_env.rulesets.mousel import FlatBete, MouselDeclare, MouselKnock
from mauscheln_env.rulesets.muschka import AceOfSpades, PointsScoring, someone_at_zero

Builder = Callable[[Any, int, Rules], Kernel]

PAUSE_STAGE, PAUSE_STEP, PAUSE_DRAWN = 1, 2, 3
"""``pause`` codes: the deal waits at a stage that runs outside the fused step; the whole step of this row
runs outside it (its draw needs a reshuffle: chance); the seat to act says ``done`` and has drawn already, outside
the fused step (:meth:`Program.draw_first`), which does the rest of its step."""

KNOCK_TURNS: dict[type, XTurn] = {ModernKnock: XTurn.KNOCKER, ClassicKnock: XTurn.BLIND}
"""The knocker's first exchange turn, by knock class (``exchange_plan``)."""


def _compulsion(obj: Any, kind: type) -> bool:
    if obj is None:
        return False
    if type(obj) is kind:
        return True
    raise ConfigError(f"the batched engine has no kernel for {type(obj).__name__}; supported compulsions: "
                      f"{kind.__name__}")


def _knock(stage: Any, i: int, rules: Rules) -> Kernel:
    committed = type(stage) is MouselKnock
    if type(stage) is ClassicKnock:
        rules.final_after_goers = True
    return KnockK(stage, i, rules, committed, None if committed else rules.index_of(GoWith))


def _go_with(stage: Any, i: int, rules: Rules) -> Kernel:
    knock = stage.knock
    if knock is not None and type(knock) not in KNOCK_TURNS:
        raise ConfigError(f"the batched engine has no exchange plan for {type(knock).__name__}; supported: "
                          f"{', '.join(c.__name__ for c in KNOCK_TURNS)}")
    turn = XTurn.NORMAL if knock is None else KNOCK_TURNS[type(knock)]
    return GoWithK(stage, i, rules, _compulsion(stage.compulsion, Mitgehzwang), turn)


def _decide(stage: Any, i: int, rules: Rules) -> Kernel:
    beatrix = ace = None
    for hook in stage.hooks:
        if type(hook) is Beatrix:
            beatrix = hook
        elif type(hook) is AceOfSpades:
            ace = hook
        else:
            raise ConfigError(f"the batched engine has no kernel for the deciding hook {type(hook).__name__}; "
                              "supported: Beatrix, AceOfSpades")
    kernel = DecideK(stage, i, rules, beatrix, ace)
    rules.decide = kernel
    return kernel


STAGE_KERNELS: dict[type, Builder] = {
    Ante: AnteK,
    DealCards: DealK,
    Exchange: ExchangeK,
    Settle: SettleK,
    Vierling: VierlingK,
    ModernKnock: _knock,
    ClassicKnock: _knock,
    MouselKnock: _knock,
    Declare: lambda s, i, r: DeclareK(s, i, r, _compulsion(s.compulsion, Mauschelzwang)),
    GoWith: _go_with,
    MouselDeclare: MouselDeclareK,
    ClassicStakes: StakesK,
    ForcedKnock: lambda s, i, r: ForcedKnockK(s, i, r, r.index_of(Exchange)),
    QueueIntoPot: QueueK,
    NameTrump: NameTrumpK,
    PamphileBonus: AnnounceK,
    Decide: _decide,
    MoucheCheck: MoucheCheckK,
}
"""Stage class (exact type) -> its kernel. ``Play`` is built apart (it takes the trick hooks)."""

HOOK_KERNELS: dict[type, Callable[[Any, Rules], TrickHookK]] = {BelliPenalty: BelliK, AceOfSpades: AceOfSpadesK}
SCORING_KERNELS: dict[type, Callable[[Any, Rules], ScoringK]] = {
    PerTrickBete: lambda s, r: PerTrickK(s, r, flat=False),
    FlatBete: lambda s, r: PerTrickK(s, r, flat=True),
    MoucheScoring: MoucheK,
    PointsScoring: PointsK,
}


def supported_objects() -> str:
    """The rule objects the batched engine has kernels for (for error messages)."""
    names = [c.__name__ for c in (*STAGE_KERNELS, Play, *HOOK_KERNELS, *SCORING_KERNELS)]
    return ", ".join(names) + ", RoundsOver, someone_at_zero"


def _missing(what: str, obj: Any) -> ConfigError:
    return ConfigError(f"the batched engine has no kernel for the {what} {type(obj).__name__}; supported rule "
                       f"objects: {supported_objects()}")


class Program:
    """The kernels of one configuration (see the module docstring)."""

    def __init__(self, game: Game, k: Statics) -> None:
        rules = Rules(game, k)
        self.rules = rules
        self.k = k
        hooks = []
        for hook in game.trick_hooks:
            if type(hook) not in HOOK_KERNELS:
                raise _missing("trick hook", hook)
            hooks.append(HOOK_KERNELS[type(hook)](hook, rules))
        self.stages: list[Kernel] = []
        for i, stage in enumerate(game.stages):
            if type(stage) is Play:
                self.stages.append(PlayK(stage, i, rules, hooks))
            elif type(stage) in STAGE_KERNELS:
                self.stages.append(STAGE_KERNELS[type(stage)](stage, i, rules))
            else:
                raise _missing("stage", stage)
        rules.kernels = self.stages
        if type(game.scoring) not in SCORING_KERNELS:
            raise _missing("scoring rule", game.scoring)
        self.scoring = SCORING_KERNELS[type(game.scoring)](game.scoring, rules)
        self.rounds: int | None = None
        self.ends_at_zero = False
        for hook in game.end_hooks:
            if type(hook) is RoundsOver:
                self.rounds = int(hook.rounds)
            elif hook is someone_at_zero:
                self.ends_at_zero = True
            else:
                raise ConfigError(f"the batched engine has no kernel for the end hook {hook!r}; supported: "
                                  "RoundsOver, someone_at_zero")
        self.handlers: dict[Phase, Kernel] = {}
        for kernel in self.stages:
            for phase in kernel.phases:
                self.handlers[phase] = kernel
        if Phase.EXCHANGE not in self.handlers:  # exchanges chosen while deciding (no Exchange stage)
            self.handlers[Phase.EXCHANGE] = ExchangeK(None, -1, rules)

    # ------------------------------------------------------------------ the fused step
    def resolve(self, st: TableState, slow: bool) -> None:
        """``Game.proceed``: enter the stages rows are entering, in procedure order, until each asks a decision,
        ends the deal, or (``slow=False``) reaches a stage that runs outside the fused step (it pauses there)."""
        for kernel in self.stages:
            m = mask(st.entering == kernel.index)
            if not any_rows(m):
                continue
            if kernel.slow and not slow:
                st.pause = pick(m, PAUSE_STAGE, st.pause)
                continue
            kernel.enter(st, m)

    def advance(self, st: TableState, a: torch.Tensor) -> TableState:
        """The state after every session applies its action ``a`` (``Game.apply``): a new state, pure.

        A seat saying ``done`` draws first (the turn's ``finish``), unless it drew already (``pause =
        PAUSE_DRAWN``, :meth:`draw_first`); a row whose draw needs a reshuffle is left unchanged with ``pause =
        PAUSE_STEP``, for :meth:`advance_rows` to step it outside.
        """
        st = st.copy()
        st.end_kind = torch.zeros_like(st.end_kind)
        st.end_seat = torch.full_like(st.end_seat, -1)
        phase = st.phase
        drawn = mask(st.pause == PAUSE_DRAWN)
        st.pause = st.pause & ~drawn
        done = mask(phase == int(Phase.EXCHANGE)) & mask(a == self.k.ids["done"]) & ~drawn
        defer = needs_refill(self.rules, st, done)
        st.pause = pick(defer, PAUSE_STEP, st.pause)
        finish_exchange(self.rules, st, done & ~defer, refill_ok=False)
        for p, kernel in self.handlers.items():
            m = mask(phase == int(p)) & ~defer
            if any_rows(m):
                kernel.act(st, p, a, m)
        self.resolve(st, slow=False)
        return st

    def reshuffling_draws(self, st: TableState, a: torch.Tensor) -> torch.Tensor:
        """Eagerly, before the fused step: the sessions whose seat says ``done`` with ``a`` and whose draw needs a
        reshuffle (chance), which :meth:`advance` would defer (found on the rows saying ``done`` only)."""
        if self.rules.policy is StockPolicy.CAP:  # the stock is never refilled
            return a[:0]
        rows = (a == self.k.ids["done"]).nonzero()[:, 0]
        if rows.shape[0] == 0:
            return rows
        view = RowView(st, rows)
        return rows[needs_refill(self.rules, view, mask(view.phase == int(Phase.EXCHANGE))) != 0]

    def draw_first(self, st: TableState | RowView, m: torch.Tensor) -> None:
        """Rows ``m`` (:meth:`reshuffling_draws`) draw here, outside the fused step (the turn's ``finish``), and
        get ``pause = PAUSE_DRAWN`` so that :meth:`advance` does the rest of their step. The result is
        :meth:`advance_rows`'s on them, chance included: nothing of the step draws before it."""
        finish_exchange(self.rules, st, m)
        st.pause = pick(m, PAUSE_DRAWN, st.pause)

    def legal(self, st: TableState) -> torch.Tensor:
        """``int64[B]``: the legal actions of each seat to act as a bit mask over the action ids."""
        bits = torch.zeros_like(st.phase)
        for p, kernel in self.handlers.items():
            m = mask(st.phase == int(p))
            if any_rows(m):
                bits = bits | (kernel.legal(st, p) & m)
        return bits

    # ------------------------------------------------------------------ the same step, eagerly, row by phase
    # Without torch.compile every tensor operation costs a dispatch and a pass over its rows, so the eager
    # engine runs each kernel on the rows it concerns only (RowView): the same kernels, the same results.

    def advance_rows(self, st: TableState | RowView, a: torch.Tensor) -> None:
        """:meth:`advance` in place (rebinding ``st``'s fields), each kernel on the rows of its phase; draws
        may reshuffle here."""
        st.end_kind = torch.zeros_like(st.end_kind)
        st.end_seat = torch.full_like(st.end_seat, -1)
        phase = st.phase.clone()  # the commits below write the root state's tensors in place
        done = ((phase == int(Phase.EXCHANGE)) & (a == self.k.ids["done"])).nonzero()[:, 0]
        if done.shape[0]:
            view = RowView(st, done)
            finish_exchange(self.rules, view, torch.full_like(done, -1))
            view.commit()
        for p, kernel in self.handlers.items():
            idx = (phase == int(p)).nonzero()[:, 0]
            if idx.shape[0]:
                view = RowView(st, idx)
                kernel.act(view, p, a.index_select(0, idx), torch.full_like(idx, -1))
                view.commit()
        self.resolve_rows(st, slow=False)

    def resolve_rows(self, st: TableState | RowView, slow: bool) -> None:
        """:meth:`resolve` in place, each stage on the rows entering it."""
        for kernel in self.stages:
            idx = (st.entering == kernel.index).nonzero()[:, 0]
            if not idx.shape[0]:
                continue
            if kernel.slow and not slow:
                st.pause = st.pause.index_fill(0, idx, PAUSE_STAGE)
                continue
            view = RowView(st, idx)
            kernel.enter(view, torch.full_like(idx, -1))
            view.commit()

    def legal_rows(self, st: TableState) -> torch.Tensor:
        """:meth:`legal`, each phase's kernel on its rows."""
        bits = torch.zeros_like(st.phase)
        for p, kernel in self.handlers.items():
            idx = (st.phase == int(p)).nonzero()[:, 0]
            if idx.shape[0]:
                bits.index_copy_(0, idx, kernel.legal(RowView(st, idx), p))
        return bits
