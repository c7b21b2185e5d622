"""Static tables of one configuration, as tensors on the engine's device (any batch size).

Everything here is read from the reference :class:`~mauscheln_env.engine.Game`:
its deck, its seats and direction, its trump tables (``game.tables``, with the
ruleset's permanent trumps), its deal pattern and its action ids. Nothing is
restated: the batched engine plays the reference's own tables.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from mauscheln_env.cards import SUITS
from mauscheln_env.engine import Game


class Statics:
    """Lookup tables for one :class:`Game` on one device (see the module docstring)."""

    def __init__(self, game: Game, device: torch.device) -> None:
        self.game = game
        self.device = device
        n, N = game.n, game.num_cards
        self.n, self.N, self.H, self.T, self.A = n, N, game.hand_size, game.num_tricks, game.num_actions
        self.direction = game.direction
        self.stake = game.stake
        self.exchange_limit = game.exchange_limit
        deck = game.deck

        # Seats: masks over the n seats, in the rules' direction.
        self.seat_ar = self.long(range(n))
        self.seat_bit = self.long([1 << s for s in range(n)])
        self.all_seats = (1 << n) - 1
        S = 1 << n
        after = np.zeros((n, S), dtype=np.int64)
        first = np.zeros((n, S), dtype=np.int64)
        order = np.zeros((n, S, n), dtype=np.int64)
        for s in range(n):
            for m in range(S):
                around = [(s + game.direction * k) % n for k in range(n)]  # s first
                inside = [x for x in around if m >> x & 1]
                later = [x for x in around[1:] + around[:1] if m >> x & 1]
                after[s, m] = later[0] if later else s
                first[s, m] = inside[0] if inside else s
                order[s, m, :len(inside)] = inside
        self.after_tab = self.long(after.reshape(-1))
        self.first_tab = self.long(first.reshape(-1))
        self.order_tab = self.long(order.reshape(n * S, n))
        self.pop_tab = self.long([bin(m).count("1") for m in range(S)])

        # Cards (index N: a named action, no card).
        self.card_bit = self.long([1 << c for c in range(N)] + [0])
        self.suit_of = self.long(list(deck.suit) + [0])
        self.rank_of = self.long(list(deck.rank) + [0])
        ranks = sorted(set(deck.rank))
        self.rank_masks = self.long([sum(1 << c for c in range(N) if deck.rank[c] == r) for r in range(13)])
        self.rank_pos = self.long(list(game.rank_pos) + [99])
        self.suit_masks = self.long(deck.suit_mask)
        self.num_ranks = len(ranks)
        self.card_ar = self.long(range(N))

        # Trump tables of the four possible trump suits (game.tables: permanent trumps included).
        t = game.tables
        self.trump_mask = self.long([x.trump_mask for x in t])
        self.eff_suit = self.long([s for x in t for s in x.eff_suit] + [0])
        self.eff_mask = self.long([m for x in t for m in x.eff_suit_mask])
        self.beats = self.long([b for x in t for b in x.beats] + [0])
        self.trump_ace = self.long([deck.index.get("A" + s, N) for s in SUITS])
        self.card = {code: deck.index.get(code) for code in ("JC", "AS")}
        self.spades = SUITS.index("S")

        # Dealing: the slot of deck position p when L seats are dealt in (index in the order from forehand;
        # n for the trump card, n + 1 for the stock), walking the configuration's deal pattern.
        slot = np.full((n + 1, N), n + 1, dtype=np.int64)
        trump_pos = np.zeros(n + 1, dtype=np.int64)
        dealt = np.zeros(n + 1, dtype=np.int64)
        for L in range(1, n + 1):
            p = 0
            for step in game.deal_pattern:
                if step == "T":
                    slot[L, p] = n
                    trump_pos[L] = p
                    p += 1
                else:
                    for i in range(L):
                        slot[L, p:p + step] = i
                        p += step
            dealt[L] = p
        self.deal_slot = self.long(slot)
        self.trump_pos = self.long(trump_pos)
        self.dealt = self.long(dealt)

        # Actions.
        self.ids: dict[str, int] = dict(game.action_ids)
        self.action_ar = self.long(range(self.A))
        self.trump_actions = tuple(game.TRUMP_BY_SUIT)

        # Bit masks -> per-position values, one byte at a time (eager expansion).
        bits = (torch.arange(256)[:, None] >> torch.arange(8)) & 1
        self.lut_f = bits.to(torch.float32).to(device)
        self.lut_b = bits.to(torch.bool).to(device)
        self.shift_N = 8 * self.long(range((N + 7) // 8))
        self.shift_A = 8 * self.long(range((self.A + 7) // 8))

    def long(self, values: Any) -> torch.Tensor:
        return torch.as_tensor(np.asarray(list(values) if not isinstance(values, np.ndarray) else values,
                                          dtype=np.int64), device=self.device)

    def bit(self, name: str) -> int:
        """The action-mask bit of a named action (0 when this ruleset lacks it)."""
        i = self.ids.get(name)
        return 0 if i is None else 1 << i

    # ------------------------------------------------------------------ seats
    def succ(self, seat: torch.Tensor, seats: torch.Tensor) -> torch.Tensor:
        """The first seat of the seat mask ``seats`` after ``seat`` in the rules' direction (``Game.next_live``)."""
        return self.after_tab.index_select(0, (seat.clamp(min=0) << self.n) + seats)

    def first_from(self, seat: torch.Tensor, seats: torch.Tensor) -> torch.Tensor:
        """The first seat of ``seats`` from ``seat`` on, ``seat`` itself included."""
        return self.first_tab.index_select(0, (seat.clamp(min=0) << self.n) + seats)

    def count(self, seats: torch.Tensor) -> torch.Tensor:
        return self.pop_tab.index_select(0, seats)

    def seat_bits(self, seat: torch.Tensor) -> torch.Tensor:
        """The bit of ``seat`` (0 for NO_SEAT)."""
        return (1 << seat.clamp(min=0)) & -(seat >= 0).to(torch.int64)

    # ------------------------------------------------------------------ cards
    def cards_bit(self, card: torch.Tensor) -> torch.Tensor:
        """The bit of a card id (0 for a named action, ids >= N)."""
        return self.card_bit.index_select(0, card.clamp(0, self.N))

    def expand(self, masks: torch.Tensor, width: int, as_bool: bool = False) -> torch.Tensor:
        """Bit masks ``int64[M, K]`` -> ``[M, K, width]`` values (bit i at position i) through a byte table."""
        M, K = masks.shape
        shifts = self.shift_A if as_bool else self.shift_N
        lut = self.lut_b if as_bool else self.lut_f
        by = ((masks[:, :, None] >> shifts) & 255).reshape(-1)
        return lut.index_select(0, by).view(M, K, shifts.shape[0] * 8)[:, :, :width]
