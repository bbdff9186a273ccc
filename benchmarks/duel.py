"""A quick duplicate duel between two bots, for tuning them (the full harness is agents.evaluate).

Deal sequence k (``State(rules, seed=k)``) is played once per side of the
table: bot A plays every seat of that side, bot B all the others. With two
players that is the same deals with the seats swapped, so the luck of the deal
cancels. A's win rate counts games (a shared win counts as a share); its 95%
interval is computed over the duplicate sets, since the games of one set are
not independent. With more than two sides an even bot would win 1/sides.
Thinking times are CPU time, so other load on the machine disturbs them little.

    python benchmarks/duel.py heuristic greedy --matches 300 --workers 2
    python benchmarks/duel.py heuristic greedy --players 4      # pagat partnerships
"""

from __future__ import annotations

import argparse
import math
import time
from multiprocessing import Pool

from agents.registry import make_agent
from allfives_env.core import State, make_rules


def play(spec_a: str, spec_b: str, seed: int, a_side: int, rules_kwargs: dict) -> dict:
    """One game with A on ``a_side``. Returns A's share of the win, its margin and both bots' thinking times."""
    rules = make_rules(**rules_kwargs)
    n = rules.num_players
    seats = range(n)
    agents = [
        make_agent(spec_a, seed=seed * n + s)
        if rules.side_of[s] == a_side
        else make_agent(spec_b, seed=seed * n + s + 7)
        for s in seats
    ]
    state = State(rules, seed=seed)
    times: dict[bool, list[float]] = {True: [], False: []}
    while not state.finished:
        seat = state.to_act
        view = state.view(seat)
        start = time.process_time()  # CPU time: thinking on one core, whatever else the machine runs
        action = agents[seat].act(view)
        times[rules.side_of[seat] == a_side].append(time.process_time() - start)
        state.apply(action)
    win = 1.0 / len(state.winners) if a_side in state.winners else 0.0
    others = [score for side, score in enumerate(state.scores) if side != a_side]
    margin = state.scores[a_side] - sum(others) / len(others)
    return {"win": win, "margin": margin, "a_times": times[True], "b_times": times[False]}


def duplicate(args: tuple) -> dict:
    spec_a, spec_b, seed, rules_kwargs = args
    sides = make_rules(**rules_kwargs).num_sides
    games = [play(spec_a, spec_b, seed, side, rules_kwargs) for side in range(sides)]
    return {
        "set": sum(g["win"] for g in games) / sides,
        "margin": sum(g["margin"] for g in games) / sides,
        "a_times": [t for g in games for t in g["a_times"]],
        "b_times": [t for g in games for t in g["b_times"]],
    }


def summary(spec: str, times: list[float]) -> str:
    mean = sum(times) / len(times)
    return f"{spec}: {len(times)} decisions, mean {mean * 1000:.2f} ms, slowest {max(times) * 1000:.1f} ms"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", help="bot spec for A, e.g. heuristic or search:200")
    parser.add_argument("b", help="bot spec for B")
    parser.add_argument("--matches", type=int, default=100, help="duplicate sets (one game per side each)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rules", default="pagat")
    parser.add_argument("--players", type=int, default=2)
    args = parser.parse_args(argv)
    rules_kwargs = {"rules": args.rules, "num_players": args.players}
    sides = make_rules(**rules_kwargs).num_sides
    jobs = [(args.a, args.b, args.first_seed + k, rules_kwargs) for k in range(args.matches)]
    start = time.perf_counter()
    with Pool(args.workers) as pool:
        results = pool.map(duplicate, jobs, chunksize=1)
    sets = [r["set"] for r in results]
    n = len(sets)
    mean = sum(sets) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in sets) / max(1, n - 1))
    half = 1.96 * sd / math.sqrt(n)
    margin = sum(r["margin"] for r in results) / n
    print(f"{args.a} vs {args.b}: {n} duplicate sets ({sides * n} games), {args.rules} {args.players}p, {sides} sides")
    print(f"  {args.a} win rate {mean:.3f}  95% CI [{mean - half:.3f}, {mean + half:.3f}]  mean margin {margin:+.1f}")
    print("  " + summary(args.a, [t for r in results for t in r["a_times"]]))
    print("  " + summary(args.b, [t for r in results for t in r["b_times"]]))
    print(f"  wall {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
