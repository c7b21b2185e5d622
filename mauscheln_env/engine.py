"""The pure reference engine core: session, deal, the decision cursor, and the primitives every ruleset uses.

The engine knows nothing of gymnasium, PettingZoo, tensors or rendering, and it
names no ruleset. A :class:`Game` holds the static tables of one
:class:`~mauscheln_env.config.RuleConfig` and the ruleset's **rule objects**
(``config.spec.rules(game)``, defined in ``mauscheln_env/rulesets/<name>.py``);
a :class:`State` holds one session: the :class:`Session` (chips, pot, reserve,
escrow, scores, dealer, live seats, history) and the current :class:`Deal`
(hands, stock, trump card, roles, tricks, the exchange cursor), plus the
decision cursor (``phase``, ``to_act`` and the queue of seats still to be asked).

``Game.legal_actions(state)`` and ``Game.apply(state, action)`` are the whole
interface a player needs; ``Game.check_invariants(state)`` checks card, chip
and score conservation and is called by the tests after every step.

## How a deal is played

A ruleset's deal procedure is its tuple of :class:`Stage` objects, in the
order of its section of RULES.md (``Game.stages``). The engine enters the
stages one after the other: a stage either finishes at once (an ante, the
deal itself, a check), asks the seats a decision (it sets ``state.phase`` and
the queue with :meth:`Game.ask` and handles the answers in :meth:`Stage.act`,
calling :meth:`Game.proceed` when it is done), or ends the deal with a
settlement (:meth:`Game.finish`, :meth:`Game.throw_in`), after which the next
deal starts at its first stage. The core provides the stages every ruleset
shares: :class:`Ante`, :class:`DealCards`, :class:`Exchange`, :class:`Play`
and :class:`Settle`, and the exchange and trick decisions themselves
(``Phase.EXCHANGE``, ``Phase.PLAY``).

## Chance

Every random number is drawn from ``state.rng`` (a ``numpy.random.Generator``
by default): ``state.rng.permutation(k)`` for a deck order, the remaining
cards of a partly fixed deal and a reshuffle, and, only in :meth:`Game.new_session`
when no dealer is given, ``state.rng.integers(n)`` for the first dealer.
Nothing else. This is the engine's chance hook: an object with those two
methods may stand in for the generator (the OpenSpiel adapter uses it to make
every shuffle an explicit chance node). Every deal is recorded as a
:class:`DealSpec`, so a session is replayable from its deals and its action
history.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Any

import numpy as np

from mauscheln_env.cards import Deck, iter_bits
from mauscheln_env.errors import DealError, IllegalActionError, SessionOverError
from mauscheln_env.tricks import TrickProfile, TrumpTables, build_trump_tables, legal_follow


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


class Bidding(Enum):
    """How seats bid (RULES.md §2); a ruleset's spec names one, its rule objects implement it."""

    DECLARE = "declare"
    """Declare, then go with the declarer (mauscheln, mauscheln_classic)."""
    MOUSEL = "mousel"
    """In or out, a committed player (mousel)."""
    DECIDE = "decide"
    """Stay, pass or exchange, one decision per seat (mouche, muschka)."""


class Scoring(Enum):
    """How a deal is settled (RULES.md §3)."""

    PER_TRICK = "per_trick"
    """A bête of the pot per missing trick (§3.1)."""
    FLAT = "flat"
    """One bête of the pot for missing the requirement (§3.1, Mousel)."""
    MOUCHE = "mouche"
    """The mouche: a flush takes the pot, a seat without a trick pays it (§3.3)."""
    POINTS = "points"
    """Muschka's points, from 25 down to exactly 0 (§3.4); no chips."""


class StockPolicy(Enum):
    """What happens when the stock runs short in an exchange (RULES.md §1.7)."""

    CAP = "CAP"
    RESHUFFLE = "RESHUFFLE"
    RESHUFFLE_TRUMP = "RESHUFFLE_TRUMP"


class DealKind(str, Enum):
    """How a deal ended. A ``str`` enum: ``DealKind.SETTLED == "settled"``."""

    SETTLED = "settled"
    """Tricks were played."""
    NO_PLAY = "no_play"
    """One seat took the pot (or, in Muschka, was credited with every trick) without play."""
    MOUCHE = "mouche"
    """A mouche hand won."""
    THROW_IN = "throw_in"
    """Nobody declared (a throw-in, a pass round): the pot stays."""

    def __str__(self) -> str:
        return self.value


ROLE_NAMES = {r: r.name.lower() for r in Role}
PHASE_NAMES = {p: p.name.lower() for p in Phase}
PLAYING_ROLES = frozenset({Role.MAUSCHLER, Role.GOER, Role.IN, Role.COMMITTED, Role.STAYED, Role.EXCHANGED})


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

    ``deltas`` are the rewards by seat over the whole deal: chip changes (ante
    included) or, in muschka, the decrease of the score.
    """

    kind: DealKind
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


_COPIERS: dict[type, Any] = {}


def _copy_slots(obj: Any) -> Any:
    """A copy of a slotted object with every list copied one level deep (tuples and ints are shared)."""
    copier = _COPIERS.get(type(obj))
    if copier is None:
        copier = _COPIERS[type(obj)] = _slot_copier(type(obj))
    return copier(obj)


def _slot_copier(cls: type) -> Any:
    """The copy function of a slotted class, one line per slot (compiled once per class: searches copy
    states by the hundred thousand, and attribute access by name costs more than the copy itself)."""
    names = [n for klass in reversed(cls.__mro__) for n in getattr(klass, "__slots__", ()) if n != "__weakref__"]
    lines = ["def copy(obj):", "    new = new_object(cls)"]
    for name in names:
        if not name.isidentifier():
            raise TypeError(f"{cls.__name__} has a slot {name!r} that is not an identifier")
        lines += [f"    v = obj.{name}", f"    new.{name} = v.copy() if type(v) is list else v"]
    lines.append("    return new")
    scope: dict[str, Any] = {"new_object": object.__new__, "cls": cls, "list": list}
    exec(compile("\n".join(lines), f"<copy of {cls.__name__}>", "exec"), scope)  # noqa: S102 (our own names)
    return scope["copy"]


@dataclass(slots=True, eq=False)
class Session:
    """What carries over from deal to deal: the money, the scores, the dealer, the record."""

    n: int
    rng: Any
    """The random generator (see "Chance" in the module docstring)."""
    chips: list[int]
    pot: int = 0
    reserve: int = 0
    """The classic pot cap's reserve (RULES.md §3.2)."""
    escrow: list[int] = field(default_factory=list)
    """The Mouche queue: payments waiting to enter the pot, oldest first (§2.6)."""
    scores: list[int] = field(default_factory=list)
    """Muschka's points by seat (empty in the chip rulesets)."""
    start_scores: list[int] = field(default_factory=list)
    total: int = 0
    """chips + pot + reserve + escrow, constant through the session."""
    alive: list[bool] = field(default_factory=list)
    dealer: int = 0
    deals_settled: int = 0
    deals_started: int = 0
    throw_in_streak: int = 0
    truncated: bool = False
    history: list[int] = field(default_factory=list)
    """Every action applied, in order."""
    deals: list[DealSpec] = field(default_factory=list)
    results: list[DealResult] = field(default_factory=list)

    def copy(self, rng: Any) -> Session:
        new = _copy_slots(self)
        new.rng = rng
        return new


@dataclass(slots=True, eq=False)
class Deal:
    """The current deal: cards, decisions, tricks. A ruleset may extend it with fields of its own.

    Card sets are bit masks over the deck. The stock is a list with its top
    card at the **end** (so drawing is ``pop()``). A new deal is a new object
    (:meth:`Game.start_deal`); nothing of the previous deal survives in it.
    """

    n: int
    start_chips: list[int]
    """Chips by seat when this deal started (before the ante)."""
    stage: int = -1
    """Index of the stage of the deal procedure the deal is in (``Game.stages``)."""
    given: DealSpec | None = None
    """The cards fixed for this deal by the caller (``reset(options={"deal": ...})``), dealt when it is dealt."""
    undealt: bool = True
    """True until the cards are dealt (e.g. during the classic offer to deal or push)."""
    stakes_paid: bool = False
    """The stakes of this deal were paid before it was built (``new_session(..., ante=False)``): the stake
    stages pay nothing."""
    hands: list[int] = field(default_factory=list)
    seen: list[bool] = field(default_factory=list)
    """False while a seat has not looked at its hand (the dealer's blind knock)."""
    blind: list[int] = field(default_factory=list)
    """Cards in a seat's hand that it has not seen (drawn blind after a knock)."""
    discards: list[int] = field(default_factory=list)
    drawn: list[int] = field(default_factory=list)
    dead: int = 0
    """Hands of seats that passed."""
    discard_pile: int = 0
    stock: list[int] = field(default_factory=list)
    trump_card: int = 0
    trump_suit: int = 0
    tables: TrumpTables | None = None
    trump_face_up: bool = False
    trump_holder: int | None = None
    knocked: bool | None = None
    """The dealer's blind knock: None before (or without) the decision."""
    roles: list[Role] = field(default_factory=list)
    mauschler: int | None = None
    """The seat that must take two tricks (mauschler, knocker, Mousel's committed player), if any."""
    exchanged: list[int | None] = field(default_factory=list)
    """Cards each seat exchanged (None: not yet)."""
    marked: int = 0
    xmin: int = 0
    xcap: int = 0
    xturns: list[Any] = field(default_factory=list)
    """The :class:`ExchangeTurn` of every seat in the exchange queue."""
    participants: list[int] = field(default_factory=list)
    next_player: list[int] = field(default_factory=list)
    trick: list[tuple[int, int]] = field(default_factory=list)
    tricks: list[list[tuple[int, int]]] = field(default_factory=list)
    leader: int | None = None
    win_seat: int = 0
    win_card: int = 0
    led_suit: int = 0
    tricks_won: list[int] = field(default_factory=list)
    plan: list[tuple[int, Any]] = field(default_factory=list)
    """The exchange order the bidding decided: ``(seat, ExchangeTurn)`` pairs for the :class:`Exchange` stage."""

    def __post_init__(self) -> None:
        n = self.n
        self.hands = [0] * n
        self.seen = [True] * n
        self.blind = [0] * n
        self.discards = [0] * n
        self.drawn = [0] * n
        self.roles = [Role.UNDECIDED] * n
        self.exchanged = [None] * n
        self.next_player = [0] * n
        self.tricks_won = [0] * n

    def copy(self) -> Deal:
        return _copy_slots(self)

    def shown(self) -> int:
        """Cards shown to every seat during the deal (a ruleset may override; e.g. Vierling quartets)."""
        return 0


class State:
    """One session: the :class:`Session`, the current :class:`Deal` and the decision cursor.

    Mutable; use :meth:`Game.clone` to branch.
    """

    __slots__ = ("session", "deal", "phase", "to_act", "queue", "qpos")

    def __init__(self, session: Session, deal: Deal) -> None:
        self.session = session
        self.deal = deal
        self.phase = Phase.OVER
        self.to_act: int | None = None
        self.queue: list[int] = []
        """Seats still to be asked in the current phase, from ``qpos`` on."""
        self.qpos = 0

    @property
    def over(self) -> bool:
        return self.phase is Phase.OVER

    @property
    def rng(self) -> Any:
        """The session's chance source (see "Chance"); assigning it replaces the source for what follows."""
        return self.session.rng

    @rng.setter
    def rng(self, value: Any) -> None:
        self.session.rng = value

    @property
    def n(self) -> int:
        return self.session.n



# ---------------------------------------------------------------------- stages


class Stage:
    """One step of a ruleset's deal procedure (RULES.md §2.x); see "How a deal is played".

    ``section`` cites RULES.md (and its decisions Dn); ``phases`` are the
    decisions the stage asks. :meth:`enter` returns True when the stage is done
    at once (the engine enters the next one), False when it asked a decision
    or ended the deal.
    """

    section: str = ""
    phases: tuple[Phase, ...] = ()
    actions: dict[Phase, str] = {}
    """The action strings of each phase the stage asks (the docs' table)."""

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        return True

    def legal(self, g: Game, st: State, seat: int) -> list[int]:
        raise NotImplementedError

    def act(self, g: Game, st: State, seat: int, action: int, results: list[DealResult]) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__

    def deal_class(self) -> type[Deal] | None:
        """A Deal subclass this stage needs (with its own fields), if any."""
        return None


class Ante(Stage):
    """The dealer pays min(stake, chips) into the pot (RULES.md §1.6)."""

    section = "§1.6 ante"

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        if not st.deal.stakes_paid:
            g.ante(st, st.session.dealer)
        return True


class DealCards(Stage):
    """Deal by the ruleset's pattern from forehand, dealer last, and turn the trump card (RULES.md §1.5)."""

    section = "§1.5 dealing"

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        g.deal_cards(st, st.deal.given)
        return True


class StockRule:
    """A stock-shortage policy of RULES.md §1.7: how many cards an exchange may take, and the refill."""

    kind: StockPolicy

    def cap(self, stock: int, limit: int, extra: int = 0) -> int:
        """Most cards a seat may discard now (``extra``: cards it receives from elsewhere, e.g. the trump card)."""
        return limit

    def refill(self, g: Game, st: State) -> None:
        """The stock is empty and a card must be drawn: make a new stock."""
        raise NotImplementedError


class CapStock(StockRule):
    """CAP (D3): the action mask never lets an exchange draw more than the stock holds."""

    kind = StockPolicy.CAP

    def cap(self, stock: int, limit: int, extra: int = 0) -> int:
        return min(limit, stock + extra)

    def refill(self, g: Game, st: State) -> None:
        raise RuntimeError("the CAP policy never reshuffles; the mask should have prevented this draw")


class ReshuffleStock(StockRule):
    """RESHUFFLE (D12, D26): the discard pile (own discards included, dead cards not) becomes the stock."""

    kind = StockPolicy.RESHUFFLE

    def pool(self, g: Game, st: State) -> list[int]:
        d = st.deal
        pool = list(iter_bits(d.discard_pile))
        d.discard_pile = 0
        return pool

    def refill(self, g: Game, st: State) -> None:
        pool = self.pool(g, st)
        if not pool:
            raise RuntimeError("nothing left to reshuffle")
        order = st.rng.permutation(len(pool))
        st.deal.stock = [pool[i] for i in order]


class ReshuffleTrumpStock(ReshuffleStock):
    """RESHUFFLE+TRUMP (classic): the face-up trump card is shuffled in too, unless the dealer knocked (D11)."""

    kind = StockPolicy.RESHUFFLE_TRUMP

    def pool(self, g: Game, st: State) -> list[int]:
        pool = super().pool(g, st)
        d = st.deal
        if d.trump_face_up and not d.knocked:
            pool.append(d.trump_card)
            d.trump_face_up = False
        return pool


STOCK_RULES: dict[StockPolicy, StockRule] = {rule.kind: rule for rule in (CapStock(), ReshuffleStock(),
                                                                          ReshuffleTrumpStock())}


class ExchangeTurn:
    """What one seat's exchange allows and what ``done`` does: draw |D| from the stock (RULES.md §1.7).

    Rulesets subclass it for their special exchanges (a knocker's, a decide-phase
    exchange). :meth:`open` sets the bounds on the marks; :meth:`finish` draws;
    :meth:`after` says where play goes next (by default the next exchanger).
    """

    def open(self, g: Game, st: State, seat: int) -> None:
        d = st.deal
        d.xmin = 0
        d.xcap = g.stock.cap(len(d.stock), g.exchange_limit)

    def finish(self, g: Game, st: State, seat: int, k: int) -> None:
        d = st.deal
        d.exchanged[seat] = k
        got = g.draw(st, k)
        d.hands[seat] |= got
        d.drawn[seat] |= got

    def after(self, g: Game, st: State, results: list[DealResult]) -> None:
        g.next_exchanger(st, results)


NORMAL_EXCHANGE = ExchangeTurn()


class Exchange(Stage):
    """Exchanges in the order the bidding left in ``deal.exchange_plan`` (RULES.md §1.7)."""

    section = "§1.7 exchange"
    phases = (Phase.EXCHANGE,)
    actions = {Phase.EXCHANGE: "card codes (each marks one discard), then `done`"}

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        plan = st.deal.plan
        g.start_exchange(st, [seat for seat, _ in plan], [turn for _, turn in plan])
        return False


class Play(Stage):
    """The tricks, from ``deal.leader``, under the ruleset's trick profile (RULES.md §1.3, §1.4)."""

    section = "§1.3-1.4 tricks"
    phases = (Phase.PLAY,)
    actions = {Phase.PLAY: "card codes"}

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        g.start_play(st)
        return False


class Settle(Stage):
    """Settle the tricks by the ruleset's scoring object (RULES.md §3)."""

    section = "§3 settlement"

    def __init__(self, scoring: Any) -> None:
        self.scoring = scoring

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        results.append(self.scoring.settle(g, st))
        return False

    def describe(self) -> str:
        return f"Settle({type(self.scoring).__name__})"


class TrickHook:
    """A ruleset's addition to the card play (Belli penalty, Muschka's ace of spades). Defaults do nothing."""

    def start(self, g: Game, st: State) -> None:
        """The card play begins."""

    def beats(self, g: Game, st: State, seat: int, card: int) -> bool:
        """Decide the trick's winner after ``card`` (not the lead) instead of the tables; True if decided."""
        return False

    def trick_done(self, g: Game, st: State, trick: list[tuple[int, int]]) -> None:
        """A trick is complete (before its winner is credited)."""


class ScoringRule:
    """How a deal is settled (a ruleset's scoring object). The defaults are those of the chip rulesets."""

    kind: Scoring
    uses_chips = True
    """Seats at 0 chips are eliminated at the end of a deal (RULES.md §3.5)."""

    def open_session(self, g: Game, session: Session, chips: Sequence[int] | None,
                     scores: Sequence[int] | None) -> None:
        """Set the session's chips (and scores) at its start."""
        session.chips = list(chips) if chips is not None else [g.options.bankroll] * g.n

    def unit(self, g: Game) -> int:
        """The amount the observation divides chips (or scores) by: the bankroll."""
        return g.options.bankroll

    def settle(self, g: Game, st: State) -> DealResult:
        """Settle the tricks of the deal (the last stage)."""
        raise NotImplementedError

    def settle_lone(self, g: Game, st: State, seat: int) -> DealResult:
        """A single seat is left in the deal: it takes the pot without play."""
        return g.settle_no_play(st, seat)

    def check(self, g: Game, st: State) -> list[str]:
        """Extra invariants of this scoring (problems found, as text)."""
        return []


def plain_trump_order(g: Game, trump_suit: int, suit_cards: list[int]) -> tuple[int, list[int]]:
    """No permanent trumps: the trump suit in the ruleset's rank order."""
    return 0, suit_cards


@dataclass
class Rules:
    """A ruleset's rule objects for one configuration, built by ``spec.rules(game)``; the core calls nothing else."""

    stages: Sequence[Stage]
    """The deal procedure, in the order of the ruleset's section of RULES.md."""
    scoring: ScoringRule
    deal_pattern: tuple[int | str, ...]
    stake: int = 0
    exchange_limit: int = 0
    trick_hooks: Sequence[TrickHook] = ()
    end_hooks: Sequence[Any] = ()
    """Extra session ends: ``hook(game, state) -> bool`` after every deal (e.g. Muschka's exact 0)."""
    deal_class: type[Deal] = Deal
    trump_order: Any = plain_trump_order
    """``(game, trump_suit, suit cards high to low) -> (permanent trumps mask, every trump high to low)``."""
    pieces: Sequence[Any] = ()
    """Observation pieces this configuration adds (see :mod:`mauscheln_env.observation`)."""


# ---------------------------------------------------------------------- the game


class Game:
    """Static tables, the rule objects, and the rules' interpreter for one configuration."""

    def __init__(self, config: Any) -> None:
        self.config = config
        spec = config.spec
        self.spec = spec
        self.options = config.options
        self.ruleset = spec.name
        self.deck: Deck = config.deck
        self.n = config.num_players
        self.num_cards = len(self.deck)
        self.hand_size = spec.hand_size
        self.num_tricks = spec.hand_size
        self.direction = spec.direction
        self.profile: TrickProfile = spec.trick_profile
        self.stock_policy: StockPolicy = spec.stock_policy
        self.stock: StockRule = STOCK_RULES[spec.stock_policy]
        self.named_actions = spec.named_actions
        self.num_actions = config.num_actions
        self.action_ids = {name: self.num_cards + i for i, name in enumerate(spec.named_actions)}
        self._action_strings = list(self.deck.codes) + list(spec.named_actions)
        self.rank_pos = tuple(spec.rank_order.index(code[0]) for code in self.deck.codes)
        a = self.action_ids
        self.KNOCK, self.NO_KNOCK = a.get("knock"), a.get("no_knock")
        self.MAUSCHELN, self.PASS, self.GO, self.DONE = a.get("mauscheln"), a.get("pass"), a.get("go"), a.get("done")
        self.IN, self.IN_LEAD, self.OUT = a.get("in"), a.get("in_lead"), a.get("out")
        self.STAY, self.DEAL, self.PUSH = a.get("stay"), a.get("deal"), a.get("push")
        self.ANNOUNCE, self.SILENT, self.SWAP = a.get("announce"), a.get("silent"), a.get("swap")
        self.TRUMP_BY_SUIT = tuple(a.get(f"trump:{s}") for s in "CSHD")
        rules = spec.rules(self)
        self.rules = rules
        self.stages: tuple[Stage, ...] = tuple(rules.stages)
        self.scoring = rules.scoring
        self.deal_pattern = rules.deal_pattern
        self.trick_hooks = tuple(rules.trick_hooks)
        self.end_hooks = tuple(rules.end_hooks)
        self._deal_class = rules.deal_class
        self.stake = rules.stake
        self.exchange_limit = rules.exchange_limit or self.hand_size
        self.tables = tuple(self._build_tables(s) for s in range(4))
        self._handlers: dict[Phase, Stage] = {Phase.EXCHANGE: _EXCHANGE, Phase.PLAY: _PLAY}
        for stage in self.stages:
            for phase in stage.phases:
                if phase not in (Phase.EXCHANGE, Phase.PLAY):
                    self._handlers[phase] = stage

    def _build_tables(self, trump_suit: int) -> TrumpTables:
        """Trump tables with this ruleset's permanent trumps (RULES.md §1.3)."""
        deck, order = self.deck, self.spec.rank_order
        suit_cards = sorted(
            (c for c in range(len(deck)) if deck.suit[c] == trump_suit), key=lambda c: order.index(deck.codes[c][0])
        )
        permanent, trump_order = self.rules.trump_order(self, trump_suit, suit_cards)
        return build_trump_tables(deck, order, trump_suit, permanent, tuple(trump_order))

    # ------------------------------------------------------------------ actions
    def action_to_str(self, action: int) -> str:
        if not isinstance(action, (int, np.integer)) or isinstance(action, (bool, np.bool_)) \
                or not 0 <= action < self.num_actions:
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
        return self.next_live(state.session.alive, seat)

    def order_from(self, state: State, seat: int) -> list[int]:
        """Live seats in order from ``seat`` (``seat`` first if it is live)."""
        return self.live_from(state.session.alive, seat)

    def next_live(self, alive: Sequence[bool], seat: int) -> int:
        """The next seat after ``seat`` in the ruleset's direction among the ``alive`` ones."""
        n, d = self.n, self.direction
        s = (seat + d) % n
        while not alive[s]:
            s = (s + d) % n
        return s

    def live_from(self, alive: Sequence[bool], seat: int) -> list[int]:
        """The ``alive`` seats in order from ``seat`` (``seat`` first if it is alive)."""
        n, d = self.n, self.direction
        return [(seat + d * k) % n for k in range(n) if alive[(seat + d * k) % n]]

    def forehand(self, state: State) -> int:
        return self.succ(state, state.session.dealer)

    # ------------------------------------------------------------------ sessions
    def new_session(
        self,
        rng: Any,
        *,
        dealer: int | None = None,
        chips: Sequence[int] | None = None,
        scores: Sequence[int] | None = None,
        pot: int = 0,
        alive: Sequence[bool] | None = None,
        deal: DealSpec | dict | None = None,
        ante: bool = True,
    ) -> State:
        """Start a session: the first deal begins (ante, cards) and its first decision is asked.

        ``dealer`` defaults to a draw from ``rng``; ``chips`` to the bankroll
        (``scores`` to the start score in muschka); ``alive`` marks seats that
        are out of the session (eliminated: never dealt in, never asked; a
        search starting mid-session uses it), by default every seat. ``deal``
        fixes the first deal: a complete :class:`DealSpec`, or a dict with any of
        ``hands`` ({seat: [card ids]}), ``trump`` and ``stock`` (top first) that
        :meth:`fill_deal` completes from the seeded shuffle. ``ante=False``
        says that ``chips`` and ``pot`` are already those after the first deal's
        stakes (a search rebuilding the deal in progress from what a seat
        knows): its stake stages pay nothing (and ask nothing).
        """
        n = self.n
        session = Session(n, rng, chips=[])
        if alive is not None:
            if len(alive) != n or sum(bool(a) for a in alive) < 2:
                raise DealError(f"alive must list {n} seats with at least two live; got {list(alive)!r}")
            session.alive = [bool(a) for a in alive]
        else:
            session.alive = [True] * n
        self.scoring.open_session(self, session, chips, scores)
        session.pot = pot
        session.total = sum(session.chips) + pot
        if dealer is None:
            dealer = int(rng.integers(n))
        if not session.alive[dealer]:
            raise DealError(f"dealer seat {dealer} is not live")
        session.dealer = dealer
        state = State(session, self._deal_class(n, list(session.chips)))
        if isinstance(deal, dict):
            deal = deal["spec"] if "spec" in deal else self.fill_deal(state, dealer, **deal)
        if deal is not None:
            self.check_deal(state, deal)
        self.start_deal(state, deal, stakes_paid=not ante)
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
            want = self.hand_size if state.session.alive[seat] else 0
            if len(hand) != want:
                raise DealError(f"hand of seat {seat} has {len(hand)} cards; it must have {want}")

    def clone(self, state: State, rng: Any = None) -> State:
        """An independent copy of ``state``: every list of the session and the deal is copied.

        The random generator is copied too (``copy.deepcopy``), so the copy draws
        exactly the numbers the original would have drawn; pass ``rng`` to give
        the copy another generator, e.g. ``rng=state.rng`` to share it (cheaper,
        for a search that stays inside one deal: the branches then advance one
        generator). Completed tricks, deal specs and results are shared: the
        engine never changes them once stored.
        """
        new = object.__new__(State)
        new.session = state.session.copy(copy.deepcopy(state.session.rng) if rng is None else rng)
        new.deal = state.deal.copy()
        new.phase = state.phase
        new.to_act = state.to_act
        new.queue = state.queue.copy()
        new.qpos = state.qpos
        return new

    def with_hand(self, state: State, seat: int, hand: int) -> State:
        """A copy of ``state`` (sharing its generator) in which ``seat`` holds the cards ``hand`` instead.

        For search over hidden cards: replaying a seat's known play on stand-in
        cards (the card it played must be in its hand). Nothing else is
        adjusted, so the copy's cards need not satisfy :meth:`check_invariants`.
        """
        new = self.clone(state, rng=state.session.rng)
        new.deal.hands[seat] = hand
        return new

    def deal_from_deck(self, order: Sequence[int], dealer: int, alive: Sequence[bool] | None = None) -> DealSpec:
        """Deal a deck order (top card first) by the ruleset's pattern (RULES.md §1.5).

        ``alive`` marks the seats dealt in (by default every seat).
        """
        alive = [True] * self.n if alive is None else alive
        seats = self.live_from(alive, self.next_live(alive, dealer))
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
        alive = state.session.alive

        def claim(card: int, where: str) -> None:
            if card in seen:
                raise DealError(f"card {self.deck.codes[card]} appears twice in the deal ({seen[card]} and {where})")
            seen[card] = where

        for seat, cards in hands.items():
            if not alive[seat]:
                raise DealError(f"seat {seat} has no chips and is not dealt in")
            if len(cards) != self.hand_size:
                raise DealError(
                    f"hand of seat {seat} has {len(cards)} cards; a hand in {self.ruleset} has {self.hand_size}"
                )
            for c in cards:
                claim(c, f"hand of seat {seat}")
        if trump is not None:
            claim(trump, "trump")
        for c in stock:
            claim(c, "stock")
        dealt = [s for s in range(self.n) if alive[s]]
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

    # ------------------------------------------------------------------ the deal procedure
    def start_deal(self, state: State, deal: DealSpec | None = None, stakes_paid: bool = False) -> None:
        """Begin a deal: a new :class:`Deal` object, then the ruleset's stages from the first.

        ``deal`` fixes its cards (validated by the caller with :meth:`check_deal`).
        """
        session = state.session
        session.deals_started += 1
        state.deal = self._deal_class(self.n, list(session.chips))
        state.deal.given = deal
        state.deal.stakes_paid = stakes_paid
        self.proceed(state, [])

    def proceed(self, state: State, results: list[DealResult]) -> None:
        """Enter the stages after the current one until one asks a decision or ends the deal."""
        stages = self.stages
        i = state.deal.stage + 1
        while i < len(stages):
            state.deal.stage = i  # (a stage may replace the deal object: a void deal is redealt)
            if not stages[i].enter(self, state, results):
                return
            i += 1
        raise RuntimeError(f"the deal procedure of {self.ruleset} ran past its last stage without ending the deal")

    def goto(self, state: State, stage: type[Stage], results: list[DealResult]) -> None:
        """Jump forward to the first stage of type ``stage`` (RULES.md's "go to step k") and enter it."""
        for i in range(state.deal.stage + 1, len(self.stages)):
            if isinstance(self.stages[i], stage):
                state.deal.stage = i - 1
                self.proceed(state, results)
                return
        raise RuntimeError(f"no {stage.__name__} stage after stage {state.deal.stage} in {self.ruleset}")

    def handler(self, phase: Phase) -> Stage:
        """The stage that asks the decision ``phase`` (the core's for the exchange and the card play)."""
        return self._handlers[phase]

    def stage(self, state: State) -> Stage:
        """The stage the current deal is in."""
        return self.stages[state.deal.stage]

    def ask(self, state: State, phase: Phase, queue: list[int]) -> None:
        """Ask ``queue`` (in order) the decision ``phase``; the first seat of the queue acts."""
        state.phase = phase
        state.queue = queue
        state.qpos = 0
        state.to_act = queue[0] if queue else None

    def advance(self, state: State) -> bool:
        """Move to the next seat in the queue; False when the queue is exhausted."""
        state.qpos += 1
        if state.qpos < len(state.queue):
            state.to_act = state.queue[state.qpos]
            return True
        return False

    def ante(self, state: State, seat: int, amount: int | None = None) -> int:
        """``seat`` pays min(amount, chips) into the pot (default: the stake); returns what was paid."""
        session = state.session
        paid = min(self.stake if amount is None else amount, session.chips[seat])
        session.chips[seat] -= paid
        session.pot += paid
        return paid

    def deal_cards(self, state: State, deal: DealSpec | None) -> None:
        """Put a deal's cards in place: hands, stock, trump card (a shuffle of the deck when ``deal`` is None)."""
        session, d = state.session, state.deal
        if deal is None:
            order = state.rng.permutation(self.num_cards).tolist()
            deal = self.deal_from_deck(order, session.dealer, session.alive)
        if not session.deals or session.deals[-1] is not deal:
            session.deals.append(deal)
        d.undealt = False
        hands = d.hands
        for s, cards in enumerate(deal.hands):
            m = 0
            for c in cards:
                m |= 1 << c
            hands[s] = m
        d.stock = list(reversed(deal.stock))
        d.trump_card = deal.trump
        d.trump_suit = self.deck.suit[deal.trump]
        d.tables = self.tables[d.trump_suit]
        d.trump_face_up = True

    def redeal(self, state: State) -> None:
        """Void the cards of the deal and deal afresh (same deal, same dealer, no new ante; e.g. D19)."""
        old = state.deal
        new = self._deal_class(self.n, old.start_chips)
        new.stage = old.stage
        state.deal = new
        self.deal_cards(state, None)

    # ------------------------------------------------------------------ legality
    def legal_actions(self, state: State) -> list[int]:
        """Legal action ids for the seat to act, in increasing order (empty when over)."""
        phase = state.phase
        if phase is Phase.PLAY:
            return list(iter_bits(self.legal_play_mask(state)))
        if phase is Phase.OVER:
            return []
        return self._handlers[phase].legal(self, state, state.to_act)

    def legal_play_mask(self, state: State, hand: int | None = None) -> int:
        """The cards the seat to act may play now, as a mask: of its hand, or of ``hand`` if given.

        ``hand`` lets a search ask what another holding would have allowed in
        the same trick (the obligations of RULES.md §1.4 through
        :func:`~mauscheln_env.tricks.legal_follow`), without touching the state.
        """
        d = state.deal
        if hand is None:
            hand = d.hands[state.to_act]
        if not d.trick:
            return hand
        t = d.tables
        return legal_follow(self.profile, hand, t.eff_suit_mask[d.led_suit], t.trump_mask, t.beats[d.win_card])

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
        phase = state.phase
        if phase is Phase.OVER:
            raise SessionOverError("the session is over; start a new one (reset) before stepping")
        action = int(action)
        if not self.is_legal(state, action):
            legal = ", ".join(self._action_strings[a] for a in self.legal_actions(state))
            shown = self._action_strings[action] if 0 <= action < self.num_actions else repr(action)
            raise IllegalActionError(
                f"action {shown} is not legal for seat {state.to_act} in phase "
                f"{PHASE_NAMES[phase]}; legal: {legal}"
            )
        state.session.history.append(action)
        results: list[DealResult] = []
        self._handlers[phase].act(self, state, state.to_act, action, results)
        return results

    # ------------------------------------------------------------------ primitives for rule objects
    def fold(self, state: State, seat: int) -> None:
        """``seat`` passes: out of the deal, its hand dead."""
        d = state.deal
        d.roles[seat] = Role.OUT
        d.dead |= d.hands[seat]
        d.hands[seat] = 0

    def start_exchange(self, state: State, order: list[int], turns: list[ExchangeTurn]) -> None:
        state.deal.xturns = turns
        self.ask(state, Phase.EXCHANGE, order)
        self.open_exchange(state)

    def open_exchange(self, state: State) -> None:
        state.deal.marked = 0
        state.deal.xturns[state.qpos].open(self, state, state.to_act)

    def mark(self, state: State, seat: int, card: int) -> None:
        """``seat`` marks ``card`` for discarding: it leaves the hand face down at once."""
        d = state.deal
        bit = 1 << card
        d.hands[seat] ^= bit
        d.discards[seat] |= bit
        d.discard_pile |= bit
        d.marked += 1

    def take_trump_card(self, state: State, seat: int) -> None:
        """``seat`` takes the face-up trump card into hand (knock, Béatrix)."""
        d = state.deal
        bit = 1 << d.trump_card
        d.trump_holder = seat
        d.trump_face_up = False
        d.hands[seat] |= bit
        d.drawn[seat] |= bit

    def draw(self, state: State, k: int) -> int:
        """Draw ``k`` cards under the ruleset's shortage policy (RULES.md §1.7)."""
        got = 0
        d = state.deal
        for _ in range(k):
            if not d.stock:
                self.stock.refill(self, state)  # replaces d.stock
            got |= 1 << d.stock.pop()
        return got

    def next_exchanger(self, state: State, results: list[DealResult]) -> None:
        """After an exchange: the next seat of the queue exchanges, or the exchange stage is over."""
        if self.advance(state):
            self.open_exchange(state)
            return
        d = state.deal
        for s in range(self.n):
            d.blind[s] = 0  # every goer has exchanged: a knocker sees his cards
        self.proceed(state, results)

    def start_play(self, state: State) -> None:
        """The first trick: participants in the rules' direction from ``deal.leader``."""
        d = state.deal
        parts = [s for s in range(self.n) if d.roles[s] in PLAYING_ROLES]
        d.participants = parts
        leader = d.leader
        order = sorted(parts, key=lambda s: ((s - leader) * self.direction) % self.n)
        for i, s in enumerate(order):
            d.next_player[s] = order[(i + 1) % len(order)]
        for hook in self.trick_hooks:
            hook.start(self, state)
        state.phase = Phase.PLAY
        state.queue = []
        state.qpos = 0
        state.to_act = leader
        d.trick = []

    def visible_hand(self, state: State, seat: int) -> int:
        """The cards of ``seat``'s hand that seat has seen (blind knock cards excluded)."""
        d = state.deal
        if not d.seen[seat]:
            return 0
        return d.hands[seat] & ~d.blind[seat]

    # ------------------------------------------------------------------ settlement primitives
    def pay(self, state: State, seat: int, owed: int) -> int:
        """``seat`` pays min(owed, chips) (D5); returns what it paid (the caller says to whom)."""
        chips = state.session.chips
        paid = min(owed, chips[seat])
        chips[seat] -= paid
        return paid

    def credit_tricks(self, state: State, value: int, credits: list[int]) -> None:
        """Step 1 of RULES.md §3.1/§3.3: each participant receives its tricks times ``value`` from the pot."""
        session, d = state.session, state.deal
        for s in d.participants:
            credits[s] = d.tricks_won[s] * value
            session.chips[s] += credits[s]
            session.pot -= credits[s]

    def settle_no_play(self, state: State, seat: int) -> DealResult:
        """``seat`` takes the whole pot without play; nobody pays."""
        session = state.session
        pot = session.pot
        credits = [0] * self.n
        credits[seat] = pot
        session.chips[seat] += pot
        session.pot = 0
        return self.finish(state, DealKind.NO_PLAY, pot, credits, [0] * self.n, seat)

    def throw_in(self, state: State) -> DealResult:
        """Nobody declared: the deal is void and the pot stays (a throw-in; does not count as settled)."""
        session = state.session
        result = DealResult(
            kind=DealKind.THROW_IN,
            dealer=session.dealer,
            pot_before=session.pot,
            pot_after=session.pot,
            deltas=[session.chips[s] - state.deal.start_chips[s] for s in range(self.n)],
            tricks=[0] * self.n,
            credits=[0] * self.n,
            debits=[0] * self.n,
        )
        session.results.append(result)
        session.throw_in_streak += 1
        self.next_deal(state)
        return result

    def finish(self, state: State, kind: DealKind, pot: int, credits: list[int], debits: list[int],
               who: int | None, deltas: list[int] | None = None, scores: list[int] | None = None) -> DealResult:
        """Record a settled deal and move on to the next (or end the session)."""
        session = state.session
        result = DealResult(
            kind=kind,
            dealer=session.dealer,
            pot_before=pot,
            pot_after=session.pot,
            deltas=deltas if deltas is not None else [session.chips[s] - state.deal.start_chips[s] for s in range(self.n)],
            tricks=list(state.deal.tricks_won),
            credits=credits,
            debits=debits,
            mauschler=who,
            scores=scores,
        )
        session.results.append(result)
        session.deals_settled += 1
        session.throw_in_streak = 0
        self.next_deal(state)
        return result

    def next_deal(self, state: State) -> None:
        """RULES.md §3.5: eliminate seats at 0 chips, end the session or rotate the deal."""
        session = state.session
        if self.scoring.uses_chips:
            for s in range(self.n):
                if session.alive[s] and session.chips[s] <= 0:
                    session.alive[s] = False
        max_deals = self.options.max_deals
        ended = sum(session.alive) < 3 or (max_deals is not None and session.deals_settled >= max_deals)
        for hook in self.end_hooks:
            ended = hook(self, state) or ended
        if ended:
            self._end_session(state)
            return
        if session.throw_in_streak >= self.options.max_throw_ins or \
                session.deals_settled >= self.options.max_session_deals:
            session.truncated = True
            self._end_session(state)
            return
        session.dealer = self.succ(state, session.dealer)
        self.start_deal(state)

    def _end_session(self, state: State) -> None:
        state.phase = Phase.OVER
        state.to_act = None
        state.queue = []

    # ------------------------------------------------------------------ invariants
    def check_invariants(self, state: State) -> None:
        """Raise :class:`RuntimeError` naming every inconsistency in ``state``.

        Checks: every card in exactly one place; chips + pot + reserve + escrow
        constant; hand sizes in play; the acting seat is live; no negative chips.
        """
        session, d = state.session, state.deal
        problems: list[str] = []
        places: list[tuple[str, int]] = [(f"hand {s}", h) for s, h in enumerate(d.hands)]
        places.append(("stock", sum(1 << c for c in d.stock)))
        if len(set(d.stock)) != len(d.stock):
            problems.append("stock holds a card twice")
        if d.trump_face_up:
            places.append(("trump card", 1 << d.trump_card))
        places.append(("discards", d.discard_pile))
        places.append(("dead", d.dead))
        played = 0
        for trick in [*d.tricks, d.trick]:
            for _, c in trick:
                if played >> c & 1:
                    problems.append(f"card {self.deck.codes[c]} played twice")
                played |= 1 << c
        places.append(("played", played))
        if d.undealt:
            places = [("undealt pack", self.deck.full_mask)]
        union = 0
        for name, mask in places:
            if union & mask:
                problems.append(f"{name} shares cards {self.deck.codes_of(union & mask)} with another place")
            union |= mask
        if union != self.deck.full_mask:
            problems.append(f"cards missing from every place: {self.deck.codes_of(self.deck.full_mask & ~union)}")
        if state.phase is not Phase.OVER and (state.to_act is None or not session.alive[state.to_act]):
            problems.append(f"seat to act {state.to_act} is not live")
        if state.phase is Phase.PLAY:
            done = len(d.tricks)
            for s in d.participants:
                played_now = any(p == s for p, _ in d.trick)
                expected = self.hand_size - done - played_now
                if d.hands[s].bit_count() != expected:
                    problems.append(f"seat {s} holds {d.hands[s].bit_count()} cards, expected {expected}")
            if d.tricks and not d.trick and state.to_act != d.leader:
                problems.append("the trick winner does not lead")
        money = sum(session.chips) + session.pot + session.reserve + sum(session.escrow)
        if money != session.total:
            problems.append(f"chips {sum(session.chips)} + pot {session.pot} + reserve {session.reserve} + escrow "
                            f"{sum(session.escrow)} != {session.total}")
        if any(c < 0 for c in session.chips) or session.pot < 0 or session.reserve < 0 \
                or any(e <= 0 for e in session.escrow):
            problems.append(f"negative chips, pot, reserve or escrow: {session.chips}, {session.pot}, {session.reserve}")
        problems += self.scoring.check(self, state)
        if problems:
            raise RuntimeError("invariant violated: " + "; ".join(problems))


class _ExchangeDecision(Stage):
    """The exchange decisions (``Phase.EXCHANGE``): mark cards one at a time, then ``done`` draws."""

    phases = (Phase.EXCHANGE,)
    actions = Exchange.actions

    def legal(self, g: Game, st: State, seat: int) -> list[int]:
        d = st.deal
        acts = list(iter_bits(d.hands[seat] & ~d.blind[seat])) if d.marked < d.xcap else []
        if d.marked >= d.xmin:
            acts.append(g.DONE)
        return acts

    def act(self, g: Game, st: State, seat: int, action: int, results: list[DealResult]) -> None:
        if action != g.DONE:
            g.mark(st, seat, action)
            return
        turn = st.deal.xturns[st.qpos]
        turn.finish(g, st, seat, st.deal.marked)
        turn.after(g, st, results)


class _PlayDecision(Stage):
    """The card play (``Phase.PLAY``): a card to the trick; the last card of the last trick settles."""

    phases = (Phase.PLAY,)
    actions = Play.actions

    def act(self, g: Game, st: State, seat: int, card: int, results: list[DealResult]) -> None:
        d = st.deal
        d.hands[seat] ^= 1 << card
        trick = d.trick
        if not trick:
            d.led_suit = d.tables.eff_suit[card]
            d.win_card = card
            d.win_seat = seat
        else:
            for hook in g.trick_hooks:
                if hook.beats(g, st, seat, card):
                    break
            else:
                if d.tables.beats[d.win_card] >> card & 1:
                    d.win_card = card
                    d.win_seat = seat
        trick.append((seat, card))
        if len(trick) < len(d.participants):
            st.to_act = d.next_player[seat]
            return
        winner = d.win_seat
        for hook in g.trick_hooks:
            hook.trick_done(g, st, trick)
        d.tricks_won[winner] += 1
        d.tricks.append(trick)
        d.trick = []
        d.leader = winner
        st.to_act = winner
        if len(d.tricks) == g.num_tricks:
            g.proceed(st, results)


_EXCHANGE = _ExchangeDecision()
_PLAY = _PlayDecision()
