"""The opponents of the single-agent learners: each match, one of ``random``, ``greedy`` and ``heuristic``.

An :class:`~agents.base.Agent`, so ``AllFives-v0`` seats it like any bot
(``opponents=BotMix()``): the env reseeds it at the start of every match,
and the seed picks the bot of that match, in equal shares.
"""

from __future__ import annotations

from allfives_env.core import SeatView

from ..base import Agent
from ..registry import make_agent

#: The bots the single-agent learners meet, each in a third of their matches.
MIX: tuple[str, ...] = ("random", "greedy", "heuristic")


class BotMix(Agent):
    """Plays, each match, a bot drawn from :data:`MIX`."""

    name = "mix:" + "+".join(MIX)

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.bots = [make_agent(spec, seed) for spec in MIX]
        self.current = self.bots[0]

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.current = self.rng.choice(self.bots)
        self.current.reset(self.rng.getrandbits(63))

    def act(self, view: SeatView) -> int:
        return self.current.act(view)
