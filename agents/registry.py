"""Build an agent from a short spec string, the way every command line names its players.

Specs: ``random``, ``greedy``, ``heuristic``, ``search``, ``search:N`` (N
rollouts per decision), ``checkpoint:PATH`` (a trained policy saved at PATH),
``trained`` (the shipped policy for the table), ``rllib:PATH`` (an RLlib checkpoint, with the ``ray`` extra),
the policies other libraries trained (:data:`LIBRARY_AGENTS`: ``sb3:PATH``, ``tianshou:PATH``, ``dmc:PATH``,
``nfsp:PATH``), and the policy-guided search: ``search:trained`` or ``search:checkpoint:PATH``, either with ``:N``
rollouts appended (``search:trained:400``; a trailing ``:`` and digits is always read as the rollout count), either
search with its deals drawn from the shipped belief model (``belief`` before any count: ``search:belief``,
``search:belief:400``, ``search:trained:belief``, ``search:checkpoint:PATH:belief:400``), the guided search with
the policy playing rounds out too (``net`` after any ``belief``: ``search:trained:net``,
``search:trained:belief:net``, ``search:checkpoint:PATH:net:400``), any search valuing a round's end by the
match's chances (``equity`` after any ``belief`` and ``net``: ``search:equity``, ``search:belief:equity:400``,
``search:trained:belief:net:equity``), and the exploiter of a frozen agent: ``exploit:SPEC`` or
``exploit:N:SPEC`` (N play-outs per decision; SPEC any other spec but an exploiter, e.g. ``exploit:heuristic``,
``exploit:trained``, ``exploit:checkpoint:PATH``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, replace

from allfives_env.core.numbers import whole_number

from .base import Agent
from .belief import shipped_belief
from .greedy import GreedyAgent
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent
from .search import DEFAULT_SIMULATIONS as SEARCH_SIMULATIONS
from .search import SearchAgent

BOTS: dict[str, type[Agent]] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
    "search": SearchAgent,
}

#: Every spec form ``make_agent`` accepts, for help texts and error messages.
AGENT_NAMES: tuple[str, ...] = ("random", "greedy", "heuristic", "search", "search:N",
                                 "search[:belief][:equity][:N]", "checkpoint:PATH", "trained", "rllib:PATH",
                                 "sb3:PATH", "tianshou:PATH", "dmc:PATH", "nfsp:PATH",
                                 "search:trained[:belief][:net][:equity][:N]",
                                 "search:checkpoint:PATH[:belief][:net][:equity][:N]",
                                 "exploit:[N:]SPEC")  # fmt: skip
#: Policies trained by other libraries, ``KIND:PATH``: (``module:function`` that loads one as ``function(path, seed)``,
#: imported only when asked for; the package it needs; the extra that brings it; what PATH is).
LIBRARY_AGENTS: dict[str, tuple[str, str, str, str]] = {
    "rllib": ("agents.rllib_agent:load_rllib_agent", "ray.rllib", "ray", "the folder of a saved RLlib checkpoint"),
    "sb3": ("agents.sb3_agent:SB3Agent", "sb3_contrib", "sb3", "the .zip of a saved MaskablePPO model"),
    "tianshou": ("agents.tianshou_agent:TianshouAgent", "tianshou", "ray", "the file of a saved Tianshou DQN network"),
    "dmc": ("agents.rlcard_agent:DMCAgent", "rlcard", "baselines", "the model.tar of an RLCard DMC run"),
    "nfsp": ("agents.rlcard_agent:NFSPAgent", "rlcard", "baselines", "the file of saved RLCard NFSP networks"),
}


@dataclass(frozen=True)
class AgentSpec:
    """A spec read into its parts: ``kind`` is a name of ``BOTS``, ``checkpoint``, ``trained``, a key of
    ``LIBRARY_AGENTS``, ``guided`` (the policy-guided search) or ``exploit``; ``simulations`` is the rollout count given (None: the
    default); ``path`` is the file or folder named (None for the shipped policy); ``target`` is the spec an
    exploiter plays against (already checked); ``belief`` asks a search to draw its deals from the shipped belief
    model; ``network`` asks the guided search to value its candidates by the policy's play-outs too; ``equity``
    asks a search to value a round's end by the match's chances (:mod:`agents.match_equity`)."""

    kind: str
    simulations: int | None = None
    path: str | None = None
    target: str | None = None
    belief: bool = False
    network: bool = False
    equity: bool = False


def parse_agent_spec(spec: object) -> AgentSpec:
    """Read ``spec`` without building anything; ValueError names what is allowed.

    The one reader of specs: ``make_agent`` builds what it returns, and the web
    app checks a page's bot choice with it before applying its own limits.
    """
    if not isinstance(spec, str):
        raise ValueError(f"agent spec {spec!r} is not a string; allowed: {', '.join(AGENT_NAMES)}")
    name, sep, arg = spec.strip().partition(":")
    if name in BOTS and not sep:
        return AgentSpec(name)
    if name == "search" and sep:
        arg, equity = _take_word(arg, "equity")
        arg, network = _take_word(arg, "net")
        arg, belief = _take_word(arg, "belief")
        if arg == "trained" or arg.startswith(("trained:", "checkpoint:")):
            return replace(_guided_spec(spec, arg), belief=belief, network=network, equity=equity)
        if network:
            raise ValueError(
                f"agent spec {spec!r}: net needs a policy to play the rounds out, e.g. search:trained:net "
                "or search:checkpoint:PATH:net"
            )
        if (belief or equity) and not arg:
            return AgentSpec("search", belief=belief, equity=equity)
        message = f"agent spec {spec!r}: search:N needs a positive whole number of rollouts, e.g. search:200"
        return AgentSpec("search", simulations=_rollout_count(arg, message), belief=belief, equity=equity)
    if name == "checkpoint" and sep:
        if not arg:
            raise ValueError(f"agent spec {spec!r}: checkpoint:PATH needs the path of a saved policy")
        return AgentSpec("checkpoint", path=arg)
    if name == "trained" and not sep:
        return AgentSpec("trained")
    if name == "exploit" and sep:
        return _exploit_spec(spec, arg)
    if name in LIBRARY_AGENTS and sep:
        if not arg:
            raise ValueError(f"agent spec {spec!r}: {name}:PATH needs {LIBRARY_AGENTS[name][3]}")
        return AgentSpec(name, path=arg)
    raise ValueError(f"unknown agent spec {spec!r}; allowed: {', '.join(AGENT_NAMES)}")


def search_name(spec: AgentSpec) -> str:
    """``search[:belief][:equity]``: the plain search's spec for ``spec``'s options, less any rollout count."""
    return ":".join(["search"] + ["belief"] * spec.belief + ["equity"] * spec.equity)


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """The agent named by ``spec``, seeded with ``seed``; ValueError names the allowed specs."""
    parsed = parse_agent_spec(spec)
    belief = shipped_belief() if parsed.belief else None
    if parsed.kind == "search" and (parsed.simulations is not None or belief is not None or parsed.equity):
        agent = SearchAgent(
            seed=seed, simulations=parsed.simulations or SEARCH_SIMULATIONS, belief=belief, equity=parsed.equity
        )
        agent.name = search_name(parsed)
        return agent
    if parsed.kind in BOTS:
        return BOTS[parsed.kind](seed=seed)
    if parsed.kind == "guided":
        _require_torch()
        from .guided_search import NETWORK_DEALS, GuidedSearchAgent

        network_deals = NETWORK_DEALS if parsed.network else 0
        return GuidedSearchAgent(
            parsed.path,
            seed=seed,
            simulations=parsed.simulations,
            belief=belief,
            network_deals=network_deals,
            equity=parsed.equity,
        )
    if parsed.kind == "exploit":
        from .exploiter import DEFAULT_SIMULATIONS, ExploiterAgent

        target = make_agent(parsed.target, 0)
        agent = ExploiterAgent(target, seed=seed, simulations=parsed.simulations or DEFAULT_SIMULATIONS)
        agent.name = f"exploit:{parsed.target}"
        return agent
    if parsed.kind in LIBRARY_AGENTS:
        return _load_library(parsed.kind, parsed.path, seed)
    return _load_policy(parsed.path, seed)  # checkpoint:PATH, or trained (no path)


def _take_word(arg: str, word: str) -> tuple[str, bool]:
    """``arg`` without ``word`` just before its optional trailing rollout count, and whether it had it."""
    parts = arg.split(":")
    at = len(parts) - 2 if len(parts) > 1 and whole_number(parts[-1]) is not None else len(parts) - 1
    if parts[at] != word:
        return arg, False
    del parts[at]
    return ":".join(parts), True


def _rollout_count(text: str, message: str) -> int:
    count = whole_number(text)
    if count is None or count < 1:
        raise ValueError(message)
    return count


def _guided_spec(spec: str, arg: str) -> AgentSpec:
    """``search:trained[:N]`` and ``search:checkpoint:PATH[:N]``: the search guided by a policy."""
    kind, _, rest = arg.partition(":")
    count = None
    message = (
        f"agent spec {spec!r}: the rollout count after the policy must be a positive whole number, "
        "e.g. search:trained:400"
    )
    if kind == "trained":
        if arg != "trained":
            count = _rollout_count(rest, message)
        return AgentSpec("guided", simulations=count)
    path = rest
    head, colon, tail = rest.rpartition(":")
    if colon and whole_number(tail) is not None:  # a trailing ':' and digits is the rollout count
        path, count = head, _rollout_count(tail, message)
    if not path:
        raise ValueError(f"agent spec {spec!r}: search:checkpoint:PATH[:N] needs the path of a saved policy")
    return AgentSpec("guided", simulations=count, path=path)


def _exploit_spec(spec: str, arg: str) -> AgentSpec:
    """``exploit:SPEC`` and ``exploit:N:SPEC``: a leading count is the play-outs, the rest the target's spec."""
    head, colon, rest = arg.partition(":")
    count = None
    if colon and whole_number(head) is not None:
        message = f"agent spec {spec!r}: exploit:N:SPEC needs a positive whole number of play-outs, e.g. exploit:200:heuristic"
        count, arg = _rollout_count(head, message), rest
    if not arg.strip() or not colon and whole_number(head) is not None:
        raise ValueError(
            f"agent spec {spec!r}: exploit:SPEC needs the spec of the agent to exploit, e.g. exploit:heuristic"
        )
    try:
        target = parse_agent_spec(arg)
    except ValueError as err:
        raise ValueError(f"agent spec {spec!r}: the agent to exploit is not a valid spec: {err}") from None
    if target.kind == "exploit":
        raise ValueError(
            f"agent spec {spec!r}: the agent to exploit may not itself be an exploiter; allowed: any other spec"
        )
    return AgentSpec("exploit", simulations=count, target=arg.strip())


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


def _load_library(kind: str, path: str, seed: int | None) -> Agent:
    """Another library's policy, through its module of this package: the library is an optional extra."""
    loader, package, extra, _ = LIBRARY_AGENTS[kind]
    try:
        importlib.import_module(package)
    except ModuleNotFoundError:
        raise ValueError(
            f"{kind}:{path} needs {package.split('.')[0]}, which is not installed; "
            f"install it with: pip install -e '.[{extra}]'"
        ) from None
    module, _, function = loader.partition(":")
    return getattr(importlib.import_module(module), function)(path, seed)
