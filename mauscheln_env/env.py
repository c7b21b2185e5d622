"""# Mauscheln (PettingZoo AEC environment)

| | |
| --- | --- |
| Import | `import mauscheln_env; env = mauscheln_env.env(num_players=4)` |
| Actions | `Discrete(N + k)`: one per card of the deck, then the ruleset's named actions |
| Parallel API | no (turn-based; use the AEC API) |
| Agents | `player_0` ... `player_{n-1}`; seat s+1 sits to the left of seat s |
| Observation | `{"observation": Box(float32, (D,)), "action_mask": Box(int8, (A,))}` |
| Version | `mauscheln_v1` |

Mauscheln is a four-card trick-taking game for 3-7 players in which one player
declares that he will take two of the four tricks and the others decide whether
to go with him. The same environment plays the whole family of RULES.md, chosen
by `ruleset=`: `mauscheln` (default), `mauscheln_classic`, `mousel`, `mouche`
and `muschka`, each with its options (one page per ruleset in `docs/rulesets/`).
This module adapts the pure engine in `mauscheln_env.engine` (its rule objects
live in `mauscheln_env/rulesets/`, one module per ruleset) and decides no rule.

## Episodes

An episode is a session of `max_deals` settled deals (default 1) with the pot
carried over. A throw-in (nobody declares) does not count towards `max_deals`;
the next dealer antes on top. Fewer than three seats with chips (and, by the
rules, a Muschka score of exactly 0 or Mouche's `rounds`) end it early
(termination); `max_throw_ins` (default 50) throw-ins in a row, or
`max_session_deals` settled deals (default 1000, Muschka 500; so that every
session ends, even with `max_deals=None`), truncate it. Seats at 0 chips are
eliminated and never act again; every agent terminates together when the
session ends.

## Actions

A card action's string is its code (`"QH"`, `"TD"`). By phase:

| phase | strings |
| --- | --- |
| dealer's blind knock decision (`knock=True`, trump card >= `knock_min_rank`) | `knock`, `no_knock` |
| declaring, from forehand to the dealer (mauscheln, classic) | `mauscheln`, `pass` |
| going with, from the mauschler's left over every other seat | `go`, `pass` |
| declaring (mousel) | `in`, `in_lead`, `out` |
| deciding (mouche, muschka) | `stay`, `pass`, or a card code to start an exchange by discarding it; `swap` (Béatrix) |
| exchanging: each card action marks one card to discard, then `done` draws | card codes, `done` |
| playing a trick | card codes |
| classic dealing with `schieben` | `deal`, `push` |
| Pamphile | `announce`, `silent`; `trump:C`, `trump:S`, `trump:H`, `trump:D` |
| Béatrix: the card the dealer gives for the trump card | card codes |

The action space of a ruleset is its deck's cards followed by the named actions
it uses, in one global order, so a string means the same decision everywhere.
Every decision is asked, also when only one action is legal. A knocking dealer
(modern form) must mark at least one card; he receives the trump card and the
rest blind. `env.unwrapped.action_to_str(a)` and `action_from_str(s)` convert.

## Observation

Egocentric (index 0 of every per-seat piece is the observer, 1 the seat to his
left) and perfect-recall within the deal: exactly what RULES.md §1.8 lets the
seat know. `env.unwrapped.observation_layout` lists the pieces and
`env.unwrapped.observation_views(obs)` slices an observation by name.
For 4 players and 32 cards:

{layout}

`action_mask[a]` is 1 when action `a` is legal for this agent; all zeros for an
agent that is not to act. `env.unwrapped.state()` is the full hidden state (the
same pieces in the absolute frame, plus every hand, discard and draw, the stock
and the dead cards) for centralised critics.

## Rewards

When a deal ends (settled, no-one went with, a mouche, or thrown in) every agent
receives its chip change over that deal: ante, trick credits, bêtes, bonuses and
penalties; in muschka, the decrease of its score. A deal's rewards sum to minus
the change of the pot, the reserve (classic cap) and the escrow (Mouche queue).

## Infos

`phase`, `dealer`, `pot`, `chips` (by seat), `trump` (the trump card's code;
None while the pack is not dealt, during the classic offer to deal or push),
`hand` (own cards seen), `roles` (by seat: `undecided`, `declined`,
`mauschler`, `goer`, `out`, `in`, `committed`, `stayed`, `exchanged`,
`eliminated`), `trick` (`[seat, card]` pairs in play order), `tricks_won`,
`legal` (legal action strings for the agent to act, else empty); in muschka
also `scores`. Everything is what that seat may know.

## Arguments

```python
mauscheln_env.env(ruleset="mauscheln", num_players=None, render_mode=None, illegal_reward=None, **rule_options)
```

`num_players` (default 4, or the preset's). Rule options of `mauscheln`:
`knock` (False), `knock_min_rank` ("Q"), `vierling` (False), `belli` (None,
"7D" or "trump7"), `belli_penalty` ("pot"), `weli` (False), `stake` (4),
`bankroll` (40), `max_deals` (1; None for unlimited), `max_throw_ins` (50),
`max_session_deals` (1000), `deck_size` (derived: 32 for 3-5 players, 52 for
6-7). The other rulesets' options
are on their pages. `ruleset` may be the path of a preset in `configs/rules/`. `illegal_reward` (default minus the
bankroll) is what `env()` gives an agent that plays outside the mask; `raw_env`
raises `IllegalActionError` instead and leaves the state unchanged.

`reset(seed, options)` options: `dealer` (seat), `chips` (list, each 1..2**31-1;
`scores` in muschka), `pot` (0..2**31-1), `deal` (`{"hands": {seat: ["QH", ...]}, "trump": "QH", "stock":
[...]}`, any part; the rest is dealt from the seeded shuffle). Unknown keys are
ignored with a warning; bad values raise `ValueError`.

## Version history

* v1: first release: the five rulesets of RULES.md and their options.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from mauscheln_env.config import RuleConfig, make_config
from mauscheln_env.engine import PHASE_NAMES, ROLE_NAMES, DealSpec, Game, Phase, State
from mauscheln_env.errors import DealError, IllegalActionError, MauschelnError, SessionOverError, shown
from mauscheln_env.observation import Observer, Piece, layout_table
from mauscheln_env.options import MAX_AMOUNT
from mauscheln_env.render import render_table
from mauscheln_env.wrappers import ClassicWrapper

RESET_OPTIONS = ("dealer", "chips", "scores", "pot", "deal")
MAX_CHIPS = MAX_AMOUNT
"""Largest chips, score or pot a reset may set: chip sums stay far inside the batched engine's int64."""


def _finite_number(x: Any) -> bool:
    """A number (not a bool) that is a finite float: 10**30 is, 10**400 (no float holds it) and nan are not."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        return False
    try:
        return math.isfinite(float(x))
    except OverflowError:
        return False


def env(ruleset: str = "mauscheln", num_players: int | None = None, render_mode: str | None = None,
        illegal_reward: float | None = None, **rule_options: Any):
    """The environment wrapped with the semantics of PettingZoo's classic wrappers.

    An illegal action terminates the episode with ``illegal_reward`` for the
    offender (default: minus the bankroll), as in PettingZoo's classic games;
    an action outside the action space fails the bounds check; calls out of
    order are refused. :class:`mauscheln_env.wrappers.ClassicWrapper` does what
    ``TerminateIllegalWrapper``, ``AssertOutOfBoundsWrapper`` and
    ``OrderEnforcingWrapper`` do, in one layer (it is an ``OrderEnforcingWrapper``).
    """
    if illegal_reward is not None and not _finite_number(illegal_reward):
        raise MauschelnError(f"illegal_reward={shown(illegal_reward)} is not allowed; allowed: None or a finite "
                             "number")
    e = raw_env(ruleset=ruleset, num_players=num_players, render_mode=render_mode, **rule_options)
    if illegal_reward is None:
        illegal_reward = -float(e.game.scoring.unit(e.game))
    return ClassicWrapper(e, illegal_reward=float(illegal_reward))


class raw_env(AECEnv):
    """PettingZoo AEC adapter over :class:`mauscheln_env.engine.Game`."""

    metadata = {"name": "mauscheln_v1", "render_modes": ["ansi", "human"], "is_parallelizable": False, "render_fps": 1}

    def __init__(self, ruleset: str = "mauscheln", num_players: int | None = None, render_mode: str | None = None,
                 **rule_options: Any) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise MauschelnError(f"render_mode {render_mode!r} is not supported; allowed: None, 'ansi', 'human'")
        self.config: RuleConfig = make_config(ruleset, num_players, **rule_options)
        self.game = Game(self.config)
        self.render_mode = render_mode
        self._observer = Observer(self.game)
        self._state_observer = Observer(self.game, omniscient=True)
        n = self.config.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        A, D = self.config.num_actions, self._observer.size
        self._num_actions = A
        self.action_spaces = {a: spaces.Discrete(A) for a in self.possible_agents}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(low=0.0, high=np.inf, shape=(D,), dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(A,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.state_space = spaces.Box(low=0.0, high=np.inf, shape=(self._state_observer.size,), dtype=np.float32)
        self.np_random, _ = seeding.np_random(None)
        self._engine_state: State | None = None
        self._just_ended: list = []
        self._legal: list[int] = []
        # Last visible hand of each seat and its card codes (hands change rarely).
        self._hand_cache: list[tuple[int, tuple[str, ...]]] = [(-1, ())] * self.config.num_players
        self._action_strings = [self.game.action_to_str(a) for a in range(self.config.num_actions)]

    # -------------------------------------------------------------- spaces & names
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def action_to_str(self, action: int) -> str:
        return self.game.action_to_str(action)

    def action_from_str(self, text: str) -> int:
        return self.game.action_from_str(text)

    @property
    def observation_layout(self) -> list[Piece]:
        return list(self._observer.pieces)

    @property
    def state_layout(self) -> list[Piece]:
        return list(self._state_observer.pieces)

    def observation_views(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return self._observer.views(obs)

    @property
    def engine_state(self) -> State:
        """The engine's state (read it; do not mutate it)."""
        if self._engine_state is None:
            raise MauschelnError("call reset() first")
        return self._engine_state

    # -------------------------------------------------------------- reset
    def _parse_reset_options(self, options: dict[str, Any] | None) -> dict[str, Any]:
        if options is None:
            return {}
        if not isinstance(options, dict):
            raise MauschelnError(f"reset options must be a dict, got {type(options).__name__}")
        unknown = sorted(set(options) - set(RESET_OPTIONS), key=str)
        if unknown:
            warnings.warn(
                f"reset ignores unknown option(s) {unknown}; known: {', '.join(RESET_OPTIONS)}",
                stacklevel=3,
            )
        n = self.config.num_players
        out: dict[str, Any] = {}
        if options.get("dealer") is not None:
            d = options["dealer"]
            if not _is_int(d) or not 0 <= d < n:
                raise MauschelnError(f"reset option dealer={shown(d)} is not a seat; allowed: 0..{n - 1}")
            out["dealer"] = int(d)
        points = not self.game.scoring.uses_chips
        for key in ("chips", "scores"):
            if options.get(key) is not None and (key == "scores") != points:
                raise MauschelnError(
                    f"reset option {key} does not apply to ruleset {self.config.ruleset}; "
                    f"use {'scores' if points else 'chips'}"
                )
        for key in ("chips", "scores"):
            values = options.get(key)
            if values is None:
                continue
            if not isinstance(values, (list, tuple, np.ndarray)) or len(values) != n or not all(
                _is_int(c) and 1 <= c <= MAX_CHIPS for c in values
            ):
                raise MauschelnError(
                    f"reset option {key}={shown(values)} is not allowed; allowed: a list of {n} whole numbers, "
                    f"each 1..{MAX_CHIPS}"
                )
            out[key] = [int(c) for c in values]
        if options.get("pot") is not None and points:
            raise MauschelnError("reset option pot does not apply to muschka, which has no pot")
        if options.get("pot") is not None:
            pot = options["pot"]
            if not _is_int(pot) or not 0 <= pot <= MAX_CHIPS:
                raise MauschelnError(f"reset option pot={shown(pot)} is not allowed; allowed: a whole number 0..{MAX_CHIPS}")
            out["pot"] = int(pot)
        if options.get("deal") is not None:
            out["deal"] = self._parse_deal(options["deal"])
        return out

    def _parse_deal(self, deal: Any) -> dict[str, Any]:
        if isinstance(deal, DealSpec):
            return {"spec": deal}
        if not isinstance(deal, dict):
            raise DealError(f"reset option deal must be a dict with keys hands, trump, stock; got {deal!r}")
        unknown = sorted(set(deal) - {"hands", "trump", "stock"}, key=str)
        if unknown:
            raise DealError(f"deal has unknown key(s) {unknown}; allowed: hands, trump, stock")
        n, deck = self.config.num_players, self.config.deck
        out: dict[str, Any] = {}
        hands = deal.get("hands") or {}
        if not isinstance(hands, dict):
            raise DealError("deal['hands'] must map seats (ints) to lists of card codes")
        out["hands"] = {}
        for seat, cards in hands.items():
            if not _is_int(seat) or not 0 <= seat < n:
                raise DealError(f"deal['hands'] has seat {seat!r}; allowed: ints 0..{n - 1}")
            if not isinstance(cards, (list, tuple)):
                raise DealError(f"deal['hands'][{seat}] must be a list of card codes")
            out["hands"][int(seat)] = [deck.parse(c) for c in cards]
        if deal.get("trump") is not None:
            out["trump"] = deck.parse(deal["trump"])
        stock = deal.get("stock") or []
        if not isinstance(stock, (list, tuple)):
            raise DealError("deal['stock'] must be a list of card codes, top card first")
        out["stock"] = [deck.parse(c) for c in stock]
        return out

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None and (not _is_int(seed) or seed < 0):
            raise MauschelnError(f"reset seed={seed!r} is not allowed; allowed: None or a whole number >= 0")
        seed = None if seed is None else int(seed)
        parsed = self._parse_reset_options(options)
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        deal = parsed.pop("deal", None)
        state = self.game.new_session(self.np_random, deal=deal, **parsed)
        self._engine_state = state
        self._just_ended: list = []
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.agent_selection = self.possible_agents[state.to_act]
        self._update_infos()
        if self.render_mode == "human":
            self.render()

    def attach(self, state: State, infos: bool = True) -> None:
        """Point this environment at an engine state the caller owns (a match runner, a search agent).

        ``observe``, ``infos`` and ``render`` then describe ``state`` exactly as
        they would in play; call ``attach`` again after the state changed
        outside ``step``. The state is not copied. Every agent is live and no
        reward is pending afterwards. With ``infos=False`` only the legal
        actions are cached and ``infos`` is left empty: a caller that needs one
        seat's info (the match runner) builds it with :meth:`seat_info`.
        """
        if not isinstance(state, State) or state.n != self.config.num_players:
            raise MauschelnError(f"attach needs an engine State of {self.config.num_players} seats, got {state!r}")
        self._engine_state = state
        self._just_ended = []
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        if state.to_act is not None:
            self.agent_selection = self.possible_agents[state.to_act]
        if infos:
            self._update_infos()
        else:
            self._legal = self.game.legal_actions(state)
            self.infos = {}

    # -------------------------------------------------------------- step
    def step(self, action: int | None) -> None:
        if self._engine_state is None:
            raise MauschelnError("call reset() before step()")
        if not self.agents:
            raise SessionOverError("the session is over and every agent has left; call reset() to play again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
            action = action.item()  # a 0-d integer array, as some single-agent libraries hand over
        if action is None or not _is_int(action):
            raise IllegalActionError(
                f"{agent} must act with an action id (int), got {action!r}; "
                f"legal: {', '.join(self._legal_strings())}"
            )
        state = self._engine_state
        results = self.game.apply(state, int(action))  # raises with the state unchanged
        self._just_ended = results
        rewards = self.rewards
        for a in self.agents:
            rewards[a] = 0.0
        for result in results:
            for s, delta in enumerate(result.deltas):
                rewards[self.possible_agents[s]] += delta
        self._cumulative_rewards[agent] = 0.0
        if state.phase is Phase.OVER:
            trunc = state.session.truncated
            for a in self.agents:
                self.terminations[a] = not trunc
                self.truncations[a] = trunc
        else:
            self.agent_selection = self.possible_agents[state.to_act]
        self._accumulate_rewards()
        self._update_infos()
        if self.render_mode == "human":
            self.render()

    # -------------------------------------------------------------- observe
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        state = self.engine_state
        try:
            seat = self._seat[agent]
        except (KeyError, TypeError):
            raise MauschelnError(f"observe({agent!r}): no such agent; allowed: {', '.join(self.possible_agents)}"
                                 ) from None
        mask = np.zeros(self._num_actions, dtype=np.int8)
        if state.to_act == seat:
            mask[self._legal] = 1
        return {"observation": self._observer.encode(state, seat), "action_mask": mask}

    def state(self) -> np.ndarray:
        return self._state_observer.encode(self.engine_state)

    def _legal_strings(self) -> list[str]:
        return [self.game.action_to_str(a) for a in self._legal]

    def _update_infos(self) -> None:
        """Rebuild ``infos`` and the cached legal actions after every change of state.

        The public entries are built once and shared by every agent's dict:
        treat infos as read-only (copy before you modify them).
        """
        self._legal = self.game.legal_actions(self._engine_state)
        public = self._public_info()
        self.infos = {a: self._seat_info(self._seat[a], public) for a in self.agents}

    def seat_info(self, seat: int) -> dict[str, Any]:
        """The info dict of ``seat`` alone, equal to ``infos[agent]`` (for a caller that skipped the others).

        Only valid right after :meth:`attach` (with or without ``infos``) or a step.
        """
        return self._seat_info(seat, self._public_info())

    def _public_info(self) -> dict[str, Any]:
        """The entries every seat's info shares (built once per change of state)."""
        state = self._engine_state
        session, deal = state.session, state.deal
        g = self.game
        codes = g.deck.codes
        alive = session.alive
        public = {
            "phase": PHASE_NAMES[state.phase],
            "dealer": session.dealer,
            "pot": session.pot,
            "chips": list(session.chips),
            "trump": None if deal.undealt else codes[deal.trump_card],
            "roles": [ROLE_NAMES[r] if alive[s] else "eliminated" for s, r in enumerate(deal.roles)],
            "trick": [[s, codes[c]] for s, c in deal.trick],
            "tricks_won": list(deal.tricks_won),
        }
        public["_legal"] = [self._action_strings[x] for x in self._legal]
        public["_scores"] = list(session.scores) if not g.scoring.uses_chips else None
        return public

    def _seat_info(self, seat: int, public: dict[str, Any]) -> dict[str, Any]:
        """One seat's info: the shared public entries, its visible hand and (when it acts) the legal moves."""
        state = self._engine_state
        deal = state.deal
        hand = deal.hands[seat] & ~deal.blind[seat] if deal.seen[seat] else 0  # Game.visible_hand
        cached = self._hand_cache[seat]
        if cached[0] != hand:
            cached = self._hand_cache[seat] = (hand, tuple(self.game.deck.codes_of(hand)))
        info = {
            "phase": public["phase"],
            "dealer": public["dealer"],
            "pot": public["pot"],
            "chips": public["chips"],
            "trump": public["trump"],
            "hand": list(cached[1]),
            "roles": public["roles"],
            "trick": public["trick"],
            "tricks_won": public["tricks_won"],
            "legal": public["_legal"] if seat == state.to_act else [],
        }
        scores = public["_scores"]
        if scores is not None:
            info["scores"] = list(scores)
        return info

    # -------------------------------------------------------------- render
    def render(self) -> str | None:
        if self.render_mode is None:
            warnings.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'", stacklevel=2)
            return None
        text = render_table(self.game, self.engine_state, self._just_ended)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        pass


def _document_layout() -> str:
    observer = Observer(Game(make_config("mauscheln", 4)))
    return layout_table(observer)


__doc__ = __doc__.replace("{layout}", _document_layout())


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)
