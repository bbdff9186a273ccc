"""The search's play-outs on plain integers: the rest of one round, without a ``State``.

A search decision plays a few hundred rounds to their end, and through
``State.apply`` every placement works out the legal actions again, logs the
move and keeps the lacks: bookkeeping a play-out never reads. Here the rest
of the round is played on local variables (four end values, four end
counts, the spinner, the hands as masks), under the same rollout policies as
:func:`agents.search.play_out`. The hand awards are asked of the core
(``domino_award``, ``block_award``), once per distinct set of remainders.

It is a second copy of the placement rule, so ``tests/test_rollout.py`` holds
every move, score and winner of it to the core's play-out, at every table.
"""

from __future__ import annotations

from functools import lru_cache

from allfives_env.core import DRAW, PASS, PIPS, State
from allfives_env.core.rules import Rules
from allfives_env.core.scoring import END_TOTAL_LIMIT, POINTS_FOR_TOTAL, block_award, domino_award, placement_points
from allfives_env.core.tiles import END_COUNT, IS_DOUBLE, NUM_VALUES, OTHER_HALF, SUIT_MASK, mask_to_tiles


def _replies(v: int, covered: int) -> tuple[tuple[int, int], ...]:
    """(points, mask of the tiles scoring them) on an end showing ``v`` while the other ends add up to ``covered``."""
    by_points: dict[int, int] = {}
    for t in mask_to_tiles(SUIT_MASK[v]):
        points = placement_points(covered + END_COUNT[t][v])
        if points:
            by_points[points] = by_points.get(points, 0) | 1 << t
    return tuple(sorted(by_points.items(), reverse=True))


#: SUITS[v]: the tiles showing value v, and SUITS[-1] (a closed end) none.
SUITS = (*SUIT_MASK, 0)
#: REPLIES[v][covered]: ``_replies(v, covered)``, most points first, so the first tile held is the best reply.
REPLIES = tuple(tuple(_replies(v, covered) for covered in range(END_TOTAL_LIMIT)) for v in range(NUM_VALUES))


def play_round(state: State, guarded: bool = True, log: list[int] | None = None) -> tuple[list, tuple[int, ...]]:
    """The scores and the winning sides once ``state``'s round is played out under the rollout policy.

    ``state`` is left as it was; it must be past the lead. Play stops where
    the round ends or a side reaches the target, as a state built with
    ``round_limit=1`` does. ``log``, if given, receives each move as the
    core logs it (``seat * 128 + action``).
    """
    if state.finished:
        return state.scores[:], state.winners
    layout = state.layout
    if layout.lead < 0:
        raise ValueError("a play-out starts after the lead; allowed: a state whose layout holds a tile")
    rules = state.rules
    n = rules.num_players
    side_of = rules.side_of
    target = rules.target
    hands = state.hands[:]
    scores = state.scores[:]
    boneyard, drawn_so_far, bone_count = state.boneyard, state.bone_pos, len(state.boneyard)
    values, counts = layout.values[:], layout.counts[:]
    spinner, spinner_ends = layout.spinner, layout.spinner_ends
    seat, drawn = state.to_act, state.drawn
    playable = SUITS[values[0]] | SUITS[values[1]] | SUITS[values[2]] | SUITS[values[3]]
    while True:
        fit = 1 << drawn if drawn >= 0 else hands[seat] & playable
        if not fit:
            if drawn_so_far == bone_count:
                if log is not None:
                    log.append(seat * 128 + PASS)
                seat = (seat + 1) % n
                continue
            if log is not None:
                log.append(seat * 128 + DRAW)
            tile = boneyard[drawn_so_far]
            drawn_so_far += 1
            hands[seat] |= 1 << tile
            if playable >> tile & 1:
                drawn = tile
            elif drawn_so_far == bone_count and not _held(hands) & playable:
                return _end_round(scores, _block_gains(rules, _seat_pips(hands)), target)
            continue
        if guarded:
            action = _guarded(values, counts, spinner, spinner_ends, fit, hands[(seat + 1) % n])
        else:
            action = _greedy(values, counts, spinner, spinner_ends, fit)
        if log is not None:
            log.append(seat * 128 + action)
        tile, slot = action >> 2, action & 3
        hands[seat] &= ~(1 << tile)
        drawn = -1
        # The core's Layout.place, on the local ends. Written out here and in _answer_after, as the covered total
        # is in _guarded and _answer_after: folding them into shared helpers cost 6% of the guided search's time.
        value = values[slot]
        counts[slot] = END_COUNT[tile][value]
        bit = 1 << slot
        if spinner_ends & bit:
            spinner_ends ^= bit
            if spinner_ends:
                counts[spinner_ends.bit_length() - 1] = 2 * spinner
            else:
                values[2] = values[3] = spinner
        outer = OTHER_HALF[tile][value]
        if IS_DOUBLE[tile] and spinner < 0:
            spinner, spinner_ends = outer, bit
        values[slot] = outer
        points = POINTS_FOR_TOTAL[counts[0] + counts[1] + counts[2] + counts[3]]
        if points:
            side = side_of[seat]
            scores[side] += points
            if scores[side] >= target:
                return scores, _winners(scores, target)
        if not hands[seat]:
            return _end_round(scores, _domino_gains(rules, seat, _seat_pips(hands)), target)
        playable = SUITS[values[0]] | SUITS[values[1]] | SUITS[values[2]] | SUITS[values[3]]
        if drawn_so_far == bone_count and not _held(hands) & playable:
            return _end_round(scores, _block_gains(rules, _seat_pips(hands)), target)
        seat = (seat + 1) % n


def _covered(counts: list[int], spinner: int, spinner_ends: int, slot: int) -> int:
    """``Layout.covered_total``: what the other ends add up to once a tile covers ``slot``."""
    total = counts[0] + counts[1] + counts[2] + counts[3] - counts[slot]
    rest = spinner_ends & ~(1 << slot)
    if rest and rest != spinner_ends:
        total += 2 * spinner - counts[rest.bit_length() - 1]
    return total


def _greedy(values, counts, spinner, spinner_ends, fit) -> int:
    """``search.best_placement``: most points now, then the heaviest tile, then the lowest action id."""
    best, best_key = -1, -1
    for slot in range(4):
        v = values[slot]
        if v < 0:
            continue
        tiles = fit & SUIT_MASK[v]
        if not tiles:
            continue
        covered = _covered(counts, spinner, spinner_ends, slot)
        while tiles:
            low = tiles & -tiles
            tiles ^= low
            tile = low.bit_length() - 1
            action = tile * 4 + slot
            key = PIPS[tile] + POINTS_FOR_TOTAL[covered + END_COUNT[tile][v]] * 64
            if key > best_key or key == best_key and action < best:
                best, best_key = action, key
    return best


def _guarded(values, counts, spinner, spinner_ends, fit, reply_hand) -> int:
    """``search.guarded_placement``: points now minus the next seat's best answer, then pips, then the lowest id.

    Each placement is ranked by one integer, its ceiling (the key it would
    have if the next seat could not answer) then the lower action id, and the
    answers are worked out from the top until no ceiling left can win.
    """
    if not fit & (fit - 1):  # one tile: often it fits one end only
        tile = fit.bit_length() - 1
        slots = [slot for slot in range(4) if values[slot] >= 0 and OTHER_HALF[tile][values[slot]] >= 0]
        if len(slots) == 1:
            return tile * 4 + slots[0]
    total = counts[0] + counts[1] + counts[2] + counts[3]
    ranked = []
    for slot in range(4):
        v = values[slot]
        if v < 0:
            continue
        tiles = fit & SUIT_MASK[v]
        if not tiles:
            continue
        covered = total - counts[slot]
        if spinner_ends:
            rest = spinner_ends & ~(1 << slot)
            if rest and rest != spinner_ends:
                covered += 2 * spinner - counts[rest.bit_length() - 1]
        while tiles:
            low = tiles & -tiles
            tiles ^= low
            tile = low.bit_length() - 1
            ceiling = POINTS_FOR_TOTAL[covered + END_COUNT[tile][v]] * 64 + PIPS[tile]
            ranked.append(ceiling << 7 | 127 - (tile * 4 + slot))
    if len(ranked) == 1:
        return 127 - (ranked[0] & 127)
    ranked.sort(reverse=True)
    best, best_key = -1, None
    for rank in ranked:
        ceiling, action = rank >> 7, 127 - (rank & 127)
        if best_key is not None and (ceiling < best_key or ceiling == best_key and action > best):
            break
        tile = action >> 2
        answer = _answer_after(values, counts, spinner, spinner_ends, tile, action & 3, reply_hand) if reply_hand else 0
        key = ceiling - answer * 64
        if best_key is None or key > best_key or key == best_key and action < best:
            best, best_key = action, key
    return best


def _answer_after(values, counts, spinner, spinner_ends, tile, slot, hand) -> int:
    """``search.best_answer`` on the ends ``tile`` at ``slot`` would leave: the most one placement from ``hand`` scores."""
    value = values[slot]
    values, counts = values[:], counts[:]
    counts[slot] = END_COUNT[tile][value]
    bit = 1 << slot
    if spinner_ends & bit:
        spinner_ends ^= bit
        if spinner_ends:
            counts[spinner_ends.bit_length() - 1] = 2 * spinner
        else:
            values[2] = values[3] = spinner
    outer = OTHER_HALF[tile][value]
    if IS_DOUBLE[tile] and spinner < 0:
        spinner, spinner_ends = outer, bit
    values[slot] = outer
    best = 0
    total = counts[0] + counts[1] + counts[2] + counts[3]
    for end in range(4):
        v = values[end]
        if not hand & SUITS[v]:
            continue
        covered = total - counts[end]
        if spinner_ends:
            rest = spinner_ends & ~(1 << end)
            if rest and rest != spinner_ends:
                covered += 2 * spinner - counts[rest.bit_length() - 1]
        for points, tiles in REPLIES[v][covered]:
            if points <= best:
                break
            if hand & tiles:
                best = points
                break
    return best


def _held(hands: list[int]) -> int:
    held = 0
    for hand in hands:
        held |= hand
    return held


def _seat_pips(hands: list[int]) -> tuple[int, ...]:
    return tuple([sum([PIPS[t] for t in mask_to_tiles(hand)]) for hand in hands])


@lru_cache(maxsize=4096)
def _domino_gains(rules: Rules, seat: int, seat_pips: tuple[int, ...]) -> tuple:
    return domino_award(rules, seat, list(seat_pips)).gains


@lru_cache(maxsize=4096)
def _block_gains(rules: Rules, seat_pips: tuple[int, ...]) -> tuple:
    return block_award(rules, list(seat_pips)).gains


def _end_round(scores: list, gains: tuple, target: int) -> tuple[list, tuple[int, ...]]:
    for side, gain in enumerate(gains):
        if gain:
            scores[side] += gain
    return scores, _winners(scores, target)


def _winners(scores: list, target: int) -> tuple[int, ...]:
    """The core's rule: of the sides at or past the target, those with the most points (none if none got there)."""
    reached = [score for score in scores if score >= target]
    if not reached:
        return ()
    best = max(reached)
    return tuple(side for side, score in enumerate(scores) if score == best)
