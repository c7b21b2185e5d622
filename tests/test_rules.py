"""Rules of ruleset mauscheln beyond the worked examples: knock, throw-in, payments, elimination."""

from __future__ import annotations

import pytest

from mauscheln_env.engine import Phase
from tests.scenario import Scenario
from tests.test_worked_examples import W3_DECK, W4_DECK, W5_DECK


def deck_string(hands: dict[int, list[str]], trump: str, stock: list[str], dealer: int, n: int) -> str:
    """The deck (top first) that pattern 1,1,T,1,1 turns into ``hands``."""
    seats = [(dealer + 1 + k) % n for k in range(n)]
    cards = [hands[s][0] for s in seats] + [hands[s][1] for s in seats] + [trump]
    cards += [hands[s][i] for i in (2, 3) for s in seats]
    return " ".join(cards + stock)


KNOCK_HANDS = {0: ["8S", "7C", "8D", "9D"], 1: ["KH", "AH", "AS", "7H"], 2: ["AD", "7S", "8C", "7D"], 3: ["9C", "TC", "9S", "TD"]}
# The top of the stock; the rest of it comes from the seeded shuffle.
KNOCK_DECK = deck_string(KNOCK_HANDS, "QH", "AC JC QS 9H TH JH KS QC KC 8H KD".split(), dealer=0, n=4)


def knock_scenario(**options) -> Scenario:
    return Scenario(KNOCK_DECK, 4, dealer=0, knock=True, **options)


def test_knock_is_blind_and_the_knocker_takes_the_trump_card():
    sc = knock_scenario()
    env, state = sc.env, sc.state
    assert state.phase is Phase.KNOCK and state.to_act == 0
    assert sc.legal() == {"knock", "no_knock"}
    assert env.infos["player_0"]["hand"] == []  # blind decision
    assert env.observe("player_0")["observation"][env._observer.slice("hand")].sum() == 0
    sc.act(0, "knock")
    # Going with runs from forehand over all other seats; nobody declares.
    sc.act(1, "go", legal={"go", "pass"})
    sc.act(2, "go")
    sc.act(3, "pass")
    assert state.phase is Phase.EXCHANGE and state.to_act == 0
    # The knocker now sees his hand and must discard at least one card.
    assert set(env.infos["player_0"]["hand"]) == {"8S", "7C", "8D", "9D"}
    assert sc.legal() == {"8S", "7C", "8D", "9D"}
    sc.act(0, "8S")
    assert sc.legal() == {"7C", "8D", "9D", "done"}
    sc.act(0, "7C")
    sc.act(0, "8D")
    sc.act(0, "done")
    # He received QH plus two blind cards (AC, JC) that stay hidden until the goers have exchanged.
    assert state.deal.trump_holder == 0
    assert set(env.infos["player_0"]["hand"]) == {"QH", "9D"}
    assert sorted(env.game.deck.codes_of(state.deal.hands[0])) == sorted(["QH", "9D", "AC", "JC"])
    assert state.to_act == 1
    sc.exchange(1)
    sc.exchange(2, ["7S", "8C", "7D"])
    assert set(env.infos["player_2"]["hand"]) == {"QS", "AD", "9H", "TH"}
    assert state.phase is Phase.PLAY and state.to_act == 0  # the knocker leads
    assert set(env.infos["player_0"]["hand"]) == {"AC", "JC", "QH", "9D"}
    assert state.deal.exchanged == [3, 0, 3, None]
    views = env.observation_views(env.observe("player_1")["observation"])
    assert views["trump_taken_by"].tolist() == [0, 0, 0, 1]  # seat 0 is three seats to player_1's left
    assert views["knock"].tolist() == [1, 0]


def test_knock_with_nobody_going_gives_the_knocker_the_pot_unseen():
    sc = knock_scenario(max_deals=2)
    sc.act(0, "knock")
    for seat in (1, 2, 3):
        sc.act(seat, "pass")
    result = sc.state.session.results[-1]
    assert result.kind == "no_play" and result.mauschler == 0
    assert result.deltas == [0, 0, 0, 0]  # he anted 4 and took the pot of 4
    assert sc.state.session.dealer == 1 and sc.state.session.pot == 4


def test_no_knock_goes_to_declaring_and_reveals_the_hand():
    sc = knock_scenario()
    sc.act(0, "no_knock")
    assert sc.state.phase is Phase.DECLARE and sc.state.to_act == 1
    assert set(sc.env.infos["player_0"]["hand"]) == {"8S", "7C", "8D", "9D"}
    assert sc.env.observe("player_1")["observation"][sc.env._observer.slice("knock")].tolist() == [0, 1]


@pytest.mark.parametrize("min_rank,offered", [("Q", True), ("K", False), ("A", False), ("7", True)])
def test_knock_threshold(min_rank, offered):
    sc = knock_scenario(knock_min_rank=min_rank)
    assert (sc.state.phase is Phase.KNOCK) is offered


def test_exchange_is_capped_by_the_stock():
    """CAP (D3): with 5 players the stock holds 11 cards, so the third exchanger may discard only 3."""
    sc = Scenario(W3_DECK.replace("7S QH JH TH 9H 8H KD QD", ""), 5, dealer=0)
    assert len(sc.state.deal.stock) == 11
    sc.act(1, "mauscheln")
    for seat in (2, 3, 4, 0):
        sc.act(seat, "go")
    for seat in (1, 2):
        hand = sc.env.infos[f"player_{seat}"]["hand"]
        sc.exchange(seat, hand)
    assert len(sc.state.deal.stock) == 3
    hand = sc.env.infos["player_3"]["hand"]
    for card in hand[:3]:
        sc.act(3, card)
    assert sc.legal() == {"done"}
    sc.act(3, "done")
    assert sc.legal() == {"done"}  # seat 4 finds the stock empty but is still asked
    sc.act(4, "done")
    sc.act(0, "done")
    assert sc.state.phase is Phase.PLAY


def test_throw_in_keeps_the_pot_and_the_next_dealer_antes_on_top():
    sc = Scenario(W3_DECK, 4, dealer=0, max_deals=1)
    for seat in (1, 2, 3, 0):
        sc.act(seat, "pass", legal={"mauscheln", "pass"})
    result = sc.state.session.results[-1]
    assert result.kind == "throw_in"
    assert result.deltas == [-4, 0, 0, 0]
    assert sc.rewards["player_0"] == -4
    # A throw-in does not count towards max_deals: the session goes on with dealer 1.
    assert not sc.state.over
    assert sc.state.session.dealer == 1 and sc.state.session.pot == 8 and sc.state.session.deals_settled == 0
    assert sc.state.session.chips == [36, 36, 40, 40]


def test_consecutive_throw_ins_truncate_the_session():
    sc = Scenario(W3_DECK, 4, dealer=0, max_throw_ins=2)
    for _ in range(2):
        start = sc.state.to_act
        for k in range(4):
            sc.act((start + k) % 4, "pass")
    assert sc.state.over and sc.state.session.truncated
    assert all(sc.env.truncations.values()) and not any(sc.env.terminations.values())
    assert sum(sc.rewards.values()) == -8  # two antes went into the pot


def test_dealer_may_declare_last_and_decliners_may_go_with():
    sc = Scenario(W3_DECK, 4, dealer=0)
    for seat in (1, 2, 3):
        sc.act(seat, "pass")
    sc.act(0, "mauscheln")
    assert sc.state.phase is Phase.GO_WITH and sc.state.queue == [1, 2, 3]
    sc.act(1, "go")


def test_nobody_goes_with_the_mauschler_takes_the_pot():
    sc = Scenario(W4_DECK, 3, dealer=0, pot=4, max_deals=2)
    sc.act(1, "mauscheln")
    sc.act(2, "pass")
    sc.act(0, "pass")
    result = sc.state.session.results[-1]
    assert result.kind == "no_play" and result.credits == [0, 8, 0] and result.debits == [0, 0, 0]
    assert sc.state.session.deals_settled == 1 and sc.state.session.pot == 4  # Ben antes for the next deal


def test_indivisible_pot_keeps_the_remainder():
    # U3-style: P = 10 -> 2 per trick, 2 chips stay in the pot.
    sc = Scenario(W4_DECK, 3, dealer=0, pot=6, max_deals=2)
    sc.act(1, "mauscheln")
    sc.act(2, "go")
    sc.act(0, "pass")
    sc.exchange(1)
    sc.exchange(2)
    for lead, follow in (("AS", "QH"), ("KS", "KH"), ("QS", "AH"), ("7D", "8D")):
        sc.trick((1, lead), (2, follow))
    result = sc.state.session.results[-1]
    assert result.pot_before == 10 and result.credits == [0, 6, 2] and result.pot_after == 2
    assert sc.state.session.pot == 6  # remainder 2 + Ben's ante 4


def test_partial_payment_elimination_and_session_end():
    # W5 with Ben holding 5 chips: he wins 2, owes a bete of 8 and can pay only 7.
    sc = Scenario(W5_DECK, 3, dealer=0, pot=4, chips=[40, 5, 40], max_deals=5)
    sc.act(1, "mauscheln")
    sc.act(2, "go")
    sc.act(0, "pass")
    sc.exchange(1)
    sc.exchange(2)
    sc.trick((1, "AS"), (2, "QS"))
    sc.trick((1, "7H"), (2, "AH"))
    sc.trick((2, "KS"), (1, "8H"))
    sc.trick((2, "AD"), (1, "7D"))
    result = sc.state.session.results[-1]
    assert result.debits == [0, 7, 0] and result.pot_after == 7
    assert sc.state.session.chips == [36, 0, 46]
    # Ben is eliminated; two seats remain, so the session ends.
    assert sc.state.session.alive == [True, False, True]
    assert sc.state.over and all(sc.env.terminations.values())
    assert sum(sc.rewards.values()) == -(7 - 4)


def test_eliminated_seat_is_skipped_and_the_session_goes_on():
    sc = Scenario(W3_DECK, 4, dealer=0, chips=[40, 40, 4, 40], max_deals=3)
    sc.act(1, "mauscheln")
    sc.act(2, "go")
    sc.act(3, "go")
    sc.act(0, "pass")
    for seat in (1, 2, 3):
        sc.exchange(seat)
    sc.trick((1, "KH"), (2, "AH"), (3, "9S"))
    sc.trick((3, "AC"), (1, "7C"), (2, "9C"))
    sc.trick((3, "AD"), (1, "KS"), (2, "TD"))
    sc.trick((1, "AS"), (2, "7H"), (3, "8C"))
    state = sc.state
    assert state.session.chips[2] == 0 and state.session.alive == [True, True, False, True]
    assert state.session.dealer == 1 and state.deal.hands[2] == 0
    assert state.to_act == 3  # forehand skips the eliminated seat
    assert sc.env.infos["player_2"]["roles"][2] == "eliminated"


def test_short_ante_dealer_still_plays():
    sc = Scenario(W3_DECK, 4, dealer=0, chips=[3, 40, 40, 40])
    assert sc.state.session.pot == 3 and sc.state.session.chips[0] == 0
    sc.act(1, "pass")
    sc.act(2, "pass")
    sc.act(3, "pass")
    assert sc.legal() == {"mauscheln", "pass"}  # the dealer still declares
