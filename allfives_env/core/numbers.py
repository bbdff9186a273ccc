"""Whole numbers typed by people: the one reader every command line, bot spec and page uses.

``str.isdigit`` says yes to far more than ``int`` reads (superscripts such as
``²``), and ``int`` reads far more than a person means (``+5``, `` 5``,
``1_000``, other scripts' digits) and refuses texts of more than 4,300 digits
with an error of its own. A caller that checks with one and converts with the
other can crash on input it meant to refuse. This reader takes plain ASCII
digits of bounded length and nothing else, and says no with ``None``, so each
caller can name what it allows in its own words.
"""

from __future__ import annotations

#: The most digits a whole number may have: more than any count or seed here (2**128 has 39 digits).
MAX_DIGITS = 40


def whole_number(text: object, max_digits: int = MAX_DIGITS) -> int | None:
    """The value of ``text`` if it is 1 to ``max_digits`` ASCII digits 0-9, else None."""
    if isinstance(text, str) and 0 < len(text) <= max_digits and text.isascii() and text.isdigit():
        return int(text)
    return None
