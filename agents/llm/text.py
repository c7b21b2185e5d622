"""A seat's view in plain words: what a language model (or a person) is told at a decision.

Two texts, both built from what :meth:`agents.base.Agent.act` receives and the static
:class:`~mauscheln_env.engine.Game` of :meth:`~agents.base.Agent.setup`, never from an engine state:

* :func:`table_text` (static): the table's rules in brief (the ruleset's own ``brief``, its table facts, the
  options that differ from their defaults) and how cards and moves are written;
* :class:`TextView` (one per seat) renders a decision: ruleset, players, the seat, dealer, phase, pot,
  chips or scores, the trump card and the order of trumps, the seat's hand, discards and draws, every
  seat's role, exchange count and tricks, the tricks played so far and by whom, the trick in play, the
  pieces a ruleset adds (shown quartets, the reserve, the queue, ...), what the phase asks, and the legal
  moves numbered, each with its action string (``Game.action_to_str``).

The facts come from the observation's own decoders (:meth:`mauscheln_env.observation.Observer.decode`) and
the info dict, so the text names exactly the cards the seat may know: its hand, its own discards and
draws, the trump card, the cards played, and cards shown to everyone. A card with a known place is written
as its code (``QH``); a card the rules single out (the Belli, the Pamphile) is written in words, so every
code in a seat's text is a card that seat has seen. A piece a ruleset adds that this module has no words
for is still shown, by its name, meaning and value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mauscheln_env.cards import SUIT_NAMES, SUITS, iter_bits
from mauscheln_env.engine import Game
from mauscheln_env.observation import Cards, Numbers, Observer, SeatFlags, SeatNumbers, SeatOneHot

RANK_WORDS = {"A": "ace", "K": "king", "Q": "queen", "J": "jack", "T": "ten", "9": "nine", "8": "eight",
              "7": "seven", "6": "six", "5": "five", "4": "four", "3": "three", "2": "two"}

ROLE_HELP = {
    "undecided": "has not decided yet",
    "declined": "passed when declaring; still decides whether to go with",
    "mauschler": "declared: needs 2 tricks",
    "goer": "goes with the mauschler: needs 1 trick",
    "out": "passed: out of this deal, hand dead",
    "in": "in: needs 1 trick",
    "committed": "in and committed: needs 2 tricks",
    "stayed": "stays with the dealt hand and plays",
    "exchanged": "exchanged and plays",
    "eliminated": "out of the session (no chips left)",
}
"""What each role of ``info["roles"]`` means, in words."""

PHASE_HELP = {
    "knock": "You are the dealer and decide blind, before looking at your hand, whether to knock. Knocking "
             "makes you the declarer, who must take 2 tricks, and at your exchange you take the trump card "
             "into your hand for a card you discard.",
    "declare": "Declaring, in turn from forehand to the dealer: the first seat to say mauscheln becomes the "
               "mauschler and must take 2 of the tricks; the later seats are not asked. If every seat passes, "
               "the deal is thrown in and the pot stays.",
    "declare:mousel": "Each seat in turn says in (you will play and need 1 trick), in_lead (in, as the committed "
                      "player who leads and needs 2 tricks) or out (your hand is dead, you pay nothing). A seat "
                      "short of its tricks pays the pot.",
    "go_with": "Each seat other than the mauschler decides once: go (play along; you need 1 trick, and pay the "
               "pot if you take none) or pass (your hand is dead; you pay nothing).",
    "exchange": "Exchange: mark the cards you discard, one move each, then done: you draw as many cards from "
                "the stock. Marking no card and saying done keeps your hand.",
    "play": "Play a card to the trick. The legal moves already follow the rules of following suit, trumping "
            "and beating; the highest trump wins a trick, else the highest card of the suit led, and the "
            "winner leads the next trick.",
    "offer": "You are due to deal and have paid the stake: deal, or push the deal on to the next seat (who "
             "pays the stake too).",
    "decide": "Each seat in turn decides once: stay (keep your hand and play), pass (your hand is dead, you "
              "pay nothing), or a card to discard it and start an exchange (mark more cards, then done to "
              "draw as many). A seat in play without a trick pays.",
    "decide:muschka": "Each seat in turn decides once: stay (keep your hand and play), pass (your hand is dead, "
                      "your score does not change), or a card to discard it and start an exchange (mark more "
                      "cards, then done to draw as many). The holder of the ace of spades may not pass.",
    "name_trump": "The Pamphile (the jack of clubs) was turned as the trump card: as the dealer, having seen "
                  "your hand, name the trump suit.",
    "announce": "You hold the Pamphile (the jack of clubs): announce it to collect 1 chip from every other "
                "seat, or stay silent.",
    "swap": "Pick the card of your hand you give (face down) for the trump card.",
}
"""What each phase asks, in words (``phase:ruleset`` where a ruleset asks it differently)."""

ACTION_HELP = {
    "knock": "knock (blind)", "no_knock": "do not knock",
    "mauscheln": "declare: become the mauschler (you need 2 tricks)", "pass": "pass",
    "go": "go with the mauschler (you need 1 trick)", "done": "end your exchange: draw as many cards as you marked",
    "in": "in (you need 1 trick)", "in_lead": "in as the committed player (you lead and need 2 tricks)",
    "out": "out (your hand is dead)", "stay": "keep your hand and play", "deal": "deal", "push": "push the deal on",
    "announce": "announce the Pamphile (1 chip from every other seat)", "silent": "stay silent",
    "swap": "give a card of your hand for the trump card",
    "trump:C": "clubs are trump", "trump:S": "spades are trump", "trump:H": "hearts are trump",
    "trump:D": "diamonds are trump",
}
"""What each named action does, in words (``phase:action`` where a phase gives it another meaning)."""
ACTION_HELP.update({
    "declare:pass": "pass (you still decide later whether to go with a mauschler)",
    "go_with:pass": "pass (your hand is dead)",
    "decide:pass": "pass (your hand is dead)",
})

CARD_ACTION = {
    "play": "play {card}",
    "exchange": "mark {card} to discard",
    "decide": "discard {card} and start an exchange",
    "swap": "give {card} for the trump card",
}
"""What a card action does in a phase (any other phase: the card's code)."""

KNOWN_EXTRA = ("revealed", "trump_face_up", "reserve", "pushes", "escrow", "announced")
"""Pieces a ruleset adds that :class:`TextView` words itself; any other added piece is shown generically."""


def card_words(code: str) -> str:
    """``"7D"`` -> ``"the seven of diamonds"``: a card the rules single out, named without its code."""
    return f"the {RANK_WORDS[code[0]]} of {SUIT_NAMES[code[1]]}"


def table_text(game: Game) -> str:
    """The static rules of ``game``'s table: facts, the rules in brief, the options in play, the notation."""
    spec, config, deck = game.spec, game.config, game.deck
    direction = ("clockwise: seat s+1 sits to the left of seat s and plays after it" if game.direction > 0 else
                 "counter-clockwise: seat s-1 sits to the right of seat s and plays after it")
    ranks = " ".join(r for r in spec.rank_order if any(c[0] == r for c in deck.codes))
    lines = [
        f"Ruleset {game.ruleset} ({spec.section} of the rules), {game.n} players (seats 0-{game.n - 1}), "
        f"{len(deck)} cards, {game.hand_size} cards in a hand and {game.num_tricks} tricks a deal; play goes "
        f"{direction}.",
        f"Rank order inside a suit, high to low: {ranks}.",
        "",
        " ".join(spec.brief.split()),
    ]
    changed = [info for info in spec.options.values()
               if info.name in config.options and config.options[info.name] != info.default]
    if changed:
        lines += ["", "Options of this table:"]
        lines += [f"- {info.name} = {config.options[info.name]!r}: {info.doc}" for info in changed]
    lines += [
        "",
        "Cards are written rank then suit: ranks A K Q J T 9 8 7 6 5 4 3 2 (T is the ten); suits C clubs, "
        "S spades, H hearts, D diamonds. QH is the queen of hearts.",
    ]
    return "\n".join(lines)


def legal_moves(game: Game, action_mask: np.ndarray) -> list[tuple[int, str]]:
    """The legal actions of a mask as ``(action id, action string)``, in action-id order."""
    return [(int(a), game.action_to_str(int(a))) for a in np.flatnonzero(action_mask)]


class TextView:
    """Renders one seat's decisions as text (:meth:`render`), for the game and seat given at construction."""

    def __init__(self, game: Game, seat: int) -> None:
        if not isinstance(game, Game):
            raise ValueError(f"TextView needs a mauscheln_env Game, got {type(game).__name__}")
        if not isinstance(seat, (int, np.integer)) or not 0 <= seat < game.n:
            raise ValueError(f"seat={seat!r} is not allowed; allowed: 0..{game.n - 1}")
        self.game = game
        self.seat = int(seat)
        self.observer = Observer(game)
        self.phases = tuple(game.spec.phases)
        self.roles = tuple(game.spec.roles)
        self.codes = game.deck.codes
        self.pieces = {p.name: p for p in self.observer.pieces}
        tables = game.tables
        # Every trump of each trump suit, high to low: a trump is beaten by exactly the trumps above it.
        self.trump_orders = tuple(
            sorted((c for c in iter_bits(t.trump_mask)), key=lambda c, t=t: (t.beats[c] & t.trump_mask).bit_count())
            for t in tables
        )

    # ------------------------------------------------------------------ pieces
    def cards(self, mask: int) -> str:
        return " ".join(self.codes[c] for c in iter_bits(mask)) or "none"

    def who(self, seat: int) -> str:
        return "you" if seat == self.seat else f"seat {seat}"

    def trumps_line(self, suit: int) -> str:
        """The trumps of ``suit`` from high to low: ranks of the suit, cards of other suits in words."""
        names = []
        for c in self.trump_orders[suit]:
            code = self.codes[c]
            names.append(code[0] if SUITS.index(code[1]) == suit else card_words(code))
        return f"Trumps from high to low: {', '.join(names)} (ranks of {SUIT_NAMES[SUITS[suit]]} unless named)."

    # ------------------------------------------------------------------ the text
    def render(self, observation: np.ndarray, action_mask: np.ndarray, info: Mapping[str, Any]) -> str:
        """The seat's decision in words: the table, what happened in this deal, what the phase asks, the moves."""
        g, me = self.game, self.seat
        v = self.observer.decode(observation, me)
        phase_index = v["phase"]
        phase = "over" if phase_index is None else self.phases[phase_index]
        dealer = int(info["dealer"])
        live = v["live"]
        points = "scores" in info
        lines = [f"{g.ruleset} with {g.n} players. You are seat {me}. The dealer is {self.who(dealer)}."]
        forehand = g.next_live(live, dealer) if any(live) else None
        if forehand is not None:
            lines[0] += f" Forehand (first to decide and first to be dealt) is {self.who(forehand)}."
        max_deals = g.config.options.get("max_deals")
        if max_deals:
            settled = round(v["progress"][0] * max_deals)
            lines.append(f"Session: {settled} of {max_deals} deal(s) settled so far.")
        lines.append(f"Phase: {phase}.")
        if points:
            lines.append("Scores (count down from the start score; exactly 0 wins): "
                         + ", ".join(f"{self.who(s)} {x}" for s, x in enumerate(info["scores"])) + ".")
        else:
            lines.append(f"Pot: {info['pot']} chips. Chips: "
                         + ", ".join(f"{self.who(s)} {x}" for s, x in enumerate(info["chips"])) + ".")
        lines += self._trump_lines(v, info)
        lines += self._hand_lines(v, info, phase)
        lines += self._seat_lines(v, info, dealer)
        lines += self._trick_lines(v, info, phase)
        lines += self._extra_lines(v)
        help_ = PHASE_HELP.get(f"{phase}:{g.ruleset}") or PHASE_HELP.get(phase)
        if help_:
            lines += ["", "What this decision is: " + help_]
            if phase == "exchange" and v.get("knock") == 0 and me == dealer and v["trump_taken_by"] is None:
                lines.append("You knocked: at your exchange you take the trump card into your hand for one of the "
                             "cards you discard (the rules above say how this table does it).")
            done = g.action_ids.get("done")
            if phase == "exchange" and done is not None and action_mask.any() and not action_mask[done]:
                lines.append("You must mark at least one more card before done.")
        lines += self._move_lines(action_mask, phase)
        return "\n".join(lines)

    def _trump_lines(self, v: dict[str, Any], info: Mapping[str, Any]) -> list[str]:
        card = v["trump_card"]
        if card is None:
            return ["The cards are not dealt yet."]
        code = self.codes[card]
        suit = v["trump_suit"] if v["trump_suit"] is not None else SUITS.index(code[1])
        text = f"Trump card: {code}"
        holder = v["trump_taken_by"]
        if holder is not None:
            text += f", taken into hand by {self.who(holder)}"
        elif "trump_face_up" in v and not v["trump_face_up"][0]:
            text += ", no longer face up (shuffled into the stock)"
        else:
            text += ", face up"
        text += f". Trumps are {SUIT_NAMES[SUITS[suit]]}"
        if suit != SUITS.index(code[1]):
            text += " (named by the dealer)"
        lines = [text + ".", self.trumps_line(suit)]
        knock = v.get("knock")
        if knock is not None:
            lines.append("The dealer knocked (blind)." if knock == 0 else "The dealer did not knock.")
        return lines

    def _hand_lines(self, v: dict[str, Any], info: Mapping[str, Any], phase: str) -> list[str]:
        hand = info.get("hand") or []
        if hand:
            lines = [f"Your hand: {' '.join(hand)}."]
        elif v["trump_card"] is not None and phase == "knock":
            lines = ["You have not looked at your hand: the knock is decided blind."]
        else:
            lines = ["Your hand: no cards you have seen."]
        if v["own_discards"]:
            now = ", the cards marked in this exchange included" if phase == "exchange" and v["to_act"] == self.seat \
                else ""
            lines.append(f"Your discards this deal{now}: {self.cards(v['own_discards'])}.")
        if v["own_drawn"]:
            lines.append(f"Cards you drew this deal: {self.cards(v['own_drawn'])}.")
        return lines

    def _seat_lines(self, v: dict[str, Any], info: Mapping[str, Any], dealer: int) -> list[str]:
        g = self.game
        lines = ["", "Seats:"]
        to_act = v["to_act"]
        for s in range(g.n):
            role = info["roles"][s]
            marks = [m for m, on in (("you", s == self.seat), ("dealer", s == dealer), ("to act", s == to_act)) if on]
            text = f"- seat {s}" + (f" ({', '.join(marks)})" if marks else "") + f": {role}"
            if role in ROLE_HELP:
                text += f" - {ROLE_HELP[role]}"
            if role != "eliminated":
                x = v["exchanged"][s]
                if x is not None and x > 0:
                    text += f"; exchanged {x - 1} card(s)"
                text += f"; tricks won {info['tricks_won'][s]}"
            lines.append(text + ".")
        return lines

    def _trick_lines(self, v: dict[str, Any], info: Mapping[str, Any], phase: str) -> list[str]:
        cards, leaders = v["trick_cards"], v["trick_leader"]
        current = [(int(s), c) for s, c in info.get("trick") or []]
        started = [t for t, leader in enumerate(leaders) if leader is not None]
        done = started[:-1] if current and started else started
        lines = []
        for t in done:
            order = self._play_order(leaders[t], cards[t])
            if t + 1 < len(leaders) and leaders[t + 1] is not None:
                winner = leaders[t + 1]
            elif phase == "play" and not current and v["to_act"] is not None:
                winner = v["to_act"]  # the winner of the last trick leads the next
            else:
                winner = None
            text = f"- trick {t + 1}: " + ", ".join(
                f"{self.who(s)} {'led' if i == 0 else 'played'} {self.codes[cards[t][s]]}" for i, s in enumerate(order))
            lines.append(text + (f"; won by {self.who(winner)}." if winner is not None else "."))
        if lines:
            lines = ["", "Tricks played this deal:"] + lines
        if current:
            lines += ["", f"Trick {len(done) + 1} in play: " + ", ".join(
                f"{self.who(s)} {'led' if i == 0 else 'played'} {c}" for i, (s, c) in enumerate(current)) + "."]
        elif phase == "play":
            lines += ["", f"Trick {len(done) + 1}: you lead." if v["to_act"] == self.seat
                      else f"Trick {len(done) + 1}: nobody has played yet."]
        return lines

    def _play_order(self, leader: int, cards: Sequence[int | None]) -> list[int]:
        n, d = self.game.n, self.game.direction
        return [s for s in ((leader + d * i) % n for i in range(n)) if cards[s] is not None]

    def _extra_lines(self, v: dict[str, Any]) -> list[str]:
        """The pieces a ruleset adds: worded where known, else by the piece's own name and meaning."""
        g = self.game
        lines = []
        if v.get("revealed"):
            lines.append(f"Shown to everyone (quartets): {self.cards(v['revealed'])}.")
        if "reserve" in v:
            lines.append(f"Reserve of the pot cap: {round(v['reserve'][0])} chips.")
        if "pushes" in v:
            lines.append(f"Times this deal was pushed on: {round(v['pushes'][0] * g.n)}.")
        if "escrow" in v:
            total, items = v["escrow"]
            lines.append(f"Queue of mouche payments waiting to enter the pot: {round(items * g.n)} item(s), "
                         f"{round(total)} chips.")
        if "announced" in v and v["announced"] is not None:
            lines.append(f"{self.who(v['announced']).capitalize()} announced the Pamphile (the jack of clubs).")
        for name, piece in self.pieces.items():
            if name in KNOWN_EXTRA or name in _COMMON:
                continue
            lines.append(f"{name} ({piece.doc}): {self._generic(piece.codec, v[name])}.")
        return [""] + lines if lines else []

    def _generic(self, codec: Any, value: Any) -> str:
        if isinstance(codec, Cards):
            return self.cards(value)
        if isinstance(codec, SeatOneHot):
            return "none" if value is None else self.who(value)
        if isinstance(codec, SeatFlags):
            return ", ".join(self.who(s) for s, on in enumerate(value) if on) or "none"
        if isinstance(codec, (Numbers, SeatNumbers)):
            return " ".join(f"{x:g}" for x in value)
        return str(value)

    def _move_lines(self, action_mask: np.ndarray, phase: str) -> list[str]:
        moves = legal_moves(self.game, action_mask)
        if not moves:
            return ["", "You are not to act now."]
        lines = ["", "Legal moves (answer with the move or its number):"]
        for i, (_, text) in enumerate(moves, 1):
            if text in self.game.deck.index:
                what = CARD_ACTION.get(phase, "{card}").format(card=text)
            else:
                what = ACTION_HELP.get(f"{phase}:{text}") or ACTION_HELP.get(text, text)
            lines.append(f"{i}. {text}" + ("" if what == text else f" - {what}"))
        return lines


_COMMON = {
    "phase", "to_act", "dealer", "live", "chips", "pot", "scores", "progress", "hand", "own_discards", "own_drawn",
    "trump_card", "trump_suit", "trump_taken_by", "knock", "roles", "exchanged", "trick_cards", "trick_leader",
    "tricks_won",
}
"""The pieces every ruleset's observation may have, worded by :meth:`TextView.render` itself."""
