"""The batched engine beside raw_env(): decisions per second at several batch sizes and thread counts.

Two figures per engine entry, both in decisions (table steps) per second:

- ``step()``: the engine's ``step`` calls alone, timed one by one; the
  random legal actions are chosen between them, outside the timing;
- ``loop``: a user's whole loop, the numpy choice of a uniformly random
  legal action from each mask included.

``raw_env()`` runs in the same process, by ``bench_env.py``'s loop
(``last()``, a random legal action, ``step``), and every entry is printed as
a ratio against it, so machines of different speed agree on the ratios.
Entries are interleaved over ``--repeats`` rounds and each keeps its best.
With ``--cpu N`` the process is pinned to one CPU: the one-thread figures
are then one core's. ``--threads 1 2`` also runs every size on two threads
(the two-thread entries are not pinned). ``--compile`` first times a fresh
process's first ``reset`` and ``step`` with an empty compile cache (cold)
and again with the cache it left (cached).

Run: ``python benchmarks/bench_vector.py [--sizes 256 1024 4096] [--threads 1 2] [--seconds S] [--repeats R]
[--cpu N] [--num-players N] [--rules R] [--features] [--compile]``.
"""

from __future__ import annotations

import argparse
import inspect
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask``."""
    legal = np.flatnonzero(mask.view(bool))  # (table, action) pairs in table order, as flat indices
    counts = np.bincount(legal // mask.shape[1], minlength=len(mask))
    starts = np.cumsum(counts) - counts
    return legal[starts + (rng.random(len(mask)) * counts).astype(np.intp)] % mask.shape[1]


def make_engine(settings: dict, num_envs: int, threads: int):
    from allfives_env.vector import VectorEnv

    if threads == 1:
        return VectorEnv(num_envs, **settings)
    if "num_threads" not in inspect.signature(VectorEnv).parameters:
        return None  # an engine without threads (an older tree, through compare.py)
    return VectorEnv(num_envs, **settings, num_threads=threads)


def run_vector(settings: dict, num_envs: int, threads: int, seconds: float, seed: int = 0) -> tuple[float, float]:
    """(step() decisions per second, whole-loop decisions per second) of the engine, or NaNs without threads."""
    env = make_engine(settings, num_envs, threads)
    if env is None:
        return float("nan"), float("nan")
    step = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(5):  # warm up caches and the allocator
        step = env.step(random_legal(step.action_mask, rng))
    steps, stepping = 0, 0.0
    clock = time.perf_counter
    start = clock()
    deadline = start + seconds
    while True:
        for _ in range(10):
            actions = random_legal(step.action_mask, rng)
            before = clock()
            step = env.step(actions)
            stepping += clock() - before
        steps += 10
        now = clock()
        if now >= deadline:
            return steps * num_envs / stepping, steps * num_envs / (now - start)


def run_raw(settings: dict, seconds: float, seed: int = 0) -> float:
    """Decisions per second of one raw_env() table, by bench_env.py's own loop."""
    from bench_env import run  # this script's folder is on the path when it runs

    import allfives_env

    return run(lambda: allfives_env.raw_env(**settings), seconds, seed)[0]


_FIRST_STEP = (
    "import time; start = time.perf_counter(); import numpy as np; from allfives_env.vector import VectorEnv; "
    "env = VectorEnv(64, **{settings!r}); s = env.reset(seed=0); env.step(s.action_mask.argmax(1)); "
    "print(time.perf_counter() - start)"
)


def compile_times(settings: dict) -> tuple[float, float]:
    """Seconds from a fresh process's start to its first step's end: with an empty compile cache, then with it."""
    with tempfile.TemporaryDirectory() as cache:
        environment = dict(os.environ, NUMBA_CACHE_DIR=cache)
        times = []
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", _FIRST_STEP.format(settings=settings)], env=environment,
                                  capture_output=True, text=True, check=True)  # fmt: skip
            times.append(float(done.stdout.split()[-1]))
        return times[0], times[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096], help="numbers of tables")
    parser.add_argument("--threads", type=int, nargs="+", default=[1], help="thread counts of the engine")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds of play per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="runs per entry; the best is reported")
    parser.add_argument("--cpu", type=int, default=None, help="pin the one-thread runs to this CPU (one core)")
    parser.add_argument("--num-players", type=int, default=2)
    parser.add_argument("--rules", default="pagat", choices=["pagat", "fives"])
    parser.add_argument("--features", action="store_true", help="also measure with action_features=True")
    parser.add_argument("--compile", action="store_true", help="also time a cold and a cached first step")
    args = parser.parse_args()

    base = {"num_players": args.num_players, "rules": args.rules}
    variants = {"observation + mask": base}
    if args.features:
        variants["+ action features"] = {**base, "action_features": True}
    everyone = os.sched_getaffinity(0)
    import allfives_env.vector  # noqa: F401  (numba counts the CPUs it may use at import: before any pinning)

    if args.compile:
        cold, cached = compile_times(base)
        print(f"first step of a fresh process: {cold:.1f} s with an empty compile cache, {cached:.2f} s with it")
    best: dict[tuple, tuple[float, float]] = {}
    for _ in range(args.repeats):  # interleaved, so a busy moment hurts every entry alike
        for label, settings in variants.items():
            entries = [("raw_env()", 1, None)] + [
                (f"{size} tables", t, size) for t in args.threads for size in args.sizes
            ]
            for name, threads, size in entries:
                if args.cpu is not None:
                    os.sched_setaffinity(0, {args.cpu} if threads == 1 else everyone)
                if size is None:
                    rate = run_raw(settings, args.seconds)
                    figures = (rate, rate)
                else:
                    figures = run_vector(settings, size, threads, args.seconds)
                old = best.get((label, name, threads), (0.0, 0.0))
                best[label, name, threads] = (max(old[0], figures[0]), max(old[1], figures[1]))
    pinned = f", one-thread runs pinned to CPU {args.cpu}" if args.cpu is not None else ""
    print(
        f"allfives: rules={args.rules} num_players={args.num_players}; "
        f"best of {args.repeats} x {args.seconds:g} s{pinned}; random legal actions"
    )
    print(f"{'variant':<20} {'engine':<14} {'threads':>7} {'step()/s':>12} {'vs raw_env()':>13} {'loop/s':>12} "
          f"{'vs raw_env()':>13}")  # fmt: skip
    for label in variants:
        reference = best[label, "raw_env()", 1][1]
        for (variant, name, threads), (stepping, loop) in best.items():
            if variant == label:
                print(
                    f"{label:<20} {name:<14} {threads:>7} {stepping:>12,.0f} {stepping / reference:>12.2f}x "
                    f"{loop:>12,.0f} {loop / reference:>12.2f}x"
                )


if __name__ == "__main__":
    main()
