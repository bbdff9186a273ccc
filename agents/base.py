"""The one interface through which everything plays: an agent sees one seat's view and answers an action.

An agent is given a :class:`~allfives_env.core.SeatView` (exactly what its
seat may know, with the legal actions) and never anything hidden. The
evaluation harness, terminal play and the trainer's policy all meet here.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod

from allfives_env.core import SeatView


class Agent(ABC):
    """A player of one seat. Subclasses set ``name`` and implement :meth:`act`."""

    name: str = "agent"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        """Called at the start of each match; reseeds the agent's own randomness."""
        self.rng.seed(seed)

    @abstractmethod
    def act(self, view: SeatView) -> int:
        """Choose one of ``view.legal`` for ``view.seat``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
