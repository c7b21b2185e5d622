"""``sb3``: a MaskablePPO model saved by ``train/sb3_maskable.py``, played through the agent interface.

    agent = make_agent("sb3", model="runs/<run>/maskable_ppo.zip")

Needs sb3-contrib (the ``train`` extra); the module is imported only when an
``sb3`` agent is built.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.base import Agent, AgentError, Info, legal_ids


class SB3Agent(Agent):
    """Plays a saved MaskablePPO model (deterministic by default)."""

    name = "sb3"
    param_help = {"model": "the path of a MaskablePPO zip file saved by train/sb3_maskable.py"}

    def __init__(self, seed: int | None = None, model: str = "", deterministic: bool = True) -> None:
        super().__init__(seed)
        if not model or not Path(model).is_file():
            raise AgentError(f"sb3: model={model!r} is not allowed; allowed: {self.param_help['model']}")
        from sb3_contrib import MaskablePPO

        self.params = {"model": model, "deterministic": deterministic}
        # SB3's loader reads its own zip format (weights via torch.load with weights_only where supported).
        self.model = MaskablePPO.load(model, device="cpu")
        self.deterministic = deterministic

    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        legal_ids(action_mask)
        action, _ = self.model.predict(observation, action_masks=np.asarray(action_mask, dtype=bool),
                                       deterministic=self.deterministic)
        return int(action)
