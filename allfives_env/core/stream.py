"""A counter-based random stream: every number is a function of (seed, counter, position).

Deals must be a pure function of (match seed, round number), and the same
function for the core, the compiled engine and any later array backend (a
GPU engine cannot replay a Python generator's hidden state). So each deal
gets a 64-bit *key* hashed from its seed and round, and its numbers are the
SplitMix64 outputs of that key: output ``m`` is ``mix64(key + (m + 1) *
GOLDEN)``, needing only 64-bit additions, multiplications, shifts and xors.
Each output gives two 32-bit *values*, its high half first; a number below
``bound`` takes the next value ``v`` and is ``v * bound >> 32``, except that
``v`` is skipped when ``v * bound mod 2**32 < 2**32 mod bound`` (Lemire's
method), so every number is exactly uniform. docs/rules.md gives test vectors.
"""

from __future__ import annotations

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1
GOLDEN = 0x9E3779B97F4A7C15  # 2**64 / golden ratio, SplitMix64's increment
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
#: What the first word of a key says it is for, so that the keys of deals and of match seeds never meet.
DEAL_TAG = int.from_bytes(b"deal", "big")
MATCH_TAG = int.from_bytes(b"match", "big")


def mix64(z: int) -> int:
    """SplitMix64's output function: a bijection of 64-bit words that spreads every input bit."""
    z = (z ^ (z >> 30)) * MIX1 & MASK64
    z = (z ^ (z >> 27)) * MIX2 & MASK64
    return z ^ (z >> 31)


def absorb(*words: int) -> int:
    """A 64-bit key from 64-bit words: ``k = mix64((k ^ word) + GOLDEN)`` for each word, from ``k = 0``."""
    key = 0
    for word in words:
        key = mix64(((key ^ word) + GOLDEN) & MASK64)
    return key


def seed_words(seed: int) -> tuple[int, int]:
    """A seed of up to 128 bits as its (low, high) 64-bit words."""
    return seed & MASK64, seed >> 64 & MASK64


def deal_key(seed: int, round_index: int) -> int:
    """The key of the numbers that deal round ``round_index`` of the match with seed ``seed``."""
    low, high = seed_words(seed)
    return absorb(DEAL_TAG, low, high, round_index)


def next_match_seed(seed: int, episode: int) -> int:
    """The 63-bit match seed of episode ``episode`` (1, 2, ...) of an environment first reset with ``seed``."""
    low, high = seed_words(seed)
    return absorb(MATCH_TAG, low, high, episode) >> 1


def values(key: int, count: int, start: int = 0) -> list[int]:
    """The stream's 32-bit values ``start .. start + count - 1`` (``start`` even)."""
    out: list[int] = []
    counter = key + start // 2 * GOLDEN
    for _ in range((count + 1) // 2):
        counter += GOLDEN
        z = counter & MASK64
        z = (z ^ (z >> 30)) * MIX1 & MASK64
        z = (z ^ (z >> 27)) * MIX2 & MASK64
        z ^= z >> 31
        out += (z >> 32, z & MASK32)
    return out[:count]


class Stream:
    """The numbers of one key, drawn in order: ``below(bound)`` is uniform in ``0 .. bound - 1``."""

    __slots__ = ("key", "buffer", "position")

    #: Values made at once: a deal takes at most 29, unless a value is skipped (about once in 10**7 deals).
    CHUNK = 30

    def __init__(self, key: int) -> None:
        self.key = key
        self.buffer = values(key, self.CHUNK)
        self.position = 0

    def value(self) -> int:
        """The next 32-bit value."""
        if self.position == len(self.buffer):
            self.buffer += values(self.key, self.CHUNK, len(self.buffer))
        v = self.buffer[self.position]
        self.position += 1
        return v

    def below(self, bound: int) -> int:
        """A number in ``0 .. bound - 1`` (``bound`` from 1 to 2**32), exactly uniform."""
        product = self.value() * bound
        if product & MASK32 < bound:  # only then can the value be one to skip
            floor = (1 << 32) % bound
            while product & MASK32 < floor:
                product = self.value() * bound
        return product >> 32
