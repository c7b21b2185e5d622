"""Scenario tests for the rule options of every ruleset (RULES.md §2.2-§2.7, §3, §6).

Each test deals fixed hands (the ``deal`` reset option, or a stacked deck for a
later deal), drives the raw environment with action strings, asserts the legal
set at the decisive moments and every chip or score movement of the deal.
Card conservation and chip conservation are checked after every step.

A test that fails because the engine deviates from RULES.md stays as the rules
demand and is marked ``xfail(strict=True)`` with the bug in one line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pytest
import yaml

import mauscheln_env
from mauscheln_env.cards import SUITS
from mauscheln_env.config import load_preset, make_config
from mauscheln_env.engine import Phase, Role

PRESET_DIR = Path(__file__).resolve().parent.parent / "configs" / "rules"


# --------------------------------------------------------------------------- helpers
class StackedRng:
    """A chance source whose next full shuffles return fixed deck orders (top card first).

    Every other draw (the dealer lot, partial shuffles, reshuffles) comes from a
    seeded generator, so a session stays reproducible.
    """

    def __init__(self, deck, orders: Sequence[Sequence[str]], seed: int = 0) -> None:
        self._rng = np.random.default_rng(seed)
        self._size = len(deck)
        self._orders = [[deck.parse(c) for c in order] for order in orders]

    def permutation(self, n):
        if n == self._size and self._orders:
            return np.array(self._orders.pop(0))
        return self._rng.permutation(n)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._rng, name)


def deal_seats(n: int, dealer: int, direction: int, alive: Sequence[int] | None = None) -> list[int]:
    """Seats from forehand, dealer last (independent of the engine)."""
    seats = [(dealer + direction * (1 + k)) % n for k in range(n)]
    return [s for s in seats if alive is None or s in alive]


def deal_deck(deck: Sequence[str], seats: Sequence[int], pattern) -> tuple[dict[int, list[str]], str, list[str]]:
    """Deal ``deck`` (top first) by ``pattern`` to ``seats`` (forehand first): hands, trump card, stock."""
    hands: dict[int, list[str]] = {s: [] for s in seats}
    pos, trump = 0, None
    for step in pattern:
        if step == "T":
            trump = deck[pos]
            pos += 1
        else:
            for s in seats:
                hands[s].extend(deck[pos : pos + step])
                pos += step
    return hands, trump, list(deck[pos:])


def stack_deck(codes: Sequence[str], hands: dict[int, str], trump: str, seats: Sequence[int], pattern) -> list[str]:
    """The deck order (top first) that ``pattern`` deals into ``hands``; the stock follows in deck order."""
    cards = {s: h.split() for s, h in hands.items()}
    order: list[str] = []
    taken = {s: 0 for s in seats}
    for step in pattern:
        if step == "T":
            order.append(trump)
        else:
            for s in seats:
                order.extend(cards[s][taken[s] : taken[s] + step])
                taken[s] += step
    order += [c for c in codes if c not in order]
    return order


class Table:
    """A raw env with a fixed first deal; ``act`` steps by action strings and checks the legal set."""

    def __init__(self, ruleset: str, n: int, *, dealer: int = 0, hands: dict[int, str] | None = None,
                 trump: str | None = None, stock: str = "", pot: int | None = None, chips=None, scores=None,
                 decks: Sequence[Sequence[str]] = (), **options) -> None:
        self.env = mauscheln_env.raw_env(ruleset=ruleset, num_players=n, **options)
        self.game = self.env.game
        reset: dict = {"dealer": dealer}
        if hands is not None or trump is not None or stock:
            reset["deal"] = {
                "hands": {s: h.split() for s, h in (hands or {}).items()},
                "trump": trump,
                "stock": stock.split(),
            }
        if pot is not None:
            reset["pot"] = pot
        if chips is not None:
            reset["chips"] = chips
        if scores is not None:
            reset["scores"] = scores
        self.env.np_random = StackedRng(self.game.deck, decks)
        self.env.reset(seed=None, options=reset)
        self.state = self.env.engine_state
        self.rewards = {s: 0.0 for s in range(n)}

    # views
    def codes(self, mask: int) -> set[str]:
        return set(self.game.deck.codes_of(mask))

    def hand(self, seat: int) -> set[str]:
        return self.codes(self.state.deal.hands[seat])

    def seen(self, seat: int) -> set[str]:
        return set(self.env.infos[f"player_{seat}"]["hand"])

    def legal(self) -> set[str]:
        mask = self.env.observe(self.env.agent_selection)["action_mask"]
        return {self.env.action_to_str(a) for a in np.flatnonzero(mask)}

    @property
    def result(self):
        return self.state.session.results[-1]

    # actions
    def act(self, seat: int, action: str, legal: Iterable[str] | None = None) -> None:
        assert self.state.to_act == seat, f"expected seat {seat} to act, seat {self.state.to_act} is to act"
        if legal is not None:
            got = self.legal()
            assert got == set(legal), f"seat {seat} legal {sorted(got)} != expected {sorted(set(legal))}"
        self.env.step(self.env.action_from_str(action))
        self.game.check_invariants(self.state)
        for s in range(self.game.n):
            self.rewards[s] += self.env.rewards[f"player_{s}"]

    def acts(self, *moves: tuple) -> None:
        for move in moves:
            self.act(*move)

    def exchange(self, seat: int, discards: str = "") -> None:
        for card in discards.split():
            self.act(seat, card)
        self.act(seat, "done", legal=None)

    def trick(self, *plays: tuple) -> None:
        assert self.state.phase is Phase.PLAY, f"expected play, got {self.state.phase.name}"
        for play in plays:
            self.act(*play)


def cards(text: str) -> set[str]:
    return set(text.split())


def decide_set(hand: Iterable[str], *named: str) -> set[str]:
    return set(hand) | set(named)


# =========================================================================== mauscheln (§2.2)
# --- Vierling ---------------------------------------------------------------
VIERLING_HANDS = {1: "7C 7S 7H 7D", 2: "AC KS 9H JD", 3: "KC QS JH TD", 0: "QC JS TH 9D"}
# Seat 1's first replacement is again a quartet (the 8s); the second is not.
VIERLING_STOCK = "8C 8S 8H 8D KH KD 9C 9S"


@pytest.mark.parametrize("knock", [False, True])
def test_vierling_is_shown_paid_replaced_and_rechecked_before_the_knock(knock):
    t = Table("mauscheln", 4, hands=VIERLING_HANDS, trump="QH", stock=VIERLING_STOCK, vierling=True, knock=knock)
    st = t.state
    # Seat 1 showed the 7s, paid S, drew the 8s, showed them too, paid again and drew four more.
    assert t.codes(st.deal.revealed) == cards("7C 7S 7H 7D 8C 8S 8H 8D")
    assert t.hand(1) == cards("KH KD 9C 9S")
    assert st.session.chips == [36, 32, 40, 40]
    assert st.session.pot == 12
    assert len(st.deal.stock) == 15 - 8
    assert t.codes(st.deal.discard_pile) == cards("7C 7S 7H 7D 8C 8S 8H 8D")
    # The quartets are public (§1.8): every seat observes them.
    for seat in range(4):
        views = t.env.observation_views(t.env.observe(f"player_{seat}")["observation"])
        assert t.codes(sum(1 << int(c) for c in np.flatnonzero(views["revealed"]))) == t.codes(st.deal.revealed)
    if knock:  # D19: the check comes before the knock
        assert st.phase is Phase.KNOCK
        t.act(0, "no_knock", legal={"knock", "no_knock"})
    assert st.phase is Phase.DECLARE
    t.act(1, "mauscheln", legal={"mauscheln", "pass"})
    for seat in (2, 3, 0):
        t.act(seat, "pass", legal={"go", "pass"})
    r = t.result
    assert r.kind == "no_play" and r.mauschler == 1
    assert r.pot_before == 12  # P includes the quartet payments
    assert r.credits == [0, 12, 0, 0]
    assert r.deltas == [-4, 4, 0, 0]
    assert t.rewards == {0: -4, 1: 4, 2: 0, 3: 0}
    assert st.session.chips == [36, 44, 40, 40]


def test_vierling_short_stock_voids_the_deal_and_the_same_dealer_redeals_without_ante():
    """D19: three quartets use 12 of 15 stock cards; the dealer's quartet finds only 3."""
    hands = {1: "7C 7S 7H 7D", 2: "8C 8S 8H 8D", 3: "9C 9S 9H 9D", 0: "TC TS TH TD"}
    stock = "KC KS QC QS KH KD QH QD JC JS JH AS JD AH AD"
    t = Table("mauscheln", 4, hands=hands, trump="AC", stock=stock, vierling=True, max_deals=2)
    st = t.state
    # The void deal was redealt by the same dealer; no new ante; the three payments stay in the pot.
    assert st.session.dealer == 0
    assert st.session.pot == 4 + 3 * 4
    assert st.session.chips == [36, 36, 36, 36]
    assert st.deal.revealed == 0  # a fresh deal (this seed deals no quartet)
    assert t.hand(0) != cards("TC TS TH TD")
    assert all(h.bit_count() == 4 for h in st.deal.hands)
    assert len(st.deal.stock) == 15
    assert st.phase is Phase.DECLARE and st.to_act == 1
    assert st.session.results == []
    t.act(1, "mauscheln", legal={"mauscheln", "pass"})
    for seat in (2, 3, 0):
        t.act(seat, "pass")
    r = t.result
    assert r.kind == "no_play" and r.pot_before == 16 and r.credits == [0, 16, 0, 0]
    assert r.deltas == [-4, 12, -4, -4]
    assert st.session.dealer == 1 and st.session.pot == 4


def test_vierling_formed_by_exchanging_has_no_effect():
    hands = {1: "AC AS AH 7D", 2: "KC KS QH QD", 3: "QC QS JH JD", 0: "JC JS TH TD"}
    t = Table("mauscheln", 4, hands=hands, trump="9H", stock="AD", vierling=True)
    st = t.state
    assert st.deal.revealed == 0 and st.session.pot == 4
    t.act(1, "mauscheln")
    t.act(2, "go")
    t.act(3, "pass")
    t.act(0, "pass")
    t.exchange(1, "7D")
    assert t.hand(1) == cards("AC AS AH AD")
    assert st.deal.revealed == 0 and st.session.pot == 4 and st.session.chips == [36, 40, 40, 40]
    assert st.phase is Phase.EXCHANGE and st.to_act == 2


# --- Belli / Weli ------------------------------------------------------------
# Hearts are trump. Seat 2's only diamond is the special card X (Belli 7D or Weli 6D).
SPECIAL_HANDS = {1: "AH KH AD KC", 0: "7C 8C 9C TC"}


@pytest.mark.parametrize(
    "options,special,deltas,pot_after",
    [
        ({"belli": "7D"}, "7D", [-4, 3, -3], 4),  # D20: the Belli's player pays S into the pot
        ({"belli": "7D", "belli_penalty": "ace"}, "7D", [-4, 7, -3], 0),  # ... or to the ace's player
        ({"weli": True}, "6D", [-4, 3, 1], 0),  # the Weli carries no penalty
    ],
    ids=["belli-pot", "belli-ace", "weli"],
)
def test_permanent_trump_ranks_below_the_trump_ace_and_voids_its_printed_suit(options, special, deltas, pot_after):
    hands = {**SPECIAL_HANDS, 2: f"{special} QH 8S 9S"}
    t = Table("mauscheln", 3, hands=hands, trump="9H", **options)
    st = t.state
    t.act(1, "mauscheln", legal={"mauscheln", "pass"})
    t.act(2, "go", legal={"go", "pass"})
    t.act(0, "pass", legal={"go", "pass"})
    t.exchange(1)
    t.exchange(2)
    # Diamonds led: seat 2 holds no diamond (the special card is a trump), so it must trump.
    t.trick((1, "AD", cards("AH KH AD KC")), (2, "QH", {special, "QH"}))
    assert st.deal.tricks_won[2] == 1
    # The special card led: only the trump ace beats it; KH ranks below it.
    t.trick((2, special, {special, "8S", "9S"}), (1, "AH", {"AH"}))
    assert st.deal.tricks_won[1] == 1
    t.trick((1, "KH", {"KH", "KC"}), (2, "8S", {"8S", "9S"}))
    t.trick((1, "KC", {"KC"}), (2, "9S", {"9S"}))
    r = t.result
    assert r.kind == "settled"
    assert r.tricks == [0, 3, 1]
    assert r.pot_before == 4
    assert r.deltas == deltas
    assert r.pot_after == pot_after
    assert st.session.chips == [40 + d for d in deltas]
    assert t.rewards == dict(enumerate(deltas))


def test_belli_trump7_is_the_seven_of_trumps_and_7d_is_an_ordinary_diamond():
    hands = {1: "AH KH AD KC", 2: "7H QH 7D 8S", 0: "7C 8C 9C TC"}
    t = Table("mauscheln", 3, hands=hands, trump="9H", belli="trump7")
    t.act(1, "mauscheln")
    t.act(2, "go")
    t.act(0, "pass")
    t.exchange(1)
    t.exchange(2)
    # 7H ranks directly below AH: it is the only heart of seat 2 that beats KH.
    t.trick((1, "KH", cards("AH KH AD KC")), (2, "7H", {"7H"}))
    assert t.state.deal.tricks_won[2] == 1
    # 7D is led as a diamond: seat 1 must follow with AD, not trump.
    t.trick((2, "7D", cards("QH 7D 8S")), (1, "AD", {"AD"}))
    t.trick((1, "AH", {"AH", "KC"}), (2, "QH", {"QH"}))
    t.trick((1, "KC", {"KC"}), (2, "8S", {"8S"}))
    r = t.result
    assert r.tricks == [0, 3, 1]
    assert r.credits == [0, 3, 1] and r.deltas == [-4, 3, 1] and r.pot_after == 0  # the Belli never met the ace


@pytest.mark.parametrize("options,special", [({"belli": "7D"}, "7D"), ({"weli": True}, "6D")], ids=["belli", "weli"])
def test_special_card_turned_up_makes_diamonds_trump(options, special):
    """D22."""
    hands = {1: "KH AC KC QC", 2: "AD QD 8S 9S", 0: "7C 8C 9C TC"}
    t = Table("mauscheln", 3, hands=hands, trump=special, **options)
    assert t.state.deal.trump_suit == SUITS.index("D")
    assert t.env.infos["player_1"]["trump"] == special
    t.act(1, "mauscheln")
    t.act(2, "go")
    t.act(0, "pass")
    t.exchange(1)
    t.exchange(2)
    t.trick((1, "AC"), (2, "QD", {"AD", "QD"}))  # void in clubs: must trump with a diamond


def test_weli_deck_and_exclusions():
    cfg = make_config("mauscheln", 5, weli=True)
    assert len(cfg.deck) == 33 and "6D" in cfg.deck.codes
    assert make_config("mauscheln", 4, weli=True).deck_size == 33
    with pytest.raises(ValueError, match="weli"):
        mauscheln_env.raw_env(num_players=6, weli=True)
    with pytest.raises(ValueError, match="(?i)weli|belli"):
        mauscheln_env.raw_env(num_players=4, belli="7D", weli=True)
    t = Table("mauscheln", 4, weli=True)
    assert len(t.state.deal.stock) == 33 - 4 * 4 - 1


# =========================================================================== mauscheln_classic (§2.3)
# 4 players play with 24 cards.
CLASSIC_HANDS = {1: "AH KH QH JH", 2: "AS KS QS JS", 3: "AD KD QD JD", 0: "AC KC QC JC"}
CLASSIC_STOCK = "TH TC TS TD 9C 9S 9D"


def test_mauschelzwang_the_trump_ace_holder_must_declare():
    hands = {1: "AS KS QS JS", 2: "AH TC TS TD", 3: "AC KC QC JC", 0: "AD KD QD JD"}
    t = Table("mauscheln_classic", 4, hands=hands, trump="9H", stock="KH QH JH TH 9C 9S 9D",
              mauschelzwang=True, knock=False)
    t.act(1, "pass", legal={"mauscheln", "pass"})
    t.act(2, "mauscheln", legal={"mauscheln"})
    for seat in (3, 0, 1):
        t.act(seat, "pass", legal={"go", "pass"})
    r = t.result
    assert r.kind == "no_play" and r.mauschler == 2
    assert r.deltas == [-4, 0, 4, 0]


def test_mauschelzwang_does_not_bind_once_someone_has_declared():
    """D13: the ace holder is free when going with."""
    hands = {1: "AS KS QS JS", 2: "AH TC TS TD", 3: "AC KC QC JC", 0: "AD KD QD JD"}
    t = Table("mauscheln_classic", 4, hands=hands, trump="9H", mauschelzwang=True, knock=False)
    t.act(1, "mauscheln", legal={"mauscheln", "pass"})
    t.act(2, "pass", legal={"go", "pass"})


def test_mitgehzwang_forces_the_last_seat_when_all_before_passed():
    t = Table("mauscheln_classic", 4, hands=CLASSIC_HANDS, trump="9H", stock=CLASSIC_STOCK,
              mitgehzwang=True, knock=False)
    st = t.state
    t.act(1, "mauscheln", legal={"mauscheln", "pass"})
    t.act(2, "pass", legal={"go", "pass"})
    t.act(3, "pass", legal={"go", "pass"})
    t.act(0, "go", legal={"go"})
    assert st.phase is Phase.EXCHANGE
    t.exchange(1)
    t.exchange(0)
    t.trick((1, "AH"), (0, "JC", cards("AC KC QC JC")))
    t.trick((1, "KH"), (0, "QC"))
    t.trick((1, "QH"), (0, "KC"))
    t.trick((1, "JH"), (0, "AC"))
    r = t.result
    assert r.tricks == [0, 4, 0, 0]
    assert r.credits == [0, 4, 0, 0] and r.debits == [4, 0, 0, 0]
    assert r.pot_after == 4 and r.deltas == [-8, 4, 0, 0]


def test_mitgehzwang_does_not_bind_when_someone_went_with():
    t = Table("mauscheln_classic", 4, hands=CLASSIC_HANDS, trump="9H", mitgehzwang=True, knock=False)
    t.act(1, "mauscheln")
    t.act(2, "go", legal={"go", "pass"})
    t.act(3, "pass", legal={"go", "pass"})
    t.act(0, "pass", legal={"go", "pass"})
    assert t.state.phase is Phase.EXCHANGE


def test_mitgehzwang_after_a_knock_binds_the_last_of_the_other_seats():
    hands = {1: "AH KH JH TH", 2: "AS KS QS JS", 3: "AD KD QD JD", 0: "AC KC QC JC"}
    t = Table("mauscheln_classic", 4, hands=hands, trump="QH", mitgehzwang=True)
    t.act(0, "knock", legal={"knock", "no_knock"})
    t.act(1, "pass", legal={"go", "pass"})
    t.act(2, "pass", legal={"go", "pass"})
    t.act(3, "go", legal={"go"})


def test_cap_moves_overflow_to_the_reserve_and_tops_up_later():
    """U4 (cap C = 40): bêtes of 48 plus a stake of 4 -> pot 40, reserve 12; later 4 + top-up 12 = 16."""
    hands = {1: "9C 9S TC TS", 2: "AH KH QH JH", 3: "AC KC QC JC", 0: "AS KS QS JS"}
    t = Table("mauscheln_classic", 4, hands=hands, trump="9H", stock="TH TD 9D AD KD QD JD",
              pot=20, cap=40, knock=False, max_deals=3)
    st = t.state
    assert st.session.pot == 24 and st.session.reserve == 0
    t.act(1, "mauscheln")
    t.act(2, "go")
    t.act(3, "pass")
    t.act(0, "pass")
    t.exchange(1)
    t.exchange(2)
    t.trick((1, "9C", cards("9C 9S TC TS")), (2, "JH", cards("AH KH QH JH")))
    t.trick((2, "AH"), (1, "9S", cards("9S TC TS")))
    t.trick((2, "KH"), (1, "TC"))
    t.trick((2, "QH"), (1, "TS"))
    r = t.result
    assert r.pot_before == 24 and r.tricks == [0, 0, 4, 0]
    assert r.credits == [0, 0, 24, 0] and r.debits == [0, 48, 0, 0]  # mauschelbet 2P, paid in full
    assert r.pot_after == 48 and r.deltas == [-4, -48, 24, 0]
    # Seat 1 deals and antes 4: 52 -> pot 40, reserve 12.
    assert st.session.dealer == 1 and st.session.pot == 40 and st.session.reserve == 12
    assert st.session.chips == [196, 148, 224, 200]
    # Second deal: nobody goes with, the mauschler takes the capped pot; no bêtes.
    assert st.phase is Phase.DECLARE and st.to_act == 2
    t.act(2, "mauscheln")
    for seat in (3, 0, 1):
        t.act(seat, "pass")
    r = t.result
    assert r.kind == "no_play" and r.pot_before == 40 and r.credits == [0, 0, 40, 0] and r.pot_after == 0
    assert r.deltas == [0, -4, 40, 0]
    # Seat 2 antes 4, the reserve tops it up by 12.
    assert st.session.dealer == 2 and st.session.pot == 16 and st.session.reserve == 0
    assert st.session.chips == [196, 148, 260, 200]


def test_schieben_full_round_the_first_seat_pays_again_and_must_deal():
    t = Table("mauscheln_classic", 4, schieben=True, knock=False)
    st = t.state
    assert st.phase is Phase.OFFER and st.session.pot == 4 and st.session.chips == [196, 200, 200, 200]
    t.act(0, "push", legal={"deal", "push"})
    assert st.session.pot == 8 and st.session.chips[1] == 196
    t.act(1, "push", legal={"deal", "push"})
    t.act(2, "push", legal={"deal", "push"})
    t.act(3, "push", legal={"deal", "push"})
    assert st.session.pot == 20 and st.session.chips == [192, 196, 196, 196]
    t.act(0, "deal", legal={"deal"})
    assert st.session.dealer == 0 and st.phase is Phase.DECLARE and st.to_act == 1
    for seat in (1, 2, 3, 0):
        t.act(seat, "pass", legal={"mauscheln", "pass"})
    r = t.result
    assert r.kind == "throw_in" and r.pot_after == 20
    assert r.deltas == [-8, -4, -4, -4]
    # D16: the next dealer is succ(actual dealer); he pays S and may push.
    assert st.phase is Phase.OFFER and st.to_act == 1 and st.session.pot == 24 and st.session.chips[1] == 192
    assert t.legal() == {"deal", "push"}


def test_schieben_next_dealer_is_succ_of_the_actual_dealer():
    """D16: seat 0 pushes, seat 1 deals; after the deal seat 2 is offered the deal."""
    t = Table("mauscheln_classic", 4, schieben=True, knock=False)
    st = t.state
    t.act(0, "push", legal={"deal", "push"})
    t.act(1, "deal", legal={"deal", "push"})
    assert st.session.dealer == 1 and st.session.pot == 8 and st.phase is Phase.DECLARE and st.to_act == 2
    for seat in (2, 3, 0, 1):
        t.act(seat, "pass")
    assert t.result.deltas == [-4, -4, 0, 0]
    assert st.phase is Phase.OFFER and st.to_act == 2 and st.session.pot == 12 and st.session.chips == [196, 196, 196, 200]


def test_schieben_then_cap_normalisation():
    """§2.3 step 1: the cap applies once every push is paid."""
    t = Table("mauscheln_classic", 4, schieben=True, cap=8, knock=False)
    st = t.state
    t.act(0, "push")
    t.act(1, "push")
    assert st.session.pot == 12 and st.session.reserve == 0
    t.act(2, "deal")
    assert st.session.dealer == 2 and st.session.pot == 8 and st.session.reserve == 4
    for seat in (3, 0, 1, 2):
        t.act(seat, "pass")
    assert t.result.kind == "throw_in" and t.result.deltas == [-4, -4, -4, 0]
    assert st.phase is Phase.OFFER and st.to_act == 3 and st.session.pot == 12 and st.session.reserve == 4
    t.act(3, "deal", legal={"deal", "push"})
    assert st.session.pot == 8 and st.session.reserve == 8


@pytest.mark.parametrize("push", [False, True])
def test_forced_knock_needs_a_pot_without_pushes(push):
    """D15: a new pot holds exactly the dealer's single stake."""
    t = Table("mauscheln_classic", 4, schieben=True, forced_knock_new_pot=True, knock=False)
    st = t.state
    if push:
        t.act(0, "push")
        t.act(1, "deal")
        assert st.phase is Phase.DECLARE and st.to_act == 2 and st.deal.mauschler is None
    else:
        t.act(0, "deal")
        assert st.phase is Phase.EXCHANGE and st.to_act == 0 and st.deal.mauschler == 0
        assert t.legal() == t.hand(0)


FORCED_HANDS = {0: "AH KH 9C 9S", 1: "AC KC QC JC", 2: "AS KS QS JS", 3: "AD KD QD JD"}
FORCED_STOCK = "QH JH 9H TC TS TD 9D"


def test_forced_knock_on_a_new_pot():
    """§2.3 step 3: dealer is mauschler, all play, nobody exchanges; he swaps one card for the trump card."""
    t = Table("mauscheln_classic", 4, hands=FORCED_HANDS, trump="TH", stock=FORCED_STOCK, forced_knock_new_pot=True)
    st = t.state
    assert st.session.pot == 4
    assert st.phase is Phase.EXCHANGE and st.to_act == 0  # no knock, declare or go-with decisions
    assert st.deal.roles == [Role.MAUSCHLER, Role.GOER, Role.GOER, Role.GOER]
    t.act(0, "9S", legal=cards("AH KH 9C 9S"))  # exactly one card: not `done` first
    t.act(0, "done", legal={"done"})
    assert t.hand(0) == cards("AH KH TH 9C")
    assert st.deal.trump_holder == 0 and not st.deal.trump_face_up
    assert len(st.deal.stock) == 7  # nobody drew
    assert st.phase is Phase.PLAY and st.to_act == 0
    t.trick((0, "AH", cards("AH KH TH 9C")), (1, "JC", cards("AC KC QC JC")), (2, "JS", cards("AS KS QS JS")),
            (3, "JD", cards("AD KD QD JD")))
    t.trick((0, "KH"), (1, "QC"), (2, "QS"), (3, "QD"))
    t.trick((0, "TH"), (1, "KC"), (2, "KS"), (3, "KD"))
    t.trick((0, "9C", {"9C"}), (1, "AC", {"AC"}), (2, "AS", {"AS"}), (3, "AD", {"AD"}))
    r = t.result
    assert r.mauschler == 0 and r.tricks == [3, 1, 0, 0]
    assert r.credits == [3, 1, 0, 0] and r.debits == [0, 0, 4, 4]
    assert r.pot_after == 8 and r.deltas == [-1, 1, -4, -4]


def test_no_forced_knock_when_the_pot_is_not_new():
    t = Table("mauscheln_classic", 4, hands=FORCED_HANDS, trump="TH", stock=FORCED_STOCK, pot=4,
              forced_knock_new_pot=True)
    assert t.state.session.pot == 8
    assert t.state.phase is Phase.DECLARE and t.state.to_act == 1
    assert t.legal() == {"mauscheln", "pass"}


def test_classic_pass_round_keeps_the_pot_and_the_next_dealer_antes():
    t = Table("mauscheln_classic", 4, knock=False, max_deals=1)
    st = t.state
    for seat in (1, 2, 3, 0):
        t.act(seat, "pass", legal={"mauscheln", "pass"})
    r = t.result
    assert r.kind == "throw_in" and r.pot_after == 4 and r.deltas == [-4, 0, 0, 0]
    assert not st.over and st.session.deals_settled == 0
    assert st.session.dealer == 1 and st.session.pot == 8 and st.session.chips == [196, 196, 200, 200]
    assert st.phase is Phase.DECLARE and st.to_act == 2


RESHUFFLE_HANDS = {1: "9C 9S TC TS", 2: "AH KH AS KS", 3: "AC KC QC JC", 0: "AD KD QD JD"}
RESHUFFLE_STOCK = "QH JH TH QS JS TD 9D"


def test_classic_reshuffle_takes_the_discards_and_the_trump_card():
    t = Table("mauscheln_classic", 4, hands=RESHUFFLE_HANDS, trump="9H", stock=RESHUFFLE_STOCK, knock=False)
    st = t.state
    t.act(1, "mauscheln")
    t.act(2, "go")
    t.act(3, "pass")
    t.act(0, "pass")
    t.exchange(1, "9C 9S TC TS")
    assert t.hand(1) == cards("QH JH TH QS") and len(st.deal.stock) == 3
    for card in ("AH", "KH", "AS"):
        t.act(2, card)
    t.act(2, "KS", legal={"KS", "done"})  # RESHUFFLE+TRUMP: not capped by the 3-card stock
    t.act(2, "done", legal={"done"})
    got = t.hand(2)
    assert cards("JS TD 9D") < got and len(got) == 4
    pool = cards("9C 9S TC TS AH KH AS KS 9H")  # both exchanges' discards plus the trump card
    (drawn,) = got - cards("JS TD 9D")
    assert drawn in pool
    assert t.codes(sum(1 << c for c in st.deal.stock)) == pool - {drawn}
    assert st.deal.discard_pile == 0 and not st.deal.trump_face_up
    assert st.deal.trump_suit == SUITS.index("H") and t.env.infos["player_1"]["trump"] == "9H"
    assert st.phase is Phase.PLAY and st.to_act == 1


def test_classic_reshuffle_after_a_knock_leaves_the_trump_card_to_the_dealer():
    """D11: after a knock the trump card is excluded from the reshuffle; 4b-4d."""
    hands = {0: "9C 9S TC TS", 1: "AH KH AS KS", 2: "AC KC QC JC", 3: "AD KD QD JD"}
    t = Table("mauscheln_classic", 4, hands=hands, trump="QH", stock="9H JH TH QS JS TD 9D")
    st = t.state
    t.act(0, "knock", legal={"knock", "no_knock"})
    t.act(1, "go")
    t.act(2, "go")
    t.act(3, "pass")
    assert st.phase is Phase.EXCHANGE and st.to_act == 0
    t.exchange(0, "9C 9S TC TS")  # 4b: 0-4 cards, drawn blind
    assert t.hand(0) == cards("9H JH TH QS") and len(st.deal.stock) == 3
    t.exchange(1, "AH KH AS KS")  # 4c: the stock runs out
    got = t.hand(1)
    assert cards("JS TD 9D") < got and len(got) == 4
    pool = cards("9C 9S TC TS AH KH AS KS")
    (drawn,) = got - cards("JS TD 9D")
    assert drawn in pool
    assert t.codes(sum(1 << c for c in st.deal.stock)) == pool - {drawn}
    assert st.deal.trump_face_up
    t.exchange(2)
    # 4d: the dealer sees his cards, discards exactly one and takes the trump card.
    assert st.to_act == 0
    t.act(0, "QS", legal=cards("9H JH TH QS"))
    t.act(0, "done", legal={"done"})
    assert t.hand(0) == cards("9H JH TH QH") and st.deal.trump_holder == 0
    assert st.phase is Phase.PLAY and st.to_act == 0


# =========================================================================== mousel (§2.4)
@pytest.mark.parametrize(
    "decisions,winner,deltas",
    [
        ([(1, "out"), (2, "out"), (3, "out")], 0, [8, 0, 0, 0]),  # the dealer is IN without deciding
        ([(1, "in"), (2, "out"), (3, "out"), (0, "out")], 1, [-4, 12, 0, 0]),
    ],
    ids=["auto-in", "one-in"],
)
def test_mousel_a_single_in_seat_takes_the_pot_without_play(decisions, winner, deltas):
    t = Table("mousel", 4, pot=8, max_deals=2)
    for seat, action in decisions:
        t.act(seat, action, legal={"in", "out"})
    r = t.result
    assert r.kind == "no_play" and r.mauschler == winner
    assert r.pot_before == 12 and r.credits[winner] == 12 and r.debits == [0, 0, 0, 0]
    assert r.pot_after == 0 and r.deltas == deltas
    assert t.state.session.dealer == 1 and t.state.session.pot == 4


def test_mousel_volunteer_leader_relieves_the_forehand():
    hands = {1: "AD KD QD 7D", 2: "7C 8C 7S 8S", 3: "AH KH QH 8D", 0: "9C TC 9S TS"}
    t = Table("mousel", 4, hands=hands, trump="9H", volunteer_leader=True)
    st = t.state
    t.act(1, "in", legal={"in", "in_lead", "out"})
    t.act(2, "in_lead", legal={"in", "in_lead", "out"})  # FH said in, but nobody is committed yet
    t.act(3, "in", legal={"in", "out"})  # a volunteer exists
    t.act(0, "out", legal={"in", "out"})
    assert st.deal.roles == [Role.OUT, Role.IN, Role.COMMITTED, Role.IN]
    # The volunteer exchanges first and leads.
    assert st.phase is Phase.EXCHANGE and st.to_act == 2
    t.exchange(2)
    t.exchange(3)
    t.exchange(1)
    t.trick((2, "7C"), (3, "QH", cards("AH KH QH")), (1, "7D", cards("AD KD QD 7D")))
    t.trick((3, "KH"), (1, "QD"), (2, "8C"))
    t.trick((3, "AH"), (1, "KD"), (2, "7S"))
    t.trick((3, "8D"), (1, "AD", {"AD"}), (2, "8S"))
    r = t.result
    assert r.tricks == [0, 1, 0, 3]
    assert r.credits == [0, 1, 0, 3]
    # Flat bête: the volunteer with 0 tricks pays P once (not 2P); FH needs only 1 trick.
    assert r.debits == [0, 0, 4, 0]
    assert r.pot_after == 4 and r.deltas == [-4, 1, -4, 3]


def test_mousel_without_volunteer_leader_in_lead_is_never_legal():
    t = Table("mousel", 4)
    t.act(1, "in", legal={"in", "out"})
    t.act(2, "in", legal={"in", "out"})


def test_mousel_flat_bete_for_the_committed_forehand():
    hands = {1: "7C 8C 7S 8S", 2: "AH KH QH JH", 0: "9C TC 9S TS"}
    t = Table("mousel", 3, hands=hands, trump="9H", pot=8)
    st = t.state
    t.act(1, "in")
    t.act(2, "in")
    t.act(0, "out")
    assert st.deal.roles[1] is Role.COMMITTED and st.to_act == 1
    t.exchange(1)
    t.exchange(2)
    t.trick((1, "7C"), (2, "JH", cards("AH KH QH JH")))
    t.trick((2, "QH"), (1, "8C", cards("8C 7S 8S")))
    t.trick((2, "KH"), (1, "7S"))
    t.trick((2, "AH"), (1, "8S"))
    r = t.result
    assert r.pot_before == 12 and r.tricks == [0, 0, 4]
    assert r.credits == [0, 0, 12] and r.debits == [0, 12, 0]  # exactly P once, not 2P
    assert r.pot_after == 12 and r.deltas == [-4, -12, 12]


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_mousel_exchange_limit(limit):
    hands = {1: "7C 8C 9C AH", 2: "AS KS QS JS", 3: "AD KD QD JD", 0: "AC KC QC JC"}
    t = Table("mousel", 4, hands=hands, trump="9H", stock="KH QH JH", exchange_limit=limit)
    st = t.state
    t.act(1, "in")
    t.act(2, "in")
    t.act(3, "out")
    t.act(0, "out")
    assert st.to_act == 1 and st.phase is Phase.EXCHANGE
    hand = ["7C", "8C", "9C", "AH"]
    for k in range(limit):
        t.act(1, hand[k], legal=set(hand[k:]) | {"done"})
    assert t.legal() == {"done"}
    t.act(1, "done")
    assert st.deal.exchanged[1] == limit
    assert t.hand(1) == set(hand[limit:]) | set(["KH", "QH", "JH"][:limit])


def test_mousel_knocking_dealer_is_committed_skipped_and_takes_the_trump_card():
    hands = {0: "AH KH 7C 8C", 1: "AC KC QC JC", 2: "AS KS QS JS", 3: "AD KD QD JD"}
    t = Table("mousel", 4, hands=hands, trump="QH", stock="JH", knock=True, volunteer_leader=True)
    st = t.state
    assert st.phase is Phase.KNOCK and st.to_act == 0 and t.seen(0) == set()
    t.act(0, "knock", legal={"knock", "no_knock"})
    assert st.deal.roles[0] is Role.COMMITTED
    t.act(1, "out", legal={"in", "out"})  # no in_lead: the knocker is committed
    t.act(2, "out", legal={"in", "out"})
    t.act(3, "in", legal={"in", "out"})  # not auto-IN: the knocker is in
    # The dealer is skipped when declaring; he exchanges first by the modern procedure.
    assert st.phase is Phase.EXCHANGE and st.to_act == 0
    t.act(0, "7C", legal=cards("AH KH 7C 8C"))
    t.act(0, "8C", legal=cards("AH KH 8C") | {"done"})
    t.act(0, "done")
    assert st.deal.trump_holder == 0 and not st.deal.trump_face_up
    assert t.hand(0) == cards("AH KH QH JH")
    assert t.seen(0) == cards("AH KH QH")  # the blind card stays hidden until the others exchanged
    assert st.to_act == 3
    t.exchange(3)
    assert t.seen(0) == cards("AH KH QH JH")
    assert st.phase is Phase.PLAY and st.to_act == 0
    t.trick((0, "AH"), (3, "JD", cards("AD KD QD JD")))
    t.trick((0, "KH"), (3, "QD"))
    t.trick((0, "QH"), (3, "KD"))
    t.trick((0, "JH"), (3, "AD"))
    r = t.result
    assert r.mauschler == 0 and r.tricks == [4, 0, 0, 0]
    assert r.credits == [4, 0, 0, 0] and r.debits == [0, 0, 0, 4]
    assert r.pot_after == 4 and r.deltas == [0, 0, 0, -4]


def test_mousel_knocker_alone_in_takes_the_pot():
    t = Table("mousel", 4, trump="AH", pot=8, knock=True)
    t.act(0, "knock")
    for seat in (1, 2, 3):
        t.act(seat, "out", legal={"in", "out"})
    r = t.result
    assert r.kind == "no_play" and r.mauschler == 0 and r.credits == [12, 0, 0, 0]
    assert r.deltas == [8, 0, 0, 0] and r.pot_after == 0


# =========================================================================== mouche (§2.5, §2.6)
# 4 players, 36 cards, counter-clockwise: dealer 0, forehand 3, then 2, 1, 0.
MOUCHE_HANDS = {0: "KH QH JH AH TH", 3: "KC QC JC 9S 8S", 2: "AC TC 9D 8D 7D", 1: "KS QS JS AS 6C"}


def decide_legal(t: Table, seat: int, *named: str) -> set[str]:
    return decide_set(t.hand(seat), *named)


@pytest.mark.parametrize(
    "decisions,winner,deltas,options",
    [
        ([(3, "pass"), (2, "pass"), (1, "pass")], 0, [10, 0, 0, 0], {}),  # the dealer does not decide
        ([(3, "pass"), (2, "pass"), (1, "pass")], 0, [10, 0, 0, 0], {"beatrix": True}),  # D31: before any swap
        ([(3, "stay"), (2, "pass"), (1, "pass"), (0, "pass")], 3, [-5, 0, 0, 15], {}),
    ],
    ids=["dealer-alone", "dealer-alone-beatrix", "one-left-after-dealer"],
)
def test_mouche_lone_seat_takes_the_pot(decisions, winner, deltas, options):
    t = Table("mouche", 4, pot=10, max_deals=2, **options)
    for seat, action in decisions:
        t.act(seat, action, legal=decide_legal(t, seat, "stay", "pass"))
    r = t.result
    assert r.kind == "no_play" and r.mauschler == winner
    assert r.pot_before == 15 and r.credits[winner] == 15 and r.debits == [0, 0, 0, 0]
    assert r.pot_after == 0 and r.deltas == deltas
    assert t.state.session.dealer == 3 and t.state.session.pot == 5  # the right neighbour deals next


def test_pamphile_is_the_highest_trump_and_not_a_club():
    hands = {2: "KH KC QC 9S 8S", 1: "JC 8C QH AS TS", 0: "9H TH AH 9C 8D"}
    t = Table("mouche", 3, hands=hands, trump="8H", pamphile=True, pamphile_bonus=False)
    st = t.state
    for seat in (2, 1, 0):
        t.act(seat, "stay")
    assert st.phase is Phase.PLAY and st.to_act == 2
    t.trick((2, "KC"), (1, "8C", {"8C"}), (0, "9C", {"9C"}))  # JC is no club
    t.trick((2, "KH"), (1, "JC", {"JC"}), (0, "9H", cards("9H TH AH")))  # JC is a trump above KH
    assert st.deal.tricks_won[1] == 1
    t.trick((1, "AS"), (0, "TH", {"TH", "AH"}), (2, "8S", {"9S", "8S"}))
    t.trick((0, "AH"), (2, "9S", {"QC", "9S"}), (1, "QH", {"QH"}))
    t.trick((1, "TS"), (0, "8D"), (2, "QC"))
    r = t.result
    assert r.tricks == [1, 3, 1] and r.credits == [1, 3, 1] and r.debits == [0, 0, 0]
    assert r.pot_after == 0 and r.deltas == [-4, 3, 1]


@pytest.mark.parametrize("beatrix", [False, True])
def test_pamphile_turned_up_the_dealer_names_trump(beatrix):
    t = Table("mouche", 4, trump="JC", pamphile=True, beatrix=beatrix)
    st = t.state
    assert st.phase is Phase.NAME_TRUMP and st.to_act == 0
    assert len(t.seen(0)) == 5  # he names trump after seeing his hand
    t.act(0, "trump:S", legal={"trump:C", "trump:S", "trump:H", "trump:D"})
    assert st.deal.trump_suit == SUITS.index("S")
    assert st.deal.trump_face_up and t.game.deck.codes[st.deal.trump_card] == "JC"  # stays face up, out of play
    assert st.phase is Phase.DECIDE and st.to_act == 3  # nobody holds the Pamphile: no announcement
    for seat in (3, 2, 1):
        t.act(seat, "stay")
    t.act(0, "stay", legal=decide_legal(t, 0, "stay", "pass"))  # no swap for the turned-up Pamphile


@pytest.mark.parametrize("announce", [True, False])
def test_pamphile_bonus_is_paid_player_to_player(announce):
    hands = {2: "JC 7C 8C 9S 6D"}
    t = Table("mouche", 4, hands=hands, trump="6H", pamphile=True)
    st = t.state
    assert st.phase is Phase.ANNOUNCE and st.to_act == 2  # before forehand decides
    t.act(2, "announce" if announce else "silent", legal={"announce", "silent"})
    bonus = [-1, -1, 3, -1] if announce else [0, 0, 0, 0]
    assert st.session.chips == [45 + bonus[0], 50 + bonus[1], 50 + bonus[2], 50 + bonus[3]]
    assert st.session.pot == 5
    assert st.phase is Phase.DECIDE and st.to_act == 3
    for seat in (3, 2, 1):
        t.act(seat, "pass")
    r = t.result
    assert r.kind == "no_play" and r.credits == [5, 0, 0, 0]
    assert r.deltas == [bonus[0], bonus[1], bonus[2], bonus[3]]


@pytest.mark.parametrize("wild", [True, False])
def test_pamphile_wild_completes_a_mouche(wild):
    hands = {3: "KS QS JS AS JC", 2: "KC QC 9D 8D 7D", 1: "TC 9C 8C 7C 6S", 0: "KD QD JD AD TS"}
    t = Table("mouche", 4, hands=hands, trump="6H", pamphile=True, pamphile_wild=wild, pamphile_bonus=False)
    st = t.state
    t.act(3, "stay")
    t.act(2, "stay")
    t.act(1, "pass")
    t.act(0, "stay")
    if not wild:  # the Pamphile counts as a club: no mouche, tricks are played
        assert st.phase is Phase.PLAY and st.session.results == []
        return
    r = t.result
    assert r.kind == "mouche" and r.mauschler == 3
    assert r.credits == [0, 0, 0, 5] and r.debits == [5, 0, 5, 0]
    assert r.pot_after == 10 and r.deltas == [-10, 0, -5, 5]


@pytest.mark.parametrize("order,pot,escrow", [("fifo", 8, [5]), ("largest", 10, [3])])
def test_mouche_queue_items_enter_one_per_ante(order, pot, escrow):
    """Seat 3 can pay only 3 and seat 2 pays 5: items [3, 5] in decision order."""
    t = Table("mouche", 4, hands=MOUCHE_HANDS, trump="6H", chips=[50, 50, 50, 3], queue=True,
              queue_order=order, max_deals=2)
    st = t.state
    t.act(3, "stay")
    t.act(2, "stay")
    t.act(1, "pass")
    t.act(0, "stay", legal=decide_legal(t, 0, "stay", "pass"))  # a trump mouche
    r = t.result
    assert r.kind == "mouche" and r.mauschler == 0
    assert r.credits == [5, 0, 0, 0] and r.debits == [0, 0, 5, 3]
    assert r.pot_after == 0 and r.deltas == [0, 0, -5, -3]
    # Seat 3 is out of chips and eliminated; seat 2 deals next and antes; one queue item enters.
    assert st.session.alive == [True, True, True, False]
    assert st.session.dealer == 2 and st.session.chips == [50, 50, 40, 0]
    assert st.session.pot == pot and st.session.escrow == escrow


@pytest.mark.parametrize("collect", [True, False])
def test_mouche_collect_1730_the_mouche_winner_takes_the_queue(collect):
    deck = make_config("mouche", 4).deck.codes
    # Second deal: dealer 2, seat 3 eliminated; seats 1, 0, 2 in decision order. Seat 1 has a spade mouche.
    second = {1: "KS QS JS AS TS", 0: "KC QC 9D 8D 7D", 2: "AC TC 9C 8C 7H"}
    order = stack_deck(deck, second, "6H", deal_seats(4, 2, -1, alive=[0, 1, 2]), (3, 2, "T"))
    t = Table("mouche", 4, hands=MOUCHE_HANDS, trump="6H", chips=[50, 50, 50, 3], queue=True,
              collect_1730=collect, max_deals=2, decks=[order])
    st = t.state
    t.act(3, "stay")
    t.act(2, "stay")
    t.act(1, "pass")
    t.act(0, "stay")
    assert st.session.escrow == [5] and st.session.pot == 8
    assert t.hand(1) == cards(second[1])
    t.act(1, "stay", legal=decide_legal(t, 1, "stay", "pass"))
    t.act(0, "stay")
    t.act(2, "stay")
    r = t.result
    assert r.kind == "mouche" and r.mauschler == 1 and r.pot_before == 8
    won = 8 + (5 if collect else 0)
    assert r.credits == [0, won, 0, 0] and r.debits == [8, 0, 8, 0]
    assert r.deltas == [-8, won, -8 - 5, 0]  # seat 2 also anted 5
    assert r.pot_after == 0
    assert st.session.escrow == ([8, 8] if collect else [5, 8, 8])


@pytest.mark.parametrize("cap,paid", [(None, 15), (10, 10), (5, 5)])
def test_mery_cap_limits_every_mouche_payment(cap, paid):
    t = Table("mouche", 4, hands=MOUCHE_HANDS, trump="6H", pot=10, mery_cap=cap)
    t.act(3, "stay")
    t.act(2, "stay")
    t.act(1, "pass")
    t.act(0, "stay")
    r = t.result
    assert r.kind == "mouche" and r.pot_before == 15
    assert r.credits == [15, 0, 0, 0] and r.debits == [0, 0, paid, paid]
    assert r.pot_after == 2 * paid and r.deltas == [10, 0, -paid, -paid]


def test_beatrix_swap_forbids_passing_and_kills_the_mouche():
    hands = {0: "KH QH JH AH 9C", 3: "KC QC JC 9S 8S", 2: "AC TC 9D 8D 7D", 1: "KS QS JS AS 6C"}
    t = Table("mouche", 4, hands=hands, trump="TH", beatrix=True)
    st = t.state
    t.act(3, "stay", legal=decide_legal(t, 3, "stay", "pass"))  # only the dealer may swap
    t.act(2, "stay")
    t.act(1, "pass")
    t.act(0, "swap", legal=decide_legal(t, 0, "stay", "pass", "swap"))
    t.act(0, "9C", legal=cards("KH QH JH AH 9C"))
    assert t.hand(0) == cards("KH QH JH AH TH")  # five trumps, but not his dealt cards
    assert st.deal.trump_holder == 0 and not st.deal.trump_face_up
    assert "9C" in t.codes(st.deal.discard_pile)
    t.act(0, "stay", legal=decide_legal(t, 0, "stay"))  # no pass, no second swap
    assert st.phase is Phase.PLAY and st.to_act == 3 and st.session.results == []
    t.trick((3, "KC"), (2, "TC", {"AC", "TC"}), (0, "TH", cards("KH QH JH AH TH")))
    t.trick((0, "AH"), (3, "8S"), (2, "7D"))
    t.trick((0, "JH"), (3, "9S"), (2, "8D"))
    t.trick((0, "QH"), (3, "JC"), (2, "9D"))
    t.trick((0, "KH"), (3, "QC"), (2, "AC"))
    r = t.result
    assert r.kind == "settled" and r.tricks == [5, 0, 0, 0]
    assert r.credits == [5, 0, 0, 0] and r.debits == [0, 0, 5, 5]
    assert r.pot_after == 10 and r.deltas == [0, 0, -5, -5]


W6_DECK = ("KH 7C 6C 7S 8H 6H KC QC JC AH TS 9S 8S 6S TH AC 9H 7D 8C 9D 6D "
           "KD QD TC 9C KS QS JS AS QH JH 7H JD AD TD 8D").split()


@pytest.mark.parametrize(
    "deal_2_3,hands",
    [
        (False, {3: "KH 7C 6C 8S 6S", 2: "7S 8H 6H TH AC", 1: "KC QC JC 9H 7D", 0: "AH TS 9S 8C 9D"}),  # W6
        (True, {3: "KH 7C JC AH TS", 2: "6C 7S 9S 8S 6S", 1: "8H 6H TH AC 9H", 0: "KC QC 7D 8C 9D"}),
    ],
    ids=["3+2", "2+3"],
)
def test_mouche_deal_pattern(deal_2_3, hands):
    t = Table("mouche", 4, decks=[W6_DECK], deal_2_3=deal_2_3)
    st = t.state
    expected, trump, stock = deal_deck(W6_DECK, deal_seats(4, 0, -1), (2, 3, "T") if deal_2_3 else (3, 2, "T"))
    assert {s: " ".join(h) for s, h in expected.items()} == hands  # the independent dealer agrees
    for seat, hand in hands.items():
        assert t.hand(seat) == cards(hand)
    assert t.game.deck.codes[st.deal.trump_card] == trump == "6D"
    assert [t.game.deck.codes[c] for c in reversed(st.deal.stock)] == stock


# =========================================================================== muschka (§2.7, §3.4)
def test_muschka_ace_of_spades_beats_a_led_trump_ace_and_its_holder_may_not_pass():
    hands = {1: "AH KC QC JC TC", 2: "AS KS QS 7D 8D", 0: "KH QH AC AD KD"}
    t = Table("muschka", 3, hands=hands, trump="9H")
    st = t.state
    t.act(1, "stay", legal=decide_legal(t, 1, "stay", "pass"))
    t.act(2, "stay", legal=decide_legal(t, 2, "stay"))  # the AS holder may not pass
    t.act(0, "stay", legal=decide_legal(t, 0, "stay", "pass"))
    t.trick((1, "AH"), (2, "AS", cards("AS KS QS 7D 8D")), (0, "QH", {"KH", "QH"}))
    assert st.deal.tricks_won == [0, 0, 1] and st.to_act == 2  # the AS wins the led trump ace
    t.trick((2, "KS"), (0, "KH", {"KH"}), (1, "TC", cards("KC QC JC TC")))
    t.trick((0, "AC"), (1, "JC", cards("KC QC JC")), (2, "QS", cards("QS 7D 8D")))  # no duty to beat
    t.trick((0, "AD"), (1, "QC"), (2, "7D", {"7D", "8D"}))
    t.trick((0, "KD"), (1, "KC"), (2, "8D"))
    r = t.result
    assert r.tricks == [4, 0, 1]
    # Seat 0: -4. Seat 1: no trick, +5. Seat 2 held the AS with 1 trick: -1 - 5.
    assert r.scores == [21, 30, 19] and st.session.scores == [21, 30, 19]
    assert r.deltas == [4, -5, 6]
    assert t.rewards == {0: 4, 1: -5, 2: 6}


def test_muschka_lone_seat_is_credited_with_five_tricks():
    hands = {1: "KC QC JC TC 9C", 2: "KD QD JD TD 9D", 0: "KH QH JH TH 9H"}
    t = Table("muschka", 3, hands=hands, trump="8H", stock="AS")
    st = t.state
    t.act(1, "pass", legal=decide_legal(t, 1, "stay", "pass"))
    t.act(2, "pass", legal=decide_legal(t, 2, "stay", "pass"))
    r = t.result  # the dealer's turn never comes
    assert r.kind == "no_play" and r.mauschler == 0
    assert r.tricks == [5, 0, 0]
    assert st.session.scores == [20, 25, 25] and r.deltas == [5, 0, 0]


@pytest.mark.parametrize("start,new,over", [(3, 0, True), (2, 25, False)], ids=["exactly-0-wins", "negative-resets"])
def test_muschka_exact_zero_ends_the_session_and_negative_resets(start, new, over):
    """U2: score 3 taking 3 tricks reaches 0 and wins; score 2 taking 3 tricks goes to -1 and resets to 25."""
    hands = {1: "AH KH QH 7C 8C", 2: "AC KC 7D 8D 9D", 0: "AD KD QD JD TD"}
    t = Table("muschka", 3, hands=hands, trump="9H", stock="AS", scores=[25, start, 25], max_deals=5)
    st = t.state
    for seat in (1, 2, 0):
        t.act(seat, "stay")
    t.trick((1, "AH"), (2, "7D"), (0, "TD"))
    t.trick((1, "KH"), (2, "8D"), (0, "JD"))
    t.trick((1, "QH"), (2, "9D"), (0, "QD"))
    t.trick((1, "7C"), (2, "AC", {"AC", "KC"}), (0, "KD"))
    t.trick((2, "KC"), (0, "AD"), (1, "8C", {"8C"}))
    r = t.result
    assert r.tricks == [0, 3, 2]
    assert st.session.scores == [30, new, 23]
    assert r.deltas == [-5, start - new, 2]
    assert st.over is over
    assert all(t.env.terminations.values()) is over


@pytest.mark.parametrize(
    "hands,trump,plays,tricks,scores",
    [
        # Hearts trump: the AS holder takes no trick and scores +10 (not +5); the AS under KH is an ordinary spade.
        ({1: "AH KH QH JH TH", 2: "AS 7C 8C 9C TC", 0: "AC KC QC JC 9D"}, "9H",
         [((1, "AH"), (2, "7C"), (0, "9D")), ((1, "KH"), (2, "AS"), (0, "JC")), ((1, "QH"), (2, "8C"), (0, "QC")),
          ((1, "JH"), (2, "9C"), (0, "KC")), ((1, "TH"), (2, "TC"), (0, "AC"))],
         [0, 5, 0], [30, 20, 35]),
        # Spades trump: the AS holder takes 2 tricks and scores -2 - 10.
        ({1: "AS KS 7C 8C 9C", 2: "AC KC QC JC TC", 0: "AD KD QD JD TD"}, "9S",
         [((1, "AS"), (2, "TC"), (0, "TD")), ((1, "KS"), (2, "JC"), (0, "JD")),
          ((1, "7C"), (2, "AC", cards("AC KC QC")), (0, "QD")), ((2, "KC"), (0, "KD"), (1, "8C", {"8C", "9C"})),
          ((2, "QC"), (0, "AD"), (1, "9C"))],
         [0, 2, 3], [30, 13, 22]),
    ],
    ids=["hearts-trump-no-trick", "spades-trump-two-tricks"],
)
def test_muschka_ace_of_spades_holder_scoring(hands, trump, plays, tricks, scores):
    """U2 / §3.4 step 2."""
    t = Table("muschka", 3, hands=hands, trump=trump)
    for seat in (1, 2, 0):
        t.act(seat, "stay")
    for plays_of_trick in plays:
        t.trick(*plays_of_trick)
    r = t.result
    assert r.tricks == tricks
    assert t.state.session.scores == scores and r.deltas == [25 - x for x in scores]


# =========================================================================== option validation
@pytest.mark.parametrize(
    "ruleset,options,name",
    [
        ("mauscheln_classic", {"stake": 6}, "stake"),
        ("mauscheln_classic", {"cap": 6}, "cap"),
        ("mauscheln_classic", {"cap": 4, "stake": 8}, "cap"),
        ("mouche", {"mery_cap": 7}, "mery_cap"),
        ("mouche", {"stake": 4}, "stake"),
        ("mouche", {"queue_order": "lifo"}, "queue_order"),
        ("mouche", {"pamphile_wild": True}, "pamphile"),
        ("mousel", {"exchange_limit": 0}, "exchange_limit"),
        ("mousel", {"exchange_limit": 5}, "exchange_limit"),
        ("mauscheln", {"belli": "8D"}, "belli"),
        ("mauscheln", {"belli_penalty": "dealer"}, "belli_penalty"),
        ("mauscheln", {"cap": 40}, "cap"),  # a classic option
        ("mouche", {"vierling": True}, "vierling"),  # a mauscheln option
        ("muschka", {"start_score": 0}, "start_score"),
    ],
)
def test_bad_option_is_rejected_naming_it(ruleset, options, name):
    with pytest.raises(ValueError, match=name):
        mauscheln_env.raw_env(ruleset=ruleset, num_players=4, **options)


# =========================================================================== presets
@pytest.mark.parametrize("path", sorted(PRESET_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_preset_equals_the_same_keyword_options(path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    ruleset = data.pop("ruleset")
    num_players = data.pop("num_players", None)
    by_keywords = make_config(ruleset, num_players, **data)
    assert load_preset(path) == by_keywords
    assert make_config(str(path)) == by_keywords
    assert mauscheln_env.raw_env(ruleset=str(path)).config == by_keywords
    assert mauscheln_env.raw_env(ruleset=ruleset, num_players=num_players, **data).config == by_keywords
