"""The trained policy as an agent: legal play, the shipped checkpoint, argmax and sampling, errors."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from agents.policy_agent import DEFAULT_CHECKPOINT, PolicyAgent, load_policy_agent
from agents.policy_features import ACTION_SIZE, STATE_SIZE, encode_decision
from agents.policy_net import CheckpointError, NumpyActor, PolicyNet, policy_payload, read_checkpoint
from agents.registry import make_agent
from allfives_env.core import State, make_rules


@pytest.fixture
def checkpoint(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / "policy.pt"
    torch.save(policy_payload(PolicyNet(32, 16), actor_only=True, steps=7), path)
    return path


@pytest.mark.parametrize(("rules", "players"), [("pagat", 2), ("pagat", 3), ("pagat", 4), ("fives", 2)])
def test_policy_plays_only_legal_actions(checkpoint, rules, players):
    table = make_rules(rules, players)
    agents = [PolicyAgent(checkpoint, seed=s, sample=s % 2 == 1) for s in range(players)]
    for seed in range(3):
        state = State(table, seed=seed)
        while not state.finished:
            view = state.view(state.to_act)
            action = agents[state.to_act].act(view)
            assert action in state.legal_actions()
            state.apply(action)


def test_argmax_follows_the_networks_scores(checkpoint):
    agent = PolicyAgent(checkpoint)
    net = PolicyNet(32, 16)
    net.load_state_dict(read_checkpoint(checkpoint)["weights"], strict=False)
    rng = random.Random(1)
    state = State(make_rules(), seed=4)
    compared = 0
    while not state.finished and compared < 40:
        legal = state.legal_actions()
        if len(legal) > 1:
            view = state.view(state.to_act)
            s, a = encode_decision(view)
            with torch.no_grad():
                logits = net.logits(
                    torch.from_numpy(s)[None], torch.from_numpy(a)[None], torch.ones(1, len(legal), dtype=torch.bool)
                )[0].numpy()
            np.testing.assert_allclose(agent.actor.logits(s, a), logits, rtol=1e-4, atol=1e-4)
            assert agent.act(view) == legal[int(logits.argmax())]
            compared += 1
        state.apply(rng.choice(legal))
    assert compared >= 10


def test_sampling_is_seeded(checkpoint):
    state = State(make_rules(), seed=9)
    rng = random.Random(2)
    while len(state.legal_actions()) < 3:
        state.apply(rng.choice(state.legal_actions()))
    view = state.view(state.to_act)
    runs = [[PolicyAgent(checkpoint, seed=5, sample=True).act(view) for _ in range(1)] for _ in range(2)]
    assert runs[0] == runs[1]
    agent = PolicyAgent(checkpoint, seed=5, sample=True)
    choices = {agent.act(view) for _ in range(200)}
    assert choices <= set(view.legal) and len(choices) > 1


def test_the_shipped_default_checkpoint_loads_and_plays():
    assert DEFAULT_CHECKPOINT.is_file()
    assert DEFAULT_CHECKPOINT.stat().st_size < 5_000_000
    data = read_checkpoint(DEFAULT_CHECKPOINT)
    assert data["actor_only"] and data["steps"] > 0
    assert data["config"]["game"]["rules"] == "pagat" and data["config"]["game"]["num_players"] == 2
    agent = load_policy_agent(None, seed=0)
    assert agent.name == "trained"
    by_name = make_agent("trained", seed=0)
    state = State(make_rules(), seed=11)
    while not state.finished:
        view = state.view(state.to_act)
        action = agent.act(view)
        assert action == by_name.act(view)
        state.apply(action)


def test_checkpoint_spec_through_the_registry(checkpoint):
    agent = make_agent(f"checkpoint:{checkpoint}", seed=3)
    assert isinstance(agent, PolicyAgent) and agent.trained_steps == 7


def test_a_broken_checkpoint_is_refused_by_name(tmp_path, checkpoint):
    broken = tmp_path / "broken.pt"
    broken.write_bytes(checkpoint.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="broken.pt"):
        load_policy_agent(broken)
    with pytest.raises(CheckpointError, match="does not exist"):
        make_agent(f"checkpoint:{tmp_path / 'nothing.pt'}")


def test_feature_sizes_are_what_the_network_expects():
    net = PolicyNet(16, 8)
    assert net.trunk[0].in_features == STATE_SIZE and net.action_in.in_features == ACTION_SIZE
    actor = NumpyActor(net)
    assert actor.logits(np.zeros(STATE_SIZE), np.zeros((3, ACTION_SIZE))).shape == (3,)
