"""``replay`` refuses every bad byte string cleanly and early (exit 2, one stderr line, nothing on stdout).

Regression tests for the records that once gave a traceback (a file that is
not UTF-8, JSON nested too deeply, a 5,000-digit integer) or took seconds to
refuse (rounds after the match ended, sizes no record within the format's
limits reaches).
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import subprocess
import sys

import pytest
from conftest import play_random

from allfives_env.__main__ import main
from allfives_env.core import State, make_rules
from allfives_env.core.record import (
    MAX_RECORD_BYTES,
    MAX_ROUND_ACTIONS,
    MAX_ROUNDS,
    MAX_TEXT,
    RecordError,
    load_record,
    replay,
    to_record,
)


def finished_record(seed: int = 3, **rules) -> dict:
    state = play_random(State(make_rules(**rules), seed=seed), random.Random(seed))
    return to_record(state, seed=seed)


def run_replay(tmp_path, data: bytes | str | dict, *flags: str) -> tuple[int, str, str]:
    """Run ``replay`` on ``data`` written to a file; (exit status, stdout, stderr)."""
    if isinstance(data, dict):
        data = json.dumps(data)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    path = tmp_path / "record.json"
    path.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["replay", str(path), *flags])
    return code, out.getvalue(), err.getvalue()


def assert_refused(result: tuple[int, str, str], *words: str) -> str:
    code, out, err = result
    assert code == 2, (code, out[:200], err[:500])
    assert out == ""
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, err[:500]
    assert len(err) < 400, f"a {len(err)}-character error line"
    for word in words:
        assert word in err, (word, err)
    return err


# -- 1: bytes and JSON that once gave a traceback ----------------------------------------------------


def test_a_file_that_is_not_utf8_is_refused(tmp_path):
    assert_refused(run_replay(tmp_path, b'{"x":"\xff"}'), "UTF-8")
    record = json.dumps(finished_record()).encode()
    assert_refused(run_replay(tmp_path, record[:50] + b"\xc3\x28" + record[50:]), "UTF-8", "byte 50")


def test_json_nested_too_deeply_is_refused(tmp_path):
    assert_refused(run_replay(tmp_path, "[" * 100_000), "nested")
    record = finished_record()
    record["note"] = json.loads("[" * 500 + "]" * 500)  # deep, but within what JSON is read to
    assert run_replay(tmp_path, record)[0] == 0
    deep = json.dumps(finished_record())[:-1] + ', "note": ' + "[" * 50_000 + "]" * 50_000 + "}"
    assert_refused(run_replay(tmp_path, deep), "nested")


@pytest.mark.parametrize("where", ["extra", "target", "leader", "num_players", "action", "hand"])
def test_an_integer_of_5000_digits_anywhere_is_refused(tmp_path, where):
    record = finished_record()
    huge = "9" * 5000
    placeholder = "HUGE-NUMBER"
    if where == "extra":
        record["note"] = [1, {"deep": placeholder}]
    elif where in ("target", "num_players"):
        record[where] = placeholder
    elif where == "leader":
        record["rounds"][0]["leader"] = placeholder
    elif where == "action":
        record["rounds"][0]["actions"][2] = placeholder
    else:
        record["rounds"][0]["hands"][0][0] = placeholder
    text = json.dumps(record).replace(f'"{placeholder}"', huge)
    assert_refused(run_replay(tmp_path, text))


@pytest.mark.parametrize(
    "text, words",
    [
        ('{"format": "\\ud800"}', ["format"]),
        ('{"format": "allfives-record/1", "rules": NaN, "rounds": []}', []),
        ('{"format": "allfives-record/1", "target": Infinity, "rounds": [{}]}', []),
        ("\ufeff[]", []),
        ("", ["JSON"]),
        ("nul\x00l", ["JSON"]),
    ],
)
def test_odd_json_is_refused_in_one_line(tmp_path, text, words):
    assert_refused(run_replay(tmp_path, text), *words)


def test_a_surrogate_in_an_action_text_is_refused_in_one_printable_line(tmp_path):
    record = finished_record()
    record["rounds"][0]["actions"][0] = "\ud800\n5-5"
    err = assert_refused(run_replay(tmp_path, json.dumps(record)), "round 0, action 0")
    err.encode("ascii")


def test_the_command_never_prints_a_traceback_in_a_real_process(tmp_path):
    for data in (b'{"x":"\xff"}', b"[" * 100_000, b'{"format": "allfives-record/1", "seed": ' + b"7" * 5000 + b"}"):
        path = tmp_path / "bad.json"
        path.write_bytes(data)
        done = subprocess.run(
            [sys.executable, "-m", "allfives_env", "replay", str(path)], capture_output=True, text=True, timeout=60
        )
        assert (done.returncode, done.stdout, done.stderr.count("\n")) == (2, "", 1), done.stderr[-500:]


# -- 2: refused early -------------------------------------------------------------------------------


def test_a_file_larger_than_any_record_is_refused_before_it_is_parsed(tmp_path):
    record = json.dumps(finished_record())
    padded = record[:-1] + " " * (MAX_RECORD_BYTES - len(record) + 1) + "}"
    assert len(padded) == MAX_RECORD_BYTES + 1
    assert_refused(run_replay(tmp_path, padded), "larger than", f"{MAX_RECORD_BYTES // 2**20} MiB")
    fits = record[:-1] + " " * (MAX_RECORD_BYTES - len(record)) + "}"
    assert run_replay(tmp_path, fits)[0] == 0


def test_rounds_after_the_match_ended_are_refused_before_their_deals_are_read():
    record = finished_record()
    ended = len(record["rounds"]) - 1
    record["rounds"] += [{"hands": [["9-9"], ["7-7"]], "boneyard": [], "leader": 0, "actions": ["nonsense"]}] * 5
    with pytest.raises(RecordError, match=f"round {ended + 1}: the match ended in round {ended}"):
        replay(record)


def test_a_malformed_later_deal_is_reported_after_the_earlier_rounds_faults():
    record = finished_record()
    assert len(record["rounds"]) >= 2
    record["rounds"][1]["hands"] = [["9-9"]]
    record["rounds"][0]["actions"][1] = "6-6 N"
    with pytest.raises(RecordError, match="round 0, action 1"):
        replay(record)
    record["rounds"][0]["actions"] = finished_record()["rounds"][0]["actions"]
    with pytest.raises(RecordError, match="round 1: deal: no tile 9-9"):
        replay(record)


def test_more_rounds_than_a_record_holds_are_refused_at_once():
    record = finished_record()
    record["rounds"] = record["rounds"] * (MAX_ROUNDS // len(record["rounds"]) + 1)
    with pytest.raises(RecordError, match=f"at most {MAX_ROUNDS:,} rounds"):
        load_record(json.dumps(record))


def test_a_round_with_more_actions_than_any_round_has_is_refused():
    record = finished_record()
    record["rounds"][0]["actions"] = ["draw"] * (MAX_ROUND_ACTIONS + 1)
    with pytest.raises(RecordError, match=f"round 0: .*at most {MAX_ROUND_ACTIONS} actions"):
        replay(record)


@pytest.mark.parametrize("where", ["format", "rules", "action", "tile", "opening"])
def test_long_texts_are_refused_with_a_short_message(tmp_path, where):
    record = finished_record()
    long = "5-5 " + "x" * 100_000
    if where in ("format", "rules", "opening"):
        record[where] = long
    elif where == "action":
        record["rounds"][0]["actions"][0] = long
    else:
        record["rounds"][0]["hands"][1][0] = long
    assert_refused(run_replay(tmp_path, record))


def test_texts_within_the_limit_still_replay():
    record = finished_record()
    first = record["rounds"][0]["actions"][0]
    record["rounds"][0]["actions"][0] = first.center(MAX_TEXT)
    assert replay(record).state.scores == replay(finished_record()).state.scores


def test_the_python_api_refuses_what_the_command_refuses():
    for bad in (b'{"x":"\xff"}', "[" * 100_000, '{"seed": ' + "1" * 5000 + "}"):
        with pytest.raises(RecordError):
            load_record(bad)
    with pytest.raises(RecordError, match="rules"):
        replay({"format": "allfives-record/1", "rules": ["pagat"], "rounds": [{}]})
