"""The batched engine: many tables stepped at once by compiled kernels (see :class:`VectorEnv`).

The same game as ``allfives_env.raw_env()``, table for table. Each table is
one record of a structured array, and a whole step (the action, forced
draws and passes, scoring, the round's end and award, the next deal, the
restart, and every output) is one compiled call over all tables, written
with numba (:mod:`allfives_env.vector.jit`).
"""

from .env import EPISODES, REWARD_MODES, VectorEnv, VectorStep

__all__ = ["EPISODES", "REWARD_MODES", "VectorEnv", "VectorStep"]
