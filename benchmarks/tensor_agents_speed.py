"""Decisions per second of the tensor ``beginner`` and ``expert`` (agents/tensor) against the Python agents.

    python benchmarks/tensor_agents_speed.py                      # every ruleset, default tables
    python benchmarks/tensor_agents_speed.py --rulesets mousel --decisions 2048 --out /tmp/speed.png

Per ruleset (its default table) it records the decisions of seeded sessions of
Python experts and random agents (every decision, forced ones included, as a
trainer meets them), then times in the same run, on the same decisions:

* the Python agent (``act(obs, mask, info)`` per decision, one call each);
* the tensor agent (``act(obs, mask)`` over batches of ``--batch`` rows) with 1
  and with 2 torch threads.

Prints decisions/s and the ratio tensor / Python, and writes a bar chart
(``--out``, default benchmarks/tensor_agents_speed.png) and the figures as JSON
beside it. Speed is stated as ratios against the Python agent measured in the
same run: absolute figures on a shared machine vary with its load.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import MatchRunner, agent_seed  # noqa: E402
from agents.evaluation.charts import pyplot, save_png  # noqa: E402
from agents.scripted.baselines import BeginnerAgent, ExpertAgent, RandomAgent  # noqa: E402
from agents.tensor import tensor_agent  # noqa: E402
from mauscheln_env import Game, make_config  # noqa: E402
from mauscheln_env.config import RULESETS  # noqa: E402
from mauscheln_env.files import atomic_write_text, strict_json  # noqa: E402

LEVELS = {"beginner": BeginnerAgent, "expert": ExpertAgent}


def record(game: Game, count: int, seed: int) -> list[tuple[int, np.ndarray, np.ndarray, dict]]:
    """``count`` decisions ``(seat, obs, mask, info)`` of seeded sessions of experts and random agents."""
    out: list[tuple[int, np.ndarray, np.ndarray, dict]] = []
    rng = np.random.default_rng(seed)
    runner = MatchRunner(game)
    session = 0
    while len(out) < count:
        lineup = [ExpertAgent() if rng.random() < 0.5 else RandomAgent() for _ in range(game.n)]
        runner.play(lineup, dealer=int(rng.integers(game.n)), session_seed=seed * 10_000 + session,
                    seed_for=lambda k, s, session=session: agent_seed(seed, session, k, s),
                    on_decision=lambda st, seat, obs, mask, info, a: out.append((seat, obs.copy(), mask.copy(),
                                                                                 dict(info))))
        session += 1
    return out[:count]


def time_python(game: Game, level: str, decisions: list, repeats: int) -> float:
    """Decisions/s of the Python agent, the median of ``repeats`` passes."""
    agents = [LEVELS[level](seed=0) for _ in range(game.n)]
    for seat, agent in enumerate(agents):
        agent.setup(game, seat)
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for seat, obs, mask, info in decisions:
            agents[seat].act(obs, mask, info)
        rates.append(len(decisions) / (time.perf_counter() - t0))
    return statistics.median(rates)


def time_tensor(game: Game, level: str, decisions: list, batch: int, threads: int, repeats: int) -> float:
    """Decisions/s of the tensor agent over batches of ``batch`` rows, the median of ``repeats`` passes."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        agent = tensor_agent(level, game)
        obs = torch.from_numpy(np.stack([d[1] for d in decisions]))
        mask = torch.from_numpy(np.stack([d[2] for d in decisions]))
        agent.act(obs[:batch], mask[:batch])  # warm-up
        rates = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for i in range(0, len(decisions), batch):
                agent.act(obs[i:i + batch], mask[i:i + batch])
            rates.append(len(decisions) / (time.perf_counter() - t0))
        return statistics.median(rates)
    finally:
        torch.set_num_threads(before)


def chart(rows: list[dict], path: Path, title: str) -> bool:
    """The speed chart as a PNG at ``path``; False (no chart) without matplotlib."""
    plt = pyplot()
    if plt is None:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=False)
    for ax, level in zip(axes, LEVELS):
        mine = [r for r in rows if r["level"] == level]
        names = [r["ruleset"] for r in mine]
        x = np.arange(len(mine))
        w = 0.27
        series = [("Python agent", "python", "tab:grey"), ("tensor, 1 thread", "tensor_1", "tab:blue"),
                  ("tensor, 2 threads", "tensor_2", "tab:orange")]
        for k, (label, key, color) in enumerate(series):
            vals = [r[key] for r in mine]
            bars = ax.bar(x + (k - 1) * w, vals, w, label=label, color=color)
            if key != "python":
                for b, r in zip(bars, mine):
                    ax.text(b.get_x() + b.get_width() / 2, b.get_height(), f"{r[key] / r['python']:.1f}x",
                            ha="center", va="bottom", fontsize=7)
        ax.set_yscale("log")
        ax.set_xticks(x, names, fontsize=8, rotation=15)
        ax.set_ylabel("decisions / s (log)")
        ax.set_title(f"{level}: tensor vs Python (ratio above the bars)")
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    save_png(fig, path)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rulesets", nargs="+", default=list(RULESETS), choices=list(RULESETS))
    parser.add_argument("--levels", nargs="+", default=list(LEVELS), choices=list(LEVELS))
    parser.add_argument("--decisions", type=int, default=4096, help="decisions recorded per ruleset")
    parser.add_argument("--batch", type=int, default=1024, help="rows per tensor call")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("tensor_agents_speed.png"))
    args = parser.parse_args(argv)
    for name in ("decisions", "batch", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name}={getattr(args, name)} is not allowed; allowed: a whole number >= 1")
    rows = []
    print(f"{'ruleset':18} {'level':8} {'python/s':>9} {'tensor 1t/s':>12} {'ratio':>6} {'tensor 2t/s':>12} "
          f"{'ratio':>6}  decisions", flush=True)
    for ruleset in args.rulesets:
        game = Game(make_config(ruleset, max_deals=8))
        decisions = record(game, args.decisions, args.seed)
        for level in args.levels:
            py = time_python(game, level, decisions, args.repeats)
            t1 = time_tensor(game, level, decisions, args.batch, 1, args.repeats)
            t2 = time_tensor(game, level, decisions, args.batch, 2, args.repeats)
            kind = type(tensor_agent(level, game)).__name__
            rows.append({"ruleset": ruleset, "players": game.n, "level": level, "tensor_class": kind,
                         "python": py, "tensor_1": t1, "tensor_2": t2, "decisions": len(decisions)})
            print(f"{ruleset:18} {level:8} {py:9.0f} {t1:12.0f} {t1 / py:5.1f}x {t2:12.0f} {t2 / py:5.1f}x  "
                  f"{len(decisions)} ({kind})", flush=True)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    title = (f"tensor agents vs Python agents, default tables, batches of {args.batch}, "
             f"{args.decisions} decisions per ruleset, {stamp}")
    atomic_write_text(args.out.with_suffix(".json"), strict_json({"title": title, "rows": rows}, indent=2))
    if chart(rows, args.out, title):
        print(f"wrote {args.out} and {args.out.with_suffix('.json')}")
    else:
        print(f"wrote {args.out.with_suffix('.json')} (matplotlib is not installed: no chart)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
