"""Seeds: every draw of update ``u`` comes from a stream derived from ``(seed, u, key)``.

So an update is a pure function of (parameters, optimizer state, seed, update index), and a run resumed from a
checkpoint repeats exactly the updates it would have made. The keys in use: 1 the learner's sampling, the
DAgger share and the minibatch order; 2 the opponents at each table; 3 the deals; 4 the learner's sampling on a
CUDA device (a generator on the device); 7 the scripted baselines (and, as ``(seed, 7, k)``, their
construction); 8 the imitation teacher's construction.

In a data-parallel run each rank draws all of these from its own root, :func:`rank_seed`: its sessions,
opponents and minibatches are its own. Nothing drawn influences every rank: the initial weights come from
``seed`` itself and are rank 0's on every rank, the snapshots are taken at fixed updates and the pool's
scores are summed over the ranks.
"""

from __future__ import annotations

import numpy as np
import torch


def seed_for(seed: int, *keys: int) -> int:
    """A 32-bit seed of its own for the stream ``(seed, *keys)`` (numpy's SeedSequence)."""
    return int(np.random.SeedSequence([seed, *keys]).generate_state(1)[0])


def rank_seed(seed: int, rank: int) -> int:
    """The root of rank ``rank``'s streams: ``seed`` itself on rank 0 (a one-process run is the run it always was),
    ``(seed, 9, rank)`` on the others."""
    return seed if rank == 0 else seed_for(seed, 9, rank)


def device_generator(seed: int, update: int, device: torch.device) -> torch.Generator | None:
    """The learner's sampling generator on a CUDA ``device`` (``(seed, update, 4)``); None on the CPU, where
    the learner samples from :func:`update_generators`' torch generator."""
    if device.type == "cpu":
        return None
    return torch.Generator(device=device).manual_seed(seed_for(seed, update, 4))


def update_generators(seed: int, update: int) -> tuple[torch.Generator, np.random.Generator]:
    """The learner's torch generator (sampling, minibatches) and the numpy one that seats the opponents."""
    gen = torch.Generator(device="cpu").manual_seed(seed_for(seed, update, 1))
    rng = np.random.default_rng(seed_for(seed, update, 2))
    return gen, rng
