"""The search's play-outs, compiled: a batch of rounds played to their end in one call.

A search decision plays every candidate action on each of many deals of
the hidden tiles, then the rest of the round under a fast rollout policy.
Here the whole batch (deals x candidates) is one compiled call on table
records of the batched engine (:mod:`allfives_env.vector.table`), stepped
by the engine's own compiled rules (:func:`allfives_env.vector.rules.apply`),
so the placement rule, the awards and the target are the core's, decided
once. Only the rollout policies live here, written as the search's
reference versions in :mod:`agents.search` are:

- ``guarded``: most points now minus the best answer the next seat could
  make with its hand, then the heaviest tile, then the lowest action id;
- ``greedy``: most points now, then the heaviest tile, then the lowest id.

``tests/test_rollout.py`` holds every move, score and winner of these
play-outs to the core's :func:`agents.search.play_out`, at every table.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from allfives_env.core import SeatView, State
from allfives_env.core.rules import Rules
from allfives_env.vector.convert import state_record, view_record
from allfives_env.vector.jit import jit, lowest_bit
from allfives_env.vector.layout import covered_total, place, playable
from allfives_env.vector.lookup import COUNT_ON, DRAW, PASS, POINTS, SUIT, TILE_PIPS
from allfives_env.vector.rules import CONTINUE, MATCH_OVER, apply, ends_of, match_winners
from allfives_env.vector.table import TABLE, make_config

NO_EQUITY = np.zeros((0, 0, 0))  # no match-equity table: play-outs are valued by points and matches won alone
WIN_BONUS = 100.0  # outcome value of winning the match inside a rollout, in points (agents.search re-exports it)
EQUITY_UNIT = 5  # the step of agents.match_equity's tables, in points: every score is a multiple of it


@jit
def best_answer(ends, hand):
    """The most points one placement of a tile in ``hand`` scores on ``ends`` (0 if none scores)."""
    best = 0
    for slot in range(4):
        v = ends.values[slot]
        tiles = hand & SUIT[v + 1]
        if not tiles:
            continue
        covered = covered_total(ends, slot)
        while tiles:
            tile = lowest_bit(tiles)
            tiles &= tiles - 1
            best = max(best, POINTS[covered + COUNT_ON[tile, v]])
    return best


@jit
def greedy_action(ends, fit):
    """Most points now, then the heaviest tile, then the lowest action id."""
    best, best_key = -1, -1
    for slot in range(4):
        v = ends.values[slot]
        tiles = fit & SUIT[v + 1]
        if not tiles:
            continue
        covered = covered_total(ends, slot)
        while tiles:
            tile = lowest_bit(tiles)
            tiles &= tiles - 1
            action = tile * 4 + slot
            key = TILE_PIPS[tile] + POINTS[covered + COUNT_ON[tile, v]] * 64
            if key > best_key or key == best_key and action < best:
                best, best_key = action, key
    return best


@jit
def guarded_action(ends, fit, reply_hand):
    """Points now minus the next seat's best answer (x64), plus the tile's pips; ties to the lowest action id.

    A placement's key is at most its *ceiling* (the key with no answer), so
    the answer is worked out only for placements whose ceiling could still
    beat the best key found: the same choice as trying them all.
    """
    best, best_key = -1, -(1 << 30)
    for slot in range(4):
        v = ends.values[slot]
        tiles = fit & SUIT[v + 1]
        if not tiles:
            continue
        covered = covered_total(ends, slot)
        while tiles:
            tile = lowest_bit(tiles)
            tiles &= tiles - 1
            action = tile * 4 + slot
            ceiling = POINTS[covered + COUNT_ON[tile, v]] * 64 + TILE_PIPS[tile]
            if ceiling < best_key or ceiling == best_key and action > best:
                continue
            key = ceiling - 64 * best_answer(place(ends, tile, slot), reply_hand) if reply_hand else ceiling
            if key > best_key or key == best_key and action < best:
                best, best_key = action, key
    return best


@jit
def rollout_action(t, c, guarded):
    """The rollout policy's action for the seat to act (every seat's tiles known): a placement, or draw / pass."""
    seat = t.to_act
    ends = ends_of(t)
    fit = 1 << t.drawn if t.drawn >= 0 else t.hands[seat] & playable(ends)
    if not fit:
        return DRAW if t.bone_pos < c.bone_size else PASS
    if guarded:
        return guarded_action(ends, fit, t.hands[c.seat_from[seat, 1]])
    return greedy_action(ends, fit)


@jit
def play_round(t, c, action, guarded, log):
    """Take ``action`` on table ``t``, then play the round out under the rollout policy.

    Stops where the round ends or a side reaches the target; returns the
    bits of the sides that won the match (0 unless the target was reached).
    ``log`` (an int16 array, or one of length 0) receives the moves after
    ``action``, as the core logs them, for the tests.
    """
    event = apply(t, c, action)
    logged = 0
    while event == CONTINUE:
        step = rollout_action(t, c, guarded)
        if logged < log.shape[0]:
            log[logged] = t.to_act * 128 + step
            logged += 1
        event = apply(t, c, step)
    return match_winners(t, c) if event == MATCH_OVER else 0


@jit
def outcome(t, c, side, root_scores, won):
    """``side``'s gain since the root minus the opponents' mean gain, plus or minus ``WIN_BONUS`` for the match."""
    sides = c.num_sides
    total = 0.0
    for s in range(sides):
        total += t.scores[s] - root_scores[s]
    gain = t.scores[side] - root_scores[side]
    value = gain - (total - gain) / (sides - 1)
    if won:
        winners = 0
        for s in range(sides):
            winners += won >> s & 1
        value += WIN_BONUS / winners if won >> side & 1 else -WIN_BONUS
    return value


@jit
def needed_steps(target, score):
    """Steps of ``EQUITY_UNIT`` points a side with ``score`` still needs to reach ``target``."""
    return max(0, math.ceil((target - score) / EQUITY_UNIT))


@jit
def equity_of(equity, target, scores, side, sides):
    """What a round's end short of the target adds for ``side`` of two or three: ``WIN_BONUS * (2 * chance - 1)``,
    with ``equity[i, j, k]`` the chance of a side needing ``i`` more steps of ``EQUITY_UNIT`` points against sides
    needing ``j`` and ``k`` (``k`` 0 at two sides; :mod:`agents.match_equity`; the compiled rollouts and the Python
    play-outs both value it here)."""
    own = needed_steps(target, scores[side])
    after = needed_steps(target, scores[(side + 1) % sides])
    last = needed_steps(target, scores[(side + 2) % sides]) if sides == 3 else 0
    return WIN_BONUS * (2.0 * equity[own, after, last] - 1.0)


@jit
def deal_into(scratch, root, c, hands, boneyards, d):
    """``scratch[0]``: the table ``root[0]`` with deal ``d`` of the hidden tiles (hand masks, boneyard in draw
    order) in place."""
    scratch[0] = root[0]
    t = scratch[0]
    for seat in range(c.num_players):
        t.hands[seat] = hands[d, seat]
    base = c.num_players * c.hand_size + t.bone_pos
    for k in range(c.bone_size - t.bone_pos):
        t.deal[base + k] = boneyards[d, k]


@jit
def _deal_totals(root, config, hands, boneyards, weights, actions, side, guarded, equity, scratch, totals):
    """Add ``weights[d] * value`` of each action on each deal ``d`` to ``totals``, deal by deal in order; with an
    ``equity`` table (not empty), a round that ends short of the target adds :func:`equity_of`."""
    c = config[0]
    none = np.zeros(0, np.int16)
    for d in range(hands.shape[0]):
        for i in range(actions.shape[0]):
            deal_into(scratch, root, c, hands, boneyards, d)
            t = scratch[0]
            won = play_round(t, c, actions[i], guarded, none)
            value = outcome(t, c, side, root[0].scores, won)
            if not won and equity.shape[0]:
                value += equity_of(equity, c.target, t.scores, side, c.num_sides)
            totals[i] += weights[d] * value


@jit
def _table_values(tables, config, rows, actions, guarded, scratch, values):
    """``values[j]``: the seat to act's outcome of ``actions[j]`` on table ``rows[j]`` as it truly lies."""
    c = config[0]
    none = np.zeros(0, np.int16)
    for j in range(rows.shape[0]):
        root = tables[rows[j]]
        scratch[0] = root
        t = scratch[0]
        won = play_round(t, c, actions[j], guarded, none)
        values[j] = outcome(t, c, c.side_of[root.to_act], root.scores, won)


@jit
def _logged_round(root, config, action, guarded, log):
    scratch = root.copy()
    won = play_round(scratch[0], config[0], action, guarded, log)
    return won, scratch


# -- from Python --------------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def config_of(rules: Rules) -> np.ndarray:
    """The kernels' rule configuration for ``rules``."""
    return make_config(rules)


def deal_arrays(view: SeatView, deals: list[tuple[list[int], tuple[int, ...]]]) -> tuple[np.ndarray, np.ndarray]:
    """Deals of the view's hidden tiles as :func:`sample_hidden` gives them (hand masks, boneyard in draw order), as
    the kernels read them: hand masks [D, 4] and boneyards [D, B]."""
    hands = np.array([deal_hands + [0] * (4 - len(deal_hands)) for deal_hands, _ in deals], dtype=np.int32)
    boneyards = np.zeros((len(deals), max(1, view.rules.boneyard_size)), dtype=np.int8)
    if view.boneyard_left:
        boneyards[:, : view.boneyard_left] = [boneyard for _, boneyard in deals]
    return hands, boneyards


def add_deal_values(
    totals: np.ndarray,
    view: SeatView,
    deals: list[tuple[list[int], tuple[int, ...]]],
    weights: list[float],
    actions: list[int],
    guarded: bool,
    equity: np.ndarray = NO_EQUITY,
) -> None:
    """Add to ``totals[i]`` each deal's ``weight * outcome`` of ``actions[i]`` for the view's side, deal by deal in
    order (so that batches of deals sum exactly as one loop over them would): one compiled call. With an
    ``equity`` table (:func:`agents.match_equity.equity_table`), a round's end short of the target is valued too."""
    hands, boneyards = deal_arrays(view, deals)
    add_deal_arrays(totals, view, hands, boneyards, weights, actions, guarded, equity)


def add_deal_arrays(
    totals: np.ndarray,
    view: SeatView,
    hands: np.ndarray,
    boneyards: np.ndarray,
    weights: list[float] | np.ndarray,
    actions: list[int],
    guarded: bool,
    equity: np.ndarray = NO_EQUITY,
) -> None:
    """:func:`add_deal_values` for deals given as arrays: hand masks [D, 4] and boneyards [D, B] in draw order."""
    rules = view.rules
    _deal_totals(view_record(view), config_of(rules), np.asarray(hands, dtype=np.int32),
                 np.asarray(boneyards, dtype=np.int8), np.asarray(weights, dtype=np.float64),
                 np.asarray(actions, dtype=np.int64), rules.side_of[view.seat], guarded,
                 np.asarray(equity, dtype=np.float64), np.zeros(1, TABLE), totals)  # fmt: skip


def table_values(
    tables: np.ndarray, config: np.ndarray, rows: np.ndarray, actions: np.ndarray, guarded: bool = True
) -> np.ndarray:
    """Each (table, action) pair's play-out value for the table's seat to act, on the true deal."""
    values = np.empty(len(rows))
    _table_values(tables, config, np.asarray(rows, dtype=np.intp), np.asarray(actions, dtype=np.int64), guarded,
                  np.zeros(1, TABLE), values)  # fmt: skip
    return values


def logged_play_out(state: State, action: int, guarded: bool = True) -> tuple[list[int], list[float], int]:
    """The moves after ``action``, the final scores and the winning sides' bits of one play-out (for the tests)."""
    log = np.full(256, -1, dtype=np.int16)
    won, after = _logged_round(state_record(state), config_of(state.rules), action, guarded, log)
    moves = [int(m) for m in log if m >= 0]
    return moves, after[0]["scores"][: state.rules.num_sides].tolist(), int(won)
