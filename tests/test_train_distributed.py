"""Data-parallel training on torch.distributed (gloo, CPU): ranks that stay identical, a killed rank, exact resume.

A 2-rank run (``--nproc 2``, PyTorch's elastic launcher in the command's process) with ``--check-sync`` compares
a hash of the parameters across the ranks after every update and fails on a difference; it covers imitation
with DAgger, the magnet, pool snapshots and a scripted baseline, and the early stop on the KL averaged over the
ranks. The same run with rank 1 killed from outside ends with one line naming the rank, its last checkpoint
loads, and resumed it ends bit-identical to the uninterrupted run. A one-process run (``--nproc 1``) reaches
the golden parameters of :mod:`tests.test_train_golden`. The slow tests run the same 2-rank run as two
``torchrun`` nodes meeting by c10d rendezvous on 127.0.0.1, and as Ray Train workers on a local Ray cluster (a
head and a worker node started with ``ray start``); each trains, checkpoints, resumes and ends where the
``--nproc 2`` run ends.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_train_golden import GOLDEN_RUNS, check_golden, fingerprint, run_golden

ROOT = Path(__file__).resolve().parents[1]

PLAIN = ["--seed", "3", "--num-envs", "32", "--num-steps", "16", "--total-decisions", "5120", "--hidden", "32",
         "--num-minibatches", "2", "--update-epochs", "2", "--pool-size", "2", "--pool-every", "2",
         "--checkpoint-every", "1", "--final-eval-deals", "0", "--baseline-opponents", "expert",
         "--self-play-prob", "0.5"]
FLAGS = [*PLAIN, "--imitate-decisions", "1024", "--imitate-student", "0.5", "--magnet", "imitation",
         "--magnet-coef", "0.5", "--target-kl", "0.02"]
"""Ten updates of 32 sessions: two of imitation (the second with DAgger sessions), then PPO pulled towards the
clone against pool snapshots and the tensor expert, stopping its epochs on the KL averaged over the ranks."""
UPDATES = 10


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    env.update(extra)
    return env


def _train(*flags: str, timeout: int = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "train.ppo_selfplay", *flags], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=env or _env())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """The uninterrupted 2-rank run, its parameters compared across the ranks after every update."""
    run_dir = tmp_path_factory.mktemp("two_ranks") / "run"
    proc = _train(*FLAGS, "--nproc", "2", "--check-sync", "--run-dir", str(run_dir))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return run_dir, proc


def test_two_ranks_keep_identical_parameters_after_every_update(two_ranks):
    run_dir, proc = two_ranks
    assert "2 ranks of 16 sessions" in proc.stdout
    assert f"update {UPDATES}/{UPDATES}" in proc.stdout and "imitation of expert" in proc.stdout
    lines = [line for line in proc.stdout.splitlines() if line.startswith("training throughput:")]
    assert len(lines) == 1 and "1 threads on each of 2 ranks" in lines[0], proc.stdout[-2000:]
    assert (run_dir / "checkpoints" / "latest").read_text() == f"update_{UPDATES:06d}"
    assert (run_dir / "magnet.safetensors").is_file() and (run_dir / "policy.safetensors").is_file()
    assert len(list(run_dir.glob("events.out.tfevents*"))) == 1  # rank 0 alone logs
    assert fingerprint(run_dir)["decisions"] > UPDATES * 32 * 16 // 2


def test_check_sync_stops_a_run_whose_ranks_differ(monkeypatch):
    """--check-sync gathers every rank's parameter hash: a rank that differs stops the run, naming the ranks."""
    import torch
    import torch.distributed as dist

    from train.ppo.distributed import World, parameter_digest

    net = torch.nn.Linear(3, 2)
    mine = parameter_digest(net)

    def gather(out, obj):
        out[:] = [obj, "0" * 64]

    monkeypatch.setattr(dist, "all_gather_object", gather)
    with pytest.raises(RuntimeError, match=r"after update 4 the parameters differ across the ranks \(rank 0: "
                                           + mine[:12] + r", rank 1: 000000000000\)"):
        World(rank=0, size=2).check_same_parameters(net, 4)
    monkeypatch.setattr(dist, "all_gather_object", lambda out, obj: out.__setitem__(slice(None), [obj, obj]))
    World(rank=0, size=2).check_same_parameters(net, 4)


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


def _rank_pid(launcher: int, rank: int) -> int | None:
    for child in _children(launcher):
        try:
            env = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"RANK={rank}".encode() in env:
            return child
    return None


def test_a_rank_killed_from_outside_ends_the_run_and_the_run_resumes_exactly(two_ranks, tmp_path):
    """Rank 1 killed by SIGKILL after the second checkpoint: the launcher stops rank 0 and says, in one line,
    which rank died and where the last checkpoint is; that checkpoint loads, and the run resumed from it ends
    bit-identical to the uninterrupted run."""
    import torch

    from agents.learned import read_policy
    from mauscheln_env import Game, make_config
    from train.ppo.checkpoint import load_checkpoint

    run_dir = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "train.ppo_selfplay", *FLAGS, "--nproc", "2",
                             "--run-dir", str(run_dir)], cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not (run_dir / "checkpoints" / "update_000002").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        victim = _rank_pid(proc.pid, 1)
        assert victim is not None
        os.kill(victim, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, (out[-2000:], err[-3000:])
    latest = (run_dir / "checkpoints" / "latest").read_text()
    assert int(latest.split("_")[1]) < UPDATES, "the run ended before rank 1 was killed"
    said = err.strip().splitlines()[-1]
    assert re.fullmatch(rf"mauscheln train: rank 1 \(pid {victim}\) was killed by SIGKILL; the run stopped on every "
                        rf"rank; the last checkpoint is {re.escape(str(run_dir))}/checkpoints/{latest}; resume with: "
                        rf"mauscheln train --resume {re.escape(str(run_dir))}", said), said
    net = read_policy(run_dir / "checkpoints" / latest / "policy.safetensors")[0]
    game = Game(make_config("mauscheln", 4, max_deals=3))
    update, pool, _ = load_checkpoint(run_dir, net, torch.optim.Adam(net.parameters()), game, world_size=2)
    assert update == int(latest.split("_")[1]) and len(pool) <= 2
    resumed = _train("--resume", str(run_dir))  # on the 2 ranks its checkpoint records
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "2 ranks of 16 sessions" in resumed.stdout
    assert fingerprint(run_dir) == fingerprint(two_ranks[0])


def test_ctrl_c_stops_every_rank_after_the_update_with_a_checkpoint(tmp_path):
    """Ctrl-C to the command (the ranks run in sessions of their own: the launcher passes it on): every rank
    finishes the update, rank 0 writes a checkpoint, and the command says so and exits 130."""
    run_dir = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "train.ppo_selfplay", *PLAIN, "--checkpoint-every", "1000",
                             "--total-decisions", "512000", "--nproc", "2", "--run-dir", str(run_dir)], cwd=ROOT,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not list(run_dir.glob("events.out.tfevents*")) or _rank_pid(proc.pid, 1) is None:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        time.sleep(1.0)
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, (out[-2000:], err[-3000:])
    said = err.strip().splitlines()
    latest = (run_dir / "checkpoints" / "latest").read_text()
    update = int(latest.split("_")[1])
    assert said == [f"mauscheln train: interrupted after update {update}/1000, checkpoint written; resume with: "
                    f"mauscheln train --resume {run_dir}"], err[-3000:]
    assert f"update {update}/1000" in out and f"update {update + 1}/1000" not in out


def test_resume_on_another_number_of_ranks_is_refused(two_ranks, tmp_path, capsys):
    """Each rank's sessions and seeds depend on the number of ranks: a run continues only on as many."""
    from train.ppo_selfplay import main

    run_dir = two_ranks[0]
    assert main(["--resume", str(run_dir), "--nproc", "1"]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "was trained by 2 ranks" in said[0] and "this launch has 1" in said[0] \
        and "allowed: --nproc 2" in said[0], said
    one = tmp_path / "one"
    assert main([*PLAIN, "--max-updates", "1", "--run-dir", str(one)]) == 0
    capsys.readouterr()
    assert main(["--resume", str(one), "--nproc", "2"]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "was trained by 1 rank " in said[0] and "allowed: --nproc 1 (one process)" in said[0]


def test_sessions_must_split_evenly_over_the_ranks(tmp_path, capsys):
    from train.ppo_selfplay import main

    assert main([*FLAGS, "--num-envs", "30", "--nproc", "4", "--run-dir", str(tmp_path / "run")]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert said == ["mauscheln train: error: num_envs=30 does not split evenly over 4 ranks; allowed: a multiple of 4 "
                    "(each rank steps num_envs / 4 sessions), e.g. 28 or 32"]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("name", sorted(GOLDEN_RUNS))
def test_one_rank_reaches_the_golden_parameters(tmp_path, name):
    """``--nproc 1`` is the one-process trainer: it ends with exactly the recorded checkpoint."""
    check_golden(name, run_golden(name, tmp_path / "run", extra=["--nproc", "1"]))


# ---------------------------------------------------------------------------- other launchers (slow)
@pytest.mark.slow
def test_two_torchrun_nodes_train_checkpoint_and_resume_exactly(two_ranks, tmp_path):
    """Two ``torchrun`` processes (``--nnodes 2 --nproc-per-node 1``) meet by c10d rendezvous on 127.0.0.1:
    they train four updates and stop with a checkpoint, then two more resume the run to its end, bit-identical
    to the ``--nproc 2`` run."""
    run_dir = tmp_path / "run"

    def both(*flags: str) -> list[subprocess.CompletedProcess]:
        port, run_id = _free_port(), secrets.token_hex(4)
        nodes = [subprocess.Popen(
            [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "1",
             "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", run_id,
             "--rdzv-conf", f"is_host={int(node == 0)}", "--local-addr", "127.0.0.1", "--max-restarts", "0",
             "-m", "train.ppo_selfplay", *flags], cwd=ROOT, env=_env(GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for node in (0, 1)]
        done = []
        for node in nodes:
            out, err = node.communicate(timeout=400)
            done.append(subprocess.CompletedProcess(node.args, node.returncode, out, err))
        return done

    first = both(*FLAGS, "--run-dir", str(run_dir), "--max-updates", "4")
    assert all(p.returncode == 0 for p in first), [p.stderr[-2000:] for p in first]
    assert sum("2 ranks of 16 sessions" in p.stdout for p in first) == 1  # rank 0 alone speaks
    assert (run_dir / "checkpoints" / "latest").read_text() == "update_000004"
    second = both("--resume", str(run_dir))
    assert all(p.returncode == 0 for p in second), [p.stderr[-2000:] for p in second]
    assert fingerprint(run_dir) == fingerprint(two_ranks[0])


@pytest.mark.slow
def test_a_ray_cluster_trains_checkpoints_and_resumes_exactly(two_ranks, tmp_path):
    """A local Ray cluster (``ray start --head`` and a worker node ``ray start --address``, one CPU each, a token
    of their own): ``--ray-address`` trains four updates as two Ray Train workers and stops with a checkpoint in
    the run directory; resumed there, the run ends bit-identical to the ``--nproc 2`` run. The cluster's
    processes are stopped at the end (the two ``ray start --block`` processes stop their nodes)."""
    pytest.importorskip("ray.train.torch")
    ray = str(Path(sys.executable).with_name("ray"))
    port = _free_port()
    temp = Path(os.path.realpath("/tmp")) / f"mauscheln-ray-{secrets.token_hex(3)}"  # short: Ray's socket paths
    env = _env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32), RAY_USAGE_STATS_ENABLED="0")
    common = ["--block", "--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats"]
    nodes = [subprocess.Popen([ray, "start", "--head", "--port", str(port), "--include-dashboard", "false",
                               "--temp-dir", str(temp), *common], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)]
    try:
        _wait_for_cpus(ray, port, env, 1)
        nodes.append(subprocess.Popen([ray, "start", "--address", f"127.0.0.1:{port}", *common], env=env, cwd=ROOT,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait_for_cpus(ray, port, env, 2)
        run_dir = tmp_path / "run"
        address = ["--ray-address", f"127.0.0.1:{port}"]
        first = _train(*FLAGS, "--nproc", "2", *address, "--run-dir", str(run_dir), "--max-updates", "4",
                       timeout=500, env=env)
        assert first.returncode == 0, first.stderr[-3000:]
        assert (run_dir / "checkpoints" / "latest").read_text() == "update_000004"
        assert "training on the Ray cluster at" in first.stdout
        second = _train("--resume", str(run_dir), *address, timeout=500, env=env)
        assert second.returncode == 0, second.stderr[-3000:]
        assert second.stdout.strip().splitlines()[-3].startswith("training throughput:"), second.stdout[-2000:]
        assert "on each of 2 Ray workers" in second.stdout
        assert fingerprint(run_dir) == fingerprint(two_ranks[0])
    finally:
        for node in reversed(nodes):
            node.terminate()
        for node in nodes:
            try:
                node.wait(timeout=60)
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait()
        shutil.rmtree(temp, ignore_errors=True)


def _wait_for_cpus(ray: str, port: int, env: dict[str, str], cpus: int, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = subprocess.run([ray, "status", "--address", f"127.0.0.1:{port}"], env=env, capture_output=True,
                                text=True)
        if re.search(rf"\b0\.0/{cpus}\.0 CPU\b", status.stdout):
            return
        time.sleep(2)
    raise AssertionError(f"the Ray cluster on port {port} did not reach {cpus} CPUs")
