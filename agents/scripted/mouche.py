"""``beginner`` and ``expert`` for ``mouche`` (French Mouche, 1718; [003]; RULES.md §2.5, §2.6).

The seed's advice ([003] "Tipps für Einsteiger", "Die Mouche haben", "Varianten"):

    "Bleiben schreckt ab. Bleibst du, müssen die nach dir raten, ob du eine
    Mouche hast. Ein selbstbewusstes ‚ich bleibe' lässt andere passen – und
    gegen weniger Gegner machst du leichter Stiche."
    "Tausch keinen Flush. Nur fünf Karten einer Farbe, so wie sie gegeben
    wurden, sind eine Mouche."
    "Denk an den König: Der König ist die höchste Karte jeder Farbe, das Ass
    erst die vierte."
    "Bleibt nur ein Spieler übrig – passen alle außer dem Geber, ist er es –,
    nimmt er den Pot."
    Pamphile: "Er ist der höchste Trumpf ... Wer ihn hat, bekommt von jedem
    anderen 1 Chip. Wird er als Trumpf aufgedeckt, wählt der Geber die
    Trumpffarbe."  Béatrix: "die aufgedeckte Trumpfkarte gehört dem Geber, der
    sie gegen eine Handkarte tauschen darf."

``beginner``:

* stay with a dealt flush (the mouche) or with two trumps; exchange with one
  trump or a king, throwing every card that is neither; pass otherwise;
* announce the Pamphile; name as trump the suit it holds most of; never swap
  (Béatrix);
* play the strongest card that wins the trick, else the weakest.

``expert``, with the trick model of :class:`agents.scripted.common.TrickStrategy`:

* stay with a dealt flush; otherwise weigh staying, the best exchange (the
  weakest cards thrown while a blind card is worth more, any number of them)
  and passing: a trick pays a fifth of the pot, no trick costs the pot (or
  Méry's cap) — against the seats already in (one who stayed counts as a
  stronger hand than one who exchanged) and about half of those still to
  decide. Each pass before this seat is one rival less ("gegen weniger
  Gegner"), and when every later seat passes this seat takes the pot;
* the lone rule: when a pass would leave a single seat in (the dealer, or the
  one seat in when the dealer decides), that seat takes the pot without play,
  which counts against the field, so the hand needed to play is lower there;
* announce the Pamphile (a chip from every other seat); name the trump suit
  in which the hand is worth most; swap with the trump card (Béatrix) when the
  hand with it is worth more than the best choice without, giving the card
  worth least, but never from a flush;
* play: the card with the best expected payoff of winning or losing this
  trick with the rest of the hand kept (win cheaply, keep the high trump —
  the king, the Pamphile — while it is worth more later, throw losers when
  the trick is lost, count trumps and the voids shown), and take a trick from
  a seat that has none yet when that costs little (it then makes the mouche).
"""

from __future__ import annotations

from agents.knowledge import Knowledge
from agents.scripted.common import DealView, Strategy, TrickStrategy, expected, next_mark, play_high_or_low
from mauscheln_env.cards import SUITS, iter_bits
from mauscheln_env.engine import Role

DECIDE_ACTIONS = frozenset({"stay", "pass", "done"})
"""The named actions of the deciding rulesets (mouche, muschka)."""

IN_ROLES = (Role.STAYED, Role.EXCHANGED)


def _flush(strategy: Strategy, hand: int) -> bool:
    """Five dealt cards of one suit (the Pamphile counts as a club; with ``pamphile_wild`` as any suit)."""
    rules, suit = strategy.rules, strategy.game.deck.suit
    suits = {suit[c] for c in iter_bits(hand) if not (rules.pamphile_wild and c == rules.jc)}
    return hand.bit_count() == rules.hand_size and len(suits) == 1


class DecideBeginner(Strategy):
    """Stay with trumps, exchange around a trump or a top card, pass with nothing; play high or low."""

    required_actions = DECIDE_ACTIONS

    def keepers(self, k: Knowledge) -> list[int]:
        t = self.tables(k)
        return [c for c in iter_bits(k.hand) if t.trump_mask >> c & 1 or self.is_ace(c)]

    def _on_decide(self, k: Knowledge, legal: list[int]) -> int:
        stay, pass_ = self._ids["stay"], self._ids["pass"]
        if _flush(self, k.hand) or len(self.trumps_in(k, k.hand)) >= 2:
            return stay
        keep = self.keepers(k)
        throw = [c for c in iter_bits(k.hand) if c not in keep]
        if keep:
            return next_mark(self, k, legal, throw) if throw else stay
        if pass_ in legal:
            return pass_
        return next_mark(self, k, legal, throw)

    def _on_exchange(self, k: Knowledge, legal: list[int]) -> int:
        keep = self.keepers(k)
        return next_mark(self, k, legal, [c for c in iter_bits(k.hand) if c not in keep])

    def _on_play(self, k: Knowledge, legal: list[int]) -> int:
        return play_high_or_low(self, k, legal)


class MoucheBeginner(DecideBeginner):
    """[003] "Tipps für Einsteiger"; see the module docstring."""

    def _on_announce(self, k: Knowledge, legal: list[int]) -> int:
        return self._ids["announce"]

    def _on_name_trump(self, k: Knowledge, legal: list[int]) -> int:
        deck = self.game.deck
        counts = [(deck.suit_mask[s] & k.hand).bit_count() for s in range(4)]
        return self._ids["trump:" + SUITS[max(range(4), key=lambda s: (counts[s], -s))]]


class DecideExpert(TrickStrategy):
    """Stay, exchange or pass by the expected payoff of the hand; the trick model for the play."""

    required_actions = DECIDE_ACTIONS
    join_rate = 0.45
    """Share of the seats still to decide that are expected to play."""
    stayed_weight = 1.3
    """A seat that stayed counts as this many opponents of one that exchanged: it liked its cards."""

    # ------------------------------------------------------------------ what tricks pay
    def trick_unit(self, k: Knowledge) -> float:
        return k.pot // self.rules.num_tricks

    def payoff_for(self, k: Knowledge, seat: int, holder: bool | None = None) -> list[float]:
        return self.payoff_table(k, seat)

    def lone_value(self, k: Knowledge, seat: int) -> float:
        """What ``seat`` gets when every other seat passes."""
        return float(k.pot)

    # ------------------------------------------------------------------ context
    def _others_in(self, k: Knowledge) -> list[int]:
        return [s for s in range(k.n) if s != k.seat and k.roles[s] in IN_ROLES]

    def _later(self, k: Knowledge) -> list[int]:
        return [s for s in range(k.n) if s != k.seat and k.live[s] and k.roles[s] is Role.UNDECIDED]

    def rivals(self, k: Knowledge) -> float:
        rivals = sum(self.stayed_weight if k.roles[s] is Role.STAYED else 1.0 for s in self._others_in(k))
        return max(1.0, rivals + self.join_rate * len(self._later(k)))

    def pass_value(self, k: Knowledge) -> float:
        """Staying out, against the field: nothing, unless it leaves a single seat in (the lone rule)."""
        ins, later = self._others_in(k), self._later(k)
        if len(ins) + len(later) == 1:
            lone = (ins or later)[0]
            return -self.lone_value(k, lone) / max(1, k.n - 1)
        return 0.0

    def with_alone(self, k: Knowledge, play: float) -> float:
        """``play`` mixed with the chance that every later seat passes (the pot without play)."""
        if self._others_in(k):
            return play
        alone = (1.0 - self.join_rate) ** len(self._later(k))
        return alone * self.lone_value(k, k.seat) + (1.0 - alone) * play

    # ------------------------------------------------------------------ choices
    def choices(self, k: Knowledge, v: DealView, legal: list[int]) -> dict[str, tuple[float, list[int]]]:
        """Expected payoff (against the field) and cards to throw of each choice open to this seat."""
        opp = self.rivals(k)
        table = self.payoff_for(k, k.seat)
        out: dict[str, tuple[float, list[int]]] = {}
        chances = self.hand_chances(v, k.hand, opp)
        if self._ids["stay"] in legal:
            out["stay"] = (self.with_alone(k, self.stay_value(k, v, table, chances)), [])
        if any(a < self.rules.num_cards for a in legal):
            throw, ev = self.exchange_plan(v, k.hand, table, limit=self.rules.hand_size, opp=opp, min_throw=1)
            out["exchange"] = (self.with_alone(k, ev), throw)
        if self._ids["pass"] in legal:
            out["pass"] = (self.pass_value(k), [])
        return out

    def stay_value(self, k: Knowledge, v: DealView, table: list[float], chances: dict[int, float]) -> float:
        return expected(table, 0, list(chances.values()))

    def bar(self, k: Knowledge) -> float:
        """How much better than passing playing must look: a little more for a pot grown by mouches."""
        stake = max(1, self.rules.stake)
        pressure = min(1.0, max(0.0, (k.pot - stake) / (4.0 * stake)))
        return k.pot * (0.05 * pressure - 0.04 * self.risk)

    def _on_decide(self, k: Knowledge, legal: list[int]) -> int:
        v = self.view(k)
        options = self.choices(k, v, legal)
        if "pass" in options:
            options["pass"] = (options["pass"][0] + self.bar(k), [])
        best = max(options, key=lambda name: (options[name][0], name == "stay"))
        if best == "exchange":
            return self.mark(k, legal, options["exchange"][1])
        return self._ids[best]

    def _on_exchange(self, k: Knowledge, legal: list[int]) -> int:
        v = self.view(k)
        marked = self._marked(k)
        throw, _ = self.exchange_plan(v, k.hand, self.payoff_for(k, k.seat), limit=self.rules.hand_size - marked,
                                      opp=float(self.rivals(k)), draws_done=marked)
        return self.mark(k, legal, throw)

    def _marked(self, k: Knowledge) -> int:
        """Cards thrown in the exchange in progress (a Béatrix swap's card is not one of them)."""
        swapped = 1 if k.trump_holder == k.seat else 0
        return k.discards.bit_count() - swapped

    def _on_play(self, k: Knowledge, legal: list[int]) -> int:
        return self.choose_card(k, legal)


class MoucheExpert(DecideExpert):
    """[003] Mouche with every option; see the module docstring."""

    trump_weight = 1.5  # the seats that play kept their trumps
    ruff_value = 0.3  # a void seat must ruff when it can beat (profile F)
    side_discount = 0.7  # a side king falls to a ruff more often than it wins
    chance_power = 1.1
    stock_weight = 1.0  # a big stock: what a blind draw finds is much like any unseen card

    def payoff(self, k: Knowledge, seat: int, tricks: int) -> float:
        """A fifth of the pot per trick; no trick makes the mouche: the pot (or Méry's cap) is paid
        (RULES.md §3.3)."""
        pot = k.pot
        if tricks:
            return pot // self.rules.num_tricks * tricks
        cap = self.rules.mery_cap
        owed = pot if cap is None else min(pot, cap)
        return -min(owed, k.chips[seat])

    def known_cards(self, k: Knowledge) -> dict[int, int]:
        out = dict(super().known_cards(k))
        announcer = self._announcer(k)
        if announcer is not None and self.rules.jc is not None and k.trump_card != self.rules.jc:
            out[announcer] = out.get(announcer, 0) | 1 << self.rules.jc
        return out

    def _announcer(self, k: Knowledge) -> int | None:
        """The seat that announced the Pamphile (the observation's ``announced`` piece)."""
        if not self._reader.has("announced"):
            return None
        return self.piece_value("announced")

    def _on_announce(self, k: Knowledge, legal: list[int]) -> int:
        return self._ids["announce"]  # a chip from every other seat

    def _on_name_trump(self, k: Knowledge, legal: list[int]) -> int:
        best = None
        for suit in range(4):
            k.trump_suit = suit
            v = self.view(k)
            opts = self.choices(k, v, [self._ids["stay"], *iter_bits(k.hand)])
            value = max(x[0] for x in opts.values())
            if best is None or value > best[0]:
                best = (value, suit)
        return self._ids["trump:" + SUITS[best[1]]]

    def _on_decide(self, k: Knowledge, legal: list[int]) -> int:
        if _flush(self, k.hand) and self._ids["stay"] in legal and k.trump_holder != k.seat:
            return self._ids["stay"]  # "Tausch keinen Flush": the mouche takes the pot
        swap = self._ids.get("swap")
        if swap in legal and self._swap_gain(k, legal) > 0:
            return swap
        return super()._on_decide(k, legal)

    def _swap_card(self, k: Knowledge, v: DealView) -> int:
        return self.card_to_give(v, k.hand | 1 << k.trump_card, list(iter_bits(k.hand)), self.rivals(k))

    def _swap_gain(self, k: Knowledge, legal: list[int]) -> float:
        """Best payoff after giving the worst card for the trump card, less the best without."""
        v = self.view(k)
        without = self.choices(k, v, legal)
        if "pass" in without:
            without["pass"] = (without["pass"][0] + self.bar(k), [])
        give = self._swap_card(k, v)
        hand, holder = k.hand, k.trump_holder
        k.hand = hand & ~(1 << give) | 1 << k.trump_card
        k.trump_holder = k.seat
        try:
            v2 = self.view(k)
            after = self.choices(k, v2, [self._ids["stay"], *iter_bits(k.hand)])
        finally:
            k.hand, k.trump_holder = hand, holder
        return max(x[0] for x in after.values()) - max(x[0] for x in without.values())

    def _on_swap(self, k: Knowledge, legal: list[int]) -> int:
        return self._swap_card(k, self.view(k))
