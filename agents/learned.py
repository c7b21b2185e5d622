"""Learned policies: the network, its checkpoint format, and the agent that plays it.

A checkpoint is data, never code: a ``.safetensors`` file whose tensors are the
network's weights and whose metadata (plain JSON strings) hold the rule
configuration, the observation layout (piece names and sizes), the action
strings and the network's shape. :func:`load_policy` refuses a file that does
not match the environment it is asked to play in, with a message that says
what differs. Nothing is ever unpickled.

    agent = make_agent("learned")                                     # the policy shipped for the table
    agent = make_agent("learned", checkpoint="mauscheln4")             # samples from the policy (seeded)
    agent = make_agent("learned", checkpoint="path/to/policy.safetensors", greedy=True)

``checkpoint`` is a path or the name of a policy shipped in
``agents/policies/`` (``available_policies()`` lists them); without it the
agent plays the policy shipped for the table it is set up for
(``<ruleset><players>``, :func:`shipped_policy_name`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.base import Agent, Info, legal_ids
from mauscheln_env.cards import SUITS
from mauscheln_env.config import RULESETS, make_config
from mauscheln_env.engine import Game
from mauscheln_env.errors import MauschelnError
from mauscheln_env.files import atomic_write
from mauscheln_env.observation import Observer

POLICY_DIR = Path(__file__).resolve().parent / "policies"
FORMAT = "mauscheln-policy-v1"
NUM_SUITS = len(SUITS)


class CheckpointError(MauschelnError):
    """A checkpoint that is missing, corrupt, or made for another environment."""


@dataclass(frozen=True)
class NetSpec:
    """The shape of a :class:`PolicyNet`."""

    obs_size: int
    num_actions: int
    hidden: tuple[int, ...] = (256, 256)
    critic_size: int | None = None
    """Input size of the value head; ``None`` means the observation (no centralised critic)."""
    trump_first: bool = False
    """Relabel the suits so that the trump suit is always the first (see :func:`trump_first_tables`)."""


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


class PolicyNet(nn.Module):
    """Separate actor and critic MLPs; illegal actions are masked out of the logits.

    With ``spec.trump_first`` the network sees every observation with the suits
    relabelled so that the trump suit comes first, and its card logits are mapped
    back (``trump_tables`` from :func:`trump_first_tables`, stored with the weights).
    Where the game is symmetric under relabelling suits this folds four trump suits
    into one without changing what the policy can express; where a rule names a card
    (Muschka's ace of spades) the real trump suit stays visible, so nothing is lost.
    """

    def __init__(self, spec: NetSpec, trump_tables: tuple[torch.Tensor, torch.Tensor, int] | None = None) -> None:
        super().__init__()
        self.spec = spec
        self.actor = _mlp([spec.obs_size, *spec.hidden, spec.num_actions])
        self.critic = _mlp([spec.critic_size or spec.obs_size, *spec.hidden, 1])
        with torch.no_grad():  # small last layers, as in CleanRL's PPO
            self.actor[-1].weight.mul_(0.01)
            self.actor[-1].bias.zero_()
        if spec.trump_first:
            if trump_tables is None:  # shapes only; load_state_dict fills in the values
                trump_tables = (torch.zeros(NUM_SUITS, spec.obs_size, dtype=torch.long),
                                torch.zeros(NUM_SUITS, spec.num_actions, dtype=torch.long), 0)
            obs_perm, act_perm, trump_offset = trump_tables
            self.register_buffer("obs_perm", obs_perm.clone())
            self.register_buffer("act_perm", act_perm.clone())
            self.register_buffer("trump_offset", torch.tensor(int(trump_offset)))

    def prepare(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(x, trump)``: the network's input for ``obs`` (suits relabelled when ``trump_first``) and the
        trump suit of each row (``None`` without ``trump_first``). A trainer prepares each observation once
        and stores ``x``; :meth:`logits_of` and :meth:`value_of` take it from there."""
        if not self.spec.trump_first:
            return obs, None
        start = int(self.trump_offset)
        trump = obs[:, start:start + NUM_SUITS].argmax(1)
        return obs.gather(1, self.obs_perm.index_select(0, trump)), trump

    def canonical(self, obs: torch.Tensor) -> torch.Tensor:
        """The observation as the network sees it (suits relabelled when ``trump_first``)."""
        return self.prepare(obs)[0]

    def logits_of(self, x: torch.Tensor, trump: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor:
        """Masked logits over the real actions from a prepared input."""
        logits = self.actor(x)
        if trump is not None:
            logits = logits.gather(1, self.act_perm.index_select(0, trump))
        return logits.masked_fill(~mask, torch.finfo(logits.dtype).min)

    def value_of(self, x: torch.Tensor) -> torch.Tensor:
        """The value head on a prepared observation, or on the critic input of a centralised critic."""
        return self.critic(x).squeeze(-1)

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.logits_of(*self.prepare(obs), mask)

    def value(self, critic_input: torch.Tensor) -> torch.Tensor:
        """The value of an observation (or, with ``critic_size``, of a centralised critic input)."""
        if self.spec.critic_size is None:
            critic_input = self.canonical(critic_input)
        return self.value_of(critic_input)


CARD_PIECES = ("hand", "own_discards", "own_drawn", "trump_card", "trick_cards")
"""Observation pieces indexed by card in their last dimension."""


def trump_first_tables(game: Game) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Index tables that swap the trump suit with the first suit (clubs) in observations and actions.

    Returns ``(obs_perm[4, D], act_perm[4, A], trump_offset)``: for trump suit
    ``t``, ``obs.gather(1, obs_perm[t])`` is the relabelled observation and
    ``logits.gather(1, act_perm[t])`` maps logits over relabelled actions back
    to the real ones (a swap of two suits is its own inverse). Needs a deck
    with the same ranks in every suit, trumps that are exactly the trump suit
    and the ``trump_suit`` piece; raises
    :class:`~mauscheln_env.errors.ConfigError` otherwise.

    The ``trump_suit`` piece is relabelled too (it then always shows the first suit) only where the game is
    symmetric under relabelling suits. A table whose rules tell one card apart (a trick hook: Muschka's ace
    of spades) keeps the real trump suit in that piece: with the suits swapped, the network could not tell
    otherwise which suit is the real spades (trumps clubs or spades look alike), and the relabelling must
    not lose what the seat knows.
    """
    from mauscheln_env.errors import ConfigError

    deck = game.deck
    observer = Observer(game)
    names = {p.name: p for p in observer.pieces}
    ranks_by_suit = [sorted(deck.rank[c] for c in range(len(deck)) if deck.suit[c] == s) for s in range(NUM_SUITS)]
    plain_trumps = all(game.tables[t].trump_mask == deck.suit_mask[t] for t in range(NUM_SUITS))
    if "trump_suit" not in names or not plain_trumps or any(r != ranks_by_suit[0] for r in ranks_by_suit):
        raise ConfigError(
            "trump_first needs a deck with the same ranks in every suit, no permanent trumps (Belli, Weli, "
            "Pamphile) and a trump_suit observation "
            f"(this game: {game.config.ruleset}, {len(deck)} cards); train with trump_first: false"
        )
    N, D, A = len(deck), observer.size, game.num_actions
    where = {(deck.suit[c], deck.rank[c]): c for c in range(N)}
    obs_perm = torch.arange(D).repeat(NUM_SUITS, 1)
    act_perm = torch.arange(A).repeat(NUM_SUITS, 1)
    for t in range(NUM_SUITS):
        swap = {0: t, t: 0}
        card = torch.tensor([where[(swap.get(deck.suit[c], deck.suit[c]), deck.rank[c])] for c in range(N)])
        act_perm[t, :N] = card
        for name in CARD_PIECES:
            if name not in names:
                continue
            off, size = observer.offsets[name], names[name].size
            for start in range(off, off + size, N):
                obs_perm[t, start:start + N] = start + card
        if not game.trick_hooks:  # suit-symmetric: the trump suit always reads as the first
            ts = observer.offsets["trump_suit"]
            obs_perm[t, ts:ts + NUM_SUITS] = ts + torch.tensor([swap.get(s, s) for s in range(NUM_SUITS)])
    return obs_perm, act_perm, observer.offsets["trump_suit"]


def masked_distribution(logits: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities and the masked entropy (illegal actions contribute nothing)."""
    logp = torch.log_softmax(logits, dim=-1)
    # exp of the illegal actions' huge negative log-probabilities takes a slow path on the CPU (about 50 times
    # the normal cost); their terms are dropped anyway, so take exp(0) there: the same entropy, bit for bit.
    p = torch.where(mask, logp, 0.0).exp()
    entropy = -(torch.where(mask, p * logp, torch.zeros_like(p))).sum(-1)
    return logp, entropy


def sample_actions(logits: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Sample from masked logits; a masked action has probability exactly 0."""
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def sample_by_uniform(logits: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Sample from masked logits by inverting the distribution function at given uniforms ``u`` (float[B] in
    [0, 1)): the first action whose cumulative probability exceeds ``u`` times the total. An action of
    probability 0 (masked) is never chosen: the cumulative sum does not rise there."""
    cdf = torch.softmax(logits.to(torch.float64), dim=-1).cumsum(dim=-1)
    target = u.to(torch.float64)[:, None] * cdf[:, -1:]
    return (cdf <= target).sum(dim=-1).clamp_max(logits.shape[-1] - 1)


# ---------------------------------------------------------------------- checkpoint format
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
        "net": json.dumps({"obs_size": net.spec.obs_size, "num_actions": net.spec.num_actions,
                           "hidden": list(net.spec.hidden), "critic_size": net.spec.critic_size,
                           "trump_first": net.spec.trump_first}),
        "layout": json.dumps(layout_of(game)),
        "extra": json.dumps(extra or {}),
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
    ``learned`` without a checkpoint plays. Raises :class:`CheckpointError` naming the shipped policies when
    there is none for that ruleset and player count."""
    name = f"{game.config.ruleset}{game.n}"
    if name not in available_policies():
        raise CheckpointError(f"no policy is shipped for {game.config.ruleset} with {game.n} players; shipped: "
                              f"{', '.join(available_policies()) or 'none'}; allowed: learned:checkpoint=PATH "
                              "(a policy file or a run directory) or a table that has a shipped policy")
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


# ---------------------------------------------------------------------- agent
class LearnedAgent(Agent):
    """Plays a trained :class:`PolicyNet` from the observation and the mask alone.

    By default it samples from the policy with its seeded generator (the
    policy was trained as a mixed strategy; in an imperfect-information game
    its argmax can be much weaker); ``greedy=True`` plays the most likely action.
    """

    name = "learned"
    param_help = {"checkpoint": "a policy file, a run directory or a shipped policy name "
                                f"({', '.join(available_policies()) or 'none shipped'}); default: the policy "
                                "shipped for the table (<ruleset><players>)"}

    def __init__(self, seed: int | None = None, checkpoint: str | None = None, greedy: bool = False) -> None:
        super().__init__(seed)
        self.params = {"checkpoint": None if checkpoint is None else str(checkpoint), "greedy": greedy}
        self.net: PolicyNet | None = None
        self.layout: dict[str, Any] = {}
        self.extra: dict[str, Any] = {}
        self.source: str | None = None if checkpoint is None else str(checkpoint)
        """The checkpoint played: the one given, else the table's shipped policy once :meth:`setup` ran."""
        if checkpoint is not None:
            self.net, self.layout, self.extra = read_policy(checkpoint)
        self.greedy = greedy

    @classmethod
    def from_network(cls, net: PolicyNet, game: Game, seed: int | None = None, greedy: bool = False,
                     label: str = "network") -> LearnedAgent:
        """An agent that plays ``net`` (already in memory, e.g. a trainer's frozen snapshot) in ``game``.

        ``label`` stands for the checkpoint in :meth:`label` and :meth:`spec`; such an agent cannot be
        rebuilt by name in another process.
        """
        if not isinstance(net, PolicyNet):
            raise CheckpointError(f"from_network needs a PolicyNet, got {type(net).__name__}")
        agent = cls.__new__(cls)
        Agent.__init__(agent, seed)
        agent.params = {"checkpoint": str(label), "greedy": bool(greedy)}
        agent.net, agent.layout, agent.extra, agent.greedy = net.eval(), layout_of(game), {}, bool(greedy)
        agent.source = None
        check_compatible(agent.layout, game, str(label))
        if net.spec.obs_size != Observer(game).size or net.spec.num_actions != game.num_actions:
            raise CheckpointError(f"{label}: a network of {net.spec.obs_size} inputs and {net.spec.num_actions} "
                                  f"actions cannot play {game.config.ruleset} with {game.n} players")
        return agent

    def setup(self, game: Game, seat: int) -> None:
        super().setup(game, seat)
        source = self.params["checkpoint"]
        if source is None:  # the shipped policy of this table, read once per table it is set up for
            source = shipped_policy_name(game)
            if self.source != source:
                self.net, self.layout, self.extra = read_policy(source)
                self.source, self._checked = source, None
        if self._checked is not game:  # a match runner sets its agents up at every game of its table
            check_compatible(self.layout, game, source)
            self._checked = game

    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        legal = legal_ids(action_mask)
        if self.net is None:
            raise CheckpointError("learned without a checkpoint plays the shipped policy of the table it is set "
                                  "up for; call setup(game, seat) before act")
        actor = self._actor
        if actor is None or actor.net is not self.net:
            actor = self._actor = NumpyActor(self.net)
        logits = actor.logits(np.asarray(observation, dtype=np.float32))[legal].astype(np.float64)
        if self.greedy:
            return int(legal[int(np.argmax(logits))])
        e = np.exp(logits - logits.max())
        p = np.zeros(len(action_mask))
        p[legal] = e / e.sum()
        return int(self.rng.choice(len(p), p=p))

    _actor: NumpyActor | None = None
    _checked: Game | None = None  # the last game the policy was checked against


class NumpyActor:
    """The actor of a :class:`PolicyNet` in numpy, one observation at a time: the Python agent's path, where a
    torch call per layer costs more than the arithmetic of a small network. Its logits equal the network's up
    to float32 rounding (``tests/test_train.py`` checks them and the greedy actions)."""

    def __init__(self, net: PolicyNet) -> None:
        self.net = net
        self.layers = [(m.weight.detach().cpu().numpy().astype(np.float32),
                        m.bias.detach().cpu().numpy().astype(np.float32))
                       for m in net.actor if isinstance(m, nn.Linear)]
        self.trump_first = net.spec.trump_first
        if self.trump_first:
            self.obs_perm = net.obs_perm.cpu().numpy()
            self.act_perm = net.act_perm.cpu().numpy()
            self.offset = int(net.trump_offset)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """float32[D] -> float32[A], the unmasked logits over the real actions."""
        trump = 0
        if self.trump_first:
            trump = int(np.argmax(obs[self.offset:self.offset + NUM_SUITS]))
            obs = obs[self.obs_perm[trump]]
        x = obs
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            x = w @ x + b
            if i < last:
                x = np.tanh(x)
        return x[self.act_perm[trump]] if self.trump_first else x


class BatchedLearned:
    """A frozen learned policy over ``(obs, mask)`` batches: the tensor form of :class:`LearnedAgent`, for the
    batched engine's tables (a trainer's opponents, ``baseline_opponents: [learned:checkpoint=...]``).

    ``checkpoint`` as for :class:`LearnedAgent` (default: the policy shipped for ``game``'s table); the policy
    must have been trained for ``game``. Its weights never receive gradients (``requires_grad`` is off and
    :meth:`act` runs under ``inference_mode``). It samples from a ``torch.Generator`` seeded with ``seed`` (the
    trainer reseeds :attr:`generator` every update), so its draws are not those of the numpy generator of
    :class:`LearnedAgent`; with ``greedy=True`` both play the most likely action, decision for decision.
    """

    name = "learned"

    def __init__(self, game: Game, device: torch.device | str = "cpu", seed: int = 0, checkpoint: str | None = None,
                 greedy: bool = False) -> None:
        from agents.batched_expert import seeded_generator

        if not isinstance(greedy, bool):
            raise ValueError(f"greedy={greedy!r} is not allowed; allowed: true or false")
        self.source = shipped_policy_name(game) if checkpoint is None else str(checkpoint)
        self.device, self.generator = seeded_generator(seed, device)
        self.net = load_policy(self.source, game).to(self.device).requires_grad_(False)
        self.greedy = greedy
        self.num_actions = game.num_actions

    @torch.inference_mode()
    def act(self, obs: torch.Tensor, mask: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        """obs float[B, D], mask bool[B, A] -> int64[B]: an action of each row, legal where its mask has one.

        ``u`` (float[B] in [0, 1)): one given uniform per row, turned into the sampled action by the inverse of
        the policy's distribution function over the action ids (ignored with ``greedy``); omitted, the
        draws come from :attr:`generator`."""
        mask = mask.to(self.device, torch.bool)
        if mask.dim() != 2 or mask.shape[1] != self.num_actions:
            raise ValueError(f"mask has shape {tuple(mask.shape)}; allowed: [B, {self.num_actions}]")
        logits = self.net.masked_logits(obs.to(self.device, torch.float32), mask)
        if self.greedy:
            return logits.argmax(dim=1)
        if u is None:
            return sample_actions(logits, self.generator)
        return sample_by_uniform(logits, u.to(self.device))


def rules_of(layout: dict[str, Any]) -> Game:
    """The :class:`Game` a checkpoint was trained for."""
    rules = dict(layout["rules"])
    return Game(make_config(rules.pop("ruleset"), rules.pop("num_players"), **rules))
