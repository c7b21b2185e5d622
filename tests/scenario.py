"""Helpers for scenario tests written with named cards.

A scenario deals a deck given top card first, exactly as RULES.md §4 writes
it, and drives the raw PettingZoo environment with action strings, checking
the legal set before every play when the test names one.
"""

from __future__ import annotations

from collections.abc import Iterable

import mauscheln_env
from mauscheln_env.engine import Phase


def hands_from_deck(deck: list[str], num_players: int, dealer: int, pattern=(1, 1, "T", 1, 1), direction: int = 1):
    """Deal ``deck`` (top first) by ``pattern`` from forehand, dealer last.

    Forehand is the dealer's left (``direction=1``) or right (``-1``, Mouche).
    Written independently of the engine so that the scenario's hands are a
    check on the engine's dealing too.
    """
    seats = [(dealer + direction * (1 + k)) % num_players for k in range(num_players)]
    hands: dict[int, list[str]] = {s: [] for s in seats}
    pos = 0
    trump = None
    for step in pattern:
        if step == "T":
            trump = deck[pos]
            pos += 1
        else:
            for s in seats:
                hands[s].extend(deck[pos : pos + step])
                pos += step
    return hands, trump, deck[pos:]


class Scenario:
    """A raw env set up with a fixed deck; ``act`` steps by action strings."""

    def __init__(self, deck: str | None, num_players: int, dealer: int = 0, pot: int = 0, chips=None,
                 ruleset: str = "mauscheln", hands=None, trump=None, **options):
        self.env = mauscheln_env.raw_env(ruleset=ruleset, num_players=num_players, **options)
        spec = self.env.game.spec
        if deck is not None:
            pattern = self.env.game.deal_pattern
            hands, trump, stock = hands_from_deck(deck.split(), num_players, dealer, pattern, spec.direction)
        else:
            stock = []
        reset_options = {"dealer": dealer, "deal": {"hands": hands, "trump": trump, "stock": stock}}
        if spec.scoring != "points":
            reset_options["pot"] = pot
        if chips is not None:
            reset_options["chips"] = chips
        self.env.reset(seed=0, options=reset_options)
        self.game = self.env.game
        self.state = self.env.engine_state
        self.hands = hands
        self.rewards = {a: 0.0 for a in self.env.possible_agents}
        self.pot_start = pot

    @property
    def to_act(self) -> int:
        return self.state.to_act

    def legal(self) -> set[str]:
        agent = self.env.agent_selection
        mask = self.env.observe(agent)["action_mask"]
        return {self.env.action_to_str(a) for a in range(len(mask)) if mask[a]}

    def act(self, seat: int, action: str, legal: Iterable[str] | None = None) -> None:
        """Seat ``seat`` takes ``action``; when ``legal`` is given it must be the exact legal set."""
        if self.state.to_act != seat:
            raise AssertionError(f"expected seat {seat} to act, but seat {self.state.to_act} is to act")
        if legal is not None:
            got = self.legal()
            if got != set(legal):
                raise AssertionError(f"seat {seat} legal set {sorted(got)} != expected {sorted(legal)}")
        self.env.step(self.env.action_from_str(action))
        self.game.check_invariants(self.state)
        for a, r in self.env.rewards.items():
            self.rewards[a] += r

    def exchange(self, seat: int, discards: Iterable[str] = ()) -> None:
        for card in discards:
            self.act(seat, card)
        self.act(seat, "done")

    def trick(self, *plays: tuple[int, str] | tuple[int, str, Iterable[str]]) -> None:
        if self.state.phase is not Phase.PLAY:
            raise AssertionError(f"expected play phase, got {self.state.phase.name}")
        for play in plays:
            self.act(*play)
