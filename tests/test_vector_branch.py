"""``VectorEnv.branch`` copies tables that then play on exactly as the originals would.

A copy is checked step for step against its original table under the same
random legal actions: every output, the global state, restarts included.
With ``episode="round"`` a copy must end exactly where its table's round
ends (or its match), with the scores the table then holds.
"""

from __future__ import annotations

import numpy as np
import pytest

from allfives_env.vector import VectorEnv
from allfives_env.vector.convert import view_record

CONFIGS = [
    {"rules": "pagat", "num_players": 2, "reward": "points", "auto_forced": True, "action_features": True},
    {"rules": "fives", "num_players": 3, "opening": "descending", "history": True},
    {"rules": "pagat", "num_players": 4, "partnerships": True, "episode": "round", "reward": "points"},
]


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in mask])


def assert_rows_equal(full, part, ids: np.ndarray, skip: tuple[str, ...] = ()) -> None:
    for name in full._fields:
        a, b = getattr(full, name), getattr(part, name)
        if a is None:
            assert b is None
            continue
        if name not in skip:
            np.testing.assert_array_equal(a[ids], b, err_msg=name)


def advance(env: VectorEnv, step, rng: np.random.Generator, count: int):
    for _ in range(count):
        step = env.step(random_legal(step.action_mask, rng))
    return step


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c['rules']}{c['num_players']}")
def test_copies_play_on_exactly_as_their_tables(config):
    rng = np.random.default_rng(11)
    full = VectorEnv(12, **config)
    step = advance(full, full.reset(seed=900), rng, 23)
    ids = np.array([4, 4, 0, 11, 4, 7, 0])
    part, copied = full.branch(ids)
    assert part.num_envs == ids.size
    # what the last step ended is the engine's news, not the copies': they start with none
    assert_rows_equal(step, copied, ids, skip=("rewards", "terminated", "final_scores", "winners"))
    assert not copied.rewards.any() and not copied.terminated.any() and not copied.winners.any()
    np.testing.assert_array_equal(full.state()[ids], part.state())
    restarts = 0
    for _ in range(250):
        actions = random_legal(step.action_mask, rng)
        step, copied = full.step(actions), part.step(actions[ids])
        assert_rows_equal(step, copied, ids)
        np.testing.assert_array_equal(full.state()[ids], part.state())
        restarts += int(copied.terminated.sum())
    assert restarts > 0  # the copies restarted as their tables did


def test_a_round_copy_ends_with_its_tables_round():
    rng = np.random.default_rng(5)
    full = VectorEnv(16, rules="pagat", num_players=2, reward="points", auto_forced=True)
    step = advance(full, full.reset(seed=40), rng, 31)
    ids = np.repeat(np.arange(16), 2)
    part, copied = full.branch(ids, episode="round")
    ended = 0
    while ids.size:
        rounds_before = full._tables.round_index[ids].copy()
        actions = random_legal(step.action_mask, rng)
        step, copied = full.step(actions), part.step(actions[ids])
        over = step.terminated[ids] | (full._tables.round_index[ids] != rounds_before)
        np.testing.assert_array_equal(copied.terminated, over)
        np.testing.assert_array_equal(copied.rewards, step.rewards[ids])  # the hand awards included
        for j in np.flatnonzero(over).tolist():
            table = ids[j]
            scores = step.final_scores[table] if step.terminated[table] else full._tables.scores[table]
            np.testing.assert_array_equal(copied.final_scores[j], scores)
        ended += int(over.sum())
        going = np.flatnonzero(~over)
        for name in ("observation", "action_mask", "current_player", "rewards"):
            np.testing.assert_array_equal(getattr(step, name)[ids[going]], getattr(copied, name)[going], err_msg=name)
        if not going.size:
            break
        if going.size < ids.size:
            part.keep(going)
            copied = copied._replace(**{f: v[going] for f, v in copied._asdict().items() if v is not None})
            ids = ids[going]
    assert ended == 32


def test_a_copy_shares_nothing_with_its_engine():
    """An engine that was branched, and whose copies played on, plays as a twin that never was."""
    rng, twin_rng = np.random.default_rng(2), np.random.default_rng(2)
    full, twin = VectorEnv(6, rules="fives", num_players=3), VectorEnv(6, rules="fives", num_players=3)
    step, twin_step = advance(full, full.reset(seed=8), rng, 10), advance(twin, twin.reset(seed=8), twin_rng, 10)
    part, copied = full.branch([1, 1, 2])
    advance(part, copied, np.random.default_rng(9), 300)
    for _ in range(300):
        step, twin_step = advance(full, step, rng, 1), advance(twin, twin_step, twin_rng, 1)
        assert_rows_equal(step, twin_step, np.arange(6))
        np.testing.assert_array_equal(full.state(), twin.state())


@pytest.mark.parametrize("rows", [[], [8], [-1], [0.5], [True], [[0, 1]], "01"], ids=lambda r: repr(r))
def test_bad_rows_are_refused_and_change_nothing(rows):
    env = VectorEnv(8, reward="points")
    before = env.reset(seed=3)
    state = env.state().copy()
    with pytest.raises(ValueError, match=r"table indices in 0..7 \(repeats allowed\)"):
        env.branch(rows)
    np.testing.assert_array_equal(env.state(), state)
    assert env.step(before.action_mask.argmax(1)).terminated.shape == (8,)


def test_a_bad_episode_or_a_branch_before_reset_is_refused():
    env = VectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        env.branch([0])
    env.reset(seed=1)
    with pytest.raises(ValueError, match="episode"):
        env.branch([0], episode="trick")


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c['rules']}{c['num_players']}")
def test_a_view_with_its_true_deal_loads_as_the_table_it_came_from(config):
    """What a search loads (a seat's view, the hidden tiles filled in as they lie) plays on as the real table."""
    rng = np.random.default_rng(23)
    full = VectorEnv(10, **{**config, "episode": "round"})
    step = advance(full, full.reset(seed=77), rng, 17)
    rows = np.arange(10)
    records = np.concatenate([view_record(view) for view in full.seat_views(rows)])
    n, size = full.game_rules.num_players, full.game_rules.hand_size
    records["hands"][:, :n] = full.records["hands"][:, :n]
    records["deal"][:, n * size :] = full.records["deal"][:, n * size :]  # the boneyard; tiles drawn are not read
    loaded = VectorEnv(1, **{**config, "episode": "round"})
    copied = loaded.load(records)
    assert loaded.num_envs == 10
    assert_rows_equal(step, copied, rows, skip=("rewards", "terminated", "final_scores", "winners"))
    ended = np.zeros(10, dtype=bool)
    for _ in range(80):
        actions = random_legal(step.action_mask, rng)
        own = np.where(ended, random_legal(copied.action_mask, rng), actions)  # an ended table plays its next deal
        step, copied = full.step(actions), loaded.step(own)
        live = np.flatnonzero(~ended)
        for name in ("rewards", "terminated"):  # the hand awards included
            np.testing.assert_array_equal(getattr(step, name)[live], getattr(copied, name)[live], err_msg=name)
        ended |= step.terminated
        going = np.flatnonzero(~ended)  # a finished round's table restarts with a deal the view never held
        for name in ("current_player", "observation", "action_mask", "action_features"):
            if getattr(step, name) is not None:
                np.testing.assert_array_equal(getattr(step, name)[going], getattr(copied, name)[going], err_msg=name)
    assert ended.all()


def test_load_refuses_what_is_not_a_batch_of_tables(tmp_path):
    env = VectorEnv(2)
    env.reset(seed=3)
    good = env.records.copy()
    for bad in (good[0], good[:0], good["hands"], [good[0]], np.concatenate([good, good]).reshape(2, 2)):
        with pytest.raises(ValueError, match="1-d array of TABLE records"):
            env.load(bad)
    seat_three = good.copy()
    seat_three["to_act"] = 3
    with pytest.raises(ValueError, match=r"seat to act in 0\.\.1; got table 0: 3"):
        env.load(seat_three)
    np.testing.assert_array_equal(env.records, good)  # nothing changed
    with pytest.raises(RuntimeError, match="record_dir"):
        VectorEnv(1, record_dir=tmp_path).load(good)
