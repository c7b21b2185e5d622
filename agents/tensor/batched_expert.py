"""The ``expert`` scripted agent as tensor code: many games' decisions in one call.

:class:`BatchedExpert` makes exactly the decisions of
:class:`agents.scripted.baselines.ExpertAgent` (``tests/test_batched_expert.py`` checks
this at every decision of thousands of random sessions), but for a whole batch
of observations at once, with no Python loop over the rows, so that it can
serve as a fixed opponent inside a batched self-play trainer
(:class:`mauscheln_env.batched.BatchedMauscheln` steps 1024 games at once).

It is a pure function of ``(obs, mask)``, the inputs a policy network gets: it
can know nothing hidden, and it runs on the batched engine's device. Everything
the Python agent reads from the ``info`` dict is read from the observation
instead:

| info field | from the observation |
| --- | --- |
| ``dealer`` | the ``dealer`` one-hot (only "am I the dealer" is needed: relative seat 0) |
| ``pot`` | ``round(pot * bankroll)`` (the observer stores pot / bankroll) |
| ``tricks_won`` | ``round(tricks_won * num_tricks)`` |
| ``trick`` (the trick in progress) | ``trick_cards`` and ``trick_leader``: the last trick with a leader, if fewer of its cards were played than there are participants; play order runs from its leader in the rules' direction over the seats that have a card in it |
| ``phase`` | the ``phase`` one-hot |

``chips`` is not needed (the expert judges the pot against the stake only).
Everything else (hand, own discards, cards played, the trump card and who took
it, the knock, roles, live seats) is in the observation already, as
:class:`agents.knowledge.KnowledgeReader` decodes it. Seats are relative
throughout (relative seat 0 is the acting seat).

## Representation

Card sets are ``bool[B, N]``. The card tables of the four possible trump suits
come from ``game.tables`` once, in ``__init__``:

* ``beats[s, c, j]``: card ``j`` beats card ``c`` under trump suit ``s``;
* one ``float32[N, 8N]`` matrix, so that a single matrix product of the unseen
  cards gives, per trump suit and card, how many unseen cards beat it (the
  ``live_above`` of the Python agent) and how many unseen non-trumps do (for
  ``side_tops``); a second product with the hand gives each trump's place in
  the hand, strongest first (the trumps above it in the hand);
* ``weak_key[s, c]``, ``strong_key[s, c]``: ``64 * rank + c``, with ``rank``
  the position of card ``c`` in the order of ``weakest`` (min by ``(power,
  card id)``) resp. ``strongest`` (max by ``(power, -card id)``), power being
  minus the number of cards that beat it. Either choice over a set is one
  ``amin`` over the keys (cards outside the set get a high bit), and the low
  six bits of the minimum are the card.

Every rule of thumb is evaluated for every row and the row's phase picks the
result; the ``if``/``elif`` chains of the Python agent become nested
``torch.where`` in reverse order of priority. The thresholds (pot pressure,
boldness, looseness) are computed in ``float64`` in the Python agent's order
of operations, so the comparisons agree to the last bit (so, like the batched
engine, it needs a device with ``float64``: CPU or CUDA, not MPS). Elementwise
ops are chosen for the CPU: ``where`` and ``masked_fill`` over ``[B, N]`` are
several times slower there than integer arithmetic and ``amin``.

Its cost grows with the table: at 7 players (52 cards) the ``trick_cards`` piece
alone is 6 MB at B = 1024. ``benchmarks/tensor_agents_speed.py`` measures it.

## No fallback is needed

The Python agent plays a random legal action when a rule of thumb returns an
illegal one. In the ``mauscheln`` ruleset that cannot happen: ``knock`` and
``no_knock``, ``mauscheln`` and ``pass``, ``go`` and ``pass`` are legal
whenever their phase is asked with two legal actions (with one legal action
both agents return it), every exchange mark is chosen among the legal marks or
``done`` only when it is legal, and every card is chosen from a subset of the
legal cards. Rows without a known phase (not a decision) get the lowest legal
action id.

Supported: ruleset ``mauscheln`` at 3-7 players with the options of the
batched engine (``knock``, ``knock_min_rank``, ``stake``, ``bankroll``,
``max_deals``, ``max_throw_ins``, ``deck_size``); ``vierling``, ``belli`` and
``weli`` raise :class:`~mauscheln_env.errors.ConfigError`.

:func:`agents.tensor.batched_opponent` builds the batched opponents by name
(``random``, ``beginner``, ``expert``, for every ruleset) for the trainer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from mauscheln_env.engine import Game
from mauscheln_env.errors import ConfigError
from mauscheln_env.observation import Observer
from mauscheln_env.rulesets.mauscheln import SPEC as MAUSCHELN

UNSUPPORTED_OPTIONS = ("vierling", "belli", "weli")
"""Options of ruleset ``mauscheln`` that change the cards or the trick order; the batched expert refuses them."""


def _check_game(game: Game) -> None:
    if not isinstance(game, Game):
        raise ConfigError(f"BatchedExpert needs a mauscheln_env Game, got {type(game).__name__}")
    supported = ("ruleset mauscheln at 3-7 players with the options stake, bankroll, deck_size, knock, "
                 "knock_min_rank, max_deals, max_throw_ins (vierling, belli and weli off)")
    if game.config.ruleset != "mauscheln" or game.spec != MAUSCHELN:
        raise ConfigError(f"the batched expert does not play ruleset {game.config.ruleset!r}; supported: {supported}")
    opts = game.config.options
    for name in UNSUPPORTED_OPTIONS:
        value = opts.get(name)
        if value != MAUSCHELN.options[name].default:
            raise ConfigError(f"the batched expert does not play option {name}={value!r}; supported: {supported}")


CARD_BITS = 64
"""Sort keys hold the card id in their low 6 bits (N <= 52)."""
EMPTY_SHIFT = 16
"""A card outside the set gets this bit in its key, above every rank * 64 + card."""


def pick(cards: torch.Tensor, key: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row, the card of ``cards`` (bool[B, N]) with the least ``key`` (``rank * 64 + card``), and whether
    ``cards`` is non-empty; the card is meaningless where it is empty."""
    least = (key | ((~cards).to(torch.int32) << EMPTY_SHIFT)).amin(dim=1)
    return (least & (CARD_BITS - 1)).to(torch.int64), least < (1 << EMPTY_SHIFT)


def order_keys(power: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(weak, strong)`` sort keys ``[4, N]`` from card power per trump suit: the place of each card in the
    order of ``weakest`` (min by (power, card)) resp. ``strongest`` (max by (power, -card)), times 64, plus
    the card."""
    S, N = power.shape
    weak = np.zeros((S, N), dtype=np.int32)
    strong = np.zeros((S, N), dtype=np.int32)
    for s in range(S):
        for i, c in enumerate(sorted(range(N), key=lambda c, s=s: (power[s, c], c))):
            weak[s, c] = i * CARD_BITS + c
        for i, c in enumerate(sorted(range(N), key=lambda c, s=s: (-power[s, c], c))):
            strong[s, c] = i * CARD_BITS + c
    return weak, strong


def batched_expert_supports(game: Game) -> bool:
    """Whether :class:`BatchedExpert` plays ``game`` (ruleset ``mauscheln`` without Vierling, Belli, Weli)."""
    try:
        _check_game(game)
    except ConfigError:
        return False
    return True


class BatchedExpert:
    """The `expert` agent's decisions for many games at once, as tensor code."""

    name = "expert"

    def __init__(self, game: Game, device: torch.device | str = "cpu", risk: float = 0.0) -> None:
        _check_game(game)
        if not isinstance(risk, (int, float)) or isinstance(risk, bool) or not -2.0 <= risk <= 2.0:
            raise ValueError(f"risk={risk!r} is not allowed; allowed: a number from -2 (cautious) to 2 (bold)")
        self.game = game
        self.device = dev = torch.device(device)
        self.risk = float(risk)
        n, N, T = game.n, game.num_cards, game.num_tricks
        self.n, self.N, self.T = n, N, T
        self.num_actions = game.num_actions
        observer = Observer(game)
        self.obs_size = observer.size
        self._piece = {p.name: (observer.offsets[p.name], p.size) for p in observer.pieces}
        spec = game.spec
        # Labels and scales from the observation schema's pieces (the layout's one source).
        phases, roles = observer.by_name["phase"].codec.labels, observer.by_name["roles"].codec.labels
        self._phase = {name: phases.index(name) for name in ("knock", "declare", "go_with", "exchange", "play")}
        self._role = {name: roles.index(name) for name in ("undecided", "declined", "mauschler", "goer", "out")}
        self._num_roles = len(roles)
        ids = game.action_ids
        self._knock, self._no_knock = ids["knock"], ids["no_knock"]
        self._mauscheln, self._pass, self._go, self._done = ids["mauscheln"], ids["pass"], ids["go"], ids["done"]
        self._bankroll = 1.0 / observer.by_name["pot"].codec.scales[0]  # the observation holds pot / bankroll
        self._stake = game.stake
        self._small_table = game.n <= 4

        def tensor(x: Any, dtype: torch.dtype = torch.int64) -> torch.Tensor:
            return torch.as_tensor(np.asarray(x), dtype=dtype, device=dev).contiguous()

        deck = game.deck
        self._card_suit = tensor(deck.suit)
        rank_pos = np.array([spec.rank_order.index(code[0]) for code in deck.codes])
        self._is_ace = tensor(rank_pos == 0, torch.bool)
        self._is_king = tensor(rank_pos == 1, torch.bool)
        beats = np.zeros((4, N, N), dtype=bool)
        trump = np.zeros((4, N), dtype=bool)
        for s, t in enumerate(game.tables):
            for c in range(N):
                trump[s, c] = bool(t.trump_mask >> c & 1)
                for j in range(N):
                    beats[s, c, j] = bool(t.beats[c] >> j & 1)
        side_beats = beats & ~trump[:, None, :]
        # w[j, s*N + c]: j beats c under trump s; w[j, (4 + s)*N + c]: the same for non-trumps j.
        w = np.concatenate([beats, side_beats]).reshape(8 * N, N).T
        self._w_all = tensor(w, torch.float32)
        self._w_beats = tensor(w[:, : 4 * N], torch.float32)
        self._beats = tensor(beats.reshape(4 * N, N), torch.bool)  # row s*N + c
        self._beats_flat = self._beats.reshape(-1)
        self._trump = tensor(trump, torch.bool)
        # Sort keys: rank in the order of weakest (resp. strongest) times 64, plus the card id.
        weak, strong = order_keys(-beats.sum(axis=2))  # power: minus the cards that beat it
        self._weak_key = tensor(weak, torch.int32)
        self._strong_key = tensor(strong, torch.int32)
        self._card_ids = tensor(np.arange(N), torch.float32)
        self._seat_ids = tensor(np.arange(n), torch.float32)
        # _order[L, k]: the relative seat that plays k-th in a trick led by relative seat L.
        self._order = tensor([[(lead + game.direction * k) % n for k in range(n)] for lead in range(n)])
        self._arange_cache = torch.arange(0, device=dev)

    # ------------------------------------------------------------------ helpers
    def _arange(self, b: int) -> torch.Tensor:
        if self._arange_cache.numel() < b:
            self._arange_cache = torch.arange(b, device=self.device)
        return self._arange_cache[:b]

    def _cut(self, obs: torch.Tensor, name: str) -> torch.Tensor:
        off, size = self._piece[name]
        return obs[:, off:off + size]

    # ------------------------------------------------------------------ decisions
    @torch.no_grad()
    def act(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """obs float32[B, D] (each row: the acting seat's observation, the layout of
        mauscheln_env.observation.Observer(game)), mask bool[B, A] -> int64[B] actions."""
        if obs.dim() != 2 or obs.shape[1] != self.obs_size:
            raise ValueError(f"obs has shape {tuple(obs.shape)}; allowed: [B, {self.obs_size}]")
        if mask.dim() != 2 or mask.shape != (obs.shape[0], self.num_actions):
            raise ValueError(f"mask has shape {tuple(mask.shape)}; allowed: [{obs.shape[0]}, {self.num_actions}]")
        f32, f64, i64 = torch.float32, torch.float64, torch.int64
        obs = obs.to(self.device, f32)
        mask = mask.to(self.device, torch.bool)
        B = obs.shape[0]
        n, N, T = self.n, self.N, self.T
        ar = self._arange(B)
        cut = self._cut

        # ---- what the seat knows (KnowledgeReader, in relative seats)
        phase = cut(obs, "phase").bool()
        trump_card = (cut(obs, "trump_card") @ self._card_ids).to(i64)
        trump_onehot = cut(obs, "trump_card").bool()
        suit = self._card_suit[trump_card]
        trump = self._trump.index_select(0, suit)  # [B, N]
        weak = self._weak_key.index_select(0, suit)
        strong = self._strong_key.index_select(0, suit)
        hand = cut(obs, "hand").bool()
        trick = cut(obs, "trick_cards").view(B, T, n, N)
        played = trick.reshape(B, T * n, N).sum(dim=1).bool()
        taken = cut(obs, "trump_taken_by").bool()
        trump_seen = ~taken.any(dim=1) | taken[:, 0]  # nobody took the trump card, or I did
        known = hand | cut(obs, "own_discards").bool() | played | (trump_onehot & trump_seen[:, None])
        roles = cut(obs, "roles").view(B, n, self._num_roles).bool()
        ri = self._role
        undecided, declined = roles[:, :, ri["undecided"]], roles[:, :, ri["declined"]]
        mauschler, goer, out = roles[:, :, ri["mauschler"]], roles[:, :, ri["goer"]], roles[:, :, ri["out"]]
        live = cut(obs, "live").bool()
        pot = torch.round(cut(obs, "pot")[:, 0].to(f64) * self._bankroll)
        stake = self._stake
        pressure = ((pot - stake) / (2.0 * stake)).clamp_min(0.0)  # _pot_pressure
        ph = self._phase
        is_exchange = phase[:, ph["exchange"]]
        knocker = cut(obs, "knock")[:, 0].bool() & cut(obs, "dealer")[:, 0].bool() & is_exchange
        hand_after = hand | (trump_onehot & knocker[:, None])  # discard_plan: the knocker counts the trump card

        # ---- _hand_facts(hand_after), plus the per-card counts play needs
        rows = ar * 8 + suit
        counts = ((~known).to(f32) @ self._w_all).view(B * 8, N)
        above = counts.index_select(0, rows)  # unseen cards that beat each card (live_above)
        side_above = counts.index_select(0, rows + 4)  # unseen non-trumps that beat each card
        place = ((hand_after.to(f32) @ self._w_beats).view(B * 4, N)).index_select(0, ar * 4 + suit)
        hand_trumps = hand_after & trump  # a trump's place: the hand's trumps above it (0 = strongest)
        n_tr = hand_trumps.sum(dim=1)
        trumps_f = hand_trumps.to(f32)
        above0 = (above * trumps_f * (place == 0)).sum(dim=1)
        above1 = (above * trumps_f * (place == 1)).sum(dim=1)
        top = (n_tr >= 1) & (above0 == 0)
        sure_n = (hand_trumps & (above <= place)).sum(dim=1)
        side_top = ~trump & (side_above == 0)  # side_tops, card by card
        hand_side_tops = hand_after & side_top
        n_st = hand_side_tops.sum(dim=1)

        # ---- knock
        risk = self.risk
        knock = self._is_ace[trump_card]
        if self._small_table:
            knock = knock | (self._is_king[trump_card] & (pressure <= 0.5 + risk))
        a_knock = torch.where(knock, self._knock, self._no_knock)

        # ---- declare
        risky = ((n_tr >= 2) & (above0 == 1) & (above1 <= 1)) | ((n_tr >= 3) & (above0 <= 1))
        risky = risky | (top & (n_tr == 1) & (n_st > 0))
        behind = (live & undecided)[:, 1:].sum(dim=1)
        boldness = (risk + (1.0 if self._small_table else 0.0)) + 0.5 * (behind <= 1).to(f64) - pressure
        declare = (top & (n_tr >= 2)) | (risky & (boldness >= 0.5))
        a_declare = torch.where(declare, self._mauscheln, self._pass)

        # ---- go with
        goers = goer.sum(dim=1)
        dropped = out.sum(dim=1)
        undecided_n = (live & (undecided | declined))[:, 1:].sum(dim=1)
        rivals = 1.0 + goers.to(f64) + 0.5 * undecided_n.to(f64)
        loose = risk + (rivals <= 1.5).to(f64) + 0.25 * dropped.to(f64) - pressure
        go = top | (sure_n >= 1)
        go = go | ((n_tr >= 2) & ((above0 <= 3) | (rivals <= 2.5) | (loose >= 0.5)))
        go = go | ((n_tr == 1) & (above0 == 1))
        go = go | ((n_tr == 1) & (((n_st > 0) & (loose >= 0.5)) | (loose >= 1.0)))
        go = go | ((n_tr == 0) & (n_st >= 2) & (loose >= 1.0))
        a_go = torch.where(go, self._go, self._pass)

        # ---- exchange: _next_mark over discard_plan
        legal = mask[:, :N]
        weakest_legal, _ = pick(legal, weak)
        bare_king = (n_tr == 1) & (above0 == 1)
        keep_side = hand_side_tops & ~bare_king[:, None]
        mark, any_mark = pick(hand & ~trump & ~keep_side & legal, weak)
        a_exchange = torch.where(any_mark, mark, torch.where(mask[:, self._done], self._done, weakest_legal))

        # ---- play: the trick in progress, in play order
        leaders = cut(obs, "trick_leader").view(B, T, n)
        started = leaders.sum(dim=(1, 2)).to(i64)
        t_cur = (started - 1).clamp_min(0)
        cur = trick[ar, t_cur]  # [B, n, N]: the last trick started
        cur_has = cur.sum(dim=2).bool()
        cur_card = (cur @ self._card_ids).to(i64)  # [B, n]
        cur_len = cur_has.sum(dim=1)
        participants = mauschler | goer
        n_part = participants.sum(dim=1)
        in_progress = (started > 0) & (cur_len < n_part)
        tricks_done = started - in_progress.to(i64)
        leader = (leaders[ar, t_cur] @ self._seat_ids).to(i64)
        order = self._order[leader]  # [B, n]: relative seats in play order
        card_in_order = cur_card.gather(1, order)
        has_in_order = cur_has.gather(1, order)
        win = card_in_order[:, 0]
        for k in range(1, n):  # winning_card
            c = card_in_order[:, k]
            better = has_in_order[:, k] & self._beats_flat[(suit * N + win) * N + c]
            win = torch.where(better, c, win)
        won = torch.round(cut(obs, "tricks_won") * T).to(i64)
        need = ((mauschler.to(i64) + 1) - won).clamp_min(0)  # 2 for the mauschler, 1 for a goer
        need0 = need[:, 0]
        sure_card = above == 0

        # follow (a card is on the table)
        winners = legal & self._beats.index_select(0, suit * N + win)
        cheap, any_winner = pick(winners, weak)
        sure_win, any_sure_win = pick(winners & sure_card, weak)
        strong_win, _ = pick(winners, strong)
        last = cur_len == n_part - 1
        a_follow = torch.where(trump[ar, cheap], weakest_legal, cheap)
        a_follow = torch.where(need0 > 0, strong_win, a_follow)
        a_follow = torch.where(any_sure_win, sure_win, a_follow)
        a_follow = torch.where(last, cheap, a_follow)
        a_follow = torch.where(any_winner, a_follow, weakest_legal)

        # lead
        trumps_l = legal & trump
        side_l = legal & ~trump
        sure_l, any_sure = pick(legal & sure_card, strong)
        strong_trump, any_trump = pick(trumps_l, strong)
        weak_trump, _ = pick(trumps_l, weak)
        weak_side, any_side = pick(side_l, weak)
        side_top_l, any_side_top = pick(side_l & side_top, strong)
        others_in_need = (participants & (need > 0))[:, 1:].sum(dim=1)
        a_lead = torch.where(any_side, weak_side, weak_trump)
        a_lead = torch.where(any_side_top & (tricks_done <= 1), side_top_l, a_lead)
        a_lead = torch.where(any_sure, sure_l, a_lead)
        a_lead = torch.where((need0 == 0) & any_trump & (others_in_need >= 2), strong_trump, a_lead)
        a_lead = torch.where((need0 > 0) & any_sure, sure_l, a_lead)
        a_play = torch.where(in_progress, a_follow, a_lead)

        # ---- by phase; a single legal action is returned as it is
        first_legal = mask.to(torch.uint8).argmax(dim=1)
        action = first_legal
        action = torch.where(phase[:, ph["knock"]], a_knock, action)
        action = torch.where(phase[:, ph["declare"]], a_declare, action)
        action = torch.where(phase[:, ph["go_with"]], a_go, action)
        action = torch.where(is_exchange, a_exchange, action)
        action = torch.where(phase[:, ph["play"]], a_play, action)
        return torch.where(mask.sum(dim=1) == 1, first_legal, action)


def seeded_generator(seed: int, device: torch.device | str) -> tuple[torch.device, torch.Generator]:
    """The device and a ``torch.Generator`` on it seeded with ``seed`` (a whole number >= 0, checked)."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed={seed!r} is not allowed; allowed: a whole number >= 0")
    device = torch.device(device)
    generator = torch.Generator(device=device)
    generator.manual_seed(int(seed))
    return device, generator


class BatchedRandom:
    """Uniformly random legal actions for many games at once, from a seeded ``torch.Generator``."""

    name = "random"

    def __init__(self, game: Game, device: torch.device | str = "cpu", seed: int = 0) -> None:
        self.game = game
        self.device, self.generator = seeded_generator(seed, device)
        self.num_actions = game.num_actions

    @torch.no_grad()
    def act(self, obs: torch.Tensor, mask: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        """mask bool[B, A] -> int64[B], uniform over each row's legal actions (``obs`` is ignored).

        ``u`` (float32[B] in [0, 1)): one given uniform per row, which picks legal action number
        ``floor(u * count)`` in increasing id order (the tensor agents' fallback rule); omitted, the draws
        come from :attr:`generator`. A row without a legal action gets action 0 (not checked: that would wait
        for the device).
        """
        mask = mask.to(self.device, torch.bool)
        if mask.dim() != 2 or mask.shape[1] != self.num_actions:
            raise ValueError(f"mask has shape {tuple(mask.shape)}; allowed: [B, {self.num_actions}]")
        if u is not None:
            return pick_by_uniform(mask, u.to(self.device, torch.float32))
        draws = torch.rand(mask.shape, generator=self.generator, device=self.device)
        return torch.where(mask, draws, -1.0).argmax(dim=1)


def pick_by_uniform(mask: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """int64[B]: legal action number ``floor(u * count)`` of each row of ``mask`` (increasing ids), 0 where none."""
    count = mask.sum(dim=1)
    k = torch.minimum((u * count.to(torch.float32)).floor().to(torch.int64), (count - 1).clamp_min(0))
    return (mask.to(torch.int64).cumsum(dim=1) <= k[:, None]).sum(dim=1).clamp_max(mask.shape[1] - 1)
