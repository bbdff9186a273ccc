"""A quick duplicate duel between two bots, for tuning them (the full harness is agents.evaluate).

Match k is played twice on the same seeded deals (``State(rules, seed=k)``):
bot A in seat 0 and B in seat 1, then the seats swapped, so the luck of the
deal cancels. The win rate counts games; its 95% interval is computed over
the duplicate pairs (the two games of a pair are not independent).

    python benchmarks/duel.py heuristic greedy --matches 300 --workers 2
"""

from __future__ import annotations

import argparse
import math
import time
from multiprocessing import Pool

from agents.registry import make_agent
from allfives_env.core import State, make_rules


def play(spec_a: str, spec_b: str, seed: int, a_seat: int, rules_kwargs: dict) -> dict:
    """One game; A sits at ``a_seat`` (two players). Returns A's result and both bots' thinking times."""
    rules = make_rules(**rules_kwargs)
    agents = {
        a_seat: make_agent(spec_a, seed=seed * 2 + a_seat),
        1 - a_seat: make_agent(spec_b, seed=seed * 2 + 1 - a_seat + 7),
    }
    state = State(rules, seed=seed)
    times: dict[int, list[float]] = {0: [], 1: []}
    while not state.finished:
        seat = state.to_act
        view = state.view(seat)
        start = time.perf_counter()
        action = agents[seat].act(view)
        times[seat].append(time.perf_counter() - start)
        state.apply(action)
    win = 1.0 if state.winners == (a_seat,) else 0.5 if a_seat in state.winners else 0.0
    margin = state.scores[a_seat] - state.scores[1 - a_seat]
    return {"win": win, "margin": margin, "a_times": times[a_seat], "b_times": times[1 - a_seat]}


def duplicate(args: tuple) -> dict:
    spec_a, spec_b, seed, rules_kwargs = args
    games = [play(spec_a, spec_b, seed, seat, rules_kwargs) for seat in (0, 1)]
    return {
        "pair": sum(g["win"] for g in games) / 2,
        "margin": sum(g["margin"] for g in games) / 2,
        "a_times": games[0]["a_times"] + games[1]["a_times"],
        "b_times": games[0]["b_times"] + games[1]["b_times"],
    }


def summary(spec: str, times: list[float]) -> str:
    mean = sum(times) / len(times)
    return f"{spec}: {len(times)} decisions, mean {mean * 1000:.2f} ms, slowest {max(times) * 1000:.1f} ms"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", help="bot spec for A, e.g. heuristic or search:200")
    parser.add_argument("b", help="bot spec for B")
    parser.add_argument("--matches", type=int, default=100, help="duplicate matches (two games each)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rules", default="pagat")
    args = parser.parse_args(argv)
    rules_kwargs = {"rules": args.rules, "num_players": 2}
    jobs = [(args.a, args.b, args.first_seed + k, rules_kwargs) for k in range(args.matches)]
    start = time.perf_counter()
    with Pool(args.workers) as pool:
        results = pool.map(duplicate, jobs, chunksize=1)
    pairs = [r["pair"] for r in results]
    n = len(pairs)
    mean = sum(pairs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in pairs) / max(1, n - 1))
    half = 1.96 * sd / math.sqrt(n)
    margin = sum(r["margin"] for r in results) / n
    print(f"{args.a} vs {args.b}: {n} duplicate matches ({2 * n} games), {args.rules} 2p")
    print(f"  {args.a} win rate {mean:.3f}  95% CI [{mean - half:.3f}, {mean + half:.3f}]  mean margin {margin:+.1f}")
    print("  " + summary(args.a, [t for r in results for t in r["a_times"]]))
    print("  " + summary(args.b, [t for r in results for t in r["b_times"]]))
    print(f"  wall {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
