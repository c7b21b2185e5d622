"""What every ruleset module declares: its :class:`RulesetSpec` (static facts, options, deck, rule objects).

A ruleset module (``mauscheln_env/rulesets/<name>.py``) holds, in this order:
its options dataclass (:class:`~mauscheln_env.options.Options`), its deck, the
fields its deals add to :class:`~mauscheln_env.engine.Deal`, its rule objects
(stages of the deal procedure, exchange turns, trick hooks, scoring) and
``rules(game)``, which builds the configured game's
:class:`~mauscheln_env.engine.Rules` from the typed options. The ``SPEC`` at the
end ties them together. The engine core calls only ``SPEC.rules(game)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mauscheln_env.cards import Deck
from mauscheln_env.engine import Bidding, Phase, Rules, Scoring, StockPolicy
from mauscheln_env.options import OptionInfo, Options
from mauscheln_env.tricks import TrickProfile


@dataclass(frozen=True)
class RulesetSpec:
    """Static facts of one ruleset (RULES.md §1.1), its options and how to build its rule objects."""

    name: str
    section: str
    """The section of RULES.md that defines the ruleset."""
    min_players: int
    max_players: int
    direction: int
    """+1 for clockwise (succ(s) = s + 1), -1 for counter-clockwise."""
    hand_size: int
    deal_pattern: tuple[int | str, ...]
    """Numbers are cards per seat from forehand, dealer last; ``"T"`` turns the trump card."""
    rank_order: str
    """Ranks from high to low, as they rank inside a suit."""
    trick_profile: TrickProfile
    stock_policy: StockPolicy
    bidding: Bidding
    scoring: Scoring
    phases: tuple[str, ...]
    """Decisions this ruleset can ask (``Phase`` names), in the order of the observation's phase one-hot."""
    roles: tuple[str, ...]
    """Roles a seat can hold, in the order of the observation's one-hot."""
    named_actions: tuple[str, ...]
    options_class: type[Options]
    deck_for: Callable[[int, Options], Deck]
    rules: Callable[[Any], Rules]
    """``rules(game)``: the configured game's rule objects."""
    doc: str = ""
    brief: str = ""
    """The rules in brief (the ruleset's documentation page)."""
    showcase: Mapping[str, Any] = field(default_factory=dict)
    """Options that switch every optional rule on at once (the docs list the stages and pieces they add)."""

    @property
    def phase_values(self) -> tuple[Phase, ...]:
        return tuple(Phase[name.upper()] for name in self.phases)

    @property
    def options(self) -> Mapping[str, OptionInfo]:
        """Every option with its default, what is allowed and its meaning (for docs and messages)."""
        return {info.name: info for info in self.options_class.infos()}
