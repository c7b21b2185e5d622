"""Replays of benchmark games: the data every viewer reads, and ``mauscheln replay`` in the terminal.

A game of a suite deal is fixed by the deal, the pairing, the format and the
lone seat; its replay is rebuilt by stepping the engine through the game's
action ids (:func:`replay_game`): the actions come from the result record when
it kept that deal's games (``bench run --replays N``), else the deal is played
again with the same agents and seeds (:func:`replay_deal`), and the re-played
figures are checked against the record's. :func:`replay_actions` does the same for
any session from its start (a session played at ``mauscheln serve``).

A replay is plain JSON (``report.json`` of ``mauscheln bench report`` holds
them; the HTML viewer reads the same data). Each deal of the session holds the
table at its start and the steps, each step only what it changed beyond the
defaults of :func:`apply_step` (a card leaves the acting seat's hand, a card
played joins the trick, a won trick counts for its winner)::

    {"table", "deal", "candidate", "baseline", "format", "lone_seat",
     "seats": [agent of each seat],
     "deals": [                     # every deal of the session (a throw-in is followed by a redeal)
        {"dealer", "hands": [[card ids] per seat], "unseen": [[card ids] per seat] (if any),
         "trump": {"card", "holder", "face_up"}, "stock": [card ids, top first],
         "pot", "purse": [chips or score per seat], "roles", "tricks_won", "shown": [card ids],
         "steps": [{"seat", "phase", "action", "legal": [action ids] (when there was a choice),
                    "private": true (if so),
                    "won": {"by": seat, "cards": [[seat, card], ...]} (a trick completed),
                    and where changed otherwise: "hands"/"unseen"/"roles": {seat: value},
                    "trick", "pot", "purse", "trump", "shown",
                    "stock": cards taken from the top, or the new stock}],
         "results": [{"kind", "deltas", "lines": [the settlement, line by line]}]}],
     "deltas": [session total per seat]}

``hands`` is every seat's actual hand; ``unseen`` the cards of it the seat has
not looked at (a blind knock), so the hand as the seat sees it is the rest (the
environment's ``info["hand"]``). A step is ``private`` when it is a card
outside a trick (a discard, a card chosen): a seat view shows another seat's
private step without its card, and never another seat's hand or legal actions.
Card and action ids index the
table's ``cards`` and ``actions`` lists (:func:`table_legend`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from agents.base import agent_from_spec
from agents.bench.decks import DealSet, load_deal_set
from agents.bench.run import decode_game, pair_from_record, snap_per_deal
from agents.evaluation.duplicate import play_block
from agents.evaluation.match import FORMATS, game_order, lineup_of
from mauscheln_env.cards import iter_bits
from mauscheln_env.engine import PHASE_NAMES, ROLE_NAMES, Game, Phase, State
from mauscheln_env.errors import MauschelnError, shown
from mauscheln_env.render import explain_result
from mauscheln_env.ruleargs import ArgumentParser, newline_after_ctrl_c, report

PROG = "mauscheln replay"


class ReplayError(MauschelnError):
    """A replay that cannot be made (no such deal or pairing, actions that do not fit the deal)."""


def _ids(mask: int) -> list[int]:
    return list(iter_bits(mask))


def table_legend(game: Game) -> dict[str, Any]:
    """What the ids of a replay mean: card codes and their symbols, action strings, the purse's name."""
    return {"cards": list(game.deck.codes), "pretty": [game.deck.pretty(c) for c in range(game.num_cards)],
            "actions": [game.action_to_str(a) for a in range(game.num_actions)],
            "purse": "chips" if game.scoring.uses_chips else "score", "players": game.n}


def _snapshot(game: Game, state: State, d: Any = None) -> dict[str, Any]:
    """What a replay shows of deal ``d`` (default: the state's current deal) and of the session now."""
    d = state.deal if d is None else d
    session = state.session
    of_deal = SimpleNamespace(deal=d)  # Game.visible_hand reads only the deal of the state it is given
    return {
        "hands": [_ids(h) for h in d.hands],
        "unseen": [_ids(h & ~game.visible_hand(of_deal, s)) for s, h in enumerate(d.hands)],  # type: ignore[arg-type]
        "trick": [[s, c] for s, c in d.trick],
        "trump": {"card": None if d.undealt else d.trump_card, "holder": d.trump_holder,
                  "face_up": bool(d.trump_face_up)},
        "stock": list(reversed(d.stock)),
        "pot": session.pot,
        "purse": list(session.chips if game.scoring.uses_chips else session.scores),
        "roles": [ROLE_NAMES[r] if session.alive[s] else "eliminated" for s, r in enumerate(d.roles)],
        "tricks_won": list(d.tricks_won),
        "shown": _ids(d.shown()),
    }


DEAL_KEYS = ("hands", "unseen", "trump", "stock", "pot", "purse", "roles", "tricks_won", "shown")
"""What a replay's deal holds at its start (with ``dealer``, ``steps`` and ``results``)."""


def initial_view(deal: Mapping[str, Any]) -> dict[str, Any]:
    """The table at the start of a replay's deal, as :func:`apply_step` updates it."""
    view = {k: json.loads(json.dumps(deal[k])) for k in DEAL_KEYS if k in deal}
    view.setdefault("unseen", [[] for _ in deal["hands"]])
    view.update(trick=[], won=[])
    return view


def apply_step(view: dict[str, Any], step: Mapping[str, Any], num_cards: int) -> dict[str, Any]:
    """Update ``view`` by one step of a replay (the JavaScript viewer does the same).

    By default a card action leaves the acting seat's hand (if it is there), a card played in the play
    phase joins the trick, a won trick leaves the table and counts for its winner; ``stock`` is a number
    of cards taken from the top or a new stock. Anything else a step changed, it names.
    """
    seat, action = step["seat"], step["action"]
    if action < num_cards and action in view["hands"][seat]:
        view["hands"][seat] = [c for c in view["hands"][seat] if c != action]
    if action < num_cards and step["phase"] == "play":
        view["trick"] = view["trick"] + [[seat, action]]
    if "won" in step:
        view["won"] = view["won"] + [step["won"]]
        view["trick"] = []
        view["tricks_won"] = [t + (s == step["won"]["by"]) for s, t in enumerate(view["tricks_won"])]
    for key in ("hands", "unseen", "roles"):
        for s, value in (step.get(key) or {}).items():
            view[key][int(s)] = value
    for key in ("trick", "pot", "purse", "trump", "shown"):
        if key in step:
            view[key] = step[key]
    if "stock" in step:
        view["stock"] = view["stock"][step["stock"]:] if isinstance(step["stock"], int) else step["stock"]
    return view


def _diff(view: dict[str, Any], after: dict[str, Any], n: int) -> dict[str, Any]:
    """The fields a step must name for :func:`apply_step` to turn ``view`` (the defaults applied) into ``after``."""
    out: dict[str, Any] = {}
    for key in ("hands", "unseen", "roles"):
        changed = {s: after[key][s] for s in range(n) if after[key][s] != view[key][s]}
        if changed:
            out[key] = changed
    for key in ("trick", "pot", "purse", "trump", "shown"):
        if after[key] != view[key]:
            out[key] = after[key]
    if after["stock"] != view["stock"]:
        k = len(view["stock"]) - len(after["stock"])
        out["stock"] = k if k > 0 and view["stock"][k:] == after["stock"] else after["stock"]
    return out


def replay_game(deal_set: DealSet, index: int, actions: Sequence[int], seats: Sequence[str],
                meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Step the engine through one game of suite deal ``index`` and record what every step changed."""
    game = deal_set.game
    if not 0 <= index < len(deal_set):
        raise ReplayError(f"deal {index} is not in the {deal_set.suite} {deal_set.table} deal set; allowed: "
                          f"0..{len(deal_set) - 1}")
    fixed = deal_set.deals[index]
    state = game.new_session(np.random.default_rng(fixed.session_seed), dealer=fixed.dealer, deal=fixed.spec)
    return replay_actions(game, state, actions, seats, {**dict(meta or {}), "table": deal_set.table, "deal": index},
                          where=f"deal {index}")


def replay_actions(game: Game, state: State, actions: Sequence[int], seats: Sequence[str],
                   meta: Mapping[str, Any] | None = None, *, where: str = "the session") -> dict[str, Any]:
    """Step the engine from ``state`` (a new session, changed in place) through ``actions`` to the session's end
    and record what every step changed: the replay (``meta``'s fields, ``seats``, ``deals``, ``deltas``).
    ``where`` names the session in errors."""
    n = game.n
    deals: list[dict[str, Any]] = []

    def open_deal() -> tuple[dict[str, Any], dict[str, Any]]:
        snap = _snapshot(game, state)
        rec = {"dealer": state.session.dealer, **{k: snap[k] for k in DEAL_KEYS}, "steps": [], "results": []}
        if not any(rec["unseen"]):
            del rec["unseen"]
        deals.append(rec)
        return rec, initial_view(rec)

    current, view = open_deal()
    totals = [0] * n
    for pos, action in enumerate(actions):
        if state.phase is Phase.OVER:
            raise ReplayError(f"{where}: {len(actions) - pos} action(s) left after the session ended")
        legal = game.legal_actions(state)
        if action not in legal:
            raise ReplayError(f"{where}: action {pos} ({action}) is not legal for seat {state.to_act} "
                              f"(legal: {legal}); the actions are not a game of this deal")
        seat, phase, d = state.to_act, state.phase, state.deal
        tricks_before = len(d.tricks)
        tricks_won = list(d.tricks_won)
        results = game.apply(state, action)
        step: dict[str, Any] = {"seat": seat, "phase": PHASE_NAMES[phase], "action": int(action)}
        if len(legal) > 1:
            step["legal"] = legal
        if action < game.num_cards and phase is not Phase.PLAY:
            step["private"] = True
        if len(d.tricks) > tricks_before:
            winner = next((s for s in range(n) if d.tricks_won[s] > tricks_won[s]), None)
            step["won"] = {"by": winner, "cards": [[s, c] for s, c in d.tricks[-1]]}
        after = _snapshot(game, state, d)
        step.update(_diff(apply_step(json.loads(json.dumps(view)), step, game.num_cards), after, n))
        view = apply_step(view, step, game.num_cards)
        if view["tricks_won"] != after["tricks_won"]:
            raise ReplayError(f"{where}: step {pos}: the tricks won do not follow from the tricks")
        current["steps"].append(step)
        for result in results:
            totals = [t + x for t, x in zip(totals, result.deltas)]
            current["results"].append({"kind": str(result.kind), "deltas": list(result.deltas),
                                       "lines": explain_result(game, result)})
        if state.deal is not d and state.phase is not Phase.OVER:
            current, view = open_deal()
    if state.phase is not Phase.OVER:
        raise ReplayError(f"{where}: the actions end before the session does ({len(actions)} actions)")
    return {**dict(meta or {}), "seats": list(seats), "deals": deals, "deltas": totals}


# ---------------------------------------------------------------------- from a result record
def record_deal_set(record: Mapping[str, Any]) -> DealSet:
    suite = record.get("suite") or {}
    deal_set = load_deal_set(str(suite.get("suite")), str(suite.get("table")))
    if suite.get("hash") != deal_set.hash:
        raise ReplayError(f"the record was played on deal set {suite.get('hash')}, not on the {deal_set.suite} "
                          f"{deal_set.table} deal set here ({deal_set.hash})")
    return deal_set


def find_pair(record: Mapping[str, Any], opponent: str | None) -> int:
    """The index of the record's pairing against ``opponent`` (its spec or key; default: the first)."""
    pairs = record.get("pairs") or []
    if not pairs:
        raise ReplayError("the record holds no pairings")
    if opponent is None:
        return 0
    for i, p in enumerate(pairs):
        o = p.get("opponent") or {}
        if opponent in (o.get("spec"), p.get("baseline")):
            return i
    raise ReplayError(f"the record has no pairing against {opponent!r}; allowed: "
                      f"{', '.join(str(p.get('baseline')) for p in pairs)}")


def replay_deal(record: Mapping[str, Any], pair: int, deal: int, *, replay: bool = True) -> list[list[int]]:
    """The action ids of the ``2 n`` games of suite deal ``deal`` in pairing ``pair`` of a record
    (:func:`agents.evaluation.duplicate.game_order`): the recorded ones, else (``replay``) played again with the agents
    and checked against the record's per-deal figures."""
    deal_set = record_deal_set(record)
    p = record["pairs"][pair]
    first = int(p.get("first_deal", 0))
    if not first <= deal < first + int(p["deals"]):
        raise ReplayError(f"deal {deal} was not played in the pairing {p['candidate']} vs {p['baseline']} "
                          f"(deals {first}..{first + int(p['deals']) - 1})")
    kept = p.get("replays") or []
    if deal - first < len(kept):
        return [decode_game(g) for g in kept[deal - first]]
    if not replay:
        raise ReplayError(f"the record keeps the games of deals {first}..{first + len(kept) - 1} only")
    for spec in (p["candidate"], p["baseline"]):
        try:
            remote = agent_from_spec(spec).remote
        except MauschelnError as exc:
            raise ReplayError(f"deal {deal} cannot be played again: {exc}") from exc
        if remote:  # playing it again would send requests (and this machine's key) to the record's endpoint
            raise ReplayError(f"deal {deal} cannot be played again: {spec.partition(':')[0]} asks a network endpoint; "
                              f"the record keeps the games of deals {first}..{first + len(kept) - 1} only (bench run "
                              "--replays N keeps more)")
    from agents.bench.run import settings_for

    settings = settings_for(deal_set, 1)
    out = play_block(settings, p["candidate"], p["baseline"], deal, deal + 1, deals=[deal_set.deals[deal]],
                     record=True)
    want = snap_per_deal(p["per_deal"][deal - first], deal_set.players)
    got = snap_per_deal(out["per_deal"][0], deal_set.players)
    if not np.array_equal(want, got):
        raise ReplayError(f"deal {deal} played again gives {got.tolist()} but the record holds {want.tolist()}: "
                          "the agents or the engine changed since the record was made")
    return out["actions"][0]


def game_replay(record: Mapping[str, Any], pair: int, deal: int, fmt: str, lone: int,
                actions: Sequence[Sequence[int]] | None = None) -> dict[str, Any]:
    """The replay of one game of a record: pairing ``pair``, suite deal ``deal``, format and lone seat."""
    deal_set = record_deal_set(record)
    n = deal_set.players
    if fmt not in FORMATS or not 0 <= lone < n:
        raise ReplayError(f"format {fmt!r} and lone seat {lone}; allowed: a format of {', '.join(FORMATS)} and a "
                          f"seat 0..{n - 1}")
    p = record["pairs"][pair]
    games = actions if actions is not None else replay_deal(record, pair, deal)
    moves = games[game_order(n).index((fmt, lone))]
    holds = lineup_of(fmt, lone, n)
    seats = [p["candidate"] if holds[s] else p["baseline"] for s in range(n)]
    meta = {"candidate": p["candidate"], "baseline": p["baseline"], "format": fmt, "lone_seat": lone}
    return replay_game(deal_set, deal, moves, seats, meta)


def pair_summary(record: Mapping[str, Any], pair: int) -> dict[str, Any]:
    deal_set = record_deal_set(record)
    p = pair_from_record(record["pairs"][pair], deal_set.players)
    return {"candidate": p.candidate, "baseline": p.baseline, "deals": p.deals, "advantage": p.advantage.mean,
            "half_width": p.advantage.half_width}


# ---------------------------------------------------------------------- text
def seen_cards(view: Mapping[str, Any], seat: int) -> list[int]:
    """The cards of ``seat``'s hand that the seat has seen."""
    return [c for c in view["hands"][seat] if c not in view["unseen"][seat]]


def render_replay(replay: Mapping[str, Any], legend: Mapping[str, Any], view: int | None = None,
                  ascii_cards: bool = False) -> str:
    """A replay as text, decision by decision. ``view``: a seat (that seat's knowledge only) or None (all hands)."""
    names = legend["cards"] if ascii_cards else legend["pretty"]
    actions = legend["actions"]
    num_cards = len(legend["cards"])
    seats = replay["seats"]

    def cards(ids: Sequence[int]) -> str:
        return " ".join(names[c] for c in ids) or "-"

    def act(a: int) -> str:
        return names[a] if a < num_cards else actions[a]

    lines = [f"{replay['table']} deal {replay['deal']}: {replay['candidate']} vs {replay['baseline']}, format "
             f"{replay['format']} ({'the candidate' if replay['format'] == 'alone' else 'the baseline'} alone at "
             f"seat {replay['lone_seat']})",
             "seats: " + ", ".join(f"{s} {a}" for s, a in enumerate(seats)),
             "view: " + ("all hands" if view is None else f"seat {view} (what that seat knew)")]
    for k, deal in enumerate(replay["deals"], 1):
        table = initial_view(deal)
        trump = deal["trump"]
        lines.append("")
        lines.append(f"deal {k} of the session: dealer seat {deal['dealer']}, pot {deal['pot']}, trump card "
                     f"{'-' if trump['card'] is None else names[trump['card']]}")
        for s, agent in enumerate(seats):
            if view is None:
                lines.append(f"  seat {s} ({agent}): {cards(table['hands'][s])}")
            elif s == view:
                lines.append(f"  seat {s} ({agent}, the seat viewed): {cards(seen_cards(table, s))}")
            else:
                lines.append(f"  seat {s} ({agent}): {len(table['hands'][s])} card(s), hidden")
        if view is None and table["stock"]:
            lines.append(f"  stock (top first): {cards(table['stock'])}")
        for step in deal["steps"]:
            s = step["seat"]
            mine = view is None or view == s
            what = act(step["action"]) if (mine or not step.get("private")) else "a card (hidden)"
            text = f"  seat {s} {step['phase']}: {what}"
            if mine and "legal" in step:
                text += f"   [legal: {', '.join(act(a) for a in step['legal'])}]"
            lines.append(text)
            table = apply_step(table, step, num_cards)
            for seat in sorted(int(x) for x in {**(step.get("hands") or {}), **(step.get("unseen") or {})}):
                if view is None:
                    lines.append(f"      seat {seat}'s hand now: {cards(table['hands'][seat])}")
                elif seat == view:
                    lines.append(f"      your hand now: {cards(seen_cards(table, seat))}")
            if "won" in step:
                won = step["won"]
                lines.append("    trick: " + "  ".join(f"{x}:{names[c]}" for x, c in won["cards"])
                             + f"  -> seat {won['by']}")
        for result in deal["results"]:
            lines.extend("  " + line for line in result["lines"])
    lines.append("")
    lines.append("session: " + ", ".join(f"seat {s} {d:+d}" for s, d in enumerate(replay["deltas"])))
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog=PROG, description="Print a deal of a benchmark result record in the terminal.")
    p.add_argument("result", help="a result record written by mauscheln bench run")
    p.add_argument("--deal", type=int, required=True, metavar="K", help="the suite deal")
    p.add_argument("--opponent", default=None, help="the pairing against this opponent (default: the first)")
    p.add_argument("--format", default="alone", choices=FORMATS,
                   help="alone: the candidate alone at --seat; field: the opponent alone at --seat (default: alone)")
    p.add_argument("--seat", type=int, default=0, help="the lone seat (default: 0)")
    p.add_argument("--view", default="all", help="all (every hand, the default) or a seat (what that seat knew)")
    p.add_argument("--ascii", action="store_true", help="card codes (QH) instead of suit symbols (Q♥)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        from agents.bench.leaderboard import check_record, read_record

        record = read_record(args.result)
        check_record(record, args.result)
        deal_set = record_deal_set(record)
        view = None
        if args.view != "all":
            seat = args.view.isascii() and args.view.isdigit() and len(args.view) <= 9  # int() refuses 4,301 digits
            if not seat or not 0 <= int(args.view) < deal_set.players:
                raise ReplayError(f"--view {shown(args.view)} is not allowed; allowed: all or a seat "
                                  f"0..{deal_set.players - 1}")
            view = int(args.view)
        pair = find_pair(record, args.opponent)
        replay = game_replay(record, pair, args.deal, args.format, args.seat)
        print(render_replay(replay, table_legend(deal_set.game), view, args.ascii))
    except MauschelnError as exc:
        return report(PROG, exc)
    except KeyboardInterrupt:  # playing a deal again can take a while
        print(f"{newline_after_ctrl_c()}{PROG}: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
