"""Trick obligations of profile M (RULES.md §1.4), table-driven with named cards."""

from __future__ import annotations

import pytest

from mauscheln_env.cards import SUITS, Deck
from mauscheln_env.tricks import TrickProfile, build_trump_tables, legal_follow

DECK32 = Deck("AKQJT987")
ORDER = "AKQJT98765432"


def legal(hand: list[str], trick: list[str], trump: str, profile: str = "M", deck: Deck = DECK32) -> set[str]:
    """Legal cards of ``hand`` after ``trick`` (cards in play order) with ``trump`` as the trump suit."""
    tables = build_trump_tables(deck, ORDER, SUITS.index(trump))
    hand_mask = deck.mask_of(hand)
    if not trick:
        return set(hand)
    cards = [deck.parse(c) for c in trick]
    led = tables.eff_suit[cards[0]]
    winner = cards[0]
    for c in cards[1:]:
        if tables.beats[winner] >> c & 1:
            winner = c
    mask = legal_follow(TrickProfile(profile), hand_mask, tables.eff_suit_mask[led], tables.trump_mask, tables.beats[winner])
    return set(deck.codes_of(mask))


PROFILE_M = [
    # (hand, trick so far, trump, legal set, why)
    (["AH", "7H", "KS", "7C"], [], "S", {"AH", "7H", "KS", "7C"}, "the leader may play anything"),
    (["AH", "7H", "KS"], ["KH"], "S", {"AH"}, "follow and beat the king"),
    (["QH", "7H", "KS"], ["KH"], "S", {"QH", "7H"}, "follow; nothing beats: any card of the suit"),
    (["9S", "AC"], ["KH", "AH"], "S", {"9S"}, "void: must trump"),
    (["KS", "9S", "AC"], ["KH", "QS"], "S", {"KS"}, "void: trump and beat the ruff"),
    (["JS", "9S", "AC"], ["KH", "QS"], "S", {"JS", "9S"}, "void: cannot overtrump, must still trump"),
    (["TH", "JH", "KS", "AD"], ["AC", "KH"], "H", {"TH", "JH"}, "W1: trump although a higher trump lies"),
    (["7H", "8C"], ["KD", "9S"], "S", {"7H", "8C"}, "void in the led suit and no trump: anything"),
    (["7D", "8D", "AS"], ["KD", "9S"], "S", {"7D", "8D"}, "led suit after a ruff: any card of it (D8)"),
    (["AD", "7D"], ["KD", "9S"], "S", {"AD", "7D"}, "an ace of the led suit need not head a ruffed trick"),
    (["AS", "KS", "7H"], ["AD"], "S", {"AS", "KS"}, "W3 trick 3: every trump beats a non-trump"),
    (["KS", "QS", "AH"], ["AS"], "S", {"KS", "QS"}, "W5: follow trumps, cannot beat the ace"),
    (["8H", "7D"], ["KS"], "S", {"8H", "7D"}, "W5: void in trumps, anything"),
    (["AS", "7C"], ["8C", "QC"], "S", {"7C"}, "follow without beating when unable"),
    (["9C", "AC", "8S"], ["8C", "QC"], "S", {"AC"}, "follow and beat the current winner, not the lead"),
]


@pytest.mark.parametrize("hand,trick,trump,expected,why", PROFILE_M, ids=[row[4] for row in PROFILE_M])
def test_profile_m(hand, trick, trump, expected, why):
    assert legal(hand, trick, trump) == expected, why


def test_w1c_profile_f_differs():
    """RULES.md W1c: under profile F the ruffer need not trump under a higher ruff."""
    hand = ["TH", "JH", "KS", "AD"]
    assert legal(hand, ["AC", "KH"], "H", profile="F") == {"TH", "JH", "KS", "AD"}
    assert legal(hand, ["AC", "KH"], "H", profile="M") == {"TH", "JH"}


def test_beats_table_on_52_cards():
    deck = Deck(ORDER)
    tables = build_trump_tables(deck, ORDER, SUITS.index("D"))
    two_d = deck.parse("2D")
    assert set(deck.codes_of(tables.beats[two_d])) == {r + "D" for r in "AKQJT9876543"}
    ace_c = deck.parse("AC")
    assert set(deck.codes_of(tables.beats[ace_c])) == {r + "D" for r in ORDER}
