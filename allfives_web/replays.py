"""Replaying a record for the page: every step of the match as a frame, and the records folder given to ``serve``.

A record is checked by the core's own ``replay`` first, so a bad record gets
the same one-line reason as ``python -m allfives_env replay``. The page never
names a file: the folder's records are listed under opaque keys, and a key is
looked up in that listing, so nothing outside the folder can be reached.
"""

from __future__ import annotations

import hashlib
import os
import time

from allfives_env.core import DRAW, PASS, TILE_TEXT, State
from allfives_env.core.record import MAX_RECORD_BYTES, RecordError, Replay, exact, load_record, replay, round_logs
from allfives_env.core.scoring import placement_points

from .payload import layout_json, round_result_json, rules_json, tiles_text

#: The most steps a replay is shown with (a long match has a few hundred); a longer record is refused.
MAX_FRAMES = 5000
MAX_LISTED = 5000
MAX_DEPTH = 4


class ReplayError(ValueError):
    """A record the page cannot show; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def checked_replay(data: bytes) -> tuple[dict, Replay]:
    """The record in ``data`` and its replay, read by the core exactly as ``replay`` reads a file.

    A bad record raises ReplayError with the line ``replay`` prints.
    """
    if len(data) > MAX_RECORD_BYTES:
        raise ReplayError(f"error: the record is larger than {MAX_RECORD_BYTES // 2**20} MiB", 413)
    try:
        record = load_record(data)
        return record, replay(record)
    except RecordError as err:
        raise ReplayError("error: " + " ".join(str(err).splitlines())) from None


def replay_frames(data: bytes, name: str) -> dict:
    """The match in ``data`` step by step: a frame at each round's start and after every action."""
    record, result = checked_replay(data)
    steps = len(result.events) + len(result.state.past) + 1
    if steps > MAX_FRAMES:
        raise ReplayError(f"error: the record has {steps} steps; the page shows records of up to {MAX_FRAMES}", 413)
    final = result.state
    rules = final.rules
    logs = round_logs(final)
    state = State(rules, deals={index: log.deal for index, log in enumerate(logs)})
    frames, finished_rounds = [], []
    for index, log in enumerate(logs):
        frames.append(_frame(state, None, None))
        for seat, action in log.moves:
            text = state.action_text(action)
            drew = state.boneyard[state.bone_pos] if action == DRAW else None
            points = end_total = None
            if action not in (DRAW, PASS):
                end_total = state.layout.end_total_after(action >> 2, action & 3)
                points = placement_points(end_total)
            rounds = len(state.past)
            state.apply(action)
            event = {
                "n": len(frames),
                "round": index + 1,
                "seat": seat,
                "text": text,
                "drew": TILE_TEXT[drew] if drew is not None else None,
                "points": points or 0,
                "end_total": end_total,
            }
            ended = None
            if len(state.past) > rounds:
                ended = round_result_json(rules, index, state.past[-1], state.scores)
                finished_rounds.append(ended)
            frames.append(_frame(state, event, ended))
    summary = result.summary()
    agents = record.get("agents")
    return {
        "name": name,
        "rules": rules_json(rules),
        "agents": [str(a) for a in agents] if isinstance(agents, list) else None,
        "frames": frames,
        "round_starts": [i for i, f in enumerate(frames) if f["event"] is None],
        "scores": summary["scores"],
        "finished": summary["finished"],
        "winner": summary["winner"],
    }


def _frame(state: State, event: dict | None, ended: dict | None) -> dict:
    if ended is not None:
        log = state.past[-1]
        layout, hands = ended["layout"], ended["hands"]
        round_number = ended["round"]
        leader = log.deal.leader
        boneyard = len(log.deal.boneyard) - sum(action == DRAW for _, action in log.moves)  # as the round left it
    else:
        layout = layout_json(state.layout)
        hands = [tiles_text(h) for h in state.hands]
        round_number = state.round_index + 1
        leader = state.deal.leader
        boneyard = state.boneyard_left
    return {
        "round": round_number,
        "leader": leader,
        "layout": layout,
        "hands": hands,
        "boneyard": boneyard,
        "scores": [exact(s) for s in state.scores],
        "to_act": None if state.finished or ended is not None else state.to_act,
        "event": event,
        "result": ended,
    }


class RecordFolder:
    """The records under one folder (the harness's ``records/``), each known to the page by an opaque key."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        if not os.path.isdir(self.root):
            raise ValueError(f"--records {root!r} is not a folder")
        self._listing: dict[str, str] = {}
        self._listed_at = -1e9

    def listing(self) -> dict[str, str]:
        """key -> path relative to the folder, for every ``*.json`` file found (refreshed every few seconds)."""
        if time.monotonic() - self._listed_at > 5:
            found: list[str] = []
            for top, dirs, files in os.walk(self.root):
                depth = os.path.relpath(top, self.root).count(os.sep)
                dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if depth < MAX_DEPTH else []
                for name in sorted(files):
                    if name.endswith(".json") and not name.startswith("."):
                        found.append(os.path.relpath(os.path.join(top, name), self.root))
                if len(found) >= MAX_LISTED:
                    break
            found = sorted(found)[:MAX_LISTED]
            self._listing = {hashlib.sha256(rel.encode()).hexdigest()[:20]: rel for rel in found}
            self._listed_at = time.monotonic()
        return self._listing

    def read(self, key: str) -> tuple[str, bytes]:
        """The name and bytes of the record under ``key``; ReplayError (404) for a key not listed."""
        rel = self.listing().get(key)
        if rel is None:
            raise ReplayError("no such record in the records folder", 404)
        path = os.path.realpath(os.path.join(self.root, rel))
        if os.path.commonpath([path, self.root]) != self.root or not os.path.isfile(path):
            raise ReplayError("no such record in the records folder", 404)
        with open(path, "rb") as f:
            return rel, f.read(MAX_RECORD_BYTES + 1)


def record_list(folder: RecordFolder | None) -> list[dict]:
    if folder is None:
        return []
    return [
        {"key": key, "name": rel.replace(os.sep, "/")}
        for key, rel in sorted(folder.listing().items(), key=lambda kv: kv[1])
    ]
