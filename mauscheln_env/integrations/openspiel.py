"""OpenSpiel game ``python_mauscheln``: every ruleset of the family as a registered pyspiel game.

Importing this module registers the game (it needs the ``[openspiel]`` extra)::

    import pyspiel
    import mauscheln_env.integrations.openspiel  # registers python_mauscheln
    game = pyspiel.load_game("python_mauscheln(ruleset=mouche,players=3)")
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)

It follows OpenSpiel's own python games (``kuhn_poker.py``, ``liars_poker.py``):
static facts on the game, rules on the state, an observer that encodes a state
for one player. The rules are the engine's (:class:`mauscheln_env.engine.Game`);
this module decides none.

## Game type

Sequential, imperfect information, explicit stochastic chance, general-sum (the
pot, the classic reserve and the Mouche queue hold chips between deals), rewards
per deal. 3-7 players (each ruleset's own range); player ``p`` is seat ``p``.
``returns()`` are each seat's chips won over the session so far (in muschka the
decrease of its score); ``rewards()`` are those of the deal or deals that the
last action settled, exactly the env's rewards.

## Parameters

| parameter | default | meaning |
| --- | --- | --- |
| `ruleset` | `"mauscheln"` | a ruleset name, or the path of a preset (`configs/rules/*.yaml`) |
| `players` | `-1` | seats; -1: the preset's or 4 |
| `dealer` | `-1` | the first dealer; -1: a chance node draws him |
| `ordered_exchange` | `False` | marks of one exchange only in increasing card order (same discard sets, fewer histories) |
| `deck_seed` | `-1` | >= 0 (needs a fixed `dealer`): every deck order is this seed's fixed order, except `deck_shuffled` cards, which chance permutes among their places (a small variant for exact solvers) |
| `deck_shuffled` | `0` | with `deck_seed`: how many cards chance permutes: the first card of every hand from forehand, then every second card, ..., then the trump card and the stock |
| every rule option | see below | `knock`, `belli`, `stake`, `max_deals`, ... of RULES.md |

OpenSpiel parameters cannot be None, so a rule option's OpenSpiel default means
"the ruleset's default": -1 for a number, `""` for a text; a flag left at its
OpenSpiel default (False; True for `collect_1730` and `pamphile_bonus`) keeps the
ruleset's default. One consequence: `knock=False` cannot switch the classic
knock off (its default is on); use a preset file with `knock: false` for that.
A session must be finite: `max_deals` defaults to the ruleset's 1, and a preset
with `max_deals: null` needs `max_deals=N`.

## Chance

Every random draw of the engine is a chance node; nothing is drawn out of sight.
The engine's chance contract is the hook: the engine draws every random number
through ``state.rng.permutation(k)`` and, only in ``new_session`` without a
dealer, ``state.rng.integers(n)``. Each OpenSpiel state gives the engine a
:class:`ChanceRng` of its own: it returns the outcomes already chosen at chance
nodes, and when the engine asks for one more draw it raises :class:`NeedDraw`.
The state then applies the player's action on a clone of the engine state (the
probe): if no draw was needed it keeps the result; otherwise it opens chance
nodes for that draw and, once the draw is complete, replays the action from the
saved state with the draw supplied, as often as the action needs draws (a deal
settled by the last card, then the next deal's shuffle; a reshuffle of the
discards in an exchange). A permutation of ``k`` items is ``k - 1`` successive
uniform choices (the last item is forced), so a chance node never has more than
``k`` outcomes: the first dealer (``n`` outcomes), each card of the deck order
from the top (the outcome is the card id), each item of a reshuffle (the outcome
is the item's index in the engine's pool). The same chance outcomes and actions
give the same game.

## Observations

``observation_tensor`` and ``information_state_tensor`` are both the env's
observation (:class:`mauscheln_env.observation.Observer`), with the same named
pieces (``observer.dict``): it already has perfect recall within a deal, and
the session state (chips, pot, dealer) between deals. The information state
*string* has perfect recall over the whole session: it adds, for every finished
deal, the seat's last observation of that deal, the action that ended it and its
rewards, and the seat's own actions of the current deal in order.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel

from mauscheln_env.config import RULESETS, RuleConfig, make_config
from mauscheln_env.engine import DealResult, DealSpec, Game, Phase, State
from mauscheln_env.env import raw_env
from mauscheln_env.errors import ConfigError, MauschelnError
from mauscheln_env.observation import Observer

GAME_NAME = "python_mauscheln"


# ---------------------------------------------------------------------- engine hook: chance
class NeedDraw(Exception):
    """The engine asked for a random draw that no chance node has chosen yet."""

    def __init__(self, kind: str, size: int) -> None:
        super().__init__(f"{kind}({size})")
        self.kind = kind
        self.size = size


class ChanceContractError(RuntimeError):
    """The engine drew randomness outside its contract (only ``permutation(k)`` and ``integers(n)``)."""


class ChanceRng:
    """Stands in for ``state.rng``: returns the draws chosen at chance nodes, in order, then raises :class:`NeedDraw`."""

    __slots__ = ("_draws", "_next")

    def __init__(self, draws: list) -> None:
        self._draws = draws
        self._next = 0

    def _take(self, kind: str, size: int) -> Any:
        if self._next == len(self._draws):
            raise NeedDraw(kind, size)
        got_kind, got_size, value = self._draws[self._next]
        if (got_kind, got_size) != (kind, size):
            raise ChanceContractError(f"the engine drew {kind}({size}) where the replay holds {got_kind}({got_size})")
        self._next += 1
        return value

    def permutation(self, k: Any) -> np.ndarray:
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
            raise ChanceContractError(f"permutation({k!r}): the chance contract allows permutation of a count only")
        return np.asarray(self._take("permutation", int(k)), dtype=np.int64)

    def integers(self, n: Any, *args: Any, **kwargs: Any) -> int:
        if args or kwargs or not isinstance(n, (int, np.integer)):
            raise ChanceContractError(f"integers({n!r}, ...): the chance contract allows integers(n) only")
        return int(self._take("integers", int(n)))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)  # copy and pickle probe for optional hooks
        raise ChanceContractError(
            f"the engine called rng.{name}; the chance contract allows only permutation(k) and integers(n)"
        )

    def __deepcopy__(self, memo: dict) -> ChanceRng:
        new = ChanceRng(list(self._draws))
        new._next = self._next
        return new

    def __reduce__(self) -> tuple:
        return (_chance_rng, (self._draws, self._next))


def _chance_rng(draws: list, position: int) -> ChanceRng:
    rng = ChanceRng(draws)
    rng._next = position
    return rng


# ---------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class _OptionParam:
    name: str
    kind: type
    default: Any
    """The OpenSpiel default, which means "the ruleset's default"."""


def _option_params() -> dict[str, _OptionParam]:
    """Every rule option of every ruleset as one typed OpenSpiel parameter.

    The names, types and defaults come from the rulesets' typed options (``RULESETS[name].options``).
    """
    kinds: dict[str, type] = {}
    defaults: dict[str, set] = {}
    for spec in RULESETS.values():
        for name, opt in spec.options.items():
            kinds.setdefault(name, opt.kind)
            defaults.setdefault(name, set()).add(opt.default)
    out = {}
    for name, kind in sorted(kinds.items()):
        if kind is bool:
            values = defaults[name]
            default = values.pop() if len(values) == 1 else False
        elif kind is int:
            default = -1
        else:
            default = ""
        out[name] = _OptionParam(name, kind, default)
    return out


def _player_range() -> tuple[int, int]:
    """The smallest and largest table of any ruleset."""
    return min(s.min_players for s in RULESETS.values()), max(s.max_players for s in RULESETS.values())


OPTION_PARAMS = _option_params()
_OWN_PARAMS: dict[str, Any] = {
    "ruleset": "mauscheln",
    "players": -1,
    "dealer": -1,
    "ordered_exchange": False,
    "deck_seed": -1,
    "deck_shuffled": 0,
}
PARAMETER_SPECIFICATION: dict[str, Any] = {**_OWN_PARAMS, **{p.name: p.default for p in OPTION_PARAMS.values()}}


@dataclass(frozen=True)
class Settings:
    """A validated ``python_mauscheln`` parameter set: the rules and the OpenSpiel-side settings."""

    config: RuleConfig
    dealer: int | None
    ordered_exchange: bool
    deck_seed: int | None
    deck_shuffled: int


def settings_from_params(params: Mapping[str, Any]) -> Settings:
    """Turn OpenSpiel parameters into :class:`Settings`; raises :class:`ConfigError` naming what is wrong."""
    unknown = sorted(set(params) - set(PARAMETER_SPECIFICATION))
    if unknown:
        raise ConfigError(f"unknown {GAME_NAME} parameter(s) {', '.join(unknown)}; "
                          f"allowed: {', '.join(sorted(PARAMETER_SPECIFICATION))}")
    values = {**PARAMETER_SPECIFICATION, **dict(params)}
    for name, default in PARAMETER_SPECIFICATION.items():
        v = values[name]
        if type(v) is not type(default):
            raise ConfigError(f"{GAME_NAME} parameter {name}={v!r} has type {type(v).__name__}; "
                              f"allowed: {type(default).__name__}")
    options: dict[str, Any] = {}
    for p in OPTION_PARAMS.values():
        v = values[p.name]
        if v != p.default:
            options[p.name] = v
    players = values["players"]
    config = make_config(values["ruleset"], None if players == -1 else players, **options)
    _check_finite(config)
    n = config.num_players
    dealer = values["dealer"]
    if not -1 <= dealer < n:
        raise ConfigError(f"{GAME_NAME} parameter dealer={dealer} is not allowed; allowed: -1 (chance) or 0..{n - 1}")
    seed, shuffled = values["deck_seed"], values["deck_shuffled"]
    if seed < -1:
        raise ConfigError(f"{GAME_NAME} parameter deck_seed={seed} is not allowed; allowed: -1 (off) or a seed >= 0")
    if seed == -1 and shuffled != 0:
        raise ConfigError(f"{GAME_NAME} parameter deck_shuffled={shuffled} needs deck_seed >= 0")
    if seed >= 0 and dealer == -1:
        raise ConfigError(f"{GAME_NAME} parameter deck_seed={seed} needs a fixed dealer (dealer=0..{n - 1})")
    if not 0 <= shuffled <= config.num_cards:
        raise ConfigError(f"{GAME_NAME} parameter deck_shuffled={shuffled} is not allowed; "
                          f"allowed: 0..{config.num_cards} (the deck)")
    return Settings(config, None if dealer == -1 else dealer, values["ordered_exchange"],
                    None if seed == -1 else seed, shuffled)


def _check_finite(config: RuleConfig) -> None:
    if config.options["max_deals"] is None:
        raise ConfigError(f"{GAME_NAME} needs a finite session, but max_deals is None (unlimited); "
                          "allowed: pass max_deals=N with N >= 1")


def _shuffled_positions(engine: Game, dealer: int) -> list[int]:
    """Deck positions in the order ``deck_shuffled`` takes them: the first card of every hand (from
    forehand), then every second card, and so on; then the trump card and the stock from the top."""
    state = engine.new_session(np.random.default_rng(0), dealer=dealer)
    places = engine.deal_from_deck(list(range(engine.num_cards)), dealer, state.session.alive)
    hands = sorted((sorted(h) for h in places.hands if h), key=lambda h: h[0])
    by_round = [h[i] for i in range(max(len(h) for h in hands)) for h in hands if i < len(h)]
    return [*by_round, places.trump, *places.stock]


def params_for_config(config: RuleConfig, **own: Any) -> dict[str, Any]:
    """OpenSpiel parameters for a :class:`RuleConfig` (plus ``dealer=``, ``ordered_exchange=``, ... if given).

    Raises :class:`ConfigError` when the config holds a value the parameters cannot
    express (a flag switched off whose ruleset default is on, such as the classic knock).
    """
    values = dict(config.to_dict())
    params: dict[str, Any] = {"ruleset": values.pop("ruleset"), "players": values.pop("num_players")}
    defaults = make_config(params["ruleset"], params["players"]).options
    for name, v in values.items():
        if v == defaults[name]:
            continue
        p = OPTION_PARAMS[name]
        if v is None or (p.kind is bool and v == p.default):
            raise ConfigError(f"option {name}={v!r} of this config cannot be expressed as a {GAME_NAME} "
                              f"parameter (it means the ruleset default {defaults[name]!r} there); use a preset path")
        params[name] = v
    params.update(own)
    return params


# ---------------------------------------------------------------------- bounds
def _chip_bounds(config: RuleConfig) -> tuple[float, float]:
    """A seat never pays more than its chips and never wins more than the others' chips."""
    b = config.options["bankroll"]
    return -float(b), float((config.num_players - 1) * b)


def _score_bounds(config: RuleConfig) -> tuple[float, float]:
    """Muschka (RULES.md §3.4): a score ends at >= 0 and rises by at most 10 in a deal (the ace of spades)."""
    return -10.0 * config.options["max_deals"], float(config.options["start_score"])


def utility_bounds(config: RuleConfig) -> tuple[float, float]:
    """The range of a seat's session return: chips, or (a ruleset without chips) the score's decrease."""
    return _chip_bounds(config) if "bankroll" in config.options else _score_bounds(config)


def max_game_length(config: RuleConfig) -> int:
    """An upper bound on the player decisions of a session.

    Per seat and deal: offer, knock, announce, name trump, declare, go with, up to
    three decisions to decide (with Béatrix's swap), two exchanges of up to
    ``H`` marks and ``done`` each, and ``H`` cards. A session has at most
    ``max_deals`` settled deals, each after fewer than ``max_throw_ins`` throw-ins.
    """
    n, h = config.num_players, config.hand_size
    attempts = (config.options["max_deals"] + 1) * config.options["max_throw_ins"]
    return attempts * n * (3 * h + 11)


# ---------------------------------------------------------------------- the game
class _Shared:
    """Static objects of a game that its states use (reached through ``state.get_game()``, never copied)."""

    def __init__(self, **items: Any) -> None:
        self.__dict__.update(items)


def _game_type() -> pyspiel.GameType:
    lo, hi = _player_range()
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Mauscheln family (mauscheln_env)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.REWARDS,
        max_num_players=hi,
        min_num_players=lo,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=PARAMETER_SPECIFICATION,
    )


GAME_TYPE = _game_type()


class MauschelnGame(pyspiel.Game):
    """The static facts of one parameter set; :meth:`new_initial_state` starts a session."""

    def __init__(self, params: Mapping[str, Any] | None = None, *, config: RuleConfig | None = None) -> None:
        params = dict(params or {})
        settings = settings_from_params(params)
        if config is not None:
            _check_finite(config)
            settings = dataclasses.replace(settings, config=config)
        config = settings.config
        engine = Game(config)
        lo, hi = utility_bounds(config)
        info = pyspiel.GameInfo(
            num_distinct_actions=config.num_actions,
            max_chance_outcomes=max(config.num_cards, config.num_players),
            num_players=config.num_players,
            min_utility=lo,
            max_utility=hi,
            utility_sum=None,
            max_game_length=max_game_length(config),
        )
        super().__init__(GAME_TYPE, info, {**PARAMETER_SPECIFICATION, **params})
        self.settings = settings
        self.config = config
        self.engine = engine
        observer = Observer(engine)
        deck_base = positions = None
        if settings.deck_seed is not None:
            deck_base = tuple(int(c) for c in np.random.default_rng(settings.deck_seed).permutation(config.num_cards))
            positions = _shuffled_positions(engine, settings.dealer)[: settings.deck_shuffled]
        self._shared = _Shared(
            game=self,
            engine=engine,
            observer=observer,
            pieces=[(p.name, p.shape, p.size) for p in observer.pieces],
            env=raw_env(render_mode="ansi", **_env_kwargs(config)),
            deck_base=deck_base,
            deck_positions=positions,
        )

    @classmethod
    def from_config(cls, config: RuleConfig, **own: Any) -> MauschelnGame:
        """The game of exactly ``config`` (with ``dealer=``, ``ordered_exchange=``, ... if given).

        Built directly rather than through ``pyspiel.load_game``, so that a config the
        parameters cannot express (the classic knock switched off) is played as it is;
        the game's parameters then describe it as far as they can.
        """
        try:
            params = params_for_config(config, **own)
        except ConfigError:
            params = {"ruleset": config.ruleset, "players": config.num_players, **own}
        return cls(params, config=config)

    def new_initial_state(self, *args: Any) -> MauschelnState:
        """A session before its first chance node (the first dealer, or the first deck order)."""
        if args:
            raise ConfigError(f"{GAME_NAME}: new_initial_state takes no arguments (got {args!r})")
        return MauschelnState(self)

    def state_from_engine(self, engine_state: State) -> MauschelnState:
        """A state rooted at an engine state the caller built (a determinized deal, a table in play).

        For search (bots, the eval adapter): its history and returns start at that
        state, so it cannot be serialized or resampled by replaying its history.
        """
        if not isinstance(engine_state, State):
            raise MauschelnError(f"state_from_engine needs an engine State, got {type(engine_state).__name__}")
        state = MauschelnState(self)
        state._engine = self.engine.clone(engine_state)
        state._partial = None
        state._rooted = True
        return state

    def make_py_observer(self, iig_obs_type: pyspiel.IIGObservationType | None = None,
                         params: Mapping[str, Any] | None = None) -> MauschelnObserver:
        return MauschelnObserver(self, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


def _env_kwargs(config: RuleConfig) -> dict[str, Any]:
    values = dict(config.to_dict())
    return {"ruleset": values.pop("ruleset"), "num_players": values.pop("num_players"), **values}


# ---------------------------------------------------------------------- the state
_CHANCE = int(pyspiel.PlayerId.CHANCE)
_TERMINAL = int(pyspiel.PlayerId.TERMINAL)


class MauschelnState(pyspiel.State):
    """One session. The engine state changes only through :meth:`_run` (see the module docstring)."""

    def __init__(self, game: MauschelnGame) -> None:
        super().__init__(game)
        n = game.config.num_players
        self._engine: State | None = None
        """The engine state; None before the session starts."""
        self._pending: int | None = None
        """The player action waiting for its draws (None: the session start, or nothing pending)."""
        self._draws: list = []
        """Completed draws of the pending step: ``(kind, size, value)``."""
        self._partial: tuple | None = None
        """The draw being chosen now: ``(label, kind, size, remaining items, chosen items)``."""
        self._moves = 0
        self._deal_open: int | None = None
        """History index of the first chance node of the current deal's deck order."""
        self._returns = [0.0] * n
        self._rewards = [0.0] * n
        self._mine: list[list[int]] = [[] for _ in range(n)]
        """Each seat's own actions in the current deal, in order."""
        self._past: list[tuple[str, ...]] = [() for _ in range(n)]
        """Each seat's record of every finished deal (for the perfect-recall information state)."""
        self._last_mark: tuple[int, int] | None = None
        self._rooted = False
        self._safe = False
        """True: every step works on a copy of the engine state (replays, rooted states)."""
        self._run()

    @property
    def _shared(self) -> _Shared:
        # Not an attribute: OpenSpiel pickles a state's attributes to serialize it.
        return self.get_game()._shared

    # ------------------------------------------------------------------ OpenSpiel API
    def current_player(self) -> int:
        if self._partial is not None:
            return _CHANCE
        if self._engine.over:
            return _TERMINAL
        return self._engine.to_act

    def is_terminal(self) -> bool:
        return self._partial is None and self._engine.over

    def _legal_actions(self, player: int) -> list[int]:
        state = self._engine
        acts = self._shared.engine.legal_actions(state)
        mark = self._last_mark
        if (mark is not None and self._shared.game.settings.ordered_exchange and state.phase is Phase.EXCHANGE
                and state.to_act == mark[0]):
            n_cards = self._shared.engine.num_cards
            ordered = [a for a in acts if a >= n_cards or a > mark[1]]
            acts = ordered or acts
        return acts

    def chance_outcomes(self) -> list[tuple[int, float]]:
        remaining = self._partial[3]
        p = 1.0 / len(remaining)
        return [(a, p) for a in sorted(remaining)]

    def _apply_action(self, action: int) -> None:
        action = int(action)
        self._moves += 1
        self._rewards = [0.0] * len(self._rewards)
        partial = self._partial
        if partial is not None:
            label, kind, size, remaining, chosen = partial
            if action not in remaining:
                raise MauschelnError(f"chance outcome {action} is not possible here; allowed: {sorted(remaining)}")
            remaining = [x for x in remaining if x != action]
            chosen = [*chosen, action]
            if kind == "integers" or len(remaining) <= 1:
                self._draws.append((kind, size, self._assemble(label, kind, chosen + remaining)))
                self._partial = None
                self._run()
            else:
                self._partial = (label, kind, size, remaining, chosen)
            return
        seat = self._engine.to_act
        self._mine[seat].append(action)
        self._pending = action
        self._draws = []
        if self._rooted or self._safe:
            self._run()
        else:
            self._run_in_place(action)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == _CHANCE:
            label = self._partial[0] if self._partial is not None else "chance"
            if label == "dealer":
                return f"first dealer: seat {action}"
            if label in ("deck", "deck_part"):
                return f"{label}: {self._shared.engine.deck.codes[action]}"
            return f"{label}: item {action}"
        return self._shared.engine.action_to_str(action)

    def returns(self) -> list[float]:
        return list(self._returns)

    def rewards(self) -> list[float]:
        return list(self._rewards)

    def __str__(self) -> str:
        lines = []
        if self._engine is not None:
            env = self._shared.env
            env.attach(self._engine)
            lines.append(env.render())
        if self._partial is not None:
            label, kind, size, remaining, chosen = self._partial
            lines.append(f"chance: {label} {kind}({size}), chosen {chosen}")
        lines.append("history: " + " ".join(str(a) for a in self.history()))
        return "\n".join(lines)

    # ------------------------------------------------------------------ the engine hook
    def _run_in_place(self, action: int) -> None:
        """Apply a player action to the engine state itself (no copy), the common case.

        Most actions draw nothing. When the engine asks for a draw, the state it
        leaves is discarded and the state before the action is rebuilt by replaying
        the history (rare: a new deal, a reshuffle); then the draw opens chance nodes.
        """
        engine = self._shared.engine
        state = self._engine
        state.rng = ChanceRng([])
        try:
            results = engine.apply(state, action)
        except NeedDraw as need:
            self._engine = self._replayed_engine()
            if not self._open(need):
                self._run()
            return
        before = self._replayed_engine() if results and not state.over else None
        self._commit(state, results, before)

    def _replayed_engine(self) -> State:
        """The engine state before the action being applied, rebuilt from the history."""
        new = self._shared.game.new_initial_state()
        new._safe = True
        for a in self.history():
            new.apply_action(a)
        return new._engine

    def _run(self) -> None:
        """Apply the pending step (the session start or a player action) with the draws chosen so far."""
        engine = self._shared.engine
        settings = self._shared.game.settings
        while True:
            rng = ChanceRng(self._draws)
            try:
                if self._engine is None:
                    state = engine.new_session(rng, dealer=settings.dealer)
                    results: list[DealResult] = []
                else:
                    state = engine.clone(self._engine)
                    state.rng = rng
                    results = engine.apply(state, self._pending)
            except NeedDraw as need:
                if self._open(need):
                    return
                continue
            break
        self._commit(state, results, self._engine)

    def _open(self, need: NeedDraw) -> bool:
        """Open chance nodes for ``need``; False when the draw has one outcome only (taken at once)."""
        kind, size = need.kind, need.size
        deck = self._shared.engine.num_cards
        if kind == "integers":
            label, items = "dealer", list(range(size))
        elif size == deck:
            self._deal_open = self._moves
            base = self._shared.deck_base
            if base is None:
                label, items = "deck", list(range(size))
            else:
                label, items = "deck_part", [base[p] for p in self._shared.deck_positions]
        else:
            label, items = "reshuffle", list(range(size))
        if len(items) <= 1:
            self._draws.append((kind, size, self._assemble(label, kind, items)))
            return False
        self._partial = (label, kind, size, items, [])
        return True

    def _assemble(self, label: str, kind: str, chosen: list[int]) -> Any:
        if kind == "integers":
            return chosen[0]
        if label == "deck_part":
            order = list(self._shared.deck_base)
            for pos, card in zip(self._shared.deck_positions, chosen):
                order[pos] = card
            return order
        return list(chosen)

    def _commit(self, state: State, results: list[DealResult], before: State | None) -> None:
        """Keep the engine state a step produced, with its rewards and the records of finished deals.

        A finished deal is recorded by each seat's observation before the step
        that ended it, or after it when the session ended there (the final state
        still shows the deal); ``before`` is the state before the step, needed
        only in the first case.
        """
        action = self._pending
        n = len(self._returns)
        if results:
            rewards = [0.0] * n
            for result in results:
                for s, d in enumerate(result.deltas):
                    rewards[s] += float(d)
            self._rewards = rewards
            self._returns = [r + d for r, d in zip(self._returns, rewards)]
            if action is not None:
                shown = state if state.over else before
                text = self._shared.engine.action_to_str(action)
                deltas = ",".join(str(int(d)) for d in rewards)
                self._past = [(*self._past[s], f"[{self.observation_text(s, shown)} > {text} > {deltas}]")
                              for s in range(n)]
            self._mine = [[] for _ in range(n)]
        mark = None
        if (action is not None and action < self._shared.engine.num_cards and state.phase is Phase.EXCHANGE
                and self._mine[state.to_act][-1:] == [action]):
            mark = (state.to_act, action)
        self._last_mark = mark
        self._engine = state
        self._pending = None
        self._draws = []
        self._partial = None

    # ------------------------------------------------------------------ views
    def observation_text(self, seat: int, engine_state: State | None = None) -> str:
        """The seat's env observation as text: per named piece, the indices of its nonzero entries."""
        state = self._engine if engine_state is None else engine_state
        if state is None:
            return "no deal yet"
        obs = self._shared.observer.encode(state, seat)
        parts = []
        off = 0
        for name, _, size in self._shared.pieces:
            piece = obs[off:off + size]
            nz = np.flatnonzero(piece)
            if nz.size:
                parts.append(name + ":" + ",".join(
                    str(i) if piece[i] == 1.0 else f"{i}={float(piece[i]):.9g}" for i in nz.tolist()))
            off += size
        return " ".join(parts)

    def information_text(self, seat: int) -> str:
        """Perfect recall over the session: finished deals, this deal's observation, own actions in order."""
        past = "".join(self._past[seat])
        mine = ",".join(str(a) for a in self._mine[seat])
        return f"seat {seat} {past}| {self.observation_text(seat)} | mine:{mine}"

    def write_tensor(self, seat: int, out: np.ndarray) -> None:
        if self._engine is None:
            out.fill(0.0)
        else:
            out[:] = self._shared.observer.encode(self._engine, seat)

    @property
    def engine_state(self) -> State | None:
        """The engine state (read it; do not mutate it). At a chance node: the state before the pending step."""
        return self._engine

    def seat_view(self, seat: int) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        """``(observation, action_mask, info)`` of ``seat`` from the env's own code (``raw_env.attach``)."""
        if self._engine is None or self._partial is not None:
            raise MauschelnError("seat_view needs a decision or terminal node, not a chance node")
        env = self._shared.env
        env.attach(self._engine)
        agent = env.possible_agents[seat]
        out = env.observe(agent)
        return out["observation"], out["action_mask"], copy.deepcopy(env.infos[agent])

    # ------------------------------------------------------------------ resampling
    @property
    def is_rooted(self) -> bool:
        """True for a state built by :meth:`MauschelnGame.state_from_engine` (or a child of one)."""
        return self._rooted

    def rerooted(self, engine_state: State) -> MauschelnState:
        """A state rooted at ``engine_state`` that keeps this state's records (finished deals, own
        actions of this deal, returns): the same information state wherever ``engine_state`` agrees."""
        if self._partial is not None:
            raise MauschelnError("rerooted needs a decision or terminal node, not a chance node")
        new = self._shared.game.state_from_engine(engine_state)
        new._past = list(self._past)
        new._mine = [list(m) for m in self._mine]
        new._returns = list(self._returns)
        new._last_mark = self._last_mark
        return new

    def with_deal(self, deal: DealSpec, actions: list[int] | None = None, keep: int | None = None,
                  draws: list | tuple | None = None) -> MauschelnState:
        """The same history with the current deal's deck order replaced by one that deals ``deal``.

        Replays the history up to the current deal's deck order, deals ``deal``
        through the chance nodes, then replays the deal's player actions:
        ``actions`` (e.g. a determinization's, whose hidden choices of other seats
        differ from the real ones) in place of the real ones, except that seat
        ``keep`` plays its own real actions. ``draws`` (the engine's draws after
        the deal, ``(kind, size, value)`` in order, e.g. a determinization's
        reshuffles) replace the deal's later chance outcomes; by default the real
        ones are replayed. Raises :class:`MauschelnError` when an action is not
        legal with that deal or a draw does not fit. The tool for information-set
        resampling (IS-MCTS).
        """
        game = self._shared.game
        if self._rooted or self._deal_open is None or game.settings.deck_seed is not None:
            raise MauschelnError("with_deal needs a state built from new_initial_state of a game without deck_seed")
        if self._partial is not None:
            raise MauschelnError("with_deal needs a decision or terminal node, not a chance node")
        _, _, info = self.seat_view(0)
        order = deck_order(self._shared.engine, self._engine, deal, int(info["dealer"]))
        history = self.full_history()
        start = self._deal_open
        new = game.new_initial_state()
        for item in history[:start]:
            new.apply_action(item.action)
        for a in order[:-1]:
            new.apply_action(a)
        outcomes = None if draws is None else _chance_actions(draws)
        j = 0
        for item in history[start + len(order) - 1:]:
            if outcomes is not None:
                _feed_chance(new, outcomes)
            if item.player == _CHANCE:
                if outcomes is not None:
                    continue  # replaced by ``draws``
                if not new.is_chance_node() or item.action not in new._partial[3]:
                    raise MauschelnError("the replay with this deal reached another chance draw")
                new.apply_action(item.action)
                continue
            a = item.action
            if actions is not None:
                if j >= len(actions):
                    raise MauschelnError(f"the replacement actions end after {j}; the deal has more")
                if item.player != keep:
                    a = actions[j]
                j += 1
            if new.is_chance_node() or new.current_player() != item.player:
                raise MauschelnError("the replay with this deal asks another seat")
            new.apply_action(a)
        if actions is not None and j != len(actions):
            raise MauschelnError(f"the deal has {j} player actions; {len(actions)} replacement actions were given")
        if outcomes is not None:
            _feed_chance(new, outcomes)
            if outcomes:
                raise MauschelnError(f"{len(outcomes)} chance outcomes of the given draws were not used")
        return new


def _chance_actions(draws: list | tuple) -> list[int]:
    """The chance actions that choose ``draws`` (``(kind, size, value)``): a permutation of ``k`` items is its
    first ``k - 1`` items (the last is forced), ``integers(n)`` its value; a draw of one outcome is no node."""
    out: list[int] = []
    for kind, size, value in draws:
        if kind == "permutation":
            if size > 1:
                out.extend(int(v) for v in list(value)[:-1])
        elif kind == "integers":
            if size > 1:
                out.append(int(value))
        else:
            raise MauschelnError(f"draw kind {kind!r} is not allowed; allowed: 'permutation', 'integers'")
    out.reverse()  # popped from the end
    return out


def _feed_chance(state: MauschelnState, outcomes: list[int]) -> None:
    """Apply chance outcomes from ``outcomes`` (reversed, popped) while ``state`` is at a chance node."""
    while state.is_chance_node():
        if not outcomes:
            raise MauschelnError("the replay with this deal needs more chance draws than were given")
        a = outcomes.pop()
        if a not in state._partial[3]:
            raise MauschelnError(f"chance outcome {a} does not fit the draw here; allowed: {sorted(state._partial[3])}")
        state.apply_action(a)


def deck_order(engine: Game, state: State, deal: DealSpec, dealer: int) -> list[int]:
    """The deck order (top card first) that the engine deals into ``deal`` with this dealer.

    The inverse of ``Game.deal_from_deck``: it deals the positions 0..N-1 and puts
    each card of ``deal`` at a position of its place. ``state`` tells which seats are dealt in.
    """
    n_cards = engine.num_cards
    places = engine.deal_from_deck(list(range(n_cards)), dealer, state.session.alive)
    order = [-1] * n_cards
    for seat, positions in enumerate(places.hands):
        if len(positions) != len(deal.hands[seat]):
            raise MauschelnError(f"seat {seat} holds {len(deal.hands[seat])} cards in the deal; it is dealt {len(positions)}")
        for pos, card in zip(positions, deal.hands[seat]):
            order[pos] = card
    order[places.trump] = deal.trump
    if len(places.stock) != len(deal.stock):
        raise MauschelnError(f"the deal's stock has {len(deal.stock)} cards; the deck leaves {len(places.stock)}")
    for pos, card in zip(places.stock, deal.stock):
        order[pos] = card
    if sorted(order) != list(range(n_cards)):
        raise MauschelnError("the deal does not hold every card of the deck exactly once")
    return order


# ---------------------------------------------------------------------- the observer
class MauschelnObserver:
    """OpenSpiel's PyObserver: the env observation's named pieces over one flat tensor.

    With ``perfect_recall`` (the information state) the string is
    :meth:`MauschelnState.information_text`, else :meth:`MauschelnState.observation_text`;
    the tensor is the env observation in both cases.
    """

    def __init__(self, game: MauschelnGame, iig_obs_type: pyspiel.IIGObservationType,
                 params: Mapping[str, Any] | None) -> None:
        if params:
            raise ConfigError(f"{GAME_NAME} observers take no parameters; got {dict(params)!r}")
        if not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ConfigError(f"{GAME_NAME} observes for one player with public information only "
                              "(the observation and the information state); got another observation type")
        self.perfect_recall = iig_obs_type.perfect_recall
        shared = game._shared
        self.tensor = np.zeros(shared.observer.size, np.float32)
        self.dict: dict[str, np.ndarray] = {}
        off = 0
        for name, shape, size in shared.pieces:
            self.dict[name] = self.tensor[off:off + size].reshape(shape)
            off += size

    def set_from(self, state: MauschelnState, player: int) -> None:
        state.write_tensor(player, self.tensor)

    def string_from(self, state: MauschelnState, player: int) -> str:
        if self.perfect_recall:
            return state.information_text(player)
        return f"seat {player} | {state.observation_text(player)}"


def load_game(config: RuleConfig | None = None, **params: Any) -> MauschelnGame:
    """``pyspiel.load_game`` of ``python_mauscheln`` for a :class:`RuleConfig` and/or parameters."""
    if config is not None:
        params = params_for_config(config, **params)
    return pyspiel.load_game(GAME_NAME, params)


pyspiel.register_game(GAME_TYPE, MauschelnGame)
