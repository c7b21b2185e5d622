"""RULES.md §4 worked examples W3, W4 and W5 (ruleset mauscheln): every legal set and chip movement."""

from __future__ import annotations

import pytest

from mauscheln_env.engine import Phase
from tests.scenario import Scenario, hands_from_deck

W3_DECK = "KH 7H 9S 7D AS AH AC 8D 8S KS 9C AD 9D 7C TD 8C JD KC QC JC TC QS JS TS 7S QH JH TH 9H 8H KD QD"
W4_DECK = "AS AH 7C KS KH 8C 9S QS QH 9C 7D 8D TC AC KC QC JC JS TS 8S 7S JH TH 9H 8H 7H AD KD QD JD TD 9D"
W5_DECK = "AS KS 7C 7H QS 8C 9S 8H AH 9C 7D AD TC AC KC QC JC JS TS 8S 7S KH QH JH TH 9H KD QD JD TD 9D 8D"

ANNA, BEN, CARLA, DAN = 0, 1, 2, 3


def test_w3_hands_follow_the_deal_pattern():
    hands, trump, _ = hands_from_deck(W3_DECK.split(), 4, dealer=ANNA)
    assert hands == {
        BEN: ["KH", "AS", "KS", "7C"],
        CARLA: ["7H", "AH", "9C", "TD"],
        DAN: ["9S", "AC", "AD", "8C"],
        ANNA: ["7D", "8D", "9D", "JD"],
    }
    assert trump == "8S"


def test_engine_deals_a_deck_like_the_rules_say():
    sc = Scenario(W3_DECK, 4, dealer=ANNA)
    order = [sc.game.deck.parse(c) for c in W3_DECK.split()]
    spec = sc.game.deal_from_deck(order, ANNA)
    hands, trump, stock = hands_from_deck(W3_DECK.split(), 4, dealer=ANNA)
    assert [sc.game.deck.codes_of(sum(1 << c for c in h)) for h in spec.hands] == [
        sorted(hands[s], key=sc.game.deck.parse) for s in range(4)
    ]
    assert sc.game.deck.codes[spec.trump] == trump
    assert [sc.game.deck.codes[c] for c in spec.stock] == stock


def test_w3_spades_trump_first_trick_example():
    sc = Scenario(W3_DECK, 4, dealer=ANNA, max_deals=2)
    assert sc.state.session.pot == 4  # Anna antes 4
    assert sc.state.phase is Phase.DECLARE
    sc.act(BEN, "mauscheln", legal={"mauscheln", "pass"})
    # The others are not asked to declare; going with runs from Carla over everyone else.
    assert sc.state.phase is Phase.GO_WITH
    sc.act(CARLA, "go", legal={"go", "pass"})
    sc.act(DAN, "go", legal={"go", "pass"})
    sc.act(ANNA, "pass", legal={"go", "pass"})
    assert sc.state.phase is Phase.EXCHANGE
    sc.exchange(BEN)
    sc.exchange(CARLA)
    sc.exchange(DAN)
    sc.trick((BEN, "KH", {"KH", "AS", "KS", "7C"}), (CARLA, "AH", {"AH"}), (DAN, "9S", {"9S"}))
    assert sc.state.deal.tricks_won[DAN] == 1 and sc.state.to_act == DAN
    sc.trick((DAN, "AC", {"AC", "AD", "8C"}), (BEN, "7C", {"7C"}), (CARLA, "9C", {"9C"}))
    sc.trick((DAN, "AD", {"AD", "8C"}), (BEN, "KS", {"AS", "KS"}), (CARLA, "TD", {"TD"}))
    sc.trick((BEN, "AS", {"AS"}), (CARLA, "7H", {"7H"}), (DAN, "8C", {"8C"}))
    result = sc.state.session.results[-1]
    assert result.kind == "settled"
    assert result.tricks == [0, 2, 0, 2]
    assert result.pot_before == 4
    assert result.credits == [0, 2, 0, 2]
    assert result.debits == [0, 0, 4, 0]
    assert result.pot_after == 4
    assert result.deltas == [-4, 2, -4, 2]
    assert sc.rewards == {"player_0": -4, "player_1": 2, "player_2": -4, "player_3": 2}
    # Ben deals next and antes 4 on top of Carla's bete.
    assert sc.state.session.dealer == BEN
    assert sc.state.session.pot == 8
    assert sc.state.session.chips == [36, 38, 36, 42]


def test_w4_pot_of_eight_example_one():
    sc = Scenario(W4_DECK, 3, dealer=ANNA, pot=4, max_deals=2)
    assert sc.hands == {BEN: ["AS", "KS", "QS", "7D"], CARLA: ["AH", "KH", "QH", "8D"], ANNA: ["7C", "8C", "9C", "TC"]}
    assert sc.state.session.pot == 8
    sc.act(BEN, "mauscheln")
    sc.act(CARLA, "go")
    sc.act(ANNA, "pass")
    sc.exchange(BEN)
    sc.exchange(CARLA)
    sc.trick((BEN, "AS"), (CARLA, "QH", {"AH", "KH", "QH", "8D"}))
    sc.trick((BEN, "KS"), (CARLA, "KH"))
    sc.trick((BEN, "QS"), (CARLA, "AH"))
    sc.trick((BEN, "7D", {"7D"}), (CARLA, "8D", {"8D"}))
    result = sc.state.session.results[-1]
    assert result.tricks == [0, 3, 1]
    assert result.credits == [0, 6, 2]
    assert result.debits == [0, 0, 0]
    assert result.pot_after == 0
    assert result.deltas == [-4, 6, 2]
    assert sum(result.deltas) == -(result.pot_after - 4)  # the pot carried in was 4
    assert sc.state.session.dealer == BEN and sc.state.session.pot == 4
    assert sc.state.session.chips == [36, 42, 42]


def test_w5_pot_of_eight_example_two():
    sc = Scenario(W5_DECK, 3, dealer=ANNA, pot=4, max_deals=2)
    assert sc.hands == {BEN: ["AS", "7H", "8H", "7D"], CARLA: ["KS", "QS", "AH", "AD"], ANNA: ["7C", "8C", "9C", "TC"]}
    sc.act(BEN, "mauscheln")
    sc.act(CARLA, "go")
    sc.act(ANNA, "pass")
    sc.exchange(BEN)
    sc.exchange(CARLA)
    sc.trick((BEN, "AS"), (CARLA, "QS", {"KS", "QS"}))
    sc.trick((BEN, "7H"), (CARLA, "AH", {"AH"}))
    sc.trick((CARLA, "KS"), (BEN, "8H", {"8H", "7D"}))
    sc.trick((CARLA, "AD"), (BEN, "7D", {"7D"}))
    result = sc.state.session.results[-1]
    assert result.tricks == [0, 1, 3]
    assert result.credits == [0, 2, 6]
    assert result.debits == [0, 8, 0]
    assert result.pot_after == 8
    assert result.deltas == [-4, -6, 6]
    assert sc.state.session.dealer == BEN and sc.state.session.pot == 12
    assert sc.state.session.chips == [36, 30, 46]


@pytest.mark.parametrize("deck", [W3_DECK])
def test_scenario_rejects_a_wrong_legal_set(deck):
    sc = Scenario(deck, 4, dealer=ANNA)
    with pytest.raises(AssertionError):
        sc.act(BEN, "mauscheln", legal={"mauscheln"})
