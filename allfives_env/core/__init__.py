"""The rules core: pure Python, no third-party imports.

Everything else in the project (views, environments, bots, trainer) asks
these modules what the rules say.
"""

from .deal import (
    MAX_SEED,
    Deal,
    DealError,
    SeededTiles,
    allowed_leaders,
    check_deal,
    deal_from_json,
    fresh_seed,
    seeded_deal,
    seeded_deals,
    seeded_tiles,
)
from .layout import Layout
from .rules import DEAL_TABLE, OPENINGS, RULE_SETS, Rules, make_rules
from .scoring import (
    RoundResult,
    block_award,
    domino_award,
    match_rewards,
    placement_points,
    round_to_five,
    zero_sum_gain,
)
from .state import IllegalActionError, RoundLog, SeatView, State
from .tiles import (
    DRAW,
    NUM_ACTIONS,
    NUM_TILES,
    PASS,
    PIPS,
    SLOT_NAMES,
    TILE_TEXT,
    TILES,
    E,
    N,
    S,
    W,
    action_from_text,
    action_to_text,
    mask_to_tiles,
    placement,
    tile_from_text,
    tile_id,
    tile_to_text,
)

__all__ = [name for name in dir() if not name.startswith("_")]
