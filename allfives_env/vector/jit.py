"""The compiler behind the batched engine and the compiled bots: numba, cached, with a few bit intrinsics.

Every kernel goes through :func:`jit` (one thread) or :func:`jit_parallel`
(a ``prange`` loop over tables, on ``num_threads`` threads). Compiled code is
cached on disk, so only a fresh install pays the compile time. numba checks a
cached kernel against the source file it was written in, not the files of
the functions it inlined nor the lookup tables it froze in; so the cache
here is keyed by all of them (:func:`closure_digest`): an edit to any of
them, or to the core tables a lookup table comes from, compiles again.

The kernels read table records field by field and rely on numba's integer
types, so they run compiled only: with ``NUMBA_DISABLE_JIT=1`` set, calling
one raises an error that says so. The core (:mod:`allfives_env.core`) is
the readable Python form of every rule, and the tests hold the two equal.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import types

import numba
import numpy as np
from numba.core import caching, config
from numba.extending import intrinsic

__all__ = ["jit", "jit_parallel", "popcount", "lowest_bit", "prange", "thread_count"]

prange = numba.prange
_TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: The project's package folders: their kernels get the dependency-keyed cache.
_KERNEL_ROOTS = tuple(os.path.join(_TOP, name) + os.sep for name in ("allfives_env", "agents", "allfives_train"))


def _is_dispatcher(value: object) -> bool:
    return hasattr(value, "py_func") and hasattr(value, "overloads")


def closure_digest(py_func: types.FunctionType) -> str:
    """A digest of everything ``py_func`` compiles in: its source file and those of the kernels it calls, and the
    numpy arrays and numbers it reads as globals (numba freezes those into the code)."""
    seen: set[int] = set()
    parts: list[bytes] = []
    files: set[str] = set()
    pending = [py_func]
    while pending:
        func = pending.pop()
        if id(func) in seen:
            continue
        seen.add(id(func))
        files.add(inspect.getfile(func))
        names = set(func.__code__.co_names)
        for const in func.__code__.co_consts:  # nested functions, if any
            if isinstance(const, types.CodeType):
                names |= set(const.co_names)
        for name in sorted(names):
            value = func.__globals__.get(name)
            if _is_dispatcher(value):
                pending.append(value.py_func)
            elif isinstance(value, np.ndarray):
                parts.append(f"{func.__module__}.{name}:{value.dtype.str}:{value.shape}".encode() + value.tobytes())
            elif isinstance(value, (bool, int, float, np.number)):
                parts.append(f"{func.__module__}.{name}={value!r}".encode())
            elif isinstance(value, np.dtype):
                parts.append(f"{func.__module__}.{name}:{value.descr!r}".encode())
    for path in sorted(files):
        with open(path, "rb") as source:
            parts.append(path.encode() + hashlib.sha256(source.read()).digest())
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


class _ClosureStamped:
    """A cache locator mixin: a kernel's cache is fresh only while :func:`closure_digest` is unchanged."""

    def get_source_stamp(self):
        return closure_digest(self._py_func)

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.abspath(py_file).startswith(_KERNEL_ROOTS):
            return None
        self = super().from_function(py_func, py_file)
        if self is not None:
            self._py_func = py_func
        return self


def _install_locators() -> None:
    """Put the closure-stamped locators first; numba's own serve every other package's functions."""

    def named(name: str) -> type:  # numba renamed these from their underscored names in 0.60
        return getattr(caching, name, None) or getattr(caching, "_" + name)

    impl = named("CacheImpl")
    bases = (named("UserProvidedCacheLocator"), named("InTreeCacheLocator"), named("UserWideCacheLocator"))
    ours = [type(f"ClosureStamped{base.__name__}", (_ClosureStamped, base), {}) for base in bases]
    impl._locator_classes = ours + [c for c in impl._locator_classes if not issubclass(c, _ClosureStamped)]


with contextlib.suppress(AttributeError):  # a numba without these internals: its own stamps apply (own file only)
    _install_locators()


def _cacheable(func) -> bool:
    return os.path.exists(inspect.getfile(func))  # not a function typed at a prompt


def _uncompiled(func):
    """What a kernel is under ``NUMBA_DISABLE_JIT``: a call that says why it cannot run."""

    @functools.wraps(func)
    def refuse(*args, **kwargs):
        raise RuntimeError(
            f"{func.__qualname__} is a compiled kernel of the batched engine and runs only compiled; "
            "unset NUMBA_DISABLE_JIT (the core, allfives_env.core, is the same rules in plain Python)"
        )

    return refuse


def jit(func=None, *, inline: bool = False):
    """Compile ``func`` for one thread (cached; no Python objects inside); ``inline=True`` (as
    ``@jit(inline=True)``) compiles it into each caller instead."""
    if func is None:
        return functools.partial(jit, inline=inline)
    if config.DISABLE_JIT:
        return _uncompiled(func)
    return numba.njit(cache=_cacheable(func), nogil=True, error_model="numpy", inline="always" if inline else "never")(
        func
    )


def jit_parallel(func):
    """Compile ``func`` with its ``prange`` loops spread over threads (``numba.set_num_threads``)."""
    if config.DISABLE_JIT:
        return _uncompiled(func)
    return numba.njit(cache=_cacheable(func), nogil=True, error_model="numpy", parallel=True)(func)


def thread_count(threads: int | None) -> int:
    """``threads`` checked against what numba can run (None: all of them)."""
    limit = config.NUMBA_NUM_THREADS
    if threads is None:
        return limit
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= limit:
        raise ValueError(f"num_threads={threads!r} is not allowed; allowed: None or an integer 1..{limit}")
    return int(threads)


# -- bit intrinsics: one instruction each where the CPU has it ------------------------------------------------


@intrinsic
def popcount(typingctx, x):
    """The number of set bits."""

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return x(x), codegen


@intrinsic
def lowest_bit(typingctx, x):
    """The index of the lowest set bit (x > 0)."""

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], numba.core.cgutils.true_bit)

    return x(x), codegen
