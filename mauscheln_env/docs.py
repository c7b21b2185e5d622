"""Write the documentation pages that are generated from code.

    python -m mauscheln_env.docs          # rewrites docs/environment/index.md and docs/rulesets/<name>.md
    python -m mauscheln_env.docs --check  # exits 1 when a page is stale

The environment page is the env module's docstring (its layout table is built
from the observation pieces). Each ruleset page comes from its module in
``mauscheln_env/rulesets/``: the rules in brief, the table facts, the deal
procedure (its stages with their RULES.md sections), every option with its
default, the action strings of each phase and the observation pieces the
ruleset adds. The docs and the code cannot drift apart.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from mauscheln_env.config import make_config
from mauscheln_env.engine import Game
from mauscheln_env.observation import Observer
from mauscheln_env.rulesets import RULESETS

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGE = DOCS / "environment" / "index.md"
COMMON_PIECES = {
    "phase", "to_act", "dealer", "live", "chips", "pot", "progress", "hand", "own_discards", "own_drawn",
    "trump_card", "trump_suit", "trump_taken_by", "knock", "roles", "exchanged", "trick_cards", "trick_leader",
    "tricks_won",
}


def environment_page() -> str:
    # The module, not the env() factory that mauscheln_env exports under the same name.
    return importlib.import_module("mauscheln_env.env").__doc__.strip() + "\n"


def ruleset_page(name: str) -> str:
    spec = RULESETS[name]
    game = Game(make_config(name, spec.min_players, **spec.showcase))
    lines = [f"# `{name}`", "", spec.brief, ""]
    lines += [
        "## Table",
        "",
        f"- RULES.md {spec.section}; players: {spec.min_players}-{spec.max_players}; "
        f"direction: {'clockwise' if spec.direction > 0 else 'counter-clockwise'}",
        f"- hand: {spec.hand_size} cards, {spec.hand_size} tricks; deal pattern {','.join(map(str, spec.deal_pattern))}",
        f"- rank order in a suit: {' '.join(spec.rank_order)}; trick profile {spec.trick_profile.value}; "
        f"stock shortage: {spec.stock_policy.value}; bidding: {spec.bidding.value}; scoring: {spec.scoring.value}",
        "- decks: " + ", ".join(
            f"{n}p {len(make_config(name, n).deck)} cards" for n in range(spec.min_players, spec.max_players + 1)
        ),
        "",
        "## Deal procedure",
        "",
        f"The stages of `mauscheln_env/rulesets/{name}.py` in order, every option on"
        + (f" ({', '.join(f'`{k}={v!r}`' for k, v in spec.showcase.items())})" if spec.showcase else "") + ":",
        "",
        "| # | stage | RULES.md | decisions |",
        "| --- | --- | --- | --- |",
    ]
    for i, stage in enumerate(game.stages, 1):
        lines.append(f"| {i} | `{stage.describe()}` | {stage.section} | "
                     f"{', '.join(p.name.lower() for p in stage.phases) or '-'} |")
    lines += [
        "",
        "## Options",
        "",
        "| option | default | allowed | meaning |",
        "| --- | --- | --- | --- |",
    ]
    for opt in spec.options.values():
        lines.append(f"| `{opt.name}` | `{opt.default!r}` | {opt.allowed} | {opt.doc} |")
    lines += ["", "## Actions by phase", "", "| phase | action strings |", "| --- | --- |"]
    for phase in spec.phase_values:
        lines.append(f"| {phase.name.lower()} | {game.handler(phase).actions[phase]} |")
    lines += [
        "",
        "Named actions of this ruleset, in action-id order after the card actions (one per card of the deck): "
        + ", ".join(f"`{a}`" for a in spec.named_actions) + ".",
        "",
        "## Observation pieces this ruleset adds or changes",
        "",
    ]
    observer = Observer(game)
    extra = [p for p in observer.pieces if p.name not in COMMON_PIECES]
    for p in observer.pieces:
        if p.name in ("phase", "roles"):
            extra.insert(0, p)
    for p in extra:
        lines.append(f"- `{p.name}` {p.shape}: {p.doc}")
    if "pot" not in observer.offsets:
        lines.append("- no `pot` piece: Muschka has no chips")
    if "knock" not in observer.offsets:
        lines.append("- no `knock` piece: this ruleset has no knock")
    lines.append("")
    return "\n".join(lines)


def pages() -> dict[Path, str]:
    out = {PAGE: environment_page()}
    for name in RULESETS:
        out[DOCS / "rulesets" / f"{name}.md"] = ruleset_page(name)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    stale = 0
    for path, text in pages().items():
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                print(f"{path} is stale: run python -m mauscheln_env.docs", file=sys.stderr)
                stale += 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
