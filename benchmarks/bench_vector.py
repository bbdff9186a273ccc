"""Random play through the batched engine: decisions per second at several batch sizes, against raw_env().

Each engine step is what a training loop does with it: read the action
masks, pick a uniformly random legal action per table, and ``step`` (which
returns every table's observation and mask, and restarts finished tables).
``raw_env()`` is measured in the same run the way ``bench_env.py`` does
(``last()``, a random legal action, ``step``), interleaved with the engine,
so the printed ratios compare the two under the same machine load. Rates per
CPU second of this process are printed too: on a shared machine they are
closer to what a quiet one would show. With ``--cpu N`` the process is
pinned to that one CPU, so the figures are one core's.

Run: ``python benchmarks/bench_vector.py [--sizes 64 256 1024 4096] [--seconds S] [--repeats R] [--cpu N]
[--num-players N] [--rules R] [--features] [--core-share]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask``."""
    legal = np.flatnonzero(mask.view(bool))  # (table, action) pairs in table order, as flat indices
    counts = np.bincount(legal // mask.shape[1], minlength=len(mask))
    starts = np.cumsum(counts) - counts
    return legal[starts + (rng.random(len(mask)) * counts).astype(np.intp)] % mask.shape[1]


class CoreShare:
    """Process time spent in the core's per-table calls (deals, leaders, hand awards) during engine runs."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.installed = False

    def install(self) -> None:
        from allfives_env.vector import rounds

        for name in ("seeded_tiles", "domino_award", "block_award"):
            setattr(rounds, name, self._timed(getattr(rounds, name)))
        self.installed = True

    def _timed(self, function):
        clock = time.process_time

        def timed(*args):
            start = clock()
            try:
                return function(*args)
            finally:
                self.seconds += clock() - start

        return timed


CORE = CoreShare()


def run_vector(settings: dict, num_envs: int, seconds: float, seed: int = 0) -> tuple[float, float]:
    """Decisions per wall-clock second and per CPU second of the batched engine with ``num_envs`` tables."""
    from allfives_env.vector import VectorEnv

    env = VectorEnv(num_envs, **settings)
    step = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(5):  # warm up the lookup tables and caches
        step = env.step(random_legal(step.action_mask, rng))
    steps = 0
    start, cpu_start, core_start = time.perf_counter(), time.process_time(), CORE.seconds
    deadline = start + seconds
    while True:
        for _ in range(10):
            step = env.step(random_legal(step.action_mask, rng))
        steps += 10
        now = time.perf_counter()
        if now >= deadline:
            cpu = time.process_time() - cpu_start
            if CORE.installed:
                print(
                    f"  {num_envs} tables: {(CORE.seconds - core_start) / cpu:.0%} of the engine's CPU time in the core's calls"
                )
            return steps * num_envs / (now - start), steps * num_envs / cpu


def run_raw(settings: dict, seconds: float, seed: int = 0) -> tuple[float, float]:
    """Decisions per wall-clock second and per CPU second of one raw_env() table, by bench_env.py's own loop."""
    from bench_env import run  # this script's folder is on the path when it runs

    import allfives_env

    return run(lambda: allfives_env.raw_env(**settings), seconds, seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 1024, 4096], help="numbers of tables")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds of play per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="runs per entry; the best is reported")
    parser.add_argument("--cpu", type=int, default=None, help="pin the process to this CPU (one core)")
    parser.add_argument("--num-players", type=int, default=2)
    parser.add_argument("--rules", default="pagat", choices=["pagat", "fives"])
    parser.add_argument("--features", action="store_true", help="also measure with action_features=True")
    parser.add_argument(
        "--core-share",
        action="store_true",
        help="print the share of the engine's time spent in the core's per-table calls (deals, leaders, awards)",
    )
    args = parser.parse_args()
    if args.core_share:
        CORE.install()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})

    base = {"num_players": args.num_players, "rules": args.rules}
    variants = {"observation + mask": base}
    if args.features:
        variants["+ action features"] = {**base, "action_features": True}
    best: dict[tuple[str, str], tuple[float, float]] = {}
    for _ in range(args.repeats):  # interleaved, so a busy moment hurts every entry alike
        for label, settings in variants.items():
            entries = [("raw_env()", lambda s=settings: run_raw(s, args.seconds))]
            entries += [
                (f"{size} tables", lambda s=settings, n=size: run_vector(s, n, args.seconds)) for size in args.sizes
            ]
            for name, measure in entries:
                wall, cpu = measure()
                old = best.get((label, name), (0.0, 0.0))
                best[label, name] = (max(old[0], wall), max(old[1], cpu))
    pinned = f", pinned to CPU {args.cpu}" if args.cpu is not None else ""
    print(
        f"allfives: rules={args.rules} num_players={args.num_players}; "
        f"best of {args.repeats} x {args.seconds:g} s{pinned}; random legal actions"
    )
    print(
        f"{'variant':<20} {'engine':<14} {'decisions/s':>12} {'vs raw_env()':>13} {'per CPU second':>15} {'vs raw_env()':>13}"
    )
    for label in variants:
        ref_wall, ref_cpu = best[label, "raw_env()"]
        for (variant, name), (wall, cpu) in best.items():
            if variant == label:
                print(
                    f"{label:<20} {name:<14} {wall:>12,.0f} {wall / ref_wall:>12.2f}x {cpu:>15,.0f} {cpu / ref_cpu:>12.2f}x"
                )


if __name__ == "__main__":
    main()
