"""Branch-free tensor helpers shared by every kernel of the batched engine.

Conditions become ``int64`` masks, all ones (true) or zero (false), made by
:func:`mask`; ``pick(m, x, y)`` is ``m ? x : y`` on integers
(``y ^ ((x ^ y) & m)``: on the CPU ``torch.where`` over ``int64`` is several
times slower for large batches, and inside ``torch.compile`` both fuse). Sets of
cards and of seats are ``int64`` bit masks. Every helper works on any number of
rows, so a kernel runs unchanged on the whole batch (the step's fused path) or
on the few sessions a rare event concerns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from mauscheln_env.errors import ConfigError

NO_SEAT = -1
"""No seat (no mauschler yet, nobody took the trump card, ...)."""
ABSENT = -(1 << 40)
"""An empty trick slot (no card played, no leader yet): so negative that every observation index computed from
it falls below its piece, where the encoders send it to a cell written afterwards."""


def mask(cond: torch.Tensor) -> torch.Tensor:
    """A bool tensor as ``int64`` all ones (True) or zero (False), for :func:`pick` and ``&``."""
    return cond.to(torch.int64).neg_()


def pick(m: torch.Tensor, x: torch.Tensor | int, y: torch.Tensor | int) -> torch.Tensor:
    """``x`` where the mask ``m`` (from :func:`mask`) is set, else ``y``; integer tensors only."""
    return y ^ ((x ^ y) & m)


def flag(cond: torch.Tensor) -> torch.Tensor:
    """A bool tensor as ``int64`` 0/1 (how the state stores its flags)."""
    return cond.to(torch.int64)


def rows(m: torch.Tensor) -> torch.Tensor:
    """A per-row mask ``[B]`` broadcast over a per-seat tensor ``[B, n]``."""
    return m[:, None]


def seat_get(t: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
    """``t[b, seat[b]]`` for a per-seat tensor ``[B, n]`` (``seat`` in range)."""
    return t.gather(1, seat[:, None])[:, 0]


def seat_onehot(seat: torch.Tensor, seat_ar: torch.Tensor) -> torch.Tensor:
    """``int64[B, n]`` mask of the column ``seat[b]`` in each row (none for a negative seat)."""
    return mask(seat_ar == seat[:, None])


def seat_put(t: torch.Tensor, seat: torch.Tensor, value: torch.Tensor | int, m: torch.Tensor,
             seat_ar: torch.Tensor) -> torch.Tensor:
    """``t`` with ``t[b, seat[b]] = value[b]`` in the rows where ``m`` is set."""
    v = value[:, None] if isinstance(value, torch.Tensor) else value
    return pick(seat_onehot(seat, seat_ar) & m[:, None], v, t)


def seat_add(t: torch.Tensor, seat: torch.Tensor, delta: torch.Tensor, seat_ar: torch.Tensor) -> torch.Tensor:
    """``t`` with ``delta[b]`` added at ``t[b, seat[b]]``."""
    return t + (seat_onehot(seat, seat_ar) & delta[:, None])


def bits_of(cond: torch.Tensor, seat_bit: torch.Tensor) -> torch.Tensor:
    """A per-seat bool ``[B, n]`` as a seat bit mask ``int64[B]``."""
    return (mask(cond) & seat_bit).sum(1)


def any_rows(m: torch.Tensor) -> bool:
    """Whether any row of the mask is set: lets eager code skip a kernel no row needs (never inside compile)."""
    if torch.compiler.is_compiling():
        return True
    return bool(m.any())


INDUCTOR_OPTIONS = {"cpp.enable_tiling_heuristics": False}
"""Inductor's CPU code generator vectorizes a loop over the batch only while it has fewer than 35 strided loads
(``cpp.enable_tiling_heuristics``); a kernel's loads of per-seat fields ``[B, n]`` are strided along the batch, so
the fused step's large loops would fall back to scalar code; vectorized anyway, they are faster. The results are
the same either way (elementwise operations, none reassociated); the lockstep tests compare every step with the
eager code."""


def compiled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` through ``torch.compile`` (one graph, static shapes); a failure to compile is a ConfigError."""
    graph = torch.compile(fn, fullgraph=True, dynamic=False, options=INDUCTOR_OPTIONS)

    def call(*args: Any) -> Any:
        try:
            return graph(*args)
        except torch._dynamo.exc.TorchDynamoException as exc:
            raise ConfigError(f"compile=True: torch.compile failed on this machine ({type(exc).__name__}: "
                              f"{str(exc).strip().splitlines()[0]}); allowed: compile=False, or a working torch.compile "
                              "(on the CPU it needs a C++ compiler)") from exc

    return call
