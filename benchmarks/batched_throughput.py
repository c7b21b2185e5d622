"""Throughput of the batched engine against the reference loop (and, optionally, the PettingZoo env), any ruleset.

    python benchmarks/batched_throughput.py --ruleset mousel --seconds 3 \\
        --batch-sizes 16384,32768,65536 --modes eager,compiled --threads 1,2
    python benchmarks/batched_throughput.py --ruleset configs/rules/mouche_pamphile.yaml

``--ruleset`` takes a ruleset or a preset file (with ``--players`` and ``--rule
KEY=VALUE`` as every mauscheln command takes them); ``max_deals`` is the
config's own unless ``--max-deals`` sets it. Each mode (``eager``, ``compiled``:
``BatchedMauscheln(compile=True)``, the first reset compiles inside the
warm-up) runs at each torch thread count and batch size; the reference loop
is measured before and after them in the same run, and the ratios use the
mean of the two.

Every measured loop does what a self-play trainer does per decision: it samples
a uniformly random legal action from the mask with torch
(:func:`mauscheln_env.vector.sample_legal`), steps, and receives the next
observations and masks (computed every step, for every session). Deals/s counts
ended deals (settled, nobody went with, or thrown in).

``decisions/s`` is over the whole timed run; ``best window`` is the best of its
0.5-second windows (on a shared machine it shows what the code does when it
gets the cores); ``CPU µs/decision`` is the CPU time of this process (all
threads) and of its worker processes per decision, which other load on the
machine disturbs much less than wall time. The reference vector env and the PettingZoo env are measured on the
CPU in the same run to give the ratio. ``--workers 2`` splits the batch over
two worker processes (:class:`~mauscheln_env.vecenv.SubprocVectorEnv`), each
one batched engine on one torch thread, writing into shared memory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.evaluation.pages import cpu_model  # noqa: E402
from mauscheln_env.batched import BatchedMauscheln, keep_freed_memory  # noqa: E402
from mauscheln_env.errors import MauschelnError  # noqa: E402
from mauscheln_env.ruleargs import ArgumentParser, add_rule_arguments, config_from_namespace, fail, options_of  # noqa: E402
from mauscheln_env.vecenv import make_vector_env  # noqa: E402
from mauscheln_env.vector import ReferenceVectorEnv, VectorEnv, sample_legal  # noqa: E402

WINDOW_S = 0.5


def cpu_seconds(env: VectorEnv) -> float:
    """CPU time of this process (all threads) plus that of the env's worker processes, if any."""
    total = time.process_time()
    tick = os.sysconf("SC_CLK_TCK")
    for proc in getattr(env, "_procs", []):
        with open(f"/proc/{proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return total


def measure_vector(env: VectorEnv, seconds: float, warmup_steps: int, seed: int) -> dict[str, float]:
    """Step ``env`` with random legal actions for ``seconds``; decisions, deals and per-window rates."""
    gen = torch.Generator(device=env.device).manual_seed(seed)
    sync = torch.cuda.synchronize if env.device.type == "cuda" else (lambda: None)
    mask = env.reset(seed=seed).mask
    for _ in range(warmup_steps):
        mask = env.step(sample_legal(mask, gen)).mask
    deals = torch.zeros((), dtype=torch.int64, device=env.device)
    steps = 0
    windows: list[float] = []
    sync()
    cpu_start = cpu_seconds(env)
    start = window_start = time.perf_counter()
    window_steps = 0
    while True:
        res = env.step(sample_legal(mask, gen))
        mask = res.mask
        deals += (res.info["deal_kind"] != 0).sum()
        steps += 1
        window_steps += 1
        if window_steps % 4 == 0 or env.num_envs >= 4096:
            now = time.perf_counter()
            if now - window_start >= WINDOW_S:
                sync()
                now = time.perf_counter()
                windows.append(window_steps * env.num_envs / (now - window_start))
                window_start, window_steps = now, 0
                if now - start >= seconds:
                    break
    elapsed = time.perf_counter() - start
    cpu = cpu_seconds(env) - cpu_start
    n = steps * env.num_envs
    return {
        "cpu_us_per_decision": 1e6 * cpu / n,
        "decisions_per_s": n / elapsed,
        "deals_per_s": int(deals) / elapsed,
        "ms_per_step": 1e3 * elapsed / steps,
        "best_window": max(windows) if windows else n / elapsed,
        "median_window": statistics.median(windows) if windows else n / elapsed,
    }


def measure_pettingzoo(config: Any, seconds: float, seed: int) -> dict[str, float]:
    """The raw PettingZoo AEC env, one game, random legal actions (numpy; no torch per step)."""
    import mauscheln_env

    env = mauscheln_env.raw_env(ruleset=config.ruleset, num_players=config.num_players, **options_of(config, skip=()))
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    decisions = deals = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(200):
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.reset()
                continue
            seen = env.observe(agent)
            legal = np.flatnonzero(seen["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            decisions += 1
            deals += any(r != 0 for r in env.rewards.values())
    elapsed = time.perf_counter() - start
    return {"decisions_per_s": decisions / elapsed, "deals_per_s_lower_bound": deals / elapsed}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = ArgumentParser(prog="batched_throughput", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_rule_arguments(parser)
    parser.add_argument("--max-deals", default="config",
                        help="deals per session: a number, none, or config (the config's own; default)")
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per measurement")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, auto (cpu, plus cuda when available), or a list")
    parser.add_argument("--batch-sizes", default="4096,16384,32768,65536",
                        help="comma-separated batch sizes (on this 2-core CPU the best lie at 16384-65536)")
    parser.add_argument("--modes", default="eager,compiled", help="comma-separated: eager, compiled")
    parser.add_argument("--threads", default="1,2", help="comma-separated torch thread counts (workers use 1)")
    parser.add_argument("--workers", default="1",
                        help="comma-separated worker-process counts to measure (1: one engine in this process)")
    parser.add_argument("--copy", action="store_true",
                        help="fresh obs/mask tensors every step (default: reuse the engine's buffers)")
    parser.add_argument("--reference-envs", type=int, default=64, help="sessions in the reference vector env")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--pettingzoo", action="store_true", help="also measure the raw PettingZoo env")
    parser.add_argument("--warmup-steps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--malloc", choices=("keep", "default"), default="keep",
                        help="keep: glibc's malloc keeps freed memory for the next step, as the trainer runs "
                             "(mauscheln_env.batched.keep_freed_memory); default: the C library's own behaviour")
    return parser.parse_args(argv)


def _ints(text: str, what: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        fail("batched_throughput", f"--{what} {text!r}: allowed: comma-separated whole numbers >= 1")
    return values


def row(cells: list[Any]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sizes, threads, worker_counts = (_ints(args.batch_sizes, "batch-sizes"), _ints(args.threads, "threads"),
                                     _ints(args.workers, "workers"))
    modes = [m.strip() for m in args.modes.split(",")]
    if not modes or any(m not in ("eager", "compiled") for m in modes):
        fail("batched_throughput", f"--modes {args.modes!r}: allowed: eager, compiled or both (comma-separated)")
    try:
        fixed = {}
        if args.max_deals != "config":
            fixed["max_deals"] = (None if args.max_deals.lower() == "none" else int(args.max_deals), "--max-deals")
        config = config_from_namespace(args, **fixed)
    except (MauschelnError, ValueError) as exc:
        fail("batched_throughput", exc)
    if args.device == "auto":
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    else:
        devices = [d.strip() for d in args.device.split(",")]

    malloc = "C library default"
    if args.malloc == "keep":
        malloc = "freed memory kept" if keep_freed_memory() else "keep_freed_memory unavailable, C library default"
    shown = ", ".join(f"{k}={v}" for k, v in config.options.items())
    print(f"# batched_throughput: {config.ruleset}, {config.num_players} players, {config.num_cards} cards; {shown}; "
          f"copy={args.copy}; malloc: {malloc}")
    print(f"# torch {torch.__version__}, {os.cpu_count()} CPUs, {cpu_model()}, "
          f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for d in devices:
        if d.startswith("cuda"):
            print(f"# {d}: {torch.cuda.get_device_name(torch.device(d))}")
    print()
    print(row(["engine", "threads", "device", "workers", "batch", "decisions/s", "best window", "deals/s", "ms/step",
               "CPU µs/decision"]))
    print(row(["---"] * 2 + ["---"] + ["---:"] * 7))

    refs: list[dict[str, float]] = []

    def reference() -> None:
        torch.set_num_threads(1)
        env = ReferenceVectorEnv(config, args.reference_envs, seed=args.seed)
        r = measure_vector(env, args.seconds, 2, args.seed)
        refs.append(r)
        print(row(["reference loop", 1, "cpu", 1, args.reference_envs, f"{r['decisions_per_s']:,.0f}",
                   f"{r['best_window']:,.0f}", f"{r['deals_per_s']:,.0f}", f"{r['ms_per_step']:.2f}",
                   f"{r['cpu_us_per_decision']:.2f}"]), flush=True)

    if not args.no_reference:
        reference()
    best: dict[str, tuple[float, float]] = {}
    for mode in modes:
        for t in threads:
            for device in devices:
                for workers in worker_counts:
                    if workers > 1 and (device != "cpu" or t > 1):
                        continue
                    for B in sizes:
                        torch.set_num_threads(t)
                        if mode == "compiled":  # torch.compile counts recompiles over every engine: start afresh
                            torch._dynamo.reset()
                        kwargs = {"copy": args.copy, "compile": mode == "compiled"}
                        if workers == 1:
                            env = BatchedMauscheln(config, B, device=device, seed=args.seed, **kwargs)
                        else:
                            env = make_vector_env(config, B, device=device, seed=args.seed, workers=workers, **kwargs)
                        r = measure_vector(env, args.seconds, args.warmup_steps, args.seed)
                        env.close()
                        del env
                        key = f"{mode} {device}"
                        old = best.get(key, (0.0, float("inf")))
                        best[key] = (max(old[0], r["decisions_per_s"]), min(old[1], r["cpu_us_per_decision"]))
                        print(row([f"batched, {mode}", t, device, workers, B, f"{r['decisions_per_s']:,.0f}",
                                   f"{r['best_window']:,.0f}", f"{r['deals_per_s']:,.0f}", f"{r['ms_per_step']:.2f}",
                                   f"{r['cpu_us_per_decision']:.2f}"]), flush=True)
    if not args.no_reference:
        reference()
    if args.pettingzoo:
        pz = measure_pettingzoo(config, args.seconds, args.seed)
        print(row(["PettingZoo raw_env", 1, "cpu", 1, 1, f"{pz['decisions_per_s']:,.0f}", "",
                   f"≥{pz['deals_per_s_lower_bound']:,.0f}", "", ""]), flush=True)
    print()
    if refs:
        ref_rate = statistics.mean(r["decisions_per_s"] for r in refs)
        ref_cpu = statistics.mean(r["cpu_us_per_decision"] for r in refs)
        for key, (rate, cpu) in best.items():
            print(f"best {key}: {rate:,.0f} decisions/s = {rate / ref_rate:.1f}x the reference loop "
                  f"({ref_rate:,.0f}); CPU per decision {ref_cpu / cpu:.1f}x less ({cpu:.2f} vs {ref_cpu:.2f} µs)")
    print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
