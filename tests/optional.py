"""Optional extras in tests: skipped with what to install when a package is missing.

A skipped test says which extra brings what it needs (``pip install -e
'.[ray]'``), and pytest prints every skip's reason at the end of a run
(``-rs`` in pyproject.toml's ``addopts``), so "4 skipped" never hides why.
For the ``ray`` extra, ``ALLFIVES_REQUIRE_RAY=1`` makes a missing package a
failure instead: CI installs the extra and sets the variable, so a broken
install cannot hide behind skips there; a plain ``pip install -e ".[dev]"``
skips.

Ray binds to the machine's network address, and tests must never reach
beyond loopback, so the Ray tests also need a network namespace with
loopback only: ``unshare -n sh -c 'ip link set lo up; python -m pytest ...'``.
"""

from __future__ import annotations

import importlib
import os
import socket
from types import ModuleType

import pytest

REQUIRE = "ALLFIVES_REQUIRE_RAY"
#: The extra of pyproject.toml that brings each optional package the tests import.
EXTRA = {"ray": "ray", "tianshou": "ray", "torch": "train", "sb3_contrib": "sb3", "starlette": "web", "httpx": "dev",
         "rlcard": "baselines"}  # fmt: skip
#: Extras whose missing packages fail the tests when ``CI`` is set, instead of skipping (CI installs them).
REQUIRED_IN_CI = {"baselines"}


def skip_reason(module: str) -> str:
    """What a test without ``module`` says: which extra to install."""
    extra = EXTRA[module.partition(".")[0]]
    return f"needs {module}, which is not installed: pip install -e '.[{extra}]' (the '{extra}' extra)"


def require(module: str) -> ModuleType:
    """Import ``module``; skip the test module without it, saying what to install (fail instead for the ray
    extra's packages when ``ALLFIVES_REQUIRE_RAY=1``, and for those of :data:`REQUIRED_IN_CI` when ``CI`` is set)."""
    extra = EXTRA[module.partition(".")[0]]
    if extra == "ray" and os.environ.get(REQUIRE) == "1" or extra in REQUIRED_IN_CI and os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=skip_reason(module))


def require_loopback_only() -> None:
    """Skip (fail with ``ALLFIVES_REQUIRE_RAY=1``) unless loopback is the only network interface here."""
    others = sorted(name for _, name in socket.if_nameindex() if name != "lo")
    if not others:
        return
    message = (
        f"Ray tests run only where loopback is the sole network interface (found {', '.join(others)}); "
        "run them as: unshare -n sh -c 'ip link set lo up; python -m pytest tests/test_ray_*.py'"
    )
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(message, pytrace=False)
    pytest.skip(message, allow_module_level=True)
