"""The wrappers for other RL libraries: float observations, and rewards held until the seat acts again."""

from __future__ import annotations

import numpy as np
import pytest

import allfives_env
from allfives_env.core.tiles import PASS
from allfives_env.wrappers import FloatObservations, HeldRewards


def test_float_observations_have_the_same_values_and_float_spaces():
    inner = allfives_env.env(num_players=3, history=True)
    env = FloatObservations(allfives_env.env(num_players=3, history=True))
    inner.reset(seed=5)
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(30):
        agent = env.agent_selection
        for seat in env.possible_agents:
            want, got = inner.observe(seat), env.observe(seat)
            space = env.observation_space(seat)
            for key in ("observation", "action_mask"):
                assert got[key].dtype == np.float32
                assert space[key].dtype == np.float32
                np.testing.assert_array_equal(got[key], want[key].astype(np.float32))
            assert space.contains(got)
        action = int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"])))
        inner.step(action)
        env.step(action)
    inner_high = inner.observation_space("player_0")["observation"].high
    np.testing.assert_array_equal(env.observation_space("player_0")["observation"].high, inner_high.astype(np.float32))


@pytest.mark.parametrize("dtype", [np.int8, "int32", "nonsense", None])
def test_float_observations_refuse_a_non_float_dtype(dtype):
    with pytest.raises(ValueError, match="float type"):
        FloatObservations(allfives_env.env(), dtype=dtype)


def play_held(num_players: int, seed: int):
    """A random match through HeldRewards: each step's rewards, and every seat's total."""
    env = HeldRewards(allfives_env.env(num_players=num_players))
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rows, totals = [], dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(10_000):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        rows.append((agent, dict(env.rewards)))
        for seat, value in env.rewards.items():
            totals[seat] += value
    return env, rows, totals


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_held_rewards_pay_every_seat_its_outcome_in_a_row_of_its_own(num_players):
    for seed in range(6):
        env, rows, totals = play_held(num_players, seed)
        for actor, rewards in rows:  # only the seat that acted is ever paid in its row
            assert all(value == 0.0 for seat, value in rewards.items() if seat != actor)
        winners = env.unwrapped._state.winners
        side_of = env.unwrapped.game_rules.side_of
        for seat_index, seat in enumerate(env.possible_agents):
            side = side_of[seat_index]
            want = (1.0 if len(winners) == 1 else 0.0) if side in winners else -1.0
            assert totals[seat] == want
        # the settling turns: every seat but the last mover, in seat order after it, each with its outcome
        last_mover = rows[-num_players][0]
        first = env.possible_agents.index(last_mover)
        settlers = [env.possible_agents[(first + k) % num_players] for k in range(1, num_players)]
        assert [actor for actor, _ in rows[-(num_players - 1) :]] == settlers
        assert not env.agents


def test_the_losing_seat_receives_minus_one_after_the_winning_move():
    env = HeldRewards(allfives_env.env(num_players=2))
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    while not env.unwrapped._state.finished:
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    winner = env.possible_agents[1 - env.possible_agents.index(env.agent_selection)]
    loser = env.agent_selection
    assert env.rewards[winner] == 1.0 and env.rewards[loser] == 0.0  # the winner is paid on its own move
    assert not env.terminations[loser]  # the loser still gets a turn ...
    obs = env.observe(loser)
    assert np.flatnonzero(obs["action_mask"]).tolist() == [PASS]  # ... with one action
    with pytest.raises(ValueError, match="PASS"):
        env.step(int(np.flatnonzero(env.unwrapped.observe(loser)["action_mask"] == 0)[0]))
    env.step(PASS)
    assert env.rewards[loser] == -1.0 and env.rewards[winner] == 0.0
    assert all(env.terminations.values())
    with pytest.raises(ValueError, match="None"):
        env.step(PASS)


def test_held_rewards_carry_points_earned_on_other_seats_moves():
    """In reward='points' mode a seat is paid, at its next step, what others' moves gave it in between."""
    inner = allfives_env.env(num_players=3, reward="points")
    env = HeldRewards(allfives_env.env(num_players=3, reward="points"))
    for e in (inner, env):
        e.reset(seed=11)
    rng = np.random.default_rng(11)
    earned = dict.fromkeys(env.possible_agents, 0.0)
    paid = dict.fromkeys(env.possible_agents, 0.0)
    pending = dict.fromkeys(env.possible_agents, 0.0)
    while not env.unwrapped._state.finished:
        actor = env.agent_selection
        action = int(rng.choice(np.flatnonzero(env.observe(actor)["action_mask"])))
        inner.step(action)
        env.step(action)
        for seat, value in inner.rewards.items():
            pending[seat] += value
            earned[seat] += value
        assert env.rewards[actor] == pytest.approx(pending[actor])
        pending[actor] = 0.0
        paid[actor] += env.rewards[actor]
    while env.agent_selection is not None and not env.terminations[env.agent_selection]:
        seat = env.agent_selection
        env.step(PASS)
        paid[seat] += env.rewards[seat]
    assert paid == pytest.approx(earned)
    assert any(v != 0 for v in earned.values())
