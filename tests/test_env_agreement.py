"""The PettingZoo and the Gymnasium environments behave the same on the same input.

Both are fed the same keywords, seeds and reset options, good and bad: a bad
one must raise the same error with the same message in both (the reset
options' allowed keys differ: the Gymnasium environment also takes
``learner_seat``), a good one must give the same spaces, deals,
observations, rewards and rendering.
"""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from allfives_env.aec_env import raw_env
from allfives_env.common import UnknownResetOptionWarning
from allfives_env.core import State, make_rules
from allfives_env.gym_env import AllFivesSingleAgentEnv


def outcome(make):
    """What a call did: ("ok", result), or the error's type and message; with the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", make())
        except Exception as err:  # the error itself is what is compared
            result = (type(err), str(err))
    return result, [(w.category, str(w.message).split("; allowed")[0]) for w in caught]


GOOD = [
    {},
    {"num_players": 3, "rules": "fives", "opening": "descending"},
    {"num_players": 4, "partnerships": True, "reward": "points", "episode": "round", "history": True},
    {"num_players": 2, "target": 60, "auto_forced": True, "action_features": True, "render_mode": "ansi"},
]
BAD = [
    {"num_players": 5},
    {"num_players": True},
    {"rules": "fivez"},
    {"num_players": 2, "partnerships": True},
    {"partnerships": "yes"},
    {"target": -5},
    {"target": 10**9},
    {"opening": "descending"},  # pagat has no opening mode
    {"rules": "fives", "opening": "first"},
    {"reward": "score"},
    {"episode": "game"},
    {"auto_forced": 1},
    {"history": "yes"},
    {"action_features": None},
    {"render_mode": "rgb"},
    {"reward": "score", "episode": "game", "render_mode": "svg"},  # several bad: the same one is named first
]


@pytest.mark.parametrize("kwargs", GOOD + BAD, ids=repr)
def test_the_same_keywords_are_taken_or_refused_alike(kwargs):
    aec, aec_warnings = outcome(lambda: raw_env(**kwargs))
    gym, gym_warnings = outcome(lambda: AllFivesSingleAgentEnv(**kwargs))
    assert aec_warnings == gym_warnings == []
    if kwargs in BAD:
        assert aec[0] != "ok" and issubclass(aec[0], ValueError)
        assert aec == gym
    else:
        assert aec[0] == gym[0] == "ok"
        assert aec[1].observation_space("player_0") == gym[1].observation_space
        assert aec[1].action_space("player_0") == gym[1].action_space
        assert aec[1].metadata["render_modes"] == gym[1].metadata["render_modes"]


def reset_inputs(rules) -> list:
    deal = State(rules, seed=77).deal.to_json()
    broken = {**deal, "hands": [deal["hands"][0][:-1], *deal["hands"][1:]]}
    return [
        (3, None),
        (3, {}),
        (4, {"deal": deal}),
        (4, {"deal": None}),
        (5, {"deal": broken}),
        (5, {"deal": {**deal, "leader": 9}}),
        (5, {"deal": {"hands": []}}),
        (5, {"deal": "nonsense"}),
        (6, {"dael": deal}),  # an unknown key: ignored with a warning, in both
        (6, "deal"),
        (6, ["deal"]),
        (-1, None),
        (2**130, None),
        (True, None),
        (1.5, {"deal": deal}),
    ]


@pytest.mark.parametrize("settings", GOOD, ids=repr)
def test_the_same_resets_are_taken_or_refused_alike(settings):
    aec_env, gym_env = raw_env(**settings), AllFivesSingleAgentEnv(**settings)
    for seed, options in reset_inputs(aec_env.game_rules):
        aec, aec_warnings = outcome(lambda: aec_env.reset(seed=seed, options=options))  # noqa: B023
        gym, gym_warnings = outcome(lambda: gym_env.reset(seed=seed, options=options))  # noqa: B023
        assert aec_warnings == gym_warnings, (seed, options)
        assert [c for c, _ in aec_warnings] == ([UnknownResetOptionWarning] if options and "dael" in options else [])
        if aec[0] == "ok" or gym[0] == "ok":
            assert aec[0] == gym[0] == "ok", (seed, options, aec, gym)
            assert aec_env.core_state.deal == gym_env.state.deal  # the same match is dealt
            assert aec_env.match_seed == gym_env.match_seed == seed
        else:
            assert aec[0] is gym[0] and issubclass(aec[0], ValueError), (seed, options)
            assert aec[1].split("; allowed")[0] == gym[1].split("; allowed")[0], (seed, options)


@pytest.mark.parametrize("settings", GOOD, ids=repr)
def test_the_first_observation_of_the_leader_is_the_same(settings):
    rules = make_rules(
        settings.get("rules", "pagat"),
        settings.get("num_players", 2),
        settings.get("partnerships"),
        settings.get("target"),
        settings.get("opening"),
    )
    deal = State(rules, seed=5).deal.to_json()
    leader = deal["leader"]
    aec_env, gym_env = raw_env(**settings), AllFivesSingleAgentEnv(**settings, learner_seat=leader)
    aec_env.reset(seed=5, options={"deal": deal})
    observation, _ = gym_env.reset(seed=5, options={"deal": deal})
    from_aec = aec_env.observe(f"player_{leader}")
    assert from_aec.keys() == observation.keys()
    for key in observation:
        np.testing.assert_array_equal(from_aec[key], observation[key])
    if settings.get("render_mode") == "ansi":
        assert aec_env.render() == gym_env.render().replace(" (learner)", "")


def lowest_legal(observation, mask):
    return int(np.flatnonzero(mask)[0])


@pytest.mark.parametrize("reward", ["points", "win_loss"])
@pytest.mark.parametrize(
    "settings",
    [
        {"num_players": 2, "target": 80},
        {"num_players": 3, "rules": "fives", "target": 60, "auto_forced": True},
        {"num_players": 4, "partnerships": True, "episode": "round"},
    ],
    ids=repr,
)
def test_the_same_play_earns_the_learner_the_same_rewards(settings, reward):
    """Seat 0 plays the same seeded choices in both; every other seat plays its lowest legal action."""
    for match in range(3):
        aec_env = raw_env(**settings, reward=reward)
        aec_env.reset(seed=match)
        chooser = random.Random(match)
        aec_total = 0.0
        while aec_env.agents:
            observation, _, terminated, truncated, _ = aec_env.last()
            if terminated or truncated:
                aec_env.step(None)
                continue
            legal = [int(a) for a in np.flatnonzero(observation["action_mask"])]
            aec_env.step(chooser.choice(legal) if aec_env.agent_selection == "player_0" else legal[0])
            aec_total += aec_env.rewards.get("player_0", 0.0)

        gym_env = AllFivesSingleAgentEnv(**settings, reward=reward, opponents=lowest_legal)
        observation, _ = gym_env.reset(seed=match)
        chooser = random.Random(match)
        gym_total, done = 0.0, False
        while not done:
            legal = [int(a) for a in np.flatnonzero(observation["action_mask"])]
            observation, step_reward, done, _, info = gym_env.step(chooser.choice(legal))
            gym_total += step_reward
        assert gym_env.state.scores == aec_env.core_state.scores  # the same match was played
        assert gym_total == pytest.approx(aec_total, abs=1e-12), (match, gym_total, aec_total)
