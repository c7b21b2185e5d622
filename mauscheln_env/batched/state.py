"""The batched engine's state: one dataclass of tensors, one row per session.

:class:`TableState` mirrors the reference :class:`~mauscheln_env.engine.State`
field for field (its ``session``, its ``deal`` and the decision cursor) for B
sessions at once. Every field is an ``int64`` tensor with the batch first; flags
are 0/1. Card sets are bit masks over ``config.deck`` (bit c = card c), seat
sets bit masks over the n seats; seats are absolute. The reference's queues
become positions: whose turn comes next is computed from the seats (the rules'
direction, the live seats, the participants), as the reference's queues hold
them.

Kernels never change a tensor in place: they rebind fields of a working copy
(:meth:`TableState.copy`), so a kernel is a pure function of the state and runs
on the whole batch (through ``torch.compile``) or on a few rows
(:meth:`select`, then :meth:`scatter_` back).

| field | shape | reference |
| --- | --- | --- |
| `chips`, `scores` | [B, n] | ``session.chips``; ``session.scores`` (muschka) |
| `start` | [B, n] | chips (scores in muschka) when the deal began: rewards are measured from it |
| `pot`, `reserve` | [B] | ``session.pot``, ``session.reserve`` (classic cap) |
| `queue`, `queue_len` | [B, Q], [B] | ``session.escrow``, oldest first (Mouche's queue) |
| `alive` | [B] | seat mask of ``session.alive`` |
| `dealer`, `deals`, `streak` | [B] | ``session.dealer``, ``deals_settled``, ``throw_in_streak`` |
| `phase`, `to_act` | [B] | the cursor (``Phase`` value; OVER when the session ended) |
| `entering` | [B] | index of the deal-procedure stage to enter next (``Game.proceed``), -1 while a decision is asked |
| `end_kind`, `end_seat` | [B] | a deal that ended in this step: ``DEAL_*`` code and the seat that took the pot (no play, mouche) |
| `pause` | [B] | the deal stopped at a stage that runs outside the fused step (dealing after an offer, the mouche check) |
| `deck`, `order_dealer` | [B, N], [B] | the deal's deck order (top first); the dealer it is dealt for (-1: the actual one) |
| `undealt` | [B] | ``deal.undealt`` |
| `stock`, `stock_pos`, `stock_n`, `stock_bits` | [B, N], [B] | the stock: ``stock[stock_pos:stock_pos + stock_n]``, top first; as a set |
| `pile` | [B] | ``deal.discard_pile`` |
| `hands`, `discards`, `drawn` | [B, n] | card masks by seat |
| `dead`, `revealed` | [B] | ``deal.dead``; Vierling quartets shown |
| `trump_card`, `trump_suit`, `face_up`, `holder` | [B] | ``trump_face_up``; ``trump_holder`` (NO_SEAT) |
| `unseen`, `blind` | [B] | ``not seen[dealer]``; ``blind[dealer]`` (only the dealer knocks) |
| `knocked` | [B] | 0 undecided (None), 1 knocked, 2 declined |
| `roles`, `exchanged` | [B, n] | ``Role`` values; 0 not yet exchanged (None), else 1 + cards exchanged |
| `mauschler`, `parts`, `leader` | [B] | ``deal.mauschler``; participants (seat mask); ``deal.leader`` |
| `xturn`, `xfirst`, `marked`, `xmin`, `xcap` | [B] | the exchange: kind of the open turn (``XTurn``), the plan's first seat, marks, bounds |
| `tcards`, `tlead` | [B, T*n + 1], [B, T + 1] | card played in trick t by seat s at t*n + s; leader of trick t (ABSENT: none); last column scratch |
| `tdone`, `tcount` | [B] | completed tricks; cards in the current trick |
| `win_seat`, `win_card`, `led_suit`, `led_card` | [B] | the current trick |
| `won` | [B, n] | ``tricks_won`` |
| `locked`, `as_holder` | [B] | muschka: the ace of spades has taken a led trump ace; who held it when play began |
| `belli_payer`, `belli_to` | [B] | a Belli penalty due: its payer, and the ace's player (NO_SEAT: the pot) |
| `pushes`, `pot_was_empty`, `new_pot` | [B] | classic stakes (Schieben, D15) |
| `swapped`, `announced` | [B] | Béatrix swap; the seat that announced the Pamphile |
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from mauscheln_env.batched.ops import ABSENT, NO_SEAT

DEAL_FIELDS: dict[str, int] = {
    **dict.fromkeys(("entering", "end_kind", "pause", "stock", "stock_pos", "stock_n", "stock_bits", "pile", "hands",
                     "discards", "drawn", "dead", "revealed", "trump_card", "trump_suit", "face_up", "unseen", "blind",
                     "knocked", "roles", "exchanged", "parts", "leader", "xturn", "xfirst", "marked", "xmin", "xcap",
                     "tdone", "tcount", "win_seat", "win_card", "led_suit", "led_card", "won", "locked", "pushes",
                     "pot_was_empty", "new_pot", "swapped"), 0),
    **dict.fromkeys(("end_seat", "order_dealer", "holder", "mauschler", "as_holder", "belli_payer", "belli_to",
                     "announced"), NO_SEAT),
    "undealt": 1, "tcards": ABSENT, "tlead": ABSENT,
}
"""Every field of the current deal and its value in a new deal (``Game.start_deal``'s new ``Deal``)."""

PER_SEAT = ("chips", "scores", "start", "hands", "discards", "drawn", "roles", "exchanged", "won")
"""Fields of shape [B, n]."""


@dataclass
class TableState:
    """B sessions as tensors (see the module docstring)."""

    chips: torch.Tensor
    scores: torch.Tensor
    start: torch.Tensor
    pot: torch.Tensor
    reserve: torch.Tensor
    queue: torch.Tensor
    queue_len: torch.Tensor
    alive: torch.Tensor
    dealer: torch.Tensor
    deals: torch.Tensor
    streak: torch.Tensor
    phase: torch.Tensor
    to_act: torch.Tensor
    entering: torch.Tensor
    end_kind: torch.Tensor
    end_seat: torch.Tensor
    pause: torch.Tensor
    deck: torch.Tensor
    order_dealer: torch.Tensor
    undealt: torch.Tensor
    stock: torch.Tensor
    stock_pos: torch.Tensor
    stock_n: torch.Tensor
    stock_bits: torch.Tensor
    pile: torch.Tensor
    hands: torch.Tensor
    discards: torch.Tensor
    drawn: torch.Tensor
    dead: torch.Tensor
    revealed: torch.Tensor
    trump_card: torch.Tensor
    trump_suit: torch.Tensor
    face_up: torch.Tensor
    holder: torch.Tensor
    unseen: torch.Tensor
    blind: torch.Tensor
    knocked: torch.Tensor
    roles: torch.Tensor
    exchanged: torch.Tensor
    mauschler: torch.Tensor
    parts: torch.Tensor
    leader: torch.Tensor
    xturn: torch.Tensor
    xfirst: torch.Tensor
    marked: torch.Tensor
    xmin: torch.Tensor
    xcap: torch.Tensor
    tcards: torch.Tensor
    tlead: torch.Tensor
    tdone: torch.Tensor
    tcount: torch.Tensor
    win_seat: torch.Tensor
    win_card: torch.Tensor
    led_suit: torch.Tensor
    led_card: torch.Tensor
    won: torch.Tensor
    locked: torch.Tensor
    as_holder: torch.Tensor
    belli_payer: torch.Tensor
    belli_to: torch.Tensor
    pushes: torch.Tensor
    pot_was_empty: torch.Tensor
    new_pot: torch.Tensor
    swapped: torch.Tensor
    announced: torch.Tensor

    @classmethod
    def zeros(cls, B: int, n: int, N: int, T: int, Q: int, device: torch.device) -> TableState:
        """B sessions before their first reset (every session over)."""
        shapes = {"queue": (B, Q), "deck": (B, N), "stock": (B, N), "tcards": (B, T * n + 1), "tlead": (B, T + 1)}
        values = {}
        for f in dataclasses.fields(cls):
            shape = shapes.get(f.name, (B, n) if f.name in PER_SEAT else (B,))
            values[f.name] = torch.zeros(shape, dtype=torch.int64, device=device)
        st = cls(**values)
        st.tcards.fill_(ABSENT)
        st.tlead.fill_(ABSENT)
        for name in ("holder", "mauschler", "end_seat", "order_dealer", "as_holder", "belli_payer", "belli_to",
                     "announced"):
            getattr(st, name).fill_(NO_SEAT)
        st.entering.fill_(-1)
        return st

    def copy(self) -> TableState:
        """A working copy sharing every tensor: a kernel rebinds its fields, never writes into them."""
        return dataclasses.replace(self)

    def select(self, idx: torch.Tensor) -> TableState:
        """The rows ``idx`` as a state of their own (new tensors)."""
        return TableState(**{f.name: getattr(self, f.name).index_select(0, idx) for f in dataclasses.fields(self)})

    def scatter_(self, idx: torch.Tensor, part: TableState) -> None:
        """Write the rows of ``part`` back into rows ``idx`` (in place: the engine's own tensors)."""
        for f in dataclasses.fields(self):
            getattr(self, f.name).index_copy_(0, idx, getattr(part, f.name))

    def fresh_deal_(self, idx: torch.Tensor, uses_chips: bool) -> None:
        """Rows ``idx`` begin a new deal: every deal field back to its start, ``start`` := chips (or scores)."""
        for name, value in DEAL_FIELDS.items():
            getattr(self, name).index_fill_(0, idx, value)
        self.start.index_copy_(0, idx, (self.chips if uses_chips else self.scores).index_select(0, idx))

    def assign_(self, other: TableState) -> None:
        """Take every field of ``other`` (the result of a pure kernel) as this state's.

        A field that shares its tensor with another is copied, so that writing one field never changes another.
        """
        seen: set[int] = set()
        for f in dataclasses.fields(self):
            t = getattr(other, f.name)
            ptr = t.data_ptr()
            if ptr in seen:
                t = t.clone()
            seen.add(ptr)
            setattr(self, f.name, t)

    def resize_queue(self, Q: int) -> None:
        """Grow the queue to ``Q`` slots (Mouche's queue can hold at most one item per chip)."""
        B, old = self.queue.shape
        if Q > old:
            grown = torch.zeros(B, Q, dtype=torch.int64, device=self.queue.device)
            grown[:, :old] = self.queue
            self.queue = grown


FIELDS = tuple(f.name for f in dataclasses.fields(TableState))


def sessions_of(st: TableState | RowView) -> torch.Tensor | None:
    """The engine's sessions that the rows of ``st`` are (None: every session, in order)."""
    return st.sessions if isinstance(st, RowView) else None


class RowView:
    """Rows ``idx`` of a :class:`TableState`, for kernels that run on a few sessions.

    A field is read from the parent (``index_select``) the first time a kernel uses it; a field a kernel
    rebinds is written back into the parent's rows by :meth:`commit` (``index_copy_``). Kernels see the same
    attributes as on a state, so the same kernel code runs on the whole batch or on these rows.
    """

    def __init__(self, parent: TableState | RowView, idx: torch.Tensor) -> None:
        object.__setattr__(self, "_parent", parent)
        object.__setattr__(self, "_idx", idx)
        object.__setattr__(self, "_dirty", set())
        above = sessions_of(parent)
        object.__setattr__(self, "sessions", idx if above is None else above.index_select(0, idx))
        """The sessions (rows of the engine's state) these rows are."""

    def __getattr__(self, name: str) -> torch.Tensor:
        if name not in FIELDS:
            raise AttributeError(name)
        value = getattr(self._parent, name).index_select(0, self._idx)
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name: str, value: torch.Tensor) -> None:
        if name not in FIELDS:
            raise AttributeError(f"a state has no field {name!r}")
        object.__setattr__(self, name, value)
        self._dirty.add(name)

    def commit(self) -> None:
        """Write every rebound field back into the parent's rows."""
        parent, idx = self._parent, self._idx
        for name in self._dirty:
            target = getattr(parent, name)
            if isinstance(parent, RowView):
                setattr(parent, name, target.index_copy(0, idx, self.__dict__[name]))
            else:
                target.index_copy_(0, idx, self.__dict__[name])
        self._dirty.clear()

    def resize_queue(self, Q: int) -> None:
        """Grow the queue, here and in the parent."""
        self._parent.resize_queue(Q)
        if "queue" in self.__dict__:
            old = self.__dict__["queue"]
            grown = torch.zeros(old.shape[0], Q, dtype=torch.int64, device=old.device)
            grown[:, :old.shape[1]] = old
            object.__setattr__(self, "queue", grown)
