"""Optional extras in tests: skipped when the package is missing, unless ``ALLFIVES_REQUIRE_RAY=1`` makes that a failure.

CI installs the ``ray`` extra and sets the variable, so a broken install
cannot hide behind skips there; a plain ``pip install -e ".[dev]"`` skips.

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


def require(module: str) -> ModuleType:
    """Import ``module``; skip the test module without it, or fail when ``ALLFIVES_REQUIRE_RAY=1``."""
    if os.environ.get(REQUIRE) == "1":
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is part of the 'ray' extra (pip install -e '.[ray]')")


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
