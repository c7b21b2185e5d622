"""Duplicate evaluation of the learner against scripted baselines: every ``eval_every`` updates, and at the end.

The learner is written as a policy file and played by the match runner in both duplicate formats (one
against a field, a field against one) over the same deals as each baseline, so luck cancels out; the
advantage in chips per deal goes to TensorBoard (``eval/``) and, at the end, to ``evaluation.json``,
``evaluation.md`` and a chart in the run directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.learned import PolicyNet, save_policy
from mauscheln_env.engine import Game
from mauscheln_env.files import atomic_write_text, strict_json

if TYPE_CHECKING:
    from train.ppo.setup import Run


def evaluate_policy(net: PolicyNet, game: Game, opponents: list[str], deals: int, seed: int, path: Path,
                    workers: int = 1, progress: bool = False) -> list[dict[str, Any]]:
    """Duplicate evaluation of the policy (saved to ``path``) against each baseline, both formats."""
    from train.report import evaluate_candidate

    save_policy(path, net, game)
    return evaluate_candidate(f"learned:checkpoint={path}", opponents, game.config, deals, seed, workers=workers,
                              progress=progress)


def periodic_evaluation(run: Run, update: int) -> None:
    """``eval_deals`` duplicate deals against each of ``eval_agents``, logged and printed."""
    args = run.args
    # A fresh file name per evaluation: the match runner caches agents by their spec string.
    eval_path = run.run_dir / f"eval_policy_{update + 1:06d}.safetensors"
    table = evaluate_policy(run.net, run.game, args.eval_agents, args.eval_deals, args.seed, eval_path)
    eval_path.unlink(missing_ok=True)
    for row in table:
        if row["format"] == "both formats":
            run.writer.add_scalar(f"eval/advantage_vs_{row['opponent']}", row["mean"], run.decisions)
        print(f"  eval vs {row['opponent']} ({row['format']}): {row['mean']:+.3f} "
              f"[{row['low']:+.3f}, {row['high']:+.3f}] over {row['deals']} deals", flush=True)


def final_evaluation(run: Run) -> list[dict[str, Any]]:
    """``final_eval_deals`` duplicate deals against each of ``final_eval_agents``: logged, printed as a table and
    written to the run directory (``evaluation.json``, ``evaluation.md``, ``evaluation.png``)."""
    from train.report import markdown_table, print_table, write_chart

    args, run_dir = run.args, run.run_dir
    print(f"\nfinal evaluation: {args.final_eval_deals} duplicate deals against each of "
          f"{', '.join(args.final_eval_agents)}", flush=True)
    table = evaluate_policy(run.net, run.game, args.final_eval_agents, args.final_eval_deals, args.seed + 10_000,
                            run_dir / "policy.safetensors", progress=True)
    for row in table:
        if row["format"] == "both formats":
            run.writer.add_scalar(f"eval/final_advantage_vs_{row['opponent']}", row["mean"], run.decisions)
    atomic_write_text(run_dir / "evaluation.json", strict_json(table, indent=1))
    atomic_write_text(run_dir / "evaluation.md", markdown_table(table) + "\n")
    print_table(table)
    config = run.config
    chart = write_chart(table, run_dir / "evaluation.png", f"{config.ruleset}, {config.num_players} players, "
                        f"{args.final_eval_deals} duplicate deals per opponent")
    print(f"chart: {chart}" if chart else "no chart: matplotlib is not installed (pip install -e '.[plot]')")
    return table
