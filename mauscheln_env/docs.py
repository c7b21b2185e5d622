"""Write the documentation pages that are generated from code.

    python -m mauscheln_env.docs          # rewrites docs/environment.md and docs/rulesets/*.md
    python -m mauscheln_env.docs --check  # exits 1 when a page is stale

The environment page is the env module's docstring (its layout table is built
from the observation pieces). Each ruleset page joins a rules-in-brief text
kept here with tables generated from the ruleset's spec: every option with its
default, the action strings of each phase and the observation pieces the
ruleset adds. The docs and the code cannot drift apart.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mauscheln_env import env as env_module

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGE = DOCS / "environment.md"

BRIEFS = {
    "mauscheln": """\
Modern Mauscheln ([001], RULES.md §2.1). The dealer antes 4 and deals 1,1, turns
the trump card, then 1,1. From the dealer's left, seats declare in turn: the
first to say `mauscheln` becomes the *mauschler* and must take two of the four
tricks; if all say `pass` the deal is thrown in and the pot grows. Then every
other seat decides once whether to `go` with him (needing one trick) or `pass`
(the hand is dead). Players exchange up to four cards from the stock (never
more than it holds), and four tricks are played: follow suit and beat if you
can, else trump (and beat if you can). Each trick pays a quarter of the pot;
whoever misses his target pays the pot once per missing trick into the next pot.

Options: the dealer's blind **knock** on a high trump card (he becomes mauschler,
then swaps cards for the trump card plus blind stock cards); **Vierling** (four
of a rank dealt are shown, paid for and replaced); **Belli** (7D, or the seven of
trumps, is a trump just below the trump ace; meeting the ace costs its player
the stake); **Weli** (6D as a 33rd card and a permanent trump).""",
    "mauscheln_classic": """\
Classic Mauscheln ([000], RULES.md §2.3). 24 cards for 3-4 players (A-9), 32 for
5-6; dealt 2, trump card, 2; a bank of 200 chips and a stake S (multiple of 4).
The dealer may **knock** blind on a trump card of at least `knock_min_rank`: the
others decide whether to go with him; he then discards any number of cards and
draws as many blind, the goers exchange, and he finally picks up, discards
exactly one card and takes the trump card. Otherwise seats declare and go with
as in the modern game; a pass round voids the deal and the next dealer stakes
again. When the stock runs out, the discard pile and the face-up trump card are
reshuffled (the trump card stays out after a knock).

Options: **Mauschelzwang** (the trump-ace holder must declare), **Mitgehzwang**
(the last seat must go with if everyone before passed), the **forced knock** on
a new pot (the dealer plays against everyone, swapping one card for the trump
card), the **pot cap** C with its reserve, and **Schieben** (the seat due to deal
stakes and may push the deal on; after a full round he stakes again and deals).""",
    "mousel": """\
Danish Mousel ([004], RULES.md §2.4). The dealer antes 4; 2 cards each, the trump
card, 2 more. From forehand each seat says `in` or `out`; a seat whose turn comes
when everyone else is out is in without asking, and a single seat in takes the
pot without play. The *committed* player needs two tricks: the knocking dealer,
else a volunteer who said `in_lead`, else the forehand if he is in; every other
seat in needs one. Seats exchange up to `exchange_limit` cards, play four tricks
under the Mauscheln obligations, and a seat short of its requirement pays the
pot once (a flat bête).""",
    "mouche": """\
French Mouche (1718, Lalanne's reconstruction; RULES.md §2.5-2.6). Play runs
counter-clockwise; the dealer antes 5 and deals 3 then 2 cards (2 then 3 with
`deal_2_3`), then turns the trump card. From the dealer's right each seat, once:
`pass` (dead hand, pays nothing), `stay`, or discards 1-5 cards (the first card
action starts the exchange, `done` draws; an empty stock is refilled from the
discards). A seat whose turn comes when all others passed takes the pot. A seat
that stayed with five cards of one suit has a **mouche** and takes the pot at
once (trump suit first, then points, then the seat nearer the dealer's right);
everyone else still in pays the pot. Otherwise five tricks: follow and beat,
else beat with a trump if you can, else anything (no duty to under-trump). Each
trick pays a fifth of the pot; a seat in play without a trick pays the pot.

Options: the **queue** (payments wait in escrow and enter one per deal;
`collect_1730` lets a mouche winner take them all), **Méry's cap**, **Pamphile**
(JC the highest trump; if turned up the dealer names trump; its holder may
`announce` it for 1 chip from each seat; `pamphile_wild` lets it complete any
flush), **Béatrix** (the dealer may `swap` a card for the trump card, losing his
mouche) and the number of **rounds**.""",
    "muschka": """\
Russian Muschka (RULES.md §2.7, §3.4). Scores start at 25 and count down; the
first seat to reach exactly 0 wins. Five cards, dealt 3 and 2, clockwise; the
deck depends on the table (32, 36 or 52). Each seat decides as in Mouche, except
that the holder of the ace of spades may not pass. Tricks follow suit, else
trump, with no duty to beat; if the trump ace is led and spades are not trump,
the ace of spades beats it. A seat in play scores minus one per trick, or +5
with no trick; the holder of the ace of spades loses 5 more (10 when spades are
trump), or scores +10 without a trick. A score below 0 restarts at 25. A lone
seat is credited with all five tricks.""",
}

PHASE_ACTIONS = {
    "offer": "`deal`, `push` (the seat due to deal, with `schieben`)",
    "name_trump": "`trump:C`, `trump:S`, `trump:H`, `trump:D` (dealer, Pamphile turned up)",
    "announce": "`announce`, `silent` (the Pamphile's holder)",
    "knock": "`knock`, `no_knock` (the dealer, blind)",
    "declare": "`mauscheln`, `pass`",
    "go_with": "`go`, `pass`",
    "decide": "`stay`, `pass`, a card code to start an exchange by discarding it; the dealer with Béatrix: `swap`",
    "swap": "a card code: the card the dealer gives for the trump card",
    "exchange": "card codes (each marks one discard), then `done`",
    "play": "card codes",
}
MOUSEL_DECLARE = "`in`, `in_lead` (with `volunteer_leader`), `out`"
COMMON_PIECES = {
    "phase", "to_act", "dealer", "live", "chips", "pot", "progress", "hand", "own_discards", "own_drawn",
    "trump_card", "trump_suit", "trump_taken_by", "knock", "roles", "exchanged", "trick_cards", "trick_leader",
    "tricks_won",
}
ALL_OPTIONS_ON = {
    "mauscheln": {"knock": True, "vierling": True, "belli": "7D"},
    "mauscheln_classic": {"cap": 40, "schieben": True},
    "mousel": {"knock": True},
    "mouche": {"queue": True, "pamphile": True},
    "muschka": {},
}


def environment_page() -> str:
    return env_module.__doc__.strip() + "\n"


def ruleset_page(name: str) -> str:
    from mauscheln_env.config import RULESETS, make_config
    from mauscheln_env.engine import Game
    from mauscheln_env.observation import Observer

    spec = RULESETS[name]
    lines = [f"# `{name}`", "", BRIEFS[name], ""]
    lines += [
        "## Table",
        "",
        f"- players: {spec.min_players}-{spec.max_players}; direction: {'clockwise' if spec.direction > 0 else 'counter-clockwise'}",
        f"- hand: {spec.hand_size} cards, {spec.hand_size} tricks; deal pattern {','.join(map(str, spec.deal_pattern))}",
        f"- rank order in a suit: {' '.join(spec.rank_order)}; trick profile {spec.trick_profile}; "
        f"stock shortage: {spec.stock_policy}",
        "- decks: " + ", ".join(
            f"{n}p {len(make_config(name, n).deck)} cards" for n in range(spec.min_players, spec.max_players + 1)
        ),
        "",
        "## Options",
        "",
        "| option | default | allowed | meaning |",
        "| --- | --- | --- | --- |",
    ]
    for opt in spec.options.values():
        lines.append(f"| `{opt.name}` | `{opt.default!r}` | {opt.allowed} | {opt.doc} |")
    lines += ["", "## Actions by phase", "", "| phase | action strings |", "| --- | --- |"]
    for phase in spec.phases:
        text = MOUSEL_DECLARE if (name == "mousel" and phase == "declare") else PHASE_ACTIONS[phase]
        lines.append(f"| {phase} | {text} |")
    lines += [
        "",
        "Named actions of this ruleset, in action-id order after the card actions (one per card of the deck): "
        + ", ".join(f"`{a}`" for a in spec.named_actions) + ".",
        "",
        "## Observation pieces this ruleset adds or changes",
        "",
    ]
    observer = Observer(Game(make_config(name, spec.min_players, **ALL_OPTIONS_ON[name])))
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
    from mauscheln_env.config import RULESETS

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
