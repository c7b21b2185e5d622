"""Evaluation tables for trained policies: duplicate deals against the scripted baselines.

Both training scripts end here: the candidate (an agent spec such as
``learned:checkpoint=runs/.../policy.safetensors``) plays duplicate deals in
both formats against each baseline through :func:`agents.evaluate.evaluate_pair`,
and the table reports the candidate's advantage in chips per deal with a 95 %
confidence interval over deals, per format and combined.
"""

from __future__ import annotations

from typing import Any

import agents.learned  # noqa: F401  (registers the "learned" agent)
from agents.evaluate import Settings, evaluate_pair
from mauscheln_env.config import RuleConfig


def evaluate_candidate(candidate: str, opponents: list[str], config: RuleConfig, deals: int, seed: int,
                       workers: int = 1, progress: bool = False) -> list[dict[str, Any]]:
    """Rows ``{opponent, format, mean, low, high, deals}``; format is ``alone``, ``field`` or ``both``."""
    rules = tuple(sorted((k, v) for k, v in config.options.items()
                         if k not in ("max_deals", "deck_size") and config.spec.options[k].default != v))
    settings = Settings(ruleset=config.ruleset, players=config.num_players, deals=deals, seed=seed,
                        session_deals=1, rule_options=rules)
    rows: list[dict[str, Any]] = []
    for opponent in opponents:
        result = evaluate_pair(candidate, opponent, settings, workers=workers, progress=progress, keep_per_deal=False)
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
