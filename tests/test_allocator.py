"""keep_freed_memory: freed blocks stay in the heap, so a loop that allocates the same blocks does not fault."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Four 16 MiB tensors allocated and freed twenty times, as a step allocates its new state and frees the old. By
# default glibc hands memory back and faults it in again: measured 327,005 faults, or 20,413 where the heap lay
# so that it trimmed less (16 runs); kept, 4,096 in every run (the heap grows once, by one block).
SCRIPT = """
import resource, sys
import torch
from mauscheln_env.batched import keep_freed_memory
if sys.argv[1] == "keep":
    if not keep_freed_memory():
        print("unavailable")
        raise SystemExit
    if keep_freed_memory() is not True:  # a second call changes nothing and says so
        print("a second call failed")
        raise SystemExit
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
blocks = [torch.ones(2 << 20, dtype=torch.int64) for _ in range(4)]
del blocks
before = faults()
for _ in range(20):
    blocks = [torch.ones(2 << 20, dtype=torch.int64) for _ in range(4)]
    del blocks
print(faults() - before)
"""


def _faults(mode: str) -> str:
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    return done.stdout.strip().splitlines()[-1]


def test_keep_freed_memory_stops_the_page_faults_of_a_repeated_allocation() -> None:
    kept = _faults("keep")
    if kept == "unavailable":
        pytest.skip("the C library has no mallopt (not glibc): keep_freed_memory changes nothing there")
    assert kept.isdigit(), kept
    default = int(_faults("default"))
    assert default > 16_384, f"the allocation pattern did not make the default malloc fault ({default})"
    assert int(kept) <= 8_192, f"{kept} page faults with freed memory kept: more than two 16 MiB blocks"

