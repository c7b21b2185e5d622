"""Text rendering of a table. Reads the engine state; decides nothing."""

from __future__ import annotations

from mauscheln_env.cards import iter_bits
from mauscheln_env.engine import PHASE_NAMES, ROLE_NAMES, DealResult, Game, Phase, State


def pretty_cards(game: Game, mask: int) -> str:
    return " ".join(game.deck.pretty(c) for c in iter_bits(mask)) or "-"


def role_name(state: State, seat: int) -> str:
    if not state.alive[seat]:
        return "eliminated"
    return ROLE_NAMES[state.roles[seat]]


def explain_result(game: Game, result: DealResult) -> list[str]:
    """One line per seat saying what the deal paid and why."""
    lines = []
    head = {
        "settled": f"deal settled: pot {result.pot_before}, {result.pot_before // game.num_tricks} per trick",
        "no_play": f"nobody went with: seat {result.mauschler} takes the pot of {result.pot_before}",
        "throw_in": f"thrown in: nobody declared; the pot of {result.pot_before} stays",
    }[result.kind]
    lines.append(head)
    for s in range(game.n):
        parts = []
        if s == result.dealer:
            parts.append("dealt and anted")
        if result.kind == "settled" and (result.credits[s] or result.debits[s] or result.tricks[s]):
            parts.append(f"{result.tricks[s]} trick(s) +{result.credits[s]}")
            if result.debits[s]:
                parts.append(f"bete -{result.debits[s]}")
        elif result.credits[s]:
            parts.append(f"takes +{result.credits[s]}")
        lines.append(f"  seat {s}: {result.deltas[s]:+d}" + (f"  ({', '.join(parts)})" if parts else ""))
    lines.append(f"  pot now {result.pot_after}")
    return lines


def render_table(game: Game, state: State, just_ended: list[DealResult] | tuple = ()) -> str:
    """A readable table; only the acting seat's hand is shown.

    ``just_ended`` are deals that ended with the last action; their settlement
    is explained first, one line per seat.
    """
    deck = game.deck
    lines = []
    for result in just_ended:
        lines.extend(explain_result(game, result))
    if state.phase is Phase.OVER:
        lines.append(f"session over after {state.deals_settled} settled deal(s)" + (" (truncated)" if state.truncated else ""))
    else:
        lines.append(
            f"deal {state.deals_started} | phase {PHASE_NAMES[state.phase]} | dealer seat {state.dealer} | "
            f"trump card {deck.pretty(state.trump_card)}"
            + (f" (taken by seat {state.trump_holder})" if state.trump_holder is not None else "")
            + f" | pot {state.pot}"
        )
    lines.append(f"{'seat':>5} {'chips':>6} {'role':>10} {'tricks':>6} {'exch':>5}")
    for s in range(game.n):
        mark = "*" if s == state.to_act else " "
        x = state.exchanged[s]
        lines.append(
            f"{mark}{s:>4} {state.chips[s]:>6} {role_name(state, s):>10} {state.tricks_won[s]:>6} "
            f"{'-' if x is None else x:>5}" + ("  D" if s == state.dealer else "")
        )
    if state.trick:
        lines.append("trick: " + "  ".join(f"{s}:{deck.pretty(c)}" for s, c in state.trick))
    elif state.tricks and state.phase is Phase.PLAY:
        last = state.tricks[-1]
        lines.append("last trick: " + "  ".join(f"{s}:{deck.pretty(c)}" for s, c in last))
    if state.to_act is not None:
        lines.append(f"seat {state.to_act} to act, hand: {pretty_cards(game, game.visible_hand(state, state.to_act))}")
    return "\n".join(lines)
