"""The trainer's options: what each allows, and how a command line or a YAML file becomes checked options.

The options themselves are declared where the loop reads them, in :class:`train.ppo_selfplay.Args` (a
dataclass with a docstring per field, as CleanRL's scripts do). The readers here take that class as their
first argument, so that the script imports this module and not the other way round.

A training config (``--config``, ``configs/train/*.yaml``) is a mapping of option names to values. It may
start from another file: ``base: FILE`` (relative to the file that names it) gives every option of that
file, which the naming file then overrides; bases may chain, and a cycle or a missing file is refused.
Every bad value raises :class:`~mauscheln_env.errors.ConfigError` with one line saying what is allowed.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import torch
import yaml

from agents.learned import MAX_LAYERS, MAX_WIDTH
from mauscheln_env.config import parse_yaml
from mauscheln_env.errors import ConfigError, shown
from mauscheln_env.ruleargs import RULE_SYNTAX, rule_config
from train.cli import tyro_cli
from train.ppo import PROG

if TYPE_CHECKING:
    from mauscheln_env.config import RuleConfig
    from train.ppo.options import Args

A = TypeVar("A")

SYNTAX = (
    "Every option is a flag and a key of the YAML file given with --config (flags override the file; a file may "
    "start from another with base: FILE). Lists take "
    "space-separated values (--hidden 128 128, --baseline-opponents expert random; no value: an empty list), "
    "booleans are flags (--trump-first / --no-trump-first), None is written None, rule options are "
    f"--rule {RULE_SYNTAX}. Continue a stopped run with --resume RUN_DIR."
)
BASE_KEY = "base"
"""The key of a training config that names the config it starts from."""
KEPT_ON_RESUME = ("resume", "max_updates", "max_minutes", "nproc", "ray_address", "check_sync", "profile")
"""The options a resumed run takes from its command line (how far to go, how it is launched, what it checks and
prints); every other comes from the run's config.yaml."""


# ---------------------------------------------------------------------------- reading options
def parse_command_line(cls: type[A], argv: list[str] | None, description: str) -> A:
    """The options of a command line: ``--config FILE`` first, then the flags (parsed by tyro), validated.

    ``--help`` prints the options with their defaults (those of ``--config`` when given) and exits.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config", default=None)
    known, _ = pre.parse_known_args(argv)
    defaults = read_config(cls, known.config) if known.config else cls()
    args = tyro_cli(cls, argv, prog=PROG, description=description, default=defaults)
    if args.resume:
        changed = [f.name for f in dataclasses.fields(cls) if f.name not in KEPT_ON_RESUME
                   and getattr(args, f.name) != getattr(cls(), f.name)]
        if changed:
            kept = ", ".join("--" + name.replace("_", "-") for name in KEPT_ON_RESUME if name != "resume")
            raise ConfigError(f"--resume continues a run as its config.yaml says; {', '.join(changed)} cannot be "
                              f"changed (allowed with --resume: {kept})")
    check_args(args)
    return args


def read_config(cls: type[A], path: str | Path, source: str = "training config") -> A:
    """The options of a YAML file (``--config`` or a run's ``config.yaml``) and its bases, every value checked."""
    path = Path(path)
    values = config_values(path, {f.name for f in dataclasses.fields(cls)}, source)
    try:
        return options_from(cls, values)
    except ConfigError as exc:
        raise ConfigError(f"{source} {str(path)!r}: {exc}") from None


def config_values(path: Path, names: set[str], source: str = "training config") -> dict[str, Any]:
    """The option values a YAML file gives: those of its chain of bases, each overridden by the file naming it.

    Each file may hold the option ``names`` and ``base``; an unknown key is refused naming its file.
    """
    layers: list[dict[str, Any]] = []
    chain: list[Path] = []
    while True:
        data = _yaml_mapping(path, source)
        base = data.pop(BASE_KEY, None)
        try:
            _refuse_unknown(data, names)
        except ConfigError as exc:
            raise ConfigError(f"{source} {str(path)!r}: {exc}") from None
        layers.append(data)
        chain.append(path.resolve())
        if base is None:
            break
        if not isinstance(base, str) or not base.strip():
            raise ConfigError(f"{source} {str(path)!r}: {BASE_KEY}={shown(base)} is not allowed; allowed: the file "
                              f"name of another training config, relative to this one ({BASE_KEY}: fast.yaml)")
        following = path.parent / base
        if following.resolve() in chain:
            loop = " -> ".join(p.name for p in [*chain, following.resolve()])
            raise ConfigError(f"{source} {str(path)!r}: {BASE_KEY} {base!r} makes a cycle ({loop}); allowed: a "
                              "chain of bases that ends in a file without base")
        if not following.is_file():
            others = sorted(p.name for p in path.parent.glob("*.y*ml") if p.resolve() not in chain)
            raise ConfigError(f"{source} {str(path)!r}: {BASE_KEY} {base!r} does not exist ({following}); allowed: "
                              "a training config relative to this file"
                              + (f", e.g. {', '.join(others)}" if others else ""))
        path = following
    values: dict[str, Any] = {}
    for data in reversed(layers):
        values.update(data)
    return values


def _yaml_mapping(path: Path, source: str) -> dict[Any, Any]:
    if not path.is_file():
        raise ConfigError(f"{source} {str(path)!r} does not exist")
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{source} {str(path)!r} cannot be read ({exc.strerror or exc}); allowed: a readable YAML "
                          "file") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
        raise ConfigError(f"{source} {str(path)!r} is not valid YAML: {problem}{where}") from exc
    if not isinstance(data, dict):
        what = "empty" if data is None else f"a YAML {type(data).__name__}"
        raise ConfigError(f"{source} {str(path)!r} is {what}; allowed: a mapping of option names to values "
                          "(configs/train/*.yaml)")
    return data


def _refuse_unknown(values: dict[Any, Any], names: set[str]) -> None:
    unknown = sorted(set(map(str, values)) - names)
    if unknown:
        raise ConfigError(f"unknown training option(s) {', '.join(unknown)}; allowed: {', '.join(sorted(names))}")


def options_from(cls: type[A], values: dict[str, Any]) -> A:
    """Validate a mapping of field values into ``cls`` (unknown keys and bad values raise)."""
    _refuse_unknown(values, {f.name for f in dataclasses.fields(cls)})
    args = cls(**values)
    check_args(args)
    return args


# ---------------------------------------------------------------------------- what each option allows
def _whole(low: int, high: int | None = None, none: bool = False) -> tuple[Any, str]:
    def ok(v: Any) -> bool:
        return (none and v is None) or (isinstance(v, int) and not isinstance(v, bool) and low <= v
                                        and (high is None or v <= high))
    span = f">= {low}" if high is None else f"{low}..{high}"
    return ok, ("None or " if none else "") + f"a whole number {span}"


def _number(low: float, high: float = math.inf, *, low_open: bool = False, high_open: bool = False,
            none: bool = False) -> tuple[Any, str]:
    def ok(v: Any) -> bool:
        if none and v is None:
            return True
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            return False
        return (v > low if low_open else v >= low) and (v < high if high_open else v <= high)
    span = (("(" if low_open else "[") + f"{low:g}, " + (f"{high:g}" + (")" if high_open else "]"))
            if math.isfinite(high) else f"{'>' if low_open else '>='} {low:g}")
    return ok, ("None or " if none else "") + ("a finite number " + span if math.isfinite(high) else
                                               f"a finite number {span}")


def _choice(*allowed: str) -> tuple[Any, str]:
    return (lambda v: v in allowed), " or ".join(repr(a) for a in allowed)


def _text(none: bool = False) -> tuple[Any, str]:
    return (lambda v: (none and v is None) or (isinstance(v, str) and v != "")), ("None or " if none else "") + "text"


def _texts() -> tuple[Any, str]:
    return (lambda v: isinstance(v, list) and all(isinstance(x, str) and x for x in v)), "a list of agent specs"


def _flag() -> tuple[Any, str]:
    return (lambda v: isinstance(v, bool)), "true or false"


CHECKS: dict[str, tuple[Any, str]] = {
    "exp_name": ((lambda v: isinstance(v, str) and v != "" and "/" not in v and v not in (".", "..")),
                 "a word without '/'"),
    "seed": _whole(0, 2**63 - 1),
    "ruleset": _text(),
    "num_players": _whole(1, none=True),
    "rules": ((lambda v: isinstance(v, dict) and all(isinstance(k, str) for k in v)),
              f"a mapping of rule options ({RULE_SYNTAX})"),
    "max_deals": _whole(1),
    "backend": _choice("batched", "reference"),
    "compile_env": _flag(),
    "device": _text(),
    "threads": _whole(1, 1024, none=True),
    "nproc": _whole(1, 1024, none=True),
    "ray_address": _text(none=True),
    "check_sync": _flag(),
    "profile": _flag(),
    "total_decisions": _whole(1),
    "num_envs": _whole(1, 1 << 22),
    "num_steps": _whole(1, 1 << 20),
    "finish_steps": _whole(0, 1 << 20),
    "learning_rate": _number(0, 1, low_open=True),
    "anneal_lr": _flag(),
    "gamma": _number(0, 1, low_open=True),
    "gae_lambda": _number(0, 1),
    "num_minibatches": _whole(1),
    "update_epochs": _whole(1),
    "clip_coef": _number(0, low_open=True),
    "clip_vloss": _flag(),
    "ent_coef": _number(0),
    "vf_coef": _number(0),
    "max_grad_norm": _number(0, low_open=True),
    "target_kl": _number(0, low_open=True, none=True),
    "reward_scale": _number(0, low_open=True),
    "hidden": ((lambda v: isinstance(v, list) and 1 <= len(v) <= MAX_LAYERS
                and all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= MAX_WIDTH for h in v)),
               f"a list of 1 to {MAX_LAYERS} layer sizes, each a whole number 1..{MAX_WIDTH} (--hidden 256 256)"),
    "trump_first": _flag(),
    "central_critic": _flag(),
    "self_play_prob": _number(0, 1),
    "baseline_prob": _number(0, 1),
    "pool_size": _whole(0, 1024),
    "pool_every": _whole(1),
    "baseline_opponents": _texts(),
    "checkpoint_every": _whole(1),
    "eval_every": _whole(0),
    "eval_deals": _whole(1, 10_000_000),
    "eval_agents": _texts(),
    "final_eval_deals": _whole(0, 10_000_000),
    "final_eval_agents": _texts(),
    "runs_root": _text(),
    "run_dir": _text(none=True),
    "imitate_decisions": _whole(0),
    "imitate_teacher": _text(),
    "imitate_learning_rate": _number(0, 1, low_open=True),
    "imitate_student": _number(0, 1),
    "magnet": _text(none=True),
    "magnet_coef": _number(0),
    "init_from": _text(none=True),
    "resume": _text(none=True),
    "max_updates": _whole(1, none=True),
    "max_minutes": _number(0, low_open=True, none=True),
    "config": _text(none=True),
}
"""What every training option allows: ``(check, description)``."""


def check_args(args: Args) -> None:
    """Raise :class:`~mauscheln_env.errors.ConfigError` naming the first option whose value is not allowed."""
    for f in dataclasses.fields(args):
        ok, allowed = CHECKS[f.name]
        value = getattr(args, f.name)
        if not ok(value):
            raise ConfigError(f"{f.name}={shown(value)} is not allowed; allowed: {allowed}")
    from agents.base import same_agent

    for key in ("eval_agents", "final_eval_agents"):
        seen: dict[str, str] = {}
        for spec in getattr(args, key):
            k = same_agent(spec)
            if k in seen:
                raise ConfigError(f"{key} names {spec} more than once ({seen[k]} and {spec} are one agent); allowed: "
                                  "distinct agents")
            seen[k] = spec
    if args.backend != "batched" and args.compile_env:
        raise ConfigError("compile_env=True needs backend='batched'; allowed: --no-compile-env with "
                          "backend='reference'")
    check_device(args.device, here=not (args.ray_address or os.environ.get("RAY_ADDRESS")))  # Ray: the workers'
    from agents.base import agent_class, parse_agent_spec
    from agents.tensor import BATCHED_OPPONENTS, has_tensor_form

    for key in ("baseline_opponents", "eval_agents", "final_eval_agents"):
        for spec in getattr(args, key):
            agent_class(parse_agent_spec(spec)[0])  # an unknown agent fails now, not after training
    slow = [spec for spec in args.baseline_opponents if not has_tensor_form(parse_agent_spec(spec)[0])]
    if slow and args.backend != "reference":
        raise ConfigError(f"baseline_opponents {slow} have no tensor form and need backend='reference' (they read "
                          f"the info dicts that only the reference engine produces); on the batched backend use "
                          f"{sorted(BATCHED_OPPONENTS)} or an agent whose class sets tensor_form")
    if args.imitate_decisions:
        teacher = parse_agent_spec(args.imitate_teacher)[0]
        if teacher not in BATCHED_OPPONENTS or teacher == "random":
            raise ConfigError(f"imitate_teacher={args.imitate_teacher!r} is not allowed; allowed: an agent that runs "
                              f"batched, {sorted(set(BATCHED_OPPONENTS) - {'random'})}")
        if args.backend != "batched":
            raise ConfigError("imitate_decisions needs backend='batched' (the teacher is a tensor agent); allowed: "
                              "--backend batched, or imitate_decisions=0")
        if args.imitate_decisions // (args.num_envs * args.num_steps) >= max(1, args.total_decisions
                                                                            // (args.num_envs * args.num_steps)):
            raise ConfigError(f"imitate_decisions={args.imitate_decisions} leaves no self-play update of "
                              f"total_decisions={args.total_decisions}; allowed: fewer imitation decisions than "
                              "total_decisions minus one update")
    ranks = args.nproc or int(os.environ.get("WORLD_SIZE", "1") or 1)
    batch = args.num_envs // max(ranks, 1) * args.num_steps  # the decisions of one rank's rollout, at most
    if args.num_minibatches > batch:
        per_rank = f" on each of {ranks} ranks" if ranks > 1 else ""
        raise ConfigError(f"num_minibatches={args.num_minibatches} is more than the {batch} decisions of a rollout"
                          f"{per_rank} (num_envs {args.num_envs} x num_steps {args.num_steps}), so a minibatch would "
                          f"be empty; allowed: 1..{batch}")
    if (args.magnet is None) != (args.magnet_coef == 0):
        raise ConfigError(f"magnet={args.magnet!r} with magnet_coef={args.magnet_coef}: allowed: both (a policy "
                          "and a weight > 0) or neither")
    if args.magnet == "imitation" and not args.imitate_decisions:
        raise ConfigError("magnet='imitation' needs imitate_decisions > 0 (the magnet is the learner as behaviour "
                          "cloning left it); allowed: imitate_decisions > 0, or a policy file as the magnet")
    rules_config(args)


def rules_config(args: Args) -> RuleConfig:
    """The :class:`~mauscheln_env.config.RuleConfig` the run trains on (bad rules raise ConfigError)."""
    return rule_config(args.ruleset, args.num_players, args.rules, max_deals=(args.max_deals, "--max-deals"))


def check_device(name: str, here: bool = True) -> torch.device:
    """``torch.device(name)``, refused unless this machine has it (``here``; else only its name is checked: the
    machines of a cluster check theirs)."""
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError, ValueError):
        raise ConfigError(f"device={name!r} is not a torch device; allowed: 'cpu'"
                          + (", 'cuda' or 'cuda:N'" if torch.cuda.is_available() else "")) from None
    if here and device.type == "cuda" and (not torch.cuda.is_available()
                                  or (device.index or 0) >= torch.cuda.device_count()):
        have = torch.cuda.device_count() if torch.cuda.is_available() else 0
        raise ConfigError(f"device={name!r} is not available here ({have} CUDA device(s)); allowed: 'cpu'"
                          + (f" or 'cuda:0'..'cuda:{have - 1}'" if have else ""))
    if device.type not in ("cpu", "cuda"):
        raise ConfigError(f"device={name!r} is not supported; allowed: 'cpu' or 'cuda'")
    return device
