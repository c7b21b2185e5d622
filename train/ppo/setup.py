"""Setting up a run: a new run directory, or a stopped run resumed from its last checkpoint.

:func:`start_run` checks everything a run needs before it writes anything (the options, the device, the
rules, a policy to start from, the checkpoint to resume, the opponents), then makes the run directory with
its ``config.yaml`` (the options a resumed run reads back) and TensorBoard writer; a start that fails half-way
removes the directory it made. The :class:`Run` it returns holds everything the loop works on.
"""

from __future__ import annotations

import copy
import dataclasses
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
import yaml

from agents.learned import CheckpointError, NetSpec, PolicyNet, save_policy, trump_first_tables
from mauscheln_env.batched import keep_freed_memory
from mauscheln_env.engine import Game
from mauscheln_env.errors import ConfigError
from mauscheln_env.files import atomic_write_text
from mauscheln_env.vecenv import make_vector_env
from train.ppo import PROG
from train.ppo.args import KEPT_ON_RESUME, check_args, check_device, read_config, rules_config
from train.ppo.checkpoint import WorldSizeError, clean_partial_writes, load_checkpoint
from train.ppo.distributed import World, join_world, launched, shard
from train.ppo.interrupt import StopOnInterrupt
from train.ppo.opponents import OpponentPool, baseline_players
from train.ppo.profile import Profile
from train.ppo.seeds import rank_seed, seed_for
from train.ppo.storage import Storage

if TYPE_CHECKING:
    from mauscheln_env.config import RuleConfig
    from train.ppo.options import Args

MAGNET_FILE = "magnet.safetensors"
"""In a run directory: the learner as behaviour cloning left it, when the run's magnet is ``imitation``."""


@dataclass
class Run:
    """Everything the training loop works on."""

    args: Args
    """The options (a resumed run's are those of its config.yaml)."""
    run_dir: Path
    device: torch.device
    config: RuleConfig
    game: Game
    envs: Any
    """The vectorised sessions (batched or reference backend)."""
    net: PolicyNet
    """The learner: one policy for every seat it holds."""
    optimizer: torch.optim.Optimizer
    writer: Any
    """TensorBoard's SummaryWriter."""
    storage: Storage
    pool: OpponentPool
    baselines: list[Any]
    """The scripted opponents (:func:`train.ppo.opponents.baseline_players`)."""
    teacher: Any
    """The agent behaviour cloning imitates (None when there is no imitation left to do)."""
    magnet: PolicyNet | None
    num_updates: int
    start_update: int
    """The first update this process makes (0, or the resumed checkpoint's update)."""
    imitation_updates: int
    """Updates of behaviour cloning before self-play."""
    decisions: int
    """Decisions kept in rollouts so far (across resumes)."""
    decisions_at_start: int
    started: float
    """``time.perf_counter()`` when the updates began."""
    cpu_started: float
    """``time.process_time()`` then."""
    world: World
    """This process's rank among the ranks of the run (rank 0 of 1 in one process)."""
    seed: int
    """The root of this rank's streams (``seed`` itself on rank 0, :func:`train.ppo.seeds.rank_seed`)."""
    num_envs: int
    """The sessions this rank steps (``num_envs / ranks``)."""
    threads: int
    """torch threads of this process."""
    profile: Profile
    """Where each update's time goes (``--profile``; otherwise every range is a no-op)."""

    def stats(self) -> dict[str, Any]:
        """The trainer state a checkpoint keeps besides the tensors."""
        return {"pool_scores": self.pool.scores, "decisions": self.decisions}


def log_hyperparameters(writer: Any, args: Args) -> None:
    """The options as a markdown table (TensorBoard's text tab)."""
    writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
        f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()))


def start_run(args: Args, stop: StopOnInterrupt) -> Run:
    """A new run of ``args``, or with ``args.resume`` the stopped run continued from its last checkpoint.

    In a data-parallel run (:mod:`train.ppo.distributed`) this process joins the other ranks first; rank 0 names
    the run directory, reads what the run starts from (a resumed checkpoint, a policy to start from, a magnet)
    and shares it, so that every rank starts from the same state; only rank 0 writes the run directory.
    """
    check_args(args)
    world = join_world(check_device(args.device))
    if args.nproc is not None and launched() and args.nproc != world.size:
        world.decide(lambda: _refuse(f"--nproc {args.nproc} in a launch of {world.size} ranks; allowed: leave --nproc "
                                     "out under torchrun or Ray (the launch sets the ranks)"))
    args, run_dir = world.decide(lambda: resumed(args) if args.resume else (args, new_run_dir(args)))
    device = world.device if world.size > 1 else check_device(args.device)
    threads = args.threads or (1 if world.size > 1 else 2)
    torch.set_num_threads(threads)
    torch.manual_seed(args.seed)
    config = rules_config(args)
    game = Game(config)
    B = world.decide(lambda: shard(args.num_envs, world.size))  # this rank's sessions
    seed = rank_seed(args.seed, world.rank)  # the root of this rank's streams
    # The batched engine may hand out its internal buffers (copy=False): the rollout copies them into storage.
    env_kwargs = {"copy": False, "compile": args.compile_env} if args.backend == "batched" else {}
    if args.backend == "batched":
        keep_freed_memory()  # every step allocates and frees the same large blocks
    envs = make_vector_env(config, B, backend=args.backend, device=device, seed=seed, **env_kwargs)
    n, T = envs.num_players, args.num_steps
    critic_size = (envs.state_size + n) if args.central_critic else None
    net = PolicyNet(NetSpec(envs.obs_size, envs.num_actions, tuple(args.hidden), critic_size, args.trump_first),
                    trump_first_tables(game) if args.trump_first else None).to(device)
    if args.init_from is not None and not args.resume:
        world.decide(lambda: init_from(net, str(args.init_from), game))
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    num_updates = max(1, args.total_decisions // (args.num_envs * T))
    start_update, snapshots, stats = 0, [], {}
    if args.resume:
        start_update, snapshots, stats = world.decide(lambda: resume_checkpoint(run_dir, net, optimizer, game,
                                                                                world.size))
    world.share(net, optimizer, {})  # every rank starts from rank 0's weights and optimizer state
    baselines = baseline_players(args, game, device, seed)
    imitation_updates = args.imitate_decisions // (args.num_envs * T)
    teacher = None
    if imitation_updates > start_update:
        from agents.base import parse_agent_spec
        from agents.tensor import batched_opponent

        name, params = parse_agent_spec(args.imitate_teacher)
        teacher = batched_opponent(name, game, device, seed=seed_for(seed, 8), **params)
    # everything is checked: now rank 0 writes the run directory
    made: dict[str, Any] = {}
    world.decide(lambda: made.update(writer=make_run_dir(run_dir, args)))  # a failure stops every rank
    writer = made.get("writer")  # TensorBoard's writer: rank 0's alone
    stop.run_dir = run_dir
    if world.main:
        ranks = f" ({world.size} ranks of {B} sessions)" if world.size > 1 else ""
        if args.resume:
            print(f"run directory: {run_dir} (resumed at update {start_update}/{num_updates}){ranks}", flush=True)
        else:
            print(f"run directory: {run_dir}{ranks}", flush=True)
        if start_update == 0:
            log_hyperparameters(writer, args)
    pool = OpponentPool(snapshots, stats.get("pool_scores", [0.0] * len(snapshots)), net.spec, device)
    storage = Storage.allocate(T + args.finish_steps, B, envs.obs_size, envs.num_actions, n, critic_size, device)
    decisions = int(stats.get("decisions", start_update * args.num_envs * T))
    profile = Profile(args.profile, device)
    world.profile = profile
    started, cpu_started = time.perf_counter(), time.process_time()
    # A policy as the magnet is read (and checked) now; "imitation" is taken at the first PPO update.
    magnet = shared_magnet(world, args, net, game, run_dir, device) if args.magnet not in (None, "imitation") else None
    return Run(args=args, run_dir=run_dir, device=device, config=config, game=game, envs=envs, net=net,
               optimizer=optimizer, writer=writer, storage=storage, pool=pool, baselines=baselines, teacher=teacher,
               magnet=magnet, num_updates=num_updates, start_update=start_update,
               imitation_updates=imitation_updates, decisions=decisions, decisions_at_start=decisions,
               started=started, cpu_started=cpu_started, world=world, seed=seed, num_envs=B, threads=threads,
               profile=profile)


def _refuse(message: str) -> None:
    raise ConfigError(message)


def resume_checkpoint(run_dir: Path, net: PolicyNet, optimizer: torch.optim.Optimizer, game: Game,
                      world_size: int) -> tuple[int, list[dict[str, torch.Tensor]], dict[str, Any]]:
    """Load the run's last checkpoint into ``net`` and ``optimizer``; refused (with what is allowed) when it is not
    one of this run's or was written by another number of ranks."""
    try:
        return load_checkpoint(run_dir, net, optimizer, game, world_size=world_size)
    except CheckpointError as exc:
        if isinstance(exc, WorldSizeError):
            raise
        raise CheckpointError(f"{exc}; allowed: a checkpoint written by {PROG} for this run (to resume from an "
                              "earlier one, write its folder name into checkpoints/latest)") from None


def resumed(args: Args) -> tuple[Args, Path]:
    """The options of the run ``args.resume`` (its config.yaml, with this command's ``KEPT_ON_RESUME``) and its
    directory, cleared of what an interrupted checkpoint write left behind."""
    run_dir = Path(str(args.resume))
    saved = run_dir / "config.yaml"
    if not saved.is_file():
        raise ConfigError(f"{run_dir} is not a run directory (no config.yaml); allowed: a directory written by "
                          f"{PROG}")
    args = dataclasses.replace(read_config(type(args), saved, "run config"),
                               **{name: getattr(args, name) for name in KEPT_ON_RESUME})
    removed = clean_partial_writes(run_dir)
    if removed:
        print(f"removed what an interrupted checkpoint write left behind: {', '.join(removed)}")
    return args, run_dir


def new_run_dir(args: Args) -> Path:
    """``run_dir``, or ``runs_root/<ruleset>__<exp_name>__<seed>__<time>``; refused if it holds a run."""
    stamp = int(time.time())
    run_dir = Path(args.run_dir or Path(args.runs_root) / f"{args.ruleset}__{args.exp_name}__{args.seed}__{stamp}")
    if args.run_dir is None and Path(args.ruleset).suffix in (".yaml", ".yml", ".json"):
        run_dir = Path(args.runs_root) / f"{Path(args.ruleset).stem}__{args.exp_name}__{args.seed}__{stamp}"
    if (run_dir / "config.yaml").exists() or (run_dir / "checkpoints").exists():
        raise ConfigError(f"run directory {run_dir} already holds a run; allowed: a new directory, or "
                          f"--resume {run_dir} to continue it")
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError(f"run directory {run_dir} is a file; allowed: a new directory")
    return run_dir


def make_run_dir(run_dir: Path, args: Args) -> Any:
    """Make the run directory, write a new run's ``config.yaml`` and open the TensorBoard writer; a failure
    removes the directory again if this call made it."""
    created = not run_dir.exists()
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        if not args.resume:
            saved_args = {k: v for k, v in dataclasses.asdict(args).items() if k not in KEPT_ON_RESUME}
            saved_args["run_dir"] = str(run_dir)
            atomic_write_text(run_dir / "config.yaml", yaml.safe_dump(saved_args, sort_keys=False))
        from torch.utils.tensorboard import SummaryWriter

        return SummaryWriter(str(run_dir))
    except BaseException as exc:
        if created:
            shutil.rmtree(run_dir, ignore_errors=True)
        if isinstance(exc, OSError):
            raise ConfigError(f"cannot write the run directory {run_dir}: {exc.strerror or exc}; allowed: a "
                              "writable place (--run-dir or --runs-root)") from exc
        raise


def init_from(net: PolicyNet, source: str, game: Game) -> None:
    """Load the weights of the policy ``source`` into the learner ``net`` (a warm start); refused unless it was
    trained for ``game`` and has ``net``'s shape."""
    start = policy_like(net, source, game, "--init-from")
    net.load_state_dict(start.state_dict())
    print(f"learner initialised from {source}", flush=True)


def policy_like(net: PolicyNet, source: str | Path, game: Game, flag: str) -> PolicyNet:
    """The policy ``source``, refused unless it was trained for ``game`` and has ``net``'s shape."""
    from agents.learned import CheckpointError, check_compatible, read_policy

    policy, layout, _ = read_policy(source)
    check_compatible(layout, game, str(source))
    mine, theirs = net.spec, policy.spec
    shape = [(option, have, want) for option, have, want in (
        ("--hidden", list(theirs.hidden), list(mine.hidden)),
        ("--trump-first", theirs.trump_first, mine.trump_first),
        ("--central-critic", theirs.critic_size is not None, mine.critic_size is not None)) if have != want]
    if shape:
        raise CheckpointError(f"{flag} {source}: its network differs from this run's ("
                              + "; ".join(f"{option}: policy {have}, run {want}" for option, have, want in shape)
                              + "); allowed: the policy's values of those options")
    return policy


def shared_magnet(world: World, args: Args, net: PolicyNet, game: Game, run_dir: Path,
                  device: torch.device) -> PolicyNet:
    """The magnet on every rank: rank 0 reads it (:func:`magnet_net`, which writes ``imitation``'s file) and
    shares its weights."""
    if world.size == 1:
        return magnet_net(args, net, game, run_dir, device)
    state = world.decide(lambda: {k: v.cpu() for k, v in magnet_net(args, net, game, run_dir, device)
                                  .state_dict().items()})
    magnet = copy.deepcopy(net)
    magnet.load_state_dict(state)
    magnet.eval()
    magnet.requires_grad_(False)
    return magnet


def magnet_net(args: Args, net: PolicyNet, game: Game, run_dir: Path, device: torch.device) -> PolicyNet:
    """The frozen magnet of ``args.magnet``. ``imitation``: the learner now (its first PPO update), written to
    ``run_dir/magnet.safetensors`` so that a resumed run pulls towards the same policy; read back from there."""
    source: str | Path = str(args.magnet)
    if source == "imitation":
        source = run_dir / MAGNET_FILE
        if not source.exists():
            save_policy(source, net, game)
    magnet = policy_like(net, source, game, "--magnet").to(device)
    magnet.eval()
    magnet.requires_grad_(False)
    print(f"magnet: {args.magnet} (KL weight {args.magnet_coef})", flush=True)
    return magnet
