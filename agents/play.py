"""``mauscheln play``: play against the bots in a terminal.

The human sits at one seat (``--seat``), agents from the registry at the others
(``--agents``: one spec for every bot, or one per bot in seat order). The
table, the own hand and the legal moves are shown with suit symbols (``--ascii``
for plain codes); a move is entered by its menu number, its card code (``qh``,
``Q♥``) or its name (``pass``, ``go``, ``done``, ...). A wrong input is answered
with the legal choices; ``?`` repeats them, ``quit`` (or end of input) leaves.
Each deal's settlement is explained in one line per seat
(:func:`mauscheln_env.render.explain_result`).

The human and the bots see exactly what the environment gives a seat
(:class:`agents.views.EnvView`); the screen shows only public facts and the
human's own cards — a bot's discards are announced as a count, never by card.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

import numpy as np

from agents.base import Agent, agent_from_spec, available_agents
from agents.evaluate import _rule_options
from agents.match import agent_seed
from agents.views import EnvView
from mauscheln_env.cards import SUIT_NAMES, SUIT_SYMBOLS
from mauscheln_env.config import make_config
from mauscheln_env.engine import Game, Phase, State
from mauscheln_env.errors import MauschelnError
from mauscheln_env.render import explain_result, role_name

_SYMBOL_TO_SUIT = {v: k for k, v in SUIT_SYMBOLS.items()}


class Quit(Exception):
    """The human left the table."""


class TerminalTable:
    """One human against bots; reads moves from ``stdin`` and writes the table to ``out``."""

    def __init__(self, game: Game, human: int, bots: dict[int, Agent], *, ascii_cards: bool = False,
                 stdin: TextIO | None = None, out: TextIO | None = None, name: str = "You") -> None:
        self.game = game
        self.human = human
        self.bots = bots
        self.ascii = ascii_cards
        self.stdin = stdin or sys.stdin
        self.out = out or sys.stdout
        self.name = name
        self.view = EnvView(game.config)
        self.game = self.view.game

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

    def show_table(self, state: State, info: dict) -> None:
        g = self.game
        deck = g.deck
        trump = state.deal.trump_card
        suit = deck.codes[trump][1]
        phase = info["phase"]
        self.say("")
        self.say(f"== deal {state.session.deals_started} | {phase} | dealer: {self.who(state.session.dealer)} | pot {info['pot']} ==")
        taken = "" if state.deal.trump_holder is None else f", taken by {self.who(state.deal.trump_holder)}"
        self.say(f"   trump card {self.card(trump)}{taken}: {SUIT_NAMES[suit]} {SUIT_SYMBOLS[suit]} are trump")
        points = "scores" in info  # muschka counts a score down instead of chips
        purse = info["scores"] if points else info["chips"]
        self.say(f"   {'seat':<4} {'player':<22} {'score' if points else 'chips':>5}  {'role':<10} {'tricks':>6} {'exch':>4}")
        for s in range(g.n):
            mark = ">" if s == state.to_act else " "
            x = state.deal.exchanged[s]
            player = self.name if s == self.human else self.bots[s].label()
            self.say(f" {mark} {s:<4} {player:<22} {purse[s]:>5}  {info['roles'][s]:<10} "
                     f"{info['tricks_won'][s]:>6} {'-' if x is None else x:>4}" + ("  (dealer)" if s == state.session.dealer else ""))
        if info["trick"]:
            self.say("   trick so far: " + ", ".join(f"seat {s} {self.card(deck.index[c])}" for s, c in info["trick"]))
        hand = [deck.index[c] for c in info["hand"]]
        marked = state.deal.discards[self.human]  # the human's own discards (part of the own observation)
        if hand:
            shown = " ".join(self.card(c) for c in hand)
        else:
            shown = "(empty)" if marked else "(not seen yet)"
        self.say(f"   your hand: {shown}")
        if marked:
            self.say("   your discards: " + " ".join(self.card(c) for c in range(g.num_cards) if marked >> c & 1))

    def menu(self, legal: list[int]) -> str:
        return "   ".join(f"{i}) {self.action_text(a)}" for i, a in enumerate(legal, 1))

    # ------------------------------------------------------------------ input
    def parse(self, text: str, legal: list[int]) -> int | None:
        """The action the human meant, or None when it is not one of the legal moves."""
        t = text.strip()
        if not t:
            return None
        if t.isdigit():
            i = int(t)
            return legal[i - 1] if 1 <= i <= len(legal) else None
        if len(t) == 2 and t[1] in _SYMBOL_TO_SUIT:
            t = t[0] + _SYMBOL_TO_SUIT[t[1]]
        if t.lower() in ("10" + s.lower() for s in "CSHD"):
            t = "T" + t[-1]
        try:
            a = self.game.action_from_str(t)
        except MauschelnError:
            return None
        return a if a in legal else None

    def ask(self, state: State, obs: np.ndarray, mask: np.ndarray, info: dict) -> int:
        legal = np.flatnonzero(mask).tolist()
        self.show_table(state, info)
        self.say(f"your move ({info['phase']}): {self.menu(legal)}")
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
                self.say(f"legal moves: {self.menu(legal)}")
                continue
            action = self.parse(text, legal)
            if action is None:
                self.say(f"{text!r} is not a legal move here. Choose one of: {self.menu(legal)}")
                self.say("   (type the number, the card code such as qh, or the move's name; ? repeats, quit leaves)")
                continue
            return action

    # ------------------------------------------------------------------ session
    def play(self, *, seed: int = 0, dealer: int | None = None) -> list[int]:
        """Play one session; returns each seat's chip change."""
        g = self.game
        rng = np.random.default_rng(seed)
        state = g.new_session(rng, dealer=dealer)
        view = self.view
        view.bind(state)
        for s, bot in self.bots.items():
            bot.setup(g, s)
            bot.reset(agent_seed(seed, 0, s))
        totals = [0] * g.n
        deal_no = 0
        self.say(f"You are seat {self.human}; seat s+1 sits to the left of seat s. "
                 f"At the table: {', '.join(self.who(s) for s in range(g.n))}.")
        while state.phase is not Phase.OVER:
            view.refresh()
            seat = state.to_act
            obs, mask, info = view.seat_view(seat)
            phase = state.phase
            before = {"marked": state.deal.discards[seat], "trick": list(state.deal.trick),
                      "tricks_won": list(state.deal.tricks_won)}
            if seat == self.human:
                action = self.ask(state, obs, mask, info)
            else:
                action = self.bots[seat].act(obs, mask, info)
            results = g.apply(state, action)
            self._announce(seat, phase, action, before, state, results)
            for result in results:
                for s in range(g.n):
                    totals[s] += result.deltas[s]
                self.say("")
                for line in explain_result(g, result):
                    self.say(line)
                mine = result.deltas[self.human]
                self.say(f"  your result this deal: {mine:+d}")
                deal_no += 1
                if state.phase is not Phase.OVER:
                    for s, bot in self.bots.items():
                        bot.reset(agent_seed(seed, deal_no, s))
        self.say("")
        points = not g.scoring.uses_chips
        self.say("session over. " + ("rewards (score decreases):" if points else "chips won or lost:"))
        for s in range(g.n):
            now = f"score {state.session.scores[s]}" if points else f"{state.session.chips[s]} chips"
            self.say(f"  {self.who(s)}: {totals[s]:+d}  (now {now}, {role_name(state, s)})")
        return totals

    def _announce(self, seat: int, phase: Phase, action: int, before: dict, after_state: State,
                  results: list) -> None:
        """Say what a seat did, showing only what the table may see."""
        g = self.game
        if phase is Phase.EXCHANGE:
            if action == g.DONE:
                self.say(f"{self.who(seat)} exchanges {bin(before['marked']).count('1')} card(s)")
            elif seat == self.human:
                self.say(f"you mark {self.card(action)} to discard")
            else:
                self.say(f"{self.who(seat)} marks a card to discard")
            return
        if phase is Phase.PLAY:
            self.say(f"{self.who(seat)} plays {self.card(action)}")
            trick = [*before["trick"], (seat, action)]
            won = results[0].tricks if results else after_state.deal.tricks_won
            gained = [s for s in range(g.n) if won[s] > before["tricks_won"][s]]
            if gained:
                self.say("   trick: " + ", ".join(f"seat {s} {self.card(c)}" for s, c in trick)
                         + f" -> won by {self.who(gained[0])}")
            return
        self.say(f"{self.who(seat)}: {g.action_to_str(action)}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mauscheln play", description="Play Mauscheln against the bots in a terminal.")
    p.add_argument("--ruleset", default="mauscheln")
    p.add_argument("--players", type=int, default=4, help="number of seats")
    p.add_argument("--seat", type=int, default=0, help="your seat (0 .. players-1)")
    p.add_argument("--agents", nargs="+", default=["expert"], metavar="SPEC",
                   help=f"the bots: one spec for all, or one per bot seat in order; known: {', '.join(available_agents())}")
    p.add_argument("--deals", type=int, default=3, help="settled deals in the session")
    p.add_argument("--knock", action="store_true", help="play with the knock option")
    p.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE", help="other rule options")
    p.add_argument("--seed", type=int, default=None, help="seed of the shuffle and the bots (default: random)")
    p.add_argument("--dealer", type=int, default=None, help="first dealer's seat (default: by lot)")
    p.add_argument("--ascii", action="store_true", help="card codes (QH) instead of suit symbols (Q♥)")
    p.add_argument("--name", default="You", help="your name at the table")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        options = dict(_rule_options(args.rule, args.knock))
        config = make_config(args.ruleset, args.players, max_deals=args.deals, **options)
        game = Game(config)
        if not 0 <= args.seat < game.n:
            raise ValueError(f"--seat {args.seat} is not allowed; allowed: 0..{game.n - 1}")
        if args.dealer is not None and not 0 <= args.dealer < game.n:
            raise ValueError(f"--dealer {args.dealer} is not allowed; allowed: 0..{game.n - 1}")
        others = [s for s in range(game.n) if s != args.seat]
        specs = list(args.agents)
        if len(specs) == 1:
            specs = specs * len(others)
        if len(specs) != len(others):
            raise ValueError(f"--agents takes one spec or {len(others)} (one per bot seat), got {len(specs)}")
        seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % (1 << 31))
        bots = {s: agent_from_spec(spec, seed=seed) for s, spec in zip(others, specs)}
    except ValueError as exc:
        print(f"mauscheln play: error: {exc}", file=sys.stderr)
        return 2
    table = TerminalTable(game, args.seat, bots, ascii_cards=args.ascii, name=args.name)
    print(f"Mauscheln ({config.ruleset}, {game.n} players, {config.max_deals} deal(s), seed {seed}).")
    try:
        table.play(seed=seed, dealer=args.dealer)
    except (Quit, KeyboardInterrupt):
        print("\nbye.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
