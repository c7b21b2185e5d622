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

from pathlib import Path
from typing import Any

from agents.evaluation.duplicate import Settings, evaluate_pair
from mauscheln_env.config import RuleConfig
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
    from agents.evaluation.charts import advantage_chart

    return advantage_chart(rows, path, title)
