"""A state drawn as an RGB image: the layout on a green table, a text band with scores and turn.

Tiles are drawn with pips. A tile on the line lies along it and a double
lies across it, as on a real table; the spinner's N and S branches grow up
and down from it. The picture is scaled to fit a fixed canvas, so every frame
of a match has the same size (what video recorders need).
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..core.layout import Layout
from ..core.state import State
from ..core.tiles import DOUBLE_ID, IS_DOUBLE, SLOT_NAMES, N, S
from .text import branch_tiles, line_tiles

WIDTH, HEIGHT = 640, 480
BAND = 84  # pixels of text band at the top
TABLE = (28, 110, 62)
BAND_COLOUR = (245, 245, 240)
TILE = (250, 248, 235)
SPINNER_TILE = (255, 236, 170)
INK = (20, 20, 20)
MAX_CELL = 28

# Pip centres in a unit square, per value.
_C, _LO, _HI = 0.5, 0.25, 0.75
PIPS_AT = {
    0: (),
    1: ((_C, _C),),
    2: ((_LO, _LO), (_HI, _HI)),
    3: ((_LO, _LO), (_C, _C), (_HI, _HI)),
    4: ((_LO, _LO), (_HI, _LO), (_LO, _HI), (_HI, _HI)),
    5: ((_LO, _LO), (_HI, _LO), (_C, _C), (_LO, _HI), (_HI, _HI)),
    6: ((_LO, _LO), (_HI, _LO), (_LO, _C), (_HI, _C), (_LO, _HI), (_HI, _HI)),
}


def tile_boxes(layout: Layout) -> list[tuple[float, float, float, float, int, int, int]]:
    """Each tile as (x0, y0, x1, y1, first half, second half, tile) in cell units, the line on y = 0.

    The first half is the left one of a box wider than tall, else the top one.
    """
    boxes = []
    line = line_tiles(layout)
    if not line:
        return boxes
    widths = [1 if IS_DOUBLE[t] else 2 for t, _, _ in line]
    lead_index = next(i for i, (t, _, _) in enumerate(line) if t == layout.lead)
    x = -widths[lead_index] / 2 - sum(widths[:lead_index])
    spinner = DOUBLE_ID[layout.spinner] if layout.spinner >= 0 else -1
    spinner_x = 0.0
    for (tile, west, east), w in zip(line, widths, strict=True):
        if IS_DOUBLE[tile]:
            boxes.append((x, -1.0, x + 1, 1.0, west, east, tile))
        else:
            boxes.append((x, -0.5, x + 2, 0.5, west, east, tile))
        if tile == spinner:
            spinner_x = x + w / 2
        x += w
    for slot, step in ((N, -1), (S, 1)):
        y = step * 1.0
        for tile, inner, outer in branch_tiles(layout, slot):
            top, bottom = (outer, inner) if step < 0 else (inner, outer)
            if IS_DOUBLE[tile]:
                y0, y1 = sorted((y, y + step))
                boxes.append((spinner_x - 1, y0, spinner_x + 1, y1, inner, outer, tile))
                y += step
            else:
                y0, y1 = sorted((y, y + 2 * step))
                boxes.append((spinner_x - 0.5, y0, spinner_x + 0.5, y1, top, bottom, tile))
                y += 2 * step
    return boxes


def _draw_half(draw: ImageDraw.ImageDraw, x: float, y: float, cell: float, value: int) -> None:
    radius = max(1.0, cell * 0.09)
    for px, py in PIPS_AT[value]:
        cx, cy = x + px * cell, y + py * cell
        draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=INK)


def _band_text(state: State, names) -> list[str]:
    rules = state.rules
    scores = "  ".join(
        f"{names[seats[0]] if len(seats) == 1 else 'side ' + str(side)}: {_fmt(score)}"
        for side, score in enumerate(state.scores)
        for seats in [rules.seats_of(side)]
    )
    layout = state.layout
    ends = "  ".join(
        f"{SLOT_NAMES[s]} {layout.counts[s]}" if layout.values[s] >= 0 else f"{SLOT_NAMES[s]} -" for s in range(4)
    )
    if state.finished:
        turn = "match over" if state.winners else "round over"
    else:
        turn = f"to act: {names[state.to_act]}" + ("  (must place the drawn tile)" if state.drawn >= 0 else "")
    return [
        f"round {state.round_index}   {rules.rules}, {rules.num_players} players   target {_fmt(rules.target)}",
        f"scores  {scores}",
        f"ends  {ends}   end total {layout.end_total}   boneyard {state.boneyard_left}",
        turn,
    ]


def _fmt(x) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def render_image(state: State, names=None) -> np.ndarray:
    """The table as a uint8 array of shape (480, 640, 3)."""
    names = list(names) if names is not None else [f"P{seat}" for seat in range(state.rules.num_players)]
    image = Image.new("RGB", (WIDTH, HEIGHT), TABLE)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, WIDTH, BAND), fill=BAND_COLOUR)
    font = ImageFont.load_default(size=14)
    for row, text in enumerate(_band_text(state, names)):
        draw.text((8, 4 + 19 * row), text, fill=INK, font=font)
    boxes = tile_boxes(state.layout)
    if boxes:
        x_lo, x_hi = min(b[0] for b in boxes), max(b[2] for b in boxes)
        y_lo, y_hi = min(b[1] for b in boxes), max(b[3] for b in boxes)
        margin = 12
        cell = min(MAX_CELL, (WIDTH - 2 * margin) / (x_hi - x_lo), (HEIGHT - BAND - 2 * margin) / (y_hi - y_lo))
        ox = WIDTH / 2 - (x_lo + x_hi) / 2 * cell
        oy = BAND + (HEIGHT - BAND) / 2 - (y_lo + y_hi) / 2 * cell
        spinner = DOUBLE_ID[state.layout.spinner] if state.layout.spinner >= 0 else -1
        for x0, y0, x1, y1, first, second, tile in boxes:
            left, top, right, bottom = ox + x0 * cell, oy + y0 * cell, ox + x1 * cell, oy + y1 * cell
            colour = SPINNER_TILE if tile == spinner else TILE
            draw.rectangle((left, top, right, bottom), fill=colour, outline=INK)
            if right - left > bottom - top:  # lying across the picture: halves side by side
                middle = (left + right) / 2
                draw.line((middle, top + 2, middle, bottom - 2), fill=INK)
                _draw_half(draw, left, top, cell, first)
                _draw_half(draw, middle, top, cell, second)
            else:
                middle = (top + bottom) / 2
                draw.line((left + 2, middle, right - 2, middle), fill=INK)
                _draw_half(draw, left, top, cell, first)
                _draw_half(draw, left, middle, cell, second)
    return np.array(image, dtype=np.uint8)
