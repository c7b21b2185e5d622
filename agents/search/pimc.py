"""``pimc``: Perfect Information Monte Carlo search, for every ruleset.

For each decision the agent

1. reads what its seat knows from the observation and the info dict
   (:mod:`agents.knowledge`, the observation schema) — never an engine state;
2. builds a *skeleton*: one engine state at the current decision, reached by
   replaying the public history on stand-in cards (once per decision). The
   engine asks who acts and what is legal; the agent answers each question of
   another seat with the action whose public trace (the observation's record
   pieces: roles, exchange counts, knock, trump suit and who took the trump card,
   announcements, ...) agrees with what the seat sees now, backtracking where
   two fit; a seat's exchange is its public count of marks and ``done``; every
   card played to a trick is put into its player's hand and played. The replay
   must end at this seat's decision with exactly this seat's record, else the
   search stands down for this decision (the ``expert`` plays it);
3. collects, while replaying, what each hidden card place cannot hold: a card
   that, held beside the card a seat played, would have made that play illegal
   (``Game.legal_play_mask(hand=...)``: the follow obligations of each trick
   profile), and a card whose holding would have made a seat's other decision
   illegal (the ace of spades may not pass, Mauschelzwang); the constraints sit
   on card places and move with them;
4. samples *determinizations*: a random relabelling of the cards this seat cannot
   see over the hidden places (other hands, blind cards, stock order, discard
   pile, dead hands) that respects those constraints, written through every card
   field of the skeleton — so own hand and discards, cards played, the face-up or
   taken trump card stay, and the stock, reshuffles (Mouche, Muschka, a classic
   reshuffle of the trump card) and exchange counts are the engine's own; with
   ``belief="expert"`` (the default) a sample is kept by rejection sampling on
   how well the ``expert`` explains the other seats' public decisions in it
   (each judged on the skeleton's state before that decision, relabelled);
5. scores every option in every determinization: in the card play by an exact
   max^n search of the remaining tricks (each seat maximises its own result; a
   transposition table at trick boundaries; cards that are adjacent in the
   trick order and held by one seat are one option when no trick hook can tell
   them apart); in the other phases by a rollout in which every seat follows the
   ruleset's ``expert``;
6. plays the model player's own choice unless another option's mean result,
   paired over the same determinizations, is better by more than ``switch_z``
   standard errors; sampling stops early once the verdict is clear.

The *model player* is the ruleset's ``expert`` by default. ``model=`` puts a
learned policy in its place (``"learned"``: the policy shipped for the table, or
a checkpoint path / shipped name): the policy then makes the choice the search
improves on, plays every seat in the rollouts and judges the other seats'
decisions for the belief (a sampled action that agrees with the seat's, so the
expected weight follows the policy's probability of it). The exact search of the
tricks does not use the model; the expert's card strength still orders the
discard sets. This is search on top of a learned policy: ``pimc:model=mauscheln4``. With a learned model, ``phases=play`` is the measured choice
(docs/development/lab-notebook.md, the search on top of a policy): searching the bidding by rollouts of the policy at every seat judges a
decision against a table of the policy, and it lost ground against ``pimc``, whose seats play otherwise; the
exact search of the card play did not.

An exchange (or an exchange started while deciding, Mouche and Muschka) is
scored as whole discard sets — the ``j`` weakest cards for every ``j`` and the
model player's own set — each followed by ``done``; the rest of the chosen set
is then played from a plan. The determinizations of one decision are shared by
all options (common random numbers), and all randomness comes from the agent's
generator, so a given seed repeats itself. ``samples`` and ``time_limit`` bound
the work per decision.

A decision is a function of what the agent carries into it (its generators, those of its inner agents, and
the exchange plans) and of the seat's view; so the agent keeps its last decisions by a digest of both and
replays one that comes again, putting back what the decision left behind. Duplicate evaluation plays every
deal several times with the same seeds, and where the games agree up to a decision the search is not run
again (no decision is replayed under a ``time_limit``, where the clock takes part).

The public :meth:`PIMCAgent.determinize` (and :meth:`PIMCAgent.determinization`, which adds the
reshuffles' draws) writes the relabelling through the record too: the deal as dealt and the history name
the real cards, so that replaying them (``MauschelnState.with_deal`` in the OpenSpiel adapter) rebuilds a
member of the seat's information set. Cards whose names the record already holds (own discards, the trump
card) keep them through a reshuffle: a stand-in trades places with them in the reshuffle's stack instead.

Nothing here names a ruleset: the skeleton, the constraints and the scores come
from the engine (``new_session(deal=, ante=False)``, ``legal_actions``,
``legal_play_mask(hand=)``, ``clone``, ``with_hand``, the trick hooks'
``start``) and the observation schema, and which roles can follow which is
learnt once per table from random play of the engine.
"""

from __future__ import annotations

import copy
import hashlib
import marshal
import math
import operator
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from agents.base import Agent, Info, legal_ids
from agents.knowledge import Knowledge, KnowledgeReader
from agents.scripted.baselines import ExpertAgent
from agents.views import EnvView
from mauscheln_env.cards import iter_bits
from mauscheln_env.config import make_config
from mauscheln_env.engine import Deal, DealSpec, Game, Phase, Role, State, TrickHook
from mauscheln_env.errors import MauschelnError
from mauscheln_env.observation import Observer
from mauscheln_env.tricks import legal_follow

SEARCH_PHASES = ("knock", "declare", "go_with", "exchange", "play", "offer", "decide", "name_trump", "announce",
                 "swap")
"""Phase names ``phases=`` may list (those of every ruleset; a table uses the ones its spec has)."""

RECORD_PIECES = ("trump_card", "trump_suit", "trump_taken_by", "knock", "roles", "exchanged", "trump_face_up",
                 "announced", "revealed", "pushes")
"""Observation pieces that record the public decisions of a deal (those a table has are compared)."""

_MARK_PHASES = (Phase.EXCHANGE, Phase.DECIDE)
"""Phases in which a card action marks a card to exchange (elsewhere outside the play it is a plain choice)."""

_ROLE_PATHS: dict[str, dict[Role, frozenset[Role]]] = {}
"""Per table (its config as JSON): the roles each role can still turn into later in a deal."""


class Inconsistent(Exception):
    """A determinization (or the replay of the public history) contradicts what the seat knows."""


class _Tape:
    """The skeleton's generator: it writes down every draw (``(kind, size, value)``, in order) so that a
    determinization can tell which chance outcomes its deal was replayed with (a reshuffle of the discards).

    A reshuffle's pool is the discard pile by card id (then any other card it takes, the classic trump
    card), so a relabelling of the cards changes which items its draw picks: the replay notes each
    reshuffle's outcome as the sequence of cards it stacked and its pool (``seqs``: ``(stacked, pool, m)``
    with the pile's ``m`` cards first, renamed with the skeleton's cards), and :meth:`chance_draws` turns
    those back into draws for any relabelling.
    A copy (``copy.deepcopy``, as ``Game.clone`` makes) carries its own generator and record; a probe of the
    replay gets a copy, so only the draws of the replayed line are on the record."""

    __slots__ = ("gen", "draws", "seqs", "broken")

    def __init__(self, gen: np.random.Generator, draws: list | None = None, seqs: dict | None = None,
                 broken: bool = False) -> None:
        self.gen = gen
        self.draws = [] if draws is None else draws
        self.seqs: dict[int, tuple[list[int], list[int], int]] = {} if seqs is None else seqs
        self.broken = broken

    def relabel(self, perm: list[int]) -> None:
        self.seqs = {i: ([perm[c] for c in seq], [perm[c] for c in pool], m)
                     for i, (seq, pool, m) in self.seqs.items()}

    def stacked_together(self, x: int, y: int) -> bool:
        """Whether one reshuffle stacked both cards."""
        return any(x in seq and y in seq for seq, _, _ in self.seqs.values())

    def trade(self, x: int, y: int) -> None:
        """Cards ``x`` and ``y`` trade places in the reshuffle that stacked both (else the record is broken)."""
        for seq, _, _ in self.seqs.values():
            if x in seq and y in seq:
                i, j = seq.index(x), seq.index(y)
                seq[i], seq[j] = y, x
                return
        self.broken = True

    def chance_draws(self, perm: list[int]) -> tuple[tuple, ...] | None:
        """The draws that stack each reshuffle's cards, relabelled by ``perm``, as the engine would (None when
        a reshuffle's cards were not noted)."""
        if self.broken:
            return None
        out: list[tuple] = []
        for i, (kind, size, value) in enumerate(self.draws):
            if kind == "permutation" and size > 1:
                noted = self.seqs.get(i)
                if noted is None:
                    return None
                seq, pool, m = noted
                pool = [*sorted(perm[c] for c in pool[:m]), *(perm[c] for c in pool[m:])]
                at = {c: r for r, c in enumerate(pool)}
                value = [at[perm[c]] for c in seq]
            out.append((kind, size, value))
        return tuple(out)

    def permutation(self, k: int) -> np.ndarray:
        out = self.gen.permutation(k)
        self.draws.append(("permutation", int(k), out.tolist()))
        return out

    def integers(self, n: int) -> int:
        out = int(self.gen.integers(n))
        self.draws.append(("integers", int(n), out))
        return out

    def __deepcopy__(self, memo: dict) -> _Tape:
        return _Tape(copy.deepcopy(self.gen, memo), list(self.draws),
                     {i: (list(q), list(p), m) for i, (q, p, m) in self.seqs.items()}, self.broken)


@dataclass(frozen=True)
class Determinization:
    """A determinized engine state and the chance draws its deal was replayed with.

    ``state.session.deals[-1]`` (the deal as dealt) and ``state.session.history`` (the deal's actions) name
    the real cards of this determinization; ``draws`` are the engine's random draws from the deal on, in
    order, as ``(kind, size, value)`` (``("permutation", k, [...])``: a reshuffle), or None where a reshuffle
    could not be told. Replaying the history on that deal with those draws reaches ``state``'s cards.
    """

    state: State
    draws: tuple[tuple, ...] | None


@dataclass
class _Skeleton:
    """The public history replayed on stand-in cards up to the current decision (one per decision)."""

    state: State
    forbid: dict[int, int] = field(default_factory=dict)
    """Card place (named by the stand-in card now in it) -> the real cards it cannot hold."""
    snaps: list[tuple[State, int, list[int]]] = field(default_factory=list)
    """``(state before, seat, actions)`` of other seats' public decisions, for the belief."""
    pile_mine: int = 0
    """Own discards still in the discard pile (a reshuffle returns the pile to the stock)."""
    known: int = 0
    """Cards whose place this seat knows (set at the end)."""
    hidden: list[int] = field(default_factory=list)

    def copy(self, g: Game) -> _Skeleton:
        return _Skeleton(g.clone(self.state), dict(self.forbid), list(self.snaps),
                         self.pile_mine)


def role_paths(game: Game, deals: int = 48) -> dict[Role, frozenset[Role]]:
    """Which roles each role can become later in the same deal, learnt from random play of ``game``'s engine."""
    key = game.config.to_json() if hasattr(game.config, "to_json") else repr(sorted(game.config.to_dict().items()))
    hit = _ROLE_PATHS.get(key)
    if hit is not None:
        return hit
    rng = np.random.default_rng(12345)
    after: dict[Role, set[Role]] = {r: {r} for r in Role}
    for _ in range(deals):
        st = game.new_session(rng)
        seen: list[list[Role]] = [[r] for r in st.deal.roles]
        deal_no = st.session.deals_started
        for _step in range(400):
            if st.phase is Phase.OVER:
                break
            legal = game.legal_actions(st)
            game.apply(st, legal[int(rng.integers(len(legal)))])
            if st.session.deals_started != deal_no:
                break
            for s, r in enumerate(st.deal.roles):
                if r is not seen[s][-1]:
                    seen[s].append(r)
        for path in seen:
            for i, r in enumerate(path):
                after[r].update(path[i:])
    out = {r: frozenset(v) for r, v in after.items()}
    _ROLE_PATHS[key] = out
    return out


def _remap_mask(mask: int, perm: list[int]) -> int:
    out = 0
    while mask:
        low = mask & -mask
        out |= 1 << perm[low.bit_length() - 1]
        mask ^= low
    return out


def _swap_cards(state: State, x: int, y: int, keep: int | None = None) -> None:
    """Exchange the places of cards ``x`` and ``y`` in every card field of ``state``'s deal.

    ``keep`` names a seat whose own discards record is left alone (it is what that seat saw).
    """
    d = state.deal
    both = (1 << x) | (1 << y)

    def flip(mask: int) -> int:
        return mask ^ both if (mask >> x & 1) != (mask >> y & 1) else mask

    for s in range(len(d.hands)):
        d.hands[s] = flip(d.hands[s])
        d.drawn[s] = flip(d.drawn[s])
        d.blind[s] = flip(d.blind[s])
        if s != keep:
            d.discards[s] = flip(d.discards[s])
    d.discard_pile = flip(d.discard_pile)
    d.dead = flip(d.dead)
    d.stock = [y if c == x else x if c == y else c for c in d.stock]


def _relabel_record(state: State, perm: list[int], n_cards: int) -> None:
    """Write the card relabelling ``perm`` through the record of ``state``'s deal: the deal as dealt
    (``session.deals[-1]``) and every card action of the history, so that they describe the relabelled cards.

    Only for a one-deal session (a determinization): its history is this deal's actions alone.
    """
    session = state.session
    spec = session.deals[-1]
    session.deals[-1] = DealSpec(tuple(tuple(perm[c] for c in hand) for hand in spec.hands),
                                 perm[spec.trump] if spec.trump >= 0 else spec.trump,
                                 tuple(perm[c] for c in spec.stock))
    session.history = [perm[a] if a < n_cards else a for a in session.history]
    if isinstance(session.rng, _Tape):
        session.rng.relabel(perm)


def _relabel(state: State, perm: list[int], keep: int) -> None:
    """Write the card relabelling ``perm`` through every card place of ``state``'s deal (not ``keep``'s discards)."""
    d = state.deal
    for s in range(len(d.hands)):
        d.hands[s] = _remap_mask(d.hands[s], perm)
        d.drawn[s] = _remap_mask(d.drawn[s], perm)
        d.blind[s] = _remap_mask(d.blind[s], perm)
        if s != keep:
            d.discards[s] = _remap_mask(d.discards[s], perm)
    d.discard_pile = _remap_mask(d.discard_pile, perm)
    d.dead = _remap_mask(d.dead, perm)
    d.stock = [perm[c] for c in d.stock]


def _has_start_hook(game: Game) -> bool:
    return any(type(h).start is not TrickHook.start for h in game.trick_hooks)


def _memory_of(agent: Agent) -> tuple:
    """What an agent carries from one decision to the next: its generator's state (None before its first
    draw), the seed a first draw would build it from, and a scripted agent's exchange plan (:func:`_plan_of`)."""
    rng = agent._rng
    return (None if rng is None else rng.bit_generator.state, agent._rng_seed, copy.deepcopy(_plan_of(agent)))


def _plan_of(agent: Agent) -> tuple | None:
    """A scripted agent's exchange plan: its strategy's ``_plan``, the rest of an exchange chosen at its first
    mark, which its next decision follows if that decision is in the exchange with the planned hand."""
    return getattr(getattr(agent, "_brain", None), "_plan", None)


def _plan_applies(plan: tuple | None, check: tuple[bool, int]) -> bool:
    """Whether ``plan`` steers a decision that its strategy's ``plan_check`` described (see
    ``TrickStrategy._decide``): one in the exchange, with the planned hand."""
    return plan is not None and check[0] and check[1] == plan[0]


def _restore(agent: Agent, memory: tuple) -> None:
    """Put back a :func:`_memory_of` (copies: the kept one stays as it was)."""
    state, seed, plan = memory
    agent._rng_seed = seed
    if state is None:
        agent._rng = None
    else:
        if agent._rng is None:
            agent._rng = np.random.default_rng(0)
        agent._rng.bit_generator.state = copy.deepcopy(state)
    _set_plan(agent, plan)


def _set_plan(agent: Agent, plan: tuple | None) -> None:
    """Give a scripted agent's strategy the exchange plan ``plan`` (a copy); nothing for other agents."""
    brain = getattr(agent, "_brain", None)
    if brain is not None and hasattr(brain, "_plan"):
        brain._plan = copy.deepcopy(plan)


def _digest(memory: tuple, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> bytes:
    """A digest (SHA-256) of an agent's memory and a seat's view: the key of a kept decision. The memory and the
    info are serialised by :mod:`marshal` (plain values: numbers, text, lists, tuples, dicts), else by ``repr``
    (two serialisations of one value can only miss a kept decision, never confuse two)."""
    try:
        head = b"m" + marshal.dumps((memory, tuple(info.items())))
    except ValueError:
        head = b"r" + repr((memory, tuple(info.items()))).encode()
    h = hashlib.sha256(head)
    h.update(np.ascontiguousarray(observation).tobytes())
    h.update(np.ascontiguousarray(action_mask).tobytes())
    return h.digest()


class PIMCAgent(Agent):
    """Determinized search; see the module docstring."""

    name = "pimc"
    reference = True
    param_help = {"model": "'expert', 'learned' (the policy shipped for the table) or a learned checkpoint (a "
                           "policy file, a run directory or a shipped policy name)"}
    memo_size: ClassVar[int] = 1024
    """How many decisions are kept to be replayed (0: none); see :meth:`act`."""

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
        restarts: int = 16,
        model: str = "expert",
    ) -> None:
        super().__init__(seed)
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model={model!r} is not allowed; allowed: {self.param_help['model']}")
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
        if not isinstance(restarts, int) or isinstance(restarts, bool) or restarts < 1:
            raise ValueError(f"restarts={restarts!r} is not allowed; allowed: a whole number >= 1")
        self.restarts = restarts
        self.rollout_search = bool(rollout_search)
        chosen = set(SEARCH_PHASES) if phases == "all" else {p.strip() for p in str(phases).replace("+", ",").split(",")}
        if not chosen or not chosen <= set(SEARCH_PHASES):
            raise ValueError(f"phases={phases!r} is not allowed; allowed: 'all' or names from {', '.join(SEARCH_PHASES)} "
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
            "restarts": restarts,
            "model": model,
        }
        self.model = model
        self._learned_base: Agent | None = None
        if model != "expert":  # read the checkpoint now, so that a bad one is refused when the agent is built
            self._learned_base = self._learned(seed)
        self._plan: tuple[int, list[int]] | None = None
        self._memo: OrderedDict[bytes, tuple[int, tuple, dict[str, int], tuple]] = OrderedDict()
        self.stats = {"decisions": 0, "searched": 0, "fallbacks": 0, "samples": 0, "rejected": 0,
                      "inconsistent": 0, "switched": 0}
        """``rejected``: candidate deals the belief turned down; ``inconsistent``: deals the replay refused."""

    # ------------------------------------------------------------------ lifecycle
    def setup(self, game: Game, seat: int) -> None:
        same = self.game is game
        super().setup(game, seat)
        if not (same and hasattr(self, "_reader")):
            self._memo.clear()
            self._fallback = ExpertAgent(risk=self.model_risk)
            self._reader = KnowledgeReader(game)
            options = dict(game.config.to_dict())
            ruleset, n = options.pop("ruleset"), options.pop("num_players")
            options["max_deals"] = 1  # a determinized session is one deal
            self._view = EnvView(make_config(ruleset, n, **options))
            self._sgame = self._view.game
            self._sobserver = Observer(self._sgame)
            base = None if self.seed is None else int(np.random.SeedSequence([self.seed, 17]).generate_state(1)[0])
            self._models = [self._model_player(None if base is None else base + s) for s in range(n)]
            for s, model in enumerate(self._models):
                model.setup(self._sgame, s)
            names = set(self._sobserver.by_name)
            self._record = [p for p in RECORD_PIECES if p in names]
            self._real_slices = {p: self._reader.observer.slice(p) for p in self._record}
            self._sk_slices = {p: self._sobserver.slice(p) for p in self._record}
            self._role_shape = self._sobserver.by_name["roles"].shape
            self._roles_of = tuple(Role[name.upper()] for name in game.config.spec.roles)
            self._paths = role_paths(self._sgame)
            self._phase_of = {name: Phase[name.upper()] for name in game.config.spec.phases}
            self._restart_hooks = _has_start_hook(self._sgame)
            self._sensitive: dict[int, tuple[int, tuple[str, ...]]] = {}
            self._rng0 = np.random.default_rng(0)
            self._rng0_state = self._rng0.bit_generator.state
            self._supported = True
        self._fallback.setup(game, seat)
        if self._learned_base is not None:
            self._learned_base.setup(game, seat)

    def _learned(self, seed: int | None) -> Agent:
        from agents.learned import LearnedAgent  # torch is needed only for a learned model

        return LearnedAgent(seed=seed, checkpoint=None if self.model == "learned" else self.model)

    def _model_player(self, seed: int | None) -> Agent:
        """One seat's model player in the search: the ``expert`` or the learned policy of ``model``."""
        if self.model == "expert":
            return ExpertAgent(seed=seed, risk=self.model_risk)
        return self._learned(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._fallback.reset(seed)
        if self._learned_base is not None:
            self._learned_base.reset(seed)
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
        if self.time_limit is not None or self.memo_size < 1:  # a decision under a clock is not replayed
            return self._decide(observation, action_mask, info, legal)
        holders = self._holders()
        plans = [_plan_of(agent) for agent in holders]
        key = self._memo_key(observation, action_mask, info)
        hit = self._memo.get(key)
        if hit is not None and self._replayable(hit[3], plans):
            self._memo.move_to_end(key)
            action, memory, work, steered = hit
            self._remember(memory)
            for agent, plan, (check, _) in zip(holders, plans, steered):
                if check is None:  # this agent did not decide in the search: its plan stays as it is
                    _set_plan(agent, plan)
            for name, count in work.items():
                self.stats[name] += count
            return action
        before = dict(self.stats)
        brains = [agent._brain if hasattr(getattr(agent, "_brain", None), "plan_check") else None
                  for agent in holders]
        for brain in brains:
            if brain is not None:
                brain.plan_check = []
        try:
            action = self._decide(observation, action_mask, info, legal)
        finally:
            checks = [None if brain is None else (brain.plan_check or [None])[0] for brain in brains]
            for brain in brains:
                if brain is not None:
                    brain.plan_check = None
        steered = tuple((check, None if check is None or not _plan_applies(plan, check) else copy.deepcopy(plan))
                        for check, plan in zip(checks, plans))
        self._memo[key] = (action, self._memory(), {name: self.stats[name] - before[name] for name in before},
                           steered)
        if len(self._memo) > self.memo_size:
            self._memo.popitem(last=False)
        return action

    # ------------------------------------------------------------------ replayed decisions
    def _holders(self) -> list[Agent]:
        """The agents whose generators and plans the search carries from one decision to the next."""
        return [self, self._fallback, *([self._learned_base] if self._learned_base is not None else []),
                *self._models]

    def _memory(self) -> tuple:
        """Everything a decision can change that a later one reads: this agent's exchange plan and the
        :func:`_memory_of` this agent and each of its inner agents. The search's other fields are caches of
        the rules (the same whatever they hold) or are rebuilt within each decision."""
        return (copy.deepcopy(self._plan), *(_memory_of(agent) for agent in self._holders()))

    def _remember(self, memory: tuple) -> None:
        """Put back a :meth:`_memory`."""
        self._plan = copy.deepcopy(memory[0])
        for agent, kept in zip(self._holders(), memory[1:]):
            _restore(agent, kept)

    def _memo_key(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> bytes:
        """A digest of what a decision depends on: the seat, the :meth:`_memory` without the inner agents'
        exchange plans, and the seat's view. The plans are checked apart (:meth:`_replayable`): a plan left by
        an earlier search steers this one only where an agent's first decision in it is in the exchange with
        the planned hand, which in most searches no agent's is."""
        memory = self._memory()
        keyed = (memory[0], *((rng, seed, None) for rng, seed, _ in memory[1:]))
        return _digest((self.seat, keyed), observation, action_mask, info)

    @staticmethod
    def _replayable(steered: tuple, plans: list) -> bool:
        """Whether a kept decision holds for the inner agents' exchange plans ``plans``. ``steered`` has, for
        each agent, what its first decision in the kept search was (None: it made none) and the plan that
        steered it (None: none did). The search runs the same as long as each agent's first decision is
        steered by the same plan or, as before, by none; an agent that made no decision never read its plan."""
        for (check, used), plan in zip(steered, plans):
            if check is None:
                continue
            if _plan_applies(plan, check) if used is None else plan != used:
                return False
        return True

    def _decide(self, observation: np.ndarray, action_mask: np.ndarray, info: Info, legal: list[int]) -> int:
        """The search's decision where there is a choice (see the module docstring)."""
        self.stats["decisions"] += 1
        default = (self._learned_base or self._fallback).act(observation, action_mask, info)
        phase = info.get("phase")
        if phase not in self._phase_of or phase not in self._search_phases:
            return default
        k = self._reader.read(observation, info, self.seat, action_mask)
        planned = self._planned(k, legal)
        if planned is not None:
            return planned
        try:
            sk = self._skeleton(k, observation, info)
        except (Inconsistent, MauschelnError):
            self.stats["fallbacks"] += 1
            return default
        values: list[list[float]] = []  # per sample: the value of each option
        weights: list[float] = []
        options: list[list[int]] | None = None
        base = 0
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
                state, weight, _ = self._sample(k, sk)
            except Inconsistent:
                continue
            if options is None:
                options, base = self._options(k, legal, default, state)
                if len(options) == 1:
                    return options[0][0]
            weights.append(weight)
            # Options of the card play share the trick search's tables: their children are positions of one deal.
            shared: dict | None = {} if state.phase is Phase.PLAY else None
            values.append([self._value(state, option, shared) for option in options])
        self.stats["samples"] += len(values)
        if not values or sum(weights) <= 0.0 or options is None:
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
        """Whether the search can determinize this table (every ruleset and option set; see the module docstring)."""
        return self._supported

    def supports(self, game: Game) -> bool:
        """The search plays only the tables it can determinize; elsewhere it is its expert fallback."""
        return super().supports(game) and self.determinizes

    def determinize(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> State:
        """One engine state at this decision whose hidden cards are drawn from the agent's belief.

        Consistent with everything the seat knows (its observation and info),
        drawn with the agent's own generator: a one-deal session with the
        table's chips and pot at the current decision. Its record names the real
        cards: ``session.deals[-1]`` is the deal as dealt and ``session.history``
        the deal's actions (the other seats' hidden choices as this determinization
        has them), so that replaying them, with the chance draws of
        :meth:`determinization`, reaches this state. Raises :class:`Inconsistent`
        when no consistent deal was found (draw again).
        """
        return self.determinization(observation, action_mask, info).state

    def determinization(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> Determinization:
        """:meth:`determinize` with the chance draws (reshuffles) the determinized deal was replayed with."""
        if self.game is None:
            raise ValueError("pimc: call setup(game, seat) before determinize()")
        k = self._reader.read(observation, info, self.seat, action_mask)
        try:
            sk = self._skeleton(k, observation, info)
        except MauschelnError as exc:
            raise Inconsistent(str(exc)) from exc
        # Cards the seat has seen keep their names wherever a reshuffle took them (own discards, the trump card:
        # the record shows them); one whose place excludes it trades places in its reshuffle with a card that
        # may stand there.
        tape = sk.state.session.rng
        named = self._named(k, sk)
        for x in [c for c in sk.hidden if named >> c & 1 and sk.forbid.get(c, 0) >> c & 1]:
            if isinstance(tape, _Tape):
                y = next((c for c in sk.hidden if not named >> c & 1 and tape.stacked_together(x, c)
                          and not sk.forbid.get(c, 0) >> x & 1), None)
                if y is not None:
                    self._trade(k, sk, x, y, rename=False)
        sk.hidden = [c for c in sk.hidden if not named >> c & 1]
        state, _, perm = self._sample(k, sk, record=True)
        tape = sk.state.session.rng
        return Determinization(state, tape.chance_draws(perm) if isinstance(tape, _Tape) else None)

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
        # An option the engine refused in a determinization scores -inf there: another option is compared with
        # ``base`` over the determinizations where ``base`` was played out (an infinite difference has no mean), and
        # an option refused in any of them is never switched to.
        w = np.where(np.isfinite(v[:, base]), np.asarray(weights, dtype=float), 0.0)
        total = float(w.sum())
        if total <= 0.0:
            return base if final else None
        n_eff = total * total / float(w @ w)
        best, best_mean, best_se, open_race = base, 0.0, 0.0, False
        for o in range(v.shape[1]):
            if o == base or not np.isfinite(v[:, o]).all():
                continue
            diff = np.where(w > 0.0, v[:, o] - np.where(np.isfinite(v[:, base]), v[:, base], 0.0), 0.0)
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

    def _options(self, k: Knowledge, legal: list[int], default: int,
                 state: State) -> tuple[list[list[int]], int]:
        """What to score, and which option is the model player's own choice.

        In the card play and in plain choices: each legal action. Where a card
        marks a card to exchange (an exchange, or an exchange started while
        deciding) scoring marks one by one would judge a half-made exchange; so
        the agent scores whole discard sets, each as its marks followed by
        ``done`` — the j weakest cards of the hand for every j (card strength
        from the engine's trick tables) and the model player's own set — besides
        the other legal actions (stay, pass, done, ...). The engine rejects a set
        larger than the stock allows (scored -inf).
        """
        g = self.game
        N = g.num_cards
        phase = self._phase_of[k.phase]
        cards = [a for a in legal if a < N]
        if phase not in _MARK_PHASES or not cards:
            options = [[a] for a in legal]
            return options, next((i for i, o in enumerate(options) if o[0] == default), 0)
        strategy = self._fallback.strategy
        order = sorted(cards, key=lambda c: (strategy.power(k, c), c))
        options = [[a] for a in legal if a >= N]
        options += [[*order[:j], g.DONE] for j in range(1, len(order) + 1)]
        if default >= N:
            return options, next((i for i, o in enumerate(options) if o == [default]), 0)
        own = self._model_marks(state, default)
        mine = [*own, g.DONE]
        for i, o in enumerate(options):
            if o[-1] == g.DONE and sorted(o[:-1]) == sorted(own):
                options[i] = mine
                return options, i
        options.append(mine)
        return options, len(options) - 1

    def _model_marks(self, state: State, first: int) -> list[int]:
        """The whole discard set the model player makes from ``state`` when its first mark is ``first``."""
        g = self._sgame
        me = self.seat
        probe = g.clone(state, rng=state.rng)
        view = self._view
        view.bind(probe)
        marks = [first]
        g.apply(probe, first)
        model = self._models[me]
        while probe.to_act == me and probe.phase in _MARK_PHASES and len(marks) < g.hand_size:
            view.refresh()
            obs, mask, info = view.seat_view(me)
            a = model.act(obs, mask, info)
            if a >= g.num_cards:
                break
            g.apply(probe, a)
            marks.append(a)
        return marks

    def _planned(self, k: Knowledge, legal: list[int]) -> int | None:
        """The next step of an exchange plan chosen at an earlier mark, if it still fits."""
        plan = self._plan
        if self._phase_of.get(k.phase) not in _MARK_PHASES or plan is None:
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

    # ------------------------------------------------------------------ the skeleton
    def _signature(self, state: State) -> dict[str, np.ndarray]:
        enc = self._sobserver.encode(state, self.seat)
        return {p: enc[sl] for p, sl in self._sk_slices.items()}

    def _compatible(self, before: dict, after: dict, target: dict) -> int | None:
        """How many record entries a candidate set, or None if one contradicts the seat's record."""
        score = 0
        for p, new in after.items():
            old = before[p]
            changed = new != old
            if not changed.any():
                continue
            if p == "roles":
                rows_new = new.reshape(self._role_shape)
                rows_tgt = target[p].reshape(self._role_shape)
                for r in np.flatnonzero(changed.reshape(self._role_shape).any(axis=1)).tolist():
                    now = self._roles_of[int(rows_new[r].argmax())]
                    want = self._roles_of[int(rows_tgt[r].argmax())]
                    if want not in self._paths[now]:
                        return None
                    score += 1
                continue
            if not np.array_equal(new[changed], target[p][changed]):
                return None
            score += int(changed.sum())
        return score

    def _skeleton(self, k: Knowledge, obs: np.ndarray, info: Info) -> _Skeleton:
        """Replay the public history on stand-in cards to the current decision (see the module docstring).

        Where a question goes to the seat holding some card (the Pamphile's
        announcement), the stand-ins decide who is asked; so a replay that
        cannot reach the record is retried on other stand-in deals (``restarts``
        in all, each from its own fixed seed: the skeleton depends on the
        observation alone).
        """
        if k.trump_card < 0:
            raise Inconsistent("no cards are dealt yet (the deal is offered)")
        target = {p: obs[sl] for p, sl in self._real_slices.items()}
        error: Exception | None = None
        for attempt in range(self.restarts):
            try:
                # Every other attempt pays the stakes again (from a pot less one stake): stake stages that decide
                # more than money (the classic forced knock on a new pot) then run as they did.
                state = self._stand_in_state(k, info, attempt // 2, ante=attempt % 2 == 1)
                sk = self._walk(k, target, _Skeleton(state), [8 * self._sgame.num_cards + 64])
                self._finish(k, sk, info)
                return sk
            except (Inconsistent, MauschelnError) as exc:
                error = exc
        raise Inconsistent(f"no replay reached the decision: {error}")

    def _stand_in_state(self, k: Knowledge, info: Info, attempt: int, ante: bool = False) -> State:
        """A one-deal session with this seat's own dealt cards (as far as it knows them) and stand-ins elsewhere."""
        g = self._sgame
        me = k.seat
        n, N, H = g.n, g.num_cards, g.hand_size
        trump = k.trump_card
        mine = (k.hand | k.played_by(me) | k.discards) & ~k.drawn & ~(1 << trump)
        own = list(iter_bits(mine))[:H]
        used = set(own) | {trump}
        rest = [c for c in range(N) if c not in used]
        rest = [rest[i] for i in np.random.default_rng(attempt).permutation(len(rest))]
        hands: list[tuple[int, ...]] = []
        for s in range(n):
            if not k.live[s]:
                hands.append(())
                continue
            cards = own if s == me else []
            while len(cards) < H:
                cards.append(rest.pop())
            hands.append(tuple(cards))
        spec = DealSpec(tuple(hands), trump, tuple(rest))
        scores = info.get("scores")
        pot = max(0, k.pot - g.stake) if ante else k.pot
        return g.new_session(_Tape(np.random.default_rng(attempt)), dealer=k.dealer, chips=k.chips, pot=pot,
                             alive=k.live, deal=spec, ante=ante, **({"scores": scores} if scores is not None else {}))

    def _pinned(self, k: Knowledge, sk: _Skeleton, seat: int) -> int:
        """Cards of ``seat``'s hand whose place must not change: the own hand, the trump card a seat took."""
        d = sk.state.deal
        pinned = k.hand if seat == k.seat else 0
        if d.trump_holder is not None:
            pinned |= 1 << d.trump_card
        return pinned

    @staticmethod
    def _named(k: Knowledge, sk: _Skeleton) -> int:
        """Cards whose names the record already holds: the seat's discards so far and the trump card."""
        d = sk.state.deal
        return d.discards[k.seat] | 1 << d.trump_card

    def _relocate(self, k: Knowledge, sk: _Skeleton, card: int, seat: int) -> None:
        """Put the real ``card`` into ``seat``'s hand of the skeleton by trading places with a stand-in there."""
        d = sk.state.deal
        if d.hands[seat] >> card & 1:
            return
        named = self._named(k, sk)
        free = d.hands[seat] & ~d.blind[seat] & ~self._pinned(k, sk, seat)
        # not a card whose name is on the record (an own discard or the trump card come back in a reshuffle)
        free &= ~(k.discards | named) if seat == k.seat else ~named
        if not free:
            free = d.hands[seat] & ~self._pinned(k, sk, seat)
        if not free:
            raise Inconsistent("no stand-in card to trade")
        ys = list(iter_bits(free))
        if seat == k.seat:  # a drawn card takes the place of a drawn stand-in (the own draws stay right)
            drawn = d.drawn[seat]
            want = k.drawn >> card & 1
            ys.sort(key=lambda c: (drawn >> c & 1) != want)
        # A card whose name is on the record (an own discard or the trump card come back through a reshuffle)
        # keeps it: the two cards trade places in the reshuffle's stack instead, so a stand-in stacked with it
        # is taken.
        thrown = bool(named >> card & 1)
        tape = sk.state.session.rng
        if thrown and isinstance(tape, _Tape):
            ys = [c for c in ys if tape.stacked_together(card, c)] or ys
        y = next((c for c in ys if not sk.forbid.get(c, 0) >> card & 1), ys[0])
        self._trade(k, sk, card, y, rename=not (thrown or named >> y & 1))

    def _trade(self, k: Knowledge, sk: _Skeleton, card: int, y: int, rename: bool) -> None:
        """Cards ``card`` and ``y`` trade places in the skeleton (the constraints stay with the places).

        ``rename``: the two names are exchanged from the start of the deal (the deal as dealt and the history
        follow); else the two cards trade places in the reshuffle that stacked both (an own discard keeps its
        name on the record)."""
        for st in [sk.state, *(snap for snap, _, _ in sk.snaps)]:
            _swap_cards(st, card, y, keep=k.seat)
        tape = sk.state.session.rng
        if rename:
            swap = list(range(self._sgame.num_cards))
            swap[card], swap[y] = y, card
            _relabel_record(sk.state, swap, self._sgame.num_cards)
        elif isinstance(tape, _Tape):
            tape.trade(card, y)
        fx, fy = sk.forbid.pop(card, 0), sk.forbid.pop(y, 0)
        if fy:
            sk.forbid[card] = fy
        if fx:
            sk.forbid[y] = fx

    def _apply(self, sk: _Skeleton, action: int) -> None:
        st = sk.state
        tape = st.session.rng
        mark = len(tape.draws) if isinstance(tape, _Tape) else -1
        drawn, stock, pile = [*st.deal.drawn, *st.deal.hands], list(st.deal.stock), st.deal.discard_pile
        try:
            results = self._sgame.apply(st, action)
        except MauschelnError as exc:
            raise Inconsistent(str(exc)) from exc
        if results:
            raise Inconsistent("the deal ended during the replay")
        sk.pile_mine &= sk.state.deal.discard_pile
        if 0 <= mark < len(tape.draws):
            self._note_reshuffle(sk.state, tape, mark, drawn, stock, pile)

    @staticmethod
    def _note_reshuffle(st: State, tape: _Tape, mark: int, drawn: list[int], stock: list[int], pile: int) -> None:
        """Note the cards a reshuffle during the last action stacked: the stock left after it, under the cards
        drawn from it (those that entered a hand or a seat's drawn cards in the action and were not in the stock
        before; ``drawn``: the drawn cards and the hands by seat before it; the stock is drawn from its end, and
        the order of the cards one seat draws at once tells nothing), and the pool the draw ordered: the cards
        of the discard pile before the action, by card id, then the others)."""
        new = [i for i in range(mark, len(tape.draws)) if tape.draws[i][0] == "permutation" and tape.draws[i][1] > 1]
        if len(new) != 1:
            return  # several reshuffles in one action: not told apart (the determinization's draws are None)
        old = 0
        for c in stock:
            old |= 1 << c
        gained = 0
        for before, after in zip(drawn, [*st.deal.drawn, *st.deal.hands]):
            gained |= after & ~before
        seq = [*st.deal.stock, *iter_bits(gained & ~old)]
        size = tape.draws[new[0]][1]
        if len(seq) != size or len(set(seq)) != size:
            return
        piled = sorted(c for c in seq if pile >> c & 1)
        tape.seqs[new[0]] = (seq, [*piled, *(c for c in seq if not pile >> c & 1)], len(piled))

    def _walk(self, k: Knowledge, target: dict, sk: _Skeleton, budget: list[int]) -> _Skeleton:
        g = self._sgame
        me = k.seat
        while True:
            budget[0] -= 1
            if budget[0] < 0:
                raise Inconsistent("the replay did not reach the current decision")
            st = sk.state
            if st.phase is Phase.OVER:
                raise Inconsistent("the replay ended the deal")
            seat = st.to_act
            if st.phase is Phase.PLAY:
                t = len(st.deal.tricks)
                card = k.trick_cards[t][seat] if t < len(k.trick_cards) else None
                if card is None:
                    if seat == me and self._at_target(k, target, sk):
                        return sk
                    raise Inconsistent("the replay stopped at another seat's play")
                self._play(k, sk, seat, card)
                continue
            if seat == me and self._at_target(k, target, sk):
                return sk
            cands = self._candidates(k, target, sk, seat)
            if not cands:
                raise Inconsistent(f"no action of seat {seat} fits the record")
            if len(cands) == 1:
                self._do(k, sk, seat, cands[0])
                continue
            for i, acts in enumerate(cands):
                branch = sk if i == len(cands) - 1 else sk.copy(g)
                try:
                    self._do(k, branch, seat, acts)
                    return self._walk(k, target, branch, budget)
                except Inconsistent:
                    if i == len(cands) - 1:
                        raise
            raise Inconsistent("unreachable")  # pragma: no cover

    def _marks(self, k: Knowledge, st: State, seat: int) -> list[int] | None:
        """The marks (and ``done``) of ``seat``'s exchange as its record shows them, or None.

        A later exchange turn of a seat whose count is already on record, or a
        turn with no count on record that must discard (the classic knocker's
        last discard, the forced knock's one card), marks what the engine
        requires, then ``done``.
        """
        g = self._sgame
        me = k.seat
        d = st.deal
        want = k.exchanged[seat]
        pinned = self._pinned(k, _Skeleton(st), seat)
        pending: list[int] = []
        if seat == me:  # own discards not yet marked, those in hand first (a later turn may throw a new card)
            left = k.discards & ~d.discards[me]
            pending = [*iter_bits(left & d.hands[me]), *iter_bits(left & ~d.hands[me])]
        if d.exchanged[seat] is not None or (want is None and st.phase is Phase.EXCHANGE
                                             and g.DONE not in g.legal_actions(st)):
            return self._forced_marks(st, seat, pending if seat == me else None, pinned)
        if seat == me:
            if want is None:
                return pending or None
            need = want - (d.marked if st.phase is Phase.EXCHANGE else 0)
            if need <= 0 or len(pending) < need:
                return None
            return [*pending[:need], g.DONE]
        if want is None:
            return None
        need = want - (d.marked if st.phase is Phase.EXCHANGE else 0)
        if need <= 0:
            return None
        free = [c for c in iter_bits(d.hands[seat] & ~d.blind[seat] & ~pinned)]
        if len(free) < need:
            return None
        return [*free[:need], g.DONE]

    def _forced_marks(self, st: State, seat: int, pending: list[int] | None, pinned: int) -> list[int] | None:
        """Marks while ``done`` is not yet legal (from ``pending``, else any free card), then ``done``."""
        g = self._sgame
        probe = g.clone(st)  # its own copy of the generator: a probe's draws stay off the skeleton's record
        acts: list[int] = []
        while probe.to_act == seat and probe.phase in _MARK_PHASES and len(acts) <= g.hand_size:
            legal = g.legal_actions(probe)
            if g.DONE in legal:
                return [*acts, g.DONE]
            if pending is not None:
                if not pending:
                    return acts or None
                c = pending.pop(0)
                if c not in legal:
                    return None
            else:
                c = next((a for a in legal if a < g.num_cards and not pinned >> a & 1), None)
                if c is None:
                    return None
            g.apply(probe, c)
            acts.append(c)
        return acts or None

    def _candidates(self, k: Knowledge, target: dict, sk: _Skeleton, seat: int) -> list[list[int]]:
        """The action sequences of ``seat`` at this question that agree with the record, likeliest first."""
        g = self._sgame
        me = k.seat
        N = g.num_cards
        st = sk.state
        legal = g.legal_actions(st)
        cards = [a for a in legal if a < N]
        named = [a for a in legal if a >= N]
        trials: list[list[int]] = []
        if cards and st.phase not in _MARK_PHASES:  # a plain choice of a card (Béatrix's swap)
            if seat == me:
                left = [c for c in iter_bits(k.discards & ~st.deal.discards[me]) if c in cards]
                trials = [[left[0]]] if left else []
            else:
                pinned = self._pinned(k, sk, seat)
                trials = [[next((c for c in cards if not pinned >> c & 1), cards[0])]]
        else:
            trials = [[a] for a in named]
            if cards:
                macro = self._marks(k, st, seat)
                if macro is None and seat == me and st.deal.exchanged[me] is not None:
                    # a later turn of the own exchange (the classic knocker's last discard) throws a card the
                    # stand-in draws did not bring: bring the recorded discards into the stand-in hand, then mark
                    for c in iter_bits(k.discards & ~st.deal.discards[me] & ~st.deal.hands[me]):
                        self._relocate(k, sk, c, me)
                    st = sk.state
                    macro = self._marks(k, st, seat)
                if macro:
                    if seat == me:  # own discards to throw: bring them into the stand-in hand first
                        for c in macro:
                            if c < N:
                                self._relocate(k, sk, c, me)
                        st = sk.state
                    trials.append(macro)
        before = self._signature(st)
        scored: list[tuple[int, int, list[int]]] = []
        for i, acts in enumerate(trials):
            probe = g.clone(st)  # its own copy of the generator (see _Tape)
            try:
                for a in acts:
                    if g.apply(probe, a):
                        raise Inconsistent("ended")
            except (MauschelnError, Inconsistent):
                continue
            if probe.phase is Phase.OVER:
                continue
            score = self._compatible(before, self._signature(probe), target)
            if score is not None:
                scored.append((-score, i, acts))
        scored.sort(key=lambda x: (x[0], x[1]))
        return [acts for _, _, acts in scored]

    def _do(self, k: Knowledge, sk: _Skeleton, seat: int, acts: list[int]) -> None:
        g = self._sgame
        me = k.seat
        st = sk.state
        if seat != me:
            sk.snaps.append((g.clone(st, rng=st.rng), seat, list(acts)))
            if acts[0] >= g.num_cards:
                self._decision_exclusions(k, sk, seat, acts[0])
        for a in acts:
            if seat == me and a < g.num_cards:
                self._relocate(k, sk, a, me)
            self._apply(sk, a)
            if seat == me and a < g.num_cards:
                sk.pile_mine |= (1 << a) & sk.state.deal.discard_pile

    def _decision_exclusions(self, k: Knowledge, sk: _Skeleton, seat: int, action: int) -> None:
        """Cards whose holding would have made ``seat``'s ``action`` illegal: its hand then held none of them."""
        g = self._sgame
        st = sk.state
        hand = st.deal.hands[seat]
        unknown = g.deck.full_mask & ~(k.hand | k.played | k.discards | (1 << k.trump_card) | hand)
        if not unknown or action in g.legal_actions(g.with_hand(st, seat, hand | unknown)):
            return
        bad = 0
        for c in iter_bits(unknown):
            if action not in g.legal_actions(g.with_hand(st, seat, hand | 1 << c)):
                bad |= 1 << c
        for x in iter_bits(hand):
            sk.forbid[x] = sk.forbid.get(x, 0) | bad

    def _play(self, k: Knowledge, sk: _Skeleton, seat: int, card: int) -> None:
        """Replay ``seat``'s recorded ``card``: bring it into the hand, note what the play reveals, play it."""
        g = self._sgame
        self._relocate(k, sk, card, seat)
        st = sk.state
        d = st.deal
        hand = d.hands[seat]
        if seat != k.seat and d.trick:
            bad = self._excluded(st, card)
            if bad:
                for x in iter_bits(hand & ~(1 << card)):
                    sk.forbid[x] = sk.forbid.get(x, 0) | bad
        sk.state = g.with_hand(st, seat, 1 << card)  # the play is legal whatever the stand-ins
        self._apply(sk, card)
        sk.state.deal.hands[seat] = hand & ~(1 << card)

    def _excluded(self, state: State, card: int) -> int:
        """Cards that, held beside ``card``, would have made ``card`` illegal for the seat to act here."""
        g = self._sgame
        bit = 1 << card
        excluded = 0
        for c in range(g.num_cards):
            if c != card and not g.legal_play_mask(state, hand=bit | (1 << c)) & bit:
                excluded |= 1 << c
        return excluded

    def _at_target(self, k: Knowledge, target: dict, sk: _Skeleton) -> bool:
        """Whether the skeleton stands at this seat's current decision with this seat's record."""
        st = sk.state
        if st.to_act != k.seat or st.phase is not self._phase_of.get(k.phase):
            return False
        if st.deal.discards[k.seat] != k.discards or len(st.deal.tricks) != k.tricks_done:
            return False
        sig = self._signature(st)
        return all(np.array_equal(sig[p], target[p]) for p in sig)

    def _finish(self, k: Knowledge, sk: _Skeleton, info: Info) -> None:
        """Own cards to their real places, the public money, and the list of hidden cards."""
        g = self._sgame
        me = k.seat
        st = sk.state
        d = st.deal
        for c in iter_bits(k.hand & ~d.hands[me]):
            self._relocate(k, sk, c, me)
        d = sk.state.deal
        if g.visible_hand(sk.state, me) != k.hand:
            raise Inconsistent("own hand differs")
        session = sk.state.session
        session.chips = list(k.chips)
        session.pot = k.pot
        session.total = sum(session.chips) + session.pot + session.reserve + sum(session.escrow)
        known = k.hand | k.played | sk.pile_mine
        if d.trump_face_up or d.trump_holder is not None:
            known |= 1 << d.trump_card
        if "revealed" in self._reader.observer.by_name:
            known |= getattr(d, "revealed", 0)
        sk.known = known
        sk.hidden = list(iter_bits(g.deck.full_mask & ~known))
        sk.forbid = {x: f & ~known for x, f in sk.forbid.items() if not known >> x & 1 and f & ~known}

    # ------------------------------------------------------------------ sampling
    def _sample(self, k: Knowledge, sk: _Skeleton, record: bool = False) -> tuple[State, float, list[int]]:
        """One determinization drawn from the belief: rejection sampling on the model's likelihood.

        A candidate deal whose public decisions score likelihood ``w`` (out of
        the most they could score, ``(1 - epsilon) ** m`` for ``m`` judged
        decisions) is accepted with probability ``w / max``, judged decision by
        decision (a decision the model disagrees with keeps the candidate with
        probability ``epsilon / (1 - epsilon)``, so a rejected candidate costs
        only the decisions up to the first refusal); after ``max_tries``
        candidates the likeliest one is taken. Accepted samples weigh the same. Returns the state, its
        weight and the relabelling. ``record``: relabel the deal as dealt and the history too (see
        :meth:`determinize`).
        """
        refused: list[tuple[list[int], float, int]] = []
        for _ in range(self.max_tries):
            try:
                perm = self._relabelling(sk)
            except Inconsistent:
                self.stats["inconsistent"] += 1
                continue
            accepted, weight, judged = self._judge(k, sk, perm)
            if accepted:
                return self._relabelled(k, sk, perm, record), 1.0, perm
            self.stats["rejected"] += 1
            refused.append((perm, weight, judged))
        if not refused:
            raise Inconsistent("no determinization could be built")
        # every try refused: the likeliest over all the public decisions (the refused are judged to the end)
        best = max(refused, key=lambda r: r[1] * self._judge(k, sk, r[0], start=r[2])[1])[0]
        return self._relabelled(k, sk, best, record), 1.0, best

    def _judge(self, k: Knowledge, sk: _Skeleton, perm: list[int], start: int = 0) -> tuple[bool, float, int]:
        """Whether the belief keeps the relabelling ``perm``, the likelihood of the public decisions judged,
        and how many were judged (from decision ``start`` on).

        Each decision the model disagrees with keeps the candidate with probability ``epsilon / (1 - epsilon)``;
        judging stops at the first refusal. With ``start`` > 0 (finishing a refused candidate, for the choice
        among refused ones) every later decision is judged and nothing is drawn."""
        if self.belief != "expert" or not sk.snaps:
            return True, 1.0, 0
        g = self._sgame
        eps = self.epsilon
        keep = eps / (1.0 - eps) if eps < 1.0 else 1.0
        weight = 1.0
        for i in range(start, len(sk.snaps)):
            snap, seat, acts = sk.snaps[i]
            before = g.clone(snap, rng=self._judging_rng())
            _relabel(before, perm, k.seat)
            self._view.bind(before)
            p = self._likelihood(before, seat, acts, eps)
            weight *= p
            if start == 0 and p < 1.0 - eps and self.rng.random() >= keep:
                return False, weight, i + 1
        return True, weight, len(sk.snaps)

    def _judging_rng(self) -> np.random.Generator:
        """The generator of a copy made to judge one public decision: in the state of ``default_rng(0)``
        every time (one generator put back, cheaper than a new one; a judged copy is dropped before the next)."""
        gen = self._rng0
        gen.bit_generator.state = self._rng0_state
        return gen

    def _relabelled(self, k: Knowledge, sk: _Skeleton, perm: list[int], record: bool = False) -> State:
        """The skeleton with the hidden cards relabelled by ``perm`` (its own generator for the rest of the deal);
        ``record``: the deal as dealt and the history too."""
        g = self._sgame
        state = g.clone(sk.state, rng=np.random.default_rng(int(self.rng.integers(1 << 62))))
        _relabel(state, perm, k.seat)
        if record:
            _relabel_record(state, perm, g.num_cards)
        if self._restart_hooks and state.phase is Phase.PLAY:
            self._restart(state)
        return state

    def _relabelling(self, sk: _Skeleton) -> list[int]:
        """A random relabelling of the hidden cards that every card place's constraints allow."""
        g = self._sgame
        rng = self.rng
        hidden = sk.hidden
        pool = [hidden[i] for i in rng.permutation(len(hidden))]
        forbid = sk.forbid
        keys = rng.random(len(hidden))
        order = sorted(range(len(hidden)), key=lambda i: (-forbid.get(hidden[i], 0).bit_count(), keys[i]))
        perm = list(range(g.num_cards))
        for i in order:
            x = hidden[i]
            bad = forbid.get(x, 0)
            j = next((j for j, c in enumerate(pool) if not bad >> c & 1), None) if bad else len(pool) - 1
            if j is None:
                raise Inconsistent("the constraints leave a card place empty")
            perm[x] = pool.pop(j)
        return perm

    def _determinize(self, k: Knowledge, sk: _Skeleton) -> tuple[State, float, int]:
        """A relabelled copy of the skeleton, the likelihood of the other seats' public decisions in it, and
        how many were judged (every decision is judged here, without early refusal)."""
        perm = self._relabelling(sk)
        weight, judged = 1.0, 0
        if self.belief == "expert":
            g = self._sgame
            for snap, seat, acts in sk.snaps:
                before = g.clone(snap, rng=self._judging_rng())
                _relabel(before, perm, k.seat)
                self._view.bind(before)
                weight *= self._likelihood(before, seat, acts, self.epsilon)
                judged += 1
        return self._relabelled(k, sk, perm), weight, judged

    def _restart(self, state: State) -> None:
        """Rerun the trick hooks' start of play on the hands as they were then (e.g. who held the ace of spades)."""
        g = self._sgame
        d = state.deal
        scratch = g.clone(state, rng=state.rng)
        for trick in [*d.tricks, d.trick]:
            for s, c in trick:
                scratch.deal.hands[s] |= 1 << c
        for hook in g.trick_hooks:
            hook.start(g, scratch)
        for f in type(d).__dataclass_fields__:
            if f != "hands":
                new = getattr(scratch.deal, f)
                if new != getattr(d, f):
                    setattr(d, f, new)

    def _likelihood(self, state: State, seat: int, actions: list[int], eps: float) -> float:
        """How well the model player explains ``seat``'s public decision (1 - eps if it agrees, else eps).

        An exchange is judged by its count of marks.
        """
        g = self._sgame
        model = self._models[seat]
        view = self._view
        view.invalidate()
        first = self._model_act(model, state, seat)
        if actions[0] >= g.num_cards or len(actions) == 1:
            if actions[0] >= g.num_cards or state.phase not in _MARK_PHASES:
                return 1.0 - eps if first == actions[0] else eps
        want = sum(1 for a in actions if a < g.num_cards)
        if first >= g.num_cards:
            return 1.0 - eps if want == 0 else eps
        probe = g.clone(state, rng=state.rng)
        view.bind(probe)
        g.apply(probe, first)
        marks = 1
        while probe.to_act == seat and probe.phase in _MARK_PHASES and marks <= want:
            view.refresh()
            a = self._model_act(model, probe, seat)
            if a >= g.num_cards:
                break
            g.apply(probe, a)
            marks += 1
        return 1.0 - eps if marks == want else eps

    def _model_act(self, model: Agent, state: State, seat: int) -> int:
        """The model player's action at ``seat``, to act in ``state`` (the state the view is bound to): a
        scripted player reads the seat's view from the state (``act_state``), a learned one gets its observation
        and the legal actions (``act_legal``: it reads nothing else), any other its observation, mask and info."""
        view = self._view
        if isinstance(model, ExpertAgent):
            return model.act_state(state, view.seat_info(seat), list(view.legal()))
        if self._learned_base is not None:  # the model players are the learned policy's (_model_player)
            return model.act_legal(view.observation(seat), view.legal())
        obs, mask, info = view.seat_view(seat)
        return model.act(obs, mask, info)

    # ------------------------------------------------------------------ evaluation
    def _value(self, state: State, option: list[int], shared: dict | None = None) -> float:
        """The seat's result of the deal after the actions of ``option`` in a determinized state.

        An option the engine refuses (e.g. more discards than the stock allows) scores -inf. ``shared``: the
        trick search's tables, kept across the options of one card-play decision in one determinization (its
        positions and results are those of one deal, whichever card is tried first).
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
            return float(self._maxn(child, {} if shared is None else shared)[me])
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
            model = models[seat]
            legal = view.legal()
            if model.plays_forced_blind and len(legal) == 1:  # its answer, without building its view
                action = legal[0]
            else:
                action = self._model_act(model, state, seat)
            results = g.apply(state, action)
            if results:
                return results[0].deltas[me]

    def _maxn(self, state: State, tables: dict) -> list[int]:
        """Exact max^n value (results by seat) of the remaining tricks of ``state``; every card is known.
        ``tables``: the search's tables (filled here), to share with searches of other positions of the same
        card play."""
        return _TrickSearch(self._sgame, state, self._sensitive, tables).value()


class _TrickSearch:
    """Exact max^n search of the remaining tricks of one fully known state (each seat maximises its own result).

    The search walks the card play itself over bit masks, with the engine's
    pieces: the legal cards from :func:`~mauscheln_env.tricks.legal_follow` with
    the table's trick profile and trump tables, the trick winner from the trump
    tables and the ruleset's trick hooks (``beats``, ``trick_done``, called on
    one scratch copy of the state whose ruleset fields are saved and restored
    around every card), and the result of a finished deal from the engine's own
    settlement (``Game.proceed`` from the card play on a copy, memoised by the
    tricks won and the ruleset fields). A transposition table at trick
    boundaries; cards adjacent in the trick order held by one seat are searched
    once, unless a trick hook can tell them apart (probed once per trump suit).

    ``tables`` holds the transposition table, the settled results and the equivalence classes; searches from
    positions of the same card play (the options of one decision) may share it: its keys are whole
    positions (every hand, the tricks won, the hooks' fields), whose values do not depend on the path.
    """

    def __init__(self, g: Game, root: State, sensitive: dict[int, tuple[int, tuple[str, ...]]],
                 tables: dict | None = None) -> None:
        d = root.deal
        self.g = g
        self.root = root
        self.t = d.tables
        self.profile = g.profile
        hooks = g.trick_hooks
        self.beats_hooks = [h for h in hooks if type(h).beats is not TrickHook.beats]
        self.done_hooks = [h for h in hooks if type(h).trick_done is not TrickHook.trick_done]
        self._fields([f for f in type(d).__dataclass_fields__ if f not in Deal.__dataclass_fields__] if hooks else [])
        self.sc = g.clone(root, rng=root.rng) if hooks else None
        self.next = d.next_player
        self.size = len(d.participants)
        self.parts = list(d.participants)
        self.hands = list(d.hands)
        self.won = list(d.tricks_won)
        self.done = len(d.tricks)
        if d.trump_suit not in sensitive:
            sensitive[d.trump_suit] = self._probe_hooks() if hooks else (0, ())
        self.sensitive, changed = sensitive[d.trump_suit]
        self._fields([f for f in self.extra if f in changed])  # only what the hooks write is saved and restored
        # fields that hold a list need a copy in the keys (and are kept in their lists when saved, see _last_trick)
        self._lists = bool(self.extra) and any(isinstance(getattr(self.sc.deal, f), list) for f in self.extra)
        self.last = g.num_tricks - 1
        tables = {} if tables is None else tables
        self.memo: dict = tables.setdefault("memo", {})
        self.leaves: dict = tables.setdefault("leaves", {})
        self.classes: dict = tables.setdefault("classes", {})
        self.inplay = 0  # the cards in the participants' hands
        for s in self.parts:
            self.inplay |= self.hands[s]
        # the cards by strength, strongest first (fewest cards beat them), ties by card id
        beats = self.t.beats
        self.by_strength = sorted(range(g.num_cards), key=lambda c: beats[c].bit_count())

    def value(self) -> list[int]:
        d = self.root.deal
        trick = tuple(d.trick)
        if trick:
            return self._node(self.root.to_act, trick, d.win_card, d.win_seat, d.led_suit)
        return self._node(self.root.to_act, (), 0, 0, 0)

    def _fields(self, names: list[str]) -> None:
        """The ruleset's deal fields the search saves, restores and keys by."""
        self.extra = names
        self._get = operator.attrgetter(*names) if names else None
        self._one = len(names) == 1

    def _extras(self) -> tuple:
        if self._get is None:
            return ()
        v = self._get(self.sc.deal)
        return (v,) if self._one else v

    def _fingerprint(self) -> tuple:
        if not self.extra:
            return ()
        if not self._lists:
            return self._extras()
        return tuple(tuple(v) if isinstance(v, list) else v for v in self._extras())

    def _restore(self, saved: tuple) -> None:
        sd = self.sc.deal
        for f, v in zip(self.extra, saved):
            setattr(sd, f, list(v) if isinstance(v, list) else v)

    def _probe_hooks(self) -> tuple[int, tuple[str, ...]]:
        """The cards a trick hook can tell apart: any card of a two-card trick for which a hook's ``beats``
        answers True or whose ``trick_done`` changes the ruleset's fields (the Belli and the trump ace, the ace
        of spades and a led trump ace); the other cards are searched by equivalence."""
        g = self.g
        sc = self.sc
        sd = sc.deal
        t = self.t
        saved = self._extras()
        a, b = (self.parts + self.parts)[:2]
        sensitive = 0
        changed: set[str] = set()

        def note() -> bool:
            now = self._extras()
            changed.update(f for f, x, y in zip(self.extra, now, saved) if x != y)
            return now != saved
        for lead in range(g.num_cards):
            for c in range(g.num_cards):
                if c == lead:
                    continue
                sd.trick = [(a, lead)]
                sd.win_card, sd.win_seat, sd.led_suit = lead, a, t.eff_suit[lead]
                hit = any(h.beats(g, sc, b, c) for h in self.beats_hooks)
                note()
                self._restore(saved)
                for h in self.done_hooks:
                    h.trick_done(g, sc, [(a, lead), (b, c)])
                hit = note() or hit
                self._restore(saved)
                if hit:
                    sensitive |= (1 << lead) | (1 << c)
        sd.trick = []
        return sensitive, tuple(changed)

    def _distinct(self, legal: int, others: int) -> list[int]:
        """The legal cards less those equivalent to a stronger one the seat holds (nothing between them is
        in another participant's hand or in the trick, ``others``, and no trick hook tells them apart).

        Each class is named by its strongest card and listed at its lowest card id (the engine's order, for
        the same ties). Memoised by ``(legal, others)``."""
        key = (legal, others)
        hit = self.classes.get(key)
        if hit is not None:
            return hit
        if legal & (legal - 1) == 0:
            out = [legal.bit_length() - 1] if legal else []
            self.classes[key] = out
            return out
        beats = self.t.beats
        eff = self.t.eff_suit
        sens = self.sensitive
        keep: list[int] = []
        first: list[int] = []
        for c in self.by_strength:  # strongest first
            if not legal >> c & 1:
                continue
            if keep and not (sens >> c & 1):
                top = keep[-1]
                if eff[top] == eff[c] and beats[c] >> top & 1 and not sens >> top & 1 \
                        and not (beats[c] & ~beats[top] & ~(1 << top)) & others:
                    if c < first[-1]:
                        first[-1] = c
                    continue
            keep.append(c)
            first.append(c)
        out = [c for _, c in sorted(zip(first, keep))]
        self.classes[key] = out
        return out

    def _leaf(self) -> list[int]:
        key = (tuple(self.won), self._fingerprint())
        hit = self.leaves.get(key)
        if hit is not None:
            return hit
        g = self.g
        c = g.clone(self.root, rng=self.root.rng)
        cd = c.deal
        cd.tricks_won = list(self.won)
        cd.trick = []
        cd.hands = [0] * len(cd.hands)
        if self.extra:
            for f, v in zip(self.extra, self._extras()):
                setattr(cd, f, list(v) if isinstance(v, list) else v)
        results: list = []
        g.proceed(c, results)
        value = list(results[0].deltas)
        self.leaves[key] = value
        return value

    def _follow(self, trick: tuple, win_card: int, win_seat: int, led: int, seat: int, card: int,
                hot: bool) -> tuple[int, int]:
        """The winning card and seat of ``trick`` (led in suit ``led``) once ``seat`` adds ``card``: the
        ruleset's beats hooks decide first where the trick holds a card they can tell apart (``hot``), else the
        trump tables."""
        if hot and self.beats_hooks:
            sd = self.sc.deal
            sd.trick = list(trick)
            sd.win_card, sd.win_seat, sd.led_suit = win_card, win_seat, led
            for h in self.beats_hooks:
                if h.beats(self.g, self.sc, seat, card):
                    return sd.win_card, sd.win_seat
        if self.t.beats[win_card] >> card & 1:
            return card, seat
        return win_card, win_seat

    def _last_trick(self, seat: int) -> list[int]:
        """The value of the last trick from its lead: every participant holds one card and plays it. The same
        steps as :meth:`_node` (hooks asked about the same cards, the same settlement) without a node per card;
        the hooks' fields are saved once and put back at the end, as the nodes' saves and restores leave them
        (for fields that hold no list: :meth:`_node` keeps a saved list in place, so a hook's append to it
        stays, which only the nodes repeat)."""
        t = self.t
        sens = self.sensitive
        hands = self.hands
        saved = self._extras() if self.extra else None
        trick: tuple = ()
        hot_trick = hot = False
        s = seat
        c = hands[s].bit_length() - 1
        win_card, win_seat, led = c, s, t.eff_suit[c]
        hot_trick = bool(sens >> c & 1)
        trick = ((s, c),)
        for _ in range(1, self.size):
            s = self.next[s]
            c = hands[s].bit_length() - 1
            hot = hot_trick or bool(sens >> c & 1)
            win_card, win_seat = self._follow(trick, win_card, win_seat, led, s, c, hot)
            trick = (*trick, (s, c))
            hot_trick = hot_trick or bool(sens >> c & 1)
        self.won[win_seat] += 1
        self.done += 1
        if hot:
            for h in self.done_hooks:
                h.trick_done(self.g, self.sc, list(trick))
        value = self._leaf()
        self.won[win_seat] -= 1
        self.done -= 1
        if saved is not None and hot_trick:
            self._restore(saved)
        return value

    def _node(self, seat: int, trick: tuple, win_card: int, win_seat: int, led: int) -> list[int]:
        key = None
        if not trick:
            key = (tuple(self.hands), seat, tuple(self.won), self._fingerprint())
            hit = self.memo.get(key)
            if hit is not None:
                return hit
            if self.done == self.last and not self._lists:
                hands = self.hands
                if all(hands[p] and not hands[p] & (hands[p] - 1) for p in self.parts):
                    value = self.memo[key] = self._last_trick(seat)
                    return value
        t = self.t
        hands = self.hands
        hand = hands[seat]
        inplay = self.inplay
        tmask = 0
        for _, x in trick:
            tmask |= 1 << x
        if trick:
            legal = legal_follow(self.profile, hand, t.eff_suit_mask[led], t.trump_mask, t.beats[win_card])
        else:
            legal = hand
        best: list[int] | None = None
        sens = self.sensitive
        hot_trick = bool(sens & tmask)
        # Hooks are asked only about tricks with a card they can tell apart (the probe's); what they write is
        # saved once here and restored after each card that asked them.
        saved = self._extras() if self.extra and (hot_trick or legal & sens) else None
        beats = t.beats
        beats_hooks = self.beats_hooks
        last_card = len(trick) + 1 == self.size
        follower = self.next[seat]
        for c in self._distinct(legal, (inplay & ~hand) | tmask):
            hot = hot_trick or bool(sens >> c & 1)
            bit = 1 << c
            hands[seat] = hand & ~bit
            self.inplay = inplay & ~bit
            if not trick:
                nw_card, nw_seat, nled = c, seat, t.eff_suit[c]
            else:
                nled = led
                if hot and beats_hooks:
                    nw_card, nw_seat = self._follow(trick, win_card, win_seat, led, seat, c, hot)
                elif beats[win_card] >> c & 1:  # the trump tables alone (no function call in the hot path)
                    nw_card, nw_seat = c, seat
                else:
                    nw_card, nw_seat = win_card, win_seat
            now = (*trick, (seat, c))
            if not last_card:
                value = self._node(follower, now, nw_card, nw_seat, nled)
            else:
                won = self.won
                won[nw_seat] += 1
                self.done += 1
                if hot:
                    for h in self.done_hooks:
                        h.trick_done(self.g, self.sc, list(now))
                if self.done == self.g.num_tricks:
                    value = self._leaf()
                else:
                    value = self._node(nw_seat, (), 0, 0, 0)
                won[nw_seat] -= 1
                self.done -= 1
            if saved is not None and hot:
                self._restore(saved)
            if best is None or value[seat] > best[seat]:
                best = value
        self.hands[seat] = hand
        self.inplay = inplay
        if key is not None:
            self.memo[key] = best
        return best
