"""What one table is, as one fixed-size record, and what the kernels know of the rules and options.

A table is a structured numpy record (:data:`TABLE`): the hands as tile
masks, the round's deal, the layout's ends, the scores, the round's public
moves and the match's seeds. The engine holds one array of them, so copying
tables (``keep``, ``branch``) is one gather, and the compiled kernels read
each table's fields by name. :data:`CONFIG` is a second, one-element record
with the rule set and the options, so that one compiled kernel serves every
table size and rule set.
"""

from __future__ import annotations

import numpy as np

from ..core.rules import Rules
from ..core.tiles import NUM_TILES
from ..views.observation import HISTORY_LENGTH, MAX_SEATS, OBSERVATION_SIZE, OFFSETS

TABLE = np.dtype(
    [
        ("hands", np.int32, MAX_SEATS),  # per seat, the tiles it holds (a 28-bit mask)
        ("played", np.int32),  # the tiles in the layout
        ("values", np.int8, 4),  # per slot W, E, N, S: the value to match, -1 while closed
        ("counts", np.int8, 4),  # per slot: what the end adds to the end total
        ("end_double", np.int8, 4),  # per slot: the end is a terminal double (it counts both halves)
        ("arm_started", np.int8, 4),  # per slot: a tile was placed on that arm
        ("spinner", np.int8),  # its value, -1 before the first double
        ("spinner_ends", np.int8),  # bit s: the end at slot s is the spinner itself
        ("lead", np.int8),  # the round's first tile, -1 before it
        ("required_lead", np.int8),  # the tile the lead must be, -1: any
        ("to_act", np.int8),
        ("drawn", np.int8),  # the tile the seat to act drew and must place, -1: none
        ("leader", np.int8),
        ("bone_pos", np.int8),  # boneyard tiles drawn so far
        ("lacks", np.int8, MAX_SEATS),  # per seat: bit v set when it is known to hold no tile of value v
        ("deal", np.int8, NUM_TILES),  # the round as dealt: the hands seat by seat, then the boneyard in draw order
        ("round_index", np.int32),
        ("move_count", np.int16),
        ("result_domino", np.int8),  # how the last round ended: the seat that went out, -1: none
        ("result_winner", np.int8),  # the side that won it alone, -1: none
        ("result_pips", np.int16, MAX_SEATS),  # each seat's pips when it ended
        ("scores", np.float64, MAX_SEATS),  # per side, exact (a three-player split gives halves)
        ("need", np.int8, MAX_SEATS),  # per side, the observation's to_target byte, kept with the score
        ("seed", np.uint64, 2),  # the match seed, low and high 64 bits
        ("first_seed", np.uint64, 2),  # the table's seed: its later matches' seeds follow from it
        ("episode", np.int64),  # episodes the table finished
        ("moves", np.int16, HISTORY_LENGTH),  # the round's moves, seat * 128 + action
    ],
    align=True,
)

CONFIG = np.dtype(
    [
        ("num_players", np.int64),
        ("num_sides", np.int64),
        ("hand_size", np.int64),
        ("bone_size", np.int64),
        ("fives", np.bool_),  # the fives rule set (else pagat)
        ("descending", np.bool_),  # the fives descending opening
        ("partnerships", np.bool_),
        ("side_of", np.int64, MAX_SEATS),
        # Seat arithmetic as lookups (a division by the player count costs more than the rest of a step):
        ("seat_from", np.int64, (MAX_SEATS, MAX_SEATS)),  # [me, rel]: the seat rel places after me
        ("rel_from", np.int64, (MAX_SEATS, MAX_SEATS)),  # [me, seat]: where seat sits from me
        ("side_from", np.int64, (MAX_SEATS, MAX_SEATS)),  # [me, rel]: the side rel places after my side
        ("target", np.float64),
        ("target_byte", np.int64),  # the observation's target field
        ("round_episode", np.bool_),  # an episode is one round (else a match)
        ("auto_forced", np.bool_),
        ("points_reward", np.bool_),  # zero-sum points per step (else win/loss at the end)
        ("history", np.bool_),
        ("features", np.bool_),
        ("keep_logs", np.bool_),  # write each finished round's deal and moves out (for records)
        ("threads", np.int64),  # the threads a parallel kernel spreads the tables over
        # Per observer seat: the observation's bytes that depend on the rules alone (target, partners, seats at
        # the table, rule set, "the observer is to act"), zeros elsewhere: each observation starts as a copy.
        ("template", np.int8, (MAX_SEATS, OBSERVATION_SIZE)),
    ],
    align=True,
)

#: A finished round as the records need it: written out by a step where ``CONFIG.keep_logs``.
ROUND_LOG = np.dtype(
    [
        ("ended", np.bool_),
        ("leader", np.int8),
        ("deal", np.int8, NUM_TILES),
        ("move_count", np.int16),
        ("moves", np.int16, HISTORY_LENGTH),
    ],
    align=True,
)


def make_config(
    rules: Rules,
    *,
    round_episode: bool = False,
    auto_forced: bool = False,
    points_reward: bool = False,
    history: bool = False,
    features: bool = False,
    keep_logs: bool = False,
    threads: int = 1,
) -> np.ndarray:
    """A one-element :data:`CONFIG` array for ``rules`` and the options."""
    config = np.zeros(1, CONFIG)
    c = config[0]
    c["num_players"] = rules.num_players
    c["num_sides"] = rules.num_sides
    c["hand_size"] = rules.hand_size
    c["bone_size"] = rules.boneyard_size
    c["fives"] = rules.rules == "fives"
    c["descending"] = rules.opening == "descending"
    c["partnerships"] = rules.partnerships
    n, sides = rules.num_players, rules.num_sides
    c["side_of"][:n] = rules.side_of
    for me in range(n):
        for rel in range(MAX_SEATS):
            c["seat_from"][me, rel] = (me + rel) % n
            c["rel_from"][me, rel] = (rel - me) % n
            c["side_from"][me, rel] = (rules.side_of[me] + rel) % sides
    c["target"] = rules.target
    c["target_byte"] = min(127, int(rules.target // 5))
    c["round_episode"] = round_episode
    c["auto_forced"] = auto_forced
    c["points_reward"] = points_reward
    c["history"] = history
    c["features"] = features
    c["keep_logs"] = keep_logs
    c["threads"] = threads
    for me in range(n):
        row = c["template"][me]
        row[OFFSETS["target"]] = min(127, int(rules.target // 5))
        row[OFFSETS["to_act"]] = 1
        for rel in range(n):
            row[OFFSETS["partner"] + rel] = rules.side_of[(me + rel) % n] == rules.side_of[me]
            row[OFFSETS["seat_present"] + rel] = 1
        row[OFFSETS["rules_fives"]] = rules.rules == "fives"
    return config
