"""Rule configuration: the static facts of a game, validated once.

A :class:`RuleConfig` is built by :func:`make_config` from a ruleset name, a
player count and keyword options (or by :func:`load_preset` from a file under
``configs/rules/``). Everything the engine, the observation encoder and the
environment size themselves by (deck, hand size, tricks, action vocabulary)
derives from it; nothing else holds a size of its own. The rulesets, their
options (with every default) and their rules live in
``mauscheln_env/rulesets/``.

Bad input raises :class:`~mauscheln_env.errors.ConfigError` (a ``ValueError``)
that names the option and says what is allowed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mauscheln_env.cards import Deck
from mauscheln_env.errors import ConfigError, shown
from mauscheln_env.options import Options
from mauscheln_env.rulesets import RULESETS, RulesetSpec

NAMED_ACTIONS: tuple[str, ...] = (
    "knock",
    "no_knock",
    "mauscheln",
    "pass",
    "go",
    "done",
    "in",
    "in_lead",
    "out",
    "stay",
    "deal",
    "push",
    "announce",
    "silent",
    "trump:C",
    "trump:S",
    "trump:H",
    "trump:D",
    "swap",
)
"""The global vocabulary of named (non-card) actions, in action-id order.

A ruleset uses a subset of it; its action ids are the deck's cards followed by
the named actions it uses, in this order. Later rulesets append to this tuple
so that one string always means the same decision in every ruleset.
"""


@dataclass(frozen=True)
class RuleConfig:
    """A validated configuration: ruleset, player count, deck and every option (typed, see ``spec.options_class``)."""

    spec: RulesetSpec
    num_players: int
    deck: Deck
    options: Options = field(repr=False)

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
        return {"ruleset": self.ruleset, "num_players": self.num_players, **self.options.to_dict()}

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
        raise ConfigError(f"unknown ruleset {ruleset!r}; available: {', '.join(RULESETS)}")
    spec = RULESETS[ruleset]
    if isinstance(num_players, bool) or not hasattr(num_players, "__index__"):
        raise ConfigError(f"num_players must be a whole number, got {shown(num_players)}")
    num_players = int(num_players)
    if not spec.min_players <= num_players <= spec.max_players:
        raise ConfigError(
            f"num_players={shown(num_players)} is not allowed in {ruleset}: "
            f"{spec.min_players}-{spec.max_players} players"
        )
    opts = spec.options_class.build(num_players, options)
    deck = spec.deck_for(num_players, opts)
    opts = replace(opts, deck_size=len(deck))
    if "knock_min_rank" in opts and opts["knock_min_rank"] not in deck.ranks:
        raise ConfigError(
            f"option knock_min_rank={opts['knock_min_rank']!r} is not a rank of this deck; "
            f"allowed: one of {deck.ranks!r}"
        )
    cards_needed = spec.hand_size * num_players + 1
    if cards_needed + spec.hand_size > len(deck):
        raise ConfigError(
            f"{num_players} players need more than the {len(deck)} cards of this deck "
            f"({cards_needed} to deal plus a stock of at least {spec.hand_size})"
        )
    return RuleConfig(spec, num_players, deck, opts)


def parse_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, except that a mapping naming a key twice raises ``yaml.YAMLError`` (YAML itself
    keeps the last value silently, so ``stake: 4`` then ``stake: 8`` would hide one of them)."""
    import yaml

    class UniqueKeys(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    twice = key in seen
                except TypeError:  # an unhashable key: the loader's own error names it
                    break
                if twice:
                    raise yaml.constructor.ConstructorError(None, None, f"key {key!r} is given twice",
                                                            key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep)

    return yaml.load(text, Loader=UniqueKeys)  # noqa: S506 - a SafeLoader


def parse_json(text: str) -> Any:
    """``json.loads(text)``, except that an object naming a key twice raises ``ValueError``."""
    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise ValueError(f"key {key!r} is given twice")
            out[key] = value
        return out

    return json.loads(text, object_pairs_hook=unique)


def load_preset_dict(path: str | Path) -> dict[str, Any]:
    """Read a preset file into a plain dict (``ruleset``, ``num_players``, options); a key given twice is refused."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"preset file {str(path)!r} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"preset file {str(path)!r} cannot be read ({exc}); allowed: a readable UTF-8 YAML or JSON "
                          "file") from None
    try:
        data = parse_json(text) if path.suffix == ".json" else parse_yaml(text)
    except Exception as exc:  # noqa: BLE001 - any parse failure becomes a ConfigError
        raise ConfigError(f"preset file {str(path)!r} is not valid {path.suffix[1:]}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"preset file {str(path)!r} must hold a mapping of option names to values")
    return dict(data)


def load_preset(path: str | Path, **overrides: Any) -> RuleConfig:
    """Build a :class:`RuleConfig` from a preset file; keyword overrides win."""
    return make_config(Path(path), **overrides)


__all__ = ["NAMED_ACTIONS", "RULESETS", "RuleConfig", "load_preset", "load_preset_dict", "make_config"]
