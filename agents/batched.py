"""The hand-written bots batched over the tables of the compiled engine: one call chooses for many tables.

``heuristic`` and ``greedy`` score every legal placement of the seat to act
exactly as :mod:`agents.heuristic` and :mod:`agents.greedy` do, reading
only what that seat's view holds (its own hand, the other hands' sizes,
the layout, the lacks, the scores, this round's public moves), straight
from the engine's table records. The floating-point terms of the
heuristic are summed in the same order as there, so the scores are the
same to the last bit. Where several placements tie, the kernel lists them
and the bot's own generator picks one, as the bot would
(:func:`choose`); ``tests/test_batched.py`` compares every decision of
seeded matches with the bots themselves.
"""

from __future__ import annotations

import math

import numpy as np

from allfives_env.vector import VectorEnv
from allfives_env.vector.jit import jit, lowest_bit, popcount
from allfives_env.vector.layout import covered_total, end_total, open_values, placed, playable
from allfives_env.vector.lookup import (
    ALL_TILES,
    COUNT_ON,
    DRAW,
    HIGH,
    LACKED,
    LOW,
    NUM_ACTIONS,
    POINTS,
    SUIT,
    TILE_DOUBLE,
    TILE_PIPS,
)
from allfives_env.vector.rules import ends_of

from .base import Agent
from .greedy import GreedyAgent
from .heuristic import DEFAULT_WEIGHTS, WIN, HeuristicAgent
from .random_agent import RandomAgent

#: The order of the heuristic's weights in the array the kernel reads.
WEIGHT_NAMES = tuple(DEFAULT_WEIGHTS)
(_POINTS, _THREAT, _BLOCK, _FOLLOW, _VERSATILE, _CAP, _STUCK, _PIPS, _URGENCY, _DOUBLE, _PARTNER, _PARTNER_LACKS,
 _SUPPORT) = range(len(WEIGHT_NAMES))  # fmt: skip
assert WEIGHT_NAMES == ("points", "threat", "block", "follow", "versatile", "versatile_cap", "stuck", "pips",
                        "pips_urgency", "double", "partner", "partner_lacks", "support")  # fmt: skip
TIE = 1e-9  # scores this close are equal, as in HeuristicAgent.act


def weight_array(agent: HeuristicAgent) -> np.ndarray:
    """The agent's weights in :data:`WEIGHT_NAMES` order."""
    return np.array([agent.weights[name] for name in WEIGHT_NAMES], dtype=np.float64)


@jit
def _legal_placements(t, c, out):
    """The seat to act's legal placements in id order into ``out``; returns how many (0: a draw or pass)."""
    hand = t.hands[t.to_act]
    count = 0
    if t.lead < 0:
        if t.required_lead >= 0:
            out[0] = t.required_lead * 4
            return 1
        while hand:
            out[count] = lowest_bit(hand) * 4
            count += 1
            hand &= hand - 1
        return count
    ends = ends_of(t)
    candidates = 1 << t.drawn if t.drawn >= 0 else hand
    for tile in range(28):
        if candidates >> tile & 1:
            for slot in range(4):
                v = ends.values[slot]
                if v >= 0 and SUIT[v + 1] >> tile & 1:
                    out[count] = tile * 4 + slot
                    count += 1
    return count


@jit
def _best_replies(ends, tiles, score, target, values):
    """The best value each tile of ``tiles`` scores on ``ends`` (``WIN`` added where it reaches the target), the
    largest first, into ``values``; returns how many (the heuristic's ``best_reply``, sorted)."""
    best = np.zeros(28, np.int64)
    for slot in range(4):
        v = ends.values[slot]
        fit = tiles & SUIT[v + 1]
        if not fit:
            continue
        covered = covered_total(ends, slot)
        while fit:
            tile = lowest_bit(fit)
            fit &= fit - 1
            best[tile] = max(best[tile], POINTS[covered + COUNT_ON[tile, v]])
    count = 0
    for tile in range(28):
        points = best[tile]
        if points > 0:
            value = points + WIN if score + points >= target else float(points)
            k = count  # insertion, largest first
            while k > 0 and values[k - 1] < value:
                values[k] = values[k - 1]
                k -= 1
            values[k] = value
            count += 1
    return count


@jit
def _expected_best(values, count, p):
    """E[max] when each value is there with probability p (the heuristic's ``expected_best``)."""
    expected, miss = 0.0, 1.0
    for k in range(count):
        expected += values[k] * p * miss
        miss *= 1.0 - p
    return expected


@jit
def _pool(t, c, seat, unseen):
    """(tiles ``seat`` could hold, the chance it holds each one), as the heuristic's ``candidate_pools``."""
    pool = unseen & ~LACKED[t.lacks[seat]]
    size = popcount(pool)
    return pool, min(1.0, popcount(t.hands[seat]) / size) if size else 0.0


@jit
def _heuristic_scores(t, c, w, actions, count, scores, replies):
    """Each listed placement's heuristic score, term by term in the order of ``_Context.score``."""
    n = c.num_players
    me = t.to_act
    my_side = c.side_of[me]
    nxt = c.seat_from[me, 1]
    partner = c.seat_from[me, 2] if c.partnerships else -1
    target = c.target
    own_score = t.scores[my_side]
    next_score = t.scores[c.side_of[nxt]]
    fewest = 1 << 30
    for seat in range(n):
        if c.side_of[seat] != my_side:
            fewest = min(fewest, popcount(t.hands[seat]))
    urgency = 1.0 / max(1, fewest)
    unseen = ALL_TILES & ~t.hands[me] & ~t.played
    next_pool, next_p = _pool(t, c, nxt, unseen)
    partner_pool, partner_p, partner_shown = 0, 0.0, 0
    if partner >= 0:
        partner_pool, partner_p = _pool(t, c, partner, unseen)
        for k in range(t.move_count):
            code = t.moves[k]
            if code >> 7 == partner and (code & 127) < DRAW:
                tile = (code & 127) >> 2
                partner_shown |= (1 << LOW[tile]) | (1 << HIGH[tile])
    ends = ends_of(t)
    for i in range(count):
        action = actions[i]
        tile = action >> 2
        after = placed(ends, tile, action & 3)
        points = POINTS[end_total(after)]
        if own_score + points >= target:
            scores[i] = WIN * 10 + points
            continue
        score = w[_POINTS] * points
        hand = t.hands[me] & ~(1 << tile)
        found = _best_replies(after, next_pool, next_score, target, replies)
        score -= w[_THREAT] * _expected_best(replies, found, next_p)
        fitting = popcount(playable(after) & next_pool)
        score += w[_BLOCK] * math.pow(1.0 - next_p, float(fitting))
        if hand:
            found = _best_replies(after, hand, own_score + points, target, replies)
            score += w[_FOLLOW] * (replies[0] if found else 0.0)
            mine = popcount(playable(after) & hand)
            score += w[_VERSATILE] * min(float(mine), w[_CAP])
            if not mine:
                score -= w[_STUCK]
        shed = 1.0 + w[_URGENCY] * urgency
        score += shed * (w[_PIPS] * TILE_PIPS[tile] + (w[_DOUBLE] if TILE_DOUBLE[tile] else 0.0))
        if partner >= 0:
            found = _best_replies(after, partner_pool, own_score + points, target, replies)
            score += w[_PARTNER] * _expected_best(replies, found, partner_p)
            opened = open_values(after)
            partner_lacks = t.lacks[partner]
            score -= w[_PARTNER_LACKS] * popcount(opened & partner_lacks)
            score += w[_SUPPORT] * popcount(opened & partner_shown & ~partner_lacks)
        scores[i] = score


@jit
def _pick(scores, actions, count, k, first, ties, tied):
    """The best-scoring placements of row ``k``, as the bots keep them: the first best, then those within TIE."""
    best_score = scores[0]
    ties[k] = 1
    tied[k, 0] = actions[0]
    for i in range(1, count):
        if scores[i] > best_score + TIE:
            best_score = scores[i]
            ties[k] = 1
            tied[k, 0] = actions[i]
        elif abs(scores[i] - best_score) <= TIE:
            tied[k, ties[k]] = actions[i]
            ties[k] += 1
    first[k] = tied[k, 0]


@jit
def _greedy_pick(t, actions, count, scores, k, first, ties, tied):
    """Row ``k``: the placements with the most points now, then the heaviest tile (as :class:`GreedyAgent`)."""
    ends = ends_of(t)
    for i in range(count):
        tile = actions[i] >> 2
        scores[i] = POINTS[end_total(placed(ends, tile, actions[i] & 3))] * 16 + TILE_PIPS[tile]
    best = scores[0]
    ties[k] = 0
    for i in range(count):
        if scores[i] > best:
            best = scores[i]
            ties[k] = 0
        if scores[i] == best:
            tied[k, ties[k]] = actions[i]
            ties[k] += 1
    first[k] = tied[k, 0]


#: The bots a kernel can play (:func:`bot_ties`), by their code.
RANDOM_BOT, GREEDY_BOT, HEURISTIC_BOT = range(3)


@jit
def bot_scratch():
    """The scratch arrays :func:`bot_ties` fills for one table: first, ties, tied, actions, scores, replies."""
    return (np.empty(1, np.int64), np.empty(1, np.int64), np.empty((1, NUM_ACTIONS), np.int64),
            np.empty(NUM_ACTIONS, np.int64), np.empty(NUM_ACTIONS, np.float64), np.empty(28, np.float64))  # fmt: skip


@jit(inline=True)
def bot_ties(t, c, bot, weights, k, first, ties, tied, actions, scores, replies):
    """Row ``k``: the choices bot ``bot`` keeps at table ``t`` (``ties[k]`` of them in ``tied[k]``, the first in
    ``first[k]``): the first best, then those within TIE for the heuristic; every legal action for the random
    bot. ``actions``, ``scores``, ``replies`` are scratch."""
    count = _legal_placements(t, c, actions)
    if count <= 1:
        first[k] = actions[0] if count else _forced(t, c)
        ties[k] = 1
        tied[k, 0] = first[k]
    elif bot == HEURISTIC_BOT:
        _heuristic_scores(t, c, weights, actions, count, scores, replies)
        _pick(scores, actions, count, k, first, ties, tied)
    elif bot == GREEDY_BOT:
        _greedy_pick(t, actions, count, scores, k, first, ties, tied)
    else:
        for i in range(count):
            tied[k, i] = actions[i]
        ties[k] = count
        first[k] = actions[0]


@jit
def _forced(t, c):
    return DRAW if t.bone_pos < c.bone_size else DRAW + 1


@jit
def bot_choices(tables, config, rows, bot, weights, first, ties, tied):
    """The choices of bot ``bot`` on each listed table (:func:`bot_ties`, row ``k`` for ``rows[k]``)."""
    c = config[0]
    _, _, _, actions, scores, replies = bot_scratch()
    for k in range(rows.shape[0]):
        bot_ties(tables[rows[k]], c, bot, weights, k, first, ties, tied, actions, scores, replies)


# -- from Python --------------------------------------------------------------------------------------------


def choose(env: VectorEnv, rows: np.ndarray, agents: list[Agent]) -> np.ndarray:
    """The action of ``agents[k]`` for the seat to act at table ``rows[k]`` of ``env``.

    ``heuristic``, ``greedy`` and ``random`` bots (of exactly those classes)
    are batched in compiled calls; any other agent is asked with the seat's
    view (:meth:`~allfives_env.vector.VectorEnv.seat_views`). Each bot breaks
    ties with its own generator, so the choices are the bots' own.
    """
    rows = np.asarray(rows, dtype=np.intp)
    actions = np.empty(len(rows), dtype=np.int64)
    groups: dict[tuple, list[int]] = {}
    for k, agent in enumerate(agents):
        kind = type(agent)
        if kind is HeuristicAgent:  # grouped by weights (the default ones compared at C speed, not rebuilt)
            key = (kind, _DEFAULT_KEY if agent.weights == DEFAULT_WEIGHTS else tuple(weight_array(agent)))
        else:
            key = (kind,) if kind in _BATCHED else (None,)
        groups.setdefault(key, []).append(k)
    for key, members in groups.items():
        picked = np.asarray(members, dtype=np.intp)
        if key[0] is None:
            views = env.seat_views(rows[picked])
            actions[picked] = [agents[k].act(view) for k, view in zip(members, views, strict=True)]
            continue
        first = np.empty(len(picked), dtype=np.int64)
        ties = np.empty(len(picked), dtype=np.int64)
        tied = np.empty((len(picked), NUM_ACTIONS), dtype=np.int64)
        bot = _BOT_CODES[key[0]]
        weights = np.array(key[1]) if bot == HEURISTIC_BOT else np.zeros(len(WEIGHT_NAMES))
        bot_choices(env.records, env.config, rows[picked], bot, weights, first, ties, tied)
        for j in np.flatnonzero(ties > 1).tolist():
            first[j] = agents[members[j]].rng.choice(tied[j, : ties[j]].tolist())
        actions[picked] = first
    return actions


_BOT_CODES = {RandomAgent: RANDOM_BOT, GreedyAgent: GREEDY_BOT, HeuristicAgent: HEURISTIC_BOT}
_BATCHED = tuple(_BOT_CODES)


def bot_code(agent: Agent) -> int | None:
    """The kernels' code for ``agent`` if they can play it (exactly these classes), else None."""
    return _BOT_CODES.get(type(agent))


def bot_weights(agent: Agent) -> np.ndarray:
    """The heuristic's weights as the kernels read them (an unused row of zeros for the other bots)."""
    return weight_array(agent) if isinstance(agent, HeuristicAgent) else np.zeros(len(WEIGHT_NAMES))


_DEFAULT_KEY = tuple(DEFAULT_WEIGHTS.values())
