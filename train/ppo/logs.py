"""What a run reports: TensorBoard scalars under ``runs/<name>`` and one printed line per update.

Tags are grouped by prefix, as CleanRL's are: ``charts/`` (learning rate, decisions per second, rewards, and
how often the learner takes each action of each decision phase, by seat and pot size: :class:`PhaseStats`),
``losses/`` (policy, value, entropy, KL, clip fraction, explained variance, the magnet's KL), ``pool/`` (the
learner's chips per deal against each snapshot), ``imitation/`` (behaviour cloning's losses and agreement) and
``eval/`` (duplicate evaluation, :mod:`train.ppo.evaluation`); the options are logged once as a table.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import torch

from mauscheln_env.engine import Game

if TYPE_CHECKING:
    from train.ppo.rollout import Rollout, RolloutTotals
    from train.ppo.setup import Run
    from train.ppo.update import UpdateStats
    from train.ppo_selfplay import Args


def log_hyperparameters(writer: Any, args: Args) -> None:
    """The options as a markdown table (TensorBoard's text tab)."""
    writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
        f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()))


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


class PhaseStats:
    """How often the learner takes each action of each decision phase, by seat (relative to the dealer) and
    pot size: declare ``mauscheln`` or ``pass``, go with, knock, Mousel's ``in`` / ``out``, Mouche's and
    Muschka's ``stay`` / ``pass``, trump naming, the exchange (``card``: a card marked, ``done``). Every phase
    but the trick play is counted, every action by its string (card actions together as ``card``), so each
    ruleset gets its own rates without a rule of its own here. TensorBoard tags
    ``charts/<phase>/<action>_rate/{all, seat_after_dealer_<p>, pot_lt_8, pot_8_23, pot_ge_24}``.
    """

    BUCKETS = ("pot_lt_8", "pot_8_23", "pot_ge_24")

    def __init__(self, game: Game) -> None:
        from mauscheln_env.observation import Observer

        self.game = game
        observer = Observer(game)
        self.phase_slice = observer.slice("phase")
        self.dealer_slice = observer.slice("dealer")
        self.pot_index = observer.offsets.get("pot")
        self.scale = float(game.config.options.get("bankroll", 1))
        self.phases = [(k, name) for k, name in enumerate(game.spec.phases) if name != "play"]
        named = {i: name for name, i in game.action_ids.items()}  # the others are cards
        self.labels = [named.get(i, "card") for i in range(game.num_actions)]
        self.counts: dict[str, torch.Tensor] = {}  # per phase: int64[A, n, 3] learner decisions

    def record(self, obs: torch.Tensor, action: torch.Tensor, seat: torch.Tensor, learner: torch.Tensor) -> None:
        phase = obs[:, self.phase_slice].argmax(1)
        has_phase = obs[:, self.phase_slice].sum(1) > 0
        dealer_rel = obs[:, self.dealer_slice].argmax(1)  # the dealer, seen from the acting seat
        position = (-dealer_rel) % self.game.n  # acting seat's place after the dealer: 0 = dealer
        pot = obs[:, self.pot_index] * self.scale if self.pot_index is not None else torch.zeros_like(phase, dtype=torch.float)
        bucket = torch.where(pot < 8, 0, torch.where(pot < 24, 1, 2))
        n, a = self.game.n, self.game.num_actions
        cell = (action * n + position) * 3 + bucket
        for k, name in self.phases:  # one count per (action, position, pot bucket), summed on the tensors
            sel = learner & has_phase & (phase == k)  # counted by weight, not selected: no read-back on CUDA
            counts = torch.zeros(a * n * 3, dtype=torch.long, device=cell.device).index_add_(
                0, cell, sel.long()).view(a, n, 3)
            if name in self.counts:
                self.counts[name] += counts
            else:
                self.counts[name] = counts

    def summary(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for phase, counts in self.counts.items():
            grouped: dict[str, torch.Tensor] = {}
            for action, label in enumerate(self.labels):
                grouped[label] = grouped.get(label, 0) + counts[action].double()
            total = counts.sum(0).double()  # [n, 3]
            if total.sum() == 0:
                continue
            for label, hits in grouped.items():
                if hits.sum() == 0:
                    continue
                tag = f"{phase}/{label}_rate"
                rows = {f"{tag}/all": (hits.sum(), total.sum())}
                rows.update({f"{tag}/seat_after_dealer_{p}": (hits[p].sum(), total[p].sum())
                             for p in range(self.game.n)})
                rows.update({f"{tag}/{b}": (hits[:, k].sum(), total[:, k].sum()) for k, b in enumerate(self.BUCKETS)})
                out.update({key: float(h / t) for key, (h, t) in rows.items() if t > 0})
        return out
