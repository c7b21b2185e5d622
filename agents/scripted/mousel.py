"""``beginner`` and ``expert`` for ``mousel`` (Danish Mousel, [004]; RULES.md §2.4).

The seed's strategy section ([004] "Strategi") is the source of both:

    "Din trumfstyrke afgør alt. Har du to eller flere trumfer, tager du næsten
    altid ét stik. Har du ingen, bør du melde fra i de fleste tilfælde."
    "Et højt kort i en almindelig kulør er mindre værd, end det ser ud."
    "Vær ekstra forsigtig som forhånd. Du skal tage to stik, ikke ét."
    "Byt aggressivt. ... Sidder du med tre kort uden trumf, er der ingen grund
    til at holde på dem."
    "Læg mærke til, hvem der melder fra. Melder to spillere fra, er der færre
    til at kæmpe om stikkene — og dine chancer for at tage ét stiger."
    "Puljens størrelse bør ændre din tærskel. Er puljen lille, koster det næsten
    ingenting at prøve. Er den vokset ..., skal du have en reelt god hånd."

``beginner`` takes the first and the fourth sentence literally:

* declare ``in`` with two trumps or more; with one trump too, except as the
  forehand (who must take two tricks); ``out`` without a trump;
* exchange every card that is not a trump;
* knock (option) only on a turned ace; ``in_lead`` (option) never;
* play the strongest card that wins the trick, else the weakest.

``expert`` weighs every sentence with the trick model of
:class:`agents.scripted.common.TrickStrategy`:

* a hand is worth the expected payoff of the tricks it takes after the best
  exchange (the weakest cards thrown while a blind card is worth more), against
  the seats that are in and about half of those still to declare: a side ace
  is only as good as the chance that nobody ruffs it, every trump counts;
* ``in`` when that beats staying out; as the forehand the hand must make two
  tricks; each seat that dropped before is one rival less; when the last
  seat to declare would leave a single seat in, staying out hands it the pot,
  which counts against the field; a pot grown by betes raises the bar by a
  little (the chips can run out);
* ``in_lead`` (option) when the hand is worth more with the duty of two tricks
  than with one; knock (option) on a turned ace, on a king at a table of four
  or fewer while the pot is small;
* exchange: the best exchange of the hand (for a knocking dealer, with the
  trump card he takes), limited by the exchange limit and the stock;
* play: the card with the best expected payoff of winning or losing this trick
  with the rest of the hand kept (win cheaply, keep the high trump while it is
  worth more later, throw losers when the trick is lost, count the trumps and
  the voids the others showed), and take a trick an opponent still needs when
  that costs little.
"""

from __future__ import annotations

from agents.knowledge import Knowledge
from agents.scripted.common import DealView, Strategy, TrickStrategy, next_mark, play_high_or_low, pot_payoff
from mauscheln_env.cards import iter_bits
from mauscheln_env.engine import Role

MOUSEL_ACTIONS = frozenset({"in", "out", "done"})


def _forehand(k: Knowledge, direction: int) -> int:
    s = (k.dealer + direction) % k.n
    while not k.live[s]:
        s = (s + direction) % k.n
    return s


def _is_knocker(k: Knowledge) -> bool:
    """This seat is the dealer who knocked and has not yet taken the trump card (his exchange)."""
    return bool(k.knocked) and k.seat == k.dealer and k.trump_holder is None


class MouselBeginner(Strategy):
    """The first and fourth sentence of [004] "Strategi"; see the module docstring."""

    required_actions = MOUSEL_ACTIONS

    def _on_knock(self, k: Knowledge, legal: list[int]) -> int:
        return self._ids["knock"] if self.is_ace(k.trump_card) else self._ids["no_knock"]

    def _on_declare(self, k: Knowledge, legal: list[int]) -> int:
        trumps = len(self.trumps_in(k, k.hand))
        forehand = k.seat == _forehand(k, self.rules.direction)
        go = trumps >= 2 or (trumps == 1 and not forehand)
        return self._ids["in"] if go else self._ids["out"]

    def _on_exchange(self, k: Knowledge, legal: list[int]) -> int:
        t = self.tables(k)
        throw = [c for c in iter_bits(k.hand) if not t.trump_mask >> c & 1]
        return next_mark(self, k, legal, throw)

    def _on_play(self, k: Knowledge, legal: list[int]) -> int:
        return play_high_or_low(self, k, legal)


class MouselExpert(TrickStrategy):
    """All of [004] "Strategi", weighed with the trick model; see the module docstring."""

    required_actions = MOUSEL_ACTIONS
    join_rate = 0.45
    """Share of the seats still to declare that are expected to come in."""
    trump_weight = 2.2  # "Din trumfstyrke afgør alt": a seat that plays holds trumps
    ruff_value = 0.4  # every trump can ruff: "alle skal trumfe, når de er renonce"
    side_discount = 0.6  # "Et højt kort i en almindelig kulør er mindre værd, end det ser ud"

    # ------------------------------------------------------------------ payoff
    def need_of(self, k: Knowledge, seat: int) -> int:
        return 2 if k.roles[seat] is Role.COMMITTED else 1

    def payoff(self, k: Knowledge, seat: int, tricks: int, need: int | None = None) -> float:
        """Pot share per trick, a flat bete of the pot below the requirement (RULES.md §3.1)."""
        need = self.need_of(k, seat) if need is None else need
        return pot_payoff(k, seat, tricks, need, self.rules.num_tricks, per_missing_trick=False)

    def trick_unit(self, k: Knowledge) -> float:
        return k.pot // self.rules.num_tricks

    # ------------------------------------------------------------------ context
    def _undecided_after(self, k: Knowledge) -> int:
        return sum(1 for s in range(k.n) if s != k.seat and k.live[s] and k.roles[s] is Role.UNDECIDED)

    def _ins(self, k: Knowledge) -> int:
        return sum(1 for s in range(k.n) if s != k.seat and k.roles[s] in (Role.IN, Role.COMMITTED))

    def _pressure(self, k: Knowledge) -> float:
        stake = max(1, self.rules.stake)
        return min(1.0, max(0.0, (k.pot - stake) / (4.0 * stake)))

    def _value_in(self, k: Knowledge, v: DealView, need: int) -> float:
        """Expected payoff of coming in with ``need`` tricks to make, after the best exchange."""
        ins = self._ins(k)
        later = self._undecided_after(k)
        rivals = ins + self.join_rate * later
        table = self.payoff_table(k, k.seat, need=need)
        limit = min(self.rules.exchange_limit, self.rules.hand_size)
        play = self.exchange_plan(v, k.hand, table, limit=limit, opp=max(1.0, rivals))[1]
        if ins:
            return play
        alone = (1.0 - self.join_rate) ** later  # everybody after drops: the pot without play
        return alone * k.pot + (1.0 - alone) * play

    # ------------------------------------------------------------------ decisions
    def _on_knock(self, k: Knowledge, legal: list[int]) -> int:
        rank = self._rank_pos[k.trump_card]
        if rank == 0 or (rank == 1 and self.rules.n <= 4 and self._pressure(k) <= 0.25 + 0.25 * self.risk):
            return self._ids["knock"]
        return self._ids["no_knock"]

    def _on_declare(self, k: Knowledge, legal: list[int]) -> int:
        v = self.view(k)
        committed = any(r is Role.COMMITTED for r in k.roles)
        forehand = k.seat == _forehand(k, self.rules.direction)
        need = 2 if forehand and not committed else 1
        value = self._value_in(k, v, need)
        out = 0.0
        if self._undecided_after(k) == 0 and self._ins(k) == 1:
            out = -k.pot / max(1, k.n - 1)  # the single seat in takes the pot, against the field
        bar = out + k.pot * (0.1 * self._pressure(k) - 0.05 * self.risk)
        lead = self._ids.get("in_lead")
        if lead in legal and need == 1:
            if self._value_in(k, v, 2) > max(value, bar):
                return lead
        return self._ids["in"] if value > bar else self._ids["out"]

    def _on_exchange(self, k: Knowledge, legal: list[int]) -> int:
        v = self.view(k)
        table = self.payoff_table(k, k.seat)
        marked = k.discards.bit_count()
        opp = float(len(v.opponents))  # nobody has played yet: every opponent is a full hand of unseen cards
        if _is_knocker(k):
            # Modern knock (RULES.md §2.2): throw at least one, take the trump card and one card fewer.
            throw, _ = self.exchange_plan(v, k.hand, table, limit=self.rules.hand_size - marked, opp=opp,
                                          draws_done=marked, min_throw=0 if marked else 1,
                                          extra=1 << k.trump_card, draw_offset=1)
        else:
            limit = max(0, min(self.rules.exchange_limit, self.stock_left(k)) - marked)
            throw, _ = self.exchange_plan(v, k.hand, table, limit=limit, opp=opp, draws_done=marked)
        return self.mark(k, legal, throw)

    def _on_play(self, k: Knowledge, legal: list[int]) -> int:
        return self.choose_card(k, legal)
