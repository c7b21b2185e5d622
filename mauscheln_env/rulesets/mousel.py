"""`mousel`: Danish Mousel ([004]) — RULES.md §2.4 and decision D24.

Read beside RULES.md §2.4. The deal procedure (:func:`rules`), in its order:

1. ANTE — the dealer pays S = 4 (D24; :class:`~mauscheln_env.engine.Ante`).
2. DEAL — pattern 2,T,2 from forehand, the dealer's left (:class:`~mauscheln_env.engine.DealCards`).
3. KNOCK (option ``knock``, blind, D9) — :class:`MouselKnock`: the knocking dealer is committed and IN, and
   takes the trump card by the modern procedure at his exchange turn (D24).
4. DECLARE — :class:`MouselDeclare`: ``out`` | ``in`` | ``in_lead`` (with ``volunteer_leader``) from forehand;
   the auto rule (the last seat is IN when all others are OUT); a single IN takes the pot without play.
5. COMMITTED player O — the knocker, else the first ``in_lead``, else forehand if IN (D24): needs 2 tricks,
   every other IN seat 1.
6. EXCHANGE — from O (or the first IN seat from forehand), 0..min(L, stock) cards (``exchange_limit`` L, CAP).
7. PLAY — 4 tricks, profile M; O leads (or the first IN seat from forehand).
8. SETTLE — :class:`FlatBete`: each IN seat short of its requirement pays a flat P (D24).
9. NEXT — dealer := succ(dealer) (the core).
"""

from __future__ import annotations

from dataclasses import dataclass

from mauscheln_env.cards import RANKS, Deck
from mauscheln_env.engine import (
    Ante,
    Bidding,
    DealCards,
    DealResult,
    Exchange,
    Game,
    Phase,
    Play,
    Role,
    Rules,
    Scoring,
    Settle,
    Stage,
    State,
    StockPolicy,
)
from mauscheln_env.errors import ConfigError
from mauscheln_env.options import (
    Options,
    at_least,
    bankroll_option,
    check_session_bound,
    deck_size_option,
    max_deals_option,
    max_session_deals_option,
    max_throw_ins_option,
    option,
    stake_option,
)
from mauscheln_env.rulesets.base import RulesetSpec
from mauscheln_env.rulesets.mauscheln import MODERN_KNOCK_TURN, NORMAL, BlindKnock, PerTrickBete, knock_rank_option
from mauscheln_env.tricks import TrickProfile


@dataclass(frozen=True)
class MouselOptions(Options):
    stake: int = stake_option(4, 4)
    bankroll: int = bankroll_option(40)
    deck_size: int | None = deck_size_option("32 (3-5 players) or 52 (any; forced for 6-7)")
    volunteer_leader: bool = option(False, "True or False",
                                    "A seat may say in_lead to become the committed player (§2.4).")
    exchange_limit: int = option(4, "1, 2, 3 or 4", "Most cards one seat may exchange.", check=at_least(1, 4))
    knock: bool = option(False, "True or False",
                         "The dealer may knock blind, becoming the committed player (§2.4 step 3).")
    knock_min_rank: str = knock_rank_option()
    max_deals: int | None = max_deals_option()
    max_throw_ins: int = max_throw_ins_option()
    max_session_deals: int = max_session_deals_option()

    def check(self, num_players: int) -> None:
        check_session_bound(self)


def deck(num_players: int, opts: MouselOptions) -> Deck:
    """§1.2: 32 cards (A-7, 3-5 players) or 52 (any table); 6-7 players need 52."""
    size = opts.deck_size
    if size is None:
        size = 32 if num_players <= 5 else 52
    if size not in (32, 52):
        raise ConfigError(f"deck_size={size} is not allowed in mousel; allowed: 32 (3-5 players) or 52")
    if num_players >= 6 and size != 52:
        raise ConfigError(f"deck_size={size} is not allowed with {num_players} players in mousel: "
                          "6-7 players need 52 cards")
    return Deck("AKQJT987") if size == 32 else Deck(RANKS)


class MouselKnock(BlindKnock):
    """§2.4 step 3: the dealer's blind knock (D9); a knocker is the committed player and IN (D24)."""

    section = "§2.4 step 3 knock (D9, D24)"

    def knocks(self, g: Game, st: State, seat: int, results: list[DealResult]) -> None:
        d = st.deal
        d.roles[seat] = Role.COMMITTED
        d.mauschler = seat
        g.proceed(st, results)


class MouselDeclare(Stage):
    """§2.4 step 4-6: in or out from forehand (a knocking dealer is skipped), the committed player, the exchange."""

    section = "§2.4 steps 4-6 declare (D24)"
    phases = (Phase.DECLARE,)
    actions = {Phase.DECLARE: "`in`, `in_lead` (with `volunteer_leader`), `out`"}

    def __init__(self, volunteer_leader: bool) -> None:
        self.volunteer_leader = volunteer_leader

    def enter(self, g: Game, st: State, results: list[DealResult]) -> bool:
        order = g.order_from(st, g.forehand(st))
        if st.deal.knocked:
            order = [s for s in order if s != st.session.dealer]
        g.ask(st, Phase.DECLARE, order)
        self._auto(g, st)
        self._maybe_end(g, st, results)
        return False

    def legal(self, g: Game, st: State, seat: int) -> list[int]:
        d = st.deal
        acts = [g.IN]
        if self.volunteer_leader and not d.knocked and not any(r is Role.COMMITTED for r in d.roles):
            acts.append(g.IN_LEAD)
        acts.append(g.OUT)
        return sorted(acts)

    def act(self, g: Game, st: State, seat: int, action: int, results: list[DealResult]) -> None:
        d = st.deal
        if action == g.OUT:
            g.fold(st, seat)
        elif action == g.IN_LEAD:
            d.roles[seat] = Role.COMMITTED
            d.mauschler = seat
        else:
            d.roles[seat] = Role.IN
        if g.advance(st):
            self._auto(g, st)
        else:
            st.to_act = None
        self._maybe_end(g, st, results)

    def _auto(self, g: Game, st: State) -> None:
        """The auto rule: a seat whose turn comes when every other seat is OUT is IN without deciding."""
        d = st.deal
        alive = st.session.alive
        while st.to_act is not None:
            seat = st.to_act
            if all(d.roles[s] is Role.OUT for s in range(g.n) if alive[s] and s != seat):
                d.roles[seat] = Role.IN
                if not g.advance(st):
                    st.to_act = None
                continue
            return

    def _maybe_end(self, g: Game, st: State, results: list[DealResult]) -> None:
        if st.phase is not Phase.DECLARE or st.to_act is not None:
            return
        d = st.deal
        ins = [s for s in g.order_from(st, g.forehand(st)) if d.roles[s] in (Role.IN, Role.COMMITTED)]
        if len(ins) == 1:
            results.append(g.settle_no_play(st, ins[0]))
            return
        fh = g.forehand(st)
        if d.mauschler is None and d.roles[fh] is Role.IN:
            d.roles[fh] = Role.COMMITTED
            d.mauschler = fh
        first = d.mauschler if d.mauschler is not None else ins[0]
        order = [s for s in g.order_from(st, first) if s in ins]
        dealer = st.session.dealer
        d.plan = [(s, MODERN_KNOCK_TURN if (d.knocked and s == dealer) else NORMAL) for s in order]
        d.participants = order
        d.leader = first
        g.proceed(st, results)


class FlatBete(PerTrickBete):
    """§3.1 for Mousel (D24): each IN seat below its requirement (2 committed, else 1) pays a flat P."""

    kind = Scoring.FLAT

    def owed(self, pot: int, need: int, tricks: int) -> int:
        return pot if tricks < need else 0


def rules(g: Game) -> Rules:
    o: MouselOptions = g.options
    scoring = FlatBete()
    stages = [
        Ante(),
        DealCards(),
        *([MouselKnock(o.knock_min_rank)] if o.knock else []),
        MouselDeclare(o.volunteer_leader),
        Exchange(),
        Play(),
        Settle(scoring),
    ]
    return Rules(
        stages=stages,
        scoring=scoring,
        deal_pattern=SPEC.deal_pattern,
        stake=o.stake,
        exchange_limit=min(SPEC.hand_size, o.exchange_limit),
    )


BRIEF = """\
Danish Mousel ([004], RULES.md §2.4). The dealer antes 4; 2 cards each, the trump
card, 2 more. From forehand each seat says `in` or `out`; a seat whose turn comes
when everyone else is out is in without asking, and a single seat in takes the
pot without play. The *committed* player needs two tricks: the knocking dealer,
else a volunteer who said `in_lead`, else the forehand if he is in; every other
seat in needs one. Seats exchange up to `exchange_limit` cards, play four tricks
under the Mauscheln obligations, and a seat short of its requirement pays the
pot once (a flat bête)."""
"""The rules in brief, for the ruleset's documentation page."""

SPEC = RulesetSpec(
    name="mousel",
    section="§2.4",
    min_players=3,
    max_players=7,
    direction=+1,
    hand_size=4,
    deal_pattern=(2, "T", 2),
    rank_order="AKQJT98765432",
    trick_profile=TrickProfile.M,
    stock_policy=StockPolicy.CAP,
    bidding=Bidding.MOUSEL,
    scoring=Scoring.FLAT,
    phases=("knock", "declare", "exchange", "play"),
    roles=("undecided", "out", "in", "committed"),
    named_actions=("knock", "no_knock", "done", "in", "in_lead", "out"),
    options_class=MouselOptions,
    deck_for=deck,
    rules=rules,
    brief=BRIEF,
    showcase={"knock": True, "volunteer_leader": True},
    doc="Danish Mousel ([004]): in or out, forehand committed, a flat bete.",
)
