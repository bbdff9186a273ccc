"""The environments' ids in PettingZoo's and Gymnasium's registries, registered by ``import allfives_env``.

Registering an id means calling ``pettingzoo.register`` or
``gymnasium.register``, and importing either package imports numpy, while
``import allfives_env`` must stay light (the rules core is pure Python, and
a program that only replays records should not pay for numpy). PettingZoo
1.27 has no entry-point plugins that would let it find the id by itself.

So each id is registered when its registry's package is imported: at once
if that package is imported already, else by a one-shot import hook that
lets the package's own import run and then registers, before the importer
gets the module back. Either order of ``import allfives_env`` and
``import pettingzoo`` (or ``gymnasium``) therefore ends with the id
registered, and nothing here imports a third-party package itself. The entry
points are ``module:attr`` strings, loaded by ``make`` only.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType

AEC_ID = "allfives-v0"
GYM_ID = "AllFives-v0"


def register_pettingzoo(pettingzoo: ModuleType) -> None:
    """``"allfives-v0"``: ``pettingzoo.make("aec", "allfives-v0", num_players=3)`` builds ``allfives_env.env()``."""
    if AEC_ID not in pettingzoo.aec_registry:
        pettingzoo.register("aec", AEC_ID, entry_point="allfives_env.aec_env:env")


def register_gymnasium(gymnasium: ModuleType) -> None:
    """``"AllFives-v0"``: the single-agent environment, illegal actions penalized."""
    if GYM_ID not in gymnasium.registry:
        gymnasium.register(
            id=GYM_ID, entry_point="allfives_env.gym_env:AllFivesSingleAgentEnv", kwargs={"illegal": "penalize"}
        )


#: The package whose import registers each id, and how.
REGISTRARS: dict[str, Callable[[ModuleType], None]] = {
    "pettingzoo": register_pettingzoo,
    "gymnasium": register_gymnasium,
}


def _register(name: str, module: ModuleType) -> None:
    """Register with ``module``; a registry that refuses is a warning, never a failed import of the package."""
    try:
        REGISTRARS[name](module)
    except Exception as error:  # the user's import of the registry's package must not fail here
        warnings.warn(f"allfives_env could not register its environment with {name}: {error}", stacklevel=3)


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader the other finders give for a registry's package."""

    def __init__(self, names: set[str]) -> None:
        self.pending = set(names)
        self.lock = threading.Lock()

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None):
        if fullname not in self.pending:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_then_register(module: ModuleType) -> None:
            exec_module(module)
            self.done(fullname, module)

        loader.exec_module = exec_then_register  # this loader serves this one module
        return spec

    def done(self, name: str, module: ModuleType) -> None:
        with self.lock:
            if name not in self.pending:
                return
            self.pending.discard(name)
            if not self.pending and self in sys.meta_path:
                sys.meta_path.remove(self)
        _register(name, module)


def register_on_import() -> None:
    """Register every id whose registry is imported already; hook the import of the others (once per process)."""
    waiting = set()
    for name in REGISTRARS:
        module = sys.modules.get(name)
        if module is not None:
            _register(name, module)
        else:
            waiting.add(name)
    if waiting and not any(isinstance(finder, _RegisterOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnImport(waiting))
