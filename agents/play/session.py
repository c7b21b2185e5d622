"""A session with people at some seats and agents at the others, advanced one decision at a time.

:class:`PlaySession` is the table of ``mauscheln play`` (:mod:`agents.play.terminal`)
and of ``mauscheln serve`` (:mod:`mauscheln.web`): it owns the engine state, shows
every seat exactly what the environment gives it (:class:`agents.views.EnvView`),
lets the bots answer, and reports each decision as a :class:`Move` and each
settled deal with its results. A front end only asks the person for an action and
shows the moves; what may be shown of a move is decided here, in :func:`move_lines`:
another seat's card is named only when it is played to a trick, its discards (also
the first one, with which a Mouche or Muschka player starts an exchange while
deciding) are a count, never a card.

:func:`parse_action` reads a person's move (``qh``, ``Q♥``, ``10h``, ``pass``) and
:func:`why_not` says in one sentence why a move is not legal (must follow suit,
must beat, must trump), from the seat's own observation and info.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.base import Agent
from agents.evaluation.match import agent_seed
from agents.views import EnvView
from mauscheln_env.cards import SUIT_NAMES, SUIT_SYMBOLS, iter_bits
from mauscheln_env.engine import DealResult, Game, Phase
from mauscheln_env.errors import IllegalActionError, MauschelnError, shown
from mauscheln_env.tricks import legal_follow

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


@dataclass(frozen=True)
class Move:
    """One decision of a seat and what it did to the table.

    ``trick``: the trick this move completed, ``((seat, card id), ...)`` in play order, and ``won_by`` its
    winner (None when no trick was completed). ``marked``: the cards the seat had marked to discard in this
    deal's exchange (a public count). ``results``: the deals this move ended.
    """

    seat: int
    phase: Phase
    action: int
    trick: tuple[tuple[int, int], ...] | None = None
    won_by: int | None = None
    marked: int = 0
    results: tuple[DealResult, ...] = ()

    def private(self, game: Game) -> bool:
        """A card action outside a trick: a discard or a card chosen, which only its own seat may see."""
        return self.action < game.num_cards and self.phase is not Phase.PLAY


class PlaySession:
    """One session of ``game`` with agents at the seats of ``bots`` and people at the others.

    The shuffle comes from ``seed`` (the state is ``game.new_session(default_rng(seed), dealer=dealer)``), each
    bot is seeded per deal with :func:`agents.evaluation.match.agent_seed` as the match runner does, and every
    action is kept in :attr:`actions`, so the session can be replayed from ``seed``, ``dealer`` and the actions.
    ``view`` is the :class:`EnvView` to use (by default a new one for the game's rules); the session applies its
    actions with ``view.game``.
    """

    def __init__(self, game: Game, bots: Mapping[int, Agent], *, seed: int, dealer: int | None = None,
                 view: EnvView | None = None) -> None:
        self.view = view if view is not None else EnvView(game.config)
        self.game: Game = self.view.game
        self.bots = dict(bots)
        self.seed = int(seed)
        self.dealer = dealer
        self.state = self.game.new_session(np.random.default_rng(self.seed), dealer=dealer)
        self.view.bind(self.state)
        n = self.game.n
        for s, bot in self.bots.items():
            bot.setup(self.game, s)
            bot.reset(agent_seed(self.seed, 0, s))
        self.totals = [0] * n
        self.deal_no = 0
        """Deals ended so far (the one being played is ``deal_no + 1``)."""
        self.marks = [0] * n
        """Cards each seat has marked in its exchange this deal (a public count)."""
        self.actions: list[int] = []
        self.results: list[DealResult] = []

    @property
    def over(self) -> bool:
        return self.state.phase is Phase.OVER

    @property
    def to_act(self) -> int | None:
        """The seat to act, None once the session is over."""
        return None if self.over else self.state.to_act

    def seat_view(self, seat: int) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """``(observation, action_mask, info)`` of ``seat`` now, as the environment gives them."""
        self.view.refresh()
        return self.view.seat_view(seat)

    def legal(self) -> list[int]:
        """The legal action ids of the seat to act (empty once over)."""
        return self.game.legal_actions(self.state)

    def step(self, action: int) -> Move:
        """Apply the acting seat's ``action``; :class:`IllegalActionError` (nothing changed) when it is not legal."""
        g, state = self.game, self.state
        if self.over:
            raise IllegalActionError("the session is over; no move is possible")
        seat, phase, deal = state.to_act, state.phase, state.deal
        before = len(deal.tricks)
        won_before = list(deal.tricks_won)
        marked = self.marks[seat]
        results = g.apply(state, action)  # raises IllegalActionError before changing anything
        self.actions.append(int(action))
        self.view.refresh()  # the environment points at the state as it is now (a front end may look at once)
        trick, won_by = None, None
        if len(deal.tricks) > before:
            trick = tuple((int(s), int(c)) for s, c in deal.tricks[-1])
            won_by = next((s for s in range(g.n) if deal.tricks_won[s] > won_before[s]), None)
        if action < g.num_cards and phase in (Phase.EXCHANGE, Phase.DECIDE):
            self.marks[seat] += 1
        for result in results:
            self.totals = [t + d for t, d in zip(self.totals, result.deltas)]
            self.results.append(result)
            self.deal_no += 1
            self.marks = [0] * g.n
            if not self.over:
                for s, bot in self.bots.items():
                    bot.reset(agent_seed(self.seed, self.deal_no, s))
        return Move(seat, phase, int(action), trick, won_by, marked, tuple(results))

    def bot_move(self) -> Move:
        """Let the bot to act choose and apply its action."""
        seat = self.to_act
        if seat not in self.bots:
            raise MauschelnError(f"seat {seat} is not a bot's seat; bots sit at {sorted(self.bots)}")
        obs, mask, info = self.seat_view(seat)
        return self.step(self.bots[seat].act(obs, mask, info))

    def play_bots(self, on_move: Callable[[Move], None] | None = None) -> list[Move]:
        """Let the bots play until a person is to act or the session is over; the moves, each also given to
        ``on_move`` as it is made."""
        moves = []
        while not self.over and self.state.to_act in self.bots:
            move = self.bot_move()
            moves.append(move)
            if on_move is not None:
                on_move(move)
        return moves


# ---------------------------------------------------------------------- words
def move_lines(game: Game, move: Move, viewer: int, who: Callable[[int], str],
               card: Callable[[int], str]) -> list[str]:
    """What ``viewer`` is told of ``move``: only what the table may see, a bot's card only when played to a
    trick. ``who(seat)`` names a seat, ``card(id)`` a card."""
    seat, phase, action = move.seat, move.phase, move.action
    own = seat == viewer
    if phase is Phase.PLAY:
        lines = [f"{who(seat)} plays {card(action)}"]
        if move.trick is not None and move.won_by is not None:
            lines.append("   trick: " + ", ".join(f"seat {s} {card(c)}" for s, c in move.trick)
                         + f" -> won by {who(move.won_by)}")
        return lines
    if action == game.action_ids.get("done") and phase is Phase.EXCHANGE:
        return [f"{who(seat)} exchanges {move.marked} card(s)"]
    if action < game.num_cards:  # a card outside a trick: a discard (or a card given), known to its owner only
        if phase is Phase.DECIDE:
            return [f"you start your exchange by discarding {card(action)}" if own
                    else f"{who(seat)} takes part and starts an exchange by discarding a card"]
        if phase is Phase.EXCHANGE:
            return [f"you mark {card(action)} to discard" if own else f"{who(seat)} marks a card to discard"]
        return [f"you choose {card(action)}" if own else f"{who(seat)} chooses a card"]
    name = game.action_to_str(action)
    meaning = DECISIONS.get((phase, name), f"{name} ({phase.name.lower()} decision)")
    return [f"{who(seat)}: {name} - {meaning}"]


def parse_action(game: Game, text: str) -> int | None:
    """The action a person's ``text`` names (a card code such as ``qh``, ``Q♥`` or ``10h``, or a move's name such
    as ``pass``), legal or not; None when it names none."""
    if not isinstance(text, str):
        return None
    t = text.strip()
    if not t:
        return None
    if len(t) == 2 and t[1] in _SYMBOL_TO_SUIT:
        t = t[0] + _SYMBOL_TO_SUIT[t[1]]
    if len(t) == 3 and t[:2] == "10" and t[2] in _SYMBOL_TO_SUIT:
        t = "T" + _SYMBOL_TO_SUIT[t[2]]
    if t.lower() in ("10" + s.lower() for s in "CSHD"):
        t = "T" + t[-1]
    try:
        return game.action_from_str(t)
    except MauschelnError:
        return None


def why_not(view: EnvView, text: str, action: int | None, legal: list[int], obs: np.ndarray,
            info: Mapping[str, Any], card: Callable[[int], str]) -> str:
    """Why ``text`` (read as ``action``, None when it names no action) is not a legal move here, in one sentence,
    from the seat's own observation and info."""
    g = view.game
    if action is None:
        t = text.strip()
        if t.isascii() and t.isdigit():
            return f"{t if len(t) <= 9 else shown(t)} is not one of the numbers shown"
        return f"{shown(t)} is not a legal move here"
    if action >= g.num_cards:
        return f"{g.action_to_str(action)!r} is not a legal move here"
    hand = {g.deck.index[c] for c in info["hand"]}
    code = card(action)
    views = view.env.observation_views(obs)
    if action in set(np.flatnonzero(views.get("own_discards", np.zeros(0))).tolist()):
        return f"{code} is already among your discards"
    if action not in hand:
        return f"{code} is not in your hand"
    if info["phase"] == "play" and info["trick"]:
        reason = _follow_reason(view, action, hand, legal, obs, info, card)
        if reason:
            return f"{code} is not allowed: {reason}"
    return f"{code} is not a legal move here"


def _follow_reason(view: EnvView, action: int, hand: set[int], legal: list[int], obs: np.ndarray,
                   info: Mapping[str, Any], card: Callable[[int], str]) -> str | None:
    """must follow suit / must beat / must trump, derived with ``tricks.legal_follow`` on the own hand and the
    trick of the info; None when that derivation does not reproduce the legal cards (then no reason is given)."""
    g = view.game
    profile, tables = _follow_rules(g, obs, view.env.observation_views)
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
        return f"you must beat {card(winner)} when you can (with a higher card of the led suit)"
    if tables.trump_mask >> action & 1:
        return f"you must beat {card(winner)} with a higher trump when you can"
    return f"you have no {suit_name}, so you must trump"


# ---------------------------------------------------------------------- engine facts (one place to port)
def _follow_rules(game: Game, obs: np.ndarray, views: Any) -> tuple[Any, Any]:
    """The trick profile of the ruleset and the trump tables of the trump suit in ``obs``: what
    ``tricks.legal_follow`` needs besides the hand and the trick. Reads ``game.config.spec.trick_profile`` and
    ``game.tables`` (static facts of the rules, no game state)."""
    suit = int(np.argmax(views(obs)["trump_suit"]))
    return game.config.spec.trick_profile, game.tables[suit]
