"""Rule configuration: the static facts of a game, validated once.

A :class:`RuleConfig` is built by :func:`make_config` from a ruleset name, a
player count and keyword options (or by :func:`load_preset` from a file under
``configs/rules/``). Everything the engine, the observation encoder and the
environment size themselves by (deck, hand size, tricks, action vocabulary)
derives from it; nothing else holds a size of its own.

Bad input raises :class:`~mauscheln_env.errors.ConfigError` (a ``ValueError``)
that names the option and says what is allowed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from mauscheln_env.cards import RANKS, Deck
from mauscheln_env.errors import ConfigError

NAMED_ACTIONS: tuple[str, ...] = (
    "knock",
    "no_knock",
    "mauscheln",
    "pass",
    "go",
    "done",
)
"""The global vocabulary of named (non-card) actions, in action-id order.

A ruleset uses a subset of it; its action ids are the deck's cards followed by
the named actions it uses, in this order. Later rulesets append to this tuple
so that one string always means the same decision in every ruleset.
"""


@dataclass(frozen=True)
class OptionSpec:
    """One keyword option of a ruleset."""

    name: str
    default: Any
    kind: type
    allowed: str
    doc: str
    check: Callable[[Any], bool] | None = None
    nullable: bool = False

    def validate(self, value: Any) -> Any:
        if value is None and self.nullable:
            return None
        ok_type = isinstance(value, self.kind) and not (self.kind is int and isinstance(value, bool))
        if not ok_type:
            raise ConfigError(
                f"option {self.name}={value!r} has type {type(value).__name__}; allowed: {self.allowed}"
            )
        if self.check is not None and not self.check(value):
            raise ConfigError(f"option {self.name}={value!r} is not allowed; allowed: {self.allowed}")
        return value


@dataclass(frozen=True)
class RulesetSpec:
    """Static facts of one ruleset (RULES.md §1.1) and its options."""

    name: str
    min_players: int
    max_players: int
    direction: int
    """+1 for clockwise (succ(s) = s + 1), -1 for counter-clockwise."""
    hand_size: int
    deal_pattern: tuple[int | str, ...]
    """Numbers are cards per seat from forehand, dealer last; ``"T"`` turns the trump card."""
    rank_order: str
    """Ranks from high to low, as they rank inside a suit."""
    trick_profile: str
    stock_policy: str
    named_actions: tuple[str, ...]
    options: Mapping[str, OptionSpec]
    deck_for: Callable[[int, Mapping[str, Any]], Deck]
    doc: str = ""


def _mauscheln_deck(num_players: int, options: Mapping[str, Any]) -> Deck:
    size = options.get("deck_size")
    derived = 32 if num_players <= 5 else 52
    if size is not None and size != derived:
        raise ConfigError(
            f"deck_size={size} is not allowed with {num_players} players in mauscheln: "
            "3-5 players play with 32 cards (A-7), 6-7 players with 52"
        )
    return Deck("AKQJT987") if derived == 32 else Deck(RANKS)


def _rank_check(value: str) -> bool:
    return len(value) == 1 and value in RANKS


_COMMON_OPTIONS = (
    OptionSpec(
        "max_deals",
        1,
        int,
        "a whole number >= 1, or None for a session that runs until fewer than 3 seats have chips",
        "Settled deals per session (one episode). Throw-ins do not count.",
        check=lambda v: v >= 1,
        nullable=True,
    ),
    OptionSpec(
        "max_throw_ins",
        50,
        int,
        "a whole number >= 1",
        "Consecutive throw-ins after which the session is truncated.",
        check=lambda v: v >= 1,
    ),
)

MAUSCHELN = RulesetSpec(
    name="mauscheln",
    min_players=3,
    max_players=7,
    direction=+1,
    hand_size=4,
    deal_pattern=(1, 1, "T", 1, 1),
    rank_order="AKQJT98765432",
    trick_profile="M",
    stock_policy="CAP",
    named_actions=("knock", "no_knock", "mauscheln", "pass", "go", "done"),
    options=MappingProxyType(
        {
            spec.name: spec
            for spec in (
                OptionSpec(
                    "stake",
                    4,
                    int,
                    "a positive multiple of 4",
                    "The dealer's ante S (chips).",
                    check=lambda v: v > 0 and v % 4 == 0,
                ),
                OptionSpec(
                    "bankroll",
                    40,
                    int,
                    "a whole number >= 1",
                    "Chips each seat starts a session with (unless reset passes 'chips').",
                    check=lambda v: v >= 1,
                ),
                OptionSpec(
                    "deck_size",
                    None,
                    int,
                    "32 for 3-5 players, 52 for 6-7 players (derived when omitted)",
                    "Cards in the deck; fixed by the player count in mauscheln.",
                    check=lambda v: v in (32, 52),
                    nullable=True,
                ),
                OptionSpec(
                    "knock",
                    False,
                    bool,
                    "True or False",
                    "Klopfen (RULES.md §2.2): the dealer may knock blind on a high trump card.",
                ),
                OptionSpec(
                    "knock_min_rank",
                    "Q",
                    str,
                    f"one rank letter of {RANKS!r} that the deck holds",
                    "Lowest trump-card rank on which the dealer may knock (D9).",
                    check=_rank_check,
                ),
                *_COMMON_OPTIONS,
            )
        }
    ),
    deck_for=_mauscheln_deck,
    doc="Modern Mauscheln ([001]): 4 cards, four tricks, declare / go with / exchange / play.",
)

RULESETS: Mapping[str, RulesetSpec] = MappingProxyType({MAUSCHELN.name: MAUSCHELN})
"""Rulesets this engine plays. RULES.md names more; each arrives as a spec here."""
PLANNED_RULESETS = ("mauscheln_classic", "mousel", "mouche", "muschka")


@dataclass(frozen=True)
class RuleConfig:
    """A validated configuration: ruleset, player count, deck and every option."""

    spec: RulesetSpec
    num_players: int
    deck: Deck
    options: Mapping[str, Any] = field(repr=False)

    @property
    def ruleset(self) -> str:
        return self.spec.name

    @property
    def hand_size(self) -> int:
        return self.spec.hand_size

    @property
    def num_tricks(self) -> int:
        return self.spec.hand_size

    @property
    def num_cards(self) -> int:
        return len(self.deck)

    @property
    def named_actions(self) -> tuple[str, ...]:
        return self.spec.named_actions

    @property
    def num_actions(self) -> int:
        return len(self.deck) + len(self.spec.named_actions)

    def __getattr__(self, name: str) -> Any:
        # Options read as attributes: ``config.knock``.
        options = self.__dict__.get("options")
        if options is not None and name in options:
            return options[name]
        raise AttributeError(name)

    def to_dict(self) -> dict[str, Any]:
        """Plain data that :func:`make_config` turns back into an equal config."""
        return {"ruleset": self.ruleset, "num_players": self.num_players, **dict(self.options)}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RuleConfig) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_dict(), sort_keys=True))


def make_config(ruleset: str | Path = "mauscheln", num_players: int | None = None, **options: Any) -> RuleConfig:
    """Validate a ruleset, a player count and keyword options into a :class:`RuleConfig`.

    ``ruleset`` may also be the path of a preset file (``.yaml``, ``.yml`` or
    ``.json``); ``num_players`` and keyword options then override the file.
    ``num_players`` defaults to the preset's, else 4.
    """
    if isinstance(ruleset, Path) or (isinstance(ruleset, str) and ruleset.endswith((".yaml", ".yml", ".json"))):
        preset = load_preset_dict(ruleset)
        ruleset = preset.pop("ruleset", "mauscheln")
        preset_players = preset.pop("num_players", None)
        if num_players is None:
            num_players = preset_players
        options = {**preset, **options}
    if num_players is None:
        num_players = 4
    if not isinstance(ruleset, str) or ruleset not in RULESETS:
        if ruleset in PLANNED_RULESETS:
            raise ConfigError(
                f"ruleset {ruleset!r} is specified in RULES.md but not implemented in this version; "
                f"available: {', '.join(RULESETS)}"
            )
        raise ConfigError(f"unknown ruleset {ruleset!r}; available: {', '.join(RULESETS)}")
    spec = RULESETS[ruleset]
    if not isinstance(num_players, int) or isinstance(num_players, bool):
        raise ConfigError(f"num_players must be a whole number, got {num_players!r}")
    if not spec.min_players <= num_players <= spec.max_players:
        raise ConfigError(
            f"num_players={num_players} is not allowed in {ruleset}: "
            f"{spec.min_players}-{spec.max_players} players"
        )
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        raise ConfigError(
            f"unknown option(s) {', '.join(unknown)} for ruleset {ruleset}; "
            f"allowed: {', '.join(sorted(spec.options))}"
        )
    values = {name: opt.default for name, opt in spec.options.items()}
    for name, value in options.items():
        values[name] = spec.options[name].validate(value)
    deck = spec.deck_for(num_players, values)
    values["deck_size"] = len(deck)
    if "knock_min_rank" in values and values["knock_min_rank"] not in deck.ranks:
        raise ConfigError(
            f"option knock_min_rank={values['knock_min_rank']!r} is not a rank of this deck; "
            f"allowed: one of {deck.ranks!r}"
        )
    cards_needed = spec.hand_size * num_players + 1
    if cards_needed + spec.hand_size > len(deck):
        raise ConfigError(
            f"{num_players} players need more than the {len(deck)} cards of this deck "
            f"({cards_needed} to deal plus a stock of at least {spec.hand_size})"
        )
    return RuleConfig(spec, num_players, deck, MappingProxyType(values))


def load_preset_dict(path: str | Path) -> dict[str, Any]:
    """Read a preset file into a plain dict (``ruleset``, ``num_players``, options)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"preset file {str(path)!r} does not exist")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001 - any parse failure becomes a ConfigError
        raise ConfigError(f"preset file {str(path)!r} is not valid {path.suffix[1:]}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"preset file {str(path)!r} must hold a mapping of option names to values")
    return dict(data)


def load_preset(path: str | Path, **overrides: Any) -> RuleConfig:
    """Build a :class:`RuleConfig` from a preset file; keyword overrides win."""
    return make_config(Path(path), **overrides)
