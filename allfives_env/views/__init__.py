"""Views of a state: observation vectors, the global state vector, text and images.

Each is a function of a core state (or of one seat's :class:`SeatView`) and
decides nothing about the rules.
"""

from .observation import FIELDS, OBSERVATION_SIZE, encode_observation, observation_size
