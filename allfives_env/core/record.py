"""Game records (``allfives-record/1``): write a match down, read it back, replay it.

A record holds each round's deal as dealt and the action texts in order;
replaying it through the state machine rebuilds every score. Anything that
breaks the rules raises :class:`RecordError` naming the round and the
action's index (both from 0).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from .deal import Deal, DealError, deal_from_json
from .layout import Layout
from .rules import make_rules, shown
from .scoring import placement_points
from .state import IllegalActionError, RoundLog, State
from .tiles import DRAW, OTHER_HALF, PASS, SLOT_NAMES, TILE_TEXT, action_to_text

FORMAT = "allfives-record/1"
#: The keys a record writes itself; extra keys (seed, agent names...) must be other names.
RECORD_KEYS = ("format", "rules", "num_players", "partnerships", "target", "opening", "rounds")

# The format's limits. A legal record stays far inside them (a match to the
# largest target takes a few hundred rounds, about 0.3 MB written with
# indentation), so anything beyond them is refused before it is replayed.
MAX_RECORD_BYTES = 4 * 2**20
MAX_ROUNDS = 1_000
#: The longest round: 28 placements, 14 draws (the largest boneyard), and at most
#: three passes before each placement and after the last one (four would block it).
MAX_ROUND_ACTIONS = 28 + 14 + 3 * 29
MAX_TEXT = 32  # characters in a tile or action text, spaces included
MAX_HANDS = 4


class RecordError(ValueError):
    """A record that cannot be replayed; says where and why."""

    def __init__(self, reason: str, round_index: int | None = None, action_index: int | str | None = None):
        self.reason = reason
        self.round_index = round_index
        self.action_index = action_index
        where = []
        if round_index is not None:
            where.append(f"round {round_index}")
        if action_index is not None:
            where.append(f"action {action_index}" if isinstance(action_index, int) else str(action_index))
        super().__init__(f"{', '.join(where)}: {reason}" if where else reason)


# -- writing -------------------------------------------------------------------


def move_texts(moves) -> list[str]:
    """The action texts of one round's moves, each written in its position."""
    layout = Layout()
    texts = []
    for _seat, action in moves:
        if action in (DRAW, PASS):
            texts.append(action_to_text(action))
            continue
        tile, slot = action >> 2, action & 3
        if layout.empty:
            texts.append(TILE_TEXT[tile])
        else:
            v = layout.values[slot]
            texts.append(f"{v}-{OTHER_HALF[tile][v]} {SLOT_NAMES[slot]}")
        layout.place(tile, slot)
    return texts


def round_logs(state: State) -> list[RoundLog]:
    """Every round of the match so far, the running one last (without a result)."""
    logs = list(state.past)
    if not state.finished:
        logs.append(RoundLog(state.deal, state.round_moves(), None))
    return logs


def with_own_keys(own: dict, extra: dict) -> dict:
    """``own`` keys (the seed an environment writes...) and the caller's ``extra`` keys, which may not replace them."""
    clash = sorted(set(extra) & (set(own) | set(RECORD_KEYS)))
    if clash:
        raise ValueError(
            f"record keys {', '.join(map(repr, clash))} are written by the record itself; "
            f"allowed: extra keys with other names (not {', '.join(map(repr, [*RECORD_KEYS, *own]))})"
        )
    return {**own, **extra}


def to_record(state: State, **extra) -> dict:
    """The match so far as a record; ``extra`` keys (seed, agent names...) are kept as given.

    Raises ValueError for an extra key the record writes itself (format, rules, rounds...).
    """
    record = {"format": FORMAT, **state.rules.as_dict(), **with_own_keys({}, extra)}
    record["rounds"] = [{**log.deal.to_json(), "actions": move_texts(log.moves)} for log in round_logs(state)]
    return record


def write_record(state: State, path, **extra) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(to_record(state, **extra), f, indent=1)
        f.write("\n")


# -- reading and replaying -----------------------------------------------------------


@dataclass
class Replay:
    """What replaying a record produced: the final state and its story."""

    state: State
    events: list[dict] = field(default_factory=list)
    round_scores: list[list] = field(default_factory=list)  # cumulative, after each finished round
    unfinished_round: bool = False

    def summary(self) -> dict:
        """The ``replay --json`` object of docs/records.md."""
        state = self.state
        rounds = []
        for log, scores in zip(state.past, self.round_scores, strict=True):
            result = log.result
            entry = {"end": result.end, "winner": result.winner, "award": exact(result.award)}
            if result.split:
                entry["split"] = list(result.split)
            entry["scores"] = [exact(s) for s in scores]
            rounds.append(entry)
        if self.unfinished_round:
            rounds.append({"end": "unfinished", "winner": None, "award": 0, "scores": [exact(s) for s in state.scores]})
        if not state.finished:
            winner = None
        elif len(state.winners) == 1:
            winner = state.winners[0]
        else:
            winner = sorted(state.winners)
        return {
            "scores": [exact(s) for s in state.scores],
            "finished": state.finished,
            "winner": winner,
            "rounds": rounds,
            "events": self.events,
        }


def exact(x):
    """An integer when whole, else the float (17.5)."""
    return int(x) if float(x).is_integer() else x


def read_record(path: str | os.PathLike) -> dict:
    """Read and check the record in a file (see :func:`load_record`); RecordError if it cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_RECORD_BYTES + 1)  # a larger file is refused without reading the rest
    except OSError as err:
        raise RecordError(f"cannot read {os.fsdecode(path)}: {err.strerror or err}") from None
    return load_record(data)


def load_record(data: bytes | str) -> dict:
    """Parse a record (UTF-8 bytes or text) and check its structure, so that any input either
    comes back as a record within the format's limits or raises RecordError saying why."""
    if len(data) > MAX_RECORD_BYTES:
        raise RecordError(
            f"the record is larger than {MAX_RECORD_BYTES // 2**20} MiB; no record within the format's limits "
            f"({MAX_ROUNDS:,} rounds) is"
        )
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise RecordError(f"the file is not UTF-8 text (byte {err.start}: {err.reason})") from None
    try:
        record = json.loads(data)
    except json.JSONDecodeError as err:
        raise RecordError(f"malformed JSON: {err}") from None
    except RecursionError:
        raise RecordError("the JSON is nested too deeply; a record nests lists and objects a few levels") from None
    except ValueError as err:  # an integer with more digits than Python reads
        raise RecordError(f"the JSON holds a number too long to read: {str(err).split(';')[0]}") from None
    check_record(record)
    return record


def check_record(record: object) -> None:
    """Raise RecordError unless ``record`` has a record's shape within the format's limits.

    Types, counts and text lengths only; what the rules allow is checked by the
    replay. Nothing here depends on a value's size, so anything is refused quickly
    and named shortly.
    """
    if not isinstance(record, dict):
        raise RecordError("a record must be a JSON object")
    if record.get("format") != FORMAT:
        raise RecordError(f"format is {shown(record.get('format'))}; expected {FORMAT!r}")
    rounds = record.get("rounds")
    if not isinstance(rounds, list) or not rounds:
        raise RecordError("rounds must be a non-empty list of rounds")
    if len(rounds) > MAX_ROUNDS:
        raise RecordError(f"the record has {len(rounds):,} rounds; a record holds at most {MAX_ROUNDS:,} rounds")
    for index, entry in enumerate(rounds):
        if not isinstance(entry, dict):
            raise RecordError("a round must be an object with hands, boneyard, leader and actions", index)
        hands, boneyard = entry.get("hands", []), entry.get("boneyard", [])
        if not isinstance(hands, list) or len(hands) > MAX_HANDS or not all(isinstance(h, list) for h in hands):
            raise RecordError(f"deal: hands must be a list of at most {MAX_HANDS} lists of tile texts", index)
        if not isinstance(boneyard, list):
            raise RecordError("deal: boneyard must be a list of tile texts such as '3-6'", index)
        for tiles in (*hands, boneyard):
            if len(tiles) > 28 or not all(isinstance(t, str) and len(t) <= MAX_TEXT for t in tiles):
                raise RecordError(
                    f"deal: a hand or boneyard must be at most 28 tile texts such as '3-6' "
                    f"(strings of at most {MAX_TEXT} characters)",
                    index,
                )
        leader = entry.get("leader", 0)
        if isinstance(leader, bool) or not isinstance(leader, int) or not 0 <= leader < MAX_HANDS:
            raise RecordError(f"deal: leader {shown(leader)} is not a seat; allowed: 0..{MAX_HANDS - 1}", index)
        actions = entry.get("actions", [])
        if not isinstance(actions, list):
            raise RecordError("actions must be a list of action texts", index)
        if len(actions) > MAX_ROUND_ACTIONS:
            raise RecordError(f"{len(actions)} actions; a round has at most {MAX_ROUND_ACTIONS} actions", index)
        for position, text in enumerate(actions):
            if not isinstance(text, str) or len(text) > MAX_TEXT:
                raise RecordError(
                    f"{shown(text)} is not an action text (a string of at most {MAX_TEXT} characters)",
                    index,
                    position,
                )


def replay(record: dict) -> Replay:
    """Replay a record through the rules; raise RecordError on the first fault.

    The record's shape is checked first (:func:`check_record`); each round's deal
    is read only when the round before it is replayed, so the rounds of a record
    that goes on after its match ended are refused without being read.
    """
    check_record(record)
    try:
        rules = make_rules(
            record.get("rules", "pagat"),
            record.get("num_players", 2),
            record.get("partnerships"),
            record.get("target"),
            record.get("opening"),
        )
    except (ValueError, TypeError) as err:
        raise RecordError(str(err)) from None
    rounds = record["rounds"]
    try:
        state = State(rules, deals={0: _deal(rounds, 0)})
    except DealError as err:
        raise RecordError(f"deal: {err}", 0) from None

    result = Replay(state)
    for index, entry in enumerate(rounds):
        actions = entry.get("actions", [])
        later = index + 1 < len(rounds)
        unread = None  # a fault in the next round's deal, reported once this round is over
        if later:
            try:
                state.fix_deal(index + 1, _deal(rounds, index + 1))
            except RecordError as err:
                unread = err
        for position, text in enumerate(actions):
            if state.finished:
                raise RecordError("the match is already over", index, position)
            if state.round_index != index:
                raise RecordError(f"the round is already over ({state.past[-1].result.end})", index, position)
            _replay_action(result, state, index, position, text)
        if later:
            if state.finished:
                raise RecordError(f"the match ended in round {index}; the record goes on", index + 1)
            if state.round_index == index:
                raise RecordError(f"the round is not over after its {len(actions)} actions", index, len(actions))
            if unread is not None:
                raise unread
        elif not state.finished and state.round_index == index:
            result.unfinished_round = True
    return result


def _deal(rounds: list, index: int) -> Deal:
    try:
        return deal_from_json(rounds[index])
    except DealError as err:
        raise RecordError(f"deal: {err}", index) from None


def _replay_action(result: Replay, state: State, index: int, position: int, text) -> None:
    if not isinstance(text, str):
        raise RecordError(f"action {text!r} is not an action text", index, position)
    try:
        action = state.parse_action(text)
    except ValueError as err:
        raise RecordError(str(err), index, position) from None
    seat = state.to_act
    event = {"round": index, "seat": seat, "action": None}
    if action not in (DRAW, PASS) and action in state.legal_actions():
        event["action"] = state.action_text(action)
        after = state.layout.copy()
        after.place(action >> 2, action & 3)
        event["end_total"] = after.end_total
        event["points"] = placement_points(after.end_total)
    else:
        event["action"] = action_to_text(action) if action in (DRAW, PASS) else str(text).strip()
    rounds_before = len(state.past)
    try:
        state.apply(action)
    except IllegalActionError as err:
        raise RecordError(str(err), index, position) from None
    except DealError as err:
        raise RecordError(f"deal: {err}", index + 1) from None
    result.events.append(event)
    if len(state.past) > rounds_before:
        result.round_scores.append(list(state.scores))
