"""The batched bots choose what the bots themselves choose, at every decision of seeded matches.

Each table of an engine is mirrored by a core ``State`` with the same seed;
one copy of each bot plays from the core's view, a twin with the same seed
is batched over the engine's tables (``agents.batched.choose``). Every
decision must agree, ties broken by the same generator draws included, and
the engine's seat views must equal the core's.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_bots import CONFIGS, public

from agents.batched import choose
from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.random_agent import RandomAgent
from agents.search import SearchAgent
from allfives_env.core import State, make_rules
from allfives_env.vector import VectorEnv

TABLES = 12


def line_up(seat: int, table: int) -> list:
    """A mix of bots, different at every seat and table (seeded by both)."""
    seed = 1000 * table + seat
    kind = (seat + table) % 4
    if kind == 3:
        return HeuristicAgent(seed, weights={"threat": 0.7, "block": 5.0})  # other weights: their own group
    return [HeuristicAgent, GreedyAgent, RandomAgent][kind](seed)


@pytest.mark.parametrize("target", [None, 80])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_batched_bots_choose_what_the_bots_choose(config, target):
    rules = make_rules(**config, target=target)
    env = VectorEnv(TABLES, **config, target=target)
    step = env.reset(seed=40)
    states = [State(rules, seed=40 + i) for i in range(TABLES)]
    n = rules.num_players
    batched = [[line_up(s, i) for s in range(n)] for i in range(TABLES)]
    reference = [[line_up(s, i) for s in range(n)] for i in range(TABLES)]
    decisions = ties = 0
    for _ in range(300):
        seats = step.current_player
        agents = [batched[i][seats[i]] for i in range(TABLES)]
        got = choose(env, np.arange(TABLES), agents)
        for i, state in enumerate(states):
            view = state.view(state.to_act)
            assert public(env.seat_views([i])[0]) == public(view)
            want = reference[i][state.to_act].act(view)
            assert got[i] == want, f"table {i}, seat {state.to_act}, {type(agents[i]).__name__}: {got[i]} != {want}"
            decisions += 1
            ties += len(view.legal) > 1
        step = env.step(got)
        for i, state in enumerate(states):
            state.apply(int(got[i]))
            if state.finished:
                states[i] = State(rules, seed=int(env.records[i]["seed"][0]))
                for seat in range(n):  # a new match: every bot reset alike
                    batched[i][seat].reset(i * 10 + seat)
                    reference[i][seat].reset(i * 10 + seat)
    assert decisions == 300 * TABLES and ties > 500


def test_other_agents_play_from_the_seat_view():
    env = VectorEnv(3)
    env.reset(seed=5)
    ours, theirs = (
        [SearchAgent(1, simulations=12) for _ in range(3)],
        [SearchAgent(1, simulations=12) for _ in range(3)],
    )
    got = choose(env, np.arange(3), ours)
    states = [State(make_rules(), seed=5 + i) for i in range(3)]
    assert got.tolist() == [agent.act(s.view(s.to_act)) for agent, s in zip(theirs, states, strict=True)]
