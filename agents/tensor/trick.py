"""The trick-model experts as tensor code (:class:`agents.scripted.common.TrickStrategy`).

:class:`TrickExpertT` and its per-ruleset subclasses make the decisions of the
experts of ``mauscheln_classic``, ``mousel``, ``mouche`` and ``muschka`` for a
whole batch at once, in ``float64`` and in the Python code's order of
operations:

* the card play (all four): ``choose_card`` and what it reads of ``DealView``
  (the cards a seat has not seen, the cards each seat's plays prove it lacks,
  the chance that a seat beats a card, that a card wins the trick it is played
  to or leads, the Poisson-binomial value of the rest of the hand), Classic's
  pulling of trumps;
* the exchange (mousel, mouche, muschka): ``exchange_plan`` with the hand's
  chances against opponents not yet known and the chance of a blind draw
  (``draw_chance``), a knocking Mousel dealer's plan with the trump card;
* Mousel's knock and declaration (``in``, ``in_lead``, ``out``), the decide
  phase of Mouche and Muschka (stay, exchange or pass; the flush) and the
  Pamphile's announcement;
* Classic's deal-or-push, knock, declaration (the hand after its best exchange,
  the reshuffled discards worth less), going with and exchange (the text's
  discard plan, the knocker's final discard by ``card_to_give``).

Everything else is answered by the Python expert row by row
(:class:`agents.tensor.rows.RowExpert`): Mouche's naming of the trump suit
and the Béatrix swap, and Muschka's deciding and exchanging with the ace of
spades in hand (a tensor phase returns :data:`DEFER` for such a row).
``vectorized`` says whether a table needs none of that (Classic, Mousel).

Card sets are ``bool[B, N]``; per-seat sets ``bool[B, n, N]`` in relative
seats; a hand's cards are H = hand size slots in increasing card id (the order
of ``iter_bits``). The per-(card, card) facts of the rules are tables built
once from the Python strategy (``_excluded_by``, ``beaters``, ``wins_over``,
``locks``), so a ruleset's rule hooks are read, not re-derived.

Numeric differences from the Python code are possible in the last bit:
``x ** y`` (``torch.pow`` and the C library's ``pow``), sums over seats taken in
relative rather than absolute seat order, and ``round(ev, 9)`` (taken as
``round(ev * 1e9)``); they can only matter where two choices tie to about 1e-9,
and the tests (every ruleset, player count and preset) find no such decision.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents.scripted.classic import ClassicExpert
from agents.scripted.common import TrickStrategy
from agents.scripted.mouche import MoucheExpert
from agents.scripted.mousel import MouselExpert
from agents.scripted.muschka import SPADES, MuschkaExpert
from agents.tensor.common import Features, VectorAgent
from agents.tensor.mousel import forehand_seat
from agents.tensor.rows import RowExpert
from mauscheln_env.engine import Game, Role

F64 = torch.float64
DEFER = -2
"""A tensor rule's answer for a row it leaves to the Python expert (e.g. Muschka's exchange with the ace of
spades in hand)."""


class TrickFeatures(Features):
    """:class:`Features` with the trump suit as the observation states it and the trick model's facts."""

    @property
    def suit(self) -> torch.Tensor:
        return self._suit

    def __init__(self, agent: TrickExpertT, obs: torch.Tensor, mask: torch.Tensor) -> None:
        super().__init__(agent, obs, mask)
        named = self.cut("trump_suit")
        card_suit = agent.card_suit[self.trump_card]
        self._suit = torch.where(named.sum(dim=1) > 0, named.argmax(dim=1), card_suit)


class TrickExpertT(VectorAgent):
    """The ``play`` phase of a trick-model expert as tensor code; its other phases row by row."""

    name = "expert"
    python: type[TrickStrategy] = TrickStrategy
    partial = True
    defers: bool = False
    """Whether some rows of a tensor phase are left to the Python expert (:data:`DEFER`)."""

    @property
    def vectorized(self) -> bool:  # type: ignore[override]
        """Every phase tensor code (no phase, no row left to the Python expert)."""
        return not self.row_phases and not self.defers

    def __init__(self, game: Game, device: torch.device | str = "cpu", seed: int = 0, risk: float = 0.0) -> None:
        self.rows = RowExpert(game, device, seed, risk=risk)  # validates risk
        super().__init__(game, device, seed, risk=risk)
        brain = self.brain
        dev = self.device
        N, n = self.N, self.n
        tables = game.tables
        S = len(tables)
        rules = brain.rules
        self.hand_size, self.profile = rules.hand_size, rules.profile
        self.guard, self.ruff, self.power_exp = brain.guard_value, brain.ruff_value, brain.chance_power
        self.field_share, self.deny_weight = brain.field_share, brain.deny_weight
        self.opponent_hand = rules.hand_size + brain.opponent_extra

        def tensor(x: Any, dtype: torch.dtype = torch.bool) -> torch.Tensor:
            return torch.as_tensor(np.asarray(x), dtype=dtype, device=dev).contiguous()

        bits = lambda mask: [mask >> j & 1 for j in range(N)]  # noqa: E731
        self.eff = tensor([t.eff_suit for t in tables], torch.int64)  # [S, N]
        self.emask = tensor([[bits(m) for m in t.eff_suit_mask] for t in tables])  # [S, 4, N]
        self.beats3 = self.beats.view(S, N, N)
        self.power = tensor(np.array(brain._power), torch.int64)  # [S, N]
        # The hooks of the Python strategy, tabulated: the A-spades rule of Muschka lives in them.
        rule = np.zeros((S, N), dtype=bool)  # the first card of a trick switches the rule on
        beaters = np.zeros((S, 2, N, N), dtype=bool)  # [suit, rule, win, card]: card beats win
        wins = np.zeros((S, 2, N, N), dtype=bool)  # [suit, rule, win, card]: wins_over
        locks = np.zeros((S, 2, N), dtype=bool)
        for s, t in enumerate(tables):
            plain = [f for f in range(N) if all(brain.beaters(t, w, f) == t.beats[w] for w in range(N))]
            special = [f for f in range(N) if f not in plain]
            for f in special:
                rule[s, f] = True
            for r, group in enumerate((plain, special)):
                if not group:
                    continue
                f = group[0]
                for w in range(N):
                    beaters[s, r, w] = bits(brain.beaters(t, w, f))
                    for c in range(N):
                        wins[s, r, w, c] = brain.wins_over(t, [f], w, c)
                    locks[s, r, w] = brain.locks(t, f, w)
        self.rule, self.beaters, self.wins, self.locks = tensor(rule), tensor(beaters), tensor(wins), tensor(locks)
        # _excluded_by(profile, t, led, beats[win], card) for every (suit, led suit, win, card).
        excl = np.zeros((S, 4, N, N, N), dtype=bool)
        for s, t in enumerate(tables):
            for e in range(4):
                led = t.eff_suit_mask[e]
                for w in range(N):
                    for c in range(N):
                        m = brain._excluded_by(self.profile, t, led, t.beats[w], c)
                        if m:
                            excl[s, e, w, c] = bits(m)
        self.excl = tensor(excl.reshape(-1, N))
        self.seat_order = tensor([[(lead + game.direction * k) % n for k in range(n)] for lead in range(n)],
                                 torch.int64)

    # ------------------------------------------------------------------ phases
    def features(self, obs: torch.Tensor, mask: torch.Tensor) -> Features:
        return TrickFeatures(self, obs, mask)

    def propose(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Play rows as tensor code, the rows of the other phases through the Python expert."""
        phase = self.features(obs, mask).phase
        answer = torch.full_like(phase, -1)
        choice = mask.sum(dim=1) >= 2
        for i, handler in self.handlers:
            idx = ((phase == i) & choice).nonzero().squeeze(-1)
            if idx.numel():
                answer[idx] = handler(self.features(obs[idx], mask[idx]))
        rows = answer == DEFER
        for i in self.row_phases:
            rows |= phase == i
        idx = (rows & choice).nonzero().squeeze(-1)
        if idx.numel():
            answer[idx] = self.rows.propose(obs[idx], mask[idx])
        return answer

    def _on_play(self, f: Features) -> torch.Tensor:
        return self.choose_card(f, self.view(f))

    # ------------------------------------------------------------------ ruleset hooks
    def _pressure(self, v: dict) -> torch.Tensor:
        """How large the pot is against the stake, 0 to 1 (the strategies' ``_pressure``)."""
        stake = max(1, self.brain.rules.stake)
        return ((v["pot"] - stake).to(F64) / (4.0 * stake)).clamp(0.0, 1.0)

    def payoff(self, v: dict, seat: torch.Tensor, tricks: torch.Tensor) -> torch.Tensor:
        """float64[B, K]: what ``seat`` (int64[B]) gets for ``tricks`` (int64[B, K]) tricks."""
        raise NotImplementedError

    def trick_unit(self, v: dict) -> torch.Tensor:
        """float64[B] or int64[B]: what one trick pays in the usual case."""
        return v["pot"] // self.T

    def known_cards(self, f: Features, v: dict) -> torch.Tensor:
        """bool[B, n, N]: cards known to lie in each seat's hand (the trump card a seat took)."""
        known = torch.zeros(f.B, self.n, self.N, dtype=torch.bool, device=self.device)
        holder = v["holder"]
        has = holder >= 0
        known[f.rows[has], holder[has], f.trump_card[has]] = True
        return known

    def public_out(self, f: Features, v: dict) -> torch.Tensor:
        """bool[B, N]: cards in no hand that every seat knows of (the face-up trump card)."""
        out = torch.zeros(f.B, self.N, dtype=torch.bool, device=self.device)
        free = v["holder"] < 0
        out[f.rows[free], f.trump_card[free]] = True
        return out

    def seat_weight(self, f: Features, v: dict) -> torch.Tensor:
        return torch.full((f.B, self.n), self.brain.trump_weight, dtype=F64, device=self.device)

    def likely(self, f: Features, v: dict) -> tuple[torch.Tensor, torch.Tensor]:
        """(card int64[B, n] or -1, probability float64[B, n]): a card each seat's bidding says it holds."""
        return (torch.full((f.B, self.n), -1, dtype=torch.int64, device=self.device),
                torch.zeros(f.B, self.n, dtype=F64, device=self.device))

    def before_choice(self, f: Features, v: dict) -> tuple[torch.Tensor, torch.Tensor] | None:
        """An answer that comes before :meth:`choose_card` (action, where it applies), or None."""
        return None

    # ------------------------------------------------------------------ what the seat knows
    def number(self, f: Features, name: str) -> torch.Tensor:
        """int64[B, k]: a piece of numbers, unscaled (round half to even, as the Python ``round``)."""
        codec = self.observer_codecs[name]
        scale = codec.scale if hasattr(codec, "scale") else codec.scales[0]
        return torch.round(f.cut(name).to(F64) / scale).to(torch.int64)

    def view(self, f: Features) -> dict:
        B, n, N, T = f.B, self.n, self.N, self.T
        v: dict[str, Any] = {}
        s = f.suit
        v["trumps"] = self.trump.index_select(0, s)
        trick = f.cut("trick_cards").view(B, T, n, N) > 0
        leaders = f.cut("trick_leader").view(B, T, n) > 0
        played_by = trick.any(dim=1)  # [B, n, N]
        v["played_by"] = played_by
        played = played_by.any(dim=1)
        v["played"] = played
        taken = f.cut("trump_taken_by")
        v["holder"] = torch.where(taken.sum(dim=1) > 0, taken.argmax(dim=1), -1)
        v["won"] = torch.round(f.cut("tricks_won").to(F64) * T).to(torch.int64)
        v["pot"] = self.number(f, "pot")[:, 0] if "pot" in self.observer_codecs else torch.zeros(
            B, dtype=torch.int64, device=self.device)
        v["chips"] = self.number(f, "chips") if "chips" in self.observer_codecs else torch.zeros(
            B, n, dtype=torch.int64, device=self.device)
        v["scores"] = self.number(f, "scores") if "scores" in self.observer_codecs else torch.zeros(
            B, n, dtype=torch.int64, device=self.device)
        role_idx = f.roles.float().argmax(dim=2)
        v["role"] = role_idx
        players = (f.roles & self.playing[None, None, :]).any(dim=2)
        v["players"] = players
        opponents = players.clone()
        opponents[:, 0] = False
        v["opponents"] = opponents
        # the trick in progress, in play order
        started = leaders.any(dim=2).sum(dim=1)
        t_cur = (started - 1).clamp_min(0)
        cur = trick[f.rows, t_cur]  # [B, n, N]
        has = cur.any(dim=2)
        card = cur.to(torch.float32) @ self.card_ids
        leader = leaders[f.rows, t_cur].to(torch.float32).argmax(dim=1)
        in_progress = (started > 0) & (has.sum(dim=1) < players.sum(dim=1))
        order = self.seat_order[leader]  # [B, n]
        v["in_progress"] = in_progress
        v["tricks_left"] = T - (started - in_progress.to(torch.int64))
        v["order_seats"] = order
        v["order_cards"] = card.to(torch.int64).gather(1, order)
        v["order_has"] = has.gather(1, order)
        first = v["order_cards"][:, 0]
        v["first"] = first
        v["rule"] = (self.rule[s, first] & in_progress).to(torch.int64)
        win, who = first, order[:, 0]
        for k in range(1, n):
            c = v["order_cards"][:, k]
            better = v["order_has"][:, k] & self.wins[s, v["rule"], win, c]
            win = torch.where(better, c, win)
            who = torch.where(better, order[:, k], who)
        v["win"], v["who"] = win, who
        # to follow: players that have not played to this trick, after this seat, in play order
        lead_now = torch.where(in_progress, leader.to(torch.int64), 0)
        follow_order = self.seat_order[lead_now]
        played_now = torch.zeros(B, n, dtype=torch.bool, device=self.device)
        played_now[in_progress] = has[in_progress]
        v["follow_order"] = follow_order
        v["to_follow"] = (players & ~played_now).gather(1, follow_order)
        v["to_follow"][:, :] &= follow_order != 0
        # cards: known, unseen, excluded, pools
        known = self.known_cards(f, v) & ~played[:, None, :]
        known[:, 0] = False
        v["known"] = known
        unseen = ~(f.hand | f.cut("own_discards").bool() | played) & ~self.public_out(f, v) & ~known.any(dim=1)
        v["unseen"] = unseen
        v["excluded"] = self.exclusions(f, v, trick, leaders, s)
        v["pool"] = unseen[:, None, :] & ~v["excluded"]
        v["h"] = self.hand_size - played_by.sum(dim=2) - known.sum(dim=2)
        v["weight"] = self.seat_weight(f, v)
        v["likely"], v["likely_p"] = self.likely(f, v)
        return v

    def exclusions(self, f: Features, v: dict, trick: torch.Tensor, leaders: torch.Tensor,
                   s: torch.Tensor) -> torch.Tensor:
        """bool[B, n, N]: per seat, the cards its plays prove it lacks (``TrickStrategy.exclusions``)."""
        B, n, N, T = f.B, self.n, self.N, self.T
        out = torch.zeros(B, n, N, dtype=torch.bool, device=self.device)
        card = (trick.to(torch.float32) @ self.card_ids).to(torch.int64)  # [B, T, n]
        has = trick.any(dim=3)
        for t in range(T):
            started = leaders[:, t].any(dim=1)
            if not bool(started.any()):
                break
            lead = leaders[:, t].to(torch.float32).argmax(dim=1).to(torch.int64)
            order = self.seat_order[lead]
            cards = card[:, t].gather(1, order)
            hs = has[:, t].gather(1, order) & started[:, None]
            first = cards[:, 0]
            rule = self.rule[s, first].to(torch.int64)
            led = self.eff[s, first]
            win = first
            for k in range(1, n):
                c = cards[:, k]
                ok = hs[:, k]
                seat = order[:, k]
                rows = ((s * 4 + led) * N + win) * N + c
                ex = self.excl.index_select(0, rows) & ok[:, None]
                out[f.rows, seat] |= ex
                win = torch.where(ok & self.wins[s, rule, win, c], c, win)
        return out

    # ------------------------------------------------------------------ chances
    def beat_chance(self, v: dict, beaters: torch.Tensor, led: torch.Tensor) -> torch.Tensor:
        """float64[B, n, K]: chance that each seat beats each of K targets, given per target the cards that
        beat it (bool[B, K, N]) and the effective led suit's cards (bool[B, K, N]); ``DealView.beat_chance``."""
        pool, known, trumps = v["pool"], v["known"], v["trumps"]
        f32 = torch.float32
        poolf = pool.to(f32)
        pool_tr = (pool & trumps[:, None, :]).to(f32)
        bt = beaters.to(f32).transpose(1, 2)  # [B, N, K]
        lm = led.to(f32).transpose(1, 2)
        up_m = (beaters & led).to(f32).transpose(1, 2)
        out_m = (beaters & ~led).to(f32).transpose(1, 2)

        def counts(m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return torch.bmm(poolf, m).to(F64), torch.bmm(pool_tr, m).to(F64)

        extra = (v["weight"] - 1.0)[:, :, None]
        u = poolf.sum(dim=2, dtype=F64)[:, :, None] + extra * pool_tr.sum(dim=2, dtype=F64)[:, :, None]
        c_f, t_f = counts(lm)
        c_up, t_up = counts(up_m)
        c_out, t_out = counts(out_m)
        w_up = c_up + extra * t_up
        w_f = c_f + extra * t_f
        w_out = c_out + extra * t_out
        h = v["h"][:, :, None].expand_as(w_up)
        follows = torch.bmm(known.to(f32), lm) > 0
        known_beats = torch.bmm(known.to(f32), bt) > 0
        miss_up = self.miss_all(u, w_up, h)
        beat = 1.0 - miss_up
        void_part = self.miss_all(u, w_f, h) * (1.0 - self.miss_all(u - w_f, w_out, h))
        beat = torch.where(w_out != 0, beat + void_part, beat)
        q = torch.where(follows, 1.0 - miss_up, beat)
        card, p = v["likely"], v["likely_p"]
        has_likely = card >= 0
        if bool(has_likely.any()):
            cl = card.clamp_min(0)
            in_pool = pool.gather(2, cl[:, :, None])[:, :, 0] & has_likely  # [B, n]
            beats_l = beaters.gather(2, cl[:, None, :].expand(-1, beaters.shape[1], -1)).transpose(1, 2)  # [B, n, K]
            adj = in_pool[:, :, None] & beats_l
            q = torch.where(adj, p[:, :, None] + (1.0 - p[:, :, None]) * q, q)
        q = torch.where(h <= 0, 0.0, q)
        return torch.where(known_beats, 1.0, q)

    def miss_all(self, pool: torch.Tensor, bad: torch.Tensor, hand: torch.Tensor) -> torch.Tensor:
        """:func:`agents.scripted.common.miss_all`, elementwise."""
        p = torch.ones_like(pool)
        for i in range(self.hand_size):
            step = p * ((pool - bad - i).clamp_min(0.0) / (pool - i))
            p = torch.where(i < hand, step, p)
        p = torch.where(pool - bad < hand, 0.0, p)
        return torch.where((bad <= 0) | (hand <= 0), 1.0, p)

    def product(self, chance: torch.Tensor, seats: torch.Tensor, order: torch.Tensor | None = None) -> torch.Tensor:
        """float64[B, K]: the product over ``seats`` (bool[B, n], in ``order`` [B, n] or ascending) of 1 - chance."""
        p = torch.ones(chance.shape[0], chance.shape[2], dtype=F64, device=self.device)
        for k in range(self.n):
            if order is None:
                seat = torch.full((chance.shape[0],), k, dtype=torch.int64, device=self.device)
                on = seats[:, k]
            else:
                seat = order[:, k]
                on = seats[:, k]
            factor = 1.0 - chance[torch.arange(chance.shape[0], device=self.device), seat]
            p = torch.where(on[:, None], p * factor, p)
        return p

    # ------------------------------------------------------------------ play
    def choose_card(self, f: Features, v: dict) -> torch.Tensor:
        """``TrickStrategy.choose_card`` over the hand's cards: H = hand size slots per row, the cards of
        the hand in increasing id (the order of ``iter_bits``), the unused slots masked."""
        B, N, T, H = f.B, self.N, self.T, self.hand_size
        s = f.suit
        rows = f.rows
        hand = f.hand
        trumps = v["trumps"]
        ids = torch.arange(N, device=self.device)
        slot_card = torch.where(hand, ids, N).sort(dim=1).values[:, :H]  # [B, H]
        ok = slot_card < N
        card = slot_card.clamp_max(N - 1)
        legal = f.legal.gather(1, card) & ok  # the legal cards are cards of the hand
        me = torch.zeros(B, dtype=torch.int64, device=self.device)
        won = v["won"][:, 0]
        table = self.payoff_table(f, v, me)  # [B, T + 1]
        # the chance that each hand card wins a trick it leads, against the opponents (ascending)
        rule_lead = self.rule[s[:, None], card].to(torch.int64)
        lead_beaters = self.beaters[s[:, None], rule_lead, card]  # [B, H, N]
        lead_led = self.emask[s[:, None], self.eff[s[:, None], card]]  # [B, H, N]
        lead_beat = self.beat_chance(v, lead_beaters, lead_led)  # [B, n, H]
        lead = self.product(lead_beat, v["opponents"])  # [B, H]
        # the chance that each hand card, played now, wins this trick
        in_prog = v["in_progress"]
        to_follow = v["to_follow"]
        rule = v["rule"]
        led_now = self.emask[s, self.eff[s, v["first"]]]  # [B, N]
        follow_beaters = self.beaters[s[:, None], rule[:, None], card]  # [B, H, N]
        follow_beat = self.beat_chance(v, follow_beaters, led_now[:, None, :].expand(-1, H, -1))
        p_follow = self.product(follow_beat, to_follow, v["follow_order"])
        wins_now = self.wins[s[:, None], rule[:, None], v["win"][:, None], card]  # [B, H]
        locks_now = self.locks[s[:, None], rule[:, None], card]
        p_trick = torch.where(wins_now, torch.where(locks_now, 1.0, p_follow), 0.0)
        lead_win = self.product(lead_beat, to_follow, v["follow_order"])
        win_chance = torch.where(in_prog[:, None], p_trick, lead_win)
        weak = f.weak.gather(1, card)  # [B, H]: the order of weakest
        big = torch.iinfo(torch.int32).max

        def weakest(among: torch.Tensor) -> torch.Tensor:
            slot = torch.where(among, weak, big).argmin(dim=1)
            return card[rows, slot]

        # the trick is lost whatever is played: throw the card least likely to win later
        mono = torch.ones(B, dtype=torch.bool, device=self.device)
        for i in range(T):
            mono &= (i < won) | (table[:, i] <= table[:, i + 1])
        lost = in_prog & mono & ~(legal & wins_now).any(dim=1)
        lc = torch.where(legal, lead, torch.inf)
        throw = weakest(legal & (lc == lc.amin(dim=1, keepdim=True)))
        # the expected payoff of each card (see TrickStrategy.choose_card)
        deny = self.deny_value(f, v)
        is_tr = trumps.gather(1, card) & ok  # [B, H]
        beats_x = self.beats3[s[:, None], card]  # [B, H(x), N]: the cards that beat x
        higher = (beats_x & v["unseen"][:, None, :]).sum(dim=2)  # [B, H]
        x_beaten_by = beats_x.gather(2, card[:, None, :].expand(-1, H, -1))  # [B, x, c]: c beats x
        eye = torch.eye(H, dtype=torch.bool, device=self.device)[None]
        below = ~x_beaten_by & ~eye & is_tr[:, None, :]  # [B, x, j]: hand trump j below x
        lower_hand = below.sum(dim=2)  # [B, x]
        rest_lower = lower_hand[:, None, :] - below.transpose(1, 2).to(torch.int64)  # [B, c, x]
        guard = (higher > 0)[:, None, :] & (rest_lower >= higher[:, None, :])
        suit_masks = self.emask[s]  # [B, 4, N]
        in_suit = (hand[:, None, :] & suit_masks).sum(dim=2)  # [B, 4]
        c_in = suit_masks.gather(2, card[:, None, :].expand(-1, 4, -1)).transpose(1, 2)  # [B, c, 4]
        empty = (in_suit[:, None, :] - (c_in & ok[:, :, None]).to(torch.int64)) == 0
        live_suit = (v["unseen"][:, None, :] & suit_masks).any(dim=2)  # [B, 4]
        side = torch.arange(4, device=self.device)[None, :] != s[:, None]
        void = (empty & (live_suit & side)[:, None, :]).any(dim=2)  # [B, c]
        p = lead[:, None, :].expand(B, H, H)
        tr = is_tr[:, None, :]
        p_g = torch.where(guard & tr, p + (1.0 - p) * self.guard, p)
        p_r = torch.where(tr & (p_g < 0.9) & void[:, :, None], p_g + (1.0 - p_g) * self.ruff, p_g)
        p_t = torch.where(tr, torch.where(p_r > 1.0, 1.0, p_r), p)
        fs = p_t ** self.power_exp  # [B, c, x]
        member = ok[:, None, :] & ~eye  # x in the rest of the hand after c
        dist = torch.zeros(B, H, H + 1, dtype=F64, device=self.device)
        dist[:, :, 0] = 1.0
        for x in range(H):
            px = fs[:, :, x:x + 1]
            nxt = dist * (1.0 - px)
            nxt[:, :, 1:] += dist[:, :, :-1] * px
            dist = torch.where(member[:, :, x:x + 1], nxt, dist)
        lose = torch.zeros(B, H, dtype=F64, device=self.device)
        win = torch.zeros(B, H, dtype=F64, device=self.device)
        for i in range(H + 1):
            q = dist[:, :, i]
            lo = table.gather(1, (won + i).clamp_max(T)[:, None])
            hi = table.gather(1, (won + 1 + i).clamp_max(T)[:, None])
            lose = lose + torch.where(q != 0, q * lo, 0.0)
            win = win + torch.where(q != 0, q * hi, 0.0)
        ev = win_chance * (win + deny[:, None]) + (1.0 - win_chance) * lose
        key = torch.where(legal, torch.round(ev * 1e9), -torch.inf)
        best = weakest(legal & (key == key.amax(dim=1, keepdim=True)))
        answer = torch.where(lost, throw, best)
        before = self.before_choice(f, v)
        if before is not None:
            action, applies = before
            answer = torch.where(applies, action, answer)
        return answer

    # ------------------------------------------------------------------ exchange (TrickStrategy.exchange_plan)
    def virtual_beat(self, v: dict, beaters: torch.Tensor, led: torch.Tensor) -> torch.Tensor:
        """float64[B, K]: ``DealView.virtual_beat_chance``: an opponent not yet known holds a hand of
        ``opponent_hand`` unseen cards, trumps weighted by ``trump_weight``."""
        unseen, trumps = v["unseen"], v["trumps"]
        f32 = torch.float32
        pool = unseen.to(f32)[:, None, :]
        pool_tr = (unseen & trumps).to(f32)[:, None, :]
        extra = self.brain.trump_weight - 1.0

        def w(m: torch.Tensor) -> torch.Tensor:
            mt = m.to(f32).transpose(1, 2)
            return torch.bmm(pool, mt)[:, 0].to(F64) + extra * torch.bmm(pool_tr, mt)[:, 0].to(F64)

        u = unseen.sum(dim=1, dtype=F64)[:, None] + extra * (unseen & trumps).sum(dim=1, dtype=F64)[:, None]
        h = torch.minimum(unseen.sum(dim=1), torch.full_like(unseen.sum(dim=1), self.opponent_hand))[:, None]
        h = h.expand(-1, beaters.shape[1])
        w_f, w_up, w_out = w(led), w(beaters & led), w(beaters & ~led)
        beat = 1.0 - self.miss_all(u.expand_as(w_up), w_up, h)
        void_part = self.miss_all(u.expand_as(w_f), w_f, h) * (1.0 - self.miss_all(u - w_f, w_out, h))
        return torch.where(w_out != 0, beat + void_part, beat)

    def hand_chances(self, f: Features, v: dict, full: torch.Tensor, opp: torch.Tensor) -> torch.Tensor:
        """float64[B, N]: ``TrickStrategy.hand_chances(v, full, opp)`` for every card (meaningful in ``full``),
        ``opp`` (float64[B]) opponents not yet known, before play (the ruff counts whatever the voids)."""
        N = self.N
        s = f.suit
        ids = torch.arange(N, device=self.device)
        rule = self.rule[s].to(torch.int64)
        beaters = self.beaters[s[:, None], rule, ids[None, :]]  # [B, N, N]: beaters(t, x, x)
        led = self.emask[s[:, None], self.eff[s]]
        vb = self.virtual_beat(v, beaters, led)
        p = torch.where(opp[:, None] != 0, (1.0 - vb) ** opp[:, None], 1.0)
        trumps = v["trumps"]
        beats = self.beats3[s]  # [B, x, j]
        higher = (beats & v["unseen"][:, None, :]).sum(dim=2)
        eye = torch.eye(N, dtype=torch.bool, device=self.device)[None]
        lower = (full & trumps)[:, None, :] & ~beats & ~eye
        guard = (higher > 0) & (lower.sum(dim=2) >= higher) & trumps
        p = torch.where(guard, p + (1.0 - p) * self.guard, p)
        p = torch.where(trumps & (p < 0.9), p + (1.0 - p) * self.ruff, p)
        chance = torch.where(p < 1.0, p, 1.0) ** self.power_exp
        return torch.where(trumps, chance, chance * self.brain.side_discount)

    def stock_left(self, f: Features, v: dict) -> torch.Tensor:
        """int64[B]: ``TrickStrategy.stock_left``."""
        ex = f.cut("exchanged").view(f.B, self.n, -1)
        count = ex.argmax(dim=2) - 1  # -1: not yet
        drawn = count.clamp_min(0).sum(dim=1)
        if self.brain.knock_draws_trump_card and "knock" in self.piece:
            knocked = f.cut("knock")[:, 0] > 0
            dealer_done = count[f.rows, f.dealer] > 0
            drawn = drawn - (knocked & (v["holder"] >= 0) & dealer_done).to(torch.int64)
        dealt = f.live.sum(dim=1) * self.hand_size + 1
        return (self.N - dealt - drawn).clamp_min(0)

    def draw_chance(self, f: Features, v: dict, m: torch.Tensor) -> torch.Tensor:
        """float64[B]: ``TrickStrategy.draw_chance`` with ``m`` (float64[B]) opponents, before play."""
        b = self.brain
        s = f.suit
        unseen, trumps = v["unseen"], v["trumps"]
        u_i = unseen.sum(dim=1)
        u = u_i.to(F64)
        n_tr_i = (unseen & trumps).sum(dim=1)
        n_tr = n_tr_i.to(F64)
        held = (u_i - self.stock_left(f, v)).clamp_min(0).to(F64)
        heavy = u + (b.stock_weight - 1.0) * n_tr
        safe = torch.where(heavy != 0, heavy, 1.0)
        in_tr = torch.where(heavy != 0, (1.0 - held * b.stock_weight / safe).clamp_min(0.0), 0.0)
        in_side = torch.where(heavy != 0, (1.0 - held / safe).clamp_min(0.0), 0.0)
        suit_counts = (unseen[:, None, :] & self.emask[s]).sum(dim=2)  # [B, 4]
        side = torch.arange(4, device=self.device)[None, :] != s[:, None]
        sides = torch.where(side, suit_counts, torch.iinfo(torch.int64).max).sort(dim=1).values[:, :3]
        h = torch.minimum(u_i, torch.full_like(u_i, self.opponent_hand))
        own = (f.hand & trumps).sum(dim=1)
        w = b.trump_weight
        uw = u + (w - 1.0) * n_tr
        power = self.power_exp
        # every term at once, then summed in the Python loops' order
        J = int(n_tr_i.max()) if n_tr_i.numel() else 0
        total = torch.zeros_like(u)
        if J:
            j = torch.arange(J, device=self.device)[None, :]
            col = lambda x: x[:, None].expand(-1, J)  # noqa: E731
            p = (1.0 - self.beat_odds(col(uw), col(h), col(n_tr * w), (j * w).to(F64).expand(u.shape[0], -1),
                                      torch.zeros(u.shape[0], J, dtype=F64, device=self.device))) ** col(m)
            p = torch.where((j > 0) & (col(own) >= j), p + (1.0 - p) * b.guard_value, p)
            p = torch.where(p < 0.9, p + (1.0 - p) * b.ruff_value, p)
            term = torch.where(p < 1.0, p, 1.0) ** power
            on = j < col(n_tr_i)
            for i in range(J):
                total = torch.where(on[:, i], total + term[:, i], total)
        out = n_tr * w
        side_sum = torch.zeros_like(u)
        nf_i = sides.clamp_max(self.N)  # [B, 3]
        J = int(nf_i.max()) if nf_i.numel() else 0
        if J:
            j = torch.arange(J, device=self.device)[None, None, :].expand(u.shape[0], 3, -1)
            col = lambda x: x[:, None, None].expand(-1, 3, J)  # noqa: E731
            nf = nf_i.to(F64)[:, :, None].expand(-1, -1, J)
            q = (1.0 - self.beat_odds(col(uw), col(h), nf, j.to(F64), col(out))) ** col(m)
            term = b.side_discount * torch.where(q < 1.0, q, 1.0) ** power
            on = j < nf_i[:, :, None]
            for k in range(3):
                for i in range(J):
                    side_sum = torch.where(on[:, k, i], side_sum + term[:, k, i], side_sum)
        weight = n_tr * in_tr + (u - n_tr) * in_side
        tot = total * in_tr + side_sum * in_side
        return torch.where(weight != 0, tot / torch.where(weight != 0, weight, 1.0), 0.0)

    def beat_odds(self, pool, hand, follow, up, void_beat):
        """:func:`agents.scripted.common.beat_odds`, elementwise."""
        p = 1.0 - self.miss_all(pool, up, hand)
        extra = self.miss_all(pool, follow, hand) * (1.0 - self.miss_all(pool - follow, void_beat, hand))
        return torch.where(void_beat != 0, p + extra, p)

    def exchange_plan(self, f: Features, v: dict, table: torch.Tensor, limit: torch.Tensor, opp: torch.Tensor,
                      draws_done: torch.Tensor, min_throw: torch.Tensor, extra: torch.Tensor | None = None,
                      draw_offset: int = 0, fresh: torch.Tensor | None = None
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``TrickStrategy.exchange_plan`` without ``slots``: (bool[B, N] the cards to throw, bool[B] whether any
        plan was made, float64[B] its expected payoff). ``fresh`` (int64[B]): draws the stock still holds."""
        B, N, H, T = f.B, self.N, self.hand_size, self.T
        hand = f.hand
        full = hand if extra is None else hand | extra
        chances = self.hand_chances(f, v, full, opp)
        ids = torch.arange(N, device=self.device)
        slot_card = torch.where(hand, ids, N).sort(dim=1).values[:, :H]  # ascending card id; N: no card
        ok = slot_card < N
        ch = torch.where(ok, chances.gather(1, slot_card.clamp_max(N - 1)), torch.inf)
        ch, order = ch.sort(dim=1, stable=True)  # by (chance, card)
        slot_card = slot_card.gather(1, order)
        count = ok.sum(dim=1)
        fixed = None
        if extra is not None:
            ex_card = extra.to(torch.uint8).argmax(dim=1)
            fixed = (extra.any(dim=1), chances.gather(1, ex_card[:, None])[:, 0])
        dp = self.draw_chance(f, v, opp)
        top = torch.minimum(limit, count)
        # Every throw count k = 0..H at once (column k), each column's additions in the Python loop's order:
        # a column skips an addition with torch.where, which leaves its values bit for bit as they were.
        K = H + 1
        k = torch.arange(K, device=self.device)[None, :]
        dist = torch.zeros(B, K, T + 2, dtype=F64, device=self.device)
        dist[:, :, 0] = 1.0

        def add(dist: torch.Tensor, p: torch.Tensor, on: torch.Tensor) -> torch.Tensor:
            """Add one trick won with chance ``p`` ([B] or [B, K]) in the columns ``on`` ([B, K])."""
            p = p if p.dim() == 2 else p[:, None]
            nxt = dist * (1.0 - p)[:, :, None]
            nxt[:, :, 1:] += dist[:, :, :-1] * p[:, :, None]
            return torch.where(on[:, :, None], nxt, dist)

        for j in range(H):  # column k adds the kept slots j = k..H-1
            kept = j < count
            dist = add(dist, torch.where(kept, ch[:, j], 0.0), (k <= j) & kept[:, None])
        if fixed is not None:
            dist = add(dist, fixed[1], fixed[0][:, None].expand(-1, K))
        draws = (draws_done[:, None] + k - draw_offset).clamp_min(0)  # [B, K]
        fresh_draws = draws if fresh is None else torch.minimum(draws, fresh.clamp_min(0)[:, None])
        for d in range(H + 1):
            dist = add(dist, dp, d < fresh_draws)
        if fresh is not None:
            stale = dp * self.brain.reshuffle_value
            for d in range(H + 1):
                dist = add(dist, stale, d < draws - fresh_draws)
        ev_all = torch.zeros(B, K, dtype=F64, device=self.device)
        for i in range(T + 1):
            ev_all = ev_all + torch.where(dist[:, :, i] != 0, dist[:, :, i] * table[:, None, i], 0.0)
        best_ev = torch.full((B,), -torch.inf, dtype=F64, device=self.device)
        best_n = torch.full((B,), -1, dtype=torch.int64, device=self.device)
        for n_throw in range(K):
            valid = (n_throw >= min_throw) & (n_throw <= top)
            ev = ev_all[:, n_throw]
            better = valid & ((best_n < 0) | (ev > best_ev + 1e-9))
            best_ev = torch.where(better, ev, best_ev)
            best_n = torch.where(better, n_throw, best_n)
        slots = torch.arange(H, device=self.device)[None, :]
        throw_slots = (slots < best_n[:, None]) & (slot_card < N)
        throw = torch.zeros(B, N + 1, dtype=torch.bool, device=self.device)  # column N takes the empty slots
        throw.scatter_(1, slot_card, throw_slots)
        return throw[:, :N], best_n >= 0, best_ev

    def expected(self, table: torch.Tensor, probs: torch.Tensor, on: torch.Tensor) -> torch.Tensor:
        """float64[B]: :func:`agents.scripted.common.expected` over the chances ``probs`` [B, K] where ``on``,
        in their order."""
        B, T = table.shape[0], self.T
        dist = torch.zeros(B, T + 2, dtype=F64, device=self.device)
        dist[:, 0] = 1.0
        for j in range(probs.shape[1]):
            p = probs[:, j]
            nxt = dist * (1.0 - p)[:, None]
            nxt[:, 1:] += dist[:, :-1] * p[:, None]
            dist = torch.where(on[:, j:j + 1], nxt, dist)
        ev = torch.zeros(B, dtype=F64, device=self.device)
        for i in range(T + 1):
            ev = ev + torch.where(dist[:, i] != 0, dist[:, i] * table[:, i], 0.0)
        return ev

    def mark(self, f: Features, throw: torch.Tensor) -> torch.Tensor:
        """``TrickStrategy.mark``: the weakest legal card of ``throw``, else ``done``, else the weakest legal card."""
        return self.next_mark(f, throw)

    def payoff_table(self, f: Features, v: dict, seat: torch.Tensor, **kw: Any) -> torch.Tensor:
        t = torch.arange(self.T + 1, device=self.device)[None, :].expand(f.B, -1)
        others = (f.live.sum(dim=1) - 1).clamp_min(1)
        share = (self.field_share * self.trick_unit(v).to(F64)) / others
        return self.payoff(v, seat, t, **kw).to(F64) + share.to(F64)[:, None] * t.to(F64)

    def deny_value(self, f: Features, v: dict) -> torch.Tensor:
        who = v["who"]
        got = v["won"].gather(1, who[:, None])
        pay = self.payoff(v, who, torch.cat([got + 1, got], dim=1)).to(F64)
        loss = pay[:, 0] - pay[:, 1]
        urgency = 1.0 / v["tricks_left"].clamp_min(1).to(F64)
        value = self.deny_weight * (loss - self.trick_unit(v)).clamp_min(0.0) * urgency / max(1, self.n - 1)
        on = v["in_progress"] & (v["players"].sum(dim=1) >= 2) & (who != 0)
        return torch.where(on, value, 0.0)

    @property
    def observer_codecs(self) -> dict:
        codecs = getattr(self, "_codecs", None)
        if codecs is None:
            observer = self.rows.reader.observer
            codecs = self._codecs = {name: observer.by_name[name].codec for name in ("pot", "chips", "scores")
                                     if name in observer.by_name}
        return codecs


def _pot_payoff(v: dict, seat: torch.Tensor, tricks: torch.Tensor, need: torch.Tensor, T: int,
                per_missing: bool) -> torch.Tensor:
    """:func:`agents.scripted.common.pot_payoff`, int64."""
    pot = v["pot"][:, None]
    gain = pot // T * tricks
    short = (need[:, None] - tricks).clamp_min(0)
    owed = pot * (short if per_missing else short.clamp_max(1))
    chips = v["chips"].gather(1, seat[:, None])
    return gain - torch.minimum(owed, chips + gain)


class MouselExpertT(TrickExpertT):
    """:class:`MouselExpert`: a flat bete of the pot below the requirement (two for the committed seat)."""

    python = MouselExpert

    def payoff(self, v, seat, tricks, need=None):
        if need is None:
            need = 1 + (v["role"].gather(1, seat[:, None])[:, 0] == self.role_pos[Role.COMMITTED]).to(torch.int64)
        return _pot_payoff(v, seat, tricks, need, self.T, per_missing=False)

    def _on_knock(self, f: Features) -> torch.Tensor:
        v = {"pot": self.number(f, "pot")[:, 0]}
        rank = self.rank_pos[f.trump_card]
        king = (rank == 1) & (self.n <= 4) & (self._pressure(v) <= 0.25 + 0.25 * self.brain.risk)
        return torch.where((rank == 0) | king, self.ids["knock"], self.ids["no_knock"])

    def _value_in(self, f: Features, v: dict, need: torch.Tensor) -> torch.Tensor:
        """``MouselExpert._value_in``: coming in with ``need`` tricks to make, after the best exchange."""
        role = v["role"]
        ins = ((role == self.role_pos[Role.IN]) | (role == self.role_pos[Role.COMMITTED]))[:, 1:].sum(dim=1)
        later = (f.live & (role == self.role_pos[Role.UNDECIDED]))[:, 1:].sum(dim=1)
        join = self.brain.join_rate
        rivals = ins.to(F64) + join * later.to(F64)
        me = torch.zeros(f.B, dtype=torch.int64, device=self.device)
        table = self.payoff_table(f, v, me, need=need)
        limit = torch.full_like(me, min(self.brain.rules.exchange_limit, self.hand_size))
        zero = torch.zeros_like(me)
        _, _, play = self.exchange_plan(f, v, table, limit, torch.where(rivals > 1.0, rivals, 1.0), zero, zero)
        alone = (1.0 - join) ** later.to(F64)
        return torch.where(ins > 0, play, alone * v["pot"].to(F64) + (1.0 - alone) * play)

    def _on_declare(self, f: Features) -> torch.Tensor:
        v = self.view(f)
        role = v["role"]
        committed = (role == self.role_pos[Role.COMMITTED]).any(dim=1)
        forehand = forehand_seat(self, f) == 0
        need = 1 + (forehand & ~committed).to(torch.int64)
        value = self._value_in(f, v, need)
        undecided_after = (f.live & (role == self.role_pos[Role.UNDECIDED]))[:, 1:].sum(dim=1)
        ins = ((role == self.role_pos[Role.IN]) | (role == self.role_pos[Role.COMMITTED]))[:, 1:].sum(dim=1)
        pot = v["pot"].to(F64)
        out = torch.where((undecided_after == 0) & (ins == 1), -pot / max(1, self.n - 1), 0.0)
        bar = out + pot * (0.1 * self._pressure(v) - 0.05 * self.brain.risk)
        answer = torch.where(value > bar, self.ids["in"], self.ids["out"])
        lead = self.ids.get("in_lead")
        if lead is not None:
            ask = f.mask[:, lead] & (need == 1)
            if bool(ask.any()):
                two = self._value_in(f, v, torch.full_like(need, 2))
                answer = torch.where(ask & (two > torch.maximum(value, bar)), lead, answer)
        return answer

    def _on_exchange(self, f: Features) -> torch.Tensor:
        """``MouselExpert._on_exchange``: the best exchange; a knocking dealer throws at least one card, takes
        the trump card and draws one card fewer."""
        v = self.view(f)
        me = torch.zeros(f.B, dtype=torch.int64, device=self.device)
        table = self.payoff_table(f, v, me)
        marked = f.cut("own_discards").sum(dim=1).round().to(torch.int64)
        opp = v["opponents"].sum(dim=1).to(F64)
        zero = torch.zeros_like(marked)
        limit = (torch.clamp_max(self.stock_left(f, v), self.brain.rules.exchange_limit) - marked).clamp_min(0)
        throw, _, _ = self.exchange_plan(f, v, table, limit, opp, marked, zero)
        knocker = torch.zeros_like(marked, dtype=torch.bool)
        if "knock" in self.piece:
            knocker = (f.cut("knock")[:, 0] > 0) & (f.dealer == 0) & (v["holder"] < 0)
        if bool(knocker.any()):
            extra = torch.zeros_like(f.hand)
            extra[f.rows, f.trump_card] = True
            throw_k, _, _ = self.exchange_plan(f, v, table, self.hand_size - marked, opp, marked,
                                            (marked == 0).to(torch.int64), extra=extra, draw_offset=1)
            throw = torch.where(knocker[:, None], throw_k, throw)
        return self.mark(f, throw)


class ClassicExpertT(TrickExpertT):
    """:class:`ClassicExpert`: a bete per trick short; the mauschler's weight and likely top trump; the
    trump card back in play after a reshuffle; pull trumps with the own tricks made."""

    python = ClassicExpert

    def need(self, v, seat):
        return 1 + (v["role"].gather(1, seat[:, None])[:, 0] == self.role_pos[Role.MAUSCHLER]).to(torch.int64)

    def payoff(self, v, seat, tricks, need=None):
        need = self.need(v, seat) if need is None else need
        return _pot_payoff(v, seat, tricks, need, self.T, per_missing=True)

    def _on_declare(self, f: Features) -> torch.Tensor:
        """``ClassicExpert._on_declare``: always with the accompanied top trump; otherwise when the hand after
        its best exchange, as the mauschler against the seats likely to go with, beats passing."""
        v = self.view(f)
        b = self.brain
        n_tr, above = self._top_trump_above(f, v, f.hand)
        others = f.live.sum(dim=1) - 1
        goers = b.go_rate * others.to(F64)
        me = torch.zeros(f.B, dtype=torch.int64, device=self.device)
        table = self.payoff_table(f, v, me, need=torch.full_like(me, 2))
        fresh = self.stock_left(f, v) - b.expected_draw * 0
        full = torch.full_like(me, self.hand_size)
        zero = torch.zeros_like(me)
        _, _, play = self.exchange_plan(f, v, table, full, goers, zero, zero, fresh=fresh)
        nobody = (1.0 - b.go_rate) ** others.to(F64)
        pot = v["pot"].to(F64)
        value = nobody * pot + (1.0 - nobody) * play
        bar = pot * (0.05 * self._pressure(v) - 0.04 * b.risk) + b.declare_margin * pot
        answer = torch.where(value > bar, self.ids["mauscheln"], self.ids["pass"])
        answer = torch.where(n_tr == 0, self.ids["pass"], answer)
        return torch.where((n_tr >= 2) & (above == 0), self.ids["mauscheln"], answer)

    def _knocked(self, f: Features) -> torch.Tensor:
        if "knock" not in self.piece:
            return torch.zeros(f.B, dtype=torch.bool, device=self.device)
        return f.cut("knock")[:, 0] > 0

    def public_out(self, f, v):
        out = super().public_out(f, v)
        if "trump_face_up" in self.piece:
            out &= (f.cut("trump_face_up")[:, 0] > 0)[:, None]
        return out

    def seat_weight(self, f, v):
        b = self.brain
        mauschler = v["role"] == self.role_pos[Role.MAUSCHLER]
        heavy = torch.where(self._knocked(f), b.knocker_weight, b.mauschler_weight).to(F64)[:, None]
        return torch.where(mauschler, heavy.expand(-1, self.n), torch.full_like(heavy, b.trump_weight))

    def likely(self, f, v):
        card, p = super().likely(f, v)
        top, any_top = f.strongest(v["unseen"] & v["trumps"])
        on = (v["role"] == self.role_pos[Role.MAUSCHLER]) & ~self._knocked(f)[:, None] & any_top[:, None]
        return (torch.where(on, top[:, None], card),
                torch.where(on, torch.full_like(p, self.brain.mauschler_top), p))

    # ------------------------------------------------------------------ bidding and exchange (not declare)
    def _on_offer(self, f: Features) -> torch.Tensor:
        return f.const(self.ids["deal"])

    def _on_knock(self, f: Features) -> torch.Tensor:
        b = self.brain
        rank = self.rank_pos[f.trump_card]
        small = self.n <= 4
        v = {"pot": self.number(f, "pot")[:, 0]}
        queen = (rank == 2) & small & bool(b.knock_queen) & (self._pressure(v) <= 0.25 * (1 + b.risk))
        knock = (rank == 0) | ((rank == 1) & small) | queen
        return torch.where(knock, self.ids["knock"], self.ids["no_knock"])

    def _side_tops(self, f: Features, v: dict, cards: torch.Tensor) -> torch.Tensor:
        """bool[B, N]: ``Strategy.side_tops``: the non-trumps of ``cards`` no unseen card of their suit beats."""
        trumps = v["trumps"]
        beaten = (self.beats3[f.suit] & (v["unseen"] & ~trumps)[:, None, :]).any(dim=2)
        return cards & ~trumps & ~beaten

    def _top_trump_above(self, f: Features, v: dict, cards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(number of trumps in ``cards``, unseen cards above the strongest of them)."""
        trumps = cards & v["trumps"]
        top, _ = f.strongest(trumps)
        above = (self.beats3[f.suit, top] & v["unseen"]).sum(dim=1)
        return trumps.sum(dim=1), above

    def _on_go_with(self, f: Features) -> torch.Tensor:
        v = self.view(f)
        b = self.brain
        role = v["role"]
        n_tr, above = self._top_trump_above(f, v, f.hand)
        goer = role == self.role_pos[Role.GOER]
        going = ((role == self.role_pos[Role.MAUSCHLER]) | goer)[:, 1:].sum(dim=1)
        undecided = (f.live & ((role == self.role_pos[Role.UNDECIDED]) | (role == self.role_pos[Role.DECLINED]))
                     )[:, 1:].sum(dim=1)
        rivals = (going + b.go_rate * undecided.to(F64)) - 0.5 * b.risk
        last_alone = (undecided == 0) & ~goer.any(dim=1)
        knocked = self._knocked(f)
        tight = knocked | (self._pressure(v) > 0.5)
        go, out = self.ids["go"], self.ids["pass"]
        aces = self._side_tops(f, v, f.hand).any(dim=1)
        answer = torch.where(last_alone & aces & ~knocked, go, out)
        one = n_tr == 1
        answer = torch.where(one, torch.where(last_alone | ((rivals <= 1.5) & ~tight), go, out), answer)
        answer = torch.where(one & (above == 1), torch.where(tight & (rivals >= 2), out, go), answer)
        answer = torch.where(n_tr >= 2, torch.where(tight & (above >= 2) & (rivals >= 2), out, go), answer)
        return torch.where((n_tr > 0) & (above == 0), go, answer)

    def _on_exchange(self, f: Features) -> torch.Tensor:
        """``ClassicExpert._on_exchange``: keep trumps and side tops (beside a lone trump that is not the top one
        the side tops go too); the knocker's last discard is the card least likely to take a trick."""
        v = self.view(f)
        trump_card = torch.zeros_like(f.hand)
        trump_card[f.rows, f.trump_card] = True
        # the final discard (4d, the forced knock): exactly one card goes, the trump card comes
        full = f.hand | trump_card
        opp = v["opponents"].sum(dim=1).clamp_min(1).to(F64)
        chances = self.hand_chances(f, v, full, opp)
        suit_of = self.eff[f.suit]  # [B, N]
        in_suit = (full[:, None, :] & self.emask[f.suit]).sum(dim=2)  # [B, 4]
        alone = ~v["trumps"] & (in_suit.gather(1, suit_of) == 1)
        key = torch.where(alone, chances - self.brain.void_bonus, chances)
        key = torch.where(f.legal, key, torch.inf)
        least = key == key.amin(dim=1, keepdim=True)
        ids = torch.arange(self.N, device=self.device)
        give = torch.where(least & f.legal, ids, self.N).amin(dim=1).clamp_max(self.N - 1)
        final = ~f.legal_action("done")
        # the marks of the exchange
        ex = f.cut("exchanged").view(f.B, self.n, -1)
        knocker = self._knocked(f) & (f.dealer == 0) & (ex[:, 0].argmax(dim=1) == 0)
        hand = torch.where(knocker[:, None], f.hand | trump_card, f.hand)
        n_tr, above = self._top_trump_above(f, v, hand)
        bare = (n_tr == 1) & (above >= 1)
        keep = (hand & v["trumps"]) | torch.where(bare[:, None], False, self._side_tops(f, v, hand))
        return torch.where(final, give, self.mark(f, f.hand & ~keep))

    def before_choice(self, f, v):
        """``_pull_trumps``: leading, own tricks made, two or more others short, trumps in hand."""
        seats = torch.arange(self.n, device=self.device)[None, :].expand(f.B, -1)
        need = torch.stack([self.need(v, seats[:, k]) for k in range(self.n)], dim=1)
        made = v["won"][:, 0] >= need[:, 0]
        playing = (v["role"] == self.role_pos[Role.MAUSCHLER]) | (v["role"] == self.role_pos[Role.GOER])
        short = (playing & (v["won"] < need))[:, 1:].sum(dim=1)
        strongest, any_trump = f.strongest(f.legal & v["trumps"])
        return strongest, ~v["in_progress"] & made & (short >= 2) & any_trump


class DecideExchange:
    """``DecideExpert._on_exchange`` (mouche, muschka): the best exchange against the rivals."""

    def rivals(self, f: Features, v: dict) -> torch.Tensor:
        """float64[B]: ``DecideExpert.rivals``."""
        b = self.brain
        role = v["role"]
        stayed = role == self.role_pos[Role.STAYED]
        inn = stayed | (role == self.role_pos[Role.EXCHANGED])
        later = f.live & (role == self.role_pos[Role.UNDECIDED])
        total = torch.zeros(f.B, dtype=F64, device=self.device)
        for k in range(1, self.n):
            add = torch.where(stayed[:, k], b.stayed_weight, 1.0)
            total = torch.where(inn[:, k], total + add, total)
        rivals = total + b.join_rate * later[:, 1:].sum(dim=1).to(F64)
        return torch.where(rivals > 1.0, rivals, 1.0)

    def exchange_rows(self, f: Features) -> torch.Tensor:
        """bool[B]: the rows this class plans (the others are left to the Python expert)."""
        return torch.ones(f.B, dtype=torch.bool, device=self.device)

    def lone_value(self, f: Features, v: dict, seat: torch.Tensor) -> torch.Tensor:
        """float64[B]: what ``seat`` gets when every other seat passes (Mouche: the pot)."""
        return v["pot"].to(F64)

    def bar(self, v: dict) -> torch.Tensor:
        return v["pot"].to(F64) * (0.05 * self._pressure(v) - 0.04 * self.brain.risk)

    def _on_decide(self, f: Features) -> torch.Tensor:
        """``DecideExpert._on_decide``: stay, the best exchange or pass, by the expected payoff."""
        v = self.view(f)
        b = self.brain
        B, N, H = f.B, self.N, self.hand_size
        me = torch.zeros(B, dtype=torch.int64, device=self.device)
        role = v["role"]
        inn = ((role == self.role_pos[Role.STAYED]) | (role == self.role_pos[Role.EXCHANGED]))[:, 1:]
        later = (f.live & (role == self.role_pos[Role.UNDECIDED]))[:, 1:]
        n_in, n_later = inn.sum(dim=1), later.sum(dim=1)
        alone = (1.0 - b.join_rate) ** n_later.to(F64)
        lone_me = self.lone_value(f, v, me)

        def with_alone(play: torch.Tensor) -> torch.Tensor:
            return torch.where(n_in > 0, play, alone * lone_me + (1.0 - alone) * play)

        opp = self.rivals(f, v)
        table = self.payoff_table(f, v, me)
        chances = self.hand_chances(f, v, f.hand, opp)
        ids = torch.arange(N, device=self.device)
        slot_card = torch.where(f.hand, ids, N).sort(dim=1).values[:, :H]
        ok = slot_card < N
        stay = with_alone(self.expected(table, chances.gather(1, slot_card.clamp_max(N - 1)), ok))
        full = torch.full_like(me, H)
        throw, _, ev = self.exchange_plan(f, v, table, full, opp, torch.zeros_like(me), torch.ones_like(me))
        exchange = with_alone(ev)
        one = (n_in + n_later) == 1
        seats = torch.arange(1, self.n, device=self.device)[None, :]
        lone = torch.where(inn | later, seats, self.n).amin(dim=1).clamp_max(self.n - 1)
        passing = torch.where(one, -self.lone_value(f, v, lone) / max(1, self.n - 1), 0.0) + self.bar(v)
        # max over (stay, exchange, pass) by (value, is stay), the first of equals
        best_v = torch.full((B,), -torch.inf, dtype=F64, device=self.device)
        best_stay = torch.zeros(B, dtype=torch.bool, device=self.device)
        best = torch.full_like(me, -1)
        for k, (legal, value) in enumerate(((f.legal_action("stay"), stay), (f.legal.any(dim=1), exchange),
                                            (f.legal_action("pass"), passing))):
            is_stay = k == 0
            better = legal & ((best < 0) | (value > best_v) | ((value == best_v) & is_stay & ~best_stay))
            best_v = torch.where(better, value, best_v)
            best_stay = torch.where(better, is_stay, best_stay)
            best = torch.where(better, k, best)
        names = torch.tensor([self.ids["stay"], -1, self.ids["pass"]], device=self.device)
        return torch.where(best == 1, self.mark(f, throw), names[best.clamp_min(0)])

    def _on_exchange(self, f: Features) -> torch.Tensor:
        v = self.view(f)
        me = torch.zeros(f.B, dtype=torch.int64, device=self.device)
        table = self.payoff_table(f, v, me)
        marked = f.cut("own_discards").sum(dim=1).round().to(torch.int64) - (v["holder"] == 0).to(torch.int64)
        throw, _, _ = self.exchange_plan(f, v, table, self.hand_size - marked, self.rivals(f, v), marked,
                                      torch.zeros_like(marked))
        return torch.where(self.exchange_rows(f), self.mark(f, throw), DEFER)


class MoucheExpertT(DecideExchange, TrickExpertT):
    """:class:`MoucheExpert`: a fifth of the pot per trick, the pot (or Méry's cap) for none; the announced
    Pamphile is known to be in its announcer's hand."""

    defers = True  # the Béatrix swap

    python = MoucheExpert

    def payoff(self, v, seat, tricks):
        pot = v["pot"][:, None]
        cap = self.brain.rules.mery_cap
        owed = pot if cap is None else pot.clamp_max(cap)
        chips = v["chips"].gather(1, seat[:, None])
        return torch.where(tricks > 0, pot // self.T * tricks, -torch.minimum(owed, chips))

    def _on_announce(self, f: Features) -> torch.Tensor:
        return f.const(self.ids["announce"])

    def _on_decide(self, f: Features) -> torch.Tensor:
        """Stay with a dealt flush ("Tausch keinen Flush"); where the Béatrix swap is open, the Python expert
        weighs it (row by row)."""
        rules = self.brain.rules
        suited = torch.ones(self.N, dtype=torch.bool, device=self.device)
        if rules.pamphile_wild and rules.jc is not None:
            suited[rules.jc] = False
        suits = ((f.hand & suited[None, :]).to(torch.float32) @ self.suit_cards) > 0
        flush = (f.hand.sum(dim=1) == self.hand_size) & (suits.sum(dim=1) == 1)
        taken = f.cut("trump_taken_by")[:, 0] > 0
        answer = super()._on_decide(f)
        answer = torch.where(flush & f.legal_action("stay") & ~taken, self.ids["stay"], answer)
        return torch.where(f.legal_action("swap") & ~(flush & f.legal_action("stay") & ~taken), DEFER, answer)

    def known_cards(self, f, v):
        known = super().known_cards(f, v)
        jc = self.brain.rules.jc
        if jc is None or "announced" not in self.piece:
            return known
        ann = f.cut("announced") > 0  # [B, n]
        on = ann & (f.trump_card != jc)[:, None]
        known[:, :, jc] |= on
        return known


class MuschkaExpertT(DecideExchange, TrickExpertT):
    """:class:`MuschkaExpert`: the fall of the own score, the ace of spades' bonus and its rule."""

    defers = True  # the ace of spades in hand

    python = MuschkaExpert

    def trick_unit(self, v):
        return torch.ones_like(v["pot"], dtype=F64)

    def payoff(self, v, seat, tricks, holder=None):
        b = self.brain
        ace = b.ace
        if holder is not None:
            pass
        elif ace is None:
            holder = torch.zeros_like(seat, dtype=torch.bool)
        else:
            mine = (v["hand"][:, ace] | v["played_by"][:, 0, ace]) & (seat == 0)
            theirs = v["played_by"][v["rows"], seat, ace] & (seat != 0)
            holder = mine | theirs
        spades = (v["suit"] == SPADES)[:, None]
        delta = torch.where(tricks > 0, -tricks, 5)
        with_ace = torch.where(tricks > 0, delta - torch.where(spades, 10, 5), 10)
        delta = torch.where(holder[:, None], with_ace, delta)
        old = v["scores"].gather(1, seat[:, None])
        new = old + delta
        return old - torch.where(new < 0, b.start, new)

    def view(self, f):
        v = super().view(f)
        v["hand"], v["rows"], v["suit"] = f.hand, f.rows, f.suit
        return v

    def lone_value(self, f, v, seat):
        """Credited five tricks without play, the ace's bonus not counted."""
        tricks = torch.full((f.B, 1), self.T, dtype=torch.int64, device=self.device)
        return self.payoff(v, seat, tricks, holder=torch.zeros_like(seat, dtype=torch.bool))[:, 0].to(F64)

    def _on_decide(self, f):
        """With the ace of spades in hand the Python expert weighs keeping or throwing it (row by row)."""
        answer = super()._on_decide(f)
        return torch.where(self.exchange_rows(f), answer, DEFER)

    def exchange_rows(self, f):
        """The exchange with the ace of spades in hand (keep it or throw it) is left to the Python expert."""
        ace = self.brain.ace
        if ace is None:
            return super().exchange_rows(f)
        return ~f.hand[:, ace]
