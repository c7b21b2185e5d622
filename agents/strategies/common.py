"""Card sense shared by the scripted strategies of every ruleset.

A *strategy* is the brain of a scripted agent for one ruleset: it is built once
per :class:`~mauscheln_env.engine.Game` (static rules only) and answers one
decision at a time from what the seat knows, read through
:class:`agents.knowledge.KnowledgeReader` (observation + the seat's info). It
never sees an engine state. The registered agents in :mod:`agents.baselines`
pick a strategy from :data:`agents.strategies.STRATEGIES` by ruleset name and
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
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from agents.knowledge import Knowledge, KnowledgeReader
from mauscheln_env.cards import iter_bits
from mauscheln_env.engine import PLAYING_ROLES, Game
from mauscheln_env.tricks import TrumpTables, legal_follow


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
        handler = getattr(self, f"_on_{info.get('phase')}", None) if self._supported else None
        if handler is None:
            return None
        k = self.read(observation, action_mask, info)
        return handler(k, legal)

    def read(self, observation: np.ndarray, action_mask: np.ndarray, info: Any) -> Knowledge:
        return self._reader.read(observation, info, self.seat, action_mask)

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
    cards = [a for a in legal if a < strategy.game.num_cards]
    return strategy.weakest(k, cards)


# ---------------------------------------------------------------------- probability helpers
def miss_all(pool: int, bad: int, hand: int) -> float:
    """Chance that ``hand`` cards drawn at random from ``pool`` avoid ``bad`` given cards."""
    if bad <= 0 or hand <= 0:
        return 1.0
    if pool - bad < hand:
        return 0.0
    p = 1.0
    for i in range(hand):
        p *= (pool - bad - i) / (pool - i)
    return p


def trick_distribution(probs: Sequence[float]) -> list[float]:
    """Distribution of the number of successes of independent trials (Poisson binomial)."""
    dist = [1.0]
    for p in probs:
        q = 1.0 - p
        nxt = [0.0] * (len(dist) + 1)
        for i, x in enumerate(dist):
            nxt[i] += x * q
            nxt[i + 1] += x * p
        dist = nxt
    return dist


def expected(payoff: Callable[[int], float], base: int, probs: Sequence[float], draws: int = 0,
             draw_p: float = 0.0) -> float:
    """E[payoff(base + X)] where X counts successes of ``probs`` plus ``draws`` trials of ``draw_p``."""
    dist = trick_distribution(list(probs) + [draw_p] * draws)
    return sum(p * payoff(base + i) for i, p in enumerate(dist) if p)


class DealView:
    """What one seat knows of a deal, as card sets and chances; built once per decision.

    Everything derives from :class:`Knowledge` (the observation and the info of
    the seat) and the static rules; the expensive facts are computed on first use.
    """

    def __init__(self, strategy: TrickStrategy, k: Knowledge) -> None:
        self.s = strategy
        self.k = k
        self.game = strategy.game
        self.t: TrumpTables = strategy.game.tables[k.trump_suit]
        self.me = k.seat

    # ------------------------------------------------------------------ seats
    @cached_property
    def players(self) -> list[int]:
        """Seats that play (or will play) the tricks of this deal."""
        return [s for s in range(self.k.n) if self.k.roles[s] in PLAYING_ROLES]

    @cached_property
    def opponents(self) -> list[int]:
        return [s for s in self.players if s != self.me]

    def order_from(self, leader: int, seats: Sequence[int]) -> list[int]:
        n, d = self.k.n, self.game.direction
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
    def tricks_left(self) -> int:
        """Tricks still to be won, the one in progress included."""
        return self.game.num_tricks - self.k.tricks_done

    def hand_left(self, seat: int) -> int:
        played = sum(1 for cards in self.k.trick_cards if cards[seat] is not None)
        return self.game.hand_size - played

    # ------------------------------------------------------------------ cards
    @cached_property
    def known(self) -> dict[int, int]:
        """Cards known to lie in another seat's hand: the trump card a seat took and has not played."""
        holder = self.k.trump_holder
        if holder is None or holder == self.me or self.k.played >> self.k.trump_card & 1:
            return {}
        return {holder: 1 << self.k.trump_card}

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
        return self.unseen & ~self.excluded[seat]

    # ------------------------------------------------------------------ chances
    def beat_chance(self, seat: int, win: int, led: int, first: int) -> float:
        """Chance that ``seat`` can beat ``win`` in a trick whose effective led suit is ``led``.

        ``first`` is the card that led the trick (the Muschka ace-of-spades rule looks at it).
        Following the led suit when he can, else ruffing: he beats when he holds a higher card of the
        led suit, or none of that suit and a card that beats from outside it.
        """
        t = self.t
        beaters = self.s.beaters(t, win, first)
        led_mask = t.eff_suit_mask[led]
        known = self.known.get(seat, 0)
        if known & beaters:
            return 1.0
        pool = self.pool(seat)
        u = pool.bit_count()
        h = self.hand_left(seat) - known.bit_count()
        if h <= 0:
            return 0.0
        follow = pool & led_mask
        up = (follow & beaters).bit_count()
        p_follow = 1.0 - miss_all(u, up, h)
        if known & led_mask:
            return p_follow
        void_beat = (pool & beaters & ~led_mask).bit_count()
        if not void_beat:
            return p_follow
        p_void = miss_all(u, follow.bit_count(), h)
        return p_follow + p_void * (1.0 - miss_all(u - follow.bit_count(), void_beat, h))

    def win_chance(self, card: int) -> float:
        """Chance that ``card``, played now, wins the current trick (or the trick it leads)."""
        trick = self.k.current_trick
        t = self.t
        if trick:
            first = trick[0][1]
            win = self.s.trick_winner(t, [c for _, c in trick])
            if not self.s.wins_over(t, [c for _, c in trick], win, card):
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

    def lead_chance(self, card: int, seats: Sequence[int] | None = None) -> float:
        """Chance that ``card`` would win a trick it leads against ``seats`` (default: the other players)."""
        t = self.t
        led = t.eff_suit[card]
        p = 1.0
        for s in (self.opponents if seats is None else seats):
            p *= 1.0 - self.beat_chance(s, card, led, card)
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
    deny_weight: ClassVar[float] = 0.5
    """Weight of an opponent's loss, against the field of n - 1 opponents."""

    def __init__(self, game: Game, *, risk: float = 0.0) -> None:
        super().__init__(game)
        self.risk = float(risk)
        self._ex_plays: tuple = ()
        self._ex_val: list[int] = []
        self._ex_suit = -1

    # ------------------------------------------------------------------ hooks
    def view(self, k: Knowledge) -> DealView:
        return DealView(self, k)

    def read(self, observation: np.ndarray, action_mask: np.ndarray, info: Any) -> Knowledge:
        k = super().read(observation, action_mask, info)
        # The trump suit as the observation states it (a named trump can differ from the turned card's suit).
        suit = np.flatnonzero(self._reader.piece(observation, "trump_suit"))
        if suit.size:
            k.trump_suit = int(suit[0])
        self.info = info
        self.obs = observation
        return k

    def payoff(self, k: Knowledge, seat: int, tricks: int) -> float:
        """What ``seat`` gets for ending the deal with ``tricks`` tricks (chips, or points down)."""
        raise NotImplementedError

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
        profile = self.game.profile
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
        n, d = k.n, self.game.direction
        return [(leader + d * i) % n for i in range(n)]

    @staticmethod
    def _excluded_by(profile: str, t: TrumpTables, led: int, beats_w: int, card: int) -> int:
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
    def future_chance(self, v: DealView, card: int, hand: int, seats: Sequence[int] | None = None) -> float:
        """Chance that ``card``, kept in ``hand``, takes a trick later: as a lead now, a guarded trump
        regaining part of what the higher trumps take, and a low trump the chance of a ruff."""
        p = v.lead_chance(card, seats)
        t = v.t
        if t.trump_mask >> card & 1:
            higher = (t.beats[card] & v.unseen).bit_count()
            lower = (hand & t.trump_mask & ~t.beats[card] & ~(1 << card)).bit_count()
            if higher and lower >= higher:
                p += (1.0 - p) * self.guard_value
            if p < 0.9 and self._has_void(v, hand):
                p += (1.0 - p) * self.ruff_value
        return min(1.0, p)

    def _has_void(self, v: DealView, hand: int) -> bool:
        t = v.t
        side = [s for s in range(4) if s != t.trump_suit]
        return any(not (hand & t.eff_suit_mask[s]) and (v.unseen & t.eff_suit_mask[s]) for s in side)

    def hand_chances(self, v: DealView, hand: int, seats: Sequence[int] | None = None) -> dict[int, float]:
        return {c: self.future_chance(v, c, hand, seats) for c in iter_bits(hand)}

    def draw_chance(self, v: DealView, keep: int, seats: Sequence[int] | None = None) -> float:
        """Average future chance of a card drawn blind from the cards this seat has not seen."""
        pool = v.unseen
        if not pool:
            return 0.0
        total = 0.0
        count = 0
        for c in iter_bits(pool):
            total += self.future_chance(v, c, keep | (1 << c), seats)
            count += 1
        return total / count

    # ------------------------------------------------------------------ play
    def choose_card(self, k: Knowledge, legal: list[int], v: DealView | None = None) -> int:
        v = self.view(k) if v is None else v
        cards = [c for c in legal if c < self.game.num_cards]
        won = k.tricks_won[k.seat]
        pay = lambda x: self.payoff(k, k.seat, x)  # noqa: E731
        deny = self.deny_value(k, v)
        best = None
        for c in cards:
            rest = k.hand & ~(1 << c)
            fs = [self.future_chance(v, x, rest) for x in iter_bits(rest)]
            fs = self._cap(fs, v.tricks_left - 1)
            p = v.win_chance(c)
            win_ev = expected(pay, won + 1, fs)
            lose_ev = expected(pay, won, fs)
            ev = p * (win_ev + deny) + (1.0 - p) * lose_ev
            key = (round(ev, 9), -self.power(k, c), -c)
            if best is None or key > best[0]:
                best = (key, c)
        return best[1]

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

    # ------------------------------------------------------------------ exchange
    def exchange_plan(self, v: DealView, hand: int, draws_done: int, limit: int, payoff: Callable[[int], float],
                      seats: Sequence[int] | None = None, keep_always: int = 0) -> tuple[list[int], float]:
        """The cards to throw (weakest first) and the expected payoff of the hand after the draw.

        Throws the k weakest cards (by future chance) for the k in 0..limit that pays best, each card
        drawn blind worth the average chance of an unseen card.
        """
        chances = self.hand_chances(v, hand, seats)
        order = sorted(chances, key=lambda c: (chances[c], c))
        order = [c for c in order if not keep_always >> c & 1]
        best = None
        for n_throw in range(0, min(limit, len(order)) + 1):
            throw = order[:n_throw]
            keep = hand & ~sum(1 << c for c in throw)
            draws = draws_done + n_throw
            dp = self.draw_chance(v, keep, seats) if draws else 0.0
            fs = [chances[c] for c in iter_bits(keep)]
            ev = expected(payoff, 0, fs, draws, dp)
            if best is None or ev > best[1] + 1e-9:
                best = (throw, ev)
        return best


def pot_share(pot: int, tricks: int) -> int:
    """The pot share of one trick (RULES.md §3.1, §3.3: the pot divided by the number of tricks, rounded down)."""
    return pot // tricks
