"""Checks for the environments' keyword arguments, shared so both say the same thing."""

from __future__ import annotations

from typing import Any


def choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    """``value`` if it is one of ``allowed``, else a ValueError naming the argument and the choices."""
    if isinstance(value, str) and value in allowed:
        return value
    raise ValueError(f"{name}={value!r} is not allowed; allowed: {', '.join(map(repr, allowed))}")


def flag(name: str, value: Any) -> bool:
    """A strict boolean: 0, 1 and "yes" are refused, so a typo cannot slip through."""
    if not isinstance(value, bool):
        raise ValueError(f"{name}={value!r} is not allowed; allowed: True or False")
    return value
