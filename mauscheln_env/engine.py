"""The pure reference engine: state, legal actions, transitions, settlement.

The engine knows nothing of gymnasium, PettingZoo, tensors or rendering. A
:class:`Game` holds the static tables of one :class:`~mauscheln_env.config.RuleConfig`;
a :class:`State` holds one session (a sequence of deals with the pot carried
over). ``Game.legal_actions(state)`` and ``Game.apply(state, action)`` are the
whole interface a player needs; ``Game.check_invariants(state)`` checks card,
chip and score conservation and is called by the tests after every step.

One state machine serves every ruleset of RULES.md. The ruleset's spec selects
the pieces: the bidding style (declare and go with; Mousel's in/out; Mouche's
stay/pass/exchange), the scoring (a bete per missing trick; a flat bete; the
mouche; Muschka's points), the trick profile and the stock-shortage policy.
Options (knock, Vierling, Belli, Weli, compulsions, cap, pushing, queue,
Pamphile, Béatrix, ...) switch single steps on.

Chance is explicit and seeded: every shuffle draws from ``state.rng`` (a
``numpy.random.Generator``), and every deal is recorded as a :class:`DealSpec`,
so a session is replayable from its deals and its action history.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from mauscheln_env.cards import SUITS, Deck, iter_bits
from mauscheln_env.config import RuleConfig
from mauscheln_env.errors import DealError, IllegalActionError, SessionOverError
from mauscheln_env.tricks import TrumpTables, build_trump_tables, legal_follow


class Phase(IntEnum):
    """Who is asked what. ``OVER`` is the end of the session.

    The values are stable identifiers; a ruleset's observation one-hot follows
    the order of its spec's ``phases``.
    """

    KNOCK = 0
    DECLARE = 1
    GO_WITH = 2
    EXCHANGE = 3
    PLAY = 4
    OVER = 5
    OFFER = 6  # classic with schieben: deal or push
    DECIDE = 7  # mouche, muschka: stay, pass or start an exchange
    NAME_TRUMP = 8  # mouche with Pamphile turned up: the dealer names trump
    ANNOUNCE = 9  # mouche with Pamphile: its holder announces it or not
    SWAP = 10  # mouche with Béatrix: the dealer picks the card he gives for the trump card


class Role(IntEnum):
    """A seat's standing in the current deal."""

    UNDECIDED = 0
    DECLINED = 1  # said "pass" when declaring; still to decide on going with
    MAUSCHLER = 2
    GOER = 3
    OUT = 4  # passed: hand is dead
    IN = 5  # mousel
    COMMITTED = 6  # mousel: needs two tricks
    STAYED = 7  # mouche, muschka: kept the dealt hand
    EXCHANGED = 8  # mouche, muschka: exchanged and plays


ROLE_NAMES = {r: r.name.lower() for r in Role}
PHASE_NAMES = {p: p.name.lower() for p in Phase}
PLAYING_ROLES = frozenset({Role.MAUSCHLER, Role.GOER, Role.IN, Role.COMMITTED, Role.STAYED, Role.EXCHANGED})
POINTS = {"A": 10, "K": 10, "Q": 10, "J": 10, "T": 10}
"""Mouche hand points: A, K, Q, J (and the ten, by pip value) count 10, others their pip value."""


class XKind(IntEnum):
    """What a seat's exchange does at ``done``."""

    NORMAL = 0  # draw |D| from the stock
    MODERN_KNOCK = 1  # take the trump card plus |D|-1 blind cards (RULES.md §2.2)
    CLASSIC_BLIND = 2  # classic 4b: draw |D| blind
    CLASSIC_FINAL = 3  # classic 4d / forced knock: discard exactly 1, take the trump card
    DECIDE = 4  # mouche, muschka: an exchange chosen while deciding; back to deciding after


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

    ``kind``: ``settled`` (tricks were played), ``no_play`` (one seat took the
    pot without play), ``mouche`` (a mouche hand won), ``throw_in`` (nobody
    declared; a pass round). ``deltas`` are the rewards by seat over the whole
    deal: chip changes (ante included) or, in muschka, the decrease of the score.
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
    """The seat that declared, knocked or committed; the lone seat or the mouche winner."""
    scores: list[int] | None = None


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
        # rule family
        "reserve", "escrow", "scores", "start_scores", "trump_face_up", "revealed", "belli_owed",
        "pushes", "offer_seat", "new_pot", "xkinds", "dealt", "swapped", "announced",
        "as_holder", "trick_locked", "rounds_target", "pot_was_empty", "announce_asked", "pending_deal", "undealt",
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
        self.reserve = 0
        self.escrow: list[int] = []
        """Mouche queue: the items waiting to enter the pot, oldest first."""
        self.scores: list[int] = [0] * n
        self.start_scores: list[int] = [0] * n
        self.trump_face_up = True
        self.revealed = 0
        """Cards shown to everyone (Vierling quartets)."""
        self.belli_owed: list[tuple[int, int | None]] = []
        """Belli penalties due at settlement: (payer, receiver or None for the pot)."""
        self.pushes = 0
        self.offer_seat: int | None = None
        self.new_pot = False
        self.xkinds: list[XKind] = []
        self.dealt = [0] * n
        self.swapped = False
        self.announced: int | None = None
        self.as_holder: int | None = None
        self.trick_locked = False
        self.rounds_target: int | None = None
        self.pot_was_empty = False
        self.announce_asked = False
        self.pending_deal: DealSpec | None = None
        self.undealt = False
        """True while the pack is not dealt (the classic offer to deal or push)."""

    @property
    def over(self) -> bool:
        return self.phase is Phase.OVER


class Game:
    """Static tables and the rules of one configuration."""

    def __init__(self, config: RuleConfig) -> None:
        self.config = config
        spec = config.spec
        opts = config.options
        self.spec = spec
        self.ruleset = spec.name
        self.deck: Deck = config.deck
        self.n = config.num_players
        self.num_cards = len(self.deck)
        self.hand_size = spec.hand_size
        self.num_tricks = config.num_tricks
        self.direction = spec.direction
        self.profile = spec.trick_profile
        self.bidding = spec.bidding
        self.scoring = spec.scoring
        self.stock_policy = spec.stock_policy
        self.named_actions = spec.named_actions
        self.num_actions = config.num_actions
        self.action_ids = {name: self.num_cards + i for i, name in enumerate(spec.named_actions)}
        self._action_strings = list(self.deck.codes) + list(spec.named_actions)
        self.stake = opts.get("stake", 0)
        self.knock_option = bool(opts.get("knock", False))
        self.knock_max_pos = spec.rank_order.index(opts.get("knock_min_rank", "A"))
        self.rank_pos = tuple(spec.rank_order.index(code[0]) for code in self.deck.codes)
        self.deal_pattern = spec.deal_pattern
        if opts.get("deal_2_3"):
            self.deal_pattern = (2, 3, "T")
        self.vierling = bool(opts.get("vierling", False))
        self.belli = opts.get("belli")
        self.belli_penalty_to_ace = opts.get("belli_penalty") == "ace"
        self.weli = bool(opts.get("weli", False))
        self.cap = opts.get("cap")
        self.mauschelzwang = bool(opts.get("mauschelzwang", False))
        self.mitgehzwang = bool(opts.get("mitgehzwang", False))
        self.forced_knock = bool(opts.get("forced_knock_new_pot", False))
        self.schieben = bool(opts.get("schieben", False))
        self.volunteer_leader = bool(opts.get("volunteer_leader", False))
        self.exchange_limit = opts.get("exchange_limit", self.hand_size)
        self.queue_option = bool(opts.get("queue", False))
        self.queue_largest = opts.get("queue_order") == "largest"
        self.collect_1730 = bool(opts.get("collect_1730", True))
        self.mery_cap = opts.get("mery_cap")
        self.pamphile = bool(opts.get("pamphile", False))
        self.pamphile_wild = bool(opts.get("pamphile_wild", False))
        self.pamphile_bonus = self.pamphile and bool(opts.get("pamphile_bonus", True))
        self.beatrix = bool(opts.get("beatrix", False))
        self.rounds = opts.get("rounds")
        self.start_score = opts.get("start_score", 0)
        self.jc = self.deck.index.get("JC")
        self.as_card = self.deck.index.get("AS")
        self.tables = tuple(self._build_tables(s) for s in range(4))
        self.trump_ace = tuple(self.deck.index.get("A" + SUITS[s]) for s in range(4))
        self.belli_card = tuple(self._belli_card(s) for s in range(4))
        a = self.action_ids
        self.KNOCK, self.NO_KNOCK = a.get("knock"), a.get("no_knock")
        self.MAUSCHELN, self.PASS, self.GO, self.DONE = a.get("mauscheln"), a.get("pass"), a.get("go"), a.get("done")
        self.IN, self.IN_LEAD, self.OUT = a.get("in"), a.get("in_lead"), a.get("out")
        self.STAY, self.DEAL, self.PUSH = a.get("stay"), a.get("deal"), a.get("push")
        self.ANNOUNCE, self.SILENT, self.SWAP = a.get("announce"), a.get("silent"), a.get("swap")
        self.TRUMP_BY_SUIT = tuple(a.get(f"trump:{s}") for s in SUITS)

    def _belli_card(self, trump_suit: int) -> int | None:
        if self.weli:
            return self.deck.index["6D"]
        if self.belli == "7D":
            return self.deck.index["7D"]
        if self.belli == "trump7":
            return self.deck.index["7" + SUITS[trump_suit]]
        return None

    def _build_tables(self, trump_suit: int) -> TrumpTables:
        """Trump tables with this ruleset's permanent trumps (RULES.md §1.3)."""
        deck, order = self.deck, self.spec.rank_order
        suit_cards = sorted(
            (c for c in range(len(deck)) if deck.suit[c] == trump_suit), key=lambda c: order.index(deck.codes[c][0])
        )
        permanent = 0
        special = self._belli_card(trump_suit)
        if special is not None:
            # Belli / Weli: always a trump, directly below the trump ace.
            permanent |= 1 << special
            rest = [c for c in suit_cards if c != special]
            ace = deck.index.get("A" + SUITS[trump_suit])
            top = [ace] if ace in rest else []
            trump_order = tuple(top + [special] + [c for c in rest if c not in top])
        elif self.pamphile and self.jc is not None:
            permanent |= 1 << self.jc
            trump_order = tuple([self.jc] + [c for c in suit_cards if c != self.jc])
        else:
            trump_order = tuple(suit_cards)
        return build_trump_tables(deck, order, trump_suit, permanent, trump_order)

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
        if key.startswith("trump:") and "trump:" + key[6:].upper() in self.action_ids:
            return self.action_ids["trump:" + key[6:].upper()]
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

    def forehand(self, state: State) -> int:
        return self.succ(state, state.dealer)

    # ------------------------------------------------------------------ sessions
    def new_session(
        self,
        rng: np.random.Generator,
        *,
        dealer: int | None = None,
        chips: list[int] | None = None,
        scores: list[int] | None = None,
        pot: int = 0,
        deal: DealSpec | dict | None = None,
    ) -> State:
        """Start a session: first dealer antes, first deal is dealt.

        ``dealer`` defaults to a draw from ``rng``; ``chips`` to the bankroll
        (``scores`` to the start score in muschka); ``deal`` fixes the first
        deal: a complete :class:`DealSpec`, or a dict with any of ``hands``
        ({seat: [card ids]}), ``trump`` and ``stock`` (top first) that
        :meth:`fill_deal` completes from the seeded shuffle.
        """
        n = self.n
        state = State(n, rng)
        if self.scoring == "points":
            state.chips = [0] * n
            state.scores = list(scores) if scores is not None else [self.start_score] * n
            state.start_scores = list(state.scores)
        else:
            state.chips = list(chips) if chips is not None else [self.config.bankroll] * n
        state.pot = pot
        state.total = sum(state.chips) + pot
        state.dealer = int(rng.integers(n)) if dealer is None else dealer
        if self.rounds is not None:
            state.rounds_target = self.rounds * n
        if isinstance(deal, dict):
            deal = deal["spec"] if "spec" in deal else self.fill_deal(state, state.dealer, **deal)
        if deal is not None:
            self.check_deal(state, deal)
        self._start_deal(state, deal)
        return state

    def check_deal(self, state: State, deal: DealSpec) -> None:
        """Raise :class:`DealError` unless ``deal`` uses every card of the deck exactly once, with full hands."""
        if not isinstance(deal, DealSpec) or len(deal.hands) != self.n:
            raise DealError(f"a deal needs one hand per seat ({self.n}), got {deal!r}")
        cards = [c for hand in deal.hands for c in hand] + [deal.trump, *deal.stock]
        if sorted(cards) != list(range(self.num_cards)):
            raise DealError(f"a deal must hold each of the {self.num_cards} cards exactly once "
                            f"(got {len(cards)} cards, {len(set(cards))} distinct)")
        for seat, hand in enumerate(deal.hands):
            want = self.hand_size if state.alive[seat] else 0
            if len(hand) != want:
                raise DealError(f"hand of seat {seat} has {len(hand)} cards; it must have {want}")

    def clone(self, state: State) -> State:
        return copy.deepcopy(state)

    def deal_from_deck(self, state: State, order: list[int] | tuple[int, ...], dealer: int) -> DealSpec:
        """Deal a deck order (top card first) by the ruleset's pattern (RULES.md §1.5)."""
        seats = self.order_from(state, self.succ(state, dealer))
        hands: list[list[int]] = [[] for _ in range(self.n)]
        pos = 0
        trump = -1
        for step in self.deal_pattern:
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

    def _ante(self, state: State, seat: int) -> None:
        paid = min(self.stake, state.chips[seat])
        state.chips[seat] -= paid
        state.pot += paid

    def _start_deal(self, state: State, deal: DealSpec | None = None) -> None:
        """Begin a deal: antes (or the classic offer), then dealing."""
        state.deals_started += 1
        state.deal_start_chips = list(state.chips)
        state.deal_start_pot = state.pot + state.reserve + sum(state.escrow)
        state.pot_was_empty = state.pot == 0 and state.reserve == 0
        state.pushes = 0
        state.belli_owed = []
        if self.schieben:
            state.offer_seat = state.dealer
            self._ante(state, state.dealer)
            state.pending_deal = deal
            self._gather_pack(state)
            self._ask(state, Phase.OFFER, [state.dealer])
            return
        if self.scoring != "points":
            self._ante(state, state.dealer)
        if self.queue_option and state.escrow:
            state.pot += self._pop_queue(state)
        self._after_stakes(state, deal)

    def _clear_deal(self, state: State) -> None:
        """Empty every per-deal field: no cards anywhere, nobody decided, no trick."""
        n = self.n
        state.hands = [0] * n
        state.dealt = [0] * n
        state.seen = [True] * n
        state.blind = [0] * n
        state.discards = [0] * n
        state.drawn = [0] * n
        state.dead = 0
        state.discard_pile = 0
        state.revealed = 0
        state.stock = []
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
        state.swapped = False
        state.announced = None
        state.announce_asked = False
        state.as_holder = None
        state.trick_locked = False

    def _gather_pack(self, state: State) -> None:
        """Every card back in the undealt pack (before the classic offer)."""
        self._clear_deal(state)
        state.undealt = True
        state.trump_face_up = False

    def _pop_queue(self, state: State) -> int:
        if self.queue_largest:
            i = max(range(len(state.escrow)), key=lambda k: state.escrow[k])
        else:
            i = 0
        return state.escrow.pop(i)

    def _after_stakes(self, state: State, deal: DealSpec | None) -> None:
        """Cap normalisation (classic), then the deal itself."""
        topped = False
        if self.cap is not None:
            if state.pot > self.cap:
                state.reserve += state.pot - self.cap
                state.pot = self.cap
            elif state.reserve:
                x = min(state.reserve, self.cap - state.pot)
                topped = x > 0
                state.pot += x
                state.reserve -= x
        state.new_pot = state.pot_was_empty and state.pushes == 0 and not topped
        self._deal(state, deal)

    def _deal(self, state: State, deal: DealSpec | None) -> None:
        n = self.n
        dealer = state.dealer
        if deal is None:
            order = state.rng.permutation(self.num_cards).tolist()
            deal = self.deal_from_deck(state, order, dealer)
        if not state.deals or state.deals[-1] is not deal:
            state.deals.append(deal)
        self._clear_deal(state)
        state.undealt = False
        hands = [0] * n
        for s, cards in enumerate(deal.hands):
            for c in cards:
                hands[s] |= 1 << c
        state.hands = hands
        state.dealt = list(hands)
        state.stock = list(reversed(deal.stock))
        state.trump_card = deal.trump
        state.trump_suit = self.deck.suit[deal.trump]
        state.tables = self.tables[state.trump_suit]
        state.trump_face_up = True
        if self.vierling and not self._vierling(state):
            # D19: a short stock voids the deal; the same dealer redeals without a new ante.
            self._deal(state, None)
            return
        self._open_bidding(state)

    def _vierling(self, state: State) -> bool:
        """RULES.md §2.2 Vierling. False when the stock ran short (the deal is void)."""
        for s in self.order_from(state, self.forehand(state)):
            while True:
                hand = state.hands[s]
                ranks = {self.deck.codes[c][0] for c in iter_bits(hand)}
                if len(ranks) != 1:
                    break
                if len(state.stock) < 4:
                    return False
                state.revealed |= hand
                state.discard_pile |= hand
                state.discards[s] |= hand
                state.hands[s] = 0
                self._ante(state, s)  # pays min(S, chips) into the pot
                got = 0
                for _ in range(4):
                    got |= 1 << state.stock.pop()
                state.hands[s] = got
                state.drawn[s] |= got
                state.dealt[s] = got
        return True

    def _open_bidding(self, state: State) -> None:
        """The first decision of a freshly dealt deal."""
        dealer = state.dealer
        if self.pamphile and state.trump_card == self.jc:
            self._ask(state, Phase.NAME_TRUMP, [dealer])
            return
        self._after_trump(state)

    def _after_trump(self, state: State) -> None:
        """Steps between the deal and the first bid: Pamphile bonus, forced knock, knock."""
        dealer = state.dealer
        if self.pamphile_bonus and not state.announce_asked:
            state.announce_asked = True
            holder = next((s for s in range(self.n) if state.hands[s] >> self.jc & 1), None)
            if holder is not None:
                self._ask(state, Phase.ANNOUNCE, [holder])
                return
        if self.forced_knock and state.new_pot:
            self._forced_knock(state)
            return
        if self.knock_option and self.rank_pos[state.trump_card] <= self.knock_max_pos:
            state.seen[dealer] = False  # the knock decision is blind
            self._ask(state, Phase.KNOCK, [dealer])
            return
        self._start_declaring(state)

    def _start_declaring(self, state: State) -> None:
        order = self.order_from(state, self.forehand(state))
        if self.bidding == "decide":
            self._ask(state, Phase.DECIDE, order)  # nobody has passed yet: no lone seat at the first turn
            return
        if self.bidding == "mousel" and state.knocked:
            order = [s for s in order if s != state.dealer]
        self._ask(state, Phase.DECLARE, order)
        if self.bidding == "mousel":
            self._mousel_turn(state)

    def _ask(self, state: State, phase: Phase, queue: list[int]) -> None:
        state.phase = phase
        state.queue = queue
        state.qpos = 0
        state.to_act = queue[0] if queue else None

    # ------------------------------------------------------------------ legality
    def legal_actions(self, state: State) -> list[int]:
        """Legal action ids for the seat to act, in increasing order (empty when over)."""
        phase = state.phase
        if phase is Phase.PLAY:
            return list(iter_bits(self.legal_play_mask(state)))
        seat = state.to_act
        if phase is Phase.EXCHANGE:
            acts = list(iter_bits(self._markable(state, seat))) if state.marked < state.xcap else []
            if state.marked >= state.xmin:
                acts.append(self.DONE)
            return acts
        if phase is Phase.DECLARE:
            if self.bidding == "mousel":
                acts = [self.IN]
                if self.volunteer_leader and not state.knocked and not any(r is Role.COMMITTED for r in state.roles):
                    acts.append(self.IN_LEAD)
                acts.append(self.OUT)
                return sorted(acts)
            if self.mauschelzwang and self._holds_trump_ace(state, seat):
                return [self.MAUSCHELN]
            return [self.MAUSCHELN, self.PASS]
        if phase is Phase.GO_WITH:
            if self.mitgehzwang and state.qpos == len(state.queue) - 1 and not any(
                state.roles[s] is Role.GOER for s in state.queue[:-1]
            ):
                return [self.GO]
            return [self.PASS, self.GO]
        if phase is Phase.DECIDE:
            return self._decide_actions(state, seat)
        if phase is Phase.KNOCK:
            return [self.KNOCK, self.NO_KNOCK]
        if phase is Phase.OFFER:
            if state.pushes >= self._live_count(state):
                return [self.DEAL]  # the offer would return to the first seat: he must deal
            return [self.DEAL, self.PUSH]
        if phase is Phase.ANNOUNCE:
            return [self.ANNOUNCE, self.SILENT]
        if phase is Phase.NAME_TRUMP:
            return list(self.TRUMP_BY_SUIT)
        if phase is Phase.SWAP:
            return list(iter_bits(state.hands[seat]))
        return []

    def _markable(self, state: State, seat: int) -> int:
        return state.hands[seat] & ~state.blind[seat]

    def _holds_trump_ace(self, state: State, seat: int) -> bool:
        ace = self.trump_ace[state.trump_suit]
        return ace is not None and bool(state.hands[seat] >> ace & 1)

    def _live_count(self, state: State) -> int:
        return sum(state.alive)

    def _decide_actions(self, state: State, seat: int) -> list[int]:
        acts = list(iter_bits(state.hands[seat]))  # a card starts an exchange by discarding it
        acts.append(self.STAY)
        may_pass = not state.swapped
        if self.ruleset == "muschka" and self.as_card is not None and state.hands[seat] >> self.as_card & 1:
            may_pass = False  # the holder of the ace of spades may not pass
        if may_pass:
            acts.append(self.PASS)
        if (self.beatrix and seat == state.dealer and not state.swapped and state.trump_face_up
                and not (self.pamphile and state.trump_card == self.jc)):
            acts.append(self.SWAP)
        return sorted(acts)

    def legal_play_mask(self, state: State) -> int:
        hand = state.hands[state.to_act]
        if not state.trick:
            return hand
        t = state.tables
        return legal_follow(self.profile, hand, t.eff_suit_mask[state.led_suit], t.trump_mask, t.beats[state.win_card])

    def is_legal(self, state: State, action: int) -> bool:
        if state.phase is Phase.PLAY:
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
                self._finish_exchange(state, seat, results)
            else:
                self._mark(state, seat, action)
        elif phase is Phase.DECLARE:
            if self.bidding == "mousel":
                self._mousel_declare(state, seat, action, results)
            elif action == self.MAUSCHELN:
                self._become_mauschler(state, seat)
            else:
                state.roles[seat] = Role.DECLINED
                if not self._advance(state):
                    results.append(self._throw_in(state))
        elif phase is Phase.GO_WITH:
            if action == self.GO:
                state.roles[seat] = Role.GOER
            else:
                self._fold(state, seat)
            if not self._advance(state):
                self._after_go_with(state, results)
        elif phase is Phase.DECIDE:
            self._decide(state, seat, action, results)
        elif phase is Phase.KNOCK:
            if action == self.KNOCK:
                state.knocked = True
                if self.bidding == "mousel":
                    state.roles[seat] = Role.COMMITTED
                    state.mauschler = seat
                    self._start_declaring(state)
                    self._check_mousel_end(state, results)
                else:
                    self._become_mauschler(state, seat)
            else:
                state.knocked = False
                state.seen[seat] = True
                self._start_declaring(state)
                if self.bidding == "mousel":
                    self._check_mousel_end(state, results)
        elif phase is Phase.OFFER:
            self._offer(state, seat, action)
        elif phase is Phase.ANNOUNCE:
            if action == self.ANNOUNCE:
                state.announced = seat
                for s in range(self.n):
                    if s != seat and state.alive[s]:
                        paid = min(1, state.chips[s])
                        state.chips[s] -= paid
                        state.chips[seat] += paid
            self._after_trump(state)
        elif phase is Phase.NAME_TRUMP:
            suit = self.TRUMP_BY_SUIT.index(action)
            state.trump_suit = suit
            state.tables = self.tables[suit]
            self._after_trump(state)
        elif phase is Phase.SWAP:
            bit = 1 << action
            state.hands[seat] ^= bit
            state.discards[seat] |= bit
            state.discard_pile |= bit
            tbit = 1 << state.trump_card
            state.hands[seat] |= tbit
            state.drawn[seat] |= tbit
            state.trump_holder = seat
            state.trump_face_up = False
            state.swapped = True
            state.phase = Phase.DECIDE  # the dealer now stays or exchanges
        return results

    def _advance(self, state: State) -> bool:
        """Move to the next seat in the queue; False when the queue is exhausted."""
        state.qpos += 1
        if state.qpos < len(state.queue):
            state.to_act = state.queue[state.qpos]
            return True
        return False

    def _fold(self, state: State, seat: int) -> None:
        state.roles[seat] = Role.OUT
        state.dead |= state.hands[seat]
        state.hands[seat] = 0

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
        state.participants = [m, *goers]
        if self.ruleset == "mauscheln_classic" and state.knocked:
            # 4b: the knocker draws blind; 4c: the goers; 4d: the knocker discards one and takes the trump card.
            self._start_exchange(state, [m, *goers, m],
                                 [XKind.CLASSIC_BLIND, *[XKind.NORMAL] * len(goers), XKind.CLASSIC_FINAL])
            return
        kinds = [XKind.MODERN_KNOCK if state.knocked else XKind.NORMAL] + [XKind.NORMAL] * len(goers)
        self._start_exchange(state, [m, *goers], kinds)

    def _forced_knock(self, state: State) -> None:
        """Classic forced knock on a new pot: everyone plays, the dealer swaps one card for the trump card."""
        dealer = state.dealer
        state.mauschler = dealer
        state.knocked = True
        for s in self.order_from(state, dealer):
            state.roles[s] = Role.MAUSCHLER if s == dealer else Role.GOER
        state.participants = self.order_from(state, dealer)
        self._start_exchange(state, [dealer], [XKind.CLASSIC_FINAL])

    def _start_exchange(self, state: State, order: list[int], kinds: list[XKind]) -> None:
        state.xkinds = kinds
        self._ask(state, Phase.EXCHANGE, order)
        self._open_exchange(state)

    def _open_exchange(self, state: State) -> None:
        seat = state.to_act
        kind = state.xkinds[state.qpos]
        state.marked = 0
        limit = min(self.hand_size, self.exchange_limit)
        if kind is XKind.MODERN_KNOCK:
            state.seen[seat] = True  # he now looks at his hand
            state.xmin = 1
            state.xcap = min(limit, len(state.stock) + 1) if self.stock_policy == "CAP" else limit
        elif kind is XKind.CLASSIC_FINAL:
            state.seen[seat] = True
            state.blind[seat] = 0  # 4d: he picks up and sees his cards
            state.xmin = state.xcap = 1
        elif kind is XKind.CLASSIC_BLIND:
            state.seen[seat] = True
            state.xmin = 0
            state.xcap = limit
        else:
            state.xmin = 0
            state.xcap = min(limit, len(state.stock)) if self.stock_policy == "CAP" else limit

    def _mark(self, state: State, seat: int, card: int) -> None:
        bit = 1 << card
        state.hands[seat] ^= bit
        state.discards[seat] |= bit
        state.discard_pile |= bit
        state.marked += 1

    def _draw(self, state: State, k: int) -> int:
        """Draw ``k`` cards under the ruleset's shortage policy (RULES.md §1.7)."""
        got = 0
        for _ in range(k):
            if not state.stock:
                self._reshuffle(state)  # replaces state.stock
            got |= 1 << state.stock.pop()
        return got

    def _reshuffle(self, state: State) -> None:
        """RESHUFFLE: the discard pile (own discards included, dead cards not) becomes the stock."""
        if self.stock_policy == "CAP":
            raise RuntimeError("the CAP policy never reshuffles; the mask should have prevented this draw")
        pool = list(iter_bits(state.discard_pile))
        state.discard_pile = 0
        if (self.stock_policy == "RESHUFFLE_TRUMP" and state.trump_face_up and not state.knocked):
            pool.append(state.trump_card)
            state.trump_face_up = False
        if not pool:
            raise RuntimeError("nothing left to reshuffle")
        order = state.rng.permutation(len(pool))
        state.stock = [pool[i] for i in order]

    def _finish_exchange(self, state: State, seat: int, results: list[DealResult]) -> None:
        k = state.marked
        kind = state.xkinds[state.qpos]
        if kind is XKind.CLASSIC_FINAL:
            bit = 1 << state.trump_card
            state.trump_holder = seat
            state.trump_face_up = False
            state.hands[seat] |= bit
            state.drawn[seat] |= bit
        elif kind is XKind.MODERN_KNOCK:
            state.exchanged[seat] = k
            bit = 1 << state.trump_card
            state.trump_holder = seat
            state.trump_face_up = False
            state.hands[seat] |= bit
            state.drawn[seat] |= bit
            blind = self._draw(state, k - 1)
            state.hands[seat] |= blind
            state.drawn[seat] |= blind
            state.blind[seat] = blind
        elif kind is XKind.CLASSIC_BLIND:
            state.exchanged[seat] = k
            blind = self._draw(state, k)
            state.hands[seat] |= blind
            state.drawn[seat] |= blind
            state.blind[seat] = blind
        else:
            state.exchanged[seat] = k
            got = self._draw(state, k)
            state.hands[seat] |= got
            state.drawn[seat] |= got
        if kind is XKind.DECIDE:
            state.phase = Phase.DECIDE
            state.xkinds = []
            self._decide_next(state, results)
            return
        if self._advance(state):
            self._open_exchange(state)
            return
        for s in range(self.n):
            state.blind[s] = 0  # every goer has exchanged: the knocker sees his cards
        self._start_play(state)

    def _start_play(self, state: State, leader: int | None = None) -> None:
        parts = [s for s in range(self.n) if state.roles[s] in PLAYING_ROLES]
        state.participants = parts
        if leader is None:
            leader = state.mauschler if state.mauschler is not None else state.leader
        order = sorted(parts, key=lambda s: ((s - leader) * self.direction) % self.n)
        for i, s in enumerate(order):
            state.next_player[s] = order[(i + 1) % len(order)]
        if self.as_card is not None and self.ruleset == "muschka":
            state.as_holder = next((s for s in parts if state.hands[s] >> self.as_card & 1), None)
        state.leader = leader
        state.phase = Phase.PLAY
        state.queue = []
        state.qpos = 0
        state.to_act = leader
        state.trick = []

    def _play(self, state: State, seat: int, card: int, results: list[DealResult]) -> None:
        state.hands[seat] ^= 1 << card
        trick = state.trick
        t = state.tables
        if not trick:
            state.led_suit = t.eff_suit[card]
            state.win_card = card
            state.win_seat = seat
            state.trick_locked = False
        elif state.trick_locked:
            pass
        elif (card == self.as_card and self.ruleset == "muschka" and state.trump_suit != SUITS.index("S")
              and trick[0][1] == self.trump_ace[state.trump_suit]):
            # Muschka: the ace of spades beats a led trump ace, and nothing beats it after.
            state.win_card = card
            state.win_seat = seat
            state.trick_locked = True
        elif t.beats[state.win_card] >> card & 1:
            state.win_card = card
            state.win_seat = seat
        trick.append((seat, card))
        if len(trick) < len(state.participants):
            state.to_act = state.next_player[seat]
            return
        winner = state.win_seat
        self._belli_check(state, trick)
        state.tricks_won[winner] += 1
        state.tricks.append(trick)
        state.trick = []
        state.leader = winner
        state.to_act = winner
        if len(state.tricks) == self.num_tricks:
            results.append(self._settle_tricks(state))

    def _belli_check(self, state: State, trick: list[tuple[int, int]]) -> None:
        """D20: the Belli and the trump ace in one trick cost the Belli's player S at settlement."""
        if self.belli is None:
            return
        belli = self.belli_card[state.trump_suit]
        ace = self.trump_ace[state.trump_suit]
        seat_of = {c: s for s, c in trick}
        if belli in seat_of and ace in seat_of:
            receiver = seat_of[ace] if self.belli_penalty_to_ace else None
            state.belli_owed.append((seat_of[belli], receiver))

    # ------------------------------------------------------------------ mousel
    def _mousel_turn(self, state: State) -> None:
        """Skip seats that the auto rule makes IN (every other seat already OUT)."""
        while state.to_act is not None:
            seat = state.to_act
            others = [s for s in range(self.n) if state.alive[s] and s != seat]
            if all(state.roles[s] is Role.OUT for s in others):
                state.roles[seat] = Role.IN
                if not self._advance(state):
                    state.to_act = None
                continue
            return

    def _mousel_declare(self, state: State, seat: int, action: int, results: list[DealResult]) -> None:
        if action == self.OUT:
            self._fold(state, seat)
        elif action == self.IN_LEAD:
            state.roles[seat] = Role.COMMITTED
            state.mauschler = seat
        else:
            state.roles[seat] = Role.IN
        if self._advance(state):
            self._mousel_turn(state)
        else:
            state.to_act = None
        self._check_mousel_end(state, results)

    def _check_mousel_end(self, state: State, results: list[DealResult]) -> None:
        if state.phase is not Phase.DECLARE or state.to_act is not None:
            return
        ins = [s for s in self.order_from(state, self.forehand(state)) if state.roles[s] in (Role.IN, Role.COMMITTED)]
        if len(ins) == 1:
            results.append(self._settle_no_play(state, ins[0]))
            return
        fh = self.forehand(state)
        if state.mauschler is None and state.roles[fh] is Role.IN:
            state.roles[fh] = Role.COMMITTED
            state.mauschler = fh
        first = state.mauschler if state.mauschler is not None else ins[0]
        order = [s for s in self.order_from(state, first) if s in ins]
        kinds = [XKind.MODERN_KNOCK if (state.knocked and s == state.dealer) else XKind.NORMAL for s in order]
        state.participants = order
        state.leader = first
        self._start_exchange(state, order, kinds)

    # ------------------------------------------------------------------ mouche, muschka
    def _decide_turn(self, state: State, results: list[DealResult]) -> None:
        """The lone rule: a seat whose turn comes when all others have passed takes the deal."""
        seat = state.to_act
        if seat is None:
            return
        others = [s for s in range(self.n) if state.alive[s] and s != seat]
        if all(state.roles[s] is Role.OUT for s in others):
            state.roles[seat] = Role.STAYED
            results.append(self._settle_lone(state, seat))

    def _decide(self, state: State, seat: int, action: int, results: list[DealResult]) -> None:
        if action == self.PASS:
            self._fold(state, seat)
        elif action == self.STAY:
            state.roles[seat] = Role.STAYED
        elif action == self.SWAP:
            state.phase = Phase.SWAP
            return
        else:
            state.roles[seat] = Role.EXCHANGED
            state.marked = 0
            self._mark(state, seat, action)
            state.phase = Phase.EXCHANGE
            state.xkinds = [XKind.DECIDE] * len(state.queue)
            state.xmin = 1
            state.xcap = self.hand_size
            return
        self._decide_next(state, results)

    def _decide_next(self, state: State, results: list[DealResult]) -> None:
        if self._advance(state):
            self._decide_turn(state, results)
            return
        players = [s for s in self.order_from(state, self.forehand(state)) if state.roles[s] in PLAYING_ROLES]
        if len(players) == 1:
            results.append(self._settle_lone(state, players[0]))
            return
        if self.scoring == "mouche":
            winner = self._best_mouche(state, players)
            if winner is not None:
                results.append(self._settle_mouche_hand(state, winner, players))
                return
        self._start_play(state, leader=players[0])

    def _mouche_of(self, state: State, seat: int) -> tuple[bool, int, int] | None:
        """(is trump, points, suit) when ``seat`` stayed with a flush of dealt cards."""
        if state.roles[seat] is not Role.STAYED or (state.swapped and seat == state.dealer):
            return None
        hand = state.hands[seat]
        cards = list(iter_bits(hand))
        suits = set()
        points = 0
        for c in cards:
            code = self.deck.codes[c]
            points += POINTS.get(code[0], int(code[0]) if code[0].isdigit() else 10)
            if self.pamphile and c == self.jc and self.pamphile_wild:
                continue
            suits.add(self.deck.suit[c])
        if len(suits) != 1:
            return None
        suit = suits.pop()
        return (suit == state.trump_suit, points, suit)

    def _best_mouche(self, state: State, players: list[int]) -> int | None:
        best = None
        best_key = None
        for rank, s in enumerate(players):  # players are in decision order from forehand
            m = self._mouche_of(state, s)
            if m is None:
                continue
            key = (m[0], m[1], -rank)
            if best_key is None or key > best_key:
                best, best_key = s, key
        return best

    # ------------------------------------------------------------------ classic offer
    def _offer(self, state: State, seat: int, action: int) -> None:
        if action == self.PUSH:
            state.pushes += 1
            nxt = self.succ(state, seat)
            state.offer_seat = nxt
            self._ante(state, nxt)  # back at the first seat after a full round: he pays again and must deal
            self._ask(state, Phase.OFFER, [nxt])
            return
        state.dealer = seat
        deal, state.pending_deal = state.pending_deal, None
        self._after_stakes(state, deal)

    # ------------------------------------------------------------------ settlement
    def _settle_tricks(self, state: State) -> DealResult:
        if self.scoring == "points":
            return self._settle_points(state)
        if self.scoring == "mouche":
            return self._settle_mouche_tricks(state)
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
            need = 2 if state.roles[s] in (Role.MAUSCHLER, Role.COMMITTED) else 1
            if self.scoring == "flat":
                owed = pot if state.tricks_won[s] < need else 0
            else:
                owed = pot * max(0, need - state.tricks_won[s])
            paid = min(owed, state.chips[s])
            debits[s] = paid
            state.chips[s] -= paid
            state.pot += paid
        for payer, receiver in state.belli_owed:  # the Belli penalty is not part of P
            paid = min(self.stake, state.chips[payer])
            debits[payer] += paid
            state.chips[payer] -= paid
            if receiver is None:
                state.pot += paid
            else:
                state.chips[receiver] += paid
                credits[receiver] += paid
        return self._finish(state, "settled", pot, credits, debits, state.mauschler)

    def _settle_no_play(self, state: State, seat: int) -> DealResult:
        pot = state.pot
        credits = [0] * self.n
        credits[seat] = pot
        state.chips[seat] += pot
        state.pot = 0
        return self._finish(state, "no_play", pot, credits, [0] * self.n, seat)

    def _mouche_payment(self, state: State, seat: int, pot: int) -> int:
        owed = pot if self.mery_cap is None else min(pot, self.mery_cap)
        paid = min(owed, state.chips[seat])
        state.chips[seat] -= paid
        return paid

    def _collect(self, state: State, payments: list[int]) -> None:
        """Mouche payments go to the pot, or with the queue each becomes an escrow item."""
        for paid in payments:
            if not paid:
                continue
            if self.queue_option:
                state.escrow.append(paid)
            else:
                state.pot += paid

    def _settle_lone(self, state: State, seat: int) -> DealResult:
        if self.scoring == "points":
            state.participants = [seat]
            state.tricks_won[seat] = self.num_tricks
            return self._settle_points(state, lone=seat)
        return self._settle_no_play(state, seat)

    def _settle_mouche_hand(self, state: State, winner: int, players: list[int]) -> DealResult:
        pot = state.pot
        credits = [0] * self.n
        debits = [0] * self.n
        credits[winner] = pot
        state.pot = 0
        if self.queue_option and self.collect_1730 and state.escrow:
            credits[winner] += sum(state.escrow)
            state.escrow = []
        state.chips[winner] += credits[winner]
        payments = []
        for s in players:
            if s != winner:
                debits[s] = self._mouche_payment(state, s, pot)
                payments.append(debits[s])
        self._collect(state, payments)
        return self._finish(state, "mouche", pot, credits, debits, winner)

    def _settle_mouche_tricks(self, state: State) -> DealResult:
        pot = state.pot
        v = pot // self.num_tricks
        credits = [0] * self.n
        debits = [0] * self.n
        for s in state.participants:
            credits[s] = state.tricks_won[s] * v
            state.chips[s] += credits[s]
            state.pot -= credits[s]
        payments = []
        for s in self.order_from(state, self.forehand(state)):
            if s in state.participants and state.tricks_won[s] == 0:
                debits[s] = self._mouche_payment(state, s, pot)
                payments.append(debits[s])
        self._collect(state, payments)
        return self._finish(state, "settled", pot, credits, debits, None)

    def _settle_points(self, state: State, lone: int | None = None) -> DealResult:
        """RULES.md §3.4: Muschka points, counting down to exactly 0."""
        n = self.n
        old = list(state.scores)
        spades_trump = state.trump_suit == SUITS.index("S")
        for s in state.participants:
            t = state.tricks_won[s]
            delta = -t if t else 5
            if s == state.as_holder:
                if t >= 1:
                    delta -= 10 if spades_trump else 5
                else:
                    delta = 10
            new = state.scores[s] + delta
            state.scores[s] = self.start_score if new < 0 else new
        deltas = [old[s] - state.scores[s] for s in range(n)]
        result = DealResult(
            kind="no_play" if lone is not None else "settled",
            dealer=state.dealer,
            pot_before=0,
            pot_after=0,
            deltas=deltas,
            tricks=list(state.tricks_won),
            credits=[0] * n,
            debits=[0] * n,
            mauschler=lone,
            scores=list(state.scores),
        )
        state.results.append(result)
        state.deals_settled += 1
        state.throw_in_streak = 0
        self._next_deal(state)
        return result

    def _throw_in(self, state: State) -> DealResult:
        result = DealResult(
            kind="throw_in",
            dealer=state.dealer,
            pot_before=state.pot,
            pot_after=state.pot,
            deltas=[state.chips[s] - state.deal_start_chips[s] for s in range(self.n)],
            tricks=[0] * self.n,
            credits=[0] * self.n,
            debits=[0] * self.n,
        )
        state.results.append(result)
        state.throw_in_streak += 1
        self._next_deal(state)
        return result

    def _finish(self, state: State, kind: str, pot: int, credits: list[int], debits: list[int],
                who: int | None) -> DealResult:
        result = DealResult(
            kind=kind,
            dealer=state.dealer,
            pot_before=pot,
            pot_after=state.pot,
            deltas=[state.chips[s] - state.deal_start_chips[s] for s in range(self.n)],
            tricks=list(state.tricks_won),
            credits=credits,
            debits=debits,
            mauschler=who,
        )
        state.results.append(result)
        state.deals_settled += 1
        state.throw_in_streak = 0
        self._next_deal(state)
        return result

    def _next_deal(self, state: State) -> None:
        """RULES.md §3.5: eliminate seats at 0 chips, end or rotate the deal."""
        if self.scoring != "points":
            for s in range(self.n):
                if state.alive[s] and state.chips[s] <= 0:
                    state.alive[s] = False
        max_deals = self.config.max_deals
        ended = sum(state.alive) < 3 or (max_deals is not None and state.deals_settled >= max_deals)
        if self.scoring == "points" and any(score == 0 for score in state.scores):
            ended = True
        if state.rounds_target is not None and state.deals_settled >= state.rounds_target:
            ended = True
        if ended:
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

        Checks: every card in exactly one place; chips + pot + reserve + escrow
        constant; hand sizes in play; the acting seat is live; no negative chips.
        """
        problems: list[str] = []
        places: list[tuple[str, int]] = [(f"hand {s}", h) for s, h in enumerate(state.hands)]
        places.append(("stock", sum(1 << c for c in state.stock)))
        if len(set(state.stock)) != len(state.stock):
            problems.append("stock holds a card twice")
        if state.trump_face_up:
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
        if state.undealt:
            places = [("undealt pack", self.deck.full_mask)]
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
        money = sum(state.chips) + state.pot + state.reserve + sum(state.escrow)
        if money != state.total:
            problems.append(f"chips {sum(state.chips)} + pot {state.pot} + reserve {state.reserve} + escrow "
                            f"{sum(state.escrow)} != {state.total}")
        if any(c < 0 for c in state.chips) or state.pot < 0 or state.reserve < 0 or any(e <= 0 for e in state.escrow):
            problems.append(f"negative chips, pot, reserve or escrow: {state.chips}, {state.pot}, {state.reserve}")
        if self.scoring == "points":
            replay = list(state.start_scores)
            for r in state.results:
                replay = [replay[s] - r.deltas[s] for s in range(self.n)]
            if replay != state.scores or any(x < 0 for x in state.scores):
                problems.append(f"scores {state.scores} do not follow from the deals' deltas ({replay})")
        if problems:
            raise RuntimeError("invariant violated: " + "; ".join(problems))
