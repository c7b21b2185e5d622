"""Recorded decisions of ``pimc``: seeded duplicate deals played through the benchmark's own path, hashed.

A change that makes the search faster must not change what it decides: the same
seed, the same observations, the same actions. Each recorded case plays
duplicate deals of ``expert`` against a ``pimc`` spec with
:func:`agents.evaluation.duplicate.play_block` (both formats, every rotation of
the seats, the seeds of a bench run), keeps every game's action ids and hashes
them, one SHA-256 per deal. ``tests/test_pimc_traces.py`` replays them.

Cases: every ruleset's default table with the default ``pimc`` and with the
search agent on the table's shipped policy (``pimc:model=learned,phases=play``),
one deal each (``fast``); more deals of those, the other ``mauscheln`` tables
with a shipped policy, rule options whose trick hooks the search asks (the Belli,
the Pamphile, the classic forced knock) and non-default search parameters
(``slow``, run with ``pytest -m slow``).

Regenerate (only when pimc is meant to decide differently, with a note saying why):
``python -m tests.pimc_traces --write``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from agents.evaluation.duplicate import Settings, play_block
from mauscheln_env.rulesets import RULESETS

TRACE_FILE = Path(__file__).resolve().parent / "data" / "pimc_traces.json"
SEED = 7
SEARCH = "pimc:model=learned,phases=play"
"""The search agent of a table's field: the search on the table's shipped policy, in the card play."""


def cases() -> dict[str, dict[str, Any]]:
    """name -> ``{"ruleset", "players", "options", "spec", "deals", "family"}`` for every recorded case."""
    out: dict[str, dict[str, Any]] = {}

    def add(family: str, ruleset: str, players: int, spec: str, deals: int, **options: Any) -> None:
        opts = ",".join(f"{k}={v}" for k, v in sorted(options.items()))
        name = f"{ruleset}_{players}p{'[' + opts + ']' if opts else ''}|{spec}|{family}"
        out[name] = {"ruleset": ruleset, "players": players, "options": options, "spec": spec, "deals": deals,
                     "family": family}

    for ruleset in sorted(RULESETS):
        for spec in ("pimc", SEARCH):
            add("fast", ruleset, 4, spec, 1)
            add("slow", ruleset, 4, spec, 4)
    for players in (3, 5, 7):
        for spec in ("pimc", SEARCH):
            add("slow", "mauscheln", players, spec, 2)
    add("slow", "mauscheln", 4, "pimc", 2, belli="7D", belli_penalty="ace")
    add("slow", "mouche", 4, "pimc", 2, pamphile=True)
    add("slow", "mauscheln_classic", 4, "pimc", 2, forced_knock_new_pot=True, mauschelzwang=True)
    for spec in ("pimc:belief=uniform", "pimc:rollout_search=true,samples=8", "pimc:model=learned"):
        add("slow", "mauscheln", 4, spec, 2)
        add("slow", "muschka", 4, spec, 1)
    return out


def settings_of(case: dict[str, Any]) -> Settings:
    return Settings(ruleset=case["ruleset"], players=case["players"], deals=case["deals"], seed=SEED,
                    rule_options=tuple(sorted(case["options"].items())))


def play(case: dict[str, Any]) -> dict[str, Any]:
    """Every deal's digest of the action ids of its games (expert against the case's spec), and how many
    actions they hold."""
    settings = settings_of(case)
    digests = []
    actions = 0
    for d in range(case["deals"]):
        out = play_block(settings, "expert", case["spec"], d, d + 1, record=True)
        games = out["actions"][0]
        actions += sum(len(g) for g in games)
        digests.append(hashlib.sha256(json.dumps(games, separators=(",", ":")).encode()).hexdigest()[:16])
    return {"digests": digests, "actions": actions}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.pimc_traces", description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"record every case into {TRACE_FILE}")
    parser.add_argument("--check", action="store_true", help="replay every recorded case and compare")
    parser.add_argument("--family", choices=("fast", "slow"), default=None, help="only this family")
    args = parser.parse_args(argv)
    if args.write == args.check:
        parser.print_help()
        return 2
    recorded = json.loads(TRACE_FILE.read_text(encoding="utf-8")) if TRACE_FILE.exists() else {}
    data = dict(recorded) if args.write else {}
    failed = 0
    for name, case in cases().items():
        if args.family and case["family"] != args.family:
            continue
        t0 = time.perf_counter()
        got = {**case, **play(case)}
        seconds = time.perf_counter() - t0
        if args.write:
            data[name] = got
            print(f"{name}: {got['actions']} actions, {seconds:.1f}s", flush=True)
        else:
            same = recorded.get(name, {}).get("digests") == got["digests"]
            failed += not same
            print(f"{name}: {'same' if same else 'DIFFERENT'} ({seconds:.1f}s)", flush=True)
    if args.write:
        data = {k: data[k] for k in cases() if k in data}
        TRACE_FILE.parent.mkdir(parents=True, exist_ok=True)
        tmp = TRACE_FILE.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(TRACE_FILE)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
