"""Cards as small integers, hands as bit masks.

A deck is an ordered tuple of card codes (``"QH"``, ``"TD"``, ...). A card is
its index in that tuple, and a set of cards is an ``int`` whose bit ``i`` is set
when card ``i`` is in the set. All lookup tables are built once per deck, so the
engine, the observation encoder, the batched engine and the agents share one
encoding.

Deck order is suit-major (clubs, spades, hearts, diamonds), ranks from the ace
down to the lowest rank the deck holds; an extra card such as the Weli (6D) sits
at the end of its suit.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from mauscheln_env.errors import CardError

RANKS = "AKQJT98765432"
"""Every rank a deck may hold, in natural order from high to low."""
SUITS = "CSHD"
"""Suit letters; the suit index of a card is its position in this string."""
SUIT_SYMBOLS = {"C": "♣", "S": "♠", "H": "♥", "D": "♦"}
SUIT_NAMES = {"C": "clubs", "S": "spades", "H": "hearts", "D": "diamonds"}


def iter_bits(mask: int) -> Iterator[int]:
    """Yield the indices of the set bits of ``mask`` in increasing order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def popcount(mask: int) -> int:
    return mask.bit_count()


@dataclass(frozen=True)
class Deck:
    """An ordered set of cards and the lookup tables over it.

    ``ranks`` are the ranks present in every suit; ``extra`` are additional
    card codes (e.g. ``("6D",)`` for the Weli).
    """

    ranks: str
    extra: tuple[str, ...] = ()
    codes: tuple[str, ...] = field(init=False)
    index: dict[str, int] = field(init=False, repr=False, compare=False)
    suit: tuple[int, ...] = field(init=False, repr=False, compare=False)
    rank: tuple[int, ...] = field(init=False, repr=False, compare=False)
    suit_mask: tuple[int, ...] = field(init=False, repr=False, compare=False)
    full_mask: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.ranks or any(r not in RANKS for r in self.ranks):
            raise CardError(f"deck ranks {self.ranks!r} must be drawn from {RANKS!r}")
        codes: list[str] = []
        for s in SUITS:
            in_suit = [r + s for r in self.ranks]
            in_suit += [c for c in self.extra if c[1] == s]
            in_suit.sort(key=lambda c: RANKS.index(c[0]))
            codes.extend(in_suit)
        if len(set(codes)) != len(codes):
            raise CardError(f"deck has duplicate cards: {codes}")
        object.__setattr__(self, "codes", tuple(codes))
        object.__setattr__(self, "index", {c: i for i, c in enumerate(codes)})
        object.__setattr__(self, "suit", tuple(SUITS.index(c[1]) for c in codes))
        object.__setattr__(self, "rank", tuple(RANKS.index(c[0]) for c in codes))
        masks = [0, 0, 0, 0]
        for i, s in enumerate(self.suit):
            masks[s] |= 1 << i
        object.__setattr__(self, "suit_mask", tuple(masks))
        object.__setattr__(self, "full_mask", (1 << len(codes)) - 1)

    def __len__(self) -> int:
        return len(self.codes)

    def parse(self, code: str) -> int:
        """The card index of ``code``; raises :class:`CardError` naming the deck."""
        if not isinstance(code, str):
            raise CardError(f"a card must be a code such as 'QH', got {code!r}")
        idx = self.index.get(code.strip().upper())
        if idx is None:
            if len(code) == 2 and code[0].upper() in RANKS and code[1].upper() in SUITS:
                raise CardError(
                    f"card {code!r} is not in this {len(self)}-card deck "
                    f"(ranks {self.ranks}{' + ' + ' '.join(self.extra) if self.extra else ''})"
                )
            raise CardError(
                f"unknown card {code!r}: a card is a rank from {RANKS!r} followed by a suit from {SUITS!r}"
            )
        return idx

    def mask_of(self, codes: Iterable[str]) -> int:
        mask = 0
        for code in codes:
            mask |= 1 << self.parse(code)
        return mask

    def codes_of(self, mask: int) -> list[str]:
        return [self.codes[i] for i in iter_bits(mask)]

    def pretty(self, card: int) -> str:
        """A card with its suit symbol, e.g. ``Q♥``."""
        code = self.codes[card]
        return code[0] + SUIT_SYMBOLS[code[1]]
