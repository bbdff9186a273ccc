"""The batched engine: many tables stepped at once as numpy arrays (see :class:`VectorEnv`).

The same game as ``allfives_env.raw_env()``, table for table: the hot path
(legality, placements, draws, scoring, observations) runs as array
operations, while deals, leaders and hand awards are asked of the core.
"""

from .env import EPISODES, REWARD_MODES, VectorEnv, VectorStep

__all__ = ["EPISODES", "REWARD_MODES", "VectorEnv", "VectorStep"]
