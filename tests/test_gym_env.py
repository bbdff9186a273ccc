"""The Gymnasium single-agent environment: API conformance, masks, opponents, rewards, episodes and training."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest
from conftest import snapshot
from gymnasium.utils.env_checker import check_env
from optional import require

from agents.base import Agent
from allfives_env.common import UnknownResetOptionWarning
from allfives_env.core import DRAW, PASS, State, make_rules, mask_to_tiles
from allfives_env.core.record import replay
from allfives_env.gym_env import ENV_ID, AllFivesSingleAgentEnv
from allfives_env.views.observation import OFFSETS, observation_high, observation_size

CONFIGS = [
    {},
    {"num_players": 3, "rules": "fives", "reward": "points", "history": True},
    {"num_players": 4, "episode": "round", "auto_forced": True, "learner_seat": "random"},
    {"num_players": 4, "rules": "fives", "partnerships": True, "opening": "descending", "opponents": "greedy"},
]


def masked_random(env: AllFivesSingleAgentEnv, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(env.action_masks())))


def rollout(env: AllFivesSingleAgentEnv, seed: int, rng: np.random.Generator) -> list:
    """One episode with masked random learner moves; returns (obs, reward, terminated, info) per step."""
    obs, info = env.reset(seed=seed)
    steps = [(obs, 0.0, False, info)]
    terminated = False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(masked_random(env, rng))
        assert truncated is False
        steps.append((obs, reward, terminated, info))
    return steps


# -- conformance -------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_check_env_passes_unwrapped_and_made(kwargs, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(AllFivesSingleAgentEnv(illegal="penalize", **kwargs))
        made = gymnasium.make(ENV_ID, **kwargs)
        check_env(made.unwrapped)
        check_env(made)


def test_make_by_module_path_in_a_fresh_interpreter_and_the_core_never_imports_gymnasium():
    code = (
        "import sys, allfives_env, allfives_env.core\n"
        "assert 'gymnasium' not in sys.modules\n"
        "import gymnasium\n"
        f"env = gymnasium.make('allfives_env.gym_env:{ENV_ID}', num_players=3)\n"
        "print(env.unwrapped.illegal, env.unwrapped.game_rules.num_players)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["penalize", "3"]
    assert AllFivesSingleAgentEnv().illegal == "raise"


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_mask_is_the_learners_legal_actions_and_observations_fit_the_space(kwargs):
    env = AllFivesSingleAgentEnv(**kwargs)
    rng = np.random.default_rng(1)
    seen = []
    for seed in range(6):
        steps = rollout(env, seed, rng)
        for index, (obs, _, terminated, _info) in enumerate(steps):
            assert env.observation_space.contains(obs)
            seen.append(obs["observation"])
            assert obs["action_mask"].any() != terminated
            assert terminated == (index == len(steps) - 1)
        assert not env.action_masks().any()
    # within an episode: the mask shown is the core's legal set for the learner, who is the seat to act
    env.reset(seed=99)
    for _ in range(30):
        state = env.state
        assert state.to_act == env.learner
        expected = np.zeros(114, dtype=bool)
        expected[state.legal_actions()] = True
        assert (env.action_masks() == expected).all()
        obs, _, terminated, _, _ = env.step(masked_random(env, rng))
        if terminated:
            break
    high = observation_high(env.game_rules, env.history)
    assert (np.max(seen, axis=0) <= high).all()


def test_observation_is_the_learners_own_view_and_fresh():
    env = AllFivesSingleAgentEnv(num_players=3, learner_seat=2)
    obs, info = env.reset(seed=5)
    assert info["learner_seat"] == 2
    hand = obs["observation"][OFFSETS["hand"] : OFFSETS["hand"] + 28]
    assert set(np.flatnonzero(hand)) == set(mask_to_tiles(env.state.hands[2]))
    kept = obs["observation"].copy()
    env.step(masked_random(env, np.random.default_rng(0)))
    assert (obs["observation"] == kept).all()


def test_history_option_widens_the_observation():
    assert AllFivesSingleAgentEnv(history=True).observation_space["observation"].shape == (observation_size(True),)
    assert AllFivesSingleAgentEnv().observation_space["observation"].shape == (observation_size(False),)


# -- illegal actions ---------------------------------------------------------------


@pytest.mark.parametrize("bad", [DRAW + 1, 200, -1, None, 1.5, True, "draw"])
def test_illegal_action_raises_naming_it_and_the_legal_ones_and_changes_nothing(bad):
    env = AllFivesSingleAgentEnv()
    env.reset(seed=3)
    before = snapshot(env.state)
    legal = env.state.legal_actions()
    if bad in legal:
        bad = PASS if PASS not in legal else DRAW
    with pytest.raises(ValueError) as err:
        env.step(bad)
    message = str(err.value)
    assert repr(bad) in message and "legal actions" in message
    assert all(str(a) in message for a in legal)
    assert snapshot(env.state) == before
    env.step(legal[0])  # still playable


def test_penalize_ends_the_episode_with_minus_one_and_needs_a_reset():
    env = AllFivesSingleAgentEnv(illegal="penalize", reward="points")
    env.reset(seed=3)
    before = snapshot(env.state)
    illegal = next(a for a in range(114) if a not in env.state.legal_actions())
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    assert snapshot(env.state) == before
    assert not obs["action_mask"].any()
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(env.state.legal_actions()[0])


def test_step_before_reset_needs_a_reset():
    with pytest.raises(gymnasium.error.ResetNeeded):
        AllFivesSingleAgentEnv().step(0)


# -- arguments ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"rules": "texas"}, "rules"),
        ({"num_players": 5}, "num_players"),
        ({"target": -5}, "target"),
        ({"num_players": 2, "partnerships": True}, "partnerships"),
        ({"opening": "descending"}, "opening"),
        ({"reward": "score"}, "reward"),
        ({"episode": "game"}, "episode"),
        ({"illegal": "ignore"}, "illegal"),
        ({"learner_seat": 2}, "learner_seat"),
        ({"learner_seat": "any"}, "learner_seat"),
        ({"auto_forced": 1}, "auto_forced"),
        ({"history": "yes"}, "history"),
        ({"render_mode": "svg"}, "render_mode"),
        ({"opponents": "grandmaster"}, "opponents"),
        ({"opponents": 3}, "opponents"),
        ({"opponents": ["random", "random"]}, "opponents"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(kwargs, named):
    with pytest.raises(ValueError, match=named):
        AllFivesSingleAgentEnv(**kwargs)


def test_reset_options_fix_the_deal_and_the_seat_and_reject_unknown_keys():
    rules = make_rules()
    deal = State(rules, seed=11).deal.to_json()
    env = AllFivesSingleAgentEnv()
    env.reset(seed=0, options={"deal": deal, "learner_seat": 1})
    assert env.learner == 1
    assert env.state.deal.to_json() == deal
    bad = dict(deal, boneyard=deal["boneyard"][:-1])
    with pytest.raises(ValueError, match=r"options\['deal'\].*boneyard"):
        env.reset(options={"deal": bad})
    with pytest.warns(
        UnknownResetOptionWarning, match="'dael' is not known and is ignored; allowed: 'deal', 'learner_seat'"
    ):
        env.reset(options={"dael": deal})
    assert env.state.deal.to_json() != deal
    with pytest.raises(ValueError, match="learner_seat"):
        env.reset(options={"learner_seat": 7})


# -- seeding and copies --------------------------------------------------------------


def actions_and_rewards(env, seed, moves=40):
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=seed)
    trace = [obs["observation"].tobytes()]
    for _ in range(moves):
        obs, reward, terminated, _, _ = env.step(masked_random(env, rng))
        trace.append((obs["observation"].tobytes(), reward))
        if terminated:
            obs, _ = env.reset()
            trace.append(obs["observation"].tobytes())
    return trace


def test_seeded_resets_repeat_and_unseeded_resets_continue_the_generator():
    kwargs = {"opponents": "heuristic", "learner_seat": "random", "num_players": 3}
    env = AllFivesSingleAgentEnv(**kwargs)
    assert actions_and_rewards(env, 7) == actions_and_rewards(AllFivesSingleAgentEnv(**kwargs), 7)
    assert actions_and_rewards(env, 7) != actions_and_rewards(env, 8)
    env.reset(seed=7)
    first = env.state.deal
    env.reset()
    assert env.state.deal != first


def test_deepcopy_and_pickle_continue_identically():
    env = AllFivesSingleAgentEnv(num_players=4, opponents="greedy")
    rng = np.random.default_rng(2)
    env.reset(seed=4)
    for _ in range(5):
        env.step(masked_random(env, rng))
    for copier in (copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))):
        original, twin = copy.deepcopy(env), copier(env)
        a_rng, b_rng = np.random.default_rng(9), np.random.default_rng(9)
        for _ in range(40):
            assert env_step_or_reset(original, a_rng) == env_step_or_reset(twin, b_rng)


def env_step_or_reset(env, rng):
    if env.done:
        obs, _ = env.reset()
        return obs["observation"].tobytes()
    obs, reward, _, _, _ = env.step(masked_random(env, rng))
    return obs["observation"].tobytes(), reward


# -- opponents -------------------------------------------------------------------------


def test_callable_opponents_see_their_own_observation_and_mask_and_play_their_seats():
    calls: dict[str, list[int]] = {"a": [], "b": []}

    def policy(tag):
        def act(obs, mask):
            env_state = env.state
            seat = env_state.to_act
            calls[tag].append(seat)
            hand = obs[OFFSETS["hand"] : OFFSETS["hand"] + 28]
            assert set(np.flatnonzero(hand)) == set(mask_to_tiles(env_state.hands[seat]))
            assert list(np.flatnonzero(mask)) == env_state.legal_actions()
            return int(np.flatnonzero(mask)[-1])

        return act

    env = AllFivesSingleAgentEnv(num_players=3, rules="fives", learner_seat=1, opponents=[policy("a"), policy("b")])
    rollout(env, 0, np.random.default_rng(0))
    assert set(calls["a"]) == {2} and set(calls["b"]) == {0}


def test_agent_opponents_get_their_seat_view_and_are_reseeded():
    class Recorder(Agent):
        name = "recorder"

        def __init__(self):
            super().__init__()
            self.seats, self.seeds = set(), []

        def reset(self, seed=None):
            super().reset(seed)
            self.seeds.append(seed)

        def act(self, view):
            self.seats.add(view.seat)
            assert view.legal == tuple(env.state.legal_actions())
            return view.legal[0]

    agent = Recorder()
    env = AllFivesSingleAgentEnv(num_players=4, opponents=agent)
    env.reset(seed=1)
    for _ in range(10):
        if env.step(env.state.legal_actions()[0])[2]:
            break
    assert agent.seats == {1, 2, 3}
    env.reset(seed=1)
    assert agent.seeds[:3] == agent.seeds[3:6]  # three seats, reseeded from the env's seed


def test_an_opponents_illegal_move_raises_and_leaves_the_env_as_before_the_step():
    broken = {"now": False}

    def opponent(obs, mask):
        return DRAW + 1 if broken["now"] else int(np.flatnonzero(mask)[0])

    env = AllFivesSingleAgentEnv(opponents=opponent)
    env.reset(seed=0)
    broken["now"] = True
    before = snapshot(env.state)
    with pytest.raises(ValueError, match="opponent at seat 1"):
        env.step(env.state.legal_actions()[0])
    assert snapshot(env.state) == before


# -- episodes, rewards, forced moves -----------------------------------------------------


def test_win_loss_pays_once_at_the_end_by_the_match_winner():
    env = AllFivesSingleAgentEnv(num_players=4, learner_seat="random")
    rng = np.random.default_rng(3)
    results = set()
    for seed in range(8):
        steps = rollout(env, seed, rng)
        rewards = [r for _, r, _, _ in steps]
        assert all(r == 0 for r in rewards[:-1])
        winners = env.state.winners
        mine = env.game_rules.side_of[env.learner]
        expected = 0.0 if len(winners) != 1 else (1.0 if winners == (mine,) else -1.0)
        assert rewards[-1] == expected and env.state.finished
        results.add(expected)
    assert results >= {1.0, -1.0}


@pytest.mark.parametrize("num_players", [2, 3])
def test_points_rewards_sum_to_the_final_score_margin_over_the_target(num_players):
    env = AllFivesSingleAgentEnv(num_players=num_players, reward="points", learner_seat="random")
    rng = np.random.default_rng(4)
    for seed in range(3):
        steps = rollout(env, seed, rng)
        total = sum(r for _, r, _, _ in steps)
        scores = env.state.scores
        mine = env.game_rules.side_of[env.learner]
        others = [s for side, s in enumerate(scores) if side != mine]
        assert total == pytest.approx((scores[mine] - sum(others) / len(others)) / env.game_rules.target)
        assert any(r != 0 for _, r, terminated, _ in steps if not terminated)


def test_round_episodes_end_with_the_first_round_and_pay_its_winner():
    env = AllFivesSingleAgentEnv(episode="round", num_players=3, rules="fives")
    rng = np.random.default_rng(5)
    for seed in range(6):
        steps = rollout(env, seed, rng)
        state = env.state
        assert state.finished and state.round_index == 0 and len(state.past) == 1
        assert all(info["round"] == 0 for _, _, _, info in steps)
        result = state.past[0].result
        mine = env.game_rules.side_of[env.learner]
        expected = 0.0 if result.winner is None else (1.0 if result.winner == mine else -1.0)
        assert steps[-1][1] == expected


def test_auto_forced_hides_single_draws_and_passes_from_the_learner():
    def forced_seen(auto):
        env = AllFivesSingleAgentEnv(auto_forced=auto, rules="fives")
        rng = np.random.default_rng(6)
        count = 0
        for seed in range(4):
            for obs, _, terminated, _ in rollout(env, seed, rng):
                legal = list(np.flatnonzero(obs["action_mask"]))
                count += not terminated and legal in ([DRAW], [PASS])
        return count

    assert forced_seen(False) > 0
    assert forced_seen(True) == 0


def test_record_replays_to_the_same_scores():
    env = AllFivesSingleAgentEnv(num_players=3, opponents="greedy")
    rollout(env, 8, np.random.default_rng(8))
    summary = replay(env.record()).summary()
    assert summary["finished"] and list(summary["scores"]) == list(env.state.scores)


# -- rendering ---------------------------------------------------------------------------


def test_render_modes(capsys):
    text_env = AllFivesSingleAgentEnv(render_mode="ansi")
    text_env.reset(seed=0)
    text = text_env.render()
    assert isinstance(text, str) and str(text_env.state.end_total) in text
    image_env = AllFivesSingleAgentEnv(render_mode="rgb_array")
    image_env.reset(seed=0)
    image = image_env.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    human = AllFivesSingleAgentEnv(render_mode="human")
    capsys.readouterr()
    human.reset(seed=0)
    hand = " ".join(mask_to_text(human.state.hands[1]))
    assert hand.split()[0] in capsys.readouterr().out


def mask_to_text(mask):
    from allfives_env.core import TILE_TEXT

    return [TILE_TEXT[t] for t in mask_to_tiles(mask)]


# -- training ---------------------------------------------------------------------------


class CountIllegal(gymnasium.Wrapper):
    """Counts learner actions outside the mask before the env sees them."""

    def __init__(self, env):
        super().__init__(env)
        self.illegal = 0
        self.steps = 0

    def step(self, action):
        self.steps += 1
        self.illegal += not self.env.unwrapped.action_masks()[int(action)]
        return self.env.step(action)


def test_maskable_ppo_trains_a_few_thousand_steps_and_only_takes_legal_actions():
    sb3_contrib = require("sb3_contrib")
    torch = require("torch")
    torch.set_num_threads(1)
    env = CountIllegal(AllFivesSingleAgentEnv(num_players=3, rules="fives", illegal="raise", opponents="greedy"))
    model = sb3_contrib.MaskablePPO(
        "MultiInputPolicy", env, n_steps=512, batch_size=128, n_epochs=2, seed=0, device="cpu", verbose=0
    )
    model.learn(total_timesteps=2048)
    assert env.steps >= 2048
    assert env.illegal == 0


def test_a_seed_deals_the_same_match_as_the_pettingzoo_env():
    from allfives_env import aec_env

    for kwargs in ({"num_players": 3}, {"num_players": 4, "rules": "fives"}):
        gym = AllFivesSingleAgentEnv(**kwargs)
        aec = aec_env.raw_env(**kwargs)
        for seed in (0, 7):
            gym.reset(seed=seed)
            aec.reset(seed=seed)
            assert gym.state.deal == aec.core_state.deal
            assert gym.record()["seed"] == seed
