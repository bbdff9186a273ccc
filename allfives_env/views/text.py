"""A state drawn as plain text: the line through the spinner, its branches, the ends, scores and turn.

The line runs west to east on one row, each tile written with its halves in
the order they lie (``[4|6][6|6][6|2]``); the spinner is written in braces
(``{6|6}``), and its N branch is drawn above it, its S branch below, one tile
a row, the half nearer the top first. With ``hands=True`` every hand is listed
too, which is only for debugging: it shows hidden tiles.
"""

from __future__ import annotations

from ..core.layout import Layout
from ..core.state import State
from ..core.tiles import DOUBLE_ID, OTHER_HALF, SLOT_NAMES, TILE_TEXT, TILES, E, N, S, W


def _arm_halves(layout: Layout, slot: int, start: int) -> list[tuple[int, int, int]]:
    """(tile, inner half, outer half) for each tile of an arm, inner to outer."""
    out = []
    match = start
    for tile in layout.arms[slot]:
        outer = OTHER_HALF[tile][match]
        out.append((tile, match, outer))
        match = outer
    return out


def line_tiles(layout: Layout) -> list[tuple[int, int, int]]:
    """The line from its west end to its east end as (tile, west half, east half)."""
    if layout.lead < 0:
        return []
    low, high = TILES[layout.lead]
    west = [(t, outer, inner) for t, inner, outer in reversed(_arm_halves(layout, W, low))]
    east = [(t, inner, outer) for t, inner, outer in _arm_halves(layout, E, high)]
    return west + [(layout.lead, low, high)] + east


def branch_tiles(layout: Layout, slot: int) -> list[tuple[int, int, int]]:
    """A branch (N or S) from the spinner outwards as (tile, inner half, outer half)."""
    if layout.spinner < 0:
        return []
    return _arm_halves(layout, slot, layout.spinner)


def _layout_lines(layout: Layout) -> list[str]:
    if layout.lead < 0:
        return ["  (no tile down yet)"]
    spinner = DOUBLE_ID[layout.spinner] if layout.spinner >= 0 else -1
    tokens, column, width = [], 0, 0
    for tile, west, east in line_tiles(layout):
        if tile == spinner:
            column = width
            tokens.append(f"{{{west}|{east}}}")
        else:
            tokens.append(f"[{west}|{east}]")
        width += 5
    pad = " " * (2 + column)
    north = [f"{pad}[{outer}|{inner}]" for _, inner, outer in reversed(branch_tiles(layout, N))]
    south = [f"{pad}[{inner}|{outer}]" for _, inner, outer in branch_tiles(layout, S)]
    return north + ["  " + "".join(tokens)] + south


def _ends_line(layout: Layout) -> str:
    ends = []
    for slot in range(4):
        value = layout.values[slot]
        if value < 0:
            ends.append(f"{SLOT_NAMES[slot]} -")
        else:
            double = " double" if layout.terminal_double(slot) else ""
            ends.append(f"{SLOT_NAMES[slot]} {value} (counts {layout.counts[slot]}{double})")
    return "Ends: " + " | ".join(ends) + f"   end total {layout.end_total}"


def _score(x) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _side_name(state: State, side: int, names) -> str:
    seats = state.rules.seats_of(side)
    if len(seats) == 1:
        return names[seats[0]]
    return f"side {side} ({' + '.join(names[s] for s in seats)})"


def render_text(state: State, hands: bool = False, names=None) -> str:
    """The table as text; ``names`` label the seats (default ``P0``, ``P1``, ...)."""
    rules = state.rules
    n = rules.num_players
    names = list(names) if names is not None else [f"P{seat}" for seat in range(n)]
    layout = state.layout
    mode = f" ({rules.opening})" if rules.opening else ""
    partners = ", partnerships" if rules.partnerships else ""
    lines = [
        f"Round {state.round_index + 1} | {rules.rules}{mode}, {n} players{partners}, target {_score(rules.target)}"
    ]
    lines += _layout_lines(layout)
    lines.append(_ends_line(layout))
    scores = ", ".join(f"{_side_name(state, side, names)} {_score(s)}" for side, s in enumerate(state.scores))
    lines.append(f"Scores: {scores}")
    counts = ", ".join(f"{names[seat]} {state.hands[seat].bit_count()}" for seat in range(n))
    lines.append(f"Tiles held: {counts}; boneyard {state.boneyard_left}")
    if state.finished and not state.winners:
        lines.append("Round over")
    elif state.finished:
        winners = " and ".join(_side_name(state, side, names) for side in state.winners)
        shared = " (shared)" if len(state.winners) > 1 else ""
        lines.append(f"Match over: {winners} won{shared}")
    else:
        drawn = f", must place the drawn {TILE_TEXT[state.drawn]}" if state.drawn >= 0 else ""
        lines.append(f"To act: {names[state.to_act]}{drawn}")
    if hands:
        for seat in range(n):
            held = " ".join(TILE_TEXT[t] for t in state.hand_tiles(seat)) or "(empty)"
            lines.append(f"  {names[seat]}: {held}")
    return "\n".join(lines)
