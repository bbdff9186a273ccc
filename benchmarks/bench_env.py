"""Random play through the AEC environment: decisions per second with observation and mask.

Each decision is what a training loop does: ``env.last()`` (observation and
action mask), a uniformly random legal action picked from the mask, and
``env.step(action)``; the dead steps and resets at episode ends are timed
too. ``allfives_env.env()`` and ``raw_env()`` run side by side with
PettingZoo's ``connect_four_v3.env()`` as the yardstick. Rates per CPU
second of this process are printed too: on a shared machine they are closer
to what a quiet one would show than wall-clock rates. With
``--action-features`` both are also run with ``action_features=True`` (every
``last()`` then encodes the per-action feature rows too), and the cost is
printed as a ratio against ``raw_env()`` without them, measured in the same run.

Run: ``python benchmarks/bench_env.py [--seconds S] [--repeats R] [--num-players N] [--rules R] [--action-features]``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import numpy as np


def run(make: Callable, seconds: float, seed: int = 0) -> tuple[float, float]:
    """Decisions per wall-clock second and per CPU second of this process, over about ``seconds`` of play."""
    env = make()
    env.reset(seed=seed)
    chooser = random.Random(seed)
    flatnonzero = np.flatnonzero
    decisions = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        for _ in range(1000):
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                if not env.agents:
                    env.reset()
                continue
            legal = flatnonzero(obs["action_mask"])
            env.step(int(legal[chooser.randrange(len(legal))]))
            decisions += 1
        now = time.perf_counter()
        if now >= deadline:
            return decisions / (now - start), decisions / (time.process_time() - cpu_start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds of play per environment and repeat")
    parser.add_argument("--repeats", type=int, default=3, help="runs per environment; the best is reported")
    parser.add_argument("--num-players", type=int, default=2)
    parser.add_argument("--rules", default="pagat", choices=["pagat", "fives"])
    parser.add_argument(
        "--action-features", action="store_true", help="also run both with action_features=True, beside raw_env()"
    )
    args = parser.parse_args()

    from pettingzoo.classic import connect_four_v3

    import allfives_env

    settings = {"num_players": args.num_players, "rules": args.rules}
    makers = {
        "connect_four_v3 env()": connect_four_v3.env,
        "allfives env()": lambda: allfives_env.env(**settings),
        "allfives raw_env()": lambda: allfives_env.raw_env(**settings),
    }
    if args.action_features:
        makers["allfives env(af)"] = lambda: allfives_env.env(action_features=True, **settings)
        makers["allfives raw_env(af)"] = lambda: allfives_env.raw_env(action_features=True, **settings)
    best = {name: (0.0, 0.0) for name in makers}
    for _ in range(args.repeats):  # interleaved, so a busy moment hurts every entry alike
        for name, make in makers.items():
            wall, cpu = run(make, args.seconds)
            best[name] = (max(best[name][0], wall), max(best[name][1], cpu))
    yardstick = best["connect_four_v3 env()"]
    print(f"allfives: rules={args.rules} num_players={args.num_players}; best of {args.repeats} x {args.seconds:g} s")
    print(
        f"{'environment':<24} {'decisions/s':>12} {'vs connect_four':>16} {'per CPU second':>15} {'vs connect_four':>16}"
    )
    for name, (wall, cpu) in best.items():
        print(f"{name:<24} {wall:>12,.0f} {wall / yardstick[0]:>15.2f}x {cpu:>15,.0f} {cpu / yardstick[1]:>15.2f}x")
    if args.action_features:
        plain, featured = best["allfives raw_env()"], best["allfives raw_env(af)"]
        print(
            "(af) = action_features=True. raw_env(af) / raw_env(): "
            f"{featured[0] / plain[0]:.2f}x wall, {featured[1] / plain[1]:.2f}x per CPU second"
        )


if __name__ == "__main__":
    main()
