"""Checks for the environments' arguments, shared so that both environments say the same thing.

Each check is done before an environment changes anything, so a refused call
leaves it exactly as it was.
"""

from __future__ import annotations

import operator
from typing import Any

import gymnasium
import numpy as np

from .core.deal import MAX_SEED  # the largest seed ``reset`` takes: 128 bits
from .core.rules import shown


class ResetNeeded(gymnasium.error.ResetNeeded, RuntimeError):
    """A call that needs a match, made before the first ``reset``; both environments raise it."""

    def __init__(self, call: str) -> None:
        super().__init__(f"call reset() before {call}")


def choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    """``value`` if it is one of ``allowed``, else a ValueError naming the argument and the choices."""
    if isinstance(value, str) and value in allowed:
        return value
    raise ValueError(f"{name}={shown(value)} is not allowed; allowed: {', '.join(map(repr, allowed))}")


def flag(name: str, value: Any) -> bool:
    """A strict boolean: 0, 1 and "yes" are refused, so a typo cannot slip through."""
    if not isinstance(value, bool):
        raise ValueError(f"{name}={shown(value)} is not allowed; allowed: True or False")
    return value


def seed(value: Any) -> int | None:
    """A reset's seed: None, or an integer 0..MAX_SEED (Python or NumPy; not a bool)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not 0 <= value <= MAX_SEED:
        raise ValueError(f"seed={shown(value)} is not allowed; allowed: None or an integer 0..2**128-1")
    return int(value)


def as_action(value: Any) -> int | None:
    """The one rule for actions in both environments: an integer (Python, NumPy scalar or 0-d array), else None.

    Booleans and floats are refused even when their value is a whole number
    (``True == 1``, ``5.0 == 5``), so a mistyped action is never played.
    """
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype == np.bool_):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def action_refused(value: Any, state: Any = None) -> str:
    """Why ``value`` is not an action, with the legal actions of ``state`` (a core State) when given."""
    text = (
        f"action {shown(value)} is not an action id; allowed: an integer 0..113 (Python or NumPy), not a bool or float"
    )
    legal = state.legal_actions() if state is not None else ()
    if legal:
        text += "; legal actions: " + ", ".join(f"{a} ({state.action_text(a)})" for a in legal)
    return text
