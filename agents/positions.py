"""Decision positions to measure bots on: every seat view of seeded heuristic self-play matches.

The speed benchmark (``benchmarks/bench_bots.py``) and the regret tools
(``research/``) time or value bots on the same positions, so they share this
one generator. The matches are seeded (seed = match number), so the positions
are the same on every machine.
"""

from __future__ import annotations

from allfives_env.core import SeatView, State, make_rules

from .registry import make_agent


def heuristic_positions(matches: int, rules: str = "pagat", players: int = 2) -> list[SeatView]:
    """Every decision's view, forced ones included, in ``matches`` seeded heuristic-vs-heuristic matches."""
    views = []
    for seed in range(matches):
        state = State(make_rules(rules, players), seed=seed)
        bots = [make_agent("heuristic", seed=seed * 10 + s) for s in range(players)]
        while not state.finished:
            view = state.view(state.to_act)
            views.append(view)
            state.apply(bots[state.to_act].act(view))
    return views
