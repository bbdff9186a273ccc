"""Seeded deals and leaders inside the kernel: the core's counter-based stream and leader rules, compiled.

The same numbers as :mod:`allfives_env.core.stream` and
:func:`allfives_env.core.deal.seeded_deal` (``tests/test_vector.py`` and
``tests/test_vector_deals.py`` hold them equal): a key from (seed, round),
the stream's 32-bit values, Lemire's bounded numbers, Fisher-Yates from the
last position down, the descending opener first and the lot last.
"""

from __future__ import annotations

import numpy as np

from .jit import jit
from .lookup import DEAL_TAG, DOUBLE_OF, GOLDEN, MATCH_TAG, MIX1, MIX2, TILE_DOUBLE, TILE_PIPS
from .rules import to_target

_U27, _U30, _U31, _U32, _U1 = np.uint64(27), np.uint64(30), np.uint64(31), np.uint64(32), np.uint64(1)
_LOW32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)


@jit
def mix64(z):
    """SplitMix64's output function (64-bit words wrap)."""
    z = (z ^ (z >> _U30)) * MIX1
    z = (z ^ (z >> _U27)) * MIX2
    return z ^ (z >> _U31)


@jit
def absorb(a, b, c, d):
    """``allfives_env.core.stream.absorb`` of four 64-bit words."""
    key = np.uint64(0)
    key = mix64((key ^ a) + GOLDEN)
    key = mix64((key ^ b) + GOLDEN)
    key = mix64((key ^ c) + GOLDEN)
    return mix64((key ^ d) + GOLDEN)


@jit
def next_match_seed(low, high, episode):
    """The seed of episode ``episode`` of a table first seeded (low, high): a 63-bit number."""
    return absorb(MATCH_TAG, low, high, np.uint64(episode)) >> _U1


@jit
def below(key, position, word, bound):
    """(a number uniform in 0..bound-1, the stream's next position, its current 64-bit output).

    ``word`` carries the output that ``position - 1`` came from, so each output is mixed once for two values.
    """
    limit = np.uint64(bound)
    while True:
        if position % 2 == 0:
            word = mix64(key + np.uint64(position // 2 + 1) * GOLDEN)
            value = word >> _U32
        else:
            value = word & _LOW32
        position += 1
        product = value * limit
        low = product & _LOW32
        if low >= limit or low >= _TWO32 % limit:
            return np.int64(product >> _U32), position, word


@jit
def deal_round(t, c, round_index, after_round):
    """Deal round ``round_index`` into table ``t`` and start it (``after_round``: ``t.result_*`` hold how the last
    round ended, for its leader)."""
    n, size = c.num_players, c.hand_size
    key = absorb(DEAL_TAG, t.seed[0], t.seed[1], np.uint64(round_index))
    position, word = 0, np.uint64(0)
    deal = t.deal
    double = -1
    opener = 0
    if c.descending:
        opener, position, word = below(key, position, word, n)
        double = DOUBLE_OF[6 - round_index % 7]
    count = 0
    for tile in range(28):
        if tile != double:
            deal[count] = tile
            count += 1
    for i in range(count - 1, 0, -1):
        j, position, word = below(key, position, word, i + 1)
        deal[i], deal[j] = deal[j], deal[i]
    if double >= 0:  # the opener's hand starts with the double
        for i in range(27, opener * size, -1):
            deal[i] = deal[i - 1]
        deal[opener * size] = double
    for seat in range(4):
        hand = 0
        if seat < n:
            for k in range(seat * size, (seat + 1) * size):
                hand |= 1 << deal[k]
        t.hands[seat] = hand
    seats, required = allowed_leaders(t, c, round_index, after_round)
    lot, position, word = below(key, position, word, _bit_count4(seats))
    leader = 0
    for seat in range(n):
        if seats >> seat & 1:
            if lot == 0:
                leader = seat
                break
            lot -= 1
    _start_round(t, round_index, leader, required)


@jit
def _bit_count4(bits):
    return (bits & 1) + (bits >> 1 & 1) + (bits >> 2 & 1) + (bits >> 3 & 1)


@jit
def allowed_leaders(t, c, round_index, after_round):
    """(a bit per seat allowed to lead this round, the tile the lead must be or -1), from the new hands in ``t``.

    The core's :func:`~allfives_env.core.deal.allowed_leaders`: pagat's domino seat or a neutral lot; the
    descending double's holder; in winners' choice the last winner (the partner who went out, or on a block
    the partner with fewer pips), else the highest double dealt, else the highest hand.
    """
    n = c.num_players
    everyone = (1 << n) - 1
    if not c.fives:
        if after_round and t.result_domino >= 0:
            return 1 << t.result_domino, -1
        return everyone, -1
    if c.descending:
        double = DOUBLE_OF[6 - round_index % 7]
        return _holders(t, n, double), double
    if after_round and t.result_winner >= 0:
        if t.result_domino >= 0:
            return 1 << t.result_domino, -1
        least = 1 << 30
        for seat in range(n):
            if c.side_of[seat] == t.result_winner and t.result_pips[seat] < least:
                least = t.result_pips[seat]
        seats = 0
        for seat in range(n):
            if c.side_of[seat] == t.result_winner and t.result_pips[seat] == least:
                seats |= 1 << seat
        return seats, -1
    highest = -1
    held = 0
    for seat in range(n):
        held |= t.hands[seat]
    for tile in range(27, -1, -1):
        if TILE_DOUBLE[tile] and held >> tile & 1:
            highest = tile
            break
    if highest >= 0:
        return _holders(t, n, highest), highest
    most = -1
    seats = 0
    for seat in range(n):
        pips = 0
        hand = t.hands[seat]
        for tile in range(28):
            if hand >> tile & 1:
                pips += TILE_PIPS[tile]
        if pips > most:
            most, seats = pips, 1 << seat
        elif pips == most:
            seats |= 1 << seat
    return seats, -1


@jit
def _holders(t, n, tile):
    seats = 0
    for seat in range(n):
        if t.hands[seat] >> tile & 1:
            seats |= 1 << seat
    return seats


@jit
def _start_round(t, round_index, leader, required):
    """An empty layout, the dealt hands in place: ``leader`` to lead."""
    t.played = 0
    for slot in range(4):
        t.values[slot] = -1
        t.counts[slot] = 0
        t.end_double[slot] = 0
        t.arm_started[slot] = 0
        t.lacks[slot] = 0
    t.spinner = -1
    t.spinner_ends = 0
    t.lead = -1
    t.required_lead = required
    t.to_act = leader
    t.leader = leader
    t.drawn = -1
    t.bone_pos = 0
    t.round_index = round_index
    t.move_count = 0


@jit
def start_match(t, c, low, high):
    """A new match with seed (low, high): scores to zero, round 0 dealt."""
    t.seed[0] = low
    t.seed[1] = high
    for side in range(4):
        t.scores[side] = 0.0
        t.need[side] = to_target(c, 0.0) if side < c.num_sides else 0
    t.result_domino = -1
    t.result_winner = -1
    deal_round(t, c, 0, False)
