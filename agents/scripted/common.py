"""Card sense shared by the scripted strategies of every ruleset.

A *strategy* is the brain of a scripted agent for one ruleset: it is built once
per :class:`~mauscheln_env.engine.Game` (static rules only) and answers one
decision at a time from what the seat knows, read through
:class:`agents.knowledge.KnowledgeReader` (observation + the seat's info). It
never sees an engine state. The registered agents in :mod:`agents.scripted.baselines`
pick a strategy from :data:`agents.scripted.STRATEGIES` by ruleset name and
play a uniformly random legal action where a strategy has no opinion.

This module holds what every ruleset shares:

* :class:`Strategy`: dispatch by phase (``_on_<phase>(k, legal)``) and the card
  sense of the first Mauscheln baselines (card power from the engine's trick
  tables, trumps strongest first, unseen cards, side tops, the winning card);
* :func:`next_mark`: one step of an exchange plan;
* :class:`DealView` and :class:`TrickStrategy`: a small probabilistic model of a
  deal in progress that the strategies of ``mauscheln_classic``, ``mousel``,
  ``mouche`` and ``muschka`` play by. It counts the cards a seat has not seen,
  infers from every card played which cards its player cannot hold (a void, a
  trump he would have had to play, a card he would have had to beat with; the
  engine's own :func:`~mauscheln_env.tricks.legal_follow` decides), and turns
  that into the chance that a card wins the trick it is played to. A hand is
  then worth the distribution of the tricks it takes (each card a Bernoulli
  trial), and a ruleset only says what a number of tricks pays
  (:meth:`TrickStrategy.payoff`). Cards are chosen by the expected payoff of
  winning or losing the trick now with the rest of the hand kept for later:
  win cheaply, keep the high trump while it is worth more later, throw the
  losers when the trick is lost, and count trumps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from agents.knowledge import Knowledge, KnowledgeReader
from mauscheln_env.cards import SUITS, iter_bits
from mauscheln_env.engine import PLAYING_ROLES, Game, State
from mauscheln_env.tricks import TrickProfile, TrumpTables, legal_follow


class cached_property:  # noqa: N801 (the name of the functools descriptor it stands in for)
    """:func:`functools.cached_property` without its lock: computed on the first read and kept in the instance's
    ``__dict__``, where later reads find it first. Python 3.11's takes a lock at every first read (3.12
    dropped it), a measurable cost for the views made once per decision, thousands per search; no view is
    shared between threads."""

    def __init__(self, func: Callable[[Any], Any]) -> None:
        self.func, self.name, self.__doc__ = func, func.__name__, func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value


@dataclass(frozen=True)
class RuleFacts:
    """The static facts of a table the strategies read, taken from the :class:`Game` in one place.

    Beyond the public engine API (deck, ``n``, ``num_cards``, ``config.options``) they come from the
    ruleset's spec (``config.spec``) and the per-suit trick tables (``game.tables``), as the first
    baselines and :mod:`agents.knowledge` already read them; a change of where the engine keeps them
    is ported here.
    """

    n: int
    num_cards: int
    hand_size: int
    num_tricks: int
    direction: int
    profile: TrickProfile
    rank_order: str
    stake: int
    exchange_limit: int
    mery_cap: int | None
    pamphile_wild: bool
    jc: int | None
    """The Pamphile (JC) where the option is on."""
    ace_of_spades: int | None
    trump_ace: tuple[int | None, ...]
    start_score: int | None


def rule_facts(game: Game) -> RuleFacts:
    config, deck = game.config, game.deck
    spec, options = config.spec, config.options
    pamphile = bool(options.get("pamphile", False))
    return RuleFacts(
        n=game.n, num_cards=game.num_cards, hand_size=spec.hand_size, num_tricks=config.num_tricks,
        direction=spec.direction, profile=spec.trick_profile, rank_order=spec.rank_order,
        stake=int(options.get("stake", 0)), exchange_limit=int(options.get("exchange_limit", spec.hand_size)),
        mery_cap=options.get("mery_cap"), pamphile_wild=pamphile and bool(options.get("pamphile_wild", False)),
        jc=deck.index.get("JC") if pamphile else None, ace_of_spades=deck.index.get("AS"),
        trump_ace=tuple(deck.index.get("A" + suit) for suit in SUITS), start_score=options.get("start_score"),
    )


class Strategy:
    """Dispatch by phase and the card sense every scripted strategy shares.

    ``decide`` returns an action id, or None where the strategy has no rule
    for the position (the agent then plays a random legal action). A strategy
    of a ruleset whose action vocabulary lacks ``required_actions`` answers
    None throughout.
    """

    required_actions: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, game: Game) -> None:
        self.game = game
        self.rules = rule_facts(game)
        self.seat = 0
        self._reader = KnowledgeReader(game)
        self._supported = self.required_actions.issubset(game.action_ids)
        self._ids = dict(game.action_ids)
        self._power: list[tuple[int, ...]] = [
            tuple(-t.beats[c].bit_count() for c in range(game.num_cards)) for t in game.tables
        ]
        ranks = game.config.spec.rank_order
        self._rank_pos = tuple(ranks.index(code[0]) for code in game.deck.codes)
        self._full = game.deck.full_mask
        self._suit_mask = game.deck.suit_mask

    def bind(self, seat: int) -> None:
        self.seat = seat

    def decide(self, observation: np.ndarray, action_mask: np.ndarray, info: Any, legal: list[int]) -> int | None:
        return self._decide(info, legal, lambda: self.read(observation, action_mask, info))

    def decide_state(self, state: State, info: Any, legal: list[int]) -> int | None:
        """:meth:`decide` for this seat's view of an engine state (``legal``: its legal actions, sorted), read
        from the observation's pieces without encoding it (the same knowledge, the same decision)."""
        return self._decide(info, legal, lambda: self.read_state(state, info, legal))

    def _decide(self, info: Any, legal: list[int], read: Callable[[], Knowledge]) -> int | None:
        handler = getattr(self, f"_on_{info.get('phase')}", None) if self._supported else None
        if handler is None:
            return None
        return handler(read(), legal)

    def read(self, observation: np.ndarray, action_mask: np.ndarray, info: Any) -> Knowledge:
        return self._reader.read(observation, info, self.seat, action_mask)

    def read_state(self, state: State, info: Any, legal: list[int]) -> Knowledge:
        return self._reader.read_state(state, info, self.seat, legal)

    # ------------------------------------------------------------------ card sense
    def tables(self, k: Knowledge) -> TrumpTables:
        return self.game.tables[k.trump_suit]

    def power(self, k: Knowledge, card: int) -> int:
        """Higher is stronger: minus the number of cards that would beat ``card`` winning a trick."""
        return self._power[k.trump_suit][card]

    def trumps_in(self, k: Knowledge, mask: int) -> list[int]:
        """Trumps of ``mask``, strongest first."""
        t = self.tables(k)
        return sorted(iter_bits(mask & t.trump_mask), key=lambda c: -self._power[k.trump_suit][c])

    def unseen(self, k: Knowledge) -> int:
        """Cards that another seat may hold (not in own hand, discards, played, or the face-up trump)."""
        return self._full & ~k.known_out_of_play()

    def live_above(self, k: Knowledge, card: int, unseen: int) -> int:
        """How many cards that another seat may hold would beat ``card``."""
        return (self.tables(k).beats[card] & unseen).bit_count()

    def side_tops(self, k: Knowledge, mask: int, unseen: int) -> list[int]:
        """Non-trumps of ``mask`` that no unseen card of their suit beats (side aces, in effect)."""
        t = self.tables(k)
        return [c for c in iter_bits(mask & ~t.trump_mask) if not (t.beats[c] & unseen & ~t.trump_mask)]

    def is_ace(self, card: int) -> bool:
        """The top rank of the ruleset's order (the ace; in Mouche the king)."""
        return self._rank_pos[card] == 0

    def weakest(self, k: Knowledge, cards: list[int]) -> int:
        return min(cards, key=lambda c: (self.power(k, c), c))

    def strongest(self, k: Knowledge, cards: list[int]) -> int:
        return max(cards, key=lambda c: (self.power(k, c), -c))

    def winning_card(self, k: Knowledge) -> int | None:
        """The card currently winning the trick in progress (None when it is empty)."""
        if not k.current_trick:
            return None
        beats = self.tables(k).beats
        win = k.current_trick[0][1]
        for _, c in k.current_trick[1:]:
            if beats[win] >> c & 1:
                win = c
        return win


def next_mark(strategy: Strategy, k: Knowledge, legal: list[int], throw: list[int]) -> int:
    """One exchange step: mark the weakest card still to throw, else ``done``.

    Where ``done`` is not yet legal (a knocking dealer must discard at least one
    card) and nothing is left to throw, the weakest card goes.
    """
    done = strategy._ids["done"]
    marks = [c for c in throw if c in legal]
    if marks:
        return strategy.weakest(k, marks)
    if done in legal:
        return done
    cards = [a for a in legal if a < strategy.rules.num_cards]
    return strategy.weakest(k, cards)


def play_high_or_low(strategy: Strategy, k: Knowledge, legal: list[int]) -> int:
    """The beginners' card play: lead the strongest card; follow with the strongest card that wins the
    trick, else the weakest card."""
    win = strategy.winning_card(k)
    if win is None:
        return strategy.strongest(k, legal)
    beats = strategy.tables(k).beats[win]
    winners = [c for c in legal if beats >> c & 1]
    if winners:
        return strategy.strongest(k, winners)
    return strategy.weakest(k, legal)


# ---------------------------------------------------------------------- probability helpers
@lru_cache(maxsize=65536)
def miss_all(pool: int, bad: int, hand: int) -> float:
    """Chance that ``hand`` cards drawn at random from ``pool`` avoid ``bad`` given cards."""
    if bad <= 0 or hand <= 0:
        return 1.0
    if pool - bad < hand:
        return 0.0
    p = 1.0
    for i in range(hand):
        p *= max(0.0, pool - bad - i) / (pool - i)
    return p


def trick_distribution(probs: Sequence[float]) -> list[float]:
    """Distribution of the number of successes of independent trials (Poisson binomial): after each trial,
    ``k`` successes come from ``k - 1`` and a success, or from ``k`` and a failure."""
    dist = [1.0]
    for p in probs:
        q = 1.0 - p
        nxt: list[float] = []
        add = nxt.append
        up = 0.0  # what k-1 successes and a success add to k (the sums in the order of adding into zeros)
        for x in dist:
            add(up + x * q)
            up = 0.0 + x * p
        add(up)
        dist = nxt
    return dist


def expected(table: Sequence[float], base: int, probs: Sequence[float]) -> float:
    """E[table[base + X]] where X counts the successes of independent trials ``probs``."""
    dist = trick_distribution(probs)
    return sum(p * table[base + i] for i, p in enumerate(dist))


Opponents = Sequence[int] | float | tuple[Sequence[int], float] | None
"""Whom a card must beat: seats, a number of opponents not yet known, both (``(seats, number)``), or
(None) the other players."""


def split_opponents(opp: Opponents, default: Sequence[int]) -> tuple[tuple[int, ...], float]:
    """``opp`` as (known seats, number of opponents not yet known)."""
    if opp is None:
        return tuple(default), 0.0
    if isinstance(opp, (int, float)):
        return (), float(opp)
    if isinstance(opp, tuple) and len(opp) == 2 and isinstance(opp[1], (int, float)) \
            and not isinstance(opp[0], (int, float)):
        return tuple(opp[0]), float(opp[1])
    return tuple(opp), 0.0


class DealView:
    """What one seat knows of a deal, as card sets and chances; built once per decision.

    Everything derives from :class:`Knowledge` (the observation and the info of
    the seat) and the static rules; the expensive facts are computed on first use.
    """

    def __init__(self, strategy: TrickStrategy, k: Knowledge) -> None:
        self.s = strategy
        self.k = k
        self.game = strategy.game
        self.rules = strategy.rules
        self.t: TrumpTables = strategy.game.tables[k.trump_suit]
        self.me = k.seat
        self._left: dict[int, int] = {}
        self._pools: dict[int, int] = {}
        self._beat: dict[tuple, float] = {}
        self._lead: dict[tuple[int, Any], float] = {}
        self._virtual: dict[tuple[int, int, int], float] = {}
        self._draw: dict[Any, float] = {}
        self._voids: dict[int, bool] = {}
        self._facts: dict[int, tuple] = {}
        self._hands: dict[tuple, dict[int, float]] = {}
        self._classes: dict[int, int] = {}
        self._class_of: dict[tuple, int] = {}

    # ------------------------------------------------------------------ seats
    @cached_property
    def players(self) -> list[int]:
        """Seats that play (or will play) the tricks of this deal."""
        return [s for s in range(self.k.n) if self.k.roles[s] in PLAYING_ROLES]

    @cached_property
    def opponents(self) -> list[int]:
        return [s for s in self.players if s != self.me]

    def order_from(self, leader: int, seats: Sequence[int]) -> list[int]:
        n, d = self.k.n, self.rules.direction
        return sorted(seats, key=lambda s: ((s - leader) * d) % n)

    @cached_property
    def to_follow(self) -> list[int]:
        """Participants who play to the current trick after this seat."""
        trick = self.k.current_trick
        leader = trick[0][0] if trick else self.me
        played = {s for s, _ in trick}
        order = self.order_from(leader, [s for s in self.players if s not in played])
        return [s for s in order if s != self.me]

    @cached_property
    def trick_now(self) -> tuple[list[int], int]:
        """The cards of the trick in progress and the one winning it."""
        cards = [c for _, c in self.k.current_trick]
        return cards, self.s.trick_winner(self.t, cards)

    @cached_property
    def tricks_left(self) -> int:
        """Tricks still to be won, the one in progress included."""
        return self.rules.num_tricks - self.k.tricks_done

    def hand_left(self, seat: int) -> int:
        """Cards ``seat`` still holds (the hand size less the cards it played)."""
        left = self._left.get(seat)
        if left is None:
            left = self._left[seat] = self.rules.hand_size - sum(
                1 for cards in self.k.trick_cards if cards[seat] is not None)
        return left

    # ------------------------------------------------------------------ cards
    @cached_property
    def known(self) -> dict[int, int]:
        """Cards known to lie in another seat's hand and not yet played (see ``TrickStrategy.known_cards``)."""
        out = {}
        for seat, mask in self.s.known_cards(self.k).items():
            mask &= ~self.k.played
            if seat != self.me and mask:
                out[seat] = mask
        return out

    @cached_property
    def unseen(self) -> int:
        """Cards whose place this seat does not know (other hands, stock, dead hands, others' discards)."""
        mask = self.game.deck.full_mask & ~(self.k.hand | self.k.discards | self.k.played)
        mask &= ~self.s.public_out_of_play(self.k)
        for cards in self.known.values():
            mask &= ~cards
        return mask

    @cached_property
    def excluded(self) -> list[int]:
        """Per seat, the cards its plays prove it does not hold (RULES.md §1.4, via ``legal_follow``)."""
        return self.s.exclusions(self.k, self.t)

    def pool(self, seat: int) -> int:
        """Unseen cards that ``seat`` may hold."""
        pool = self._pools.get(seat)
        if pool is None:
            pool = self._pools[seat] = self.unseen & ~self.excluded[seat]
        return pool

    # ------------------------------------------------------------------ chances
    def beat_chance(self, seat: int, win: int, led: int, first: int) -> float:
        """Chance that ``seat`` can beat ``win`` in a trick whose effective led suit is ``led``.

        ``first`` is the card that led the trick (the Muschka ace-of-spades rule looks at it).
        Following the led suit when he can, else ruffing: he beats when he holds a higher card of the
        led suit, or none of that suit and a card that beats from outside it.
        """
        cls = self._classes.get(seat)
        if cls is None:
            cls = self._seat_class(seat)
        key = (cls, win, led, first)  # seats that look alike (same pool, hand, prior) share the answer
        p = self._beat.get(key)
        if p is None:
            p = self._beat[key] = self._beat_chance(self._facts[seat], win, led, first)
        return p

    def _seat_class(self, seat: int) -> int:
        """A small number shared by the seats whose facts (pool, hand, prior) are alike."""
        facts = self._seat_facts(seat)
        cls = self._class_of.setdefault(facts, len(self._class_of))
        self._classes[seat] = cls
        return cls

    def _seat_facts(self, seat: int) -> tuple[int, int, int, float, tuple[int, float] | None]:
        """(known cards, unknown cards in hand, pool, trump weight, likely card) of ``seat``, once per view."""
        facts = self._facts.get(seat)
        if facts is None:
            known = self.known.get(seat, 0)
            facts = self._facts[seat] = (known, self.hand_left(seat) - known.bit_count(), self.pool(seat),
                                         self.s.seat_weight(self.k, seat), self.s.likely_card(self, seat))
        return facts

    def _beat_chance(self, facts: tuple, win: int, led: int, first: int) -> float:
        t = self.t
        beaters = self.s.beaters(t, win, first)
        known, h, pool, weight, likely = facts
        if known & beaters:
            return 1.0
        if h <= 0:
            return 0.0
        led_mask = t.eff_suit_mask[led]
        q = self._odds(pool, h, beaters, led_mask, bool(known & led_mask), weight)
        if likely is not None and pool >> likely[0] & 1 and beaters >> likely[0] & 1:
            q = likely[1] + (1.0 - likely[1]) * q
        return q

    def _odds(self, pool: int, hand: int, beaters: int, led_mask: int, follows: bool, weight: float) -> float:
        """Chance that ``hand`` cards from ``pool`` beat: a higher card of the led suit, or (void in it,
        unless ``follows``) a card that beats from outside it. A trump is ``weight`` times as likely as
        another card to be in a hand that chose to play."""
        trumps = self.t.trump_mask
        extra = weight - 1.0
        follow = pool & led_mask
        up = follow & beaters
        out = pool & beaters & ~led_mask
        u = pool.bit_count() + extra * (pool & trumps).bit_count()
        w_up = up.bit_count() + extra * (up & trumps).bit_count()
        if follows:
            return 1.0 - miss_all(u, w_up, hand)
        return beat_odds(u, hand, follow.bit_count() + extra * (follow & trumps).bit_count(), w_up,
                         out.bit_count() + extra * (out & trumps).bit_count())

    def win_chance(self, card: int) -> float:
        """Chance that ``card``, played now, wins the current trick (or the trick it leads)."""
        trick = self.k.current_trick
        t = self.t
        if trick:
            first = trick[0][1]
            cards, win = self.trick_now
            if not self.s.wins_over(t, cards, win, card):
                return 0.0
            if self.s.locks(t, first, card):
                return 1.0
            led = t.eff_suit[first]
        else:
            first = card
            led = t.eff_suit[card]
        p = 1.0
        for s in self.to_follow:
            p *= 1.0 - self.beat_chance(s, card, led, first)
            if p <= 0.0:
                return 0.0
        return p

    def lead_chance(self, card: int, opp: Opponents = None) -> float:
        """Chance that ``card`` would win a trick it leads.

        ``opp``: whom it must beat (see :data:`Opponents`); an opponent not yet known holds a full hand
        of the cards this seat has not seen (for bidding, before anyone played).
        """
        if opp is None:
            p = self._lead.get(card)
            if p is None:
                led = self.t.eff_suit[card]
                p = 1.0
                for s in self.opponents:
                    p *= 1.0 - self.beat_chance(s, card, led, card)
                self._lead[card] = p
            return p
        seats, extra = split_opponents(opp, self.opponents)
        key = (card, seats, extra)
        p = self._lead.get(key)
        if p is not None:
            return p
        led = self.t.eff_suit[card]
        p = 1.0
        for s in seats:
            p *= 1.0 - self.beat_chance(s, card, led, card)
        if extra:
            p *= (1.0 - self.virtual_beat_chance(card, led, card)) ** extra
        self._lead[key] = p
        return p

    def virtual_beat_chance(self, win: int, led: int, first: int) -> float:
        """:meth:`beat_chance` for an opponent not yet known: a hand of ``TrickStrategy.opponent_hand``
        unseen cards, trumps weighted as in a hand that chose to play."""
        key = (win, led, first)
        p = self._virtual.get(key)
        if p is None:
            t = self.t
            p = self._virtual[key] = self._odds(self.unseen, min(self.unseen.bit_count(), self.s.opponent_hand(self)),
                                                self.s.beaters(t, win, first), t.eff_suit_mask[led], False,
                                                self.s.trump_weight)
        return p


@lru_cache(maxsize=65536)
def _draw_total(u: int, h: int, n_trumps: int, sides: tuple[int, ...], m: float, own_trumps: int, void: bool,
                w: float, guard: float, ruff: float, power: float, side_discount: float) -> tuple[float, float]:
    """Sums over the unseen trumps and the unseen side cards of their future chance if drawn (see
    ``TrickStrategy.draw_chance``)."""
    total = 0.0
    uw = u + (w - 1.0) * n_trumps
    for j in range(n_trumps):
        p = (1.0 - beat_odds(uw, h, n_trumps * w, j * w, 0)) ** m
        if j and own_trumps >= j:
            p += (1.0 - p) * guard
        if p < 0.9 and void:
            p += (1.0 - p) * ruff
        total += min(1.0, p) ** power
    out = n_trumps * w
    side = 0.0
    for nf in sides:
        for j in range(nf):
            side += side_discount * min(1.0, (1.0 - beat_odds(uw, h, nf, j, out)) ** m) ** power
    return total, side


@lru_cache(maxsize=65536)
def beat_odds(pool: int, hand: int, follow: int, up: int, void_beat: int) -> float:
    """Chance that a hand of ``hand`` cards from ``pool`` unseen ones beats a card: it holds one of the
    ``up`` higher cards among the ``follow`` cards of the led suit, or none of the led suit and one of the
    ``void_beat`` cards that beat from outside it."""
    p = 1.0 - miss_all(pool, up, hand)
    if void_beat:
        p += miss_all(pool, follow, hand) * (1.0 - miss_all(pool - follow, void_beat, hand))
    return p


class TrickStrategy(Strategy):
    """A strategy that plays its cards by the trick model of :class:`DealView`.

    Subclasses say what a number of tricks pays (:meth:`payoff`) and may tune
    how the future of a kept card is valued (:meth:`future_chance`). The play
    rule (:meth:`choose_card`): for each legal card c, with p the chance that c
    wins the trick now and X the tricks the rest of the hand will take,

        EV(c) = p · E[payoff(won + 1 + X)] + (1 − p) · E[payoff(won + X)]

    plus a share of what an opponent loses when this seat takes a trick he
    needs (the game is scored against the field), and the cheapest card among
    equals.
    """

    ruff_value: ClassVar[float] = 0.25
    """Extra chance that a low trump makes a trick by ruffing a suit this seat is void in."""
    guard_value: ClassVar[float] = 0.35
    """Share of the beaten chance a trump regains when enough smaller trumps guard it."""
    field_share: ClassVar[float] = 1.0
    """Weight of the others' loss of the tricks this seat takes (the deals are scored against the field)."""
    deny_weight: ClassVar[float] = 0.5
    """Weight of an opponent's loss, against the field of n - 1 opponents."""
    chance_power: ClassVar[float] = 1.3
    """Calibration of the independent-trials model: a chance p of taking a trick later counts as p ** this.
    The cards of one hand compete for the same few tricks against hands improved by their exchange, so
    middling chances are worth less than they look (fitted on Mousel deals where everyone plays)."""
    knock_draws_trump_card: ClassVar[bool] = True
    """A knocking dealer's exchange count includes the trump card he takes (the modern knock, §2.2)."""
    stock_weight: ClassVar[float] = 1.3
    """How much likelier an unseen trump is in some hand than in the stock (what a blind draw finds)."""
    reshuffle_value: ClassVar[float] = 0.35
    """Worth of a card drawn from the reshuffled discards, against one from the stock."""
    void_bonus: ClassVar[float] = 0.05
    """Chance a side card is worth less when it is the last of its suit in hand (giving it makes a void)."""
    side_discount: ClassVar[float] = 1.0
    """Factor on a side card's chance when a hand is valued before play (bidding, exchange)."""
    opponent_extra: ClassVar[int] = 0
    """Cards an opponent not yet known is counted with beyond his hand."""
    trump_weight: ClassVar[float] = 1.5
    """How much likelier a trump is than another unseen card to sit in the hand of a seat that plays: he
    chose to play, and kept his trumps when he exchanged."""

    def __init__(self, game: Game, *, risk: float = 0.0) -> None:
        super().__init__(game)
        self.risk = float(risk)
        self.info: Any = None
        self._seen: tuple[np.ndarray | None, State | None] = (None, None)
        """What the decision at hand reads its pieces from: its observation, or the state it views."""
        self._ex_plays: tuple = ()
        self._ex_val: list[int] = []
        self._ex_suit = -1
        self._plan: tuple[int, list[int], int] | None = None
        self.plan_check: list[tuple[bool, int]] | None = None
        """While an empty list, the next decision appends what a carried exchange plan is checked against: whether
        the phase is the exchange, and the hand as a bit mask (0 outside the exchange). ``pimc`` reads it to
        know whether a plan left from an earlier search could change its rollouts."""

    def bind(self, seat: int) -> None:
        super().bind(seat)
        self._plan = None

    def _decide(self, info: Any, legal: list[int], read: Callable[[], Knowledge]) -> int | None:
        plan, self._plan = self._plan, None
        check = self.plan_check
        exchange = info.get("phase") == "exchange"
        first = check is not None and not check
        if exchange and (plan is not None or first):
            index = self.game.deck.index
            hand = 0
            for code in info["hand"]:
                hand |= 1 << index[code]
        if first:
            check.append((exchange, hand if exchange else 0))
        if plan is not None and exchange:
            # The rest of an exchange planned at its first card: go on while the hand is as planned.
            if hand == plan[0]:
                marks = [c for c in plan[1] if c in legal]
                if marks:
                    return self._mark_planned(hand, marks, plan[1], plan[2])
                if self._ids["done"] in legal:
                    return self._ids["done"]
        return super()._decide(info, legal, read)

    def _mark_planned(self, hand: int, marks: list[int], throw: list[int], suit: int) -> int:
        card = min(marks, key=lambda c: (self._power[suit][c], c))
        self._plan = (hand & ~(1 << card), [c for c in throw if c != card], suit)
        return card

    def mark(self, k: Knowledge, legal: list[int], throw: list[int]) -> int:
        """One step of the exchange that throws ``throw`` (see :func:`next_mark`); the rest is remembered."""
        marks = [c for c in throw if c in legal]
        if marks:
            return self._mark_planned(k.hand, marks, throw, k.trump_suit)
        return next_mark(self, k, legal, throw)

    # ------------------------------------------------------------------ hooks
    def opponent_hand(self, v: DealView) -> int:
        return self.rules.hand_size + self.opponent_extra

    def view(self, k: Knowledge) -> DealView:
        return DealView(self, k)

    def read(self, observation: np.ndarray, action_mask: np.ndarray, info: Any) -> Knowledge:
        k = super().read(observation, action_mask, info)
        # The trump suit as the observation states it (a named trump can differ from the turned card's suit).
        suit = np.flatnonzero(self._reader.piece(observation, "trump_suit"))
        if suit.size:
            k.trump_suit = int(suit[0])
        self.info = info
        self._seen = (observation, None)
        return k

    def read_state(self, state: State, info: Any, legal: list[int]) -> Knowledge:
        k = super().read_state(state, info, legal)  # its trump suit is the piece's where the piece shows one
        self.info = info
        self._seen = (None, state)
        return k

    def piece_value(self, name: str) -> Any:
        """A piece of this decision's observation, decoded (as :meth:`Observer.decode` gives it)."""
        observation, state = self._seen
        observer = self._reader.observer
        if state is not None:
            return observer.values(state, self.seat, (name,))[name]
        return observer.decode(observation, self.seat, (name,))[name]

    def payoff(self, k: Knowledge, seat: int, tricks: int) -> float:
        """What ``seat`` gets for ending the deal with ``tricks`` tricks (chips, or points down)."""
        raise NotImplementedError

    def seat_weight(self, k: Knowledge, seat: int) -> float:
        """How much likelier a trump is than another unseen card in ``seat``'s hand (see ``trump_weight``)."""
        return self.trump_weight

    def likely_card(self, v: DealView, seat: int) -> tuple[int, float] | None:
        """A card ``seat``'s bidding says it probably holds, with that probability (None: no such card)."""
        return None

    def known_cards(self, k: Knowledge) -> dict[int, int]:
        """Cards every seat knows the place of, by holder: the trump card a seat took into his hand."""
        if k.trump_holder is None:
            return {}
        return {k.trump_holder: 1 << k.trump_card}

    def public_out_of_play(self, k: Knowledge) -> int:
        """Cards every seat knows are in no hand: the trump card while it lies face up and nobody holds it."""
        if k.trump_holder is None:
            return 1 << k.trump_card
        return 0

    def beaters(self, t: TrumpTables, win: int, first: int) -> int:
        """Cards that beat ``win`` in a trick led by ``first``."""
        return t.beats[win]

    def trick_winner(self, t: TrumpTables, cards: Sequence[int]) -> int:
        win = cards[0]
        for c in cards[1:]:
            if self.wins_over(t, cards, win, c):
                win = c
        return win

    def wins_over(self, t: TrumpTables, cards: Sequence[int], win: int, card: int) -> bool:
        return bool(t.beats[win] >> card & 1)

    def locks(self, t: TrumpTables, first: int, card: int) -> bool:
        """Whether ``card`` wins the trick for certain once played (nothing can beat it)."""
        return False

    # ------------------------------------------------------------------ inference
    def exclusions(self, k: Knowledge, t: TrumpTables) -> list[int]:
        """Per seat, cards it cannot hold: for each card it followed with, every class of card (led suit
        beating or not, trump beating or not) whose holding would have made that card illegal.

        Cached per seat between decisions: only the plays that are new since the last call are read.
        """
        plays = []
        for tr, cards in enumerate(k.trick_cards):
            leader = k.trick_leaders[tr]
            if leader is None:
                break
            plays.append(tuple((s, cards[s]) for s in self._order_all(k, leader) if cards[s] is not None))
        old = self._ex_plays
        extends = (bool(old) and self._ex_suit == k.trump_suit and len(old) <= len(plays)
                   and all(plays[i] == old[i] for i in range(len(old) - 1))
                   and plays[len(old) - 1][:len(old[-1])] == old[-1])
        if extends:
            out = list(self._ex_val)
            first_trick = max(0, len(old) - 1)
        else:
            out = [0] * k.n
            first_trick = 0
        profile = self.rules.profile
        for tr in range(first_trick, len(plays)):
            seq = plays[tr]
            seen = len(old[tr]) if extends and tr < len(old) else 1
            cards = [c for _, c in seq]
            win = cards[0]
            led = t.eff_suit_mask[t.eff_suit[win]]
            for i in range(1, len(seq)):
                s, c = seq[i]
                if i >= seen:
                    out[s] |= self._excluded_by(profile, t, led, t.beats[win], c)
                if self.wins_over(t, cards[:i], win, c):
                    win = c
        self._ex_plays, self._ex_val, self._ex_suit = tuple(plays), out, k.trump_suit
        return list(out)

    def _order_all(self, k: Knowledge, leader: int) -> list[int]:
        n, d = k.n, self.rules.direction
        return [(leader + d * i) % n for i in range(n)]

    @staticmethod
    def _excluded_by(profile: TrickProfile, t: TrumpTables, led: int, beats_w: int, card: int) -> int:
        bit = 1 << card
        out = 0
        for cls in (led & beats_w, led & ~beats_w, t.trump_mask & ~led & beats_w, t.trump_mask & ~led & ~beats_w):
            cls &= ~bit
            if not cls:
                continue
            rep = cls & -cls
            if not legal_follow(profile, bit | rep, led, t.trump_mask, beats_w) & bit:
                out |= cls
        return out

    # ------------------------------------------------------------------ valuing cards
    def future_chance(self, v: DealView, card: int, hand: int, opp: Opponents = None) -> float:
        """Chance that ``card``, kept in ``hand``, takes a trick later: as a lead now, a guarded trump
        regaining part of what the higher trumps take, and a low trump the chance of a ruff."""
        p = v.lead_chance(card, opp)
        t = v.t
        if t.trump_mask >> card & 1:
            higher = (t.beats[card] & v.unseen).bit_count()
            if higher and (hand & t.trump_mask & ~t.beats[card] & ~(1 << card)).bit_count() >= higher:
                p += (1.0 - p) * self.guard_value
            if p < 0.9 and (v.k.phase != "play" or self._has_void(v, hand)):
                p += (1.0 - p) * self.ruff_value
        return min(1.0, p) ** self.chance_power

    def _has_void(self, v: DealView, hand: int) -> bool:
        """Whether ``hand`` lacks a side suit that others may still lead (so a trump can ruff it)."""
        voids = v._voids
        out = voids.get(hand)
        if out is None:
            t = v.t
            masks, unseen = t.eff_suit_mask, v.unseen
            out = voids[hand] = any(not (hand & masks[s]) and unseen & masks[s] for s in range(4) if s != t.trump_suit)
        return out

    def card_to_give(self, v: DealView, hand: int, cards: Sequence[int], opp: Opponents = None) -> int:
        """Of ``cards`` (in ``hand``), the one to give up: the least future chance, a side card that is the
        last of its suit a little sooner (the void lets the trumps ruff)."""
        chances = self.hand_chances(v, hand, opp)
        t = v.t

        def key(c: int) -> tuple[float, int]:
            alone = not t.trump_mask >> c & 1 and (hand & t.eff_suit_mask[t.eff_suit[c]]).bit_count() == 1
            return chances[c] - (self.void_bonus if alone else 0.0), c

        return min(cards, key=key)

    def hand_chances(self, v: DealView, hand: int, opp: Opponents = None) -> dict[int, float]:
        """Future chances of the cards of ``hand`` before play, a side card discounted by
        ``side_discount`` (the seats that play come with few side cards and ruff them)."""
        seats, extra = split_opponents(opp, v.opponents)
        key = (hand, seats, extra)
        out = v._hands.get(key)
        if out is None:
            trumps, side = v.t.trump_mask, self.side_discount
            out = v._hands[key] = {c: self.future_chance(v, c, hand, opp) * (1.0 if trumps >> c & 1 else side)
                                   for c in iter_bits(hand)}
        return out

    def draw_chance(self, v: DealView, opp: Opponents = None) -> float:
        """Average future chance of a card drawn blind from the cards this seat has not seen.

        Counted by suit from the ranks still unseen: the j-th best unseen card of a suit has j unseen
        cards above it; a trump also gains what guarding and ruffing give it in this seat's hand.
        """
        seats, extra = split_opponents(opp, v.opponents)
        m = len(seats) + extra
        key = m
        cached = v._draw.get(key)
        if cached is not None:
            return cached
        t = v.t
        unseen = v.unseen
        u = unseen.bit_count()
        n_trumps = (unseen & t.trump_mask).bit_count()
        # The stock is what the hands left: a trump is likelier in a hand (weight stock_weight) than there.
        held = max(0, u - self.stock_left(v.k))
        heavy = u + (self.stock_weight - 1.0) * n_trumps
        in_stock_trump = max(0.0, 1.0 - held * self.stock_weight / heavy) if heavy else 0.0
        in_stock_side = max(0.0, 1.0 - held / heavy) if heavy else 0.0
        sides = tuple(sorted((unseen & t.eff_suit_mask[s]).bit_count() for s in range(4) if s != t.trump_suit))
        trump_sum, side_sum = _draw_total(u, min(u, self.opponent_hand(v)), n_trumps, sides, m,
                                          (v.k.hand & t.trump_mask).bit_count(),
                                          v.k.phase != "play" or self._has_void(v, v.k.hand), self.trump_weight,
                                          self.guard_value, self.ruff_value, self.chance_power, self.side_discount)
        weight = n_trumps * in_stock_trump + (u - n_trumps) * in_stock_side
        total = trump_sum * in_stock_trump + side_sum * in_stock_side
        u = weight
        v._draw[key] = out = total / u if u else 0.0
        return out

    # ------------------------------------------------------------------ play
    def choose_card(self, k: Knowledge, legal: list[int], v: DealView | None = None) -> int:
        """The legal card with the best expected payoff (see the class docstring); :meth:`future_chance`
        is inlined here for speed (it runs for every card kept, for every card that could be played)."""
        v = self.view(k) if v is None else v
        cards = [c for c in legal if c < self.rules.num_cards]
        won = k.tricks_won[k.seat]
        table = self.payoff_table(k, k.seat)
        if k.current_trick and all(table[i] <= table[i + 1] for i in range(won, len(table) - 1)):
            trick, win = v.trick_now
            if not any(self.wins_over(v.t, trick, win, c) for c in cards):
                # The trick is lost whatever is played and more tricks never hurt: keeping the cards
                # most likely to win later is best, so the card least likely to goes (throw the loser).
                return min(cards, key=lambda c: (v.lead_chance(c), self.power(k, c), c))
        deny = self.deny_value(k, v)
        hand = k.hand
        t = v.t
        trumps, beats, unseen = t.trump_mask, t.beats, v.unseen
        guard, ruff, power = self.guard_value, self.ruff_value, self.chance_power
        held = list(iter_bits(hand))
        base = {x: v.lead_chance(x) for x in held}
        higher = {x: (beats[x] & unseen).bit_count() for x in base if trumps >> x & 1}
        best = None
        for c in cards:
            rest = hand & ~(1 << c)
            void = self._has_void(v, rest)
            rest_trumps = rest & trumps
            fs = []
            for x in held:
                if x == c:
                    continue
                p = base[x]
                if trumps >> x & 1:
                    up = higher[x]
                    if up and (rest_trumps & ~beats[x] & ~(1 << x)).bit_count() >= up:
                        p += (1.0 - p) * guard
                    if p < 0.9 and void:
                        p += (1.0 - p) * ruff
                    if p > 1.0:
                        p = 1.0
                fs.append(p if power == 1.0 else p ** power)
            lose_ev = win_ev = 0.0
            for i, q in enumerate(trick_distribution(fs)):
                lose_ev += q * table[won + i]
                win_ev += q * table[won + 1 + i]
            p = v.win_chance(c)
            ev = p * (win_ev + deny) + (1.0 - p) * lose_ev
            key = (round(ev, 9), -self.power(k, c), -c)
            if best is None or key > best[0]:
                best = (key, c)
        return best[1]

    def payoff_table(self, k: Knowledge, seat: int, **kw: Any) -> list[float]:
        """What ending with t tricks is worth to ``seat`` against the field, for every t: its payoff
        (keyword arguments pass through) plus, per trick, ``field_share`` of the trick's usual worth
        spread over the other live seats — a trick this seat takes is one none of them takes."""
        others = max(1, sum(k.live) - 1)
        share = self.field_share * self.trick_unit(k) / others
        return [self.payoff(k, seat, t, **kw) + share * t for t in range(self.rules.num_tricks + 1)]

    @staticmethod
    def _cap(fs: list[float], slots: int) -> list[float]:
        """Keep the ``slots`` best chances (a hand cannot take more tricks than remain)."""
        if len(fs) <= slots:
            return fs
        return sorted(fs, reverse=True)[:max(0, slots)]

    def deny_value(self, k: Knowledge, v: DealView) -> float:
        """What taking the current trick costs the opponent now winning it, against the field."""
        if not k.current_trick or len(v.players) < 2:
            return 0.0
        t = v.t
        cards = [c for _, c in k.current_trick]
        win = self.trick_winner(t, cards)
        who = next(s for s, c in k.current_trick if c == win)
        if who == k.seat:
            return 0.0
        got = k.tricks_won[who]
        loss = self.payoff(k, who, got + 1) - self.payoff(k, who, got)
        # The later, the likelier this trick is his last chance.
        urgency = 1.0 / max(1, v.tricks_left)
        return self.deny_weight * max(0.0, loss - self.trick_unit(k)) * urgency / max(1, k.n - 1)

    def trick_unit(self, k: Knowledge) -> float:
        """What one trick pays in the usual case (the pot share)."""
        return 1.0

    def stock_left(self, k: Knowledge) -> int:
        """Cards never seen that the stock still holds: the deal's stock less every card drawn so far
        (exchange counts are public; a knocking dealer's trump card comes from beside the stock)."""
        dealt = sum(k.live) * self.rules.hand_size + 1
        drawn = sum(x for x in k.exchanged if x is not None)
        if self.knock_draws_trump_card and k.knocked and k.trump_holder is not None and k.exchanged[k.dealer]:
            drawn -= 1
        return max(0, self.rules.num_cards - dealt - drawn)

    # ------------------------------------------------------------------ exchange
    def exchange_plan(self, v: DealView, hand: int, table: Sequence[float], *, limit: int,
                      opp: Opponents = None, draws_done: int = 0, min_throw: int = 0, extra: int = 0,
                      draw_offset: int = 0, slots: int | None = None, fresh: int | None = None
                      ) -> tuple[list[int], float]:
        """The cards of ``hand`` to throw (weakest first) and the expected payoff after the draw.

        ``table[t]`` is what ending with t tricks pays. Throws the k cards with the least future chance,
        for the k in ``min_throw .. limit`` that pays best; each card drawn blind is worth the average
        chance of an unseen card. ``draws_done``: cards already thrown in this exchange; ``extra``: cards
        that join the hand whatever is thrown (a trump card taken); ``draw_offset``: draws fewer than
        cards thrown (the knocker's trump card replaces one); ``slots``: the hand keeps only its best
        ``slots`` cards (a final discard follows); ``fresh``: draws the stock still holds — the rest
        come from the reshuffled discards, the cards others threw, worth ``reshuffle_value`` of a draw.
        """
        full = hand | extra
        chances = self.hand_chances(v, full, opp)
        order = sorted((c for c in iter_bits(hand)), key=lambda c: (chances[c], c))
        fixed = [chances[c] for c in iter_bits(extra)]
        best: tuple[list[int], float] | None = None
        dp = None
        for n_throw in range(min_throw, min(limit, len(order)) + 1):
            throw = order[:n_throw]
            keep = order[n_throw:]
            draws = max(0, draws_done + n_throw - draw_offset)
            if draws and dp is None:
                dp = self.draw_chance(v, opp)
            fresh_draws = draws if fresh is None else min(draws, max(0, fresh))
            fs = [chances[c] for c in keep] + fixed + [dp] * fresh_draws
            if draws > fresh_draws:
                fs += [dp * self.reshuffle_value] * (draws - fresh_draws)
            if slots is not None:
                fs = self._cap(fs, slots)
            ev = expected(table, 0, fs)
            if best is None or ev > best[1] + 1e-9:
                best = (throw, ev)
        if best is None:
            return [], expected(table, 0, self._cap([chances[c] for c in iter_bits(full)], self.rules.num_tricks))
        return best


def pot_payoff(k: Knowledge, seat: int, tricks: int, need: int, num_tricks: int, per_missing_trick: bool) -> float:
    """What ``seat`` gets in a pot game (RULES.md §3.1) for ``tricks`` tricks against a requirement of
    ``need``: a share of the pot per trick, then a bete of the pot per trick short (``per_missing_trick``,
    Mauscheln) or once (Mousel), paid as far as the chips go."""
    pot = k.pot
    gain = pot // num_tricks * tricks
    short = max(0, need - tricks)
    owed = pot * (short if per_missing_trick else min(1, short))
    return gain - min(owed, k.chips[seat] + gain)
