"""Helpers shared by the rules tests: deals written as tile texts, plays written as action texts, snapshots.

Tests import these directly (``from conftest import ...``); pytest puts this folder on the import path.
"""

from __future__ import annotations

import random

from allfives_env.core import Deal, Rules, State, tile_from_text
from allfives_env.core.tiles import TILE_TEXT


def tiles(text: str) -> tuple[int, ...]:
    """``"3-6 0-0"`` -> tile ids, in the order written."""
    return tuple(tile_from_text(t) for t in text.replace(",", " ").split())


def deal(hands: list[str], boneyard: str, leader: int) -> Deal:
    """A deal written as one tile-text string per hand and one for the boneyard (draw order)."""
    return Deal(tuple(tiles(h) for h in hands), tiles(boneyard), leader)


def fill_deal(rules: Rules, hands: list[str], leader: int, boneyard_first: str = "") -> Deal:
    """Complete a partial deal (missing hands count as empty): each hand is topped up, then the boneyard, from the unused tiles in id order.

    Only for tests where the filler tiles cannot matter.
    """
    given = [list(tiles(h)) for h in hands] + [[] for _ in range(rules.num_players - len(hands))]
    bone = list(tiles(boneyard_first))
    used = {t for hand in given for t in hand} | set(bone)
    rest = [t for t in range(28) if t not in used]
    for hand in given:
        while len(hand) < rules.hand_size:
            hand.append(rest.pop(0))
    bone += rest
    return Deal(tuple(tuple(h) for h in given), tuple(bone), leader)


def fixed_state(rules: Rules, hands: list[str], boneyard: str, leader: int) -> State:
    """A match whose first round is the given deal."""
    return State(rules, deals={0: deal(hands, boneyard, leader)})


def play(state: State, actions: str) -> list[tuple[int, str, int]]:
    """Apply comma-separated action texts; return (seat, action, side's score change) for each."""
    events = []
    for text in [t for t in actions.split(",") if t.strip()]:
        seat = state.to_act
        side = state.rules.side_of[seat]
        before = state.scores[side]
        state.apply(state.parse_action(text))
        events.append((seat, text.strip(), state.scores[side] - before))
    return events


def snapshot(state: State) -> tuple:
    """Everything a State holds that the rules care about, as comparable values."""
    layout = state.layout
    return (
        state.rules,
        state.seed,
        tuple(state.scores),
        state.round_index,
        state.deal,
        tuple(state.hands),
        state.boneyard,
        state.bone_pos,
        tuple(layout.values),
        tuple(layout.counts),
        layout.spinner,
        layout.spinner_ends,
        layout.played,
        tuple(tuple(arm) for arm in layout.arms),
        layout.lead,
        state.to_act,
        state.drawn,
        tuple(state.lacks),
        tuple(state.moves),
        state.past,
        state.required_lead,
        state.finished,
        state.winners,
    )


def hand_text(state: State, seat: int) -> str:
    return " ".join(TILE_TEXT[t] for t in state.hand_tiles(seat))


#: A round has at most 28 placements, 14 draws and fewer than 4 passes between two placements;
#: a loop past this many actions in one round has found a core that never ends it.
MAX_ROUND_ACTIONS = 300


def play_random(state: State, rng: random.Random, limit: int | None = None) -> State:
    """Play uniformly random legal actions until the match ends (or ``limit`` actions)."""
    taken = in_round = 0
    while not state.finished and (limit is None or taken < limit):
        index = state.round_index
        state.apply(rng.choice(state.legal_actions()))
        taken += 1
        in_round = in_round + 1 if state.round_index == index else 0
        assert in_round < MAX_ROUND_ACTIONS, "the round does not end"
    return state


def play_random_round(state: State, rng: random.Random) -> None:
    """Play uniformly random legal actions to the end of the current round."""
    index, taken = state.round_index, 0
    while not state.finished and state.round_index == index:
        state.apply(rng.choice(state.legal_actions()))
        taken += 1
        assert taken < MAX_ROUND_ACTIONS, "the round does not end"
