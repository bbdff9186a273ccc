"""Seeds derived from names: the one place every command line and the harness turn a seed into many.

A derived seed depends only on its parts, so a match, a bot or a worker can be
given its own stream without sharing a generator, and the same parts give the
same seed on every machine and Python version (``hash()`` would not).
"""

from __future__ import annotations

import hashlib


def derive_seed(*parts: object) -> int:
    """A 63-bit seed that depends only on ``parts`` (stable across runs, machines and Python versions)."""
    digest = hashlib.sha256("/".join(map(str, ("allfives-eval", *parts))).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
