"""The batched tensor engine: thousands of sessions of any ruleset stepped at once in PyTorch.

The package is the reference engine's rules as tensor kernels, composed per
configuration from the reference's own rule objects:

| module | what it holds |
| --- | --- |
| :mod:`~mauscheln_env.batched.state` | :class:`TableState`, the state as one dataclass of tensors |
| :mod:`~mauscheln_env.batched.statics` | the configuration's static tables (seats, cards, trump tables, deal pattern) |
| :mod:`~mauscheln_env.batched.ops` | branch-free tensor helpers |
| :mod:`~mauscheln_env.batched.base` | what a kernel is, and the primitives rule kernels share |
| :mod:`~mauscheln_env.batched.cards` | stakes, dealing, Vierling, the exchange, the tricks (``legal_follow``) |
| :mod:`~mauscheln_env.batched.bidding` | knocks, declaring, going with, Mousel's in/out, classic stakes |
| :mod:`~mauscheln_env.batched.deciding` | Mouche/Muschka deciding, Béatrix, Pamphile, the queue, the mouche check |
| :mod:`~mauscheln_env.batched.settle` | the scoring rules of RULES.md §3 |
| :mod:`~mauscheln_env.batched.program` | rule object -> kernel (by type); the fused step |
| :mod:`~mauscheln_env.batched.observe` | observations from the observation schema (one encoder per codec kind) |
| :mod:`~mauscheln_env.batched.engine` | :class:`BatchedMauscheln`, the :class:`~mauscheln_env.vector.VectorEnv` |
| :mod:`~mauscheln_env.batched.allocator` | :func:`keep_freed_memory`: no page faults on every step's new tensors |
"""

from mauscheln_env.batched.allocator import keep_freed_memory
from mauscheln_env.batched.engine import BatchedMauscheln, check_supported
from mauscheln_env.batched.program import supported_objects
from mauscheln_env.batched.state import TableState

BatchedEngine = BatchedMauscheln
"""The same class under a name that does not suggest one ruleset."""

__all__ = ["BatchedEngine", "BatchedMauscheln", "TableState", "check_supported", "keep_freed_memory",
           "supported_objects"]
