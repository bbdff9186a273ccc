"""The ``action_features=True`` option of the PettingZoo and Gymnasium environments."""

from __future__ import annotations

import random
import warnings
from functools import partial

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from allfives_env.aec_env import env, raw_env
from allfives_env.gym_env import AllFivesSingleAgentEnv
from allfives_env.views.action_features import ACTION_FEATURES_SHAPE, action_features

SETTINGS = [
    {"num_players": 2},
    {"num_players": 3, "rules": "fives"},
    {"num_players": 4, "partnerships": True, "auto_forced": True, "history": True},
]


@pytest.mark.parametrize("settings", SETTINGS)
def test_pettingzoo_checks_pass_with_action_features(settings, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env(action_features=True, **settings), num_cycles=100)
        api_test(raw_env(action_features=True, **settings), num_cycles=100)
        seed_test(partial(env, action_features=True, **settings), num_cycles=50)
    assert "Passed API test" in capsys.readouterr().out


@pytest.mark.parametrize("settings", SETTINGS)
def test_aec_features_are_the_seats_own_rows_and_fit_the_space(settings):
    e = raw_env(action_features=True, **settings)
    e.reset(seed=3)
    chooser = random.Random(3)
    space = e.observation_space("player_0")
    assert space["action_features"].shape == ACTION_FEATURES_SHAPE and space["action_features"].dtype == np.int8
    decisions = 0
    for _ in e.agent_iter(5000):
        obs, _, terminated, truncated, _ = e.last()
        assert space.contains(obs)
        for other in e.agents:
            seen = e.observe(other)
            np.testing.assert_array_equal(seen["action_features"], action_features(e.seat_view(other)))
            np.testing.assert_array_equal(seen["action_features"].any(axis=1), seen["action_mask"].astype(bool))
        if terminated or truncated:
            assert not obs["action_features"].any()
            e.step(None)
            continue
        kept = obs["action_features"].copy()
        e.step(chooser.choice(list(np.flatnonzero(obs["action_mask"]))))
        np.testing.assert_array_equal(obs["action_features"], kept)  # a fresh array, never changed afterwards
        decisions += 1
    assert decisions > 50


def test_without_the_option_the_observation_is_unchanged():
    e = raw_env()
    e.reset(seed=0)
    assert set(e.observe("player_0")) == {"observation", "action_mask"}
    assert set(e.observation_space("player_0").spaces) == {"observation", "action_mask"}
    gym = AllFivesSingleAgentEnv()
    assert set(gym.reset(seed=0)[0]) == {"observation", "action_mask"}


@pytest.mark.parametrize("make", [raw_env, AllFivesSingleAgentEnv])
@pytest.mark.parametrize("bad", [1, "yes", None])
def test_a_bad_value_is_refused_naming_the_option(make, bad):
    with pytest.raises(ValueError, match="action_features"):
        make(action_features=bad)


@pytest.mark.parametrize("kwargs", [{}, {"num_players": 3, "rules": "fives", "reward": "points"}])
def test_gymnasium_check_env_passes_with_action_features(kwargs, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(AllFivesSingleAgentEnv(illegal="penalize", action_features=True, **kwargs))


def test_gymnasium_features_are_the_learners_rows():
    gym = AllFivesSingleAgentEnv(num_players=3, action_features=True, learner_seat=1, opponents="greedy")
    rng = np.random.default_rng(0)
    steps = 0
    for seed in range(3):
        obs, _ = gym.reset(seed=seed)
        terminated = False
        while not terminated:
            assert gym.observation_space.contains(obs)
            np.testing.assert_array_equal(obs["action_features"], action_features(gym.state.view(gym.learner)))
            legal = np.flatnonzero(obs["action_mask"])
            obs, _, terminated, _, _ = gym.step(int(rng.choice(legal)))
            steps += 1
        assert not obs["action_features"].any() and gym.observation_space.contains(obs)
    assert steps > 30
