"""The trained policy as an agent: legal play, the shipped checkpoint, argmax and sampling, errors,
and the same choices through the environment's own observation contract as through the harness."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import allfives_env
import train
from agents.evaluation import evaluate
from agents.policy_agent import CHECKPOINTS, DEFAULT_CHECKPOINT, PolicyAgent, load_policy_agent
from agents.policy_net import (
    CONTRACT,
    CheckpointError,
    NumpyActor,
    PolicyNet,
    net_from_checkpoint,
    policy_payload,
    read_checkpoint,
    read_policy_file,
)
from agents.registry import make_agent
from allfives_env.core import State, make_rules
from allfives_env.core.record import read_record
from allfives_env.views.action_features import ACTION_FEATURE_SIZE, action_features
from allfives_env.views.observation import OBSERVATION_SIZE, encode_observation


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
    net = net_from_checkpoint(read_checkpoint(checkpoint))
    rng = random.Random(1)
    state = State(make_rules(), seed=4)
    compared = 0
    while not state.finished and compared < 40:
        legal = state.legal_actions()
        if len(legal) > 1:
            view = state.view(state.to_act)
            obs, feats = encode_observation(view), action_features(view)
            mask = np.zeros(114, dtype=np.int8)
            mask[legal] = 1
            with torch.no_grad():
                logits = net.logits(torch.from_numpy(obs)[None], torch.from_numpy(feats)[None],
                                    torch.from_numpy(mask)[None])[0].numpy()  # fmt: skip
            assert (logits[mask == 0] < -1e8).all()
            ids, numpy_logits = agent.legal_logits(view)
            assert ids == sorted(legal)
            np.testing.assert_allclose(numpy_logits, logits[ids], rtol=1e-4, atol=1e-4)
            assert agent.act(view) == int(logits.argmax())
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


def test_the_network_reads_the_environments_contract():
    net = PolicyNet(16, 8)
    assert net.trunk[0].in_features == OBSERVATION_SIZE == CONTRACT["observation"] == 192
    assert net.action_in.in_features == ACTION_FEATURE_SIZE == CONTRACT["action_features"]
    actor = NumpyActor(net)
    assert actor.logits(np.zeros(OBSERVATION_SIZE), np.zeros((3, ACTION_FEATURE_SIZE))).shape == (3,)


def test_every_shipped_checkpoint_is_format_2():
    """What lets format 1 go: no file the package ships was saved in it."""
    shipped = sorted(CHECKPOINTS.glob("*.pt"))
    assert len(shipped) >= 3
    for path in shipped:
        assert read_policy_file(path)["version"] == 2, path.name


def test_a_format_1_checkpoint_is_refused_in_one_line_by_every_reader(tmp_path, checkpoint):
    """Format 1 read a private encoding of the game; no code reads it any more, and the message says so."""
    data = torch.load(checkpoint, weights_only=True)
    data["version"], data["feature_version"] = 1, 1
    old = tmp_path / "old.pt"
    torch.save(data, old)
    for load in (load_policy_agent, read_checkpoint, lambda p: make_agent(f"checkpoint:{p}")):
        with pytest.raises(CheckpointError) as caught:
            load(old)
        message = str(caught.value)
        assert "old.pt" in message and "format version 1" in message and "\n" not in message
        assert "no longer read" in message and "train.py" in message and "still plays" not in message
    assert not (CHECKPOINTS.parent / "legacy_policy.py").exists()


# -- the same choices through the PettingZoo environment as through the evaluation harness ----------


@pytest.fixture(scope="module")
def tiny_policy(tmp_path_factory):
    """The policy of a tiny training run (the tiny config, no evaluation)."""
    run_dir = tmp_path_factory.mktemp("tiny")
    overrides = [f"run.dir={run_dir}", "eval.every=0", "eval.final_matches=0"]
    assert train.main(["--config", str(train.DEFAULT_CONFIG.parent / "tiny.yaml"), "--no-progress"]
                      + [a for o in overrides for a in ("--set", o)]) == 0  # fmt: skip
    return run_dir / "tiny" / "policy.pt"


def user_loop_choice(net: PolicyNet, obs: dict) -> int:
    """What a user's own loop does with the policy: read the observation dict, take the best legal logit."""
    with torch.no_grad():
        logits = net.logits(
            torch.from_numpy(obs["observation"])[None],
            torch.from_numpy(obs["action_features"])[None],
            torch.from_numpy(obs["action_mask"])[None],
        )[0]
    return int(logits.argmax())


def record_actions(record: dict) -> list[int]:
    """The action ids of a game record, in order, read on a state dealt from its seed."""
    state = State(make_rules(record["rules"], record["num_players"]), seed=record["seed"])
    actions = []
    for entry in record["rounds"]:
        for text in entry["actions"]:
            actions.append(state.parse_action(text))
            state.apply(actions[-1])
    assert state.finished
    return actions


def check_same_choices(policy_path, tmp_path, opponent: str, matches: int) -> int:
    spec = f"checkpoint:{policy_path}"
    records = tmp_path / "records"
    evaluate([spec, opponent], matches, seed=3, workers=1, records_dir=str(records), progress=False)
    net = net_from_checkpoint(read_checkpoint(policy_path)).eval()
    compared = 0
    for path in sorted(records.glob("*.json")):
        record = read_record(path)
        actions = record_actions(record)
        mine = record["agents"].index(spec)
        env = allfives_env.env(action_features=True)
        env.reset(seed=record["seed"])
        for agent, action in zip(env.agent_iter(), actions, strict=False):
            obs, _, terminated, truncated, _ = env.last()
            assert not (terminated or truncated)
            if agent == f"player_{mine}" and obs["action_mask"].sum() > 1:
                assert user_loop_choice(net, obs) == action, (path.name, compared)
                compared += 1
            env.step(action)
        assert all(env.terminations.values())
    return compared


def test_a_tiny_trained_policy_chooses_alike_through_the_environment_and_the_harness(tiny_policy, tmp_path):
    assert check_same_choices(tiny_policy, tmp_path, "greedy", 2) >= 20


def test_the_shipped_policy_chooses_alike_through_the_environment_and_the_harness(tmp_path):
    assert check_same_choices(DEFAULT_CHECKPOINT, tmp_path, "heuristic", 2) >= 20


def test_trained_plays_the_policy_shipped_for_its_table(tmp_path, monkeypatch, checkpoint):
    """``trained`` picks the checkpoint trained at the table it sits at, and default.pt where none was."""
    from agents import policy_agent

    shutil.copy(DEFAULT_CHECKPOINT, tmp_path / "default.pt")
    shutil.copy(checkpoint, tmp_path / "fives3.pt")
    monkeypatch.setattr(policy_agent, "CHECKPOINTS", tmp_path)
    monkeypatch.setattr(policy_agent, "DEFAULT_CHECKPOINT", tmp_path / "default.pt")
    agent = make_agent("trained", seed=1)
    chosen = {}
    for rules in (make_rules("fives", 3), make_rules("pagat", 2), make_rules("pagat", 4, True)):
        state = State(rules, seed=4)
        view = state.view(state.to_act)
        chosen[rules.rules, rules.num_players] = agent.policy_for(rules).path.name
        assert agent.act(view) == agent.policy_for(rules).act(view) and agent.act(view) in view.legal
    assert chosen == {("fives", 3): "fives3.pt", ("pagat", 2): "default.pt", ("pagat", 4): "default.pt"}


@pytest.mark.parametrize(("checkpoint", "recipe"), [("default", "strong"), ("fives3", "fives3"),
                                                    ("pagat4_partners", "pagat4_partners")])  # fmt: skip
def test_each_shipped_policys_recipe_still_gives_the_config_it_was_trained_with(checkpoint, recipe):
    """A change of the defaults must not change a shipped recipe: its config pins what it was trained with.
    (Sections added since, such as ``expert``, take their defaults, which do nothing there.)"""
    from allfives_train.config import load_config

    trained_with = read_checkpoint(CHECKPOINTS / f"{checkpoint}.pt")["config"]
    config = load_config(Path(train.__file__).resolve().parent / "configs" / f"{recipe}.yaml")
    added_since = {  # added since, changing nothing
        ("expert", "network_deals"): 0,
        ("iteration", "equity"): False,
        ("iteration", "temperature"): 1.0,
        ("iteration", "heuristic"): 0.0,
        ("iteration", "greedy"): 0.0,
        ("iteration", "search"): 0.0,
    }
    for section, keys in trained_with.items():
        assert {k: v for k, v in config[section].items() if k in keys} == keys, section
        for key in set(config[section]) - set(keys):
            assert config[section][key] == added_since[section, key], (section, key)
    assert set(config) - set(trained_with) <= {"expert"}
    assert config["expert"]["rounds"] == trained_with.get("expert", {"rounds": 0})["rounds"]
