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
    """Static facts of one ruleset (RULES.md §1.1) and its options.

    The engine is one state machine; a spec selects its pieces: how seats bid
    (``bidding``), how the deal is scored (``scoring``), the trick profile and
    the stock-shortage policy.
    """

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
    """``CAP``, ``RESHUFFLE`` or ``RESHUFFLE_TRUMP`` (RULES.md §1.7)."""
    bidding: str
    """``declare`` (declare, then go with), ``mousel`` (in / out) or ``decide`` (stay / pass / exchange)."""
    scoring: str
    """``per_trick`` (a bete per missing trick), ``flat`` (one bete), ``mouche`` or ``points``."""
    phases: tuple[str, ...]
    """Phases this ruleset can be in, in the order of the observation's one-hot."""
    roles: tuple[str, ...]
    """Roles a seat can hold, in the order of the observation's one-hot."""
    named_actions: tuple[str, ...]
    options: Mapping[str, OptionSpec]
    deck_for: Callable[[int, Mapping[str, Any]], Deck]
    validate: Callable[[int, dict[str, Any]], None] | None = None
    doc: str = ""


def _mauscheln_deck(num_players: int, options: Mapping[str, Any]) -> Deck:
    size = options.get("deck_size")
    derived = 32 if num_players <= 5 else 52
    if options.get("weli"):
        if num_players > 5:
            raise ConfigError(f"option weli=True is not allowed with {num_players} players: the Weli needs the 32-card deck (3-5 players)")
        derived = 33
    if size is not None and size != derived:
        raise ConfigError(
            f"deck_size={size} is not allowed with {num_players} players in mauscheln: "
            "3-5 players play with 32 cards (A-7; 33 with the Weli), 6-7 players with 52"
        )
    if derived == 33:
        return Deck("AKQJT987", extra=("6D",))
    return Deck("AKQJT987") if derived == 32 else Deck(RANKS)


def _classic_deck(num_players: int, options: Mapping[str, Any]) -> Deck:
    derived = 32 if num_players >= 5 or options.get("classic_always_32") else 24
    size = options.get("deck_size")
    if size is not None and size != derived:
        raise ConfigError(
            f"deck_size={size} is not allowed with {num_players} players in mauscheln_classic: 3-4 players play "
            "with 24 cards (A-9), 5-6 with 32 (A-7); classic_always_32=True gives 32 to every table (D2)"
        )
    return Deck("AKQJT9") if derived == 24 else Deck("AKQJT987")


def _mousel_deck(num_players: int, options: Mapping[str, Any]) -> Deck:
    size = options.get("deck_size")
    if size is None:
        size = 32 if num_players <= 5 else 52
    if num_players >= 6 and size != 52:
        raise ConfigError(f"deck_size={size} is not allowed with {num_players} players in mousel: 6-7 players need 52 cards")
    return Deck("AKQJT987") if size == 32 else Deck(RANKS)


_MOUCHE_RANKS = {3: "KQJAT98", 4: "KQJAT9876", 5: "KQJAT9876543", 6: "KQJAT98765432"}


def _mouche_deck(num_players: int, options: Mapping[str, Any]) -> Deck:
    ranks = _MOUCHE_RANKS[num_players]
    derived = 4 * len(ranks)
    size = options.get("deck_size")
    if size is not None and size != derived:
        raise ConfigError(
            f"deck_size={size} is not allowed with {num_players} players in mouche: 3/4/5/6 players use 28/36/48/52 cards (D25)"
        )
    return Deck("".join(r for r in RANKS if r in ranks))


def _muschka_deck(num_players: int, options: Mapping[str, Any]) -> Deck:
    derived = 32 if num_players == 3 else 36 if num_players == 4 else 52
    size = options.get("deck_size")
    if size is not None and size != derived:
        raise ConfigError(
            f"deck_size={size} is not allowed with {num_players} players in muschka: 3/4/5-7 players use 32/36/52 cards"
        )
    return Deck("AKQJT987" if derived == 32 else "AKQJT9876" if derived == 36 else RANKS)


def _rank_check(value: str) -> bool:
    return len(value) == 1 and value in RANKS


def _opt(*specs: OptionSpec) -> Mapping[str, OptionSpec]:
    return MappingProxyType({spec.name: spec for spec in specs})


def _max_deals(default: int | None = 1) -> OptionSpec:
    return OptionSpec(
        "max_deals",
        default,
        int,
        "a whole number >= 1, or None for a session that runs until its natural end",
        "Settled deals per session (one episode). Throw-ins and pass rounds do not count.",
        check=lambda v: v >= 1,
        nullable=True,
    )


_MAX_THROW_INS = OptionSpec(
    "max_throw_ins",
    50,
    int,
    "a whole number >= 1",
    "Consecutive throw-ins (pass rounds) after which the session is truncated.",
    check=lambda v: v >= 1,
)


def _stake(default: int, multiple: int) -> OptionSpec:
    return OptionSpec(
        "stake",
        default,
        int,
        f"a positive multiple of {multiple}",
        "The dealer's ante S (chips).",
        check=lambda v: v > 0 and v % multiple == 0,
    )


def _bankroll(default: int) -> OptionSpec:
    return OptionSpec(
        "bankroll",
        default,
        int,
        "a whole number >= 1",
        "Chips each seat starts a session with (unless reset passes 'chips').",
        check=lambda v: v >= 1,
    )


def _deck_size(allowed: str) -> OptionSpec:
    return OptionSpec(
        "deck_size",
        None,
        int,
        allowed,
        "Cards in the deck (derived from the player count when omitted).",
        check=lambda v: v > 0,
        nullable=True,
    )


def _knock(default: bool, doc: str) -> tuple[OptionSpec, OptionSpec]:
    return (
        OptionSpec("knock", default, bool, "True or False", doc),
        OptionSpec(
            "knock_min_rank",
            "Q",
            str,
            f"one rank letter of {RANKS!r} that the deck holds",
            "Lowest trump-card rank on which the dealer may knock (D9).",
            check=_rank_check,
        ),
    )


_DECLARE_ROLES = ("undecided", "declined", "mauschler", "goer", "out")


def _validate_mauscheln(num_players: int, values: dict[str, Any]) -> None:
    if values["belli"] is not None and values["weli"]:
        raise ConfigError("options belli and weli are mutually exclusive (D21); choose one")


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
    bidding="declare",
    scoring="per_trick",
    phases=("knock", "declare", "go_with", "exchange", "play"),
    roles=_DECLARE_ROLES,
    named_actions=("knock", "no_knock", "mauscheln", "pass", "go", "done"),
    options=_opt(
        _stake(4, 4),
        _bankroll(40),
        _deck_size("32 for 3-5 players (33 with the Weli), 52 for 6-7 players"),
        *_knock(False, "Klopfen (RULES.md §2.2): the dealer may knock blind on a high trump card."),
        OptionSpec("vierling", False, bool, "True or False",
                   "Vierling (§2.2): four of a rank dealt are shown, paid for and replaced."),
        OptionSpec("belli", None, str, "None, '7D' or 'trump7'",
                   "Belli (§2.2): a permanent trump directly below the trump ace.",
                   check=lambda v: v in ("7D", "trump7"), nullable=True),
        OptionSpec("belli_penalty", "pot", str, "'pot' or 'ace'",
                   "Who receives the Belli penalty when Belli and trump ace meet in a trick (D20).",
                   check=lambda v: v in ("pot", "ace")),
        OptionSpec("weli", False, bool, "True or False (3-5 players only)",
                   "Weli (§2.2): 6D added as a 33rd card, a permanent trump below the trump ace."),
        _max_deals(),
        _MAX_THROW_INS,
    ),
    deck_for=_mauscheln_deck,
    validate=_validate_mauscheln,
    doc="Modern Mauscheln ([001]): 4 cards, four tricks, declare / go with / exchange / play.",
)


def _validate_classic(num_players: int, values: dict[str, Any]) -> None:
    cap = values["cap"]
    if cap is not None and cap < values["stake"]:
        raise ConfigError(f"option cap={cap} is below the stake {values['stake']}; allowed: a multiple of 4 >= stake")


MAUSCHELN_CLASSIC = RulesetSpec(
    name="mauscheln_classic",
    min_players=3,
    max_players=6,
    direction=+1,
    hand_size=4,
    deal_pattern=(2, "T", 2),
    rank_order="AKQJT98765432",
    trick_profile="M",
    stock_policy="RESHUFFLE_TRUMP",
    bidding="declare",
    scoring="per_trick",
    phases=("offer", "knock", "declare", "go_with", "exchange", "play"),
    roles=_DECLARE_ROLES,
    named_actions=("knock", "no_knock", "mauscheln", "pass", "go", "done", "deal", "push"),
    options=_opt(
        _stake(4, 4),
        _bankroll(200),
        _deck_size("24 for 3-4 players, 32 for 5-6 (or 32 always with classic_always_32)"),
        OptionSpec("classic_always_32", False, bool, "True or False", "Play every table with 32 cards (D2)."),
        *_knock(True, "The classic voluntary knock (§2.3 step 4)."),
        OptionSpec("cap", None, int, "None or a multiple of 4 >= stake",
                   "Pot cap C with its reserve (§3.2).", check=lambda v: v > 0 and v % 4 == 0, nullable=True),
        OptionSpec("mauschelzwang", False, bool, "True or False", "The trump-ace holder must declare (D13)."),
        OptionSpec("mitgehzwang", False, bool, "True or False",
                   "The last seat must go with when everyone before passed (D14)."),
        OptionSpec("forced_knock_new_pot", False, bool, "True or False",
                   "On a new pot the dealer is mauschler and everyone plays (§2.3 step 3)."),
        OptionSpec("schieben", False, bool, "True or False", "The seat due to deal may push the deal on (§2.3 step 1)."),
        _max_deals(),
        _MAX_THROW_INS,
    ),
    deck_for=_classic_deck,
    validate=_validate_classic,
    doc="Classic Mauscheln ([000]): 2,T,2 deal, voluntary knock with blind draws, compulsions, cap, pushing.",
)

MOUSEL = RulesetSpec(
    name="mousel",
    min_players=3,
    max_players=7,
    direction=+1,
    hand_size=4,
    deal_pattern=(2, "T", 2),
    rank_order="AKQJT98765432",
    trick_profile="M",
    stock_policy="CAP",
    bidding="mousel",
    scoring="flat",
    phases=("knock", "declare", "exchange", "play"),
    roles=("undecided", "out", "in", "committed"),
    named_actions=("knock", "no_knock", "done", "in", "in_lead", "out"),
    options=_opt(
        _stake(4, 4),
        _bankroll(40),
        _deck_size("32 (3-5 players) or 52 (any; forced for 6-7)"),
        OptionSpec("volunteer_leader", False, bool, "True or False",
                   "A seat may say in_lead to become the committed player (§2.4)."),
        OptionSpec("exchange_limit", 4, int, "1, 2, 3 or 4", "Most cards one seat may exchange.",
                   check=lambda v: 1 <= v <= 4),
        *_knock(False, "The dealer may knock blind, becoming the committed player (§2.4 step 3)."),
        _max_deals(),
        _MAX_THROW_INS,
    ),
    deck_for=_mousel_deck,
    doc="Danish Mousel ([004]): in or out, forehand committed, a flat bete.",
)


def _validate_mouche(num_players: int, values: dict[str, Any]) -> None:
    if values["pamphile_wild"] and not values["pamphile"]:
        raise ConfigError("option pamphile_wild=True needs pamphile=True")


MOUCHE = RulesetSpec(
    name="mouche",
    min_players=3,
    max_players=6,
    direction=-1,
    hand_size=5,
    deal_pattern=(3, 2, "T"),
    rank_order="KQJAT98765432",
    trick_profile="F",
    stock_policy="RESHUFFLE",
    bidding="decide",
    scoring="mouche",
    phases=("name_trump", "announce", "decide", "swap", "exchange", "play"),
    roles=("undecided", "out", "stayed", "exchanged"),
    named_actions=("pass", "done", "stay", "announce", "silent", "trump:C", "trump:S", "trump:H", "trump:D", "swap"),
    options=_opt(
        _stake(5, 5),
        _bankroll(50),
        _deck_size("28/36/48/52 for 3/4/5/6 players (D25)"),
        OptionSpec("deal_2_3", False, bool, "True or False", "Deal 2 then 3 cards instead of 3 then 2."),
        OptionSpec("queue", False, bool, "True or False",
                   "One mouche after another: payments wait in escrow and enter one per deal (§2.6)."),
        OptionSpec("queue_order", "fifo", str, "'fifo' or 'largest'",
                   "Which queued item enters the pot first (Balzac: largest).",
                   check=lambda v: v in ("fifo", "largest")),
        OptionSpec("collect_1730", True, bool, "True or False", "A mouche-hand winner also takes the whole queue."),
        OptionSpec("mery_cap", None, int, "None or a positive multiple of 5",
                   "Méry's cap M on every mouche payment (D33).", check=lambda v: v > 0 and v % 5 == 0, nullable=True),
        OptionSpec("pamphile", False, bool, "True or False", "JC is the highest trump (Pamphile/Mistigri)."),
        OptionSpec("pamphile_wild", False, bool, "True or False", "The Pamphile completes a mouche of any suit."),
        OptionSpec("pamphile_bonus", True, bool, "True or False",
                   "With pamphile: its holder may announce it for 1 chip from each other seat (D29)."),
        OptionSpec("beatrix", False, bool, "True or False", "The dealer may swap a card for the trump card (D31)."),
        OptionSpec("rounds", None, int, "None or a whole number >= 1",
                   "End the session after this many full rounds of dealers (D34).",
                   check=lambda v: v >= 1, nullable=True),
        _max_deals(),
        _MAX_THROW_INS,
    ),
    deck_for=_mouche_deck,
    validate=_validate_mouche,
    doc="French Mouche (1718): five cards, counter-clockwise, stay / pass / exchange, the flush called mouche.",
)

MUSCHKA = RulesetSpec(
    name="muschka",
    min_players=3,
    max_players=7,
    direction=+1,
    hand_size=5,
    deal_pattern=(3, 2, "T"),
    rank_order="AKQJT98765432",
    trick_profile="R",
    stock_policy="RESHUFFLE",
    bidding="decide",
    scoring="points",
    phases=("decide", "exchange", "play"),
    roles=("undecided", "out", "stayed", "exchanged"),
    named_actions=("pass", "done", "stay"),
    options=_opt(
        _deck_size("32/36/52 for 3/4/5-7 players"),
        OptionSpec("start_score", 25, int, "a whole number >= 1", "Every score starts here and counts down to 0.",
                   check=lambda v: v >= 1),
        _max_deals(),
        _MAX_THROW_INS,
    ),
    deck_for=_muschka_deck,
    doc="Russian Muschka: five cards, points from 25 down to exactly 0, the ace of spades.",
)

RULESETS: Mapping[str, RulesetSpec] = MappingProxyType(
    {spec.name: spec for spec in (MAUSCHELN, MAUSCHELN_CLASSIC, MOUSEL, MOUCHE, MUSCHKA)}
)
"""Every ruleset of RULES.md."""


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
    if spec.validate is not None:
        spec.validate(num_players, values)
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
