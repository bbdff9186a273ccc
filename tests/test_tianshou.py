"""Tianshou on the environment: with HeldRewards every seat, the loser included, is paid its outcome in its own rows.

Needs the ``ray`` extra (it brings tianshou); skipped without it, failing
instead with ``ALLFIVES_REQUIRE_RAY=1``. No network, no Ray.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from optional import require

require("tianshou")

from tianshou.env import PettingZooEnv  # noqa: E402

import allfives_env  # noqa: E402
from allfives_env.wrappers import FloatObservations, HeldRewards  # noqa: E402

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "tianshou_dqn.py"


def load_example():
    spec = importlib.util.spec_from_file_location("tianshou_dqn_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def rows_of_random_match(env: PettingZooEnv, seed: int):
    """Step Tianshou's env as its collector does; return (acting seat, reward vector) per row and the winners."""
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rows = []
    while True:
        actor = obs["agent_id"]
        obs, rew, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(obs["mask"]))))
        rows.append((actor, list(rew)))
        if term or trunc:
            return rows, env.env.unwrapped._state.winners


@pytest.mark.parametrize("players", [2, 3])
def test_the_losing_seat_receives_its_minus_one_in_its_own_row(players):
    plain = PettingZooEnv(allfives_env.env(num_players=players, target=40))
    held = PettingZooEnv(HeldRewards(FloatObservations(allfives_env.env(num_players=players, target=40))))
    side_of = held.env.unwrapped.game_rules.side_of
    for seed in range(4):
        for env, fixed in ((plain, False), (held, True)):
            rows, winners = rows_of_random_match(env, seed)
            own = {agent: [r[env.agent_idx[agent]] for a, r in rows if a == agent] for agent in env.agents}
            for i, agent in enumerate(env.agents):
                lost = side_of[i] not in winners
                if fixed:  # each seat's own rows add up to its outcome
                    want = -1.0 if lost else (1.0 if len(winners) == 1 else 0.0)
                    assert sum(own[agent]) == want
                elif lost:  # the trap the wrapper fixes: a loser's own rows never carry its -1
                    assert -1.0 not in own[agent]


def test_the_dqn_seat_collects_a_minus_one_for_every_match_it_loses():
    example = load_example()
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv

    np.random.seed(0)
    algorithm, _, _ = example.build(2, hidden=16, lr=1e-3, gamma=0.5, seed=0)
    envs = DummyVectorEnv([lambda: example.make_env(2, target=30, reward="win_loss") for _ in range(2)])
    envs.seed(0)
    collector = Collector(algorithm, envs, VectorReplayBuffer(20_000, 2))
    collector.reset()
    stats = collector.collect(n_episode=8)
    data = collector.buffer[collector.buffer.sample_indices(0)]  # every stored row, of both sub-buffers
    mine = data.rew[data.obs.agent_id == example.LEARNER, 0]
    outcomes = np.asarray(stats.returns).reshape(-1, 2)[:, 0]
    assert len(outcomes) == 8 and set(outcomes) <= {-1.0, 1.0}
    losses, wins = int((outcomes == -1).sum()), int((outcomes == 1).sum())
    assert losses > 0 and wins > 0  # an untrained seat against random both wins and loses some of eight
    # the learner's own rows (what its DQN learns from) carry every outcome of the collected matches
    finished_rows = mine[mine != 0]
    assert (finished_rows == -1).sum() >= losses and (finished_rows == 1).sum() >= wins
