"""Distil a search agent back into a learned policy: play deals with the search, fit the network to its choices.

    mauscheln distill mauscheln4                                   # pimc:model=mauscheln4 teaches mauscheln4
    mauscheln distill mauscheln4 --deals 2000 --eval-deals 5000 --out runs/distill/m4.safetensors
    mauscheln distill runs/x/policy.safetensors --teacher "pimc:model=runs/x/policy.safetensors,samples=8"

The teacher (by default ``pimc:model=POLICY``: the search on top of the policy,
:mod:`agents.search.pimc`) plays every seat of ``--deals`` one-deal sessions of the policy's own table on the reference
engine, and every decision with a choice is recorded: the acting seat's observation, its mask and the teacher's
action. Where the search keeps the policy's own choice that action is a draw from the policy; where it overrules
the policy it is the search's improvement. So fitting the actor to these actions by cross-entropy moves the
policy towards "the policy, improved where the search found better" and keeps it a mixed strategy elsewhere; a
KL term to the starting policy (``--kl-coef``) holds the decisions the data does not cover. Only the actor is
trained (the critic is copied). A tenth of the deals is held out: the command prints the held-out
cross-entropy and agreement with the teacher before and after, writes the new policy atomically (safetensors,
with what it was distilled from in its metadata) and, with ``--eval-deals``, plays it against the starting
policy over duplicate deals (batched backend) and prints the gain.

Every draw comes from ``--seed``: the deals, the teacher's generators, the split and the minibatches.
"""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import tyro

from mauscheln_env.errors import ConfigError, shown
from mauscheln_env.files import atomic_write_text, check_output_path, strict_json
from mauscheln_env.observation import Observer
from train.cli import tyro_cli

PROG = "mauscheln distill"


@dataclass
class DistillArgs:
    """Distil a search agent into POLICY: record its choices over self-play deals, fit the actor to them."""

    policy: tyro.conf.Positional[str]
    """The policy to improve: a shipped name, a policy file or a run directory."""
    teacher: str | None = None
    """The agent whose choices are learnt, as an agent spec (default: pimc:model=POLICY)."""
    deals: int = 200
    """One-deal sessions the teacher plays at every seat (a tenth is held out)."""
    epochs: int = 4
    """Passes over the recorded decisions."""
    learning_rate: Annotated[float, tyro.conf.arg(aliases=("--lr",))] = 3e-4
    """Adam's learning rate."""
    kl_coef: float = 1.0
    """Weight of KL(start || policy) over the recorded decisions (0: none)."""
    minibatch: int = 256
    """Decisions per gradient step."""
    seed: int = 0
    """Seed of the deals, the teacher and the fit."""
    threads: int = 1
    """torch threads."""
    eval_deals: int = 0
    """Duplicate deals of the distilled policy against the starting one afterwards (0: none)."""
    out: str | None = None
    """Where to write the distilled policy (default: runs/distill/<policy>__<seed>.safetensors) and, beside it,
    the summary (.json)."""
    overwrite: bool = False
    """Replace an existing --out (and its summary)."""
    data: str | None = None
    """An .npz file of recorded decisions: read when it exists (made by the same policy table, teacher, deals
    and seed), else written after recording; so that other fits of the same play skip the slow search."""


def _check(args: DistillArgs) -> Path:
    """Refuse what is not allowed before any deal is played; the output path."""
    from agents.evaluation.duplicate import MAX_DEALS

    for name, low, high in (("deals", 10, MAX_DEALS), ("epochs", 1, None), ("minibatch", 1, None),
                            ("threads", 1, 1024), ("eval_deals", 0, MAX_DEALS), ("seed", 0, None)):
        value = getattr(args, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
            span = f">= {low}" if high is None else f"{low}..{high}"
            raise ConfigError(f"{name}={shown(value)} is not allowed; allowed: a whole number {span}")
    if not 0 < args.learning_rate <= 1:
        raise ConfigError(f"learning_rate={args.learning_rate!r} is not allowed; allowed: a number in (0, 1]")
    if not 0 <= args.kl_coef < 1e6:
        raise ConfigError(f"kl_coef={args.kl_coef!r} is not allowed; allowed: a number in [0, 1e6)")
    if args.teacher is not None and not args.teacher.strip():
        raise ConfigError("teacher='' is not allowed; allowed: an agent spec, or no --teacher for pimc:model=POLICY")
    if args.out is not None:
        out = check_output_path(args.out, "--out")
    else:
        out = Path("runs/distill") / f"{Path(str(args.policy)).stem}__{args.seed}.safetensors"
    if out.suffix != ".safetensors":
        raise ConfigError(f"out={str(out)!r} is not allowed; allowed: a path ending in .safetensors")
    taken = [p for p in (out, out.with_suffix(".json")) if p.exists()]
    if taken and not args.overwrite:
        raise ConfigError(f"{taken[0]} exists; allowed: a new --out, or --overwrite to replace it")
    if args.data is not None:
        data = check_output_path(args.data, "--data")
        if data.suffix != ".npz":
            raise ConfigError(f"data={str(data)!r} is not allowed; allowed: a path ending in .npz")
    return out


def table_of(layout: dict[str, Any]) -> Any:
    """The one-deal table a policy was trained for (its rules, max_deals 1)."""
    from mauscheln_env import Game, make_config

    options = dict(layout["rules"])
    ruleset, n = options.pop("ruleset"), options.pop("num_players")
    options["max_deals"] = 1
    return Game(make_config(ruleset, n, **options))


def record(game: Any, teacher: str, deals: int, seed: int) -> dict[str, np.ndarray]:
    """The teacher at every seat of ``deals`` sessions: per decision with a choice, (deal, obs, mask, action)."""
    from agents import MatchRunner, agent_from_spec, agent_seed, make_deal

    agents = [agent_from_spec(teacher) for _ in range(game.n)]
    runner = MatchRunner(game)
    rows: dict[str, list] = {"deal": [], "obs": [], "mask": [], "action": []}

    def keep(state, seat, obs, mask, info, action, d=0):
        if int(np.sum(mask)) > 1:
            for key, value in zip(rows, (d, obs, mask, action)):
                rows[key].append(np.array(value, copy=True))

    for d in range(deals):
        dealer, spec = make_deal(game, seed, d)
        runner.play(agents, dealer=dealer, deal=spec, session_seed=d,
                    seed_for=lambda k, s, d=d: agent_seed(seed, d, k, s),
                    on_decision=lambda *a, d=d: keep(*a, d=d))
    if not rows["obs"]:
        raise ConfigError(f"the teacher {teacher!r} made no decision with a choice in {deals} deals; allowed: more deals")
    return {"deal": np.asarray(rows["deal"]), "obs": np.stack(rows["obs"]).astype(np.float32),
            "mask": np.stack(rows["mask"]).astype(bool), "action": np.asarray(rows["action"], dtype=np.int64)}


def recorded(game: Any, teacher: str, args: DistillArgs) -> dict[str, np.ndarray]:
    """:func:`record`, or its earlier result from ``args.data`` (checked to be the same play; arrays only)."""
    from mauscheln_env.files import atomic_write

    keys = ("deal", "obs", "mask", "action")
    about = strict_json({"table": game.config.to_dict(), "teacher": teacher, "deals": args.deals, "seed": args.seed},
                        sort_keys=True)
    path = Path(args.data) if args.data else None
    if path is not None and path.suffix != ".npz":
        raise ConfigError(f"data={str(path)!r} is not allowed; allowed: a path ending in .npz")
    if path is not None and path.is_file():
        try:
            with np.load(path, allow_pickle=False) as f:
                data = {k: f[k] for k in (*keys, "about")}
        except (OSError, ValueError, KeyError) as exc:
            raise ConfigError(f"{path} is not a decisions file of {PROG} ({exc}); allowed: a file it wrote") from None
        if str(data.pop("about")) != about:
            raise ConfigError(f"{path} holds the play of another table, teacher, deal count or seed; allowed: the "
                              "same options as the run that wrote it, or another --data")
        n = len(data["action"])
        if not (data["obs"].shape[0] == data["mask"].shape[0] == len(data["deal"]) == n
                and data["obs"].shape[1:] == (Observer(game).size,) and data["mask"].shape[1:] == (game.num_actions,)):
            raise ConfigError(f"{path}: arrays of inconsistent shapes; allowed: a file {PROG} wrote for this table")
        print(f"{PROG}: {n:,} recorded decisions read from {path}", flush=True)
        return data
    data = record(game, teacher, args.deals, args.seed)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        def save(tmp: Path) -> None:
            with open(tmp, "wb") as fh:
                np.savez_compressed(fh, about=np.array(about), **data)

        atomic_write(path, save)
    return data


def fit(net: Any, data: dict[str, np.ndarray], args: DistillArgs) -> tuple[Any, dict[str, float]]:
    """A copy of ``net`` whose actor is fitted to the recorded actions (held-out figures before and after)."""
    import torch

    from agents.learned import masked_distribution

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    obs, mask = torch.from_numpy(data["obs"]), torch.from_numpy(data["mask"])
    action = torch.from_numpy(data["action"])
    held_deals = np.random.default_rng(args.seed).permutation(int(data["deal"].max()) + 1)[:max(1, args.deals // 10)]
    held = torch.from_numpy(np.isin(data["deal"], held_deals))
    train_idx, test_idx = torch.nonzero(~held).squeeze(1), torch.nonzero(held).squeeze(1)
    start = copy.deepcopy(net).eval()
    student = copy.deepcopy(net).train()
    with torch.no_grad():
        start_logp = masked_distribution(start.masked_logits(obs, mask), mask)[0]

    def held_out(model: Any) -> tuple[float, float]:
        with torch.no_grad():
            logits = model.masked_logits(obs[test_idx], mask[test_idx])
            logp = masked_distribution(logits, mask[test_idx])[0]
            ce = -logp.gather(1, action[test_idx, None]).mean()
            agree = (logits.argmax(1) == action[test_idx]).float().mean()
        return float(ce), float(agree)

    before = held_out(start)
    optimizer = torch.optim.Adam(student.actor.parameters(), lr=args.learning_rate)
    for _ in range(args.epochs):
        order = train_idx[torch.randperm(len(train_idx), generator=gen)]
        for idx in torch.split(order, args.minibatch):
            logp = masked_distribution(student.masked_logits(obs[idx], mask[idx]), mask[idx])[0]
            ce = -logp.gather(1, action[idx, None]).mean()
            ref = start_logp[idx]
            kl = torch.where(mask[idx], ref.exp() * (ref - logp), 0.0).sum(1).mean()
            loss = ce + args.kl_coef * kl
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    student.eval()
    after = held_out(student)
    figures = {"decisions": int(len(action)), "held_out_decisions": int(len(test_idx)),
               "held_out_cross_entropy_before": before[0], "held_out_cross_entropy_after": after[0],
               "held_out_agreement_before": before[1], "held_out_agreement_after": after[1]}
    return student, figures


def distill(args: DistillArgs) -> dict[str, Any]:
    import torch

    from agents.base import agent_from_spec
    from agents.learned import read_policy, save_policy

    out = _check(args)
    torch.set_num_threads(args.threads)
    net, layout, _ = read_policy(args.policy)
    game = table_of(layout)
    teacher = args.teacher or f"pimc:model={args.policy}"
    probe = agent_from_spec(teacher)  # a bad spec or checkpoint is refused before any deal is played
    probe.setup(game, 0)
    print(f"{PROG}: {teacher} plays {args.deals} deals of {game.config.ruleset}, {game.n} players", flush=True)
    data = recorded(game, teacher, args)
    student, figures = fit(net, data, args)
    extra = {"distilled_from": str(args.policy), "teacher": teacher, "deals": args.deals, "seed": args.seed,
             **{k: round(v, 6) if isinstance(v, float) else v for k, v in figures.items()}}
    save_policy(out, student, game, extra={"distill": extra})
    summary: dict[str, Any] = {"out": str(out), **extra}
    print(f"{figures['decisions']:,} decisions with a choice ({figures['held_out_decisions']:,} held out); "
          f"held-out cross-entropy {figures['held_out_cross_entropy_before']:.4f} -> "
          f"{figures['held_out_cross_entropy_after']:.4f}, agreement with the teacher "
          f"{figures['held_out_agreement_before']:.3f} -> {figures['held_out_agreement_after']:.3f}\nwritten: {out}",
          flush=True)
    if args.eval_deals:
        from agents.evaluation.duplicate import Settings, evaluate_pair

        rules = dict(layout["rules"])
        ruleset, players = rules.pop("ruleset"), rules.pop("num_players")
        rules.pop("max_deals", None)
        result = evaluate_pair(f"learned:checkpoint={out}", f"learned:checkpoint={args.policy}",
                               Settings(ruleset=ruleset, players=players, deals=args.eval_deals, seed=args.seed + 10_000,
                                        rule_options=tuple(sorted(rules.items())), backend="auto"))
        adv = result.advantage
        summary["eval"] = {"deals": args.eval_deals, "mean": adv.mean, "low": adv.low, "high": adv.high}
        print(f"distilled vs {args.policy}: {adv.mean:+.3f} chips/deal, 95% interval [{adv.low:+.3f}, {adv.high:+.3f}] "
              f"over {args.eval_deals} duplicate deals", flush=True)
    atomic_write_text(out.with_suffix(".json"), strict_json(summary, indent=2) + "\n")
    return summary


def main(argv: list[str] | None = None) -> int:
    from train.cli import run_job

    argv = list(sys.argv[1:] if argv is None else argv)
    return run_job(PROG, lambda: distill(tyro_cli(DistillArgs, argv, prog=PROG, description=__doc__.split("\n\n")[0])))


if __name__ == "__main__":
    sys.exit(main())
