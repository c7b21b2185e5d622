"""TorchRL: ``PettingZooWrapper`` over ``env()`` with masks, numeric infos and one shared group.

TorchRL needs numeric infos (:class:`mauscheln_env.integrations.numeric.NumericInfoWrapper`)
and ``use_mask=True`` (one seat acts at a time)::

    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    import mauscheln_env
    from mauscheln_env.integrations.numeric import NumericInfoWrapper

    env = PettingZooWrapper(NumericInfoWrapper(mauscheln_env.env(num_players=4)), use_mask=True,
                            group_map={"players": [f"player_{i}" for i in range(4)]}, categorical_actions=True)

or, the same in one call, :func:`torchrl_env`. A shared group (``group_map``
with every seat in one group) is what one shared policy needs: TorchRL's
``("players", "mask")`` marks the seat to act, ``("players", "action_mask")``
its legal actions, and ``("players", "reward")`` holds every seat's reward of
the step, also the settlements that land on another seat's turn.
"""

from __future__ import annotations

from typing import Any

from mauscheln_env.integrations.numeric import NumericInfoWrapper


def torchrl_env(ruleset: str = "mauscheln", num_players: int | None = None, shared: bool = True,
                seed: int | None = None, **rule_options: Any):
    """TorchRL's ``PettingZooWrapper`` over ``env()`` with numeric infos and masks.

    ``shared=True`` puts every seat in one group ``"players"`` (one shared
    policy); ``False`` keeps TorchRL's AEC default, one group per seat.
    Actions are categorical (an action id per seat).
    """
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    import mauscheln_env

    base = NumericInfoWrapper(mauscheln_env.env(ruleset=ruleset, num_players=num_players, **rule_options))
    group_map = {"players": list(base.possible_agents)} if shared else None
    return PettingZooWrapper(base, use_mask=True, group_map=group_map, categorical_actions=True, seed=seed)
