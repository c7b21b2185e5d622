"""``beginner`` and ``expert`` for ``mauscheln_classic`` (the 1920s rules, [000]; RULES.md §2.3).

The seed's "Spielregeln" ([000]):

    "Wer das besetzte Trumpfas hat, mauschelt stets. Auch mit König und Dame
    oder dreifach besetztem König darf man es riskieren. Man spielt dann die
    Fehlfarbe auf. Wer zwei Trümpfe hat oder den blanken Trumpfkönig, geht in
    der Regel mit. Kauft man günstig (kleinen Trumpf), so gelingt es meistens,
    einen Stich hereinzuholen."
    "Fremde Asse behält man besser, als sie gegen ungewisse Ersatzkarten
    umzutauschen, nur wenn man Trumpfkönig blank hat, wirft man sie ab, um
    möglichst einen Trumpf zum König zu erhalten."
    "Wer als Mitgeher seinen Stich hat, tut gut, Trumpf nachzuziehen, wenn
    mehrere Spieler mitgehen, auf diese Weise wird am leichtesten einer ‚bet',
    worauf stets hinzustreben ist."
    and the worked game: the dealer knocks on the queen of trumps with a pot
    of six stakes, throws his trumpless hand, buys four blind, then discards
    the card he can spare and takes the knocked card.

``beginner`` follows the first paragraph literally:

* mauschel with the accompanied trump ace, or the trump king with the queen;
  go with two trumps, the trump ace or the trump king; knock on an ace only;
* exchange every card that is neither a trump nor an ace; a knocking dealer's
  final discard is his weakest card;
* deal (never push); play the strongest card that wins the trick, else the
  weakest.

``expert`` reads the whole passage against the table, with the trick model of
:class:`agents.scripted.common.TrickStrategy` for what the text leaves open
(the mauschler must make two tricks and pays the pot for each one missing, a
goer one):

* mauschel always with the accompanied trump ace; otherwise when the hand,
  after its best exchange, is worth more as the mauschler than passing,
  against the seats likely to go with, and with the pot won without play when
  nobody goes ("K+Q or a thrice-guarded king may risk it" is where that lands);
* go with two trumps or the bare trump king, and with a sure trick always; a
  knocking dealer (trump card, two exchanges) or a pot grown by betes asks for
  more (two trumps with a high one, or fewer rivals); one small trump goes
  only against few rivals ("Kauft man günstig ..."); the last seat, with
  nobody gone with, goes with one trump or a side ace (passing hands the
  mauschler the pot, which counts against the field); each seat that passed
  is one rival less;
* exchange as the text says: trumps and side aces stay, the rest goes; beside
  a bare trump king the side aces go too. A knocking dealer's blind buy (4b)
  keeps the same cards, counting the trump card he will take; his final
  discard (4d, and the forced knock) is the card least likely to take a trick,
  a side card that is the last of its suit a little sooner — so in the worked
  game he throws all four and then the queen of spades, as the text does;
* knock on the trump ace, on the king at a table of four or fewer, on the
  queen there too while the pot is small; the trump card counts as back in
  play once a reshuffle took it into the stock;
* play: the card with the best expected payoff of winning or losing this
  trick with the rest kept (win cheaply, keep the high trump while it is
  worth more later, throw losers when the trick is lost, count trumps and the
  voids shown; a declared mauschler is taken to hold the best trump unseen),
  and, with the own tricks made and two or more others still short, pull
  trumps to make one of them bête ("worauf stets hinzustreben ist");
* compulsions (Mauschelzwang, Mitgehzwang) come with the action mask and are
  simply obeyed; the cap only changes the pot the agent reads; deal rather
  than push: a push moves the stake on but buys nothing the text recommends
  ("Wer nicht geben will, braucht es nicht zu tun" is a permission).
"""

from __future__ import annotations

from agents.knowledge import Knowledge
from agents.scripted.common import DealView, Strategy, TrickStrategy, next_mark, play_high_or_low, pot_payoff
from agents.scripted.mauscheln import MAUSCHELN_ACTIONS
from mauscheln_env.cards import iter_bits
from mauscheln_env.engine import Role

CLASSIC_ACTIONS = MAUSCHELN_ACTIONS


def _final_discard(legal: list[int], done: int) -> bool:
    """The knocking dealer's last step (4d, or the forced knock): exactly one card, no ``done`` yet."""
    return done not in legal


class ClassicBeginner(Strategy):
    """The first paragraph of [000] "Spielregeln", literally; see the module docstring."""

    required_actions = CLASSIC_ACTIONS

    def _on_offer(self, k: Knowledge, legal: list[int]) -> int:
        return self._ids["deal"]

    def _on_knock(self, k: Knowledge, legal: list[int]) -> int:
        return self._ids["knock"] if self.is_ace(k.trump_card) else self._ids["no_knock"]

    def _on_declare(self, k: Knowledge, legal: list[int]) -> int:
        trumps = self.trumps_in(k, k.hand)
        ranks = [self._rank_pos[c] for c in trumps]
        strong = (0 in ranks and len(trumps) >= 2) or (1 in ranks and 2 in ranks)
        return self._ids["mauscheln"] if strong else self._ids["pass"]

    def _on_go_with(self, k: Knowledge, legal: list[int]) -> int:
        trumps = self.trumps_in(k, k.hand)
        top = any(self._rank_pos[c] <= 1 for c in trumps)
        return self._ids["go"] if len(trumps) >= 2 or top else self._ids["pass"]

    def _on_exchange(self, k: Knowledge, legal: list[int]) -> int:
        t = self.tables(k)
        throw = [c for c in iter_bits(k.hand) if not t.trump_mask >> c & 1 and not self.is_ace(c)]
        return next_mark(self, k, legal, throw)

    def _on_play(self, k: Knowledge, legal: list[int]) -> int:
        return play_high_or_low(self, k, legal)


class ClassicExpert(TrickStrategy):
    """All of [000] "Spielregeln", weighed with the trick model; see the module docstring."""

    required_actions = CLASSIC_ACTIONS
    knock_draws_trump_card = False  # 4b draws from the stock; the trump card comes at 4d
    go_rate = 0.45
    """Share of the seats still to decide that are expected to go with."""
    expected_draw = 2
    """Cards a seat that exchanges before this one is expected to draw."""
    declare_margin = 0.0
    """Share of the pot by which mauscheling must look better than passing (passing keeps the chance to
    go with a mauschler who may come)."""
    knock_queen = 1.0
    """Knock on a queen at a table of four or fewer (1) or not (0)."""
    mauschler_weight = 3.0
    """Trump weight of the mauschler's hand (he chose to play, with trumps)."""
    knocker_weight = 2.5
    """Trump weight of a knocking dealer's hand (the trump card and two exchanges)."""
    mauschler_top = 0.6
    """Chance that a declared mauschler holds the best trump this seat has not seen."""
    trump_weight = 1.8
    ruff_value = 0.4  # "es muss bedient oder ... getrumpft werden, und zwar auch dann, wenn ... höher getrumpft"
    side_discount = 0.7
    chance_power = 1.2

    # ------------------------------------------------------------------ payoff (RULES.md §3.1)
    def need_of(self, k: Knowledge, seat: int) -> int:
        return 2 if k.roles[seat] is Role.MAUSCHLER else 1

    def payoff(self, k: Knowledge, seat: int, tricks: int, need: int | None = None) -> float:
        """A quarter of the pot per trick, a bete of the pot per trick short of the requirement."""
        need = self.need_of(k, seat) if need is None else need
        return pot_payoff(k, seat, tricks, need, self.rules.num_tricks, per_missing_trick=True)

    def trick_unit(self, k: Knowledge) -> float:
        return k.pot // self.rules.num_tricks

    # ------------------------------------------------------------------ what a seat knows of the trump card
    def public_out_of_play(self, k: Knowledge) -> int:
        """The trump card is out of play while it lies face up; a reshuffle puts it back (RULES.md §1.7)."""
        if k.trump_holder is None and self._face_up():
            return 1 << k.trump_card
        return 0

    def _face_up(self) -> bool:
        if not self._reader.has("trump_face_up"):
            return True
        return bool(self.piece_value("trump_face_up")[0])

    # ------------------------------------------------------------------ context
    def _mauschler(self, k: Knowledge) -> int | None:
        return next((s for s in range(k.n) if k.roles[s] is Role.MAUSCHLER), None)

    def _undecided(self, k: Knowledge) -> int:
        return sum(1 for s in range(k.n) if s != k.seat and k.live[s] and k.roles[s] in (Role.UNDECIDED,
                                                                                          Role.DECLINED))

    def _rivals_going(self, k: Knowledge) -> tuple[list[int], float]:
        """The mauschler and the goers, and the share of the undecided seats expected to go with."""
        seats = [s for s in range(k.n) if s != k.seat and k.roles[s] in (Role.MAUSCHLER, Role.GOER)]
        return seats, self.go_rate * self._undecided(k)

    def _play_value(self, k: Knowledge, v: DealView, need: int, opp, before: int) -> float:
        """The hand's worth after its best exchange, with ``before`` seats exchanging first."""
        table = self.payoff_table(k, k.seat, need=need)
        fresh = self.stock_left(k) - self.expected_draw * before
        return self.exchange_plan(v, k.hand, table, limit=self.rules.hand_size, opp=opp, fresh=fresh)[1]

    def _exchanging_before(self, k: Knowledge) -> int:
        """Seats that exchange before this one: the mauschler, then the goers from his left."""
        m = self._mauschler(k)
        if m is None:
            return 0
        order = [(m + i) % k.n for i in range(1, k.n)]
        goers = [s for s in order[:order.index(k.seat)] if k.roles[s] is Role.GOER] if k.seat in order else []
        return 1 + len(goers)

    def seat_weight(self, k: Knowledge, seat: int) -> float:
        """The mauschler chose to play with trumps: "Wer das besetzte Trumpfas hat, mauschelt stets"."""
        if k.roles[seat] is Role.MAUSCHLER:
            return self.knocker_weight if k.knocked else self.mauschler_weight
        return self.trump_weight

    def likely_card(self, v: DealView, seat: int) -> tuple[int, float] | None:
        """A mauschler who declared (not a blind knocker) most likely holds the best trump still unseen."""
        k = v.k
        if k.roles[seat] is not Role.MAUSCHLER or k.knocked:
            return None
        trumps = v.unseen & v.t.trump_mask
        if not trumps:
            return None
        top = max(iter_bits(trumps), key=lambda c: self._power[k.trump_suit][c])
        return top, self.mauschler_top

    def _pressure(self, k: Knowledge) -> float:
        stake = max(1, self.rules.stake)
        return min(1.0, max(0.0, (k.pot - stake) / (4.0 * stake)))

    def _bar(self, k: Knowledge) -> float:
        return k.pot * (0.05 * self._pressure(k) - 0.04 * self.risk)

    # ------------------------------------------------------------------ decisions
    def _on_offer(self, k: Knowledge, legal: list[int]) -> int:
        return self._ids["deal"]

    def _on_knock(self, k: Knowledge, legal: list[int]) -> int:
        rank = self._rank_pos[k.trump_card]
        small = self.rules.n <= 4
        if rank == 0 or (rank == 1 and small) or (rank == 2 and small and self.knock_queen and self._pressure(k) <= 0.25 * (1 + self.risk)):
            return self._ids["knock"]
        return self._ids["no_knock"]

    def _on_declare(self, k: Knowledge, legal: list[int]) -> int:
        trumps = self.trumps_in(k, k.hand)
        v = self.view(k)
        above = [(v.t.beats[c] & v.unseen).bit_count() for c in trumps]
        if len(trumps) >= 2 and above[0] == 0:
            return self._ids["mauscheln"]  # "Wer das besetzte Trumpfas hat, mauschelt stets."
        if not trumps:
            return self._ids["pass"]
        goers = self.go_rate * (sum(k.live) - 1)
        play = self._play_value(k, v, 2, goers, 0)
        nobody = (1.0 - self.go_rate) ** (sum(k.live) - 1)
        value = nobody * k.pot + (1.0 - nobody) * play
        return self._ids["mauscheln"] if value > self._bar(k) + self.declare_margin * k.pot else self._ids["pass"]

    def _on_go_with(self, k: Knowledge, legal: list[int]) -> int:
        """"Wer zwei Trümpfe hat oder den blanken Trumpfkönig, geht in der Regel mit. Kauft man günstig
        (kleinen Trumpf), so gelingt es meistens, einen Stich hereinzuholen." — read against the table:
        a knocking dealer (trump card, two exchanges) or a big pot asks for more, few rivals for less,
        and the last seat, with nobody gone with, would otherwise hand the mauschler the pot."""
        v = self.view(k)
        trumps = self.trumps_in(k, k.hand)
        above = [(v.t.beats[c] & v.unseen).bit_count() for c in trumps]
        seats, maybe = self._rivals_going(k)
        rivals = len(seats) + maybe - 0.5 * self.risk
        last_alone = self._undecided(k) == 0 and not any(k.roles[s] is Role.GOER for s in range(k.n))
        tight = bool(k.knocked) or self._pressure(k) > 0.5
        go, out = self._ids["go"], self._ids["pass"]
        if trumps and above[0] == 0:
            return go  # a sure trick
        if len(trumps) >= 2:
            return out if tight and above[0] >= 2 and rivals >= 2 else go
        if len(trumps) == 1 and above[0] == 1:
            return out if tight and rivals >= 2 else go  # the bare trump king
        if len(trumps) == 1:
            return go if last_alone or (rivals <= 1.5 and not tight) else out
        aces = self.side_tops(k, k.hand, v.unseen)
        return go if last_alone and aces and not k.knocked else out

    def discard_plan(self, k: Knowledge, v: DealView, hand: int) -> list[int]:
        """"Fremde Asse behält man besser, als sie gegen ungewisse Ersatzkarten umzutauschen, nur wenn man
        Trumpfkönig blank hat, wirft man sie ab": throw every side card but the side tops, and those
        too beside a lone trump that is not the top one. ``hand`` may include a trump card to come."""
        trumps = self.trumps_in(k, hand)
        bare = len(trumps) == 1 and (v.t.beats[trumps[0]] & v.unseen).bit_count() >= 1
        keep = set(trumps) if bare else set(trumps) | set(self.side_tops(k, hand, v.unseen))
        throw = [c for c in iter_bits(k.hand) if c not in keep]
        return sorted(throw, key=lambda c: (self.power(k, c), c))

    def _on_exchange(self, k: Knowledge, legal: list[int]) -> int:
        v = self.view(k)
        done = self._ids["done"]
        if _final_discard(legal, done):
            # 4d or the forced knock: exactly one card goes, the trump card comes.
            cards = [c for c in legal if c < self.rules.num_cards]
            return self.card_to_give(v, k.hand | 1 << k.trump_card, cards, float(max(1, len(v.opponents))))
        knocker = bool(k.knocked) and k.seat == k.dealer and k.exchanged[k.seat] is None
        hand = k.hand | (1 << k.trump_card if knocker else 0)  # 4b: the knocked card will join
        return self.mark(k, legal, self.discard_plan(k, v, hand))

    def _on_play(self, k: Knowledge, legal: list[int]) -> int:
        if not k.current_trick:
            pull = self._pull_trumps(k, legal)
            if pull is not None:
                return pull
        return self.choose_card(k, legal)

    def _pull_trumps(self, k: Knowledge, legal: list[int]) -> int | None:
        """"Trumpf nachzuziehen": own tricks made, two or more others still short, trumps in hand."""
        if k.tricks_won[k.seat] < self.need_of(k, k.seat):
            return None
        short = [s for s in range(k.n) if s != k.seat and k.roles[s] in (Role.MAUSCHLER, Role.GOER)
                 and k.tricks_won[s] < self.need_of(k, s)]
        trumps = self.trumps_in(k, sum(1 << c for c in legal if c < self.rules.num_cards))
        if len(short) >= 2 and trumps:
            return trumps[0]
        return None

