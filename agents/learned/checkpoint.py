"""The policy file format: a ``.safetensors`` file of weights whose metadata say what it was made for.

A checkpoint is data, never code: its metadata (plain JSON strings) hold the rule configuration, the
observation layout (piece names and sizes), the action strings and the network's shape.
:func:`read_policy` checks the declared shapes and bounds before anything is allocated, and
:func:`load_policy` refuses a file that does not match the table it is asked to play, with a message
that says what differs. Nothing is ever unpickled.

``name_or_path`` is a path or the name of a policy shipped in ``agents/learned/policies/``
(:func:`available_policies` lists them; :func:`shipped_policy_name` names the one for a table).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from torch import nn

from agents.learned.network import NUM_SUITS, NetSpec, PolicyNet
from mauscheln_env.config import RULESETS, make_config
from mauscheln_env.engine import Game
from mauscheln_env.errors import MauschelnError
from mauscheln_env.files import atomic_write, strict_json
from mauscheln_env.observation import Observer

POLICY_DIR = Path(__file__).resolve().parent / "policies"
FORMAT = "mauscheln-policy-v1"


class CheckpointError(MauschelnError):
    """A checkpoint that is missing, corrupt, or made for another environment."""



def layout_of(game: Game) -> dict[str, Any]:
    """What a policy is tied to: the rules, the observation pieces and the action strings."""
    observer = Observer(game)
    return {
        "rules": game.config.to_dict(),
        "observation": [[p.name, p.size] for p in observer.pieces],
        "actions": [game.action_to_str(a) for a in range(game.num_actions)],
    }


SESSION_LENGTH_OPTIONS = ("max_deals", "max_throw_ins", "max_session_deals")
"""Rule options that only bound a session's length: a policy may play sessions of another length."""

MAX_LAYERS = 16
MAX_WIDTH = 1 << 16
"""Bounds on a checkpoint's declared network (checked before anything is allocated)."""


def check_finite(net: nn.Module, source: str) -> None:
    """Raise :class:`CheckpointError` when a weight of ``net`` is NaN or infinite."""
    for name, tensor in net.state_dict().items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(f"{source}: weight {name} holds NaN or infinite values; "
                                  "allowed: finite weights only (the training diverged; lower the learning rate)")


def save_policy(path: str | Path, net: PolicyNet, game: Game, extra: dict[str, Any] | None = None) -> Path:
    """Write weights and metadata atomically (a temporary file, then a rename); non-finite weights are refused."""
    from safetensors.torch import save_file

    path = Path(path)
    check_finite(net, f"policy for {path}")
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": FORMAT,
        "net": strict_json({"obs_size": net.spec.obs_size, "num_actions": net.spec.num_actions,
                             "hidden": list(net.spec.hidden), "critic_size": net.spec.critic_size,
                             "trump_first": net.spec.trump_first}),
        "layout": strict_json(layout_of(game)),
        "extra": strict_json(extra or {}),
    }
    tensors = {k: v.detach().cpu().contiguous() for k, v in net.state_dict().items()}
    atomic_write(path, lambda tmp: save_file(tensors, str(tmp), metadata=meta))
    return path


def resolve_checkpoint(name_or_path: str | Path) -> Path:
    """A policy file from a path, a run directory (its ``policy.safetensors``, else its latest checkpoint's)
    or the name of a shipped policy."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    if path.is_dir():
        if (path / "policy.safetensors").is_file():
            return path / "policy.safetensors"
        latest = latest_checkpoint(path, missing_ok=True)
        if latest is not None and (latest / "policy.safetensors").is_file():
            return latest / "policy.safetensors"
        raise CheckpointError(f"{str(path)!r} is a directory without a policy; allowed: a policy file, a run "
                              "directory with policy.safetensors or checkpoints/latest, or a shipped policy name")
    shipped = POLICY_DIR / f"{name_or_path}.safetensors"
    if "/" not in str(name_or_path) and shipped.is_file():
        return shipped
    raise CheckpointError(
        f"checkpoint {str(name_or_path)!r} is neither a file, a run directory nor a shipped policy; "
        f"shipped: {', '.join(available_policies()) or 'none'}"
    )


def latest_checkpoint(run_dir: Path, missing_ok: bool = False) -> Path | None:
    """The checkpoint folder that ``run_dir/checkpoints/latest`` names; it must lie inside that folder."""
    root = run_dir / "checkpoints"
    pointer = root / "latest"
    if not pointer.is_file():
        if missing_ok:
            return None
        raise CheckpointError(f"{run_dir} has no checkpoint to resume from (no checkpoints/latest)")
    try:
        name = pointer.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{pointer} cannot be read: {exc}") from exc
    target = root / name
    if (not name or "/" in name or "\\" in name or name in (".", "..")
            or target.resolve().parent != root.resolve() or not target.is_dir()):
        raise CheckpointError(f"{pointer} names {name!r}; allowed: the name of a checkpoint folder inside {root}")
    return target


def available_policies() -> list[str]:
    return sorted(p.stem for p in POLICY_DIR.glob("*.safetensors"))


def shipped_policy_name(game: Game) -> str:
    """The name of the policy shipped for ``game``'s table (``<ruleset><players>``, e.g. ``mousel4``): what
    ``learned`` without a checkpoint plays. Raises :class:`CheckpointError` naming the ruleset's shipped
    policies (its other player counts; the list stays short however many tables have one) when there is none
    for that ruleset and player count."""
    ruleset = game.config.ruleset
    name = f"{ruleset}{game.n}"
    shipped = available_policies()
    if name not in shipped:
        own = [p for p in shipped if p.startswith(ruleset) and p[len(ruleset):].isdigit()]
        raise CheckpointError(f"no policy is shipped for {ruleset} with {game.n} players; shipped for {ruleset}: "
                              f"{', '.join(own) or 'none'}; allowed: learned:checkpoint=PATH (a policy file or a "
                              "run directory) or a table that has a shipped policy")
    return name


def _json_meta(meta: dict[str, str], key: str, kind: type, path: Path, default: str | None = None) -> Any:
    text = meta.get(key, default)
    if text is None:
        raise CheckpointError(f"{path} has no {key!r} metadata; allowed: a policy written by save_policy")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CheckpointError(f"{path}: metadata {key!r} is not JSON: {exc}") from exc
    if not isinstance(value, kind):
        raise CheckpointError(f"{path}: metadata {key!r} is a JSON {type(value).__name__}; allowed: a {kind.__name__}")
    return value


def _whole(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def net_spec_from_meta(net_meta: dict[str, Any], path: Path) -> NetSpec:
    """The :class:`NetSpec` a checkpoint declares, every field checked against its bounds."""
    hidden = net_meta.get("hidden")
    checks = [
        ("obs_size", _whole(net_meta.get("obs_size"), 1, 1 << 20), "a whole number 1..1048576"),
        ("num_actions", _whole(net_meta.get("num_actions"), 1, 1 << 16), "a whole number 1..65536"),
        ("hidden", isinstance(hidden, list) and 1 <= len(hidden) <= MAX_LAYERS
         and all(_whole(h, 1, MAX_WIDTH) for h in hidden), f"a list of 1..{MAX_LAYERS} whole numbers 1..{MAX_WIDTH}"),
        ("critic_size", net_meta.get("critic_size") is None or _whole(net_meta.get("critic_size"), 1, 1 << 20),
         "null or a whole number 1..1048576"),
        ("trump_first", isinstance(net_meta.get("trump_first", False), bool), "true or false"),
    ]
    for key, ok, allowed in checks:
        if not ok:
            raise CheckpointError(f"{path}: network metadata {key}={net_meta.get(key)!r} is not allowed; allowed: {allowed}")
    return NetSpec(net_meta["obs_size"], net_meta["num_actions"], tuple(hidden), net_meta.get("critic_size"),
                   net_meta.get("trump_first", False))


def expected_shapes(spec: NetSpec) -> dict[str, list[int]]:
    """The tensor names and shapes of a :class:`PolicyNet` of ``spec`` (computed, nothing allocated)."""
    shapes: dict[str, list[int]] = {}
    for head, first, last in (("actor", spec.obs_size, spec.num_actions), ("critic", spec.critic_size or spec.obs_size, 1)):
        sizes = [first, *spec.hidden, last]
        for i in range(len(sizes) - 1):
            shapes[f"{head}.{2 * i}.weight"] = [sizes[i + 1], sizes[i]]
            shapes[f"{head}.{2 * i}.bias"] = [sizes[i + 1]]
    if spec.trump_first:
        shapes.update(obs_perm=[NUM_SUITS, spec.obs_size], act_perm=[NUM_SUITS, spec.num_actions], trump_offset=[])
    return shapes


def _check_layout(layout: dict[str, Any], path: Path) -> None:
    rules, obs, actions = layout.get("rules"), layout.get("observation"), layout.get("actions")
    if not isinstance(rules, dict) or not isinstance(rules.get("ruleset"), str) or not _whole(
            rules.get("num_players"), 1, 64):
        raise CheckpointError(f"{path}: layout 'rules' is {rules!r}; allowed: a mapping with ruleset, num_players "
                              "and the rule options")
    if not isinstance(obs, list) or not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                                            and _whole(p[1], 0, 1 << 20) for p in obs):
        raise CheckpointError(f"{path}: layout 'observation' is not a list of [name, size] pairs")
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise CheckpointError(f"{path}: layout 'actions' is not a list of action strings")


def read_policy(name_or_path: str | Path) -> tuple[PolicyNet, dict[str, Any], dict[str, Any]]:
    """Load a checkpoint: (network, layout, extra). Raises :class:`CheckpointError` on anything wrong.

    The metadata is checked first (types, bounds, and the declared network against the tensors' names
    and shapes in the file), the weights after loading (finite); nothing is allocated from unchecked data.
    """
    from safetensors import SafetensorError
    from safetensors.torch import safe_open

    path = resolve_checkpoint(name_or_path)
    try:
        with open(path, "rb"):  # safetensors reports a file it may not read as one that does not exist
            pass
    except OSError as exc:
        raise CheckpointError(f"{path} cannot be read ({exc.strerror or exc}); allowed: a policy file this user may "
                              "read") from None
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
            shapes = {k: list(f.get_slice(k).get_shape()) for k in f.keys()}
            if meta.get("format") != FORMAT:
                raise CheckpointError(
                    f"{path} is not a mauscheln policy (format {meta.get('format')!r}, expected {FORMAT!r})")
            net_meta = _json_meta(meta, "net", dict, path)
            layout = _json_meta(meta, "layout", dict, path)
            extra = _json_meta(meta, "extra", dict, path, default="{}")
            _check_layout(layout, path)
            spec = net_spec_from_meta(net_meta, path)
            want = expected_shapes(spec)
            if shapes != want:
                diff = sorted(set(shapes) ^ set(want)) or [k for k in want if shapes[k] != want[k]]
                raise CheckpointError(f"{path}: the tensors do not match the declared network {spec} "
                                      f"(first difference: {diff[0]})")
            tensors = {k: f.get_tensor(k) for k in shapes}
    except CheckpointError:
        raise
    except (SafetensorError, OSError, ValueError, RuntimeError, TypeError) as exc:
        raise CheckpointError(f"{path} is not a readable safetensors checkpoint: {exc}") from exc
    try:
        net = PolicyNet(spec)
        net.load_state_dict(tensors)
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{path} has damaged metadata or weights: {exc}") from exc
    check_finite(net, str(path))
    net.eval()
    return net, layout, extra


def trained_for(rules: dict[str, Any], defaults: dict[str, Any] | None = None) -> str:
    """``mauscheln, 4 players (knock=True)``: the ruleset, the player count and the options that differ from
    ``defaults`` (all options when no defaults are given), session lengths left out."""
    skip = ("ruleset", "num_players", "deck_size", *SESSION_LENGTH_OPTIONS)
    opts = ", ".join(f"{k}={v!r}" for k, v in rules.items()
                     if k not in skip and (defaults is None or k not in defaults or defaults[k] != v))
    return f"{rules.get('ruleset')}, {rules.get('num_players')} players ({opts or 'default options'})"


def _defaults_of(rules: dict[str, Any]) -> dict[str, Any] | None:
    spec = RULESETS.get(rules.get("ruleset"))  # type: ignore[arg-type]
    return None if spec is None else {k: o.default for k, o in spec.options.items()}


def check_compatible(layout: dict[str, Any], game: Game, source: str = "checkpoint") -> None:
    """Raise :class:`CheckpointError` unless a policy was trained for the game ``game`` plays.

    Compared: the ruleset, the player count and every rule option except the session lengths
    (:data:`SESSION_LENGTH_OPTIONS`); then the observation pieces and the action strings. The message
    says what the policy was trained for and what this table plays.
    """
    here = layout_of(game)
    rules, now = layout.get("rules"), here["rules"]
    if not isinstance(rules, dict):
        raise CheckpointError(f"{source}: its layout holds no rules; allowed: a policy written by save_policy")
    spec_options = game.config.spec.options
    differ = [k for k in ("ruleset", "num_players") if rules.get(k) != now[k]]
    if not differ:
        for k in sorted(set(now) | set(rules)):
            if k in ("ruleset", "num_players", *SESSION_LENGTH_OPTIONS):
                continue
            default = spec_options[k].default if k in spec_options else None  # an option newer than the file
            if rules.get(k, default) != now.get(k):
                differ.append(k)
    if differ:
        shown = "; ".join(f"{k}: trained {rules.get(k)!r}, here {now.get(k)!r}" for k in differ)
        raise CheckpointError(f"{source} was trained for {trained_for(rules, _defaults_of(rules))}, but this table "
                              f"plays {trained_for(now, _defaults_of(now))} ({shown}); a policy plays only the game "
                              "it was trained for")
    if layout.get("observation") != here["observation"]:
        raise CheckpointError(
            f"{source} was trained on observations {_describe(layout.get('observation'))} but this environment "
            f"({now['ruleset']}, {game.n} players) produces {_describe(here['observation'])}"
        )
    if layout.get("actions") != here["actions"]:
        raise CheckpointError(
            f"{source} was trained with {len(layout.get('actions') or [])} actions but this environment has "
            f"{len(here['actions'])} ({now['ruleset']}, {game.n} players)"
        )


def _describe(pieces: Any) -> str:
    if not pieces:
        return "(none)"
    return f"of size {sum(size for _, size in pieces)} ({len(pieces)} pieces)"


def load_policy(name_or_path: str | Path, game: Game) -> PolicyNet:
    net, layout, _ = read_policy(name_or_path)
    check_compatible(layout, game, str(name_or_path))
    return net



def rules_of(layout: dict[str, Any]) -> Game:
    """The :class:`Game` a checkpoint was trained for."""
    rules = dict(layout["rules"])
    return Game(make_config(rules.pop("ruleset"), rules.pop("num_players"), **rules))
