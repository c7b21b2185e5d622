"""Text rendering of a table. Reads the engine state; decides nothing."""

from __future__ import annotations

from mauscheln_env.cards import SUIT_SYMBOLS, SUITS, iter_bits
from mauscheln_env.engine import PHASE_NAMES, ROLE_NAMES, DealKind, DealResult, Game, Phase, State


def pretty_cards(game: Game, mask: int) -> str:
    return " ".join(game.deck.pretty(c) for c in iter_bits(mask)) or "-"


def role_name(state: State, seat: int) -> str:
    if not state.session.alive[seat]:
        return "eliminated"
    return ROLE_NAMES[state.deal.roles[seat]]


def explain_result(game: Game, result: DealResult) -> list[str]:
    """One line per seat saying what the deal paid and why."""
    lines = []
    if result.scores is not None:
        lines.append("deal scored" + (f": seat {result.mauschler} was the lone seat" if result.mauschler is not None else ""))
        for s in range(game.n):
            lines.append(f"  seat {s}: {result.tricks[s]} trick(s), score now {result.scores[s]} ({-result.deltas[s]:+d})")
        return lines
    head = {
        DealKind.SETTLED: f"deal settled: pot {result.pot_before}, {result.pot_before // game.num_tricks} per trick",
        DealKind.NO_PLAY: f"no play: seat {result.mauschler} takes the pot of {result.pot_before}",
        DealKind.MOUCHE: f"mouche: seat {result.mauschler} wins the pot of {result.pot_before} with a flush",
        DealKind.THROW_IN: f"thrown in: nobody declared; the pot of {result.pot_before} stays",
    }[result.kind]
    lines.append(head)
    for s in range(game.n):
        parts = []
        if s == result.dealer:
            parts.append("dealt and anted")
        if result.kind is DealKind.SETTLED and (result.credits[s] or result.debits[s] or result.tricks[s]):
            parts.append(f"{result.tricks[s]} trick(s) +{result.credits[s]}")
            if result.debits[s]:
                parts.append(f"pays -{result.debits[s]}")
        elif result.kind is DealKind.MOUCHE and result.debits[s]:
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
    session, d = state.session, state.deal
    lines = []
    for result in just_ended:
        lines.extend(explain_result(game, result))
    points = not game.scoring.uses_chips
    if state.phase is Phase.OVER:
        lines.append(f"session over after {session.deals_settled} settled deal(s)"
                     + (" (truncated)" if session.truncated else ""))
    else:
        trump = "not dealt yet" if d.undealt else deck.pretty(d.trump_card)
        if not d.undealt and d.trump_suit != deck.suit[d.trump_card]:
            trump += f", trumps {SUIT_SYMBOLS[SUITS[d.trump_suit]]}"
        if d.trump_holder is not None:
            trump += f" (taken by seat {d.trump_holder})"
        elif not d.trump_face_up and not d.undealt:
            trump += " (shuffled into the stock)"
        money = "" if points else f" | pot {session.pot}"
        if session.reserve:
            money += f" | reserve {session.reserve}"
        if session.escrow:
            money += f" | queue {'+'.join(map(str, session.escrow))}"
        lines.append(
            f"{game.ruleset} deal {session.deals_started} | phase {PHASE_NAMES[state.phase]} | "
            f"dealer seat {session.dealer} | trump card {trump}{money}"
        )
    column = "score" if points else "chips"
    lines.append(f"{'seat':>5} {column:>6} {'role':>10} {'tricks':>6} {'exch':>5}")
    for s in range(game.n):
        mark = "*" if s == state.to_act else " "
        x = d.exchanged[s]
        value = session.scores[s] if points else session.chips[s]
        lines.append(
            f"{mark}{s:>4} {value:>6} {role_name(state, s):>10} {d.tricks_won[s]:>6} "
            f"{'-' if x is None else x:>5}" + ("  D" if s == session.dealer else "")
        )
    if d.shown():
        lines.append("shown: " + pretty_cards(game, d.shown()))
    if d.trick:
        lines.append("trick: " + "  ".join(f"{s}:{deck.pretty(c)}" for s, c in d.trick))
    elif d.tricks and state.phase is Phase.PLAY:
        last = d.tricks[-1]
        lines.append("last trick: " + "  ".join(f"{s}:{deck.pretty(c)}" for s, c in last))
    if state.to_act is not None:
        lines.append(f"seat {state.to_act} to act, hand: {pretty_cards(game, game.visible_hand(state, state.to_act))}")
    return "\n".join(lines)
