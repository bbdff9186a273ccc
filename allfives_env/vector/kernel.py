"""The engine's entry points: each runs every listed table through a whole step in one compiled call.

A step takes the action, plays the forced draws and passes that follow
(``auto_forced``), scores the round's end, deals the next round or, where
the episode ended, restarts the table with its next match seed, and writes
the rewards and the seat to act's outputs, all without the interpreter.
The tables are independent, so the loop over them is a ``prange``: the
``*_parallel`` twins spread it over threads and give the same results.
"""

from __future__ import annotations

import numpy as np

from .deal import deal_round, next_match_seed, start_match
from .encode import write_mask, write_observation, write_state
from .features import write_features
from .jit import jit, jit_parallel, prange
from .lookup import NUM_ACTIONS
from .rules import CONTINUE, ROUND_OVER, apply, episode_winners, forced_action


@jit(inline=True)
def _write_outputs(t, c, k, legal, player, observation, mask, features):
    """Row ``k`` of the outputs, and the table's legal actions as bits (``legal``: its row of the bit array)."""
    player[k] = t.to_act
    mask[k, :] = 0  # here, while the row is in cache, rather than zeroed by numpy in a pass of its own
    _, legal[0], legal[1] = write_mask(t, c, mask[k])
    write_observation(t, c, observation[k])
    if c.features:
        write_features(t, c, mask[k], features[k])


@jit
def _log_round(t, log):
    log.ended = True
    log.leader = t.leader
    for i in range(28):
        log.deal[i] = t.deal[i]
    log.move_count = t.move_count
    for i in range(t.move_count):
        log.moves[i] = t.moves[i]


@jit(inline=True)
def _step_one(t, c, action, k, rewards, terminated, final_scores, winners, logs):
    """One table's step, up to the outputs: row ``k`` of the rewards, ends, final scores and winners where they are
    not what :func:`_step_rows` filled them with (no reward, no end, NaN scores, no winner)."""
    before = (t.scores[0], t.scores[1], t.scores[2], t.scores[3])
    event = apply(t, c, action)
    while event == CONTINUE and c.auto_forced:
        forced = forced_action(t, c)
        if forced < 0:
            break
        event = apply(t, c, forced)
    if event != CONTINUE and c.keep_logs:
        _log_round(t, logs[k])
    n, sides = c.num_players, c.num_sides
    if c.points_reward and (
        t.scores[0] != before[0] or t.scores[1] != before[1] or t.scores[2] != before[2] or t.scores[3] != before[3]
    ):
        total = 0.0
        for side in range(sides):
            total += t.scores[side] - before[side]
        for seat in range(n):
            gain = t.scores[c.side_of[seat]] - before[c.side_of[seat]]
            rewards[k, seat] = (gain - (total - gain) / (sides - 1)) / c.target
    if event == CONTINUE or (event == ROUND_OVER and not c.round_episode):
        if event == ROUND_OVER:
            deal_round(t, c, t.round_index + 1, True)
        return
    terminated[k] = True  # the episode ended: its scores and winners, then the table restarts
    won = episode_winners(t, c)
    for side in range(sides):
        final_scores[k, side] = t.scores[side]
        winners[k, side] = won >> side & 1
    if not c.points_reward and won and won & (won - 1) == 0:  # one side won alone: +1 to it, -1 to the rest
        for seat in range(n):
            rewards[k, seat] = 1.0 if won >> c.side_of[seat] & 1 else -1.0
    t.episode += 1
    start_match(t, c, next_match_seed(t.first_seed[0], t.first_seed[1], t.episode), np.uint64(0))


@jit(inline=True)
def _illegal(legal, rows, actions):
    """How many of ``actions`` are not among their tables' legal actions (bits of the last outputs)."""
    illegal = 0
    for k in range(rows.shape[0]):
        action = actions[k]
        illegal += not (0 <= action < NUM_ACTIONS and legal[rows[k], action >> 6] >> np.uint64(action & 63) & 1)
    return illegal


@jit
def _step_rows(tables, config, legal, rows, actions, player, observation, mask, features, rewards, terminated,
               final_scores, winners, logs):  # fmt: skip
    """Step each listed table with its action and write row ``k`` of every output for ``rows[k]``."""
    c = config[0]
    for k in range(rows.shape[0]):
        t = tables[rows[k]]
        rewards[k, :] = 0.0  # what most rows hold: no reward, no end, NaN scores, no winner
        terminated[k] = False
        final_scores[k, :] = np.nan
        winners[k, :] = False
        _step_one(t, c, actions[k], k, rewards, terminated, final_scores, winners, logs)
        _write_outputs(t, c, k, legal[rows[k]], player, observation, mask, features)


@jit
def _reset_rows(tables, config, legal, rows, seeds, player, observation, mask, features):
    """A new match on each listed table: ``seeds[k]`` (low, high) is its first seed and its match seed."""
    c = config[0]
    for k in range(rows.shape[0]):
        t = tables[rows[k]]
        t.first_seed[0] = seeds[k, 0]
        t.first_seed[1] = seeds[k, 1]
        t.episode = 0
        start_match(t, c, seeds[k, 0], seeds[k, 1])
        _write_outputs(t, c, k, legal[rows[k]], player, observation, mask, features)


@jit
def _output_rows(tables, config, legal, rows, player, observation, mask, features):
    """The seat to act's outputs of each listed table, as it stands."""
    c = config[0]
    for k in range(rows.shape[0]):
        _write_outputs(tables[rows[k]], c, k, legal[rows[k]], player, observation, mask, features)


@jit
def _state_rows(tables, config, rows, out):
    """The global state vector of each listed table."""
    c = config[0]
    for k in range(rows.shape[0]):
        write_state(tables[rows[k]], c, out[k])


# -- the entry points: the one-thread ones run the rows above in one call; the parallel ones split the rows into
# a few chunks per thread and run each chunk as one call (a table record cannot be taken inside a parallel loop).


@jit
def step(tables, config, legal, rows, actions, player, observation, mask, features, rewards, terminated,
         final_scores, winners, logs):  # fmt: skip
    """Step every listed table with its action; returns 0, or the number of illegal actions and changes nothing
    (``legal``: each table's legal actions as bits, as its last outputs listed them)."""
    illegal = _illegal(legal, rows, actions)
    if illegal:
        return illegal
    _step_rows(tables, config, legal, rows, actions, player, observation, mask, features, rewards, terminated,
               final_scores, winners, logs)  # fmt: skip
    return 0


@jit_parallel
def step_parallel(tables, config, legal, rows, actions, player, observation, mask, features, rewards, terminated,
                  final_scores, winners, logs):  # fmt: skip
    """:func:`step` over threads."""
    illegal = _illegal(legal, rows, actions)
    if illegal:
        return illegal
    chunks = _chunks(rows.shape[0], config[0].threads)
    for i in prange(chunks.shape[0] - 1):
        a, b = chunks[i], chunks[i + 1]
        _step_rows(tables, config, legal, rows[a:b], actions[a:b], player[a:b], observation[a:b], mask[a:b],
                   features[a:b] if features.shape[0] else features, rewards[a:b], terminated[a:b],
                   final_scores[a:b], winners[a:b], logs[a:b] if logs.shape[0] else logs)  # fmt: skip
    return 0


@jit
def reset(tables, config, legal, rows, seeds, player, observation, mask, features):
    """Start a match on every listed table."""
    _reset_rows(tables, config, legal, rows, seeds, player, observation, mask, features)


@jit_parallel
def reset_parallel(tables, config, legal, rows, seeds, player, observation, mask, features):
    """:func:`reset` over threads."""
    chunks = _chunks(rows.shape[0], config[0].threads)
    for i in prange(chunks.shape[0] - 1):
        a, b = chunks[i], chunks[i + 1]
        _reset_rows(tables, config, legal, rows[a:b], seeds[a:b], player[a:b], observation[a:b], mask[a:b],
                    features[a:b] if features.shape[0] else features)  # fmt: skip


@jit
def outputs(tables, config, legal, rows, player, observation, mask, features):
    """Every listed table's outputs as it stands."""
    _output_rows(tables, config, legal, rows, player, observation, mask, features)


@jit_parallel
def outputs_parallel(tables, config, legal, rows, player, observation, mask, features):
    """:func:`outputs` over threads."""
    chunks = _chunks(rows.shape[0], config[0].threads)
    for i in prange(chunks.shape[0] - 1):
        a, b = chunks[i], chunks[i + 1]
        _output_rows(tables, config, legal, rows[a:b], player[a:b], observation[a:b], mask[a:b],
                     features[a:b] if features.shape[0] else features)  # fmt: skip


@jit
def states(tables, config, legal, rows, out):
    """Every listed table's global state vector."""
    _state_rows(tables, config, rows, out)


@jit_parallel
def states_parallel(tables, config, legal, rows, out):
    """:func:`states` over threads."""
    chunks = _chunks(rows.shape[0], config[0].threads)
    for i in prange(chunks.shape[0] - 1):
        a, b = chunks[i], chunks[i + 1]
        _state_rows(tables, config, rows[a:b], out[a:b])


@jit
def _chunks(count, threads):
    """Bounds of about four chunks per thread (at least 64 tables each): ``chunks[i]:chunks[i + 1]``."""
    pieces = max(1, min(4 * threads, count // 64))
    return np.array([count * i // pieces for i in range(pieces + 1)], dtype=np.int64)
