"""``VectorEnv.keep`` drops tables without changing what the kept ones play.

Two engines start from the same seeds and get the same random legal actions;
one of them keeps a shrinking subset of its tables now and then. Every kept
table must show, step for step, exactly what its row of the full engine shows
(restarts, records and the global state included).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from allfives_env.vector import VectorEnv

CONFIGS = [
    {"rules": "pagat", "num_players": 2, "reward": "points", "auto_forced": True, "action_features": True},
    {"rules": "fives", "num_players": 3, "opening": "descending", "history": True},
    {"rules": "fives", "num_players": 4, "partnerships": True, "episode": "round", "reward": "points"},
]


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in mask])


def assert_rows_equal(full, kept, ids: np.ndarray) -> None:
    for name in full._fields:
        a, b = getattr(full, name), getattr(kept, name)
        if a is None:
            assert b is None
            continue
        np.testing.assert_array_equal(a[ids], b, err_msg=name)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c['rules']}{c['num_players']}")
def test_kept_tables_play_on_exactly(config, tmp_path):
    rng = np.random.default_rng(7)
    full = VectorEnv(24, record_dir=tmp_path / "full", **config)
    part = VectorEnv(24, record_dir=tmp_path / "part", **config)
    a, b = full.reset(seed=500), part.reset(seed=500)
    ids = np.arange(24)
    steps = 0
    while ids.size > 1:
        if steps % 37 == 36:  # drop a random third of the tables still kept
            keep = np.sort(rng.choice(ids.size, size=max(1, 2 * ids.size // 3), replace=False))
            part.keep(keep)
            b = b._replace(**{f: getattr(b, f)[keep] for f in b._fields if getattr(b, f) is not None})
            ids = ids[keep]
            assert part.num_envs == ids.size
        assert_rows_equal(a, b, ids)
        np.testing.assert_array_equal(full.state()[ids], part.state())
        actions = random_legal(a.action_mask, rng)
        a, b = full.step(actions), part.step(actions[ids])
        steps += 1
    assert steps > 150
    # every record the partial engine wrote (its table numbers are its own) is one the full engine wrote
    written = sorted((tmp_path / "part").iterdir())
    assert written
    full_by_content = {p.read_text() for p in (tmp_path / "full").iterdir()}
    for path in written:
        assert path.read_text() in full_by_content
        assert json.loads(path.read_text())["rounds"]


@pytest.mark.parametrize("rows", [[], [0, 0], [8], [-1], [0.5], [True], [[0, 1]], "01"], ids=lambda r: repr(r))
def test_bad_rows_are_refused_and_change_nothing(rows):
    env = VectorEnv(8, reward="points")
    before = env.reset(seed=3)
    with pytest.raises(ValueError, match="distinct table indices in 0..7"):
        env.keep(rows)
    assert env.num_envs == 8
    np.testing.assert_array_equal(env.step(before.action_mask.argmax(1)).terminated.shape, (8,))


def test_keep_before_reset_is_refused():
    with pytest.raises(RuntimeError, match="reset"):
        VectorEnv(2).keep([0])
