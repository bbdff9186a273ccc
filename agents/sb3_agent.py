"""A MaskablePPO model saved by sb3-contrib as an agent: ``sb3:PATH`` in the harness and terminal play.

PATH is the ``.zip`` that ``model.save`` wrote, trained on ``AllFives-v0``
(its ``Dict`` of ``observation`` and ``action_mask``). The seat's view is
encoded as that env observes it and the model's deterministic, masked choice
is played. Needs ``sb3-contrib`` (the ``sb3`` extra).
"""

from __future__ import annotations

import numpy as np
from sb3_contrib import MaskablePPO

from allfives_env.core import SeatView
from allfives_env.views.observation import action_mask, encode_observation, observation_size

from .base import Agent


class SB3Agent(Agent):
    """Plays the deterministic masked action of a saved MaskablePPO model."""

    def __init__(self, path: str, seed: int | None = None) -> None:
        super().__init__(seed)
        try:
            self.model = MaskablePPO.load(path, device="cpu")
        except Exception as err:  # a zip of the wrong kind fails in many ways inside the library
            raise ValueError(
                f"sb3:{path}: not a MaskablePPO model saved by model.save ({type(err).__name__})"
            ) from None
        space = getattr(self.model.observation_space, "spaces", {}).get("observation")
        sizes = {observation_size(False): False, observation_size(True): True}
        if space is None or int(np.prod(space.shape)) not in sizes:
            raise ValueError(f"sb3:{path}: the model does not observe the environment's observation dict")
        self.history = sizes[int(np.prod(space.shape))]
        self.name = f"sb3:{path}"

    def act(self, view: SeatView) -> int:
        if len(view.legal) == 1:
            return view.legal[0]
        mask = action_mask(view.legal)
        obs = {"observation": encode_observation(view, self.history), "action_mask": mask}
        action, _ = self.model.predict(obs, action_masks=mask.astype(bool), deterministic=True)
        return int(action)
