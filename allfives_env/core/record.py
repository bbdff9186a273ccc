"""Game records (``allfives-record/1``): write a match down, read it back, replay it.

A record holds each round's deal as dealt and the action texts in order;
replaying it through the state machine rebuilds every score. Anything that
breaks the rules raises :class:`RecordError` naming the round and the
action's index (both from 0).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .deal import Deal, DealError, deal_from_json
from .layout import Layout
from .rules import make_rules
from .scoring import placement_points
from .state import IllegalActionError, RoundLog, State
from .tiles import DRAW, OTHER_HALF, PASS, SLOT_NAMES, TILE_TEXT, action_to_text

FORMAT = "allfives-record/1"


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


def to_record(state: State, **extra) -> dict:
    """The match so far as a record; ``extra`` keys (seed, agent names...) are kept as given."""
    record = {"format": FORMAT, **state.rules.as_dict(), **extra}
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
        """The ``replay --json`` object of INTERFACE.md."""
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


def load_record(text: str) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise RecordError(f"malformed JSON: {err}") from None
    if not isinstance(data, dict):
        raise RecordError("a record must be a JSON object")
    return data


def replay(record: dict) -> Replay:
    """Replay a parsed record through the rules; raise RecordError on the first fault."""
    if record.get("format") != FORMAT:
        raise RecordError(f"format is {record.get('format')!r}; expected {FORMAT!r}")
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
    rounds = record.get("rounds")
    if not isinstance(rounds, list) or not rounds:
        raise RecordError("rounds must be a non-empty list of rounds")
    deals: dict[int, Deal] = {}
    for index, entry in enumerate(rounds):
        if not isinstance(entry, dict):
            raise RecordError("a round must be an object with hands, boneyard, leader and actions", index)
        if not isinstance(entry.get("actions", []), list):
            raise RecordError("actions must be a list of action texts", index)
        try:
            deals[index] = deal_from_json(entry)
        except DealError as err:
            raise RecordError(f"deal: {err}", index) from None
    try:
        state = State(rules, deals=deals)
    except DealError as err:
        raise RecordError(f"deal: {err}", 0) from None

    result = Replay(state)
    for index, entry in enumerate(rounds):
        actions = entry.get("actions", [])
        for position, text in enumerate(actions):
            if state.finished:
                raise RecordError("the match is already over", index, position)
            if state.round_index != index:
                raise RecordError(f"the round is already over ({state.past[-1].result.end})", index, position)
            _replay_action(result, state, index, position, text)
        if index + 1 < len(rounds):
            if state.finished:
                raise RecordError(f"the match ended in round {index}; the record goes on", index + 1)
            if state.round_index == index:
                raise RecordError(f"the round is not over after its {len(actions)} actions", index, len(actions))
        elif not state.finished and state.round_index == index:
            result.unfinished_round = True
    return result


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
