"""Observations and global state vectors of every table at once, in the views' exact layouts.

The observation is that of the seat to act, field for field the vector of
:func:`allfives_env.views.observation.encode_seat` (same :data:`OFFSETS`,
same clipping), and the state vector that of
:func:`allfives_env.views.state_vector.encode_state`. Each field is one
array assignment for the whole batch; the seat-relative orders (seats and
sides from the observer's point of view) are small per-seat tables.
"""

from __future__ import annotations

import numpy as np

from ..core.rules import Rules
from ..core.tiles import NUM_ACTIONS, NUM_TILES, NUM_VALUES
from ..views.observation import HISTORY_LENGTH, HISTORY_WIDTH, MAX_SEATS, OBSERVATION_SIZE, OFFSETS
from ..views.state_vector import STATE_OFFSETS, STATE_SIZE
from .arrays import Tables
from .blocks import put_block
from .tables import BITS7, DRAWN, HISTORY_PAD, HISTORY_ROWS, OPEN_VALUES, SEAT_ONE_HOT, SPINNER, TILE_ONE_HOT


class Encoder:
    """Per-rules constants for encoding, and the encoders themselves."""

    def __init__(self, rules: Rules) -> None:
        n, sides = rules.num_players, rules.num_sides
        self.rules = rules
        self.n = n
        self.sides = sides
        #: SEATS[me]: the absolute seats in the observer's relative order.
        self.seat_order = np.array([[(me + rel) % n for rel in range(n)] for me in range(n)], dtype=np.intp)
        self.side_order = np.array(
            [[(rules.side_of[me] + rel) % sides for rel in range(sides)] for me in range(n)], dtype=np.intp
        )
        template = np.zeros((n, OBSERVATION_SIZE), dtype=np.int8)  # per observer: what does not change
        for me in range(n):
            row = template[me]
            row[OFFSETS["target"]] = min(127, int(rules.target // 5))
            row[OFFSETS["to_act"]] = 1  # the observer is the seat to act
            for rel in range(n):
                row[OFFSETS["partner"] + rel] = rules.side_of[(me + rel) % n] == rules.side_of[me]
                row[OFFSETS["seat_present"] + rel] = 1
            row[OFFSETS["rules_fives"]] = rules.rules == "fives"
        self.template = template
        self.templates = np.concatenate(
            [template, np.zeros((n, HISTORY_LENGTH * HISTORY_WIDTH), dtype=np.int8)], axis=1
        )
        self.target_byte = min(127, int(rules.target // 5))
        self.rel = np.array([[(seat - me) % n for seat in range(n)] for me in range(n)], dtype=np.intp)
        self.rel_flat = self.rel.ravel()  # [me * n + seat]

    def layout(self, t: Tables, out: np.ndarray, at: int) -> None:
        """end_open .. end_total (51 bytes) into ``out[:, at:]``."""
        o = at
        put_block(out, o, OPEN_VALUES.take(t.keys, axis=0))
        put_block(out, o + 32, t.counts)
        put_block(out, o + 36, t.end_double)
        out[:, o + 40 : o + 42].view(np.uint16)[:, 0] = t.arm_started.view(np.uint16)[:, 1]  # slots 2 and 3
        put_block(out, o + 42, SPINNER.take(t.spinner + 1, axis=0))
        out[:, o + 50] = t.end_totals()

    def observation(self, t: Tables, history: bool) -> np.ndarray:
        """(num_envs, 192 [+ history]) int8: each table's observation for its seat to act."""
        b, n, sides = t.num_envs, self.n, self.sides
        me = t.to_act
        out = (self.templates if history else self.template).take(me, axis=0)  # constants and zero pads
        put_block(out, 0, t.hand_rows.take(t.seat_base + me, axis=0))
        put_block(out, NUM_TILES, t.played)
        seats = self.seat_order.take(me, axis=0)
        seats += t.seat_base[:, None]  # flat (table, seat) indices in the observer's order
        put_block(out, OFFSETS["hand_counts"], t.hand_count_f.take(seats))
        out[:, OFFSETS["boneyard"]] = t.bone_size - t.bone_pos
        self.layout(t, out, OFFSETS["end_open"])
        put_block(out, OFFSETS["lacks"], BITS7.take(t.lacks_f.take(seats), axis=0).reshape(b, NUM_VALUES * n))
        sides_at = self.side_order.take(me, axis=0)
        sides_at += (t.rows * sides)[:, None]
        put_block(out, OFFSETS["to_target"], t.need.reshape(-1).take(sides_at))
        out[:, OFFSETS["round"]] = np.minimum(t.round_index, 127)
        put_block(out, OFFSETS["must_place_drawn"], DRAWN.take(t.drawn + 1, axis=0))
        put_block(out, OFFSETS["leader"], SEAT_ONE_HOT.take(self.rel_flat.take(me * n + t.leader), axis=0))
        if history:
            out[:, OBSERVATION_SIZE:] = self.history(t).reshape(b, HISTORY_LENGTH * HISTORY_WIDTH)
        return out

    def history(self, t: Tables) -> np.ndarray:
        """(num_envs, 128, 12): the round's public moves from the seat to act's side, oldest first."""
        rel = self.rel[t.to_act[:, None], t.move_seat]
        index = rel * NUM_ACTIONS + t.move_action
        index[np.arange(HISTORY_LENGTH) >= t.move_count[:, None]] = HISTORY_PAD
        return HISTORY_ROWS[index]

    def state(self, t: Tables) -> np.ndarray:
        """(num_envs, 302) int8: every table's global state vector (absolute seats and sides)."""
        b, n, sides = t.num_envs, self.n, self.sides
        rules = self.rules
        out = np.zeros((b, STATE_SIZE), dtype=np.int8)
        out[:, : n * NUM_TILES] = t.hands.reshape(b, n * NUM_TILES)
        if t.bone_size:
            left = np.arange(t.bone_size) >= t.bone_pos[:, None]
            o = STATE_OFFSETS["boneyard_tiles"]
            rows = np.repeat(t.rows, t.bone_size)[left.ravel()]
            out[rows, o + t.boneyard[left]] = 1
        o = STATE_OFFSETS["played"]
        out[:, o : o + NUM_TILES] = t.played
        o = STATE_OFFSETS["hand_counts"]
        out[:, o : o + n] = t.hand_count
        out[:, STATE_OFFSETS["boneyard"]] = t.bone_size - t.bone_pos
        self.layout(t, out, STATE_OFFSETS["end_open"])
        o = STATE_OFFSETS["lacks"]
        out[:, o : o + NUM_VALUES * n] = BITS7[t.lacks].reshape(b, NUM_VALUES * n)
        o = STATE_OFFSETS["to_target"]
        out[:, o : o + sides] = t.need
        out[:, STATE_OFFSETS["target"]] = self.target_byte
        out[:, STATE_OFFSETS["round"]] = np.minimum(t.round_index, 127)
        out[:, STATE_OFFSETS["must_place_drawn"]] = t.drawn >= 0
        o = STATE_OFFSETS["drawn_tile"]
        out[:, o : o + NUM_TILES] = TILE_ONE_HOT[t.drawn + 1]
        o = STATE_OFFSETS["to_act"]
        out[:, o : o + MAX_SEATS] = SEAT_ONE_HOT[t.to_act]
        o = STATE_OFFSETS["leader"]
        out[:, o : o + MAX_SEATS] = SEAT_ONE_HOT[t.leader]
        out[:, STATE_OFFSETS["partnerships"]] = rules.partnerships
        o = STATE_OFFSETS["seat_present"]
        out[:, o : o + n] = 1
        out[:, STATE_OFFSETS["rules_fives"]] = rules.rules == "fives"
        return out  # "finished" stays 0: a finished table has already restarted
