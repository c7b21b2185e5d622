"""League training: a main agent, a main exploiter and a league exploiter, with opponents chosen by how hard they are.

    mauscheln league --config configs/train/expert.yaml --rounds 8 --updates-per-round 50
    mauscheln league --config configs/train/expert.yaml --init-from mauscheln4 --rounds 4 --run-dir runs/league/a

The league of AlphaStar (Vinyals et al. 2019) on one machine, run round by round with the
self-play trainer (:mod:`train.ppo_selfplay`) as the learner of each role:

* **main agent**: trains in the preset's field (its self-play, snapshots and ``baseline_opponents``) plus
  ``--opponents`` frozen league members drawn by prioritised fictitious self-play: a member the main agent
  wins a share ``p`` of the decided deals against is drawn with weight ``(1 - p)^2`` (PFSP's "hard" weighting:
  what it still loses to comes back most);
* **main exploiter**: each round starts from the main agent's new weights and trains against that main agent
  alone (both duplicate formats), to find what it now gets wrong; its snapshot joins the league, so the next
  round's main agent meets it;
* **league exploiter**: continues from its own last weights and trains against PFSP draws from the whole league
  (exploiters included; weighted, for want of its own evaluations, by the main agent's results against them),
  finding what the league as a whole misses.

Each role's round is ``--updates-per-round`` PPO updates warm-started from a policy (``init_from``; Adam's
moments start afresh each round). After the round every new snapshot is added to the league and the main agent
plays every member and the preset's baselines over ``--eval-deals`` duplicate deals (batched engine): those
figures set the next round's PFSP weights and go to TensorBoard (``league/``) and to ``league.json``, written
atomically after every round. Run the same command again after a stop: finished rounds are kept, the one that
was cut is played again from its start (its seeds do not change), so the league ends as an uninterrupted run
would. The main agent's policy is ``RUN_DIR/policy.safetensors``.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from mauscheln_env.errors import ConfigError, shown
from mauscheln_env.files import atomic_write_text, check_output_path, strict_json
from train.cli import tyro_cli

PROG = "mauscheln league"
ROLES = ("main", "main_exploiter", "league_exploiter")


@dataclass
class LeagueArgs:
    """Train a main agent in a league with a main exploiter and a league exploiter (PFSP opponents)."""

    config: str
    """A training preset (configs/train/*.yaml): the table, the network and the main agent's field."""
    rounds: int = 6
    """Rounds of the league (each trains the three roles in turn)."""
    updates_per_round: int = 40
    """PPO updates of each role in a round."""
    opponents: int = 3
    """League members the main agent and the league exploiter meet each round (PFSP draws, fewer if the league
    is smaller)."""
    init_from: str | None = None
    """The main agent's starting policy (default: the preset's init_from, else random weights)."""
    eval_deals: int = 300
    """Duplicate deals of each evaluation of the main agent after a round."""
    seed: int = 1
    """Seed of the league: every round's runs, draws and evaluations derive from it."""
    runs_root: str = "runs"
    """Where the run directory is made."""
    run_dir: str | None = None
    """Run directory (default: runs_root/<ruleset>__league__<seed>); the same one continues a stopped league."""


def _check(args: LeagueArgs) -> None:
    from agents.evaluation.duplicate import MAX_DEALS

    for name, low, high in (("rounds", 1, None), ("updates_per_round", 1, None), ("opponents", 1, None),
                            ("eval_deals", 1, MAX_DEALS), ("seed", 0, None)):
        value = getattr(args, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
            span = f">= {low}" if high is None else f"{low}..{high}"
            raise ConfigError(f"{name}={shown(value)} is not allowed; allowed: a whole number {span}")


def pfsp_weights(win_shares: list[float]) -> np.ndarray:
    """PFSP's hard weighting: ``(1 - p)^2`` for a member the main agent wins a share ``p`` of decided deals
    against, normalised; a member it never loses to keeps a small weight, so no member is dropped for good."""
    w = (1.0 - np.clip(np.asarray(win_shares, dtype=np.float64), 0.0, 1.0)) ** 2 + 1e-3
    return w / w.sum()


def draw_opponents(members: list[dict[str, Any]], k: int, rng: np.random.Generator,
                   exclude: str | None = None) -> list[dict[str, Any]]:
    """Up to ``k`` distinct members drawn by PFSP weight (``exclude``: a member name left out)."""
    pool = [m for m in members if m["name"] != exclude]
    if not pool:
        return []
    p = pfsp_weights([m.get("main_win_share", 0.5) for m in pool])
    picks = rng.choice(len(pool), size=min(k, len(pool)), replace=False, p=p)
    return [pool[int(i)] for i in sorted(picks)]


def _seed(seed: int, *parts: int) -> int:
    return int(np.random.SeedSequence([seed, *parts]).generate_state(1)[0] % (2**31 - 1))


def _train_role(base: Any, role: str, rnd: int, init_from: str | None, opponents: list[str],
                field: bool, run_dir: Path, seed: int, updates: int) -> Path:
    """One role's round: a fresh trainer run warm-started from ``init_from``; returns its policy file."""
    import dataclasses

    from train.ppo_selfplay import check_args, train

    out = run_dir / "rounds" / f"{rnd:03d}_{role}"
    if out.exists():  # a round cut short: played again from its start
        shutil.rmtree(out)
    values = {
        "exp_name": f"league_{role}", "seed": _seed(seed, rnd, ROLES.index(role)), "init_from": init_from,
        "run_dir": str(out), "resume": None, "max_updates": None, "max_minutes": None,
        "total_decisions": updates * base.num_envs * base.num_steps, "eval_every": 0, "final_eval_deals": 0,
        "imitate_decisions": 0, "magnet": None, "magnet_coef": 0.0,
    }
    if field:  # the preset's field plus league members
        values["baseline_opponents"] = [*base.baseline_opponents, *opponents]
    else:  # only the given opponents, at every table
        values.update(baseline_opponents=opponents, self_play_prob=0.0, baseline_prob=1.0, pool_size=0)
    targs = dataclasses.replace(base, **values)
    check_args(targs)
    summary = train(targs)
    if summary.get("interrupted"):
        raise KeyboardInterrupt
    return out / "policy.safetensors"


def read_state(path: Path) -> dict[str, Any]:
    """The ``league.json`` of a league to continue, refused unless it is a state this command wrote."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} cannot be read as a league state ({exc}); allowed: the league.json {PROG} wrote, "
                          "or another --run-dir") from None
    shapes = {"args": dict, "rounds_done": int, "members": list, "latest": dict, "history": list}
    if not isinstance(state, dict) or any(not isinstance(state.get(k), t) for k, t in shapes.items()):
        raise ConfigError(f"{path} is not a league state (a mapping of {', '.join(shapes)}); allowed: the league.json "
                          f"{PROG} wrote, or another --run-dir")
    return state


def league(args: LeagueArgs) -> dict[str, Any]:
    from torch.utils.tensorboard import SummaryWriter

    from agents.evaluation.duplicate import Settings, evaluate_pair
    from train.ppo_selfplay import parse_args, rules_config
    from train.report import options_of

    _check(args)
    base = parse_args(["--config", args.config])
    if base.backend != "batched":
        raise ConfigError(f"{args.config} trains on backend={base.backend!r}; allowed: a preset with backend: batched "
                          "(every league member sits at the batched engine's tables)")
    config = rules_config(base)
    run_dir = Path(args.run_dir or Path(args.runs_root) / f"{config.ruleset}{config.num_players}__league__{args.seed}")
    state_file = run_dir / "league.json"
    state: dict[str, Any] = {"args": {k: getattr(args, k) for k in LeagueArgs.__dataclass_fields__},
                             "rounds_done": 0, "members": [], "latest": {}, "history": []}
    check_output_path(run_dir, "--run-dir", folder=True)
    if state_file.exists():
        state = read_state(state_file)
        kept = {k: v for k, v in state["args"].items() if k not in ("rounds", "run_dir", "runs_root")}
        now = {k: getattr(args, k) for k in kept}
        if kept != now:
            raise ConfigError(f"{run_dir} holds a league started with {kept}; allowed: the same options (only "
                              "--rounds may grow), or another --run-dir")
    start = base.init_from if args.init_from is None else args.init_from
    if start is not None:  # a policy of another table or shape is refused before anything is made
        import dataclasses

        from agents.learned import load_policy
        from mauscheln_env import Game
        from train.ppo_selfplay import check_args

        load_policy(start, Game(config))
        check_args(dataclasses.replace(base, init_from=start))
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "members").mkdir(exist_ok=True)
    writer = SummaryWriter(str(run_dir / "tensorboard"))
    settings = Settings(ruleset=config.ruleset, players=config.num_players, deals=args.eval_deals,
                        rule_options=tuple(sorted(options_of(config).items())), backend="auto")
    for rnd in range(state["rounds_done"], args.rounds):
        rng = np.random.default_rng(_seed(args.seed, rnd, 99))
        latest = state["latest"]
        main_start = latest.get("main", start)
        picks = draw_opponents(state["members"], args.opponents, rng)
        print(f"{PROG}: round {rnd + 1}/{args.rounds}: main agent against the field and "
              f"{[m['name'] for m in picks] or 'no league member yet'}", flush=True)
        main = _train_role(base, "main", rnd, main_start, [f"learned:checkpoint={m['path']}" for m in picks],
                           True, run_dir, args.seed, args.updates_per_round)
        print(f"{PROG}: round {rnd + 1}: main exploiter against the new main agent", flush=True)
        exploiter = _train_role(base, "main_exploiter", rnd, str(main), [f"learned:checkpoint={main}"], False,
                                run_dir, args.seed, args.updates_per_round)
        league_picks = draw_opponents(state["members"], args.opponents, rng) or [{"path": str(main)}]
        print(f"{PROG}: round {rnd + 1}: league exploiter against "
              f"{[m.get('name', 'the new main agent') for m in league_picks]}", flush=True)
        league_exp = _train_role(base, "league_exploiter", rnd, latest.get("league_exploiter", str(main)),
                                 [f"learned:checkpoint={m['path']}" for m in league_picks], False, run_dir,
                                 args.seed, args.updates_per_round)
        members = list(state["members"])
        for role, policy in (("main", main), ("main_exploiter", exploiter), ("league_exploiter", league_exp)):
            path = run_dir / "members" / f"{role}_{rnd + 1:03d}.safetensors"
            shutil.copyfile(policy, path)
            members.append({"name": f"{role}_{rnd + 1:03d}", "role": role, "round": rnd + 1, "path": str(path)})
        main_spec = f"learned:checkpoint={members[-3]['path']}"
        row: dict[str, Any] = {"round": rnd + 1}
        for m in members[:-3] + members[-2:]:  # every member but the main agent itself
            r = evaluate_pair(main_spec, f"learned:checkpoint={m['path']}", replace(settings, seed=_seed(args.seed, rnd, 7)),
                              keep_per_deal=False)
            decided = r.wins + r.losses
            m["main_win_share"] = 0.5 if decided == 0 else r.wins / decided
            m["main_advantage"] = r.advantage.mean
            writer.add_scalar(f"league/main_advantage_vs_{m['name']}", r.advantage.mean, rnd + 1)
        for baseline in base.baseline_opponents:
            r = evaluate_pair(main_spec, baseline, replace(settings, seed=_seed(args.seed, rnd, 8)), keep_per_deal=False)
            row[f"vs_{baseline}"] = {"mean": r.advantage.mean, "low": r.advantage.low, "high": r.advantage.high}
            writer.add_scalar(f"league/main_advantage_vs_{baseline}", r.advantage.mean, rnd + 1)
            print(f"{PROG}: round {rnd + 1}: main agent vs {baseline}: {r.advantage.mean:+.3f} "
                  f"[{r.advantage.low:+.3f}, {r.advantage.high:+.3f}] over {args.eval_deals} deals", flush=True)
        writer.flush()
        shutil.copyfile(main, run_dir / "policy.safetensors.tmp")
        (run_dir / "policy.safetensors.tmp").replace(run_dir / "policy.safetensors")
        state = {**state, "rounds_done": rnd + 1, "members": members,
                 "latest": {"main": members[-3]["path"], "league_exploiter": members[-1]["path"]},
                 "history": [*state["history"], row]}
        state["args"]["rounds"] = args.rounds
        atomic_write_text(state_file, strict_json(state, indent=1))
    writer.close()
    print(f"{PROG}: {state['rounds_done']} rounds, {len(state['members'])} league members; the main agent: "
          f"{run_dir / 'policy.safetensors'}", flush=True)
    return {"run_dir": str(run_dir), **state}


def main(argv: list[str] | None = None) -> int:
    from train.cli import run_job

    argv = list(sys.argv[1:] if argv is None else argv)
    return run_job(PROG, lambda: league(tyro_cli(LeagueArgs, argv, prog=PROG, description=__doc__.split("\n\n")[0])))


if __name__ == "__main__":
    sys.exit(main())
