"""Text rendering of a table. Reads the engine state; decides nothing."""

from __future__ import annotations

from mauscheln_env.cards import SUIT_SYMBOLS, SUITS, iter_bits
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
    if result.scores is not None:
        lines.append("deal scored" + (f": seat {result.mauschler} was the lone seat" if result.mauschler is not None else ""))
        for s in range(game.n):
            lines.append(f"  seat {s}: {result.tricks[s]} trick(s), score now {result.scores[s]} ({-result.deltas[s]:+d})")
        return lines
    head = {
        "settled": f"deal settled: pot {result.pot_before}, {result.pot_before // game.num_tricks} per trick",
        "no_play": f"no play: seat {result.mauschler} takes the pot of {result.pot_before}",
        "mouche": f"mouche: seat {result.mauschler} wins the pot of {result.pot_before} with a flush",
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
                parts.append(f"pays -{result.debits[s]}")
        elif result.kind == "mouche" and result.debits[s]:
            parts.append(f"makes the mouche -{result.debits[s]}")
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
    points = game.scoring == "points"
    if state.phase is Phase.OVER:
        lines.append(f"session over after {state.deals_settled} settled deal(s)" + (" (truncated)" if state.truncated else ""))
    else:
        trump = "not dealt yet" if state.undealt else deck.pretty(state.trump_card)
        if not state.undealt and state.trump_suit != deck.suit[state.trump_card]:
            trump += f", trumps {SUIT_SYMBOLS[SUITS[state.trump_suit]]}"
        if state.trump_holder is not None:
            trump += f" (taken by seat {state.trump_holder})"
        elif not state.trump_face_up and not state.undealt:
            trump += " (shuffled into the stock)"
        money = "" if points else f" | pot {state.pot}"
        if state.reserve:
            money += f" | reserve {state.reserve}"
        if state.escrow:
            money += f" | queue {'+'.join(map(str, state.escrow))}"
        lines.append(
            f"{game.ruleset} deal {state.deals_started} | phase {PHASE_NAMES[state.phase]} | dealer seat {state.dealer} | "
            f"trump card {trump}{money}"
        )
    column = "score" if points else "chips"
    lines.append(f"{'seat':>5} {column:>6} {'role':>10} {'tricks':>6} {'exch':>5}")
    for s in range(game.n):
        mark = "*" if s == state.to_act else " "
        x = state.exchanged[s]
        value = state.scores[s] if points else state.chips[s]
        lines.append(
            f"{mark}{s:>4} {value:>6} {role_name(state, s):>10} {state.tricks_won[s]:>6} "
            f"{'-' if x is None else x:>5}" + ("  D" if s == state.dealer else "")
        )
    if state.revealed:
        lines.append("shown: " + pretty_cards(game, state.revealed))
    if state.trick:
        lines.append("trick: " + "  ".join(f"{s}:{deck.pretty(c)}" for s, c in state.trick))
    elif state.tricks and state.phase is Phase.PLAY:
        last = state.tricks[-1]
        lines.append("last trick: " + "  ".join(f"{s}:{deck.pretty(c)}" for s, c in last))
    if state.to_act is not None:
        lines.append(f"seat {state.to_act} to act, hand: {pretty_cards(game, game.visible_hand(state, state.to_act))}")
    return "\n".join(lines)
