#!/usr/bin/env bash
# The GPU checks, in one script for a machine with a CUDA GPU (run from anywhere; about 10 minutes):
#   1. the CUDA tests (the engine, the tensor agents and training on the device against the CPU);
#   2. the batched engine's throughput per ruleset on the GPU at batch sizes up to 4,194,304 sessions, and on the
#      CPU at 65,536 (benchmarks/batched_throughput.py, the same code on both);
#   3. how many synchronising CUDA calls (device-to-host reads) a training rollout makes per step, trainer and
#      engine together (torch.cuda.set_sync_debug_mode);
#   4. training decisions/s end to end (mauscheln train, configs/train/fast.yaml) on the GPU at 2,048 and 32,768
#      sessions, against the CPU at 2,048, and one profiled GPU run (where an update's time goes).
# Every figure is printed with the card's name, the torch and CUDA versions, the commit and the date.
# PYTHON=... picks the interpreter (default: .venv/bin/python, else python3); a torch build with CUDA is needed.
# GPU_CHECK_QUICK=1 runs one ruleset and smaller batches (a first look in a few minutes).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
unset RAY_ADDRESS
failed=0

if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  echo "gpu_check: torch sees no CUDA device here ($("$PY" -c 'import torch; print(torch.__version__)')); run it on a GPU machine with a CUDA build of torch" >&2
  exit 2
fi
RULESETS=(mauscheln mauscheln_classic mousel mouche muschka)
GPU_SIZES=65536,262144,1048576,4194304
TRAIN_BIG=32768
if [ "${GPU_CHECK_QUICK:-0}" = 1 ]; then RULESETS=(mauscheln); GPU_SIZES=65536,1048576; TRAIN_BIG=16384; fi
THREADS=$(nproc)

"$PY" - <<'EOF'
import os, platform, subprocess, time, torch
props = torch.cuda.get_device_properties(0)
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
print(f"# gpu_check: {torch.cuda.get_device_name(0)} ({props.total_memory / 2**30:.0f} GiB, {torch.cuda.device_count()} "
      f"device(s)); torch {torch.__version__}, CUDA {torch.version.cuda}; {os.cpu_count()} CPUs "
      f"{platform.processor() or platform.machine()}; commit {commit or 'unknown'}; "
      f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
EOF
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv

echo; echo "## 1. CUDA tests"
"$PY" -m pytest -q -n 0 -m "slow or not slow" -k cuda -p no:cacheprovider \
  tests/test_batched_api.py tests/test_batched_expert.py tests/test_tensor_agents.py tests/test_train_cuda.py \
  || failed=1

echo; echo "## 2. The batched engine: decisions/s per ruleset (eager; GPU up to ${GPU_SIZES##*,} sessions, CPU at 65536 on $THREADS threads)"
for ruleset in "${RULESETS[@]}"; do
  echo "### $ruleset"
  "$PY" benchmarks/batched_throughput.py --ruleset "$ruleset" --device cuda --batch-sizes "$GPU_SIZES" \
    --modes eager --threads 1 --no-reference --seconds 3 || failed=1
  "$PY" benchmarks/batched_throughput.py --ruleset "$ruleset" --device cpu --batch-sizes 65536 \
    --modes eager --threads "$THREADS" --no-reference --seconds 3 || failed=1
done
echo "### compiled on the GPU (mauscheln, 1,048,576 sessions; the first step compiles)"
"$PY" benchmarks/batched_throughput.py --ruleset mauscheln --device cuda --batch-sizes 1048576 \
  --modes compiled --threads 1 --no-reference --seconds 3 || failed=1

echo; echo "## 3. Synchronising CUDA calls per rollout step (trainer and engine; 4,096 sessions, pool and expert opponents)"
"$PY" - <<'EOF' || failed=1
import tempfile, warnings, torch
from train.ppo.interrupt import StopOnInterrupt
from train.ppo.rollout import collect_rollout
from train.ppo.seeds import update_generators
from train.ppo.setup import start_run
from train.ppo_selfplay import parse_args

with tempfile.TemporaryDirectory() as tmp:
    args = parse_args(["--device", "cuda", "--num-envs", "4096", "--num-steps", "32", "--hidden", "128", "128",
                       "--baseline-opponents", "expert", "--self-play-prob", "0.3", "--run-dir", f"{tmp}/run",
                       "--final-eval-deals", "0"])
    run = start_run(args, StopOnInterrupt())
    run.pool.add(run.net, 2)  # a snapshot, so that pool opponents play too
    gen, rng = update_generators(run.seed, 0)
    collect_rollout(run, 0, gen, rng)  # warm-up
    gen, rng = update_generators(run.seed, 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        rollout = collect_rollout(run, 1, gen, rng)
        torch.cuda.set_sync_debug_mode("default")
    syncs = [w for w in caught if "synchroniz" in str(w.message)]
    where = {}
    for w in syncs:
        key = f"{w.filename.split('site-packages/')[-1].split('/work/')[-1]}:{w.lineno}"
        where[key] = where.get(key, 0) + 1
    print(f"{len(syncs)} synchronising calls in {rollout.steps} steps ({len(syncs) / rollout.steps:.1f} per step); "
          f"by place:")
    for key, count in sorted(where.items(), key=lambda kv: -kv[1])[:25]:
        print(f"  {count:6d}  {key}")
    run.writer.close()
EOF

echo; echo "## 4. Training decisions/s end to end (fast.yaml, mauscheln, 3 updates, no evaluation)"
train() {  # label, flags...
  local label=$1; shift
  local dir; dir=$(mktemp -d)
  local line
  line=$("$PY" -m train.ppo_selfplay --config configs/train/fast.yaml --ruleset mauscheln --max-updates 3 \
         --final-eval-deals 0 --run-dir "$dir/run" "$@" 2>&1 | tee "$dir/log" | grep '^training throughput' || true)
  if [ -z "$line" ]; then echo "$label: failed"; tail -20 "$dir/log"; failed=1; else echo "$label: $line"; fi
  rm -rf "$dir"
}
train "GPU, 2048 sessions" --device cuda --threads 1
train "GPU, $TRAIN_BIG sessions" --device cuda --threads 1 --num-envs "$TRAIN_BIG"
train "CPU, 2048 sessions, $THREADS threads" --device cpu --threads "$THREADS"
echo "### where the time goes on the GPU ($TRAIN_BIG sessions; --profile waits for the device at every part)"
dir=$(mktemp -d)
"$PY" -m train.ppo_selfplay --config configs/train/fast.yaml --ruleset mauscheln --max-updates 3 --final-eval-deals 0 \
  --device cuda --threads 1 --num-envs "$TRAIN_BIG" --profile --run-dir "$dir/run" 2>&1 | grep -E '^profile|^update' || failed=1
rm -rf "$dir"

echo; [ $failed = 0 ] && echo "gpu_check: every step ran" || echo "gpu_check: some step failed (see above)"
exit $failed
