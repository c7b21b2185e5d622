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
from agents.evaluation.match import agent_seed
from agents.views import EnvView
from mauscheln_env.cards import SUIT_NAMES, SUIT_SYMBOLS, iter_bits
from mauscheln_env.engine import Game, Phase
from mauscheln_env.errors import MauschelnError
from mauscheln_env.render import explain_result
from mauscheln_env.ruleargs import ArgumentParser, add_rule_arguments, config_from_namespace, report
from mauscheln_env.tricks import legal_follow

PROG = "mauscheln play"
_SYMBOL_TO_SUIT = {v: k for k, v in SUIT_SYMBOLS.items()}

DECISIONS: dict[tuple[Phase, str], str] = {
    (Phase.KNOCK, "knock"): "knocks",
    (Phase.KNOCK, "no_knock"): "does not knock",
    (Phase.DECLARE, "mauscheln"): "declares (mauschelt: will take two tricks)",
    (Phase.DECLARE, "pass"): "passes: does not declare",
    (Phase.DECLARE, "in"): "is in",
    (Phase.DECLARE, "in_lead"): "is in and leads",
    (Phase.DECLARE, "out"): "is out: drops this deal",
    (Phase.GO_WITH, "go"): "goes with the declarer",
    (Phase.GO_WITH, "pass"): "passes: does not go with the declarer",
    (Phase.DECIDE, "stay"): "stays: plays with the cards held",
    (Phase.DECIDE, "pass"): "passes: drops this deal",
    (Phase.DECIDE, "swap"): "takes the trump card (Béatrix)",
    (Phase.OFFER, "deal"): "deals",
    (Phase.OFFER, "push"): "pushes the deal on",
    (Phase.ANNOUNCE, "announce"): "announces the Pamphile",
    (Phase.ANNOUNCE, "silent"): "does not announce the Pamphile",
}
"""What a named action means in its phase, for the announcements (a ``pass`` says which decision)."""


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
        self.marks = [0] * self.game.n  # cards each seat has marked in its exchange this deal (a public count)

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
        if not t:
            return None
        if t.isascii() and t.isdigit():  # str.isdigit also holds for '²' or '٣', which int() refuses or misreads
            return items.get(int(t))
        if len(t) == 2 and t[1] in _SYMBOL_TO_SUIT:
            t = t[0] + _SYMBOL_TO_SUIT[t[1]]
        if t.lower() in ("10" + s.lower() for s in "CSHD"):
            t = "T" + t[-1]
        try:
            return self.game.action_from_str(t)
        except MauschelnError:
            return None

    def why_not(self, text: str, action: int | None, legal: list[int], obs: np.ndarray, info: dict[str, Any]) -> str:
        """Why ``text`` is not a legal move here, in one sentence."""
        g = self.game
        if action is None:
            if text.strip().isascii() and text.strip().isdigit():
                return f"{text.strip()} is not one of the numbers shown"
            return f"{text.strip()!r} is not a legal move here"
        if action >= g.num_cards:
            return f"{g.action_to_str(action)!r} is not a legal move here"
        hand = {g.deck.index[c] for c in info["hand"]}
        code = self.card(action)
        views = self.view.env.observation_views(obs)
        if action in set(np.flatnonzero(views.get("own_discards", np.zeros(0))).tolist()):
            return f"{code} is already among your discards"
        if action not in hand:
            return f"{code} is not in your hand"
        if info["phase"] == "play" and info["trick"]:
            reason = self._follow_reason(action, hand, legal, obs, info)
            if reason:
                return f"{code} is not allowed: {reason}"
        return f"{code} is not a legal move here"

    def _follow_reason(self, action: int, hand: set[int], legal: list[int], obs: np.ndarray,
                       info: dict[str, Any]) -> str | None:
        """must follow suit / must beat / must trump, derived with ``tricks.legal_follow`` on the own hand and the
        trick of the info; None when that derivation does not reproduce the legal cards (then no reason is given)."""
        g = self.game
        profile, tables = _follow_rules(g, obs, self.view.env.observation_views)
        trick = [g.deck.index[c] for _, c in info["trick"]]
        winner = trick[0]
        for c in trick[1:]:
            if tables.beats[winner] >> c & 1:
                winner = c
        hand_mask = sum(1 << c for c in hand)
        led = tables.eff_suit[trick[0]]
        led_mask = tables.eff_suit_mask[led]
        allowed = legal_follow(profile, hand_mask, led_mask, tables.trump_mask, tables.beats[winner])
        if set(iter_bits(allowed)) != {a for a in legal if a < g.num_cards}:
            return None
        suit_name = SUIT_NAMES["CSHD"[led]]
        follow = hand_mask & led_mask
        if follow:
            if not follow >> action & 1:
                return f"you must follow suit ({suit_name} led)"
            return f"you must beat {self.card(winner)} when you can (with a higher card of the led suit)"
        if tables.trump_mask >> action & 1:
            return f"you must beat {self.card(winner)} with a higher trump when you can"
        return f"you have no {suit_name}, so you must trump"

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
            before = {"trick": list(info["trick"]), "tricks_won": list(info["tricks_won"])}
            if seat == self.human:
                action = self.ask(obs, mask, info, deal_no + 1)
            else:
                action = self.bots[seat].act(obs, mask, info)
            results = g.apply(state, action)
            view.refresh()
            after = view.seat_view(self.human)[2]
            self._announce(seat, phase, action, before, after, results)
            for result in results:
                for s in range(g.n):
                    totals[s] += result.deltas[s]
                self.say("")
                for line in explain_result(g, result):
                    self.say(line)
                mine = result.deltas[self.human]
                self.say(f"  your result this deal: {mine:+d}")
                deal_no += 1
                self.marks = [0] * g.n
                if state.phase is not Phase.OVER:
                    for s, bot in self.bots.items():
                        bot.reset(agent_seed(seed, deal_no, s))
        final = view.seat_view(self.human)[2]
        self.say("")
        points = "scores" in final
        self.say("session over. " + ("rewards (score decreases):" if points else "chips won or lost:"))
        for s in range(g.n):
            now = f"score {final['scores'][s]}" if points else f"{final['chips'][s]} chips"
            self.say(f"  {self.who(s)}: {totals[s]:+d}  (now {now}, {final['roles'][s]})")
        return totals

    def _announce(self, seat: int, phase: Phase, action: int, before: dict, after: dict, results: list) -> None:
        """Say what a seat did, showing only what the table may see: a bot's card only when played to a trick."""
        g = self.game
        human = seat == self.human
        if phase is Phase.PLAY:
            self.say(f"{self.who(seat)} plays {self.card(action)}")
            trick = [*before["trick"], [seat, g.deck.codes[action]]]
            won = results[0].tricks if results else after["tricks_won"]
            gained = [s for s in range(g.n) if won[s] > before["tricks_won"][s]]
            if gained:
                self.say("   trick: " + ", ".join(f"seat {s} {self.card(g.deck.index[c])}" for s, c in trick)
                         + f" -> won by {self.who(gained[0])}")
            return
        if action == g.action_ids.get("done") and phase is Phase.EXCHANGE:
            self.say(f"{self.who(seat)} exchanges {self.marks[seat]} card(s)")
            return
        if action < g.num_cards:  # a card outside a trick: a discard (or a card given), known to its owner only
            self.marks[seat] += phase in (Phase.EXCHANGE, Phase.DECIDE)
            if phase is Phase.DECIDE:
                self.say(f"you start your exchange by discarding {self.card(action)}" if human
                         else f"{self.who(seat)} takes part and starts an exchange by discarding a card")
            elif phase is Phase.EXCHANGE:
                self.say(f"you mark {self.card(action)} to discard" if human
                         else f"{self.who(seat)} marks a card to discard")
            else:
                self.say(f"you choose {self.card(action)}" if human else f"{self.who(seat)} chooses a card")
            return
        name = g.action_to_str(action)
        meaning = DECISIONS.get((phase, name), f"{name} ({phase.name.lower()} decision)")
        self.say(f"{self.who(seat)}: {name} - {meaning}")


# ---------------------------------------------------------------------- engine facts (one place to port)
def _follow_rules(game: Game, obs: np.ndarray, views: Any) -> tuple[Any, Any]:
    """The trick profile of the ruleset and the trump tables of the trump suit in ``obs``: what
    ``tricks.legal_follow`` needs besides the hand and the trick. Reads ``game.config.spec.trick_profile`` and
    ``game.tables`` (static facts of the rules, no game state)."""
    suit = int(np.argmax(views(obs)["trump_suit"]))
    return game.config.spec.trick_profile, game.tables[suit]


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
    except (Quit, KeyboardInterrupt):
        print("\nbye.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
