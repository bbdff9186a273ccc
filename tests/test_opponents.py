"""The Gymnasium environment's opponents given by name: resolved through a hook, never by importing the agents."""

from __future__ import annotations

import pytest

from allfives_env import opponents
from allfives_env.gym_env import AllFivesSingleAgentEnv


class FirstLegal:
    def __init__(self, seed=None) -> None:
        self.seed = seed

    def act(self, view):
        return view.legal[0]


@pytest.fixture
def no_resolvers(monkeypatch):
    monkeypatch.setattr(opponents, "_RESOLVERS", [])


def test_the_installed_entry_point_resolves_the_project_bots(no_resolvers):
    points = list(opponents.entry_points(group=opponents.AGENT_ENTRY_POINTS))
    assert [p.value for p in points] == ["agents.registry:make_agent"]
    env = AllFivesSingleAgentEnv(num_players=3, opponents=["greedy", "heuristic"])
    assert [type(seat.agent).__name__ for seat in env.seats] == ["GreedyAgent", "HeuristicAgent"]


def test_a_registered_resolver_is_asked_first(no_resolvers):
    seen = []

    def resolver(name, seed):
        if name != "first":
            raise ValueError(f"unknown agent spec {name!r}")
        seen.append(seed)
        return FirstLegal(seed)

    opponents.register_agent_resolver(resolver)
    env = AllFivesSingleAgentEnv(num_players=3, opponents=["first", "greedy"])  # "greedy" falls through to the registry
    assert isinstance(env.seats[0].agent, FirstLegal) and type(env.seats[1].agent).__name__ == "GreedyAgent"
    assert seen == [0]
    env.reset(seed=1)
    env.step(int(env.action_masks().nonzero()[0][0]))


def test_an_unknown_name_is_refused_with_the_registry_s_message(no_resolvers):
    with pytest.raises(ValueError, match=r"^opponents: unknown agent spec 'grredy'; allowed: random, greedy"):
        AllFivesSingleAgentEnv(opponents="grredy")


def test_without_any_registry_a_name_says_what_to_pass_instead(no_resolvers, monkeypatch):
    monkeypatch.setattr(opponents, "entry_points", lambda group: [])
    with pytest.raises(ValueError, match="no agent registry is installed; pass an Agent or a callable"):
        AllFivesSingleAgentEnv(opponents="greedy")
    env = AllFivesSingleAgentEnv(num_players=2, opponents=FirstLegal())  # agents and callables need no registry
    env.reset(seed=2)


def test_a_resolver_must_be_callable(no_resolvers):
    with pytest.raises(ValueError, match="resolver='greedy' is not allowed; allowed: a callable"):
        opponents.register_agent_resolver("greedy")
    assert opponents._RESOLVERS == []
