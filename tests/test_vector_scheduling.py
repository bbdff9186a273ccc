"""How a batched engine is driven changes nothing a table plays: stepping some tables at a time (``rows=``), and
spreading a call over threads (``num_threads=``)."""

from __future__ import annotations

import numpy as np
import pytest
from numba import config as numba_config

from allfives_env.vector import VectorEnv

CONFIGS = [
    {"rules": "pagat", "num_players": 2, "reward": "points", "auto_forced": True, "action_features": True},
    {"rules": "fives", "num_players": 3, "opening": "descending", "history": True, "episode": "round"},
    {"rules": "pagat", "num_players": 4, "reward": "points"},
]


def lowest_legal(mask: np.ndarray) -> np.ndarray:
    return mask.argmax(axis=1)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c['rules']}{c['num_players']}")
def test_tables_stepped_a_few_at_a_time_play_as_when_stepped_together(config, tmp_path):
    """Each table takes its lowest legal action, so its game is the same whenever it is stepped."""
    tables, turns = 16, 120
    together = VectorEnv(tables, **config, record_dir=tmp_path / "together")
    apart = VectorEnv(tables, **config, record_dir=tmp_path / "apart")
    step = together.reset(seed=90)
    masks = apart.reset(seed=90).action_mask.copy()  # each table's latest mask
    for _ in range(turns):
        step = together.step(lowest_legal(step.action_mask))
    rng = np.random.default_rng(3)
    taken = np.zeros(tables, dtype=int)
    ended = np.zeros(tables, dtype=int)
    while (taken < turns).any():
        waiting = np.flatnonzero(taken < turns)
        rows = np.sort(rng.choice(waiting, size=rng.integers(1, waiting.size + 1), replace=False))
        part = apart.step(lowest_legal(masks[rows]), rows=rows)
        assert part.observation.shape[0] == rows.size and part.action_mask.shape == (rows.size, 114)
        masks[rows] = part.action_mask
        taken[rows] += 1
        ended[rows] += part.terminated
    assert ended.sum() > 0
    np.testing.assert_array_equal(apart.records, together.records)
    np.testing.assert_array_equal(apart.state(), together.state())
    np.testing.assert_array_equal(masks, step.action_mask)
    names = sorted(path.name for path in (tmp_path / "together").iterdir())
    assert names and names == sorted(path.name for path in (tmp_path / "apart").iterdir())


def test_bad_rows_and_illegal_actions_of_a_partial_step_change_nothing():
    env = VectorEnv(6)
    step = env.reset(seed=4)
    before = env.records.copy()
    for rows in ([1, 1], [6], [-1], [], [0.5]):
        with pytest.raises(ValueError, match="distinct table indices in 0..5"):
            env.step([0] * len(rows), rows=rows)
    with pytest.raises(ValueError, match="2 integers, one per table stepped"):
        env.step([0, 0, 0], rows=[0, 1])
    bad = step.action_mask[[2, 4]].argmin(axis=1)  # a zero in each mask
    with pytest.raises(ValueError, match="illegal actions on 2 tables.*table 2:.*table 4:"):
        env.step(bad, rows=[2, 4])
    np.testing.assert_array_equal(env.records, before)


@pytest.mark.skipif(numba_config.NUMBA_NUM_THREADS < 2, reason="one CPU: NUMBA_NUM_THREADS=2 runs it on one")
@pytest.mark.parametrize("config", CONFIGS[:2], ids=lambda c: f"{c['rules']}{c['num_players']}")
def test_two_threads_give_the_outputs_of_one(config):
    one, two = VectorEnv(300, **config), VectorEnv(300, **config, num_threads=2)
    a, b = one.reset(seed=12), two.reset(seed=12)
    rng = np.random.default_rng(5)
    for _ in range(150):
        for name in a._fields:
            if getattr(a, name) is not None:
                np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        actions = np.argmax(rng.random(a.action_mask.shape) * a.action_mask, axis=1)
        a, b = one.step(actions), two.step(actions)
    np.testing.assert_array_equal(one.state(), two.state())
    copies, opening = two.branch(np.arange(0, 300, 7))
    assert copies.num_threads == 2 and np.array_equal(opening.observation, b.observation[::7])


def test_thread_counts_are_checked():
    import numba

    with pytest.raises(ValueError, match="num_threads"):
        VectorEnv(2, num_threads=0)
    with pytest.raises(ValueError, match="num_threads"):
        VectorEnv(2, num_threads=numba.config.NUMBA_NUM_THREADS + 1)
    assert VectorEnv(2, num_threads=None).num_threads == numba.config.NUMBA_NUM_THREADS


def test_every_output_is_a_fresh_contiguous_array():
    env = VectorEnv(5, action_features=True, history=True)
    first = env.reset(seed=1)
    second = env.step(first.action_mask.argmax(1))
    for step in (first, second):
        for name in step._fields:
            array = getattr(step, name)
            assert array.flags.c_contiguous and array.flags.owndata, name
    assert not np.shares_memory(first.observation, second.observation)
