"""All Fives dominoes for reinforcement learning.

``allfives_env.core`` is the rules engine (pure Python). ``env()`` and
``raw_env()`` build the PettingZoo AEC environment; they are imported on first
use so that the core never pulls in PettingZoo or Gymnasium. ``VectorEnv``,
the batched engine of :mod:`allfives_env.vector`, is loaded on first use too.

Importing the package registers ``"allfives-v0"`` with PettingZoo and
``"AllFives-v0"`` with Gymnasium, without importing either: each id is
registered when its registry's package is imported (:mod:`allfives_env.registration`).
"""

from __future__ import annotations

from .registration import register_on_import

__version__ = "0.1.0"

__all__ = ["VectorEnv", "env", "raw_env", "__version__"]


def __getattr__(name: str):
    if name in ("env", "raw_env"):
        from . import aec_env

        return getattr(aec_env, name)
    if name == "VectorEnv":
        from .vector import VectorEnv

        return VectorEnv
    raise AttributeError(f"module 'allfives_env' has no attribute {name!r}")


register_on_import()
