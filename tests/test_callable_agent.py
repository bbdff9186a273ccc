"""A policy on the environment's observation and mask plays through the Agent interface."""

from __future__ import annotations

import numpy as np
import pytest

from agents import Agent, make_agent
from agents.callable_agent import ObservationAgent
from agents.evaluate import evaluate
from allfives_env import raw_env
from allfives_env.core import State, make_rules


def first_legal(observation: np.ndarray, mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def test_sees_what_the_environment_shows_that_seat():
    seen = []

    def policy(observation, mask):
        seen.append((observation.copy(), mask.copy()))
        return first_legal(observation, mask)

    env = raw_env(num_players=3)
    env.reset(seed=5)
    agent = ObservationAgent(policy)
    for _ in range(200):
        if env.terminations[env.agent_selection]:
            break
        shown = env.observe(env.agent_selection)
        env.step(agent.act(env.seat_view(env.agent_selection)))
        np.testing.assert_array_equal(seen[-1][0], shown["observation"])
        np.testing.assert_array_equal(seen[-1][1], shown["action_mask"])
    assert len(seen) > 50


class FirstLegal(Agent):
    name = "first-legal"

    def act(self, view):
        return view.legal[0]


def test_refuses_illegal_or_non_integer_answers():
    state = State(make_rules(), seed=1)
    view = state.view(state.to_act)
    illegal = next(a for a in range(114) if a not in view.legal)
    with pytest.raises(ValueError, match="illegal"):
        ObservationAgent(lambda o, m: illegal).act(view)
    with pytest.raises(ValueError, match="action id"):
        ObservationAgent(lambda o, m: 1.5).act(view)
    with pytest.raises(ValueError, match="not callable"):
        ObservationAgent("greedy")


def test_takes_part_in_the_duplicate_harness():
    """Wrapped, the first legal action by mask plays exactly as the same policy written as an Agent."""

    def factory(spec, seed):
        if spec == "mine":
            return ObservationAgent(first_legal, seed)
        if spec == "first":
            return FirstLegal(seed)
        return make_agent(spec, seed)

    wrapped = evaluate(["mine", "greedy"], matches=6, seed=3, workers=1, progress=False, agent_factory=factory)
    native = evaluate(["first", "greedy"], matches=6, seed=3, workers=1, progress=False, agent_factory=factory)
    assert len(wrapped.games) == 12
    for a, b in zip(wrapped.agents, native.agents, strict=True):
        assert (a.wins, a.margin, a.choices) == (b.wins, b.margin, b.choices)
