"""JSON pieces shared by the game and replay answers: the layout, round results, revealed hands.

Every tile is written as its text, ``"a-b"``, and as nothing else, so a test
can find every tile an answer mentions. Nothing here decides what a seat may
see: callers pass only what the seat's view (or a finished round) reveals.
"""

from __future__ import annotations

from allfives_env.core import DRAW, PASS, SLOT_NAMES, TILE_TEXT, Rules, mask_to_tiles
from allfives_env.core.layout import Layout
from allfives_env.core.record import exact
from allfives_env.core.state import RoundLog
from allfives_env.views.text import branch_tiles, line_tiles


def layout_json(layout: Layout) -> dict:
    """The layout as the page draws it: the line west to east, the spinner's branches, the open ends."""
    spinner = layout.spinner_tile()
    line = [{"tile": f"{w}-{e}", "double": w == e, "spinner": t == spinner} for t, w, e in line_tiles(layout)]
    branches = {}
    for slot in (2, 3):
        branches[SLOT_NAMES[slot]] = [
            {"tile": f"{inner}-{outer}", "double": inner == outer} for _, inner, outer in branch_tiles(layout, slot)
        ]
    ends = [
        {"slot": SLOT_NAMES[slot], "value": value, "count": layout.counts[slot], "double": layout.terminal_double(slot)}
        for slot, value in enumerate(layout.values)
        if value >= 0
    ]
    return {
        "empty": layout.empty,
        "line": line,
        "spinner_index": next((i for i, piece in enumerate(line) if piece["spinner"]), None),
        "lead_index": len(layout.arms[0]) if not layout.empty else None,
        "spinner": layout.spinner if layout.spinner >= 0 else None,
        "branch_open": layout.branch_open(),
        "branches": branches,
        "ends": ends,
        "end_total": layout.end_total,
    }


def tiles_text(mask: int) -> list[str]:
    return [TILE_TEXT[t] for t in mask_to_tiles(mask)]


def round_end_hands(log: RoundLog) -> list[list[str]]:
    """Each seat's tiles when the round ended, rebuilt from its deal and moves (the rules show them then)."""
    hands = [set(hand) for hand in log.deal.hands]
    drawn = 0
    for seat, action in log.moves:
        if action == DRAW:
            hands[seat].add(log.deal.boneyard[drawn])
            drawn += 1
        elif action != PASS:
            hands[seat].discard(action >> 2)
    return [[TILE_TEXT[t] for t in sorted(hand)] for hand in hands]


def round_end_layout(log: RoundLog) -> Layout:
    layout = Layout()
    for _seat, action in log.moves:
        if action not in (DRAW, PASS):
            layout.place(action >> 2, action & 3)
    return layout


def round_result_json(rules: Rules, index: int, log: RoundLog, scores) -> dict:
    """A finished round: how it ended, the hand award or tie, the pips left, the hands and layout it ended with."""
    result = log.result
    return {
        "round": index + 1,
        "end": result.end,
        "winner": result.winner,
        "award": exact(result.award),
        "gains": [exact(g) for g in result.gains],
        "split": list(result.split) if result.split else None,
        "domino_seat": result.domino_seat,
        "seat_pips": list(result.seat_pips),
        "scores": [exact(s) for s in scores],
        "hands": round_end_hands(log),
        "layout": layout_json(round_end_layout(log)),
        "text": result_text(rules, result),
    }


def side_label(rules: Rules, side: int) -> str:
    seats = rules.seats_of(side)
    return f"seats {' + '.join(map(str, seats))}" if len(seats) > 1 else f"seat {seats[0]}"


def result_text(rules: Rules, result) -> str:
    """One line on how a round ended, for people."""
    if result.end == "target":
        return f"{side_label(rules, result.winner)} reached the target"
    if result.winner is not None:
        how = "domino" if result.end == "domino" else "blocked"
        by = f" by seat {result.domino_seat}" if result.domino_seat is not None else ""
        verb = "win" if len(rules.seats_of(result.winner)) > 1 else "wins"
        return f"{how}{by}: {side_label(rules, result.winner)} {verb} the hand award of {exact(result.award)}"
    if result.split:
        pair = " and ".join(side_label(rules, s) for s in result.split)
        return f"blocked: {pair} tie lowest and split {exact(result.award)}"
    return f"{result.end}: the lowest pips are tied, so no award"


def rules_json(rules: Rules) -> dict:
    return {
        **rules.as_dict(),
        "hand_size": rules.hand_size,
        "boneyard_size": rules.boneyard_size,
        "num_sides": rules.num_sides,
        "side_of": list(rules.side_of),
        "sides": [
            {"side": side, "seats": list(rules.seats_of(side)), "name": side_label(rules, side)}
            for side in range(rules.num_sides)
        ],
    }
