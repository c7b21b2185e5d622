"""The policy network: separate actor and critic MLPs over the egocentric observation, and masked sampling.

:class:`PolicyNet` maps a seat's observation to action logits and a value; illegal actions are masked
with the float minimum before any distribution is formed (:func:`masked_distribution`), the same way
at sampling and at update time. :func:`trump_first_tables` builds the optional input permutation that
puts the trump suit first, so one network sees every trump suit alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from mauscheln_env.cards import SUITS
from mauscheln_env.engine import Game
from mauscheln_env.observation import Observer

NUM_SUITS = len(SUITS)


@dataclass(frozen=True)
class NetSpec:
    """The shape of a :class:`PolicyNet`."""

    obs_size: int
    num_actions: int
    hidden: tuple[int, ...] = (256, 256)
    critic_size: int | None = None
    """Input size of the value head; ``None`` means the observation (no centralised critic)."""
    trump_first: bool = False
    """Relabel the suits so that the trump suit is always the first (see :func:`trump_first_tables`)."""


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


class PolicyNet(nn.Module):
    """Separate actor and critic MLPs; illegal actions are masked out of the logits.

    With ``spec.trump_first`` the network sees every observation with the suits
    relabelled so that the trump suit comes first, and its card logits are mapped
    back (``trump_tables`` from :func:`trump_first_tables`, stored with the weights).
    Where the game is symmetric under relabelling suits this folds four trump suits
    into one without changing what the policy can express; where a rule names a card
    (Muschka's ace of spades) the real trump suit stays visible, so nothing is lost.
    """

    def __init__(self, spec: NetSpec, trump_tables: tuple[torch.Tensor, torch.Tensor, int] | None = None) -> None:
        super().__init__()
        self.spec = spec
        self.actor = _mlp([spec.obs_size, *spec.hidden, spec.num_actions])
        self.critic = _mlp([spec.critic_size or spec.obs_size, *spec.hidden, 1])
        with torch.no_grad():  # small last layers, as in CleanRL's PPO
            self.actor[-1].weight.mul_(0.01)
            self.actor[-1].bias.zero_()
        if spec.trump_first:
            if trump_tables is None:  # shapes only; load_state_dict fills in the values
                trump_tables = (torch.zeros(NUM_SUITS, spec.obs_size, dtype=torch.long),
                                torch.zeros(NUM_SUITS, spec.num_actions, dtype=torch.long), 0)
            obs_perm, act_perm, trump_offset = trump_tables
            self.register_buffer("obs_perm", obs_perm.clone())
            self.register_buffer("act_perm", act_perm.clone())
            self.register_buffer("trump_offset", torch.tensor(int(trump_offset)))

    def prepare(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(x, trump)``: the network's input for ``obs`` (suits relabelled when ``trump_first``) and the
        trump suit of each row (``None`` without ``trump_first``). A trainer prepares each observation once
        and stores ``x``; :meth:`logits_of` and :meth:`value_of` take it from there."""
        if not self.spec.trump_first:
            return obs, None
        start = int(self.trump_offset)
        trump = obs[:, start:start + NUM_SUITS].argmax(1)
        return obs.gather(1, self.obs_perm.index_select(0, trump)), trump

    def canonical(self, obs: torch.Tensor) -> torch.Tensor:
        """The observation as the network sees it (suits relabelled when ``trump_first``)."""
        return self.prepare(obs)[0]

    def logits_of(self, x: torch.Tensor, trump: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor:
        """Masked logits over the real actions from a prepared input."""
        logits = self.actor(x)
        if trump is not None:
            logits = logits.gather(1, self.act_perm.index_select(0, trump))
        return logits.masked_fill(~mask, torch.finfo(logits.dtype).min)

    def value_of(self, x: torch.Tensor) -> torch.Tensor:
        """The value head on a prepared observation, or on the critic input of a centralised critic."""
        return self.critic(x).squeeze(-1)

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.logits_of(*self.prepare(obs), mask)

    def value(self, critic_input: torch.Tensor) -> torch.Tensor:
        """The value of an observation (or, with ``critic_size``, of a centralised critic input)."""
        if self.spec.critic_size is None:
            critic_input = self.canonical(critic_input)
        return self.value_of(critic_input)


CARD_PIECES = ("hand", "own_discards", "own_drawn", "trump_card", "trick_cards")
"""Observation pieces indexed by card in their last dimension."""


def trump_first_tables(game: Game) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Index tables that swap the trump suit with the first suit (clubs) in observations and actions.

    Returns ``(obs_perm[4, D], act_perm[4, A], trump_offset)``: for trump suit
    ``t``, ``obs.gather(1, obs_perm[t])`` is the relabelled observation and
    ``logits.gather(1, act_perm[t])`` maps logits over relabelled actions back
    to the real ones (a swap of two suits is its own inverse). Needs a deck
    with the same ranks in every suit, trumps that are exactly the trump suit
    and the ``trump_suit`` piece; raises
    :class:`~mauscheln_env.errors.ConfigError` otherwise.

    The ``trump_suit`` piece is relabelled too (it then always shows the first suit) only where the game is
    symmetric under relabelling suits. A table whose rules tell one card apart (a trick hook: Muschka's ace
    of spades) keeps the real trump suit in that piece: with the suits swapped, the network could not tell
    otherwise which suit is the real spades (trumps clubs or spades look alike), and the relabelling must
    not lose what the seat knows.
    """
    from mauscheln_env.errors import ConfigError

    deck = game.deck
    observer = Observer(game)
    names = {p.name: p for p in observer.pieces}
    ranks_by_suit = [sorted(deck.rank[c] for c in range(len(deck)) if deck.suit[c] == s) for s in range(NUM_SUITS)]
    plain_trumps = all(game.tables[t].trump_mask == deck.suit_mask[t] for t in range(NUM_SUITS))
    if "trump_suit" not in names or not plain_trumps or any(r != ranks_by_suit[0] for r in ranks_by_suit):
        raise ConfigError(
            "trump_first needs a deck with the same ranks in every suit, no permanent trumps (Belli, Weli, "
            "Pamphile) and a trump_suit observation "
            f"(this game: {game.config.ruleset}, {len(deck)} cards); train with trump_first: false"
        )
    N, D, A = len(deck), observer.size, game.num_actions
    where = {(deck.suit[c], deck.rank[c]): c for c in range(N)}
    obs_perm = torch.arange(D).repeat(NUM_SUITS, 1)
    act_perm = torch.arange(A).repeat(NUM_SUITS, 1)
    for t in range(NUM_SUITS):
        swap = {0: t, t: 0}
        card = torch.tensor([where[(swap.get(deck.suit[c], deck.suit[c]), deck.rank[c])] for c in range(N)])
        act_perm[t, :N] = card
        for name in CARD_PIECES:
            if name not in names:
                continue
            off, size = observer.offsets[name], names[name].size
            for start in range(off, off + size, N):
                obs_perm[t, start:start + N] = start + card
        if not game.trick_hooks:  # suit-symmetric: the trump suit always reads as the first
            ts = observer.offsets["trump_suit"]
            obs_perm[t, ts:ts + NUM_SUITS] = ts + torch.tensor([swap.get(s, s) for s in range(NUM_SUITS)])
    return obs_perm, act_perm, observer.offsets["trump_suit"]


def masked_distribution(logits: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities and the masked entropy (illegal actions contribute nothing)."""
    logp = torch.log_softmax(logits, dim=-1)
    # exp of the illegal actions' huge negative log-probabilities takes a slow path on the CPU (about 50 times
    # the normal cost); their terms are dropped anyway, so take exp(0) there: the same entropy, bit for bit.
    p = torch.where(mask, logp, 0.0).exp()
    entropy = -(torch.where(mask, p * logp, torch.zeros_like(p))).sum(-1)
    return logp, entropy


def sample_actions(logits: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Sample from masked logits; a masked action has probability exactly 0."""
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def sample_by_uniform(logits: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Sample from masked logits by inverting the distribution function at given uniforms ``u`` (float[B] in
    [0, 1)): the first action whose cumulative probability exceeds ``u`` times the total. An action of
    probability 0 (masked) is never chosen: the cumulative sum does not rise there."""
    cdf = torch.softmax(logits.to(torch.float64), dim=-1).cumsum(dim=-1)
    target = u.to(torch.float64)[:, None] * cdf[:, -1:]
    return (cdf <= target).sum(dim=-1).clamp_max(logits.shape[-1] - 1)


