"""``mauscheln play``: play against the bots in a terminal.

The human sits at one seat (``--seat``), agents from the registry at the others
(``--agents``: one spec for every bot, or one per bot in seat order). The
table, the own hand and the legal moves are shown with suit symbols (``--ascii``
for plain codes); a move is entered by its menu number, its card code (``qh``,
``Q♥``) or its name (``pass``, ``go``, ``done``, ...). The menu numbers the own
cards in a fixed order (then the named moves), so a card keeps its number while
cards are marked for an exchange. A wrong input is answered with the reason (an
illegal card: must follow suit, must beat, must trump) and the legal choices;
``?`` repeats them, ``quit`` (or end of input) leaves. Each deal's settlement
is explained in one line per seat (:func:`mauscheln_env.render.explain_result`).

The human and the bots see exactly what the environment gives a seat
(:class:`agents.views.EnvView`); the screen shows only public facts and the
human's own cards: a bot's card is named only when it is played to a trick;
its discards (also the first one, with which a Mouche or Muschka player starts
an exchange while deciding) are announced as a count, never by card.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import numpy as np

from agents.base import Agent, agent_from_spec, available_agents
from agents.play.session import DECISIONS, Move, PlaySession, move_lines, parse_action, why_not
from agents.views import EnvView
from mauscheln_env.cards import SUIT_NAMES, SUIT_SYMBOLS
from mauscheln_env.engine import Game
from mauscheln_env.errors import MauschelnError
from mauscheln_env.render import explain_result
from mauscheln_env.ruleargs import ArgumentParser, add_rule_arguments, config_from_namespace, report

PROG = "mauscheln play"
__all__ = ["DECISIONS", "Quit", "TerminalTable", "main"]
MAX_DIGITS = 9
"""The most digits a typed menu number may have (a longer one is no move, and int() refuses thousands)."""


class Quit(Exception):
    """The human left the table."""


class TerminalTable:
    """One human against bots; reads moves from ``stdin`` and writes the table to ``out``."""

    def __init__(self, game: Game, human: int, bots: dict[int, Agent], *, ascii_cards: bool = False,
                 stdin: TextIO | None = None, out: TextIO | None = None, name: str = "You") -> None:
        self.view = EnvView(game.config)
        self.game = self.view.game
        self.human = human
        self.bots = bots
        self.ascii = ascii_cards
        self.stdin = stdin or sys.stdin
        self.out = out or sys.stdout
        self.name = name

    # ------------------------------------------------------------------ text
    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def card(self, c: int) -> str:
        return self.game.deck.codes[c] if self.ascii else self.game.deck.pretty(c)

    def action_text(self, a: int) -> str:
        g = self.game
        return self.card(a) if a < g.num_cards else g.action_to_str(a)

    def who(self, seat: int) -> str:
        if seat == self.human:
            return f"{self.name} (seat {seat})"
        return f"seat {seat} ({self.bots[seat].label()})"

    def seat_of(self, i: int) -> int:
        """The absolute seat of index ``i`` of an egocentric observation piece of the human."""
        return (self.human + i) % self.game.n

    def show_table(self, obs: np.ndarray, info: dict[str, Any], deal_no: int) -> None:
        g = self.game
        deck = g.deck
        views = self.view.env.observation_views(obs)
        phase = info["phase"]
        self.say("")
        self.say(f"== deal {deal_no} | {phase} | dealer: {self.who(info['dealer'])} | pot {info['pot']} ==")
        taken = np.flatnonzero(views.get("trump_taken_by", np.zeros(0)))
        by = f", taken by {self.who(self.seat_of(int(taken[0])))}" if taken.size else ""
        trump = deck.index[info["trump"]]
        suit = "CSHD"[int(np.argmax(views["trump_suit"]))] if "trump_suit" in views else deck.codes[trump][1]
        self.say(f"   trump card {self.card(trump)}{by}: {SUIT_NAMES[suit]} {SUIT_SYMBOLS[suit]} are trump")
        points = "scores" in info  # muschka counts a score down instead of chips
        purse = info["scores"] if points else info["chips"]
        exchanged = views["exchanged"] if "exchanged" in views else None
        to_act = np.flatnonzero(views["to_act"]) if "to_act" in views else []
        acting = self.seat_of(int(to_act[0])) if len(to_act) else None
        self.say(f"   {'seat':<4} {'player':<22} {'score' if points else 'chips':>5}  {'role':<10} {'tricks':>6} {'exch':>4}")
        for s in range(g.n):
            mark = ">" if s == acting else " "
            x = "-"
            if exchanged is not None:
                k = int(np.argmax(exchanged[(s - self.human) % g.n]))
                x = "-" if k == 0 else str(k - 1)
            player = self.name if s == self.human else self.bots[s].label()
            self.say(f" {mark} {s:<4} {player:<22} {purse[s]:>5}  {info['roles'][s]:<10} "
                     f"{info['tricks_won'][s]:>6} {x:>4}" + ("  (dealer)" if s == info["dealer"] else ""))
        if info["trick"]:
            self.say("   trick so far: " + ", ".join(f"seat {s} {self.card(deck.index[c])}" for s, c in info["trick"]))
        hand = [deck.index[c] for c in info["hand"]]
        marked = np.flatnonzero(views.get("own_discards", np.zeros(0))).tolist()
        if hand:
            shown = " ".join(self.card(c) for c in hand)
        else:
            shown = "(empty)" if marked else "(not seen yet)"
        self.say(f"   your hand: {shown}")
        if marked:
            self.say("   your discards: " + " ".join(self.card(c) for c in marked))

    # ------------------------------------------------------------------ menu
    def menu_items(self, legal: list[int], obs: np.ndarray, info: dict[str, Any]) -> dict[int, int]:
        """``{number: action}`` of the legal moves. Cards are numbered by their place among the own cards of
        this decision (the hand, and in an exchange the cards marked so far), named moves after them, so the
        numbers do not shift while cards are marked."""
        g = self.game
        cards = {g.deck.index[c] for c in info["hand"]} | {a for a in legal if a < g.num_cards}
        if info["phase"] == "exchange":
            views = self.view.env.observation_views(obs)
            cards |= set(np.flatnonzero(views.get("own_discards", np.zeros(0))).tolist())
        base = sorted(cards) + [a for a in legal if a >= g.num_cards]
        return {i: a for i, a in enumerate(base, 1) if a in legal}

    def menu(self, items: dict[int, int]) -> str:
        return "   ".join(f"{i}) {self.action_text(a)}" for i, a in items.items())

    # ------------------------------------------------------------------ input
    def parse(self, text: str, legal: list[int], items: dict[int, int] | None = None) -> int | None:
        """The action the human meant, or None when it is not one of the legal moves."""
        action = self.read_action(text, items if items is not None else dict(enumerate(legal, 1)))
        return action if action in legal else None

    def read_action(self, text: str, items: dict[int, int]) -> int | None:
        """The action ``text`` names (a menu number, a card code or a move's name), legal or not; None if none."""
        t = text.strip()
        if t.isascii() and t.isdigit():  # str.isdigit also holds for '²' or '٣', which int() refuses or misreads
            return items.get(int(t)) if len(t) <= MAX_DIGITS else None  # int() refuses thousands of digits
        return parse_action(self.game, t)

    def why_not(self, text: str, action: int | None, legal: list[int], obs: np.ndarray, info: dict[str, Any]) -> str:
        """Why ``text`` is not a legal move here, in one sentence."""
        return why_not(self.view, text, action, legal, obs, info, self.card)

    def ask(self, obs: np.ndarray, mask: np.ndarray, info: dict[str, Any], deal_no: int) -> int:
        legal = np.flatnonzero(mask).tolist()
        items = self.menu_items(legal, obs, info)
        self.show_table(obs, info, deal_no)
        self.say(f"your move ({info['phase']}): {self.menu(items)}")
        while True:
            self.out.write("> ")
            self.out.flush()
            line = self.stdin.readline()
            if line == "":
                raise Quit
            text = line.strip()
            if text.lower() in ("quit", "exit", "q"):
                raise Quit
            if text in ("?", "help"):
                self.say(f"legal moves: {self.menu(items)}")
                continue
            action = self.read_action(text, items)
            if action is None or action not in legal:
                self.say(f"{self.why_not(text, action, legal, obs, info)}. Choose one of: {self.menu(items)}")
                self.say("   (type the number, the card code such as qh, or the move's name; ? repeats, quit leaves)")
                continue
            return action

    # ------------------------------------------------------------------ session
    def play(self, *, seed: int = 0, dealer: int | None = None) -> list[int]:
        """Play one session; returns each seat's chip change."""
        session = PlaySession(self.game, self.bots, seed=seed, dealer=dealer, view=self.view)
        g = self.game
        self.say(f"You are seat {self.human}; seat s+1 sits to the left of seat s. "
                 f"At the table: {', '.join(self.who(s) for s in range(g.n))}.")
        while not session.over:
            if session.to_act == self.human:
                obs, mask, info = session.seat_view(self.human)
                move = session.step(self.ask(obs, mask, info, session.deal_no + 1))
            else:
                move = session.bot_move()
            self._announce(move)
            for result in move.results:
                self.say("")
                for line in explain_result(g, result):
                    self.say(line)
                self.say(f"  your result this deal: {result.deltas[self.human]:+d}")
        final = session.seat_view(self.human)[2]
        self.say("")
        points = "scores" in final
        self.say("session over. " + ("rewards (score decreases):" if points else "chips won or lost:"))
        for s in range(g.n):
            now = f"score {final['scores'][s]}" if points else f"{final['chips'][s]} chips"
            self.say(f"  {self.who(s)}: {session.totals[s]:+d}  (now {now}, {final['roles'][s]})")
        return session.totals

    def _announce(self, move: Move) -> None:
        """Say what a seat did, showing only what the table may see (:func:`agents.play.session.move_lines`)."""
        for line in move_lines(self.game, move, self.human, self.who, self.card):
            self.say(line)


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog=PROG, description="Play Mauscheln against the bots in a terminal.")
    add_rule_arguments(p)
    p.add_argument("--seat", type=int, default=0, help="your seat (0 .. players-1)")
    p.add_argument("--agents", nargs="+", default=["expert"], metavar="SPEC",
                   help=f"the bots: one spec for all, or one per bot seat in order; known: {', '.join(available_agents())}")
    p.add_argument("--deals", type=int, default=3, help="settled deals in the session")
    p.add_argument("--seed", type=int, default=None, help="seed of the shuffle and the bots (default: random)")
    p.add_argument("--dealer", type=int, default=None, help="first dealer's seat (default: by lot)")
    p.add_argument("--ascii", action="store_true", help="card codes (QH) instead of suit symbols (Q♥)")
    p.add_argument("--name", default="You", help="your name at the table")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        return _play(args)
    except KeyboardInterrupt:  # Ctrl-C, at the table or while the bots load: leave as an interrupted command does
        print("\nbye.")
        return 130


def _play(args: argparse.Namespace) -> int:
    try:
        if args.deals < 1:
            raise MauschelnError(f"--deals {args.deals} is not allowed; allowed: a whole number >= 1")
        if args.seed is not None and args.seed < 0:
            raise MauschelnError(f"--seed {args.seed} is not allowed; allowed: a whole number >= 0")
        config = config_from_namespace(args, max_deals=(args.deals, "--deals"))
        game = Game(config)
        if not 0 <= args.seat < game.n:
            raise MauschelnError(f"--seat {args.seat} is not allowed; allowed: 0..{game.n - 1}")
        if args.dealer is not None and not 0 <= args.dealer < game.n:
            raise MauschelnError(f"--dealer {args.dealer} is not allowed; allowed: 0..{game.n - 1}")
        others = [s for s in range(game.n) if s != args.seat]
        specs = list(args.agents)
        if len(specs) == 1:
            specs = specs * len(others)
        if len(specs) != len(others):
            raise MauschelnError(f"--agents takes one spec or {len(others)} (one per bot seat), got {len(specs)}")
        seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % (1 << 31))
        bots = {s: agent_from_spec(spec, seed=seed) for s, spec in zip(others, specs)}
        for s, bot in bots.items():
            bot.setup(game, s)  # a checkpoint made for another table fails here
    except MauschelnError as exc:
        return report(PROG, exc)
    table = TerminalTable(game, args.seat, bots, ascii_cards=args.ascii, name=args.name)
    print(f"Mauscheln ({config.ruleset}, {game.n} players, {config.max_deals} deal(s), seed {seed}).")
    try:
        table.play(seed=seed, dealer=args.dealer)
    except Quit:
        print("\nbye.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
