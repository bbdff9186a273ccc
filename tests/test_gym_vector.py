"""The vector environment: Gymnasium's vector API in SAME_STEP autoreset, and table for table ``AllFives-v0``.

Gymnasium 1.2 has no checker for vector environments (``check_env`` takes
only a ``gymnasium.Env``), so the contract is checked against Gymnasium's own
implementation of it: ``SyncVectorEnv(..., autoreset_mode=SAME_STEP)`` over
one ``AllFives-v0`` per table, whose seedless resets follow the engine's
seeds, must give the same observations, masks, rewards, terminations,
``final_obs`` and ``final_info`` at every step; the spaces are Gymnasium's
``batch_space`` of ``AllFives-v0``'s, every output lies in them, and
Gymnasium's vector wrappers run on it. A reference loop written with the
engine and the bots directly holds the reward to what the learner's seat
received between its decisions.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils import seeding
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import batch_space, iterate
from optional import require
from test_bots import public

import agents.gym_vector
from agents.base import Agent
from agents.batched import choose
from agents.greedy import GreedyAgent
from agents.gym_vector import AllFivesVectorEnv
from allfives_env.common import ResetOptionError, UnknownResetOptionWarning
from allfives_env.core import make_rules
from allfives_env.core.stream import next_match_seed
from allfives_env.gym_env import AllFivesSingleAgentEnv
from allfives_env.options import ResetNeeded
from allfives_env.vector import VectorEnv
from allfives_env.vector.convert import core_state
from allfives_env.views.observation import OFFSETS, encode_seat

ROOT = Path(__file__).resolve().parent.parent


def lowest_legal(observation: np.ndarray, mask: np.ndarray) -> int:
    """A callable opponent: the lowest legal action id."""
    return int(np.flatnonzero(mask)[0])


class LastLegal(Agent):
    """An ``Agent`` opponent without randomness: the highest legal action id."""

    name = "last-legal"

    def act(self, view) -> int:
        return max(view.legal)


CONFIGS = [
    {},
    {"num_players": 3, "rules": "fives", "reward": "points", "history": True, "opponents": "greedy"},
    {"num_players": 4, "episode": "round", "auto_forced": True, "learner_seat": "random", "opponents": "heuristic"},
    {
        "num_players": 4,
        "rules": "fives",
        "partnerships": True,
        "opening": "descending",
        "action_features": True,
        "reward": "points",
        "opponents": ["greedy", None, "random"],
        "learner_seat": 2,
    },  # fmt: skip
    {
        "num_players": 3,
        "target": 60,
        "reward": "points",
        "learner_seat": "random",
        "auto_forced": True,
        "opponents": [lowest_legal, "last-legal"],
    },  # fmt: skip
]


def build(kwargs: dict) -> dict:
    """The keywords with a fresh ``LastLegal`` where the config names it (each environment its own)."""
    opponents = kwargs.get("opponents")
    if isinstance(opponents, list):
        kwargs = {**kwargs, "opponents": [LastLegal() if o == "last-legal" else o for o in opponents]}
    return kwargs


class EngineSeeds(gymnasium.Wrapper):
    """``AllFives-v0`` whose resets without a seed play the engine's next match seeds of the first seed."""

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.first, self.count = seed, 0
        else:
            self.count += 1
            seed = next_match_seed(self.first, self.count)
        self.match_seed = seed
        return self.env.reset(seed=seed, options=options)


def gymnasium_reference(num_envs: int, kwargs: dict) -> SyncVectorEnv:
    return SyncVectorEnv(
        [lambda: EngineSeeds(AllFivesSingleAgentEnv(**build(kwargs))) for _ in range(num_envs)],
        autoreset_mode=AutoresetMode.SAME_STEP,
    )


def random_legal(obs: dict, rng: np.random.Generator) -> np.ndarray:
    mask = obs["action_mask"]
    return np.argmax(rng.random(mask.shape) * mask, axis=1)


def same_info(ours: dict, theirs: dict, rows) -> None:
    """``AllFives-v0``'s info keys, batched: ``scores`` an array per table, ``winners`` a flag per side."""
    for row in rows:
        assert ours["learner_seat"][row] == theirs["learner_seat"][row]
        assert ours["round"][row] == theirs["round"][row]
        assert ours["scores"][row].tolist() == list(theirs["scores"][row])
        if "winners" in theirs:
            assert np.flatnonzero(ours["winners"][row]).tolist() == list(theirs["winners"][row])


# -- the vector API ------------------------------------------------------------------------------


def test_it_is_a_gymnasium_vector_env_with_the_single_envs_spaces_batched():
    env = AllFivesVectorEnv(5, num_players=3, action_features=True)
    single = AllFivesSingleAgentEnv(num_players=3, action_features=True)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert env.num_envs == 5 and env.render_mode is None
    assert env.single_observation_space == single.observation_space
    assert env.single_action_space == single.action_space == gymnasium.spaces.Discrete(114)
    assert env.observation_space == batch_space(single.observation_space, 5)
    assert env.action_space == batch_space(single.action_space, 5)
    obs, infos = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert all(env.single_observation_space.contains(o) for o in iterate(env.observation_space, obs))
    assert set(infos) == {"learner_seat", "_learner_seat", "round", "_round", "scores", "_scores"}
    assert env.action_masks().dtype == bool and (env.action_masks() == obs["action_mask"].astype(bool)).all()
    env.close()
    assert env.closed
    env.close()  # twice is fine
    for call in (lambda: env.reset(seed=0), lambda: env.step(np.zeros(5, dtype=int)), env.action_masks, env.render):
        with pytest.raises(RuntimeError, match="closed"):
            call()


@pytest.mark.parametrize("kwargs", CONFIGS, ids=range(len(CONFIGS)))
def test_it_equals_gymnasiums_same_step_vector_env_over_allfives_v0(kwargs):
    """Step for step: observations, masks, features, rewards, terminations, infos, final_obs and final_info."""
    n = 4
    theirs, ours = gymnasium_reference(n, kwargs), AllFivesVectorEnv(n, **build(kwargs))
    their_obs, their_info = theirs.reset(seed=11)
    our_obs, our_info = ours.reset(seed=11)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(250):
        assert data_equivalence(our_obs, their_obs, exact=True)
        assert ours.observation_space.contains(our_obs)
        same_info(our_info, their_info, range(n))
        assert ours.match_seeds == [env.match_seed for env in theirs.envs]
        actions = random_legal(our_obs, rng)
        their_obs, their_reward, their_end, their_cut, their_info = theirs.step(actions)
        our_obs, our_reward, our_end, our_cut, our_info = ours.step(actions)
        assert our_reward.dtype == np.float64 and our_reward.tolist() == their_reward.tolist()
        assert our_end.tolist() == their_end.tolist() and not our_cut.any() and not their_cut.any()
        assert ("final_obs" in our_info) == our_end.any()
        if our_end.any():
            ended += int(our_end.sum())
            for key in ("_final_obs", "_final_info"):
                assert our_info[key].tolist() == their_info[key].tolist() == our_end.tolist()
            rows = np.flatnonzero(our_end)
            for row in rows:
                assert data_equivalence(our_info["final_obs"][row], their_info["final_obs"][row], exact=True)
                assert ours.single_observation_space.contains(our_info["final_obs"][row])
                assert not our_info["final_obs"][row]["action_mask"].any()
            assert all(our_info["final_obs"][row] is None for row in np.flatnonzero(~our_end))
            same_info(our_info["final_info"], their_info["final_info"], rows)
            assert our_info["final_info"]["_winners"].tolist() == our_end.tolist()
    assert ended >= 4


def test_each_table_plays_its_own_seeded_games():
    """Table i of a reset with seed s plays what a one-table env plays from seed s + i: the bots are per table."""
    many, one = (
        AllFivesVectorEnv(4, opponents="random", learner_seat="random"),
        AllFivesVectorEnv(1, opponents="random", learner_seat="random"),
    )
    obs, _ = many.reset(seed=30)
    alone, _ = one.reset(seed=32)
    rng = np.random.default_rng(1)
    for _ in range(200):
        assert data_equivalence({k: v[2:3] for k, v in obs.items()}, alone, exact=True)
        actions = random_legal(obs, rng)
        obs, reward, end, _, _ = many.step(actions)
        alone, alone_reward, alone_end, _, _ = one.step(actions[2:3])
        assert (reward[2], end[2]) == (alone_reward[0], alone_end[0])
    seats = many._opponents.seats
    assert seats[0][0] is not seats[1][0] and seats[0][0].agent is not seats[1][0].agent


def test_an_agent_object_is_shared_by_every_table_and_a_name_gives_each_its_own():
    shared = LastLegal()
    env = AllFivesVectorEnv(3, num_players=3, opponents=[shared, "greedy"])
    first, second = zip(*env._opponents.seats, strict=True)
    assert all(seat.agent is shared for seat in first)
    assert len({id(seat.agent) for seat in second}) == 3 and all(type(s.agent) is GreedyAgent for s in second)


# -- rewards ---------------------------------------------------------------------------------------


def reference_loop(seed: int, tables: int, decisions: int, reward: str) -> list[tuple]:
    """The engine and the greedy bot directly, the learner at seat 0: it is paid its seat's reward of every engine
    step from its action to its next decision, or to the episode's end; what follows the end, before its first
    decision of the next episode, comes with that decision (as AllFives-v0 pays what is scored before the
    learner's first decision). Returns per decision: the actions, the rewards paid, which episodes ended, which
    of them on the bot's move, and what a loop crediting only the steps where seat 0 acted would have paid."""
    engine = VectorEnv(tables, reward=reward)
    step = engine.reset(seed=seed)
    bots = [GreedyAgent() for _ in range(tables)]
    seeds, episodes = [seed + i for i in range(tables)], [0] * tables
    player, mask = step.current_player.copy(), step.action_mask.copy()
    held, naive = np.zeros(tables), np.zeros(tables)  # since the learner's last decision: all steps, its own steps
    live = np.zeros(tables, dtype=bool)  # the learner has decided in the episode in play
    ends: dict[int, tuple] = {}

    def start(table: int, match_seed: int) -> None:  # as AllFives-v0's reset(seed=match_seed) seeds its opponent
        rng, _ = seeding.np_random(match_seed)
        bots[table].reset(int(rng.integers(2**63)))

    def play(rows: np.ndarray, actions: np.ndarray, learner_acted: bool) -> None:
        step = engine.step(actions, rows=rows)
        player[rows], mask[rows] = step.current_player, step.action_mask
        held[rows] += step.rewards[:, 0]
        naive[rows] += step.rewards[:, 0] if learner_acted else 0.0
        for table in rows[step.terminated].tolist():
            if live[table]:
                ends[table] = (held[table], naive[table], not learner_acted)
            held[table] = naive[table] = 0.0
            live[table] = False
            episodes[table] += 1
            start(table, next_match_seed(seeds[table], episodes[table]))

    def bots_to_learner() -> None:
        waiting = np.flatnonzero(player != 0)
        while waiting.size:
            play(waiting, choose(engine, waiting, [bots[t] for t in waiting.tolist()]), False)
            waiting = waiting[player[waiting] != 0]

    for table in range(tables):
        start(table, seeds[table])
    bots_to_learner()
    rng = np.random.default_rng(5)
    out = []
    for _ in range(decisions):
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        live[:], ends = True, {}
        play(np.arange(tables), actions, True)
        bots_to_learner()
        ended = np.zeros(tables, dtype=bool)
        ended[list(ends)] = True
        paid, naive_paid, on_bot = held.copy(), naive.copy(), np.zeros(tables, dtype=bool)
        for table, (value, naive_value, by_bot) in ends.items():
            paid[table], naive_paid[table], on_bot[table] = value, naive_value, by_bot
        held[~ended] = naive[~ended] = 0.0
        out.append((actions, paid, ended, on_bot, naive_paid))
    return out


@pytest.mark.parametrize("reward", ["win_loss", "points"])
def test_the_reward_is_all_the_learners_seat_received_until_its_next_decision(reward):
    """The losing seat gets its -1 also when the match ends on the opponent's move; a loop that credits only the
    seat that acted loses it."""
    tables = 8
    reference = reference_loop(3, tables, 300, reward)
    env = AllFivesVectorEnv(tables, opponents="greedy", reward=reward)
    env.reset(seed=3)
    lost_on_bot_move = 0
    for actions, paid, ended, on_bot, naive in reference:
        _, got, end, _, _ = env.step(actions)
        assert end.tolist() == ended.tolist()
        if reward == "win_loss":
            assert got.tolist() == paid.tolist()
            lost_on_bot_move += int(np.sum(on_bot & (got == -1.0)))
            assert (naive[on_bot] == 0.0).all()  # the seat that acted last was the bot: nothing for the learner
        else:
            np.testing.assert_allclose(got, paid, rtol=0, atol=1e-12)
    if reward == "win_loss":
        assert lost_on_bot_move >= 3


def test_points_rewards_of_an_episode_add_up_to_its_zero_sum_margin():
    env = AllFivesVectorEnv(6, num_players=3, rules="fives", reward="points", opponents="greedy")
    obs, _ = env.reset(seed=8)
    rules, rng = env.game_rules, np.random.default_rng(2)
    total, checked = np.zeros(6), 0
    for _ in range(300):
        obs, reward, end, _, info = env.step(random_legal(obs, rng))
        total += reward
        for row in np.flatnonzero(end).tolist():
            scores = info["final_info"]["scores"][row]
            mine = scores[rules.side_of[info["final_info"]["learner_seat"][row]]]
            assert total[row] == pytest.approx((mine - (scores.sum() - mine) / 2) / rules.target, abs=1e-12)
            total[row], checked = 0.0, checked + 1
    assert checked >= 3


# -- seeding --------------------------------------------------------------------------------------


def run(env: AllFivesVectorEnv, steps: int, seed=None, reset: bool = True) -> list[tuple]:
    """Every output of (a reset and) ``steps`` steps of seeded random legal actions."""
    outputs = [env.reset(seed=seed)] if reset else []
    rng = np.random.default_rng(9)
    for _ in range(steps):
        mask = env.action_masks()
        outputs.append(env.step(np.argmax(rng.random(mask.shape) * mask, axis=1)))
    return outputs


def test_seeds_reproduce_and_seedless_resets_continue_the_generator():
    a, b = AllFivesVectorEnv(4, learner_seat="random"), AllFivesVectorEnv(4, learner_seat="random")
    assert data_equivalence(run(a, 120, seed=5), run(b, 120, seed=5), exact=True)
    assert a.np_random.bit_generator.state == b.np_random.bit_generator.state
    assert data_equivalence(run(a, 60), run(b, 60), exact=True)  # no seed: each env's generator goes on alike
    reference, _ = seeding.np_random(5)
    c = AllFivesVectorEnv(4)
    c.reset(seed=5)
    assert c.np_random.bit_generator.state == reference.bit_generator.state  # Gymnasium's seeding
    listed, _ = c.reset(seed=[7, None, 12, None])
    alone = AllFivesVectorEnv(1)
    assert data_equivalence({k: v[2:3] for k, v in listed.items()}, alone.reset(seed=12)[0], exact=True)
    fresh = [AllFivesVectorEnv(8).reset()[0]["observation"] for _ in range(2)]
    assert not np.array_equal(*fresh)  # fresh entropy


# -- refusals ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_envs": 0}, "num_envs=0"),
        ({"num_envs": True}, "num_envs=True"),
        ({"rules": "chess"}, "rules"),
        ({"learner_seat": 2}, "learner_seat=2"),
        ({"illegal": "penalize"}, "illegal='penalize'"),
        ({"render_mode": "human"}, "render_mode='human'"),
        ({"opponents": ["greedy", "random"]}, "opponents has 2 entries"),
        ({"opponents": "no-such-bot"}, "opponents: unknown agent spec"),
        ({"opponents": 5}, "is not a policy"),
        ({"num_threads": 0}, "num_threads"),
    ],
)
def test_bad_keywords_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        AllFivesVectorEnv(**{"num_envs": 2, **kwargs})


def twins(**kwargs):
    a, b = AllFivesVectorEnv(3, **kwargs), AllFivesVectorEnv(3, **kwargs)
    a.reset(seed=21)
    b.reset(seed=21)
    return a, b


BAD_RESETS = [
    ({"seed": -1}, ValueError, "seed=-1"),
    ({"seed": 2**128 - 2}, ValueError, "2**128-3"),
    ({"seed": True}, ValueError, "seed=True"),
    ({"seed": [1, 2]}, ValueError, "a list of 3 seeds"),
    ({"seed": [1, 2, 1.5]}, ValueError, "seed="),
    ({"seed": "7"}, ValueError, "seed='7'"),
    ({"options": 3}, ResetOptionError, "options=3"),
    ({"options": {"deal": {}}}, ResetOptionError, "'deal' is not supported"),
    ({"options": {"reset_mask": np.ones(3, bool)}}, ResetOptionError, "'reset_mask' is not supported"),
    ({"options": {"learner_seat": 7}}, ValueError, "learner_seat=7"),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD_RESETS, ids=range(len(BAD_RESETS)))
def test_a_refused_reset_changes_nothing(call, error, message):
    a, b = twins(learner_seat="random")
    generator = a.np_random.bit_generator.state
    with pytest.raises(error, match=re.escape(message)):
        a.reset(**call)
    assert a.np_random.bit_generator.state == generator
    assert data_equivalence(run(a, 40, reset=False), run(b, 40, reset=False), exact=True)


def test_reset_options_set_the_learner_seat_for_one_reset_and_warn_on_unknown_keys():
    env = AllFivesVectorEnv(3, num_players=3)
    _, info = env.reset(seed=1, options={"learner_seat": 2})
    assert info["learner_seat"].tolist() == [2, 2, 2] and env.learner_seats.tolist() == [2, 2, 2]
    with pytest.warns(UnknownResetOptionWarning, match="'colour'"):
        _, info = env.reset(seed=1, options={"colour": "red"})
    assert info["learner_seat"].tolist() == [0, 0, 0]


def test_a_refused_step_changes_nothing_and_names_the_tables_and_their_legal_actions():
    a, b = twins()
    legal = a.action_masks()
    illegal = np.argmax(legal, axis=1)
    illegal[1] = np.flatnonzero(~legal[1])[0]
    for actions, message in [
        (illegal, rf"illegal actions at 1 tables.*table 1 \(learner seat 0\): action {illegal[1]}, legal \["),
        (np.full(3, 200), "illegal actions at 3 tables"),
        (np.full(3, -1), "illegal actions at 3 tables"),
        (np.zeros(2, dtype=int), r"3 integers, one per table.*shape \(2,\)"),
        (np.zeros((3, 1), dtype=int), r"shape \(3, 1\)"),
        (np.argmax(legal, axis=1).astype(float), "dtype float64"),
        (np.ones(3, dtype=bool), "dtype bool"),
        ("abc", "dtype <U3"),
    ]:
        with pytest.raises(ValueError, match=message):
            a.step(actions)
    assert data_equivalence(run(a, 40, reset=False), run(b, 40, reset=False), exact=True)


def test_calls_before_reset_raise_reset_needed():
    env = AllFivesVectorEnv(2, render_mode="ansi")
    for call in (lambda: env.step(np.zeros(2, dtype=int)), env.action_masks, env.render):
        with pytest.raises(ResetNeeded, match=r"call reset\(\) before"):
            call()


def test_an_opponent_that_fails_leaves_the_env_needing_a_reset():
    def bad(observation, mask):
        return 113 if mask[113] == 0 else 0  # PASS while it is illegal

    env = AllFivesVectorEnv(2, opponents=bad)
    with pytest.raises(ValueError, match=r"the opponent at seat 1 of table \d chose an illegal action 113; legal"):
        for _ in range(50):
            env.reset(seed=0)  # the opponent's first move comes at once or after the learner's
            env.step(env.action_masks().argmax(1))
    with pytest.raises(gymnasium.error.ResetNeeded, match="failed part way"):
        env.step(np.zeros(2, dtype=int))


def test_matches_that_end_before_the_learners_first_decision_are_played_through(monkeypatch):
    """With a tiny target an opponent can win before the learner decides: that match is not an episode."""
    env = AllFivesVectorEnv(16, num_players=3, target=5, learner_seat=2, opponents="greedy")
    obs, _ = env.reset(seed=0)
    rng, ended = np.random.default_rng(0), 0
    to_act = OFFSETS["to_act"]
    for _ in range(30):
        assert obs["action_mask"].any(axis=1).all() and (obs["observation"][:, to_act] == 1).all()
        obs, _, end, _, _ = env.step(random_legal(obs, rng))
        ended += int(end.sum())
    assert ended
    monkeypatch.setattr(agents.gym_vector, "SKIP_LIMIT", 1)  # the first such match raises
    with pytest.raises(RuntimeError, match="ended before the learner's first decision; raise the target"):
        for seed in range(20):
            env.reset(seed=seed)


# -- the tables as core states, rendering, wrappers ---------------------------------------------


def test_a_table_record_is_the_core_state_the_engine_plays():
    rules = make_rules("fives", 3)
    engine = VectorEnv(6, rules="fives", num_players=3, history=True)
    step = engine.reset(seed=4)
    rng = np.random.default_rng(3)
    for _ in range(150):
        for row in range(6):
            state = core_state(engine.records[row], rules)
            seat = state.to_act
            assert seat == step.current_player[row]
            assert state.legal_actions() == np.flatnonzero(step.action_mask[row]).tolist()
            assert (encode_seat(state, seat, history=True) == step.observation[row]).all()
            assert public(state.view(seat)) == public(engine.seat_views([row])[0])
        step = engine.step(np.argmax(rng.random(step.action_mask.shape) * step.action_mask, axis=1))


def test_render_gives_every_table_as_the_single_env_draws_it():
    env = AllFivesVectorEnv(3, render_mode="ansi", learner_seat=1)
    env.reset(seed=2)
    frames = env.render()
    assert len(frames) == 3 and all(isinstance(f, str) and "player_1 (learner)" in f for f in frames)
    images = AllFivesVectorEnv(2, render_mode="rgb_array")
    images.reset(seed=2)
    assert [frame.shape for frame in images.render()] == [(480, 640, 3)] * 2
    silent = AllFivesVectorEnv(2)
    silent.reset(seed=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert silent.render() is None
    assert any("render_mode" in str(w.message) for w in caught)


def test_gymnasiums_vector_wrappers_run_on_it():
    env = gymnasium.wrappers.vector.DictInfoToList(
        gymnasium.wrappers.vector.RecordEpisodeStatistics(AllFivesVectorEnv(4, opponents="greedy"))
    )
    obs, infos = env.reset(seed=6)
    assert isinstance(infos, list) and len(infos) == 4 and infos[0]["learner_seat"] == 0
    rng, episodes = np.random.default_rng(4), 0
    for _ in range(200):
        obs, reward, end, _, infos = env.step(random_legal(obs, rng))
        for row in np.flatnonzero(end).tolist():
            assert infos[row]["episode"]["r"] == reward[row] in (-1.0, 1.0)
            assert infos[row]["final_info"]["scores"].max() >= 250
            episodes += 1
    assert episodes >= 4


# -- the example ------------------------------------------------------------------------------------


def test_the_masked_ppo_example_learns_to_beat_random_on_a_tiny_budget():
    require("torch")
    command = [sys.executable, str(ROOT / "examples" / "ppo_vector_masked.py"), "--total-steps", "4096",
               "--num-envs", "32", "--num-steps", "32", "--eval-matches", "200"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rates = [float(m) for m in re.findall(r"training: win rate ([\d.]+)", done.stdout)]
    assert len(rates) == 2 and "trained 4,096 steps" in done.stdout, done.stdout
    before, after = rates
    assert after >= 0.8 and after >= before + 0.2, done.stdout
