"""RLlib on the environment: one PPO iteration as the example builds it, then its checkpoint in the harness.

Needs the ``ray`` extra (skipped without it, failing instead with
``ALLFIVES_REQUIRE_RAY=1``). Ray binds to the machine's address: run these
tests in a private network namespace, ``unshare -n sh -c 'ip link set lo up;
python -m pytest tests/test_ray_rllib.py'``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from optional import require, require_loopback_only

ray = require("ray")
require_loopback_only()
require("ray.rllib")

import allfives_env  # noqa: E402
from agents.evaluate import evaluate  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from allfives_env.wrappers import FloatObservations  # noqa: E402

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "rllib_ppo.py"


def load_example():
    spec = importlib.util.spec_from_file_location("rllib_ppo_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def checkpoint(local_ray, tmp_path_factory):
    example = load_example()
    config = example.build_config(players=3, batch=240, minibatch=80, epochs=1, hidden=16, seed=0)
    path, results = example.train(config, 1, tmp_path_factory.mktemp("rllib") / "ppo3")
    return path, results


def test_one_ppo_iteration_trains_the_shared_module(checkpoint):
    _, results = checkpoint
    (result,) = results
    learner = result["learners"]["shared"]
    assert np.isfinite(learner["total_loss"])
    assert result["env_runners"]["num_env_steps_sampled"] >= 240
    returns = result["env_runners"]["agent_episode_returns_mean"]
    assert set(returns) <= {"player_0", "player_1", "player_2"} and returns
    assert all(-1.0 <= value <= 1.0 for value in returns.values())


def test_the_checkpoint_holds_no_path_of_the_checkout(checkpoint):
    path, _ = checkpoint
    checkout = str(EXAMPLE.parent.parent).encode()  # a policy mapping pickled by value would carry its file's path
    assert not [file for file in Path(path).rglob("*") if file.is_file() and checkout in file.read_bytes()]


def test_the_checkpoint_plays_legal_moves_through_the_harness(checkpoint):
    path, _ = checkpoint
    result = evaluate([f"rllib:{path}", "random", "random"], 1, num_players=3, seed=1, workers=1, progress=False)
    assert len(result.games) == 3  # one duplicate match, three seat rotations; an illegal move would raise
    stats = result.agent(f"rllib:{path}")
    assert stats.games == 3


def test_the_adapter_sees_what_the_environment_shows_and_never_picks_a_masked_action(checkpoint):
    path, _ = checkpoint
    agent = make_agent(f"rllib:{path}", seed=0)
    env = FloatObservations(allfives_env.env(num_players=3))
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    checked = 0
    while not env.unwrapped._state.finished and checked < 40:
        seat_name = env.agent_selection
        seat = env.possible_agents.index(seat_name)
        obs = env.observe(seat_name)
        view = env.unwrapped._state.view(seat)
        module_out = agent.module.forward_inference({"obs": {k: torch.from_numpy(v)[None] for k, v in obs.items()}})
        np.testing.assert_allclose(agent.logits(view), module_out["action_dist_inputs"][0].numpy(), rtol=1e-6)
        action = agent.act(view)
        assert action in view.legal
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))) if checked % 2 else action)
        checked += 1
    assert checked > 10


def test_a_folder_without_a_module_is_refused_clearly(tmp_path):
    with pytest.raises(ValueError, match="no RL module 'shared' found"):
        make_agent(f"rllib:{tmp_path}")
    with pytest.raises(ValueError, match="needs the folder"):
        make_agent("rllib:")


def test_rllib_env_is_the_one_call_that_builds_what_rllib_needs():
    """Float observations of the same values, in RLlib's PettingZooEnv, from RLlib's env_config and keywords."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from agents.rllib_env import rllib_env

    env = rllib_env({"num_players": 3}, reward="points")
    assert isinstance(env, PettingZooEnv) and isinstance(env.env, FloatObservations)
    assert env.env.unwrapped.game_rules.num_players == 3 and env.env.unwrapped.reward_mode == "points"
    for key in ("observation", "action_mask"):
        assert env.observation_space["player_0"][key].dtype == np.float32
    observations, _ = env.reset(seed=2)
    ((seat, first),) = observations.items()
    plain = allfives_env.env(num_players=3, reward="points")
    plain.reset(seed=2)
    assert first["observation"].dtype == np.float32
    np.testing.assert_array_equal(first["observation"], plain.observe(seat)["observation"])
    with pytest.raises(ValueError, match="num_players"):
        rllib_env({"num_players": 5})


def test_the_masked_module_refuses_int8_observations_naming_the_cure():
    """Without FloatObservations PPO would fail inside torch ('mat1 and mat2 must have the same dtype')."""
    import gymnasium as gym

    from agents.rllib_module import MaskedPPOModule

    raw = allfives_env.env(num_players=2)
    with pytest.raises(ValueError, match=r"float observations.*int8.*rllib_env.*FloatObservations"):
        MaskedPPOModule(observation_space=raw.observation_space("player_0"), action_space=gym.spaces.Discrete(114),
                        model_config={"fcnet_hiddens": [8]})  # fmt: skip
