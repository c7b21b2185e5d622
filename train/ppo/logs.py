"""What a run reports: TensorBoard scalars under ``runs/<name>`` and one printed line per update.

Tags are grouped by prefix, as CleanRL's are: ``charts/`` (learning rate, decisions per second, rewards, and
how often the learner takes each action of each decision phase, by seat and pot size: :class:`~train.ppo.phases.PhaseStats`),
``losses/`` (policy, value, entropy, KL, clip fraction, explained variance, the magnet's KL), ``pool/`` (the
learner's chips per deal against each snapshot), ``imitation/`` (behaviour cloning's losses and agreement) and
``eval/`` (duplicate evaluation, :mod:`train.ppo.evaluation`); the options are logged once as a table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from train.ppo.rollout import Rollout, RolloutTotals
    from train.ppo.setup import Run
    from train.ppo.update import UpdateStats


def log_imitation(run: Run, update: int, kept: int, losses: dict[str, float], student: float, seconds: float) -> None:
    """An update of behaviour cloning: its losses, agreement with the teacher and DAgger share."""
    args, writer, step = run.args, run.writer, run.decisions
    losses["student_share"] = student
    for key, value in losses.items():
        writer.add_scalar(f"imitation/{key}", value, step)
    writer.add_scalar("charts/decisions_per_second", kept / seconds, step)
    print(f"update {update + 1}/{run.num_updates}  decisions {step:,}  {kept / seconds:,.0f} dec/s  "
          f"imitation of {args.imitate_teacher}: loss {losses['policy_loss']:.3f}  v {losses['value_loss']:.3f}  "
          f"agreement {losses['agreement']:.3f}" + (f"  student {student:.2f}" if student else ""), flush=True)


def log_ppo_update(run: Run, update: int, rollout: Rollout, stats: UpdateStats, pool_scores: list[float],
                   totals: RolloutTotals, seconds: float) -> None:
    """A PPO update: the rollout's speed and rewards (over every rank), the losses and phase rates (rank 0's
    decisions), and the pool's scores (these at the decisions before the update, the rest after it)."""
    args, writer, step = run.args, run.writer, run.decisions
    kept = totals.kept
    for k, score in enumerate(pool_scores):
        writer.add_scalar(f"pool/learner_chips_per_deal_vs_snapshot_{k}", score, step - kept)
    writer.add_scalar("charts/learning_rate", run.optimizer.param_groups[0]["lr"], step)
    writer.add_scalar("charts/decisions_per_second", kept / seconds, step)
    writer.add_scalar("charts/stepped_decisions_per_second", totals.stepped / seconds, step)
    writer.add_scalar("charts/finish_steps", rollout.steps - args.num_steps, step)
    writer.add_scalar("charts/learner_decisions", stats.learner_decisions, step)
    writer.add_scalar("charts/chips_per_seat_per_rollout", totals.chips_per_seat, step)
    writer.add_scalar("losses/policy_loss", stats.policy_loss, step)
    writer.add_scalar("losses/value_loss", stats.value_loss, step)
    writer.add_scalar("losses/entropy", stats.entropy, step)
    if run.magnet is not None:
        writer.add_scalar("losses/magnet_kl", stats.magnet_kl, step)
    writer.add_scalar("losses/approx_kl", stats.approx_kl, step)
    writer.add_scalar("losses/old_approx_kl", stats.old_approx_kl, step)
    writer.add_scalar("losses/clipfrac", stats.clipfrac, step)
    writer.add_scalar("losses/explained_variance", stats.explained_variance, step)
    for tag, value in rollout.phase_stats.summary().items():
        writer.add_scalar(f"charts/{tag}", value, step)
    print(f"update {update + 1}/{run.num_updates}  decisions {step:,}  {kept / seconds:,.0f} dec/s  "
          f"pg {stats.policy_loss:+.3f}  v {stats.value_loss:.3f}  ent {stats.entropy:.3f}  "
          f"kl {stats.approx_kl:.4f}", flush=True)


def print_throughput(run: Run, summary: dict[str, Any]) -> None:
    """The run's last lines: decisions per second end to end over every rank (and per CPU second), and where the
    logs are."""
    args, ranks = run.args, run.world.size
    on = f"{run.threads} threads" + (f" on each of {ranks} ranks" if ranks > 1 else "")
    print(f"\ntraining throughput: {summary['decisions_per_second']:,.0f} decisions/s end to end "
          f"({args.backend} backend, {args.num_envs} sessions, {on}; "
          f"{summary['decisions_per_cpu_second']:,.0f} per CPU second)")
    print(f"run directory: {run.run_dir}\ntensorboard --logdir {run.run_dir}")
