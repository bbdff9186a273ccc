"""The random bot: a uniform choice among the legal actions, the floor every other bot must clear."""

from __future__ import annotations

from allfives_env.core import SeatView

from .base import Agent


class RandomAgent(Agent):
    """Uniform over ``view.legal``, from its own seeded generator."""

    name = "random"

    def act(self, view: SeatView) -> int:
        legal = view.legal
        return legal[0] if len(legal) == 1 else self.rng.choice(legal)
