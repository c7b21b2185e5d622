"""Trick rules as mask algebra (RULES.md §1.3, §1.4).

Everything here is a pure function of bit masks over one deck, so a single
parametrised function serves every ruleset, the scenario tests can call it with
named cards, and the batched engine can mirror it with tensor masks.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from mauscheln_env.cards import Deck


class TrickProfile(Enum):
    """The obligations when following a trick (RULES.md §1.4); a ruleset's spec names one."""

    M = "M"
    """Mauscheln, classic, Mousel: follow and beat, else trump and beat, else any trump, else anything."""
    F = "F"
    """Mouche: follow and beat, else beat with a trump if possible, else anything."""
    R = "R"
    """Muschka: follow, else trump, else anything; no duty to beat."""


PROFILES = tuple(TrickProfile)


@dataclass(frozen=True)
class TrumpTables:
    """Masks for one deck under one trump suit.

    ``beats[w]`` is the set of cards that beat card ``w`` when ``w`` is the
    winning card of a trick (a winning non-trump is always of the led suit).
    """

    trump_suit: int
    trump_mask: int
    eff_suit: tuple[int, ...]
    eff_suit_mask: tuple[int, ...]
    beats: tuple[int, ...]


def build_trump_tables(deck: Deck, rank_order: str, trump_suit: int, permanent_trumps: int = 0,
                       trump_order: tuple[int, ...] | None = None) -> TrumpTables:
    """Tables for ``trump_suit``.

    ``permanent_trumps`` are cards that are trumps whatever their printed suit
    (Belli, Weli, Pamphile). ``trump_order`` lists every trump from high to low;
    by default the trump suit in ``rank_order``.
    """
    n = len(deck)
    trump_mask = deck.suit_mask[trump_suit] | permanent_trumps
    eff_suit = tuple(trump_suit if trump_mask >> c & 1 else deck.suit[c] for c in range(n))
    eff_suit_mask = tuple(
        trump_mask if s == trump_suit else deck.suit_mask[s] & ~trump_mask for s in range(4)
    )
    if trump_order is None:
        trump_order = tuple(
            sorted(
                (c for c in range(n) if trump_mask >> c & 1),
                key=lambda c: rank_order.index(deck.codes[c][0]),
            )
        )
    beats = []
    for w in range(n):
        if trump_mask >> w & 1:
            pos = trump_order.index(w)
            mask = 0
            for c in trump_order[:pos]:
                mask |= 1 << c
        else:
            rank_w = rank_order.index(deck.codes[w][0])
            mask = trump_mask
            for c in range(n):
                if eff_suit[c] == eff_suit[w] and rank_order.index(deck.codes[c][0]) < rank_w:
                    mask |= 1 << c
        beats.append(mask)
    return TrumpTables(trump_suit, trump_mask, eff_suit, eff_suit_mask, tuple(beats))


def legal_follow(profile: TrickProfile, hand: int, led_suit_mask: int, trump_mask: int, beats_winner: int) -> int:
    """The legal cards of ``hand`` when following a non-empty trick (RULES.md §1.4).

    ``led_suit_mask`` is the effective led suit, ``beats_winner`` the cards that
    beat the currently winning card. The result is never empty for a non-empty hand.
    """
    follow = hand & led_suit_mask
    if follow:
        if profile is TrickProfile.R:
            return follow
        return (follow & beats_winner) or follow
    trumps = hand & trump_mask
    if profile is TrickProfile.M:
        if trumps:
            return (trumps & beats_winner) or trumps
        return hand
    if profile is TrickProfile.F:
        return (trumps & beats_winner) or hand
    return trumps or hand
