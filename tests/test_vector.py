"""The batched engine plays exactly the game of raw_env() and the core, table for table.

Each run drives a VectorEnv and one raw_env() per table with the same seeds
and the same random legal actions, comparing at every step the seat to act,
the observation, the action mask, every seat's reward, the terminations, the
final scores and winners, the global state vector and the running scores.
Every rule configuration runs twice, with complementary options, so that
across the file each option value (episode, auto_forced, reward mode,
history, action features) meets every rule configuration; with action
features on, the batched rows are compared with the per-table reference
rows at every step too. ALLFIVES_VECTOR_DECISIONS raises
the decisions per run (default 10,000) for a long run by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from allfives_env.aec_env import raw_env
from allfives_env.core.record import replay
from allfives_env.vector import VectorEnv

DECISIONS = int(os.environ.get("ALLFIVES_VECTOR_DECISIONS", "10000"))
NUM_ENVS = 32

RULE_CONFIGS = [
    {"rules": "pagat", "num_players": 2},
    {"rules": "pagat", "num_players": 3},
    {"rules": "pagat", "num_players": 4},
    {"rules": "fives", "num_players": 2, "opening": "winners_choice"},
    {"rules": "fives", "num_players": 2, "opening": "descending"},
    {"rules": "fives", "num_players": 3, "opening": "winners_choice"},
    {"rules": "fives", "num_players": 3, "opening": "descending"},
    {"rules": "fives", "num_players": 4, "partnerships": False, "opening": "winners_choice"},
    {"rules": "fives", "num_players": 4, "partnerships": False, "opening": "descending"},
    {"rules": "fives", "num_players": 4, "partnerships": True, "opening": "winners_choice"},
    {"rules": "fives", "num_players": 4, "partnerships": True, "opening": "descending"},
]


def options(code: int) -> dict:
    """Option combination ``code`` (4 bits): episode, auto_forced (and action features with it), reward, history."""
    return {
        "episode": ("match", "round")[code & 1],
        "auto_forced": bool(code >> 1 & 1),
        "action_features": bool(code >> 1 & 1),
        "reward": ("win_loss", "points")[code >> 2 & 1],
        "history": bool(code >> 3 & 1),
    }


# Rule configuration i runs with option codes c and 15 - c (every option flipped); the codes below
# cover all 16 combinations across the file.
CODES = [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 12]
CASES = [(config, options(code)) for config, c in zip(RULE_CONFIGS, CODES, strict=True) for code in (c, 15 - c)]
IDS = [",".join(f"{k}={v}" for k, v in {**c, **o}.items()) for c, o in CASES]


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row."""
    return np.argmax(rng.random(mask.shape) * mask, axis=1)


def _compare(step, env: VectorEnv, raws: list, where: str) -> None:
    seats, observations, masks, features = [], [], [], []
    for raw in raws:
        agent = raw.agent_selection
        seats.append(raw.possible_agents.index(agent))
        obs = raw.observe(agent)
        observations.append(obs["observation"])
        masks.append(obs["action_mask"])
        features.append(obs.get("action_features"))
    expected = {
        "seat to act": (step.current_player, np.array(seats)),
        "observation": (step.observation, np.array(observations)),
        "action mask": (step.action_mask, np.array(masks)),
        "state vector": (env.state(), np.array([raw.state() for raw in raws])),
        "scores": (env._tables.scores, np.array([raw.core_state.scores for raw in raws], dtype=float)),
    }
    if env.action_features:
        expected["action features"] = (step.action_features, np.array(features))
    else:
        assert step.action_features is None
    for name, (got, want) in expected.items():
        if not np.array_equal(got, want):
            table = int(np.flatnonzero((got != want).reshape(len(raws), -1).any(axis=1))[0])
            columns = np.flatnonzero((got[table] != want[table]).reshape(-1)).tolist()
            raise AssertionError(f"{where}, table {table}: {name} differs at {columns}: {got[table]} != {want[table]}")


def drive(config: dict, opts: dict, decisions: int, seed: int, num_envs: int = NUM_ENVS, **extra) -> VectorEnv:
    """Play both sides with the same random legal actions for ``decisions`` decisions, comparing every step."""
    env = VectorEnv(num_envs, **config, **opts, **extra)
    raws = [raw_env(**config, **opts) for _ in range(num_envs)]
    step = env.reset(seed=seed)
    for i, raw in enumerate(raws):
        raw.reset(seed=seed + i)
    _compare(step, env, raws, "after reset")
    rng = np.random.default_rng(seed)
    episodes = 0
    for turn in range(decisions // num_envs + 1):
        actions = random_legal(step.action_mask, rng)
        step = env.step(actions)
        for i, raw in enumerate(raws):
            raw.step(int(actions[i]))
            where = f"step {turn}, table {i}"
            rewards = [raw.rewards[agent] for agent in raw.possible_agents]
            assert step.rewards[i].tolist() == rewards, f"{where}: rewards {step.rewards[i]} != {rewards}"
            ended = all(raw.terminations.values())
            assert step.terminated[i] == ended, f"{where}: terminated"
            if ended:
                info = raw.infos[raw.possible_agents[0]]
                assert step.final_scores[i].tolist() == info["scores"], f"{where}: final scores"
                assert np.flatnonzero(step.winners[i]).tolist() == sorted(info["winners"]), f"{where}: winners"
                raw.reset()
                episodes += 1
            else:
                assert np.isnan(step.final_scores[i]).all() and not step.winners[i].any()
        _compare(step, env, raws, f"step {turn}")
    assert episodes > 0 or decisions < 5000
    return env


@pytest.mark.parametrize(("config", "opts"), CASES, ids=IDS)
def test_same_game_as_raw_env(config, opts):
    drive(config, opts, DECISIONS, seed=1000 * CASES.index((config, opts)))


def test_records_replay_to_the_same_scores(tmp_path):
    config = {"rules": "fives", "num_players": 3, "opening": "winners_choice"}
    env = VectorEnv(6, **config, record_dir=tmp_path)
    step = env.reset(seed=7)
    rng = np.random.default_rng(7)
    finals = {}
    for _ in range(800):
        step = env.step(random_legal(step.action_mask, rng))
        for row in np.flatnonzero(step.terminated).tolist():
            finals.setdefault(row, []).append(step.final_scores[row].tolist())
    files = sorted(tmp_path.iterdir())
    assert len(files) == sum(len(v) for v in finals.values()) > 0
    for path in files:
        record = json.loads(path.read_text())
        row, episode = (int(part) for part in path.stem.split("-table")[1].split("-"))
        assert replay(record).state.scores == finals[row][episode - 1]
    # and once through the command line
    out = subprocess.run(
        [sys.executable, "-m", "allfives_env", "replay", str(files[0]), "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    row, episode = (int(part) for part in files[0].stem.split("-table")[1].split("-"))
    assert json.loads(out)["scores"] == finals[row][episode - 1]


def test_bad_actions_are_refused_and_change_nothing():
    env = VectorEnv(3, rules="fives", num_players=2)
    step = env.reset(seed=3)
    before = env.state()
    illegal = step.action_mask.argmin(axis=1)  # a zero in every mask
    with pytest.raises(ValueError, match="illegal actions on 3 tables"):
        env.step(illegal)
    with pytest.raises(ValueError, match="3 integers"):
        env.step([0, 0])
    with pytest.raises(ValueError, match="3 integers"):
        env.step(np.zeros(3))
    with pytest.raises(ValueError, match="illegal"):
        env.step([-1, 200, 0])
    assert np.array_equal(env.state(), before)
    env.step(step.action_mask.argmax(axis=1))  # still playable


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="num_envs"):
        VectorEnv(0)
    with pytest.raises(ValueError, match="reward"):
        VectorEnv(2, reward="score")
    with pytest.raises(ValueError, match="episode"):
        VectorEnv(2, episode="game")
    with pytest.raises(ValueError, match="auto_forced"):
        VectorEnv(2, auto_forced=1)
    with pytest.raises(ValueError, match="seed"):
        VectorEnv(2).reset(seed=-1)
    with pytest.raises(ValueError, match="seed"):
        VectorEnv(2).reset(seed=[1, 2, 3])
    with pytest.raises(RuntimeError, match="reset"):
        VectorEnv(2).step([0, 0])


def test_import_allfives_env_stays_light():
    probe = "import sys, allfives_env; print('numpy' in sys.modules); print(allfives_env.VectorEnv.__name__)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "VectorEnv"]


def test_seeds_per_table_and_fresh_entropy():
    a = VectorEnv(3, rules="fives", num_players=3).reset(seed=11)
    b = VectorEnv(3, rules="fives", num_players=3).reset(seed=[11, 12, 13])
    assert np.array_equal(a.observation, b.observation) and np.array_equal(a.action_mask, b.action_mask)
    fresh = [VectorEnv(4).reset().observation for _ in range(2)]
    assert not np.array_equal(fresh[0], fresh[1])  # fresh deals: equal only by a vanishing chance


@pytest.mark.parametrize("target", [61, 52.5])
def test_small_and_fractional_targets(target):
    """Short matches: many target ends mid-round, awards that cross the target, points rewards over a float target."""
    config = {"rules": "pagat", "num_players": 3, "target": target}
    drive(config, {**options(6), "action_features": True}, 2000, seed=77)
