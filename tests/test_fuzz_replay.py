"""Mutation fuzzing of ``python -m allfives_env replay``: any byte string exits 0 with the core's replay, or 2 with one line.

Valid records from seeded matches are mutated many ways: bytes (flips,
insertions, deletions, truncation, invalid UTF-8), JSON structure (values
replaced by huge or odd values, keys dropped or added, rounds and actions
reordered, duplicated or cut), texts (tile and action texts rewritten,
unicode), and the serialisation (indentation, escapes, NaN). Each mutant runs
through the command in this process; on exit 2 stdout is empty and stderr is
one line, on exit 0 the ``--json`` output is the core's replay and its scores
match an independent replay through the core's ``State``.

The default budget keeps the file within a few seconds;
``ALLFIVES_FUZZ_EXAMPLES=2000 python -m pytest tests/test_fuzz_replay.py``
runs a longer search by hand.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import random

import pytest
from conftest import play_random
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allfives_env.__main__ import main
from allfives_env.core import State, make_rules
from allfives_env.core.deal import deal_from_json
from allfives_env.core.record import MAX_RECORD_BYTES, load_record, replay, to_record

EXAMPLES = int(os.environ.get("ALLFIVES_FUZZ_EXAMPLES", "120"))

SETTINGS = [
    ("pagat", 2, {}),
    ("pagat", 3, {"target": 80}),
    ("pagat", 4, {"target": 60}),
    ("fives", 2, {"opening": "descending", "target": 60}),
    ("fives", 3, {"target": 40}),
    ("fives", 4, {"partnerships": True, "target": 60}),
]


def _records() -> list[dict]:
    """Finished and unfinished matches over every setting."""
    records = []
    for index, (rules, n, options) in enumerate(SETTINGS):
        rng = random.Random(index)
        finished = play_random(State(make_rules(rules, n, **options), seed=index), rng)
        records.append(to_record(finished, seed=index, agents=["random"] * n))
        cut = play_random(State(make_rules(rules, n, **options), seed=index + 50), rng, limit=rng.randrange(1, 60))
        records.append(to_record(cut))
    return records


RECORDS = _records()

ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, 2, 3, 4, 5, -1, 10**30, 2**63, 10**4000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["5-5", "6-6 N", "draw", "pass", "3-2 e", " 4-1 W ", "9-9", "5-5 X", "\ud800", "٣-٤", "x" * 5000]),
    st.lists(st.integers(0, 6), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.just("HUGE"),
    st.just("DEEP"),
)


def _leaves(value, path=()):
    """Every path into a JSON value (objects by key, lists by index)."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(item, (*path, i))


def _parent(record, path):
    for key in path[:-1]:
        record = record[key]
    return record


@st.composite
def structural(draw, record: dict) -> dict:
    """A record with a few structural mutations."""
    record = copy.deepcopy(record)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _leaves(record) if p]
        path = draw(st.sampled_from(paths))
        parent = _parent(record, path)
        kind = draw(st.sampled_from(["replace", "delete", "duplicate", "swap", "add_key", "retext"]))
        if kind == "replace":
            parent[path[-1]] = draw(ODD_VALUES)
        elif kind == "delete":
            del parent[path[-1]]
        elif kind == "duplicate" and isinstance(parent, list):
            parent.insert(path[-1], copy.deepcopy(parent[path[-1]]))
        elif kind == "swap" and isinstance(parent, list) and len(parent) > 1:
            other = draw(st.integers(0, len(parent) - 1))
            parent[path[-1]], parent[other] = parent[other], parent[path[-1]]
        elif kind == "add_key" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["seed", "x", "rounds", "target", "actions", "leader"]))] = draw(ODD_VALUES)
        elif kind == "retext" and isinstance(parent[path[-1]], str):
            text = parent[path[-1]]
            parent[path[-1]] = draw(
                st.sampled_from(
                    [text.upper(), text[::-1], text + " N", (text.split() or [""])[0], f" {text} ", text * 2]
                )
            )
    return record


def _serialise(record, draw) -> bytes:
    text = json.dumps(
        record,
        indent=draw(st.sampled_from([None, 0, 1, 4])),
        ensure_ascii=draw(st.booleans()),
        allow_nan=True,
    )
    text = text.replace('"HUGE"', "9" * 5000).replace('"DEEP"', "[" * 3000 + "]" * 3000)
    return text.encode("utf-8", "surrogatepass")


@st.composite
def byte_mutation(draw, data: bytes) -> bytes:
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "repeat", "utf8"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "flip" and data:
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
        elif kind == "insert":
            data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
        elif kind == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 40)) :]
        elif kind == "truncate":
            data = data[:at]
        elif kind == "repeat":
            data = data[:at] + data[at : at + 60] * draw(st.integers(2, 5)) + data[at:]
        else:
            data = (
                data[:at] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf0\x28\x8c"])) + data[at:]
            )
    return data


@st.composite
def mutants(draw) -> bytes:
    record = draw(st.sampled_from(RECORDS))
    how = draw(st.sampled_from(["structural"] * 6 + ["bytes"] * 2 + ["both", "deep", "oversize", "none"]))
    if how == "deep":
        return draw(st.sampled_from([b"[" * 100_000, b'{"a":' * 50_000, b"[" * 2_000 + b"]" * 2_000]))
    if how == "oversize":
        data = json.dumps(record).encode()
        return data[:-1] + b" " * (MAX_RECORD_BYTES - len(data) + draw(st.integers(1, 3))) + b"}"
    if how in ("structural", "both"):
        record = draw(structural(record))
    data = _serialise(record, draw)
    if how in ("bytes", "both"):
        data = draw(byte_mutation(data))
    return data


def run_replay(path, data: bytes, *flags: str) -> tuple[int, str, str]:
    path.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["replay", str(path), *flags])
    return code, out.getvalue(), err.getvalue()


def independent_scores(record: dict) -> list:
    """The final scores by applying the record's actions to a core State, round by round."""
    rules = make_rules(
        record.get("rules", "pagat"),
        record.get("num_players", 2),
        record.get("partnerships"),
        record.get("target"),
        record.get("opening"),
    )
    rounds = record["rounds"]
    state = State(rules, deals={i: deal_from_json(entry) for i, entry in enumerate(rounds)})
    for entry in rounds:
        for text in entry.get("actions", []):
            state.apply(state.parse_action(text))
    return state.scores


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz") / "record.json"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)
@given(data=mutants(), as_json=st.booleans())
def test_replay_of_any_mutant_is_a_correct_replay_or_one_error_line(scratch, data, as_json):
    flags = ("--json",) if as_json else ()
    code, out, err = run_replay(scratch, data, *flags)
    assert code in (0, 2), (code, err[-500:])
    if code == 2:
        assert out == "", out[:300]
        assert err.startswith("error: ") and err.count("\n") == 1 and err.endswith("\n"), err[:300]
        assert len(err) < 400, err[:300]
        return
    assert err == ""
    record = load_record(data)  # the command accepted it, so the checked reader does too
    summary = replay(record).summary()
    if as_json:
        assert json.loads(out) == json.loads(json.dumps(summary))
    else:
        assert out.splitlines()[-1].startswith(("Finished.", "Unfinished."))
    assert summary["scores"] == [int(s) if float(s).is_integer() else s for s in independent_scores(record)]


@pytest.mark.parametrize("index", range(len(RECORDS)))
def test_every_unmutated_record_replays_through_the_command(scratch, index):
    code, out, err = run_replay(scratch, json.dumps(RECORDS[index]).encode(), "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["scores"] == independent_scores(RECORDS[index])
