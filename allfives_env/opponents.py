"""Who plays the other seats of the Gymnasium environment, and how a failed call puts them back.

An opponent is given as ``None`` (a uniformly random legal action, from the
environment's seeding), an object with ``act(view)`` (an ``agents.Agent``:
it sees its seat's :class:`~allfives_env.core.SeatView`), a callable
``(observation, action_mask) -> action`` (it sees its seat's own
observation), or a bot name such as ``"greedy"``.

Names are resolved by an agent registry, which lives in a higher layer: the
environments never import the agents. :func:`resolve_agent` asks the
resolvers given to :func:`register_agent_resolver`, then the
``allfives.agents`` entry points of the installed packages (this project's
points at ``agents.registry.make_agent``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

import numpy as np

from .core import State
from .views.observation import action_mask, encode_seat

Policy = Callable[[np.ndarray, np.ndarray], int]

#: The entry point group where an installed package offers a ``(name, seed) -> agent`` function.
AGENT_ENTRY_POINTS = "allfives.agents"
_RESOLVERS: list[Callable[[str, int | None], Any]] = []


def register_agent_resolver(resolver: Callable[[str, int | None], Any]) -> None:
    """Let opponents be named: ``resolver(name, seed)`` returns an agent, or raises ValueError for a name it lacks.

    Registered resolvers are asked before the installed entry points, the
    latest first.
    """
    if not callable(resolver):
        raise ValueError(f"resolver={resolver!r} is not allowed; allowed: a callable (name, seed) -> agent")
    _RESOLVERS.insert(0, resolver)


def resolve_agent(name: str, seed: int | None) -> Any:
    """The agent called ``name``; ValueError (starting ``opponents:``) when no resolver knows it."""
    resolvers = _RESOLVERS + [point.load() for point in entry_points(group=AGENT_ENTRY_POINTS)]
    if not resolvers:
        raise ValueError(
            f"opponents: {name!r} names a bot, but no agent registry is installed; pass an Agent or a callable "
            "(observation, action_mask) -> action, or install the project (pip install -e .)"
        )
    first_error: ValueError | None = None
    for resolver in resolvers:
        try:
            return resolver(name, seed)
        except ValueError as err:
            first_error = first_error or err
    raise ValueError(f"opponents: {first_error}") from None


class Seat:
    """How one opponent seat is played: ``reset`` per match, ``act`` per decision.

    ``saved``/``restore`` put its generator back where it was, so that a
    ``reset`` or ``step`` that fails part way (another opponent raised) and is
    retried plays the same moves.
    """

    def reset(self, seed: int) -> None:
        pass

    def saved(self) -> Any:
        return None

    def restore(self, saved: Any) -> None:
        pass

    def act(self, state: State, seat: int, history: bool) -> int:
        raise NotImplementedError


class UniformRandom(Seat):
    """The default opponent: a uniformly random legal action, from the env's own seeding.

    It logs the bound of each draw since its seeding, so that going back is
    seeding again and drawing the logged bounds up to the saved point: saving
    costs nothing, and only a failure pays.
    """

    def __init__(self) -> None:
        self.reset(0)

    def reset(self, seed: int) -> None:
        self.seed, self.rng, self.draws = seed, np.random.default_rng(seed), []

    def saved(self) -> Any:
        return self.seed, self.draws, len(self.draws)

    def restore(self, saved: Any) -> None:
        self.seed, self.draws, count = saved
        del self.draws[count:]
        self.rng = np.random.default_rng(self.seed)
        for bound in self.draws:
            self.rng.integers(bound)

    def act(self, state: State, seat: int, history: bool) -> int:
        legal = state.legal_actions()
        self.draws.append(len(legal))
        return legal[int(self.rng.integers(len(legal)))]


class _UndoableRandom(random.Random):
    """A standard-library generator that can go back to where it was when last marked, at almost no cost.

    It counts the 32-bit words its draws take from the Mersenne Twister since
    it was last seeded or set; going back seeds (or sets) it again and draws
    that many words at once. So marking it before every step costs nothing, and
    its draws are those of ``random.Random`` from the same state.
    """

    def __init__(self, state: Any = None) -> None:
        super().__init__()
        if state is not None:
            self.setstate(state)

    def seed(self, a: Any = None, version: int = 2) -> None:
        super().seed(a, version)
        # An entropy seed cannot be repeated: its state is kept instead (once, at the seeding).
        self._base = ("state", super().getstate()) if a is None else ("seed", a, version)
        self._words = 0

    def setstate(self, state: Any) -> None:
        super().setstate(state)
        self._base, self._words = ("state", state), 0

    def random(self) -> float:
        self._words += 2
        return super().random()

    def getrandbits(self, k: int) -> int:
        self._words += (k + 31) // 32
        return super().getrandbits(k)

    def mark(self) -> tuple:
        return self._base, self._words, self.gauss_next

    def undo(self, mark: tuple) -> None:
        base, words, gauss_next = mark
        if base[0] == "seed":
            super().seed(base[1], base[2])
        else:
            super().setstate(base[1])
        if words:
            super().getrandbits(32 * words)
        self._base, self._words, self.gauss_next = base, words, gauss_next


class AgentSeat(Seat):
    """An ``agents.Agent``-like object: it sees its seat's ``SeatView``.

    An agent whose ``rng`` is a ``random.Random`` (the bots of ``agents/``) gets
    an undoable generator in its place, with the same state and draws.
    """

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        rng = getattr(agent, "rng", None)
        if type(rng) is random.Random:
            agent.rng = _UndoableRandom(rng.getstate())

    def reset(self, seed: int) -> None:
        reset = getattr(self.agent, "reset", None)
        if reset is not None:
            reset(seed)

    def saved(self) -> Any:
        """The agent's ``rng`` (the bots of ``agents/`` keep their randomness there); other state is the agent's."""
        rng = getattr(self.agent, "rng", None)
        if isinstance(rng, _UndoableRandom):
            return rng, rng.mark()
        return _generator_saved(rng)

    def restore(self, saved: Any) -> None:
        if saved is not None and isinstance(saved[0], _UndoableRandom):
            saved[0].undo(saved[1])
            self.agent.rng = saved[0]
        elif saved is not None:
            self.agent.rng = _generator_restored(saved)

    def act(self, state: State, seat: int, history: bool) -> int:
        return self.agent.act(state.view(seat))


class CallableSeat(Seat):
    """A callable ``(observation, action_mask) -> action`` on the seat's own observation."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def act(self, state: State, seat: int, history: bool) -> int:
        return self.policy(encode_seat(state, seat, history), action_mask(state.legal_actions()))


def _generator_saved(rng: Any) -> Any:
    """A generator with its state now (NumPy's or the standard library's), else None."""
    if isinstance(rng, np.random.Generator):
        return rng, rng.bit_generator.state
    if isinstance(rng, random.Random):
        return rng, rng.getstate()
    return None


def _generator_restored(saved: Any) -> Any:
    rng, state = saved
    if isinstance(rng, np.random.Generator):
        rng.bit_generator.state = state
    else:
        rng.setstate(state)
    return rng


def _make_seat(spec: Any, seed: int | None) -> Seat:
    if spec is None:
        return UniformRandom()
    if isinstance(spec, str):
        return AgentSeat(resolve_agent(spec, seed))
    if callable(getattr(spec, "act", None)):
        return AgentSeat(spec)
    if callable(spec):
        return CallableSeat(spec)
    raise ValueError(
        f"opponents: {spec!r} is not a policy; allowed: None (random), a bot name such as 'random' or 'greedy', "
        "an Agent, or a callable (observation, action_mask) -> action"
    )


def make_seats(opponents: Any, count: int) -> list[Seat]:
    """One opponent per other seat, in seat order after the learner."""
    if isinstance(opponents, (list, tuple)):
        if len(opponents) != count:
            raise ValueError(
                f"opponents has {len(opponents)} entries; allowed: one policy, or a list of {count} "
                "(one per other seat, in seat order after the learner)"
            )
        return [_make_seat(spec, seed=i) for i, spec in enumerate(opponents)]
    return [_make_seat(opponents, seed=i) for i in range(count)]
