"""Rule sets as plain data: one frozen value says everything that varies.

A new variant is a new table row or option here plus tests, not a branch in
every module (docs/rules.md sections 2 and 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

RULE_SETS = ("pagat", "fives")
#: The largest target. A match to it takes a few hundred rounds, so its record
#: stays within the record format's limits, and every encoder represents it.
MAX_TARGET = 10_000
OPENINGS = ("winners_choice", "descending")

# (tiles each, boneyard, default target) by rule set and player count.
DEAL_TABLE: dict[str, dict[int, tuple[int, int, int]]] = {
    "pagat": {2: (9, 10, 250), 3: (7, 7, 200), 4: (5, 8, 200)},
    "fives": {2: (7, 14, 150), 3: (9, 1, 150), 4: (7, 0, 150)},
}


@dataclass(frozen=True)
class Rules:
    """A validated rule configuration for one match."""

    rules: str = "pagat"
    num_players: int = 2
    partnerships: bool = False
    target: int = 250
    opening: str | None = None
    hand_size: int = field(init=False)
    boneyard_size: int = field(init=False)
    #: side_of[seat]: the scoring side of each seat.
    side_of: tuple[int, ...] = field(init=False)
    num_sides: int = field(init=False)

    def __post_init__(self) -> None:
        hand, bone, _ = DEAL_TABLE[self.rules][self.num_players]
        object.__setattr__(self, "hand_size", hand)
        object.__setattr__(self, "boneyard_size", bone)
        if self.partnerships:
            side_of = tuple(seat % 2 for seat in range(self.num_players))
        else:
            side_of = tuple(range(self.num_players))
        object.__setattr__(self, "side_of", side_of)
        object.__setattr__(self, "num_sides", max(side_of) + 1)

    def seats_of(self, side: int) -> tuple[int, ...]:
        return tuple(s for s in range(self.num_players) if self.side_of[s] == side)

    def as_dict(self) -> dict:
        return {
            "rules": self.rules,
            "num_players": self.num_players,
            "partnerships": self.partnerships,
            "target": self.target,
            "opening": self.opening,
        }


def shown(value: object) -> str:
    """``repr(value)`` cut short for messages: a huge integer (whose repr Python may refuse) by its size."""
    if isinstance(value, int) and value.bit_length() > 64:
        return f"<an integer of {value.bit_length()} bits>"
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:36]}...{text[-1]}"


def make_rules(
    rules: str = "pagat",
    num_players: int = 2,
    partnerships: bool | None = None,
    target: int | float | None = None,
    opening: str | None = None,
) -> Rules:
    """Check every option and fill in the rule set's defaults.

    Raises ``ValueError`` naming the argument and what is allowed.
    """
    if rules not in RULE_SETS:
        raise ValueError(f"rules={shown(rules)} is not a rule set; allowed: {', '.join(map(repr, RULE_SETS))}")
    if isinstance(num_players, bool) or num_players not in (2, 3, 4):
        raise ValueError(f"num_players={shown(num_players)} is not allowed; allowed: 2, 3 or 4")
    num_players = int(num_players)  # 3.0 or a numpy integer: a plain int, so seat ranges work
    if partnerships is None:
        partnerships = rules == "pagat" and num_players == 4
    if not isinstance(partnerships, bool):
        raise ValueError(f"partnerships={shown(partnerships)} is not allowed; allowed: True or False")
    if partnerships and num_players != 4:
        raise ValueError(f"partnerships=True needs num_players=4 (got {num_players})")
    if rules == "pagat" and num_players == 4 and not partnerships:
        raise ValueError("partnerships=False is not allowed: the pagat rule set requires partnerships at four players")
    if target is None:
        target = DEAL_TABLE[rules][num_players][2]
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < target <= MAX_TARGET:
        raise ValueError(
            f"target={shown(target)} is not allowed; allowed: a positive number of points up to {MAX_TARGET}"
        )
    if isinstance(target, float) and target.is_integer():
        target = int(target)
    if rules == "pagat":
        if opening is not None:
            raise ValueError(f"opening={shown(opening)} is not allowed with rules='pagat'; allowed: None (fives only)")
    else:
        if opening is None:
            opening = "winners_choice"
        if opening not in OPENINGS:
            raise ValueError(
                f"opening={shown(opening)} is not an opening mode; allowed: {', '.join(map(repr, OPENINGS))}"
            )
    return Rules(rules, num_players, partnerships, target, opening)
