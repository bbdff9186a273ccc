"""The AEC wrappers' mirrored attributes never go stale.

``env()`` copies the raw environment's bookkeeping attributes (the turn, the
reward and termination dicts...) onto its wrappers whenever the raw
environment rebinds one, so the wrappers read them without forwarding. These
tests drive the wrapped environment through random play, resets, illegal moves
and dead steps, and after every call check that each wrapper holds exactly the
raw environment's objects. ``ALLFIVES_MIRROR_GAMES`` raises the number of
games for a longer run by hand.
"""

from __future__ import annotations

import os
import random
import warnings

import pytest

from allfives_env.aec_env import _Mirrored, env, raw_env

GAMES = int(os.environ.get("ALLFIVES_MIRROR_GAMES", "3"))
MIRRORED = {name for name, value in vars(raw_env).items() if isinstance(value, _Mirrored)}


def check_mirrors(outer) -> None:
    raw = outer.unwrapped
    assert raw._mirrors, "env() registers its wrappers"
    for wrapper in raw._mirrors:
        shared = set(vars(wrapper)) & set(vars(raw))
        assert shared == MIRRORED, type(wrapper).__name__  # no other raw attribute is copied (and could go stale)
        for name in MIRRORED:
            assert vars(wrapper)[name] is vars(raw)[name], (type(wrapper).__name__, name)
    for name in MIRRORED:
        assert getattr(outer, name) is getattr(raw, name)


def finish_dead_steps(e) -> None:
    """Step every terminated agent out, as PettingZoo's loop does."""
    while e.agents:
        e.step(None)
        check_mirrors(e)


@pytest.mark.parametrize(
    "settings",
    [
        {"num_players": 2},
        {"num_players": 3, "reward": "points", "auto_forced": True},
        {"num_players": 4, "partnerships": True, "episode": "round"},
        {"num_players": 2, "rules": "fives", "reward": "points", "target": 60},
    ],
    ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()),
)
def test_mirrored_attributes_are_the_raw_envs_after_every_call(settings):
    assert {"agents", "agent_selection", "rewards", "terminations", "truncations", "infos"} <= MIRRORED
    chooser = random.Random(7)
    e = env(**settings)
    for game in range(GAMES):
        e.reset(seed=game)
        check_mirrors(e)
        illegal_at = chooser.randrange(1, 60) if game % 2 else None
        steps = 0
        while e.agents:
            observation, _, terminated, truncated, _ = e.last()
            check_mirrors(e)
            if terminated or truncated:
                e.step(None)
            elif steps == illegal_at:
                refused = [a for a, ok in enumerate(observation["action_mask"]) if not ok]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    e.step(chooser.choice(refused))  # the wrapper ends the game: the mover loses
                check_mirrors(e)
                assert all(e.terminations.values())
                finish_dead_steps(e)
                break
            else:
                legal = [a for a, ok in enumerate(observation["action_mask"]) if ok]
                e.step(chooser.choice(legal))
            steps += 1
            check_mirrors(e)
        if game == 1:  # a reset in the middle of a game, too
            e.reset(seed=100 + game)
            check_mirrors(e)
            e.step(next(a for a, ok in enumerate(e.last()[0]["action_mask"]) if ok))
            check_mirrors(e)
