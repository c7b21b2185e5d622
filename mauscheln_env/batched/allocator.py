"""Keep freed memory in the process: large batches allocate the same blocks every step.

A step of the batched engine allocates its new state and outputs (tens of MB at
B = 65536) and frees the previous ones. glibc's ``malloc`` hands the top of its
heap back to the system once more than its trim threshold lies free there, and
maps blocks above its (adaptive) mmap threshold afresh, so the next step
faults the same pages in again, thousands of page faults per step.
:func:`keep_freed_memory` fixes both thresholds, so freed blocks stay in the heap
for the next step. The process keeps its peak heap instead of shrinking after it
(the lab notebook in the docs has the measurements).

The benchmark (``benchmarks/batched_throughput.py``, unless ``--malloc default``),
the trainer with the batched backend and the workers of
:class:`~mauscheln_env.vecenv.SubprocVectorEnv` call it; a program that drives
the engine itself calls it once, or sets the same values with
``GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=2147483647``.
"""

from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
"""``mallopt`` parameters (glibc's ``malloc.h``)."""

MMAP_THRESHOLD = 32 << 20
"""Blocks of at least 32 MiB (glibc's largest mmap threshold) are still mapped on their own."""
TRIM_THRESHOLD = 2**31 - 1
"""Free memory at the top of the heap is handed back only past 2 GiB."""


def keep_freed_memory() -> bool:
    """Make ``malloc`` keep freed blocks for reuse (see the module docstring); idempotent.

    Returns True where it took effect (glibc), False where the C library has no ``mallopt`` or refused it
    (musl, macOS, Windows): nothing is changed there.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the interpreter runs on
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
