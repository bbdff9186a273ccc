"""Tiles, slots and action ids: the numbering every other layer shares.

Tile ids follow the canonical double-six order, ``0-0`` = 0 ... ``6-6`` = 27.
A placement is ``tile * 4 + slot``; ``DRAW`` and ``PASS`` follow, so the action
space is ``Discrete(114)``. Hands are held as 28-bit masks over tile ids, which
is what makes legal-move generation a handful of integer operations.
"""

from __future__ import annotations

from .numbers import whole_number

NUM_TILES = 28
NUM_VALUES = 7

W, E, N, S = 0, 1, 2, 3
SLOT_NAMES = ("W", "E", "N", "S")
NUM_SLOTS = 4

DRAW = NUM_TILES * NUM_SLOTS  # 112
PASS = DRAW + 1  # 113
NUM_ACTIONS = PASS + 1  # 114

TILES: tuple[tuple[int, int], ...] = tuple((a, b) for a in range(NUM_VALUES) for b in range(a, NUM_VALUES))
TILE_ID: dict[tuple[int, int], int] = {}
for _i, (_a, _b) in enumerate(TILES):
    TILE_ID[(_a, _b)] = _i
    TILE_ID[(_b, _a)] = _i
PIPS: tuple[int, ...] = tuple(a + b for a, b in TILES)
IS_DOUBLE: tuple[bool, ...] = tuple(a == b for a, b in TILES)
DOUBLE_ID: tuple[int, ...] = tuple(TILE_ID[(v, v)] for v in range(NUM_VALUES))
TILE_TEXT: tuple[str, ...] = tuple(f"{a}-{b}" for a, b in TILES)

ALL_TILES_MASK = (1 << NUM_TILES) - 1
#: SUIT_MASK[v]: the tiles that show value v on either half.
SUIT_MASK: tuple[int, ...] = tuple(
    sum(1 << t for t, (a, b) in enumerate(TILES) if v in (a, b)) for v in range(NUM_VALUES)
)
#: OTHER_HALF[t][v]: the half of tile t left showing after matching v (-1 if t lacks v).
OTHER_HALF: tuple[tuple[int, ...], ...] = tuple(
    tuple((b if a == v else a) if v in (a, b) else -1 for v in range(NUM_VALUES)) for a, b in TILES
)

#: END_COUNT[t][v]: what the new end counts once tile t is placed on an end showing v: its outer half,
#: both halves for a double (-1 if t lacks v).
END_COUNT: tuple[tuple[int, ...], ...] = tuple(
    tuple(-1 if OTHER_HALF[t][v] < 0 else OTHER_HALF[t][v] * (2 if a == b else 1) for v in range(NUM_VALUES))
    for t, (a, b) in enumerate(TILES)
)


def _fit_actions() -> tuple[tuple[dict[int, tuple[int, ...]], ...], ...]:
    table = []
    for slot in range(NUM_SLOTS):
        per_value = []
        for v in range(NUM_VALUES):
            suit = [t for t in range(NUM_TILES) if SUIT_MASK[v] >> t & 1]
            subsets = {}
            for pick in range(1 << len(suit)):
                chosen = [suit[i] for i in range(len(suit)) if pick >> i & 1]
                subsets[sum(1 << t for t in chosen)] = tuple(t * NUM_SLOTS + slot for t in chosen)
            per_value.append(subsets)
        table.append(tuple(per_value))
    return tuple(table)


#: FIT_ACTIONS[slot][v][hand & SUIT_MASK[v]]: the placements of those tiles at an end showing v.
#: A lookup table, because legal-move generation is the engine's hottest loop.
FIT_ACTIONS = _fit_actions()


def tile_id(a: int, b: int) -> int:
    """The id of the tile with halves ``a`` and ``b`` (either order)."""
    try:
        return TILE_ID[(a, b)]
    except KeyError:
        raise ValueError(f"no tile {a}-{b}: halves must be integers 0..6") from None


def tile_to_text(tile: int) -> str:
    """``"a-b"`` with the lower half first."""
    _check_tile(tile)
    return TILE_TEXT[tile]


def tile_from_text(text: str) -> int:
    """Read ``"a-b"`` (either order, surrounding spaces allowed)."""
    halves = [whole_number(p.strip(), max_digits=1) for p in str(text).strip().split("-")]
    if len(halves) != 2 or None in halves:
        raise ValueError(f"bad tile {text!r}: expected 'a-b' with halves 0..6, e.g. '3-6'")
    return tile_id(*halves)


def mask_to_tiles(mask: int) -> list[int]:
    """The tile ids set in a hand mask, ascending."""
    tiles = []
    while mask:
        low = mask & -mask
        tiles.append(low.bit_length() - 1)
        mask ^= low
    return tiles


def tiles_to_mask(tiles) -> int:
    mask = 0
    for t in tiles:
        mask |= 1 << t
    return mask


def placement(tile: int, slot: int) -> int:
    """The action id that places ``tile`` at ``slot``."""
    _check_tile(tile)
    if not 0 <= slot < NUM_SLOTS:
        raise ValueError(f"bad slot {slot!r}: expected 0..3 (W, E, N, S)")
    return tile * NUM_SLOTS + slot


def action_to_text(action: int, *, lead: bool = False) -> str:
    """``"5-3 E"``, or the bare tile for a lead, or ``"draw"`` / ``"pass"``.

    A tile is written with the half that matches the end first when that is
    known from the layout; here, out of context, the lower half comes first.
    """
    if action == DRAW:
        return "draw"
    if action == PASS:
        return "pass"
    if not isinstance(action, int) or not 0 <= action < DRAW:
        raise ValueError(f"bad action {action!r}: expected an integer 0..{NUM_ACTIONS - 1}")
    text = TILE_TEXT[action >> 2]
    return text if lead else f"{text} {SLOT_NAMES[action & 3]}"


def action_from_text(text: str) -> int:
    """Read ``"5-3 E"``, ``"draw"`` or ``"pass"``.

    A bare tile (a lead, or a tile that fits one open end only) needs the
    layout to resolve; :meth:`allfives_env.core.state.State.parse_action`
    does that. Here a bare tile is read as slot W.
    """
    word = str(text).strip()
    low = word.lower()
    if low == "draw":
        return DRAW
    if low == "pass":
        return PASS
    parts = word.split()
    if len(parts) == 1:
        return tile_from_text(parts[0]) * NUM_SLOTS + W
    if len(parts) == 2 and parts[1].upper() in SLOT_NAMES:
        return tile_from_text(parts[0]) * NUM_SLOTS + SLOT_NAMES.index(parts[1].upper())
    raise ValueError(f"bad action {text!r}: expected 'a-b SLOT' (SLOT one of W, E, N, S), 'a-b', 'draw' or 'pass'")


def _check_tile(tile: int) -> None:
    if not isinstance(tile, int) or not 0 <= tile < NUM_TILES:
        raise ValueError(f"bad tile id {tile!r}: expected an integer 0..27")
