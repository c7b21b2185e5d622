"""Throughput of the batched engine against the reference loop (and, optionally, the PettingZoo env).

Every measured loop does what a self-play trainer does per decision: it samples
a uniformly random legal action from the mask with torch
(:func:`mauscheln_env.vector.sample_legal`), steps, and receives the next
observations and masks (computed every step, for every session). Deals/s counts
ended deals (settled, nobody went with, or thrown in).

    python benchmarks/batched_throughput.py --seconds 5 --players 4 \\
        --device cpu --batch-sizes 1024,4096,8192,16384,65536 --threads 2 --compile

``--compile`` measures ``BatchedMauscheln(compile=True)`` (the step's kernels
through ``torch.compile``; the first reset compiles, inside the warm-up).

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
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mauscheln_env import make_config  # noqa: E402
from mauscheln_env.batched import BatchedMauscheln  # noqa: E402
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


def measure_pettingzoo(config_kwargs: dict, seconds: float, seed: int) -> dict[str, float]:
    """The raw PettingZoo AEC env, one game, random legal actions (numpy; no torch per step)."""
    import mauscheln_env

    env = mauscheln_env.raw_env(**config_kwargs)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds per measurement")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--device", default="auto", help="cpu, cuda, or auto (cpu, plus cuda when available)")
    parser.add_argument("--batch-sizes", default="256,1024,4096,16384,65536")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="torch.set_num_threads in this process (workers always use 1)")
    parser.add_argument("--workers", default="1",
                        help="comma-separated worker-process counts to measure (1: one engine in this process)")
    parser.add_argument("--knock", action="store_true", help="play with the knock option")
    parser.add_argument("--max-deals", type=int, default=1)
    parser.add_argument("--compile", action="store_true",
                        help="torch.compile the engine's step and observation kernels (BatchedMauscheln(compile=True))")
    parser.add_argument("--copy", action="store_true",
                        help="fresh obs/mask tensors every step (default: reuse the engine's buffers)")
    parser.add_argument("--reference-envs", type=int, default=64, help="sessions in the reference vector env")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--pettingzoo", action="store_true", help="also measure the raw PettingZoo env")
    parser.add_argument("--warmup-steps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    worker_counts = [int(k) for k in args.workers.split(",")]
    torch.set_num_threads(args.threads)
    if args.device == "auto":
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    else:
        devices = [d.strip() for d in args.device.split(",")]
    sizes = [int(b) for b in args.batch_sizes.split(",")]
    options = {"knock": args.knock, "max_deals": args.max_deals}
    config = make_config("mauscheln", args.players, **options)

    print(f"# batched_throughput: mauscheln, {args.players} players, {config.num_cards} cards, "
          f"knock={args.knock}, max_deals={args.max_deals}, copy={args.copy}, compile={args.compile}")
    print(f"# torch {torch.__version__}, threads={torch.get_num_threads()} (interop {torch.get_num_interop_threads()}), "
          f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}, "
          f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for d in devices:
        if d.startswith("cuda"):
            print(f"# {d}: {torch.cuda.get_device_name(torch.device(d))}")
    print()
    print("| engine | device | workers | batch | decisions/s | best window | deals/s | ms/step | CPU µs/decision |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    best = 0.0
    for device in devices:
        for workers in worker_counts:
            if workers > 1 and device != "cpu":
                continue
            for B in sizes:
                if workers == 1:
                    env = BatchedMauscheln(config, B, device=device, seed=args.seed, copy=args.copy,
                                           compile=args.compile)
                else:
                    env = make_vector_env(config, B, device=device, seed=args.seed, workers=workers, copy=args.copy,
                                          compile=args.compile)
                r = measure_vector(env, args.seconds, args.warmup_steps, args.seed)
                best = max(best, r["decisions_per_s"])
                cpu = f"{r['cpu_us_per_decision']:.2f}"
                print(f"| batched | {device} | {workers} | {B} | {r['decisions_per_s']:,.0f} | {r['best_window']:,.0f} | "
                      f"{r['deals_per_s']:,.0f} | {r['ms_per_step']:.2f} | {cpu} |", flush=True)
                env.close()
                del env
    ref = None
    if not args.no_reference:
        env = ReferenceVectorEnv(config, args.reference_envs, seed=args.seed)
        ref = measure_vector(env, args.seconds, 2, args.seed)
        print(f"| reference loop | cpu | 1 | {args.reference_envs} | {ref['decisions_per_s']:,.0f} | "
              f"{ref['best_window']:,.0f} | {ref['deals_per_s']:,.0f} | {ref['ms_per_step']:.2f} | "
              f"{ref['cpu_us_per_decision']:.2f} |", flush=True)
    if args.pettingzoo:
        pz = measure_pettingzoo({"num_players": args.players, **options}, args.seconds, args.seed)
        print(f"| PettingZoo raw_env | cpu | 1 | 1 | {pz['decisions_per_s']:,.0f} | | "
              f"≥{pz['deals_per_s_lower_bound']:,.0f} | | |", flush=True)
    print()
    if ref is not None:
        print(f"best batched / reference loop: {best / ref['decisions_per_s']:.1f}x")
    print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
