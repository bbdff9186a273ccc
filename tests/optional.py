"""Optional extras in tests: skipped when the package is missing, unless ``ALLFIVES_REQUIRE_RAY=1`` makes that a failure.

CI installs the ``ray`` extra and sets the variable, so a broken install
cannot hide behind skips there; a plain ``pip install -e ".[dev]"`` skips.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

REQUIRE = "ALLFIVES_REQUIRE_RAY"


def require(module: str) -> ModuleType:
    """Import ``module``; skip the test module without it, or fail when ``ALLFIVES_REQUIRE_RAY=1``."""
    if os.environ.get(REQUIRE) == "1":
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is part of the 'ray' extra (pip install -e '.[ray]')")
