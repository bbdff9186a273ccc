"""Build an agent from a short spec string, the way every command line names its players.

Specs: ``random``, ``greedy``, ``heuristic``, ``search``, ``search:N`` (N
rollouts per decision), ``checkpoint:PATH`` (a trained policy saved at PATH),
``trained`` (the shipped policy for the table), ``rllib:PATH`` (an RLlib checkpoint, with the ``ray`` extra),
and the policy-guided search: ``search:trained`` or ``search:checkpoint:PATH``, either with ``:N`` rollouts
appended (``search:trained:400``; a trailing ``:`` and digits is always read as the rollout count).
"""

from __future__ import annotations

import importlib

from .base import Agent
from .greedy import GreedyAgent
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent
from .search import SearchAgent

BOTS: dict[str, type[Agent]] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
    "search": SearchAgent,
}

#: Every spec form ``make_agent`` accepts, for help texts and error messages.
AGENT_NAMES: tuple[str, ...] = ("random", "greedy", "heuristic", "search", "search:N", "checkpoint:PATH", "trained",
                                 "rllib:PATH", "search:trained[:N]", "search:checkpoint:PATH[:N]")  # fmt: skip


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """The agent named by ``spec``, seeded with ``seed``; ValueError names the allowed specs."""
    if not isinstance(spec, str):
        raise ValueError(f"agent spec {spec!r} is not a string; allowed: {', '.join(AGENT_NAMES)}")
    name, sep, arg = spec.strip().partition(":")
    if name in BOTS and not sep:
        return BOTS[name](seed=seed)
    if name == "search" and (arg == "trained" or arg.startswith(("trained:", "checkpoint:"))):
        return _guided_search(spec, arg, seed)
    if name == "search" and sep:
        try:
            simulations = int(arg)
        except ValueError:
            simulations = 0
        if simulations < 1:
            raise ValueError(
                f"agent spec {spec!r}: search:N needs a positive whole number of rollouts, e.g. search:200"
            )
        return SearchAgent(seed=seed, simulations=simulations)
    if name == "checkpoint" and sep:
        if not arg:
            raise ValueError(f"agent spec {spec!r}: checkpoint:PATH needs the path of a saved policy")
        return _load_policy(arg, seed)
    if name == "trained" and not sep:
        return _load_policy(None, seed)
    if name == "rllib" and sep:
        if not arg:
            raise ValueError(f"agent spec {spec!r}: rllib:PATH needs the folder of a saved RLlib checkpoint")
        return _load_rllib(arg, seed)
    raise ValueError(f"unknown agent spec {spec!r}; allowed: {', '.join(AGENT_NAMES)}")


def _guided_search(spec: str, arg: str, seed: int | None) -> Agent:
    """``search:trained[:N]`` and ``search:checkpoint:PATH[:N]``: the search guided by a policy (needs torch)."""
    kind, _, rest = arg.partition(":")
    simulations = None
    head, colon, tail = rest.rpartition(":")
    if kind == "trained":
        if arg != "trained":
            simulations = rest
        path = None
    else:
        path = rest
        if colon and tail.isdigit():
            path, simulations = head, tail
        if not path:
            raise ValueError(f"agent spec {spec!r}: search:checkpoint:PATH[:N] needs the path of a saved policy")
    if simulations is not None:
        count = int(simulations) if simulations.isdigit() else 0
        if count < 1:
            raise ValueError(
                f"agent spec {spec!r}: the rollout count after the policy must be a positive whole number, "
                "e.g. search:trained:400"
            )
        simulations = count
    _require_torch()
    from .guided_search import GuidedSearchAgent

    return GuidedSearchAgent(path, seed=seed, simulations=simulations)


def _require_torch() -> None:
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError:
        raise ValueError(
            "trained policies need torch, which is not installed; install the train extra: pip install -e '.[train]' "
            "(or play one of random, greedy, heuristic, search, search:N)"
        ) from None


def _load_policy(path: str | None, seed: int | None) -> Agent:
    """Trained policies live in ``agents.policy_agent``, imported only when asked for: it needs torch."""
    _require_torch()
    from .policy_agent import load_policy_agent

    return load_policy_agent(path, seed)


def _load_rllib(path: str, seed: int | None) -> Agent:
    """RLlib checkpoints play through ``agents.rllib_agent``, imported only here: Ray is an optional extra."""
    try:
        import ray.rllib  # noqa: F401
    except ModuleNotFoundError:
        raise ValueError(
            f"rllib:{path} needs RLlib, which is not installed; install it with: pip install -e '.[ray]'"
        ) from None
    return importlib.import_module("agents.rllib_agent").load_rllib_agent(path, seed)
