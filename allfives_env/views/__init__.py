"""Views of a state: observation vectors, the global state vector, text and images.

Each is a function of a core state (or of one seat's :class:`SeatView`) and
decides nothing about the rules. The image renderer (``views.image``, which
needs pillow) is imported on its own.
"""

# action_features() shares its module's name, so it is imported from the module, not from here.
from .action_features import ACTION_FEATURE_FIELDS, ACTION_FEATURE_SIZE, action_features_high, encode_seat_actions
from .observation import (
    FIELDS,
    OBSERVATION_SIZE,
    action_mask,
    encode_observation,
    encode_seat,
    observation_high,
    observation_size,
)
from .state_vector import STATE_FIELDS, STATE_SIZE, encode_state, state_high
from .text import render_text
