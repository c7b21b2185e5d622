"""Evaluation tables for trained policies: duplicate deals against the scripted baselines.

Both training scripts end here: the candidate (an agent spec such as
``learned:checkpoint=runs/.../policy.safetensors``) plays duplicate deals in
both formats against each baseline through :func:`agents.evaluation.duplicate.evaluate_pair`,
and the table reports the candidate's advantage in chips per deal with a 95 %
confidence interval over deals, per format and combined. A pairing whose agents
all have tensor forms (a learned policy, random, beginner, expert) plays on the
batched engine (``backend="auto"``, :mod:`agents.evaluation.batched`: the same deals,
chance and scripted decisions as the reference engine), any other on the
reference engine.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from agents.evaluation.duplicate import Settings, evaluate_pair
from mauscheln_env.config import RuleConfig
from mauscheln_env.files import atomic_write
from mauscheln_env.ruleargs import options_of


def evaluate_candidate(candidate: str, opponents: list[str], config: RuleConfig, deals: int, seed: int,
                       workers: int = 1, progress: bool = False) -> list[dict[str, Any]]:
    """Rows ``{opponent, format, mean, low, high, deals}``; format is ``alone``, ``field`` or ``both``."""
    rules = tuple(sorted(options_of(config).items()))  # every rule but the session length: the same game
    settings = Settings(ruleset=config.ruleset, players=config.num_players, deals=deals, seed=seed,
                        session_deals=1, rule_options=rules, backend="auto")
    rows: list[dict[str, Any]] = []
    for opponent in opponents:
        result = evaluate_pair(candidate, opponent, settings, workers=workers, progress=progress, keep_per_deal=False,
                               label=f"{candidate.split(':')[0]} vs {opponent}")
        estimates = [("alone: 1 vs field", result.advantage_by_format["alone"]),
                     ("field: field vs 1", result.advantage_by_format["field"]),
                     ("both formats", result.advantage)]
        for fmt, est in estimates:
            rows.append({"opponent": opponent, "format": fmt, "mean": est.mean, "low": est.low, "high": est.high,
                         "deals": result.deals, "seconds": result.seconds})
    return rows


def print_table(rows: list[dict[str, Any]], title: str = "trained policy") -> None:
    print(f"\nduplicate evaluation of the {title}: advantage in chips per deal over the baseline, "
          "95% interval over deals")
    print(f"{'opponent':<12} {'format':<20} {'mean':>8} {'95% interval':>20} {'deals':>7}")
    for row in rows:
        verdict = "better" if row["low"] > 0 else "worse" if row["high"] < 0 else "undecided"
        print(f"{row['opponent']:<12} {row['format']:<20} {row['mean']:>+8.3f} "
              f"[{row['low']:+7.3f}, {row['high']:+7.3f}] {row['deals']:>7}  {verdict}")


def markdown_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| opponent | format | advantage (chips/deal) | 95% interval | deals |", "| --- | --- | ---: | --- | ---: |"]
    for row in rows:
        lines.append(f"| {row['opponent']} | {row['format']} | {row['mean']:+.3f} | "
                     f"[{row['low']:+.3f}, {row['high']:+.3f}] | {row['deals']} |")
    return "\n".join(lines)


def write_chart(rows: list[dict[str, Any]], path: Path, title: str) -> str | None:
    """A chart of the advantage per opponent and format with its 95 % interval; None without matplotlib."""
    if importlib.util.find_spec("matplotlib") is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.5))
    labels = [f"vs {r['opponent']}: {r['format']}" for r in rows]
    means = [r["mean"] for r in rows]
    errs = [[r["mean"] - r["low"] for r in rows], [r["high"] - r["mean"] for r in rows]]
    ax.errorbar(means, range(len(rows)), xerr=errs, fmt="o", capsize=3)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("advantage of the policy, chips per deal (95% interval)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=120, format="png"))
    plt.close(fig)
    return str(path)
