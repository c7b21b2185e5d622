"""OpenSpiel bots on ``python_mauscheln``, and OpenSpiel bots at ``mauscheln eval``'s tables.

* :func:`determinize` — the one call into ``pimc``'s determinization
  (:mod:`agents.search.pimc`): a complete deal consistent with what one seat knows, read
  from that seat's observation and info (the env's own ``observe``/``infos``);
  :func:`determinization` adds the chance draws (reshuffles) it was replayed with.
* :class:`PimcResampler` — IS-MCTS's information-set resampler built on it: a
  state of the same information set for the player to act.
* :func:`ismcts_bot` — OpenSpiel's IS-MCTS (``open_spiel.python.algorithms.ismcts``)
  with that resampler and random rollouts.
* :class:`OpenSpielAgent` (agent name ``openspiel``) — an :class:`agents.base.Agent`
  that plays a pyspiel bot at any table of the match runner: at each decision it
  builds a ``python_mauscheln`` state rooted at a determinization of what its seat
  knows, and asks the bot (the bot's resampler then ranges over the information set).
* :class:`AgentPolicy` — an agent as an OpenSpiel ``Policy`` (for ``nash_conv``).

pimc's determinization supports every ruleset and option set (``PIMCAgent.determinizes``);
the resampler and the ``openspiel`` agent raise :class:`UnsupportedError` on a table
where it would not.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import ismcts, mcts

from agents.base import Agent, Info, legal_ids, make_agent
from agents.search.pimc import Determinization, Inconsistent, PIMCAgent
from mauscheln_env.config import make_config
from mauscheln_env.engine import DealSpec, Game, State
from mauscheln_env.errors import MauschelnError
from mauscheln_env.integrations.openspiel import MauschelnGame, MauschelnState


class UnsupportedError(MauschelnError):
    """The rules of this table are outside what the determinization supports."""


class ResampleError(MauschelnError):
    """No state of the information set could be built within the allowed tries."""


# ---------------------------------------------------------------------- pimc's determinization
_PIMC: dict[tuple[int, int, str], PIMCAgent] = {}


def determinize(game: Game, seat: int, observation: np.ndarray, action_mask: np.ndarray, info: Info,
                rng: np.random.Generator, belief: str = "uniform") -> State:
    """An engine state at this decision whose hidden cards are drawn consistently with what ``seat`` knows.

    The one adapter to pimc (``agents/search/pimc.py``): pimc reads a ``Knowledge`` from
    the observation and info, replays the public history once for its structure
    and samples a deal (``belief="uniform"``: every consistent deal alike;
    ``"expert"``: weighted by how an expert would have bid). The state is a
    one-deal session (``max_deals=1``) with the table's chips and pot; its
    :func:`dealt_cards` and :func:`engine_actions` name the real cards, so that
    the deal they describe (with the chance draws of :func:`determinization`)
    is a member of the seat's information set. Raises :class:`UnsupportedError`
    for rules pimc does not determinize, and ``agents.search.pimc.Inconsistent`` when a
    draw fails (draw again).
    """
    return determinization(game, seat, observation, action_mask, info, rng, belief).state


def determinization(game: Game, seat: int, observation: np.ndarray, action_mask: np.ndarray, info: Info,
                    rng: np.random.Generator, belief: str = "uniform") -> Determinization:
    """:func:`determinize` with the chance draws after the deal (reshuffles) that its history was replayed with
    (``Determinization.draws``, for ``MauschelnState.with_deal(draws=)``)."""
    key = (id(game), seat, belief)
    agent = _PIMC.get(key)
    if agent is None or agent.game is not game:
        agent = PIMCAgent(belief=belief)
        agent.setup(game, seat)
        _PIMC[key] = agent
    if not agent.determinizes:
        raise UnsupportedError(f"pimc's determinization does not support this table: {game.config.ruleset} with "
                               f"{dict(game.config.options)}")
    agent.rng = rng
    return agent.determinization(observation, action_mask, info)


def dealt_cards(state: State) -> DealSpec:
    """The current deal of an engine state as dealt."""
    return state.session.deals[-1]


def engine_actions(state: State) -> list[int]:
    """PORT: every action applied to an engine state (reads ``state.history``); for a
    determinization (a one-deal session), the deal's actions with the other seats' hidden choices."""
    return list(state.session.history)


# ---------------------------------------------------------------------- IS-MCTS
class PimcResampler:
    """IS-MCTS's resampler: ``resampler(state, player)`` is a state of ``player``'s information set.

    It draws a deal with :func:`determinization` from the player's observation and
    info. A state built from ``new_initial_state`` is rebuilt with that deal by
    replaying its history (:meth:`MauschelnState.with_deal`), the other seats'
    hidden choices (which cards they threw) and the reshuffles taken from the
    determinization and the player's own actions kept as they were; a state rooted at an
    engine state (the ``openspiel`` agent's) is rerooted at the determinized
    state. The result has the player's information state string; a draw that
    does not is drawn again, up to ``max_tries`` times.
    """

    def __init__(self, seed: int | None = None, belief: str = "uniform", max_tries: int = 16) -> None:
        self.rng = np.random.default_rng(seed)
        self.belief = belief
        self.max_tries = max_tries

    def __call__(self, state: MauschelnState, player: int) -> MauschelnState:
        game = state.get_game()
        engine = game.engine
        obs, mask, info = state.seat_view(player)
        key = state.information_state_string(player)
        for _ in range(self.max_tries):
            try:
                drawn = determinization(engine, player, obs, mask, info, self.rng, self.belief)
                det = drawn.state
                if state.is_rooted:
                    new = state.rerooted(det)
                else:
                    new = state.with_deal(dealt_cards(det), engine_actions(det), keep=player, draws=drawn.draws)
            except UnsupportedError:
                raise
            except (Inconsistent, MauschelnError):
                continue  # pimc drew no deal, or the history is not legal with the one it drew
            if new.information_state_string(player) == key:
                return new
        raise ResampleError(f"no state of seat {player}'s information set in {self.max_tries} draws")


def ismcts_bot(game: MauschelnGame, *, simulations: int = 100, uct_c: float = 4.0, rollouts: int = 1,
               seed: int | None = None, belief: str = "uniform",
               resampler: PimcResampler | None = None) -> ismcts.ISMCTSBot:
    """OpenSpiel's IS-MCTS bot with :class:`PimcResampler` (or ``resampler``) and random rollouts."""
    rs = np.random.RandomState(None if seed is None else seed % (1 << 32))
    bot = ismcts.ISMCTSBot(
        game=game,
        evaluator=mcts.RandomRolloutEvaluator(n_rollouts=rollouts, random_state=rs),
        uct_c=uct_c,
        max_simulations=simulations,
        random_state=rs,
        final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
    )
    if resampler is None:
        resampler = PimcResampler(seed=None if seed is None else seed + 1, belief=belief)
    bot.set_resampler(resampler)
    return bot


# ---------------------------------------------------------------------- the eval adapter
class OpenSpielAgent(Agent):
    """A pyspiel bot (IS-MCTS) as an agent at the match runner's tables.

    At each decision with more than one legal action it draws one determinization
    of what its seat knows (:func:`determinize`), roots a ``python_mauscheln``
    state of the same rules (one deal) there, and plays the bot's action. The bot
    sees only that state's information set: its resampler draws the hidden cards
    again for every simulation.
    """

    name = "openspiel"

    def __init__(self, seed: int | None = None, *, bot: str = "ismcts", simulations: int = 100,
                 uct_c: float = 4.0, rollouts: int = 1, belief: str = "uniform") -> None:
        super().__init__(seed)
        if bot != "ismcts":
            raise ValueError(f"bot={bot!r} is not allowed; allowed: 'ismcts'")
        if not isinstance(simulations, int) or isinstance(simulations, bool) or simulations < 1:
            raise ValueError(f"simulations={simulations!r} is not allowed; allowed: a whole number >= 1")
        if not isinstance(rollouts, int) or isinstance(rollouts, bool) or rollouts < 1:
            raise ValueError(f"rollouts={rollouts!r} is not allowed; allowed: a whole number >= 1")
        if not isinstance(uct_c, (int, float)) or uct_c < 0:
            raise ValueError(f"uct_c={uct_c!r} is not allowed; allowed: a number >= 0")
        if belief not in ("uniform", "expert"):
            raise ValueError(f"belief={belief!r} is not allowed; allowed: 'uniform' or 'expert'")
        self.params = {"bot": bot, "simulations": simulations, "uct_c": float(uct_c), "rollouts": rollouts,
                       "belief": belief}
        self._os_game: MauschelnGame | None = None

    def setup(self, game: Game, seat: int) -> None:
        same = self.game is game and self._os_game is not None
        super().setup(game, seat)
        if not same:
            options = dict(game.config.to_dict())
            ruleset, n = options.pop("ruleset"), options.pop("num_players")
            options["max_deals"] = 1  # the bot searches the deal at hand, as pimc does
            self._os_game = MauschelnGame.from_config(make_config(ruleset, n, **options))
        self._bot = None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._bot = None

    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        if self.game is None:
            raise ValueError("openspiel: call setup(game, seat) before act()")
        legal = legal_ids(action_mask).tolist()
        if len(legal) == 1:
            return legal[0]
        if self._bot is None:
            p = self.params
            resampler = PimcResampler(belief=p["belief"])
            resampler.rng = self.rng  # every draw from the agent's generator: same seed, same play
            self._bot = ismcts_bot(self._os_game, simulations=p["simulations"], uct_c=p["uct_c"],
                                   rollouts=p["rollouts"], seed=int(self.rng.integers(1 << 31)), resampler=resampler)
        det = self._root(observation, action_mask, info)
        root = self._os_game.state_from_engine(det)
        action = int(self._bot.step(root))
        if action not in legal:
            raise MauschelnError(f"openspiel: the bot chose {action}, which is not legal here ({legal})")
        return action

    def _root(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> State:
        for _ in range(16):
            try:
                return determinize(self.game, self.seat, observation, action_mask, info, self.rng,
                                   self.params["belief"])
            except Inconsistent:
                continue
        raise ResampleError("openspiel: no determinization of this seat's knowledge in 16 draws")


# ---------------------------------------------------------------------- agents as OpenSpiel policies
class AgentPolicy(policy_lib.Policy):
    """An agent as an OpenSpiel policy: a pure strategy, one action per information state.

    Before each decision the agent is reseeded from a hash of the information
    state string, so the policy is a function of the information state (as
    ``nash_conv`` requires) even for agents that draw random numbers.
    """

    def __init__(self, game: MauschelnGame, agent_name: str, **params: Any) -> None:
        super().__init__(game, list(range(game.num_players())))
        self.agents = [make_agent(agent_name, seed=0, **params) for _ in range(game.num_players())]
        for seat, agent in enumerate(self.agents):
            agent.setup(game.engine, seat)

    def action_probabilities(self, state: MauschelnState, player_id: int | None = None) -> dict[int, float]:
        seat = state.current_player() if player_id is None else player_id
        key = state.information_state_string(seat)
        agent = self.agents[seat]
        agent.reset(int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little") >> 1)
        obs, mask, info = state.seat_view(seat)
        return {int(agent.act(obs, mask, info)): 1.0}


