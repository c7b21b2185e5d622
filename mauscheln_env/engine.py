"""The pure reference engine: state, legal actions, transitions, settlement.

The engine knows nothing of gymnasium, PettingZoo, tensors or rendering. A
:class:`Game` holds the static tables of one :class:`~mauscheln_env.config.RuleConfig`;
a :class:`State` holds one session (a sequence of deals with the pot carried
over). ``Game.legal_actions(state)`` and ``Game.apply(state, action)`` are the
whole interface a player needs; ``Game.check_invariants(state)`` checks card
and chip conservation and is called by the tests after every step.

Chance is explicit and seeded: every shuffle draws from ``state.rng`` (a
``numpy.random.Generator``), and every deal is recorded as a :class:`DealSpec`,
so a session is replayable from its deals and its action history.

Implemented: ruleset ``mauscheln`` (RULES.md §2.1) with the modern knock
(§2.2), settlement §3.1, insolvency, elimination and session end §3.5.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from mauscheln_env.cards import Deck, iter_bits
from mauscheln_env.config import RuleConfig
from mauscheln_env.errors import DealError, IllegalActionError, SessionOverError
from mauscheln_env.tricks import TrumpTables, build_trump_tables, legal_follow


class Phase(IntEnum):
    """Who is asked what. ``OVER`` is the end of the session."""

    KNOCK = 0
    DECLARE = 1
    GO_WITH = 2
    EXCHANGE = 3
    PLAY = 4
    OVER = 5


class Role(IntEnum):
    """A seat's standing in the current deal."""

    UNDECIDED = 0
    DECLINED = 1  # said "pass" when declaring; still to decide on going with
    MAUSCHLER = 2
    GOER = 3
    OUT = 4  # passed on going with; hand is dead


ROLE_NAMES = {
    Role.UNDECIDED: "undecided",
    Role.DECLINED: "declined",
    Role.MAUSCHLER: "mauschler",
    Role.GOER: "goer",
    Role.OUT: "out",
}
PHASE_NAMES = {
    Phase.KNOCK: "knock",
    Phase.DECLARE: "declare",
    Phase.GO_WITH: "go_with",
    Phase.EXCHANGE: "exchange",
    Phase.PLAY: "play",
    Phase.OVER: "over",
}


@dataclass(frozen=True)
class DealSpec:
    """A deal in full: every hand (by seat), the trump card and the stock, top card first.

    Seats that are not dealt in (eliminated) have an empty hand.
    """

    hands: tuple[tuple[int, ...], ...]
    trump: int
    stock: tuple[int, ...]


@dataclass
class DealResult:
    """How a deal ended and what it paid.

    ``kind`` is ``"settled"`` (tricks were played), ``"no_play"`` (nobody went
    with; the mauschler took the pot) or ``"throw_in"`` (nobody declared).
    ``deltas`` are chip changes by seat over the whole deal, ante included.
    """

    kind: str
    dealer: int
    pot_before: int
    """The pot P when settlement started (after the ante)."""
    pot_after: int
    deltas: list[int]
    tricks: list[int]
    credits: list[int] = field(default_factory=list)
    debits: list[int] = field(default_factory=list)
    mauschler: int | None = None


class State:
    """One session. Mutable; use :meth:`Game.clone` to branch.

    Card sets are bit masks over the deck. The stock is a list with its top
    card at the **end** (so drawing is ``pop()``).
    """

    __slots__ = (
        "n", "rng", "chips", "pot", "total", "alive", "dealer", "deals_settled", "deals_started",
        "throw_in_streak", "phase", "to_act", "queue", "qpos", "hands", "seen", "blind",
        "discards", "drawn", "dead", "discard_pile", "stock", "trump_card", "trump_suit",
        "trump_holder", "tables", "knocked", "roles", "mauschler", "exchanged", "marked",
        "xcap", "xmin", "participants", "next_player", "trick", "tricks", "leader", "win_seat",
        "win_card", "led_suit", "tricks_won", "deal_start_chips", "deal_start_pot", "truncated",
        "history", "deals", "results",
    )

    def __init__(self, n: int, rng: np.random.Generator) -> None:
        self.n = n
        self.rng = rng
        self.chips: list[int] = []
        self.pot = 0
        self.total = 0
        self.alive: list[bool] = [True] * n
        self.dealer = 0
        self.deals_settled = 0
        self.deals_started = 0
        self.throw_in_streak = 0
        self.phase = Phase.DECLARE
        self.to_act: int | None = None
        self.queue: list[int] = []
        self.qpos = 0
        self.hands = [0] * n
        self.seen = [True] * n
        self.blind = [0] * n
        self.discards = [0] * n
        self.drawn = [0] * n
        self.dead = 0
        self.discard_pile = 0
        self.stock: list[int] = []
        self.trump_card = 0
        self.trump_suit = 0
        self.trump_holder: int | None = None
        self.tables: TrumpTables | None = None
        self.knocked: bool | None = None
        self.roles = [Role.UNDECIDED] * n
        self.mauschler: int | None = None
        self.exchanged: list[int | None] = [None] * n
        self.marked = 0
        self.xcap = 0
        self.xmin = 0
        self.participants: list[int] = []
        self.next_player: list[int] = [0] * n
        self.trick: list[tuple[int, int]] = []
        self.tricks: list[list[tuple[int, int]]] = []
        self.leader: int | None = None
        self.win_seat = 0
        self.win_card = 0
        self.led_suit = 0
        self.tricks_won = [0] * n
        self.deal_start_chips: list[int] = []
        self.deal_start_pot = 0
        self.truncated = False
        self.history: list[int] = []
        self.deals: list[DealSpec] = []
        self.results: list[DealResult] = []

    @property
    def over(self) -> bool:
        return self.phase is Phase.OVER


class Game:
    """Static tables and the rules of one configuration."""

    def __init__(self, config: RuleConfig) -> None:
        self.config = config
        spec = config.spec
        self.deck: Deck = config.deck
        self.n = config.num_players
        self.num_cards = len(self.deck)
        self.hand_size = spec.hand_size
        self.num_tricks = config.num_tricks
        self.direction = spec.direction
        self.profile = spec.trick_profile
        self.named_actions = spec.named_actions
        self.num_actions = config.num_actions
        self.action_ids = {name: self.num_cards + i for i, name in enumerate(spec.named_actions)}
        self._action_strings = list(self.deck.codes) + list(spec.named_actions)
        self.stake = config.stake
        self.knock_option = config.knock
        self.knock_max_pos = spec.rank_order.index(config.knock_min_rank)
        self.rank_pos = tuple(spec.rank_order.index(code[0]) for code in self.deck.codes)
        self.tables = tuple(build_trump_tables(self.deck, spec.rank_order, s) for s in range(4))
        a = self.action_ids
        self.KNOCK, self.NO_KNOCK = a["knock"], a["no_knock"]
        self.MAUSCHELN, self.PASS, self.GO, self.DONE = a["mauscheln"], a["pass"], a["go"], a["done"]

    # ------------------------------------------------------------------ actions
    def action_to_str(self, action: int) -> str:
        if not isinstance(action, (int, np.integer)) or not 0 <= action < self.num_actions:
            raise IllegalActionError(f"action {action!r} is not an action id; allowed: 0..{self.num_actions - 1}")
        return self._action_strings[int(action)]

    def action_from_str(self, text: str) -> int:
        if not isinstance(text, str):
            raise IllegalActionError(f"an action string is expected, got {text!r}")
        key = text.strip()
        if key.lower() in self.action_ids:
            return self.action_ids[key.lower()]
        if key.upper() in self.deck.index:
            return self.deck.index[key.upper()]
        raise IllegalActionError(
            f"unknown action {text!r}; allowed: a card code of this deck or one of {', '.join(self.named_actions)}"
        )

    # ------------------------------------------------------------------ seats
    def succ(self, state: State, seat: int) -> int:
        """The next seat in the ruleset's direction that is still in the session."""
        n, d, alive = self.n, self.direction, state.alive
        s = (seat + d) % n
        while not alive[s]:
            s = (s + d) % n
        return s

    def order_from(self, state: State, seat: int) -> list[int]:
        """Live seats in order from ``seat`` (``seat`` first if it is live)."""
        n, d = self.n, self.direction
        return [(seat + d * k) % n for k in range(n) if state.alive[(seat + d * k) % n]]

    # ------------------------------------------------------------------ sessions
    def new_session(
        self,
        rng: np.random.Generator,
        *,
        dealer: int | None = None,
        chips: list[int] | None = None,
        pot: int = 0,
        deal: DealSpec | dict | None = None,
    ) -> State:
        """Start a session: first dealer antes, first deal is dealt.

        ``dealer`` defaults to a draw from ``rng``; ``chips`` to the bankroll;
        ``deal`` fixes the first deal: a complete :class:`DealSpec`, or a dict
        with any of ``hands`` ({seat: [card ids]}), ``trump`` and ``stock`` (top
        first) that :meth:`fill_deal` completes from the seeded shuffle.
        """
        n = self.n
        state = State(n, rng)
        state.chips = list(chips) if chips is not None else [self.config.bankroll] * n
        state.pot = pot
        state.total = sum(state.chips) + pot
        state.dealer = int(rng.integers(n)) if dealer is None else dealer
        if isinstance(deal, dict):
            deal = deal["spec"] if "spec" in deal else self.fill_deal(state, state.dealer, **deal)
        self._start_deal(state, deal)
        return state

    def clone(self, state: State) -> State:
        return copy.deepcopy(state)

    def deal_from_deck(self, state: State, order: list[int] | tuple[int, ...], dealer: int) -> DealSpec:
        """Deal a deck order (top card first) by the ruleset's pattern (RULES.md §1.5)."""
        seats = self.order_from(state, self.succ(state, dealer))
        hands: list[list[int]] = [[] for _ in range(self.n)]
        pos = 0
        trump = -1
        for step in self.config.spec.deal_pattern:
            if step == "T":
                trump = order[pos]
                pos += 1
            else:
                for s in seats:
                    hands[s].extend(order[pos:pos + step])
                    pos += step
        return DealSpec(tuple(tuple(h) for h in hands), trump, tuple(order[pos:]))

    def fill_deal(self, state: State, dealer: int, hands: dict[int, list[int]] | None = None,
                  trump: int | None = None, stock: list[int] | None = None) -> DealSpec:
        """Complete a partly fixed deal from a seeded shuffle of the remaining cards.

        Validates the fixed parts and raises :class:`DealError` naming what is wrong.
        """
        hands = dict(hands or {})
        stock = list(stock or [])
        seen: dict[int, str] = {}

        def claim(card: int, where: str) -> None:
            if card in seen:
                raise DealError(f"card {self.deck.codes[card]} appears twice in the deal ({seen[card]} and {where})")
            seen[card] = where

        for seat, cards in hands.items():
            if not state.alive[seat]:
                raise DealError(f"seat {seat} has no chips and is not dealt in")
            if len(cards) != self.hand_size:
                raise DealError(
                    f"hand of seat {seat} has {len(cards)} cards; a hand in {self.config.ruleset} has {self.hand_size}"
                )
            for c in cards:
                claim(c, f"hand of seat {seat}")
        if trump is not None:
            claim(trump, "trump")
        for c in stock:
            claim(c, "stock")
        dealt = [s for s in range(self.n) if state.alive[s]]
        needed = self.hand_size * len(dealt) + 1
        if len(stock) > self.num_cards - needed:
            raise DealError(
                f"stock of {len(stock)} cards is too long: {self.num_cards} cards minus {needed} dealt "
                f"leaves at most {self.num_cards - needed}"
            )
        rest = [c for c in range(self.num_cards) if c not in seen]
        rest = [rest[i] for i in state.rng.permutation(len(rest))]
        full_hands: list[tuple[int, ...]] = [()] * self.n
        for s in self.order_from(state, self.succ(state, dealer)):
            if s in hands:
                full_hands[s] = tuple(hands[s])
            else:
                full_hands[s] = tuple(rest[: self.hand_size])
                del rest[: self.hand_size]
        if trump is None:
            trump = rest.pop(0)
        return DealSpec(tuple(full_hands), trump, tuple(stock + rest))

    def _start_deal(self, state: State, deal: DealSpec | None = None) -> None:
        n = self.n
        state.deals_started += 1
        state.deal_start_chips = list(state.chips)
        dealer = state.dealer
        ante = min(self.stake, state.chips[dealer])
        state.chips[dealer] -= ante
        state.pot += ante
        state.deal_start_pot = state.pot - ante
        if deal is None:
            order = state.rng.permutation(self.num_cards).tolist()
            deal = self.deal_from_deck(state, order, dealer)
        state.deals.append(deal)
        hands = [0] * n
        for s, cards in enumerate(deal.hands):
            for c in cards:
                hands[s] |= 1 << c
        state.hands = hands
        state.seen = [True] * n
        state.blind = [0] * n
        state.discards = [0] * n
        state.drawn = [0] * n
        state.dead = 0
        state.discard_pile = 0
        state.stock = list(reversed(deal.stock))
        state.trump_card = deal.trump
        state.trump_suit = self.deck.suit[deal.trump]
        state.tables = self.tables[state.trump_suit]
        state.trump_holder = None
        state.knocked = None
        state.roles = [Role.UNDECIDED] * n
        state.mauschler = None
        state.exchanged = [None] * n
        state.marked = 0
        state.participants = []
        state.trick = []
        state.tricks = []
        state.leader = None
        state.tricks_won = [0] * n
        if self.knock_option and self.rank_pos[deal.trump] <= self.knock_max_pos:
            state.seen[dealer] = False  # the knock decision is blind
            self._ask(state, Phase.KNOCK, [dealer])
        else:
            self._ask(state, Phase.DECLARE, self.order_from(state, self.succ(state, dealer)))

    def _ask(self, state: State, phase: Phase, queue: list[int]) -> None:
        state.phase = phase
        state.queue = queue
        state.qpos = 0
        state.to_act = queue[0]

    # ------------------------------------------------------------------ legality
    def legal_actions(self, state: State) -> list[int]:
        """Legal action ids for the seat to act, in increasing order (empty when over)."""
        phase = state.phase
        if phase is Phase.PLAY:
            return list(iter_bits(self.legal_play_mask(state)))
        if phase is Phase.EXCHANGE:
            seat = state.to_act
            acts = list(iter_bits(state.hands[seat])) if state.marked < state.xcap else []
            if state.marked >= state.xmin:
                acts.append(self.DONE)
            return acts
        if phase is Phase.DECLARE:
            return [self.MAUSCHELN, self.PASS]
        if phase is Phase.GO_WITH:
            return [self.PASS, self.GO]
        if phase is Phase.KNOCK:
            return [self.KNOCK, self.NO_KNOCK]
        return []

    def legal_play_mask(self, state: State) -> int:
        hand = state.hands[state.to_act]
        if not state.trick:
            return hand
        t = state.tables
        return legal_follow(self.profile, hand, t.eff_suit_mask[state.led_suit], t.trump_mask, t.beats[state.win_card])

    def is_legal(self, state: State, action: int) -> bool:
        phase = state.phase
        if phase is Phase.PLAY:
            return 0 <= action < self.num_cards and bool(self.legal_play_mask(state) >> action & 1)
        return action in self.legal_actions(state)

    # ------------------------------------------------------------------ transitions
    def apply(self, state: State, action: int) -> list[DealResult]:
        """Apply the acting seat's action. Returns the deals that ended (usually none).

        Raises :class:`IllegalActionError` (state unchanged) for an action outside
        the legal set, :class:`SessionOverError` once the session is over.
        """
        if state.phase is Phase.OVER:
            raise SessionOverError("the session is over; start a new one (reset) before stepping")
        action = int(action)
        if not self.is_legal(state, action):
            legal = ", ".join(self._action_strings[a] for a in self.legal_actions(state))
            shown = self._action_strings[action] if 0 <= action < self.num_actions else repr(action)
            raise IllegalActionError(
                f"action {shown} is not legal for seat {state.to_act} in phase "
                f"{PHASE_NAMES[state.phase]}; legal: {legal}"
            )
        state.history.append(action)
        results: list[DealResult] = []
        phase = state.phase
        seat = state.to_act
        if phase is Phase.PLAY:
            self._play(state, seat, action, results)
        elif phase is Phase.EXCHANGE:
            if action == self.DONE:
                self._finish_exchange(state, seat)
            else:
                bit = 1 << action
                state.hands[seat] ^= bit
                state.discards[seat] |= bit
                state.discard_pile |= bit
                state.marked += 1
        elif phase is Phase.DECLARE:
            if action == self.MAUSCHELN:
                self._become_mauschler(state, seat)
            else:
                state.roles[seat] = Role.DECLINED
                if not self._advance(state):
                    results.append(self._throw_in(state))
        elif phase is Phase.GO_WITH:
            if action == self.GO:
                state.roles[seat] = Role.GOER
            else:
                state.roles[seat] = Role.OUT
                state.dead |= state.hands[seat]
                state.hands[seat] = 0
            if not self._advance(state):
                self._after_go_with(state, results)
        elif phase is Phase.KNOCK:
            if action == self.KNOCK:
                state.knocked = True
                self._become_mauschler(state, seat)
            else:
                state.knocked = False
                state.seen[seat] = True
                self._ask(state, Phase.DECLARE, self.order_from(state, self.succ(state, state.dealer)))
        return results

    def _advance(self, state: State) -> bool:
        """Move to the next seat in the queue; False when the queue is exhausted."""
        state.qpos += 1
        if state.qpos < len(state.queue):
            state.to_act = state.queue[state.qpos]
            return True
        return False

    def _become_mauschler(self, state: State, seat: int) -> None:
        state.mauschler = seat
        state.roles[seat] = Role.MAUSCHLER
        self._ask(state, Phase.GO_WITH, self.order_from(state, self.succ(state, seat))[:-1])

    def _after_go_with(self, state: State, results: list[DealResult]) -> None:
        m = state.mauschler
        goers = [s for s in self.order_from(state, self.succ(state, m)) if state.roles[s] is Role.GOER]
        if not goers:
            results.append(self._settle_no_play(state, m))
            return
        state.participants = sorted([m, *goers])
        self._start_exchange(state, [m, *goers])

    def _start_exchange(self, state: State, order: list[int]) -> None:
        self._ask(state, Phase.EXCHANGE, order)
        self._open_exchange(state)

    def _open_exchange(self, state: State) -> None:
        seat = state.to_act
        state.marked = 0
        if state.knocked and seat == state.dealer:
            state.seen[seat] = True  # he now looks at his hand
            state.xmin = 1
            state.xcap = min(self.hand_size, len(state.stock) + 1)
        else:
            state.xmin = 0
            state.xcap = min(self.hand_size, len(state.stock))

    def _finish_exchange(self, state: State, seat: int) -> None:
        k = state.marked
        state.exchanged[seat] = k
        stock = state.stock
        if state.knocked and seat == state.dealer:
            bit = 1 << state.trump_card
            state.trump_holder = seat
            state.hands[seat] |= bit
            state.drawn[seat] |= bit
            blind = 0
            for _ in range(k - 1):
                blind |= 1 << stock.pop()
            state.hands[seat] |= blind
            state.drawn[seat] |= blind
            state.blind[seat] = blind
        else:
            got = 0
            for _ in range(k):
                got |= 1 << stock.pop()
            state.hands[seat] |= got
            state.drawn[seat] |= got
        if self._advance(state):
            self._open_exchange(state)
            return
        for s in range(self.n):
            state.blind[s] = 0  # every goer has exchanged: the knocker sees his cards
        self._start_play(state)

    def _start_play(self, state: State) -> None:
        parts = state.participants
        order = sorted(parts, key=lambda s: ((s - parts[0]) * self.direction) % self.n)
        for i, s in enumerate(order):
            state.next_player[s] = order[(i + 1) % len(order)]
        state.leader = state.mauschler
        state.phase = Phase.PLAY
        state.queue = []
        state.qpos = 0
        state.to_act = state.mauschler
        state.trick = []

    def _play(self, state: State, seat: int, card: int, results: list[DealResult]) -> None:
        state.hands[seat] ^= 1 << card
        trick = state.trick
        t = state.tables
        if not trick:
            state.led_suit = t.eff_suit[card]
            state.win_card = card
            state.win_seat = seat
        elif t.beats[state.win_card] >> card & 1:
            state.win_card = card
            state.win_seat = seat
        trick.append((seat, card))
        if len(trick) < len(state.participants):
            state.to_act = state.next_player[seat]
            return
        winner = state.win_seat
        state.tricks_won[winner] += 1
        state.tricks.append(trick)
        state.trick = []
        state.leader = winner
        state.to_act = winner
        if len(state.tricks) == self.num_tricks:
            results.append(self._settle_tricks(state))

    # ------------------------------------------------------------------ settlement
    def _settle_tricks(self, state: State) -> DealResult:
        """RULES.md §3.1: credits ⌊P/k⌋ per trick, then bêtes of P per missing trick."""
        n = self.n
        pot = state.pot
        v = pot // self.num_tricks
        credits = [0] * n
        debits = [0] * n
        for s in state.participants:
            credits[s] = state.tricks_won[s] * v
            state.chips[s] += credits[s]
            state.pot -= credits[s]
        for s in state.participants:
            need = 2 if state.roles[s] is Role.MAUSCHLER else 1
            owed = pot * max(0, need - state.tricks_won[s])
            paid = min(owed, state.chips[s])
            debits[s] = paid
            state.chips[s] -= paid
            state.pot += paid
        result = self._result(state, "settled", pot, credits, debits)
        state.deals_settled += 1
        state.throw_in_streak = 0
        self._next_deal(state)
        return result

    def _settle_no_play(self, state: State, seat: int) -> DealResult:
        pot = state.pot
        credits = [0] * self.n
        credits[seat] = pot
        state.chips[seat] += pot
        state.pot = 0
        result = self._result(state, "no_play", pot, credits, [0] * self.n)
        state.deals_settled += 1
        state.throw_in_streak = 0
        self._next_deal(state)
        return result

    def _throw_in(self, state: State) -> DealResult:
        result = self._result(state, "throw_in", state.pot, [0] * self.n, [0] * self.n)
        state.throw_in_streak += 1
        self._next_deal(state)
        return result

    def _result(self, state: State, kind: str, pot: int, credits: list[int], debits: list[int]) -> DealResult:
        result = DealResult(
            kind=kind,
            dealer=state.dealer,
            pot_before=pot,
            pot_after=state.pot,
            deltas=[state.chips[s] - state.deal_start_chips[s] for s in range(self.n)],
            tricks=list(state.tricks_won),
            credits=credits,
            debits=debits,
            mauschler=state.mauschler,
        )
        state.results.append(result)
        return result

    def _next_deal(self, state: State) -> None:
        """RULES.md §3.5: eliminate seats at 0 chips, end or rotate the deal."""
        for s in range(self.n):
            if state.alive[s] and state.chips[s] <= 0:
                state.alive[s] = False
        max_deals = self.config.max_deals
        if sum(state.alive) < 3 or (max_deals is not None and state.deals_settled >= max_deals):
            self._end_session(state)
            return
        if state.throw_in_streak >= self.config.max_throw_ins:
            state.truncated = True
            self._end_session(state)
            return
        state.dealer = self.succ(state, state.dealer)
        self._start_deal(state)

    def _end_session(self, state: State) -> None:
        state.phase = Phase.OVER
        state.to_act = None
        state.queue = []

    # ------------------------------------------------------------------ views
    def visible_hand(self, state: State, seat: int) -> int:
        """The cards of ``seat``'s hand that seat has seen (blind knock cards excluded)."""
        if not state.seen[seat]:
            return 0
        return state.hands[seat] & ~state.blind[seat]

    def check_invariants(self, state: State) -> None:
        """Raise :class:`RuntimeError` naming every inconsistency in ``state``.

        Checks: every card in exactly one place; chips + pot constant; hand sizes;
        the acting seat is live; no negative chips.
        """
        problems: list[str] = []
        places: list[tuple[str, int]] = [(f"hand {s}", h) for s, h in enumerate(state.hands)]
        places.append(("stock", sum(1 << c for c in state.stock)))
        if len(set(state.stock)) != len(state.stock):
            problems.append("stock holds a card twice")
        if state.trump_holder is None:
            places.append(("trump card", 1 << state.trump_card))
        places.append(("discards", state.discard_pile))
        places.append(("dead", state.dead))
        played = 0
        for trick in [*state.tricks, state.trick]:
            for _, c in trick:
                if played >> c & 1:
                    problems.append(f"card {self.deck.codes[c]} played twice")
                played |= 1 << c
        places.append(("played", played))
        union = 0
        for name, mask in places:
            if union & mask:
                problems.append(f"{name} shares cards {self.deck.codes_of(union & mask)} with another place")
            union |= mask
        if union != self.deck.full_mask:
            problems.append(f"cards missing from every place: {self.deck.codes_of(self.deck.full_mask & ~union)}")
        if state.phase is not Phase.OVER and (state.to_act is None or not state.alive[state.to_act]):
            problems.append(f"seat to act {state.to_act} is not live")
        if state.phase is Phase.PLAY:
            done = len(state.tricks)
            for s in state.participants:
                played_now = any(p == s for p, _ in state.trick)
                expected = self.hand_size - done - played_now
                if state.hands[s].bit_count() != expected:
                    problems.append(f"seat {s} holds {state.hands[s].bit_count()} cards, expected {expected}")
            if state.tricks and not state.trick and state.to_act != state.leader:
                problems.append("the trick winner does not lead")
        if sum(state.chips) + state.pot != state.total:
            problems.append(f"chips {sum(state.chips)} + pot {state.pot} != {state.total}")
        if any(c < 0 for c in state.chips) or state.pot < 0:
            problems.append(f"negative chips or pot: {state.chips}, pot {state.pot}")
        if problems:
            raise RuntimeError("invariant violated: " + "; ".join(problems))
