"""How a command line or the harness turns an agent spec into an agent it can seat.

A factory is any ``(spec, seed) -> Agent`` callable; tests and other
programs pass their own to play agents the registry does not know.
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Agent

AgentFactory = Callable[[str, "int | None"], Agent]


def default_agent_factory(spec: str, seed: int | None = None) -> Agent:
    """``agents.registry.make_agent``, imported only when first needed (a trained policy needs torch)."""
    from .registry import make_agent

    return make_agent(spec, seed=seed)
