"""The round and match state machine on one table record: the core's ``State.apply``, compiled.

:func:`apply` takes one legal action on a table and says what it ended:
nothing, the round (its hand award already scored), or the match. Dealing
the next round and restarting a finished table are the caller's
(:mod:`allfives_env.vector.kernel`), since a search's play-out stops where
the engine deals on. Step for step the same as
:class:`allfives_env.core.state.State`, which ``tests/test_vector.py``
checks at every decision.
"""

from __future__ import annotations

from .jit import jit, lowest_bit
from .layout import Ends, end_total, fits, lead_ends, mask_pips, open_values, place, playable
from .lookup import DRAW, PASS, POINTS, TILE_DOUBLE

CONTINUE, ROUND_OVER, MATCH_OVER = 0, 1, 2


@jit(inline=True)
def ends_of(t):
    """The table's layout ends as an :class:`~allfives_env.vector.layout.Ends` value."""
    v, c = t.values, t.counts
    return Ends((v[0], v[1], v[2], v[3]), (c[0], c[1], c[2], c[3]), t.spinner, t.spinner_ends)


@jit(inline=True)
def forced_action(t, c):
    """DRAW or PASS when that is the seat to act's only legal action, else -1."""
    if t.lead < 0 or t.drawn >= 0 or t.hands[t.to_act] & playable(ends_of(t)):
        return -1
    return DRAW if t.bone_pos < c.bone_size else PASS


@jit
def is_legal(t, c, action):
    """Whether ``action`` is legal for the seat to act."""
    if action < 0 or action > PASS:
        return False
    if action >= DRAW:
        return action == forced_action(t, c)
    tile, slot = action >> 2, action & 3
    if t.lead < 0:
        if slot != 0:
            return False
        return tile == t.required_lead if t.required_lead >= 0 else (t.hands[t.to_act] >> tile & 1) == 1
    if t.drawn >= 0:
        if tile != t.drawn:
            return False
    elif not t.hands[t.to_act] >> tile & 1:
        return False
    return fits(ends_of(t), tile, slot)


@jit(inline=True)
def blocked(t, c, ends):
    """The boneyard is empty and no tile held by anyone fits an open end."""
    if t.bone_pos < c.bone_size:
        return False
    held = 0
    for seat in range(c.num_players):
        held |= t.hands[seat]
    return (held & playable(ends)) == 0


@jit(inline=True)
def apply(t, c, action):
    """Take the seat to act's (legal) action; returns CONTINUE, ROUND_OVER or MATCH_OVER."""
    seat = t.to_act
    t.moves[t.move_count] = seat * 128 + action
    t.move_count += 1
    ends = ends_of(t)
    if action == DRAW:
        # It could not place: it holds none of the open values, and the drawn tile may show any other.
        t.lacks[seat] = open_values(ends)
        tile = t.deal[c.num_players * c.hand_size + t.bone_pos]
        t.bone_pos += 1
        t.hands[seat] |= 1 << tile
        if playable(ends) >> tile & 1:
            t.drawn = tile
        elif blocked(t, c, ends):
            return _block_award(t, c)
        return CONTINUE
    if action == PASS:
        t.lacks[seat] |= open_values(ends)
        t.to_act = c.seat_from[seat, 1]
        return CONTINUE
    tile, slot = action >> 2, action & 3
    t.hands[seat] &= ~(1 << tile)
    t.played |= 1 << tile
    t.drawn = -1
    if t.lead < 0:
        t.lead = tile
        ends = lead_ends(tile)
    else:
        if ends.spinner_ends & (1 << slot) and ends.spinner_ends != 1 << slot:
            t.end_double[lowest_bit(ends.spinner_ends ^ (1 << slot))] = 1  # the led spinner's other line side
        ends = place(ends, tile, slot)
        t.end_double[slot] = TILE_DOUBLE[tile]
        t.arm_started[slot] = 1
    for s in range(4):
        t.values[s] = ends.values[s]
        t.counts[s] = ends.counts[s]
    t.spinner = ends.spinner
    t.spinner_ends = ends.spinner_ends
    points = POINTS[end_total(ends)]
    if points:
        side = c.side_of[seat]
        add_points(t, c, side, points)
        if t.scores[side] >= c.target:
            _note_pips(t, c)
            t.result_domino = -1
            t.result_winner = side
            return MATCH_OVER
    if t.hands[seat] == 0:
        return _domino_award(t, c, seat)
    if blocked(t, c, ends):
        return _block_award(t, c)
    t.to_act = c.seat_from[seat, 1]
    return CONTINUE


@jit(inline=True)
def to_target(c, score):
    """Points still needed, in units of 2.5, rounded up and clipped to 0..127 (the views' ``to_target``)."""
    return min(127, max(0, int((c.target - score) / 2.5 + 0.999)))


@jit(inline=True)
def add_points(t, c, side, points):
    """Score ``points`` for ``side``, and keep its observation byte of points still needed in step."""
    t.scores[side] += points
    t.need[side] = to_target(c, t.scores[side])


@jit
def round_to_five(points):
    """Nearest multiple of 5: a remainder of 1 or 2 rounds down, 3 or 4 up."""
    return (points + 2) // 5 * 5


@jit
def _note_pips(t, c):
    for seat in range(4):
        t.result_pips[seat] = mask_pips(t.hands[seat]) if seat < c.num_players else 0


@jit
def _domino_award(t, c, seat):
    """The seat placed its last tile: its side takes the opponents' pips, rounded once."""
    _note_pips(t, c)
    side = c.side_of[seat]
    opponents = 0
    for other in range(c.num_players):
        if c.side_of[other] != side:
            opponents += t.result_pips[other]
    add_points(t, c, side, round_to_five(opponents))
    t.result_domino = seat
    t.result_winner = side
    return _after_award(t, c)


@jit
def _block_award(t, c):
    """No one can place and the boneyard is empty: the lowest remainder wins (the core's ``block_award``)."""
    _note_pips(t, c)
    t.result_domino = -1
    t.result_winner = -1
    totals = (
        _side_pips(t, c, 0),
        _side_pips(t, c, 1),
        _side_pips(t, c, 2),
        _side_pips(t, c, 3),
    )
    sides = c.num_sides
    low = totals[0]
    for side in range(1, sides):
        low = min(low, totals[side])
    lowest, first, second, everyone = 0, -1, -1, 0
    for side in range(sides):
        everyone += totals[side]
        if totals[side] == low:
            lowest += 1
            if first < 0:
                first = side
            else:
                second = side
    if lowest == 1:
        opponents = everyone - low
        add_points(t, c, first, round_to_five(opponents - low if c.fives else opponents))
        t.result_winner = first
    elif not c.fives and sides == 3 and lowest == 2:
        third = 3 - first - second
        award = round_to_five(totals[third])
        add_points(t, c, first, award / 2)
        add_points(t, c, second, award / 2)
    return _after_award(t, c)


@jit
def _side_pips(t, c, side):
    pips = 0
    for seat in range(c.num_players):
        if c.side_of[seat] == side:
            pips += t.result_pips[seat]
    return pips


@jit
def _after_award(t, c):
    for side in range(c.num_sides):
        if t.scores[side] >= c.target:
            return MATCH_OVER
    return ROUND_OVER


@jit
def match_winners(t, c):
    """A bit per side that won the match: of the sides at or past the target, those with the most points."""
    best = -1.0
    for side in range(c.num_sides):
        if t.scores[side] >= c.target and t.scores[side] > best:
            best = t.scores[side]
    bits = 0
    for side in range(c.num_sides):
        if t.scores[side] >= c.target and t.scores[side] == best:
            bits |= 1 << side
    return bits


@jit
def episode_winners(t, c):
    """A bit per side that won the episode just ended: the match's winners, or in a round episode the round's."""
    if c.round_episode:
        return 1 << t.result_winner if t.result_winner >= 0 else 0
    return match_winners(t, c)
