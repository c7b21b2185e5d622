"""Charts of evaluation results, written atomically as PNG (matplotlib, an optional extra)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from agents.evaluation.duplicate import PairResult
from mauscheln_env.files import atomic_write


def tournament_chart(ratings: Mapping[str, float], pairs: Sequence[PairResult], title: str, path: Path) -> str:
    """The ratings and every pairing's advantage with its 95 % interval, as a PNG (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    order = sorted(ratings, key=lambda a: ratings[a])
    ax1.barh(order, [ratings[a] for a in order], color="tab:blue")
    ax1.set_xlabel("Elo (Bradley-Terry, centred)")
    labels = [f"{p.candidate}\nvs {p.baseline}" for p in pairs]
    means = [p.advantage.mean for p in pairs]
    errs = [h if math.isfinite(h) else 0.0 for h in (p.advantage.half_width for p in pairs)]  # one deal: none
    ax2.errorbar(means, range(len(means)), xerr=errs, fmt="o", capsize=3)
    ax2.axvline(0, color="grey", lw=0.8)
    ax2.set_yticks(range(len(means)), labels, fontsize=7)
    ax2.set_xlabel("advantage, chips per deal (95% CI)")
    fig.suptitle(title)
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=120, format="png"))
    plt.close(fig)
    return str(path)

