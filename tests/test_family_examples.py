"""RULES.md §4 worked examples of the rule family: W1, W1b, W2, W6, W7 and U1-U5.

Every legal set the example names and every chip or score movement is asserted.
"""

from __future__ import annotations

import pytest

from mauscheln_env.engine import Phase, Role
from tests.scenario import Scenario, hands_from_deck

# ---------------------------------------------------------------- W1: [000] the €1.20 game (classic)

W1_DECK = (
    "KH AH AD 7S 9C TC TS JS 8S 7C QH AS 7H 8C 7D 9S TD JD QD 8D 9D AC JC QS 9H TH JH KS QC KC 8H KD"
)
A, B, C, D, E = 0, 1, 2, 3, 4


def w1_scenario(**options) -> Scenario:
    return Scenario(W1_DECK, 5, dealer=A, pot=20, ruleset="mauscheln_classic", **options)


def test_w1_hands_follow_the_classic_deal():
    hands, trump, stock = hands_from_deck(W1_DECK.split(), 5, A, (2, "T", 2))
    assert hands == {
        B: ["KH", "AH", "AS", "7H"],
        C: ["AD", "7S", "8C", "7D"],
        D: ["9C", "TC", "9S", "TD"],
        E: ["TS", "JS", "JD", "QD"],
        A: ["8S", "7C", "8D", "9D"],
    }
    assert trump == "QH"
    assert stock[:11] == "AC JC QS 9H TH JH KS QC KC 8H KD".split()


def play_w1(sc: Scenario) -> None:
    env, state = sc.env, sc.state
    assert state.session.pot == 24  # 20 carried in + A's stake of 4
    assert state.phase is Phase.KNOCK and sc.legal() == {"knock", "no_knock"}
    assert env.infos["player_0"]["hand"] == []  # the knock is blind
    sc.act(A, "knock")
    sc.act(B, "go")
    sc.act(C, "go")
    sc.act(D, "pass")
    sc.act(E, "pass")
    # 4b: A sees his four cards, discards them all and draws four blind.
    assert set(env.infos["player_0"]["hand"]) == {"8S", "7C", "8D", "9D"}
    sc.exchange(A, ["8S", "7C", "8D", "9D"])
    assert env.infos["player_0"]["hand"] == []  # AC JC QS 9H lie face down
    assert set(sc.game.deck.codes_of(state.deal.hands[A])) == {"AC", "JC", "QS", "9H"}
    # 4c: the goers exchange from forehand.
    sc.exchange(B)
    sc.exchange(C, ["7S", "8C", "7D"])
    assert set(env.infos["player_2"]["hand"]) == {"AD", "TH", "JH", "KS"}
    # 4d: A picks up, discards exactly one card (QS) and takes the trump card QH.
    assert state.to_act == A
    assert sc.legal() == {"AC", "JC", "QS", "9H"}
    sc.act(A, "QS")
    assert sc.legal() == {"done"}
    sc.act(A, "done")
    assert set(env.infos["player_0"]["hand"]) == {"QH", "9H", "AC", "JC"}
    assert state.deal.trump_holder == A and state.phase is Phase.PLAY and state.to_act == A
    sc.trick((A, "AC"), (B, "KH", {"KH", "AH", "7H"}), (C, "TH", {"TH", "JH"}))
    sc.trick((B, "AH"), (C, "JH", {"JH"}), (A, "9H", {"QH", "9H"}))
    sc.trick((B, "AS"), (C, "KS", {"KS"}), (A, "QH", {"QH"}))
    sc.trick((A, "JC"), (B, "7H"), (C, "AD"))


def test_w1_classic_knock_on_the_queen_of_hearts():
    sc = w1_scenario(max_deals=2)
    play_w1(sc)
    result = sc.state.session.results[-1]
    assert result.tricks == [1, 3, 0, 0, 0]
    assert result.pot_before == 24
    assert result.credits == [6, 18, 0, 0, 0]
    assert result.debits == [24, 0, 24, 0, 0]
    assert result.pot_after == 48
    assert result.deltas == [-22, 18, -24, 0, 0]
    # B deals next and antes 4: the next pot is 52 (€2.60).
    assert sc.state.session.dealer == B and sc.state.session.pot == 52


def test_w1_pot_cap_u4():
    """U4: with C = 40 the bêtes of 48 plus B's stake give 52: the pot is capped at 40, the reserve holds 12."""
    sc = w1_scenario(max_deals=3, cap=40)
    play_w1(sc)
    state = sc.state
    assert state.session.pot == 40 and state.session.reserve == 12
    # Next deal: B (dealer) knocks or not; let the mauschler take the pot without play.
    if state.phase is Phase.KNOCK:
        sc.act(B, "no_knock")
    sc.act(C, "mauscheln")
    for seat in (D, E, A, B):
        sc.act(seat, "pass")
    assert state.session.results[-1].kind == "no_play" and state.session.results[-1].credits[C] == 40
    # C antes 4; the reserve tops the pot up: 4 + 12 = 16, reserve 0.
    assert state.session.dealer == C and state.session.pot == 16 and state.session.reserve == 0
    assert sum(state.session.chips) + state.session.pot + state.session.reserve == state.session.total


W1B_HANDS_ONE_TRICK = {1: ["AS", "7H", "8H", "7D"], 2: ["KS", "QS", "AH", "AD"], 0: ["7C", "8C", "9C", "TC"]}
W1B_HANDS_NO_TRICK = {1: ["7H", "8H", "7D", "8D"], 2: ["AS", "KS", "AH", "AD"], 0: ["7C", "8C", "9C", "TC"]}


@pytest.mark.parametrize("hands,tricks,bete,next_pot", [(W1B_HANDS_ONE_TRICK, 1, 52, 56), (W1B_HANDS_NO_TRICK, 0, 104, 108)])
def test_w1b_follow_up_pot_of_52(hands, tricks, bete, next_pot):
    """W1b: P = 52, v = 13; a mauschler with 1 trick pays 52 (next pot 56), with 0 tricks 104 (next pot 108)."""
    sc = Scenario(None, 3, dealer=0, pot=48, ruleset="mauscheln_classic", classic_always_32=True,
                  hands=hands, trump="9S", max_deals=2)
    assert sc.state.session.pot == 52
    sc.act(1, "mauscheln")
    sc.act(2, "go")
    sc.act(0, "pass")
    sc.exchange(1)
    sc.exchange(2)
    while sc.state.phase is Phase.PLAY and sc.state.session.deals_settled == 0:
        seat = sc.state.to_act
        legal = sorted(sc.legal(), key=sc.game.deck.parse)
        sc.act(seat, legal[0])
    result = sc.state.session.results[-1]
    assert result.tricks[1] == tricks and result.tricks[2] == 4 - tricks
    assert result.credits[1] == 13 * tricks
    assert result.debits == [0, bete, 0]
    assert sc.state.session.pot == next_pot


# ---------------------------------------------------------------- W2: [000] generic statement


def play_one_against_one(sc: Scenario):
    """Seat 1 declares, seat 2 goes with, seat 0 passes; nobody exchanges; each plays its first legal card."""
    sc.act(1, "mauscheln")
    sc.act(2, "go")
    sc.act(0, "pass")
    sc.exchange(1)
    sc.exchange(2)
    while not sc.state.session.results:
        legal = sorted(sc.legal(), key=sc.game.deck.parse)
        sc.act(sc.state.to_act, legal[0])
    return sc.state.session.results[-1]


@pytest.mark.parametrize("mauschler_tricks", [1, 0])
def test_w2_mauschler_pays_the_pot_per_missing_trick(mauschler_tricks):
    """With P = 24: one trick earns 6 and costs 24 (four times as much); no trick costs 48; a goer without a trick pays 24."""
    hands = W1B_HANDS_ONE_TRICK if mauschler_tricks == 1 else W1B_HANDS_NO_TRICK
    sc = Scenario(None, 3, dealer=0, pot=20, hands=hands, trump="9S", chips=[100, 100, 100])
    result = play_one_against_one(sc)
    assert result.tricks[1] == mauschler_tricks
    assert result.credits[1] == 6 * mauschler_tricks
    assert result.debits[1] == 24 * (2 - mauschler_tricks)


def test_w2_goer_without_a_trick_pays_the_pot():
    hands = {1: ["AS", "KS", "QS", "JS"], 2: ["7H", "8H", "7D", "8D"], 0: ["7C", "8C", "9C", "TC"]}
    sc = Scenario(None, 3, dealer=0, pot=20, hands=hands, trump="9S")
    result = play_one_against_one(sc)
    assert result.tricks == [0, 4, 0] and result.credits[1] == 24 and result.debits == [0, 0, 24]


# ---------------------------------------------------------------- W6, W7: [003] Mouche

W6_DECK = "KH 7C 6C 7S 8H 6H KC QC JC AH TS 9S 8S 6S TH AC 9H 7D 8C 9D 6D KD QD TC 9C KS QS JS AS QH JH 7H JD AD TD 8D"
ANNA, BEN, CARLA, DAN = 0, 3, 2, 1  # counter-clockwise from the dealer: Ben is Anna's right


def test_w6_hands_follow_the_mouche_deal():
    hands, trump, _ = hands_from_deck(W6_DECK.split(), 4, ANNA, (3, 2, "T"), direction=-1)
    assert hands == {
        BEN: ["KH", "7C", "6C", "8S", "6S"],
        CARLA: ["7S", "8H", "6H", "TH", "AC"],
        DAN: ["KC", "QC", "JC", "9H", "7D"],
        ANNA: ["AH", "TS", "9S", "8C", "9D"],
    }
    assert trump == "6D"


def test_w6_mouche_anna_ben_carla_dan():
    sc = Scenario(W6_DECK, 4, dealer=ANNA, ruleset="mouche", max_deals=2)
    state = sc.state
    assert state.session.pot == 5 and state.phase is Phase.DECIDE and state.to_act == BEN
    assert {"stay", "pass"} <= sc.legal() and {"KH", "8S"} <= sc.legal()
    sc.act(BEN, "8S")  # starts the exchange
    sc.act(BEN, "6S")
    sc.act(BEN, "done")
    assert set(sc.env.infos["player_3"]["hand"]) == {"KH", "7C", "6C", "KD", "QD"}
    sc.act(CARLA, "pass")
    sc.act(DAN, "stay")
    sc.act(ANNA, "stay")
    assert state.phase is Phase.PLAY and state.to_act == BEN
    assert [state.deal.roles[s] for s in (BEN, CARLA, DAN, ANNA)] == [Role.EXCHANGED, Role.OUT, Role.STAYED, Role.STAYED]
    sc.trick((BEN, "KD"), (DAN, "7D", {"7D"}), (ANNA, "9D", {"9D"}))
    sc.trick((BEN, "QD"), (DAN, "JC", {"KC", "QC", "JC", "9H"}), (ANNA, "9S", {"AH", "TS", "9S", "8C"}))
    sc.trick((BEN, "KH"), (DAN, "9H", {"9H"}), (ANNA, "AH", {"AH"}))
    sc.trick((BEN, "7C"), (DAN, "KC", {"KC", "QC"}), (ANNA, "8C", {"8C"}))
    sc.trick((DAN, "QC"), (ANNA, "TS"), (BEN, "6C"))
    result = state.session.results[-1]
    assert result.tricks[BEN] == 3 and result.tricks[DAN] == 2 and result.tricks[ANNA] == 0
    assert result.credits[BEN] == 3 and result.credits[DAN] == 2
    assert result.debits[ANNA] == 5  # Anna makes the mouche
    assert result.deltas == [-10, 2, 0, 3]  # by seat: Anna, Dan, Carla, Ben
    # Ben deals next and antes 5: the next pot is 10, each trick worth 2 (W7, one mouche made).
    assert state.session.dealer == BEN and state.session.pot == 10


def test_w7_two_mouches_make_a_pot_of_fifteen():
    hands = {
        3: ["KD", "QD", "JD", "AD", "KH"],  # forehand takes every trick (and holds no mouche)
        2: ["7S", "8H", "6H", "TH", "AC"],
        1: ["KC", "QC", "JC", "9H", "7C"],
        0: ["AH", "TS", "9S", "8C", "9C"],
    }
    sc = Scenario(None, 4, dealer=0, ruleset="mouche", hands=hands, trump="6D", max_deals=2)
    sc.act(3, "stay")
    sc.act(2, "pass")
    sc.act(1, "stay")
    sc.act(0, "stay")
    while not sc.state.session.results:
        legal = sorted(sc.legal(), key=sc.game.deck.parse)
        sc.act(sc.state.to_act, legal[0])
    result = sc.state.session.results[-1]
    assert result.tricks[3] == 5 and result.debits == [5, 5, 0, 0]
    assert sc.state.session.pot == 15  # 0 left + two mouches of 5 + the next ante of 5: tricks are worth 3


# ---------------------------------------------------------------- U1: mouche tie-breaks


def u1(hands: dict[int, list[str]], stayers: list[int]) -> Scenario:
    sc = Scenario(None, 6, dealer=0, ruleset="mouche", hands=hands, trump="AH")
    for seat in (5, 4, 3, 2, 1, 0):  # counter-clockwise from the forehand, dealer last
        if sc.state.phase is not Phase.DECIDE:
            break
        sc.act(seat, "stay" if seat in stayers else "pass")
    return sc


X, Y, Z = 5, 4, 3
X_CLUBS = ["KC", "QC", "JC", "AC", "TC"]  # 50 points
Y_SPADES = ["KS", "QS", "JS", "9S", "8S"]  # 47 points
Z_HEARTS = ["9H", "8H", "7H", "6H", "2H"]  # a trump mouche


def test_u1_higher_points_win_the_mouche():
    sc = u1({X: X_CLUBS, Y: Y_SPADES}, stayers=[X, Y, 2])
    result = sc.state.session.results[-1]
    assert result.kind == "mouche" and result.mauschler == X
    assert result.credits[X] == 5 and result.debits[Y] == 5 and result.debits[2] == 5
    assert sum(result.debits) == 10


def test_u1_a_trump_mouche_beats_any_other():
    sc = u1({X: X_CLUBS, Y: Y_SPADES, Z: Z_HEARTS}, stayers=[X, Y, Z])
    result = sc.state.session.results[-1]
    assert result.mauschler == Z and result.debits[X] == 5 and result.debits[Y] == 5


def test_u1_equal_points_go_to_the_seat_nearer_the_dealers_right():
    sc = u1({X: ["KC", "QC", "JC", "AC", "9C"], Y: ["KS", "QS", "JS", "AS", "9S"]}, stayers=[X, Y])
    assert sc.state.session.results[-1].mauschler == X
    sc = u1({X: ["KC", "QC", "JC", "AC", "9C"], Y: ["KS", "QS", "JS", "AS", "9S"]}, stayers=[Y, X])
    assert sc.state.session.results[-1].mauschler == X


# ---------------------------------------------------------------- U2: muschka scoring


def muschka_after_play(scores: list[int], tricks: list[int], as_holder: int | None, trump: str):
    """Score one finished Muschka deal (RULES.md §3.4) through the engine's settlement."""
    import numpy as np

    from mauscheln_env import Game, make_config

    game = Game(make_config("muschka", 3, max_deals=5))
    state = game.new_session(np.random.default_rng(0), scores=scores, dealer=0)
    state.deal.trump_suit = "CSHD".index(trump)
    state.deal.roles = [Role.STAYED] * 3
    state.deal.participants = [0, 1, 2]
    state.deal.tricks_won = list(tricks)
    state.deal.as_holder = as_holder
    game.scoring.settle(game, state)
    return state


def test_u2_muschka_scoring():
    state = muschka_after_play([3, 2, 25], [3, 2, 0], None, "H")
    assert state.session.results[-1].scores == [0, 0, 25 + 5]
    assert state.over  # a seat reached exactly 0: the session ends
    state = muschka_after_play([2, 20, 25], [3, 2, 0], None, "H")
    assert state.session.results[-1].scores[0] == 25  # 2 - 3 = -1: one trick too many resets to 25
    state = muschka_after_play([20, 20, 20], [0, 3, 2], 0, "H")
    assert state.session.results[-1].scores[0] == 30  # AS holder, hearts trump, no trick: +10
    state = muschka_after_play([20, 20, 20], [2, 3, 0], 0, "S")
    assert state.session.results[-1].scores[0] == 8  # AS holder, spades trump, 2 tricks: -2 - 10 = -12
    assert state.session.results[-1].deltas[0] == 12  # the reward is the decrease of the score


# ---------------------------------------------------------------- U5: mousel


def test_u5_mousel_forehand_out_then_two_in():
    hands = {1: ["7C", "8C", "7D", "8D"], 2: ["AS", "KS", "AH", "KH"], 3: ["QS", "JS", "AD", "KD"], 0: ["9C", "TC", "9D", "TD"]}
    sc = Scenario(None, 4, dealer=0, ruleset="mousel", hands=hands, trump="7S")
    state = sc.state
    assert sc.legal() == {"in", "out"}  # no in_lead without the volunteer option
    sc.act(1, "out")
    sc.act(2, "in")
    sc.act(3, "in")
    sc.act(0, "out")
    # Nobody is committed: the first IN seat from forehand exchanges and leads; each needs one trick.
    assert [state.deal.roles[s] for s in range(4)] == [Role.OUT, Role.OUT, Role.IN, Role.IN]
    assert state.phase is Phase.EXCHANGE and state.to_act == 2
    sc.exchange(2)
    sc.exchange(3)
    assert state.to_act == 2
    # A player who can beat the winning card must.
    sc.act(2, "KH")
    assert sc.legal() == {"QS", "JS"}  # void in hearts: trump (and both beat)
    sc.act(3, "QS")  # seat 3 wins and leads
    sc.act(3, "AD")
    assert sc.legal() == {"AS", "KS"}
    sc.act(2, "KS")  # seat 2 wins and leads
    sc.trick((2, "AH"), (3, "JS", {"JS"}))
    sc.trick((3, "KD"), (2, "AS"))
    result = state.session.results[-1]
    assert result.tricks == [0, 0, 2, 2] and result.debits == [0, 0, 0, 0]
    assert result.credits == [0, 0, 2, 2]


def test_u5_trump_card_is_turned_after_two_cards_each():
    hands, trump, _ = hands_from_deck("AS KS AH KH QS JS AD KD 7S 7C 8C 9C TC".split(), 4, 0, (2, "T", 2))
    assert trump == "7S" and hands[1] == ["AS", "KS", "7C", "8C"]
