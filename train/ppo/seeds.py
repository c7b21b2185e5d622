"""Seeds: every draw of update ``u`` comes from a stream derived from ``(seed, u, key)``.

So an update is a pure function of (parameters, optimizer state, seed, update index), and a run resumed from a
checkpoint repeats exactly the updates it would have made. The keys in use: 1 the learner's sampling, the
DAgger share and the minibatch order; 2 the opponents at each table; 3 the deals; 7 the scripted baselines
(and, as ``(seed, 7, k)``, their construction); 8 the imitation teacher's construction.
"""

from __future__ import annotations

import numpy as np
import torch


def seed_for(seed: int, *keys: int) -> int:
    """A 32-bit seed of its own for the stream ``(seed, *keys)`` (numpy's SeedSequence)."""
    return int(np.random.SeedSequence([seed, *keys]).generate_state(1)[0])


def update_generators(seed: int, update: int) -> tuple[torch.Generator, np.random.Generator]:
    """The learner's torch generator (sampling, minibatches) and the numpy one that seats the opponents."""
    gen = torch.Generator(device="cpu").manual_seed(seed_for(seed, update, 1))
    rng = np.random.default_rng(seed_for(seed, update, 2))
    return gen, rng
