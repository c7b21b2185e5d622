"""Every chart the project draws, in one place: matplotlib (the optional ``plot`` extra) set up once, the three
charts of evaluation results, and PNG output written atomically or as bytes.

* :func:`tournament_chart` — ``mauscheln eval`` and the per-ruleset pages: ratings and every pairing's advantage;
* :func:`board_chart` — ``mauscheln bench report``: a leaderboard's ratings and its cross-table;
* :func:`advantage_chart` — the trainer's evaluation: the policy's advantage per opponent and format.

Each returns None when matplotlib is not installed (or raises nothing else for its absence); benchmark scripts
use :func:`pyplot` and :func:`save_png` for their own figures.
"""

from __future__ import annotations

import importlib.util
import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mauscheln_env.files import atomic_write


def pyplot() -> Any | None:
    """``matplotlib.pyplot`` on the Agg backend (no display needed), or None without matplotlib."""
    if importlib.util.find_spec("matplotlib") is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(fig: Any, path: Path, dpi: int = 120) -> str:
    """Write ``fig`` as a PNG at ``path`` atomically, close it and return the path."""
    import matplotlib.pyplot as plt

    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=dpi, format="png"))
    plt.close(fig)
    return str(path)


def png_bytes(fig: Any, dpi: int = 100) -> bytes:
    """``fig`` as PNG bytes (for a page that embeds it), closed afterwards."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, dpi=dpi, format="png")
    plt.close(fig)
    return buf.getvalue()


def _intervals(ax: Any, labels: Sequence[str], means: Sequence[float], lows: Sequence[float],
               highs: Sequence[float], xlabel: str, fontsize: int) -> None:
    """Points with 95 % intervals, one row per label, and the zero line: the shape every advantage chart uses.
    An undefined bound (NaN or infinite: a pairing of one deal) draws no whisker on that side."""
    def whisker(a: float, b: float) -> float:
        return abs(a - b) if math.isfinite(a) and math.isfinite(b) else 0.0

    errs = [[whisker(m, lo) for m, lo in zip(means, lows)], [whisker(hi, m) for m, hi in zip(means, highs)]]
    ax.errorbar(means, range(len(means)), xerr=errs, fmt="o", capsize=3)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(range(len(means)), labels, fontsize=fontsize)
    ax.set_xlabel(xlabel)


def tournament_chart(ratings: Mapping[str, float], pairs: Sequence[Any], title: str, path: Path) -> str | None:
    """The ratings and every pairing's advantage with its 95 % interval (:class:`PairResult` rows), as a PNG."""
    plt = pyplot()
    if plt is None:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    order = sorted(ratings, key=lambda a: ratings[a])
    ax1.barh(order, [ratings[a] for a in order], color="tab:blue")
    ax1.set_xlabel("Elo (Bradley-Terry, centred)")
    _intervals(ax2, [f"{p.candidate}\nvs {p.baseline}" for p in pairs], [p.advantage.mean for p in pairs],
               [p.advantage.low for p in pairs], [p.advantage.high for p in pairs],
               "advantage, chips per deal (95% CI)", 7)
    fig.suptitle(title)
    fig.tight_layout()
    return save_png(fig, path)


def board_chart(board: Any) -> bytes | None:
    """A leaderboard (:class:`agents.bench.leaderboard.Board`): ratings with their 95 % intervals and the
    cross-table of advantages, as PNG bytes."""
    plt = pyplot()
    if plt is None:
        return None
    import numpy as np

    entries = board.entries[::-1]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 0.5 * len(entries) + 2.2))
    err = np.array([[e.elo - e.low if math.isfinite(e.low) else 0 for e in entries],
                    [e.high - e.elo if math.isfinite(e.high) else 0 for e in entries]])
    ax1.barh([e.agent for e in entries], [e.elo for e in entries], xerr=err, color="tab:blue", capsize=3)
    ax1.axvline(0, color="grey", lw=0.8)
    ax1.set_xlabel("Elo (Bradley-Terry, centred), 95% interval")
    ax1.tick_params(axis="y", labelsize=8)
    order = [e.agent for e in board.entries]
    grid = np.full((len(order), len(order)), np.nan)
    for p in board.pairs:
        i, j = order.index(p.candidate), order.index(p.baseline)
        grid[i, j], grid[j, i] = p.advantage.mean, -p.advantage.mean
    lim = np.nanmax(np.abs(grid)) if np.isfinite(grid).any() else 1.0
    im = ax2.imshow(grid, cmap="RdBu", vmin=-lim, vmax=lim)
    ax2.set_xticks(range(len(order)), [a[:18] for a in order], rotation=45, ha="right", fontsize=7)
    ax2.set_yticks(range(len(order)), [a[:18] for a in order], fontsize=7)
    for i in range(len(order)):
        for j in range(len(order)):
            if np.isfinite(grid[i, j]):
                ax2.text(j, i, f"{grid[i, j]:+.2f}", ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=ax2, label="row's advantage, chips per deal")
    fig.suptitle(f"{board.table} (suite {board.suite})")
    fig.tight_layout()
    return png_bytes(fig)


def advantage_chart(rows: Sequence[Mapping[str, Any]], path: Path, title: str) -> str | None:
    """The trainer's evaluation: the policy's advantage per opponent and format (rows with ``opponent``,
    ``format``, ``mean``, ``low``, ``high``) with its 95 % interval, as a PNG."""
    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.5))
    _intervals(ax, [f"vs {r['opponent']}: {r['format']}" for r in rows], [r["mean"] for r in rows],
               [r["low"] for r in rows], [r["high"] for r in rows],
               "advantage of the policy, chips per deal (95% interval)", 8)
    ax.invert_yaxis()
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return save_png(fig, path)
