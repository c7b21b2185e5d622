"""``pimc``: Perfect Information Monte Carlo search.

For each decision the agent

1. reads what its seat knows from the observation and the info dict
   (:mod:`agents.knowledge`) — never an engine state;
2. samples *determinizations*: complete deals (every hand, the stock order, each
   exchanger's discards) consistent with everything the seat knows — its own
   cards, discards and draws, the trump card and who took it, every public
   decision, the exchange counts, every card played and by whom, and the voids
   and "could not beat" facts that failing to follow, trump or beat reveals;
   with ``belief="expert"`` (the default) candidate deals are kept by rejection
   sampling on how likely the other seats' public decisions (knock, declare, go
   with, how many cards exchanged) were under a model player, so that, say, a
   mauschler is dealt the kind of hand a mauschler holds;
3. rebuilds the game in each determinization by starting a one-deal session on
   the engine with that deal (``Game.new_session(..., deal=DealSpec)``) and
   replaying the public history — the engine asks who is to act and checks
   every action, so the rules come from the engine alone;
4. scores every legal action in every determinization: in the card play by an
   exact max^n search of the remaining tricks (each seat maximises its own chip
   result, a transposition table at trick boundaries); in the knock, declare,
   go-with and exchange phases by a rollout in which every seat follows the
   model player;
5. plays the model player's own choice unless another action's mean chip
   result, paired over the same determinizations, is better by more than
   ``switch_z`` standard errors (a confident one-step improvement of the model
   player); sampling stops early once the verdict is clear.

The determinizations of one decision are shared by all actions (common random
numbers), and all randomness comes from the agent's generator, so a given seed
repeats itself. ``samples`` and ``time_limit`` bound the work per decision.

How the rules are learnt from the engine without restating them:

* The replay is driven by ``state.to_act`` and ``state.phase``; the seat's
  knowledge only says *what* each seat did (its role tells its declaration and
  go-with choice, its exchange count how many cards it marked, the trick record
  which card it played).
* The exchange order and how many stock cards each exchanger drew are read off
  a first "structure" replay.
* Which hidden cards a seat cannot hold is found by asking the engine's
  ``legal_play_mask`` whether the card it played would still have been legal
  had it also held the other card (for the trick profiles of RULES.md §1.4
  this pairwise test is exact).

Rulesets whose action vocabulary is not Mauscheln's are handed to the
``expert`` fallback (which itself degrades to random play), so the agent never
crashes on a new ruleset.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from agents.base import Agent, Info, legal_ids
from agents.baselines import MAUSCHELN_ACTIONS, ExpertAgent
from agents.knowledge import Knowledge, KnowledgeReader
from agents.views import EnvView
from mauscheln_env.cards import iter_bits
from mauscheln_env.config import make_config
from mauscheln_env.engine import DealSpec, Game, Phase, Role, State
from mauscheln_env.errors import MauschelnError

_PHASE_OF = {
    "knock": Phase.KNOCK,
    "declare": Phase.DECLARE,
    "go_with": Phase.GO_WITH,
    "exchange": Phase.EXCHANGE,
    "play": Phase.PLAY,
}


class Inconsistent(Exception):
    """A determinization (or the replay of the public history) contradicts what the seat knows."""


@dataclass
class _Structure:
    """Facts about the public history, found by one replay (shared by all samples of a decision)."""

    exchange_order: list[tuple[int, int]] = field(default_factory=list)
    """``(seat, stock cards drawn)`` for every finished exchange, in order."""
    held: dict[int, int] = field(default_factory=dict)
    """Cards each other live seat holds now (a passer: the size of its dead hand)."""
    exclusions: dict[int, int] = field(default_factory=dict)
    """Cards each other seat cannot hold now (revealed by its plays)."""


class PIMCAgent(Agent):
    """Determinized search; see the module docstring."""

    name = "pimc"
    reference = True

    def __init__(
        self,
        seed: int | None = None,
        *,
        samples: int = 16,
        min_samples: int = 4,
        confidence: float = 1.0,
        switch_z: float = 1.5,
        time_limit: float | None = None,
        belief: str = "expert",
        epsilon: float = 0.05,
        model_risk: float = 0.0,
        rollout_search: bool = False,
        phases: str = "all",
        max_tries: int = 8,
    ) -> None:
        super().__init__(seed)
        if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
            raise ValueError(f"samples={samples!r} is not allowed; allowed: a whole number >= 1")
        if time_limit is not None and (not isinstance(time_limit, (int, float)) or time_limit <= 0):
            raise ValueError(f"time_limit={time_limit!r} is not allowed; allowed: None or seconds > 0")
        if belief not in ("expert", "uniform"):
            raise ValueError(f"belief={belief!r} is not allowed; allowed: 'expert' or 'uniform'")
        if not isinstance(epsilon, (int, float)) or not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon={epsilon!r} is not allowed; allowed: a number in (0, 1]")
        if not isinstance(max_tries, int) or max_tries < 1:
            raise ValueError(f"max_tries={max_tries!r} is not allowed; allowed: a whole number >= 1")
        if not isinstance(min_samples, int) or isinstance(min_samples, bool) or not 1 <= min_samples:
            raise ValueError(f"min_samples={min_samples!r} is not allowed; allowed: a whole number >= 1")
        if not isinstance(confidence, (int, float)) or confidence < 0:
            raise ValueError(f"confidence={confidence!r} is not allowed; allowed: a number >= 0")
        self.samples = samples
        self.min_samples = min(min_samples, samples)
        self.confidence = float(confidence)
        if not isinstance(switch_z, (int, float)) or switch_z < 0:
            raise ValueError(f"switch_z={switch_z!r} is not allowed; allowed: a number >= 0")
        self.switch_z = float(switch_z)
        self.time_limit = None if time_limit is None else float(time_limit)
        self.belief = belief
        self.epsilon = float(epsilon)
        self.model_risk = float(model_risk)
        self.max_tries = max_tries
        self.rollout_search = bool(rollout_search)
        chosen = set(_PHASE_OF) if phases == "all" else {p.strip() for p in str(phases).replace("+", ",").split(",")}
        if not chosen or not chosen <= set(_PHASE_OF):
            raise ValueError(f"phases={phases!r} is not allowed; allowed: 'all' or names from {', '.join(_PHASE_OF)} "
                             "joined by '+'")
        self.phases = phases
        self._search_phases = frozenset(chosen)
        self.params = {
            "samples": samples,
            "min_samples": self.min_samples,
            "confidence": self.confidence,
            "switch_z": self.switch_z,
            "time_limit": self.time_limit,
            "belief": belief,
            "epsilon": self.epsilon,
            "model_risk": self.model_risk,
            "rollout_search": self.rollout_search,
            "phases": phases,
            "max_tries": max_tries,
        }
        self._plan: tuple[int, list[int]] | None = None
        self.stats = {"decisions": 0, "searched": 0, "fallbacks": 0, "samples": 0, "rejected": 0,
                      "inconsistent": 0, "switched": 0}
        """``rejected``: candidate deals the belief turned down; ``inconsistent``: deals the replay refused."""

    # ------------------------------------------------------------------ lifecycle
    def setup(self, game: Game, seat: int) -> None:
        same = self.game is game
        super().setup(game, seat)
        if not (same and hasattr(self, "_reader")):
            self._fallback = ExpertAgent(risk=self.model_risk)
            # The replay reads declarations, go-with choices, exchanges and plays off the
            # observation; rulesets or options with other public steps are left to the expert.
            self._supported = (
                game.config.ruleset == "mauscheln"
                and MAUSCHELN_ACTIONS.issubset(game.action_ids)
                and not getattr(game, "vierling", False)
            )
            self._reader = KnowledgeReader(game)
            options = dict(game.config.to_dict())
            ruleset, n = options.pop("ruleset"), options.pop("num_players")
            options["max_deals"] = 1  # a determinized session is one deal
            self._view = EnvView(make_config(ruleset, n, **options))
            self._sgame = self._view.game
            base = None if self.seed is None else int(np.random.SeedSequence([self.seed, 17]).generate_state(1)[0])
            self._models = [ExpertAgent(seed=None if base is None else base + s, risk=self.model_risk)
                            for s in range(n)]
            for s, model in enumerate(self._models):
                model.setup(self._sgame, s)
        self._fallback.setup(game, seat)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._fallback.reset(seed)
        if seed is not None and hasattr(self, "_models"):  # the search's models draw from this seed too
            for s, model in enumerate(self._models):
                model.reset(int(np.random.SeedSequence([seed, 17, s]).generate_state(1)[0]))
        self._plan: tuple[int, list[int]] | None = None

    # ------------------------------------------------------------------ decision
    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        if self.game is None:
            raise ValueError("pimc: call setup(game, seat) before act()")
        legal = legal_ids(action_mask).tolist()
        if len(legal) == 1:
            return legal[0]
        self.stats["decisions"] += 1
        default = self._fallback.act(observation, action_mask, info)
        if info.get("phase") in _PHASE_OF and info.get("phase") not in self._search_phases:
            return default
        if not self._supported or info.get("phase") not in _PHASE_OF:
            self.stats["fallbacks"] += 1
            return default
        k = self._reader.read(observation, info, self.seat, action_mask)
        planned = self._planned(k, legal)
        if planned is not None:
            return planned
        try:
            structure = self._structure(k)
        except (Inconsistent, MauschelnError):
            self.stats["fallbacks"] += 1
            return default
        self._default = default
        options, base = self._options(k, legal)
        values: list[list[float]] = []  # per sample: the value of each option
        weights: list[float] = []
        start = time.perf_counter()
        tries = 0
        verdict: int | None = None
        while len(values) < self.samples and tries < 2 * self.samples:
            if len(values) >= self.min_samples:
                if self.time_limit is not None and time.perf_counter() - start > self.time_limit:
                    break
                verdict = self._verdict(values, weights, base, final=False)
                if verdict is not None:
                    break
            tries += 1
            try:
                state, weight = self._sample(k, structure)
            except Inconsistent:
                continue
            weights.append(weight)
            values.append([self._value(state, option) for option in options])
        self.stats["samples"] += len(values)
        if not values or sum(weights) <= 0.0:
            self.stats["fallbacks"] += 1
            return default
        self.stats["searched"] += 1
        if verdict is None:
            verdict = self._verdict(values, weights, base, final=True)
        chosen = options[verdict]
        if verdict != base:
            self.stats["switched"] += 1
        if len(chosen) > 1:  # an exchange plan: remember the rest of it
            self._plan = (k.hand | k.discards, chosen)
        return chosen[0]

    @property
    def determinizes(self) -> bool:
        """Whether this table's rules are ones the search can determinize (see the module docstring)."""
        return self._supported

    def supports(self, game: Game) -> bool:
        """The search plays only the tables it can determinize; elsewhere it is its expert fallback."""
        return super().supports(game) and self.determinizes

    def determinize(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> State:
        """One engine state at this decision whose hidden cards are drawn from the agent's belief.

        Consistent with everything the seat knows (its observation and info),
        drawn with the agent's own generator: a one-deal session with the
        table's chips and pot, replayed to the current decision. Raises
        :class:`Inconsistent` when no consistent deal was found (draw again).
        """
        if self.game is None:
            raise ValueError("pimc: call setup(game, seat) before determinize()")
        if not self._supported:
            raise ValueError(f"pimc cannot determinize ruleset {self.game.config.ruleset} with these options")
        k = self._reader.read(observation, info, self.seat, action_mask)
        state, _ = self._sample(k, self._structure(k))
        return state

    def _verdict(self, values: list[list[float]], weights: list[float], base: int, final: bool) -> int | None:
        """Which option to play, or None to keep sampling.

        The search improves on the model player's choice (option ``base``): it
        switches to another option only when that option's mean advantage over
        ``base``, paired over the same determinizations, exceeds ``switch_z``
        standard errors. Sampling stops early once no option can plausibly beat
        ``base`` (each is at least ``confidence`` standard errors behind) or once
        the best one clears twice the switching bar.
        """
        v = np.asarray(values)
        w = np.asarray(weights)
        total = float(w.sum())
        if total <= 0.0:
            return base if final else None
        n_eff = total * total / float(w @ w)
        best, best_mean, best_se, open_race = base, 0.0, 0.0, False
        for o in range(v.shape[1]):
            if o == base or not np.isfinite(v[:, o]).all():
                continue
            diff = v[:, o] - v[:, base]
            m = float(w @ diff / total)
            se = math.sqrt(float(w @ (diff - m) ** 2 / total) / n_eff)
            if m > self.switch_z * se and m > best_mean:
                best, best_mean, best_se = o, m, se
            if m + self.confidence * se > 0.0:
                open_race = True
        if best != base:
            if final:
                return best
            # stop early only when the leader clears twice the bar (repeated looks inflate false switches)
            clear = best_mean > 2.0 * self.switch_z * best_se and len(values) >= 2 * self.min_samples
            return best if clear else None
        if final or not open_race:
            return base
        return None

    def _options(self, k: Knowledge, legal: list[int]) -> tuple[list[list[int]], int]:
        """What to score, and which option is the model player's own choice.

        Outside the exchange: each legal action. An exchange is a run of single
        marks, and scoring marks one by one would judge a half-made exchange; so
        the agent scores whole discard sets, each as its marks followed by
        ``done``: the j weakest cards of the hand for every j (card strength
        from the engine's trick tables) and the model player's own set. The
        engine rejects a set larger than the stock allows (scored -inf).
        """
        g = self.game
        default = self._default
        if k.phase != "exchange":
            options = [[a] for a in legal]
            return options, next((i for i, o in enumerate(options) if o[0] == default), 0)
        done = g.DONE
        if not any(a < g.num_cards for a in legal):
            return [[done]], 0
        cards = sorted(iter_bits(k.hand), key=lambda c: (self._fallback.power(k, c), c))
        first = 0 if done in legal else 1
        options = [[*cards[:j], done] for j in range(first, len(cards) + 1)]
        own = [c for c in self._fallback.discard_plan(k) if k.hand >> c & 1]
        if not own and done not in legal:
            own = cards[:1]
        mine = [*own, done]
        for i, o in enumerate(options):
            if sorted(o[:-1]) == sorted(own):
                options[i] = mine
                return options, i
        options.append(mine)
        return options, len(options) - 1

    def _planned(self, k: Knowledge, legal: list[int]) -> int | None:
        """The next step of an exchange plan chosen at an earlier mark, if it still fits."""
        plan = self._plan
        if k.phase != "exchange" or plan is None:
            self._plan = None
            return None
        base, actions = plan
        if base != k.hand | k.discards:
            self._plan = None
            return None
        for a in actions:
            if a == self.game.DONE or k.hand >> a & 1:
                if a in legal:
                    return a
                break
        self._plan = None
        return None

    def _recorded(self, k: Knowledge, state: State, seat: int, discards: dict[int, list[int]]) -> list[int] | None:
        """The actions ``seat`` took at the engine's current question, or None if not yet known."""
        g = self._sgame
        phase = state.phase
        role = k.roles[seat]
        if phase is Phase.KNOCK:
            if k.knocked is None:
                return None
            return [g.KNOCK if k.knocked else g.NO_KNOCK]
        if phase is Phase.DECLARE:
            if role is Role.MAUSCHLER:
                return [g.MAUSCHELN]
            if role in (Role.DECLINED, Role.GOER, Role.OUT):
                return [g.PASS]
            return None
        if phase is Phase.GO_WITH:
            if role is Role.GOER:
                return [g.GO]
            if role is Role.OUT:
                return [g.PASS]
            return None
        if phase is Phase.EXCHANGE:
            if seat == k.seat:
                marks = list(iter_bits(k.discards & ~state.deal.discards[seat]))
                if k.exchanged[seat] is None:
                    return marks or None  # the marks made so far; then the current decision
                return [*marks, g.DONE]
            if k.exchanged[seat] is None:
                return None
            return [*discards[seat], g.DONE]
        if phase is Phase.PLAY:
            t = len(state.deal.tricks)
            if t >= len(k.trick_cards):
                return None
            card = k.trick_cards[t][seat]
            return None if card is None else [card]
        return None

    def _structure(self, k: Knowledge) -> _Structure:
        """Replay the public history once with stand-in cards to learn its shape.

        Other seats' plays are injected (the card is put in the hand just before
        it is played), so the stand-in hands never matter for legality; at each
        such play the engine is asked which other cards would have made it
        illegal.
        """
        g = self._sgame
        me = k.seat
        rng = np.random.default_rng(0)
        own_initial = self._own_initial(k)
        known_mine = own_initial | k.discards | k.drawn | k.hand | k.played_by(me)
        spare = [c for c in range(g.num_cards) if not (known_mine >> c & 1) and c != k.trump_card]
        hands: list[tuple[int, ...]] = []
        for s in range(g.n):
            if not k.live[s]:
                hands.append(())
            elif s == me:
                cards = list(iter_bits(own_initial))
                while len(cards) < g.hand_size:
                    cards.append(spare.pop())
                hands.append(tuple(cards))
            else:
                hands.append(tuple(spare.pop() for _ in range(g.hand_size)))
        own_draws = [c for c in iter_bits(k.drawn) if c != k.trump_card]
        stock = own_draws + spare  # any order: only counts matter here
        state = self._new_state(k, DealSpec(tuple(hands), k.trump_card, tuple(stock)), rng)
        out = _Structure(exclusions={s: 0 for s in range(g.n) if s != me})
        at_play: dict[int, int] = {}
        steps = 0
        while True:
            steps += 1
            if steps > 4 * g.num_cards + 64 or state.phase is Phase.OVER:
                raise Inconsistent("the replay did not reach the current decision")
            seat = state.to_act
            phase = state.phase
            if phase is Phase.PLAY and not at_play:
                at_play = {s: state.deal.hands[s].bit_count() for s in range(g.n)}
            if seat != me and phase is Phase.EXCHANGE and k.exchanged[seat] is not None:
                marks = list(iter_bits(state.deal.hands[seat]))[: k.exchanged[seat]]
                actions = [*marks, g.DONE]
            else:
                actions = self._recorded(k, state, seat, {})
            if actions is None:
                break
            if phase is Phase.PLAY:
                card = actions[0]
                if seat != me and state.deal.trick:
                    out.exclusions[seat] |= self._excluded(state, card)
                state = g.with_hand(state, seat, 1 << card)  # the stand-in hand holds the card it played
                self._apply(state, card)
                continue
            if phase is Phase.GO_WITH and actions[0] == g.PASS and seat != me:
                out.held[seat] = state.deal.hands[seat].bit_count()
            before = len(state.deal.stock)
            for a in actions:
                self._apply(state, a)
            if phase is Phase.EXCHANGE and actions[-1] == g.DONE:
                out.exchange_order.append((seat, before - len(state.deal.stock)))
        if state.to_act != me or state.phase is not _PHASE_OF[k.phase]:
            raise Inconsistent("the replay stopped at another seat's decision")
        for s in range(g.n):
            if s == me or not k.live[s] or s in out.held:
                continue
            if at_play:
                out.held[s] = at_play.get(s, 0) - k.played_by(s).bit_count()
            else:
                out.held[s] = state.deal.hands[s].bit_count()
        return out

    def _excluded(self, state: State, card: int) -> int:
        """Cards that, held beside ``card``, would have made ``card`` illegal for the seat to act here."""
        g = self._sgame
        bit = 1 << card
        excluded = 0
        for c in range(g.num_cards):
            if c != card and not g.legal_play_mask(state, hand=bit | (1 << c)) & bit:
                excluded |= 1 << c
        return excluded

    def _apply(self, state: State, action: int) -> None:
        try:
            results = self._sgame.apply(state, action)
        except MauschelnError as exc:
            raise Inconsistent(str(exc)) from exc
        if results:
            raise Inconsistent("the deal ended during the replay")

    def _own_initial(self, k: Knowledge) -> int:
        """The cards this seat was dealt, as far as it has seen them."""
        return (k.hand | k.played_by(k.seat) | k.discards) & ~k.drawn

    def _new_state(self, k: Knowledge, spec: DealSpec, rng: np.random.Generator) -> State:
        """A one-deal session with the deal ``spec``, the real dealer, live seats, chips and pot (stakes paid)."""
        return self._sgame.new_session(rng, dealer=k.dealer, chips=k.chips, pot=k.pot, alive=k.live, deal=spec,
                                       ante=False)

    # ------------------------------------------------------------------ sampling
    def _sample(self, k: Knowledge, st: _Structure) -> tuple[State, float]:
        """One determinization drawn from the belief: rejection sampling on the model's likelihood.

        A candidate deal whose replay scores likelihood ``w`` (out of the most
        it could score, ``(1 - epsilon) ** m`` for ``m`` judged decisions) is
        accepted with probability ``w / max``; after ``max_tries`` candidates
        the likeliest one is taken. Accepted samples weigh the same.
        """
        best: tuple[State, float] | None = None
        for _ in range(self.max_tries):
            try:
                state, weight, judged = self._determinize(k, st)
            except Inconsistent:
                self.stats["inconsistent"] += 1
                continue
            ceiling = (1.0 - self.epsilon) ** judged
            if weight >= ceiling or self.rng.random() * ceiling < weight:
                return state, 1.0
            self.stats["rejected"] += 1
            if best is None or weight > best[1]:
                best = (state, weight)
        if best is None:
            raise Inconsistent("no determinization could be built")
        return best[0], 1.0

    def _determinize(self, k: Knowledge, st: _Structure) -> tuple[State, float, int]:
        """Sample a deal consistent with ``k`` and replay the history on it.

        Returns the state, the likelihood of the public decisions under the model and how many were judged.
        """
        g = self._sgame
        rng = self.rng
        me = k.seat
        n = g.n
        H = g.hand_size
        trump = k.trump_card
        own_initial = self._own_initial(k)
        own_draws = k.drawn & ~(1 << trump)
        played = [k.played_by(s) for s in range(n)]
        known = own_initial | k.discards | k.drawn | k.hand | (1 << trump)
        for s in range(n):
            known |= played[s]
        pool = [c for c in range(g.num_cards) if not (known >> c & 1)]
        rng.shuffle(pool)
        pool_set = set(pool)

        def take(count: int, allowed: int | None = None) -> list[int]:
            if allowed is None:
                chosen = pool[-count:] if count else []
            else:
                chosen = [c for c in pool if allowed >> c & 1][:count]
            if len(chosen) < count:
                raise Inconsistent("not enough unknown cards")
            for c in chosen:
                pool_set.discard(c)
            pool[:] = [c for c in pool if c in pool_set]
            return chosen

        # Current holdings of the other seats, the most constrained first.
        holders = [s for s in st.held if s != me]
        order = sorted(holders, key=lambda s: (bin(st.exclusions.get(s, 0)).count("1"), int(rng.integers(1 << 30))),
                       reverse=True)
        now: dict[int, list[int]] = {}
        for s in order:
            fixed = [trump] if k.trump_holder == s and not (played[s] >> trump & 1) else []
            now[s] = fixed + take(st.held[s] - len(fixed), ~st.exclusions.get(s, 0))
        # Undo the exchanges: which of a seat's cards came from the stock, and what it threw.
        draws_of: dict[int, list[int]] = {}
        discards_of: dict[int, list[int]] = {}
        for s, drawn_count in st.exchange_order:
            if s == me:
                known_draws = list(iter_bits(own_draws))
                draws_of[s] = known_draws + take(drawn_count - len(known_draws))
                continue
            final = [c for c in now[s] + list(iter_bits(played[s])) if c != trump or k.trump_holder != s]
            picks = rng.permutation(len(final))[:drawn_count].tolist() if drawn_count else []
            if len(picks) < drawn_count:
                raise Inconsistent("a seat drew more cards than it holds")
            draws_of[s] = [final[i] for i in picks]
            discards_of[s] = take(k.exchanged[s] or 0)
        hands: list[tuple[int, ...]] = []
        for s in range(n):
            if not k.live[s]:
                hands.append(())
                continue
            if s == me:
                cards = list(iter_bits(own_initial))
                cards += take(H - len(cards))
            elif s in draws_of:
                drawn = set(draws_of[s])
                cards = [c for c in now[s] + list(iter_bits(played[s])) if c not in drawn and c != trump]
                cards += discards_of[s]
            else:
                cards = now[s] + list(iter_bits(played[s]))
            if len(cards) != H:
                raise Inconsistent("a reconstructed hand has the wrong size")
            hands.append(tuple(cards))
        stock: list[int] = []
        for s, _ in st.exchange_order:
            stock.extend(draws_of[s])
        stock.extend(pool)
        spec = DealSpec(tuple(hands), trump, tuple(stock))
        state = self._new_state(k, spec, np.random.default_rng(int(rng.integers(1 << 62))))
        weight, judged = self._replay(k, state, discards_of)
        return state, weight, judged

    def _replay(self, k: Knowledge, state: State, discards: dict[int, list[int]]) -> tuple[float, int]:
        """Replay the public history on a determinized state.

        Returns the likelihood of the other seats' public decisions under the
        model player and how many decisions were judged.
        """
        g = self._sgame
        me = k.seat
        weight = 1.0
        judged = 0
        eps = self.epsilon
        judge = self.belief == "expert"
        if judge:
            self._view.bind(state)
        steps = 0
        while True:
            steps += 1
            if steps > 4 * g.num_cards + 64 or state.phase is Phase.OVER:
                raise Inconsistent("the replay did not reach the current decision")
            seat = state.to_act
            phase = state.phase
            actions = self._recorded(k, state, seat, discards)
            if actions is None:
                break
            if judge and seat != me and phase is not Phase.PLAY:
                weight *= self._likelihood(state, seat, actions, eps)
                judged += 1
            for a in actions:
                self._apply(state, a)
        if state.to_act != me or state.phase is not _PHASE_OF[k.phase]:
            raise Inconsistent("the replay stopped at another seat's decision")
        return weight, judged

    def _likelihood(self, state: State, seat: int, actions: list[int], eps: float) -> float:
        """How well the model player explains ``seat``'s public decision (1 - eps if it agrees, else eps)."""
        g = self._sgame
        model = self._models[seat]
        view = self._view
        view.invalidate()
        if state.phase is not Phase.EXCHANGE:
            obs, mask, info = view.seat_view(seat)
            return 1.0 - eps if model.act(obs, mask, info) == actions[0] else eps
        # Exchange: compare the number of cards the model would throw with the count thrown.
        probe = g.clone(state, rng=state.rng)
        view.bind(probe)
        marks = 0
        while probe.to_act == seat and probe.phase is Phase.EXCHANGE:
            view.refresh()
            obs, mask, info = view.seat_view(seat)
            a = model.act(obs, mask, info)
            if a == g.DONE:
                break
            g.apply(probe, a)
            marks += 1
        view.bind(state)
        return 1.0 - eps if marks == len(actions) - 1 else eps

    # ------------------------------------------------------------------ evaluation
    def _value(self, state: State, option: list[int]) -> float:
        """The seat's chip result of the deal after the actions of ``option`` in a determinized state.

        An option the engine refuses (e.g. more discards than the stock allows) scores -inf.
        """
        g = self._sgame
        me = self.seat
        child = g.clone(state, rng=state.rng)
        for action in option:
            try:
                results = g.apply(child, action)
            except MauschelnError:
                return -math.inf
            if results:
                return float(results[0].deltas[me])
        if child.phase is Phase.PLAY and (self.rollout_search or len(option) == 1 and state.phase is Phase.PLAY):
            return float(self._maxn(child, {})[me])
        return float(self._rollout(child, me))

    def _rollout(self, state: State, me: int) -> int:
        """Every seat follows the model player to the end of the deal (or, with ``rollout_search``,
        to the start of the card play, which is then searched exactly)."""
        g = self._sgame
        view = self._view
        view.bind(state)
        models = self._models
        while True:
            if state.phase is Phase.PLAY and self.rollout_search:
                return self._maxn(state, {})[me]
            view.refresh()
            seat = state.to_act
            obs, mask, info = view.seat_view(seat)
            results = g.apply(state, models[seat].act(obs, mask, info))
            if results:
                return results[0].deltas[me]

    def _maxn(self, state: State, memo: dict) -> list[int]:
        """Exact max^n value (chip results by seat) of the remaining tricks; every card is known."""
        g = self._sgame
        key = None
        if not state.deal.trick:
            key = (tuple(state.deal.hands), state.to_act, tuple(state.deal.tricks_won))
            hit = memo.get(key)
            if hit is not None:
                return hit
        seat = state.to_act
        best: list[int] | None = None
        legal = g.legal_actions(state)
        last = len(legal) - 1
        for i, a in enumerate(legal):
            child = state if i == last else g.clone(state, rng=state.rng)  # the last branch may use the node itself
            results = g.apply(child, a)
            value = results[0].deltas if results else self._maxn(child, memo)
            if best is None or value[seat] > best[seat]:
                best = value
        if key is not None:
            memo[key] = best
        return best

