"""Game records: writing, reading, replaying, and the ``replay`` command line (docs/records.md)."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys

import pytest
from conftest import play_random
from test_rules_play import SCENARIOS

from allfives_env.__main__ import main
from allfives_env.core import DRAW, State, make_rules
from allfives_env.core.record import FORMAT, RecordError, load_record, replay, to_record, write_record


def random_match(rules_args: tuple, seed: int, limit: int | None = None, **options) -> State:
    return play_random(State(make_rules(*rules_args, **options), seed=seed), random.Random(seed), limit)


def scenario_record(name: str, **extra) -> dict:
    """A one-round record of a scenario, actions as written there."""
    scenario = SCENARIOS[name]
    rules, n, *rest = scenario.rules
    record = {"format": FORMAT, "rules": rules, "num_players": n, **extra}
    if rest:
        record["partnerships"] = rest[0]
    record["rounds"] = [
        {
            "hands": [h.split() for h in scenario.hands],
            "boneyard": scenario.boneyard.split(),
            "leader": scenario.leader,
            "actions": [a.strip() for a in scenario.actions.split(",")],
        }
    ]
    return record


def run_cli(tmp_path, record, *flags: str, capsys) -> tuple[int, str, str]:
    path = tmp_path / "match.json"
    path.write_text(record if isinstance(record, str) else json.dumps(record), encoding="utf-8")
    code = main(["replay", str(path), *flags])
    out, err = capsys.readouterr()
    return code, out, err


# -- writing and replaying ---------------------------------------------------------------------


def test_record_layout_and_extra_keys():
    state = random_match(("fives", 3), seed=4)
    record = to_record(state, seed=4, agents=["random"] * 3)
    assert record["format"] == "allfives-record/1"
    assert (record["rules"], record["num_players"], record["partnerships"]) == ("fives", 3, False)
    assert (record["target"], record["opening"]) == (150, "winners_choice")
    assert record["seed"] == 4 and record["agents"] == ["random"] * 3
    assert len(record["rounds"]) == len(state.past)
    for entry, log in zip(record["rounds"], state.past, strict=True):
        assert entry["leader"] == log.deal.leader
        assert len(entry["hands"]) == 3 and all(len(h) == 9 for h in entry["hands"])
        assert len(entry["boneyard"]) == 1
        assert len(entry["actions"]) == len(log.moves)


@pytest.mark.parametrize(
    "rules_args, options",
    [
        (("pagat", 2), {}),
        (("pagat", 3), {}),
        (("pagat", 4), {}),
        (("fives", 2), {"opening": "descending"}),
        (("fives", 4), {"partnerships": True}),
        (("fives", 4), {"target": 60}),
    ],
)
def test_written_record_replays_to_the_same_match(tmp_path, rules_args, options):
    state = random_match(rules_args, seed=21, **options)
    path = tmp_path / "m.json"
    write_record(state, path, seed=21)
    result = replay(load_record(path.read_text(encoding="utf-8")))
    assert result.state.scores == state.scores
    assert result.state.winners == state.winners and result.state.finished
    assert [log.deal for log in result.state.past] == [log.deal for log in state.past]
    assert [log.result for log in result.state.past] == [log.result for log in state.past]
    summary = result.summary()
    assert summary["finished"] is True
    assert summary["winner"] == (state.winners[0] if len(state.winners) == 1 else sorted(state.winners))
    assert len(summary["events"]) == sum(len(log.moves) for log in state.past)
    assert summary["rounds"][-1]["scores"] == summary["scores"]


def test_summary_of_a_three_player_split():
    summary = replay(scenario_record("pagat3_split")).summary()
    (entry,) = summary["rounds"]
    assert entry == {"end": "block", "winner": None, "award": 15, "split": [0, 2], "scores": [7.5, 5, 37.5]}
    assert summary["scores"] == [7.5, 5, 37.5]
    assert isinstance(summary["scores"][1], int) and isinstance(summary["scores"][0], float)
    assert summary["finished"] is False and summary["winner"] is None


def test_summary_events():
    summary = replay(scenario_record("pagat3_split")).summary()
    events = summary["events"]
    actions = [a.strip() for a in SCENARIOS["pagat3_split"].actions.split(",")]
    assert [e["action"] for e in events] == actions
    assert events[0] == {"round": 0, "seat": 0, "action": "0-4", "end_total": 4, "points": 0}
    assert events[2]["action"] == "3-6 W" and events[2]["end_total"] == 10 and events[2]["points"] == 10
    for event in events:
        if event["action"] in ("draw", "pass"):
            assert "points" not in event
        else:
            assert event["points"] == (event["end_total"] if event["end_total"] % 5 == 0 else 0)
    assert [e["seat"] for e in events[:4]] == [0, 1, 2, 0]


def test_summary_of_a_target_round():
    record = scenario_record("pagat2_domino_last_tile_scores", target=25)
    summary = replay(record).summary()
    assert summary["rounds"] == [{"end": "target", "winner": 0, "award": 0, "scores": [25, 15]}]
    assert summary["finished"] is True and summary["winner"] == 0


def test_award_reaching_the_target_keeps_domino():
    summary = replay(scenario_record("pagat2_domino_last_tile_scores", target=45)).summary()
    assert summary["rounds"][0]["end"] == "domino" and summary["rounds"][0]["award"] == 20
    assert summary["finished"] is True and summary["winner"] == 0


def test_defaults_apply_when_options_are_omitted():
    record = scenario_record("fives4_partners_domino")
    assert "target" not in record and "opening" not in record
    state = replay(record).state
    assert state.rules.target == 150 and state.rules.opening == "winners_choice" and state.rules.partnerships


def test_bare_placements_and_reversed_tiles_replay():
    record = scenario_record("pagat2_domino_13")
    expected = replay(copy.deepcopy(record)).summary()
    state = State(make_rules("pagat", 2), deals={0: replay(copy.deepcopy(record)).state.past[0].deal})
    bare = []
    rewritten = 0
    for text in record["rounds"][0]["actions"]:
        action = state.parse_action(text)
        if action < DRAW and state.layout.lead >= 0 and len(state.layout.fits(action >> 2)) == 1:
            tile = text.split()[0]
            a, b = tile.split("-")
            bare.append(f"{b}-{a}")  # bare and reversed
            rewritten += 1
        else:
            bare.append(text)
        state.apply(action)
    assert rewritten >= 5
    record["rounds"][0]["actions"] = bare
    record["rounds"][0]["hands"] = [[f"{t[2]}-{t[0]}" for t in hand] for hand in record["rounds"][0]["hands"]]
    record["rounds"][0]["boneyard"] = [f"{t[2]}-{t[0]}" for t in record["rounds"][0]["boneyard"]]
    got = replay(record).summary()
    assert got["scores"] == expected["scores"] and got["rounds"] == expected["rounds"]
    assert [e["action"] for e in got["events"]] == [e["action"] for e in expected["events"]]


def test_unfinished_record():
    state = random_match(("pagat", 3), seed=5, limit=None)
    full = to_record(state)
    total = len(full["rounds"][1]["actions"])
    cut = copy.deepcopy(full)
    cut["rounds"] = cut["rounds"][:2]
    cut["rounds"][1]["actions"] = cut["rounds"][1]["actions"][: total // 2]
    summary = replay(cut).summary()
    assert summary["finished"] is False and summary["winner"] is None
    assert [r["end"] for r in summary["rounds"]][-1] == "unfinished"
    assert summary["rounds"][-1]["winner"] is None and summary["rounds"][-1]["award"] == 0
    assert len(summary["rounds"]) == 2
    assert len(summary["events"]) == len(full["rounds"][0]["actions"]) + total // 2


def test_record_of_an_unfinished_state_replays():
    state = random_match(("fives", 2), seed=8, limit=40)
    assert not state.finished
    summary = replay(json.loads(json.dumps(to_record(state)))).summary()
    assert summary["scores"] == state.scores
    assert summary["finished"] is False
    assert len(summary["events"]) == 40


# -- the command line --------------------------------------------------------------------------


def test_cli_json_matches_summary(tmp_path, capsys):
    record = scenario_record("pagat3_split")
    code, out, err = run_cli(tmp_path, record, "--json", capsys=capsys)
    assert code == 0 and err == ""
    assert json.loads(out) == replay(record).summary()
    assert out.count("\n") == 1


def test_cli_text(tmp_path, capsys):
    code, out, err = run_cli(tmp_path, scenario_record("pagat2_domino_last_tile_scores", target=25), capsys=capsys)
    assert code == 0 and err == ""
    assert "target" in out and "25" in out and "Finished" in out


def test_cli_as_a_module(tmp_path):
    state = random_match(("pagat", 2), seed=2)
    path = tmp_path / "m.json"
    write_record(state, path)
    done = subprocess.run(
        [sys.executable, "-m", "allfives_env", "replay", str(path), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout)["scores"] == state.scores
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "allfives_env", "replay", str(bad)], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout, done.stderr.count("\n")) == (2, "", 1)


# -- bad records -------------------------------------------------------------------------------


def _base() -> dict:
    return to_record(random_match(("pagat", 2), seed=13))


def _set(record: dict, path: tuple, value) -> dict:
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return record


def _first_domino_round(record: dict) -> int:
    state = replay(copy.deepcopy(record)).state
    return next(i for i, log in enumerate(state.past) if log.result.end == "domino")


def _bad_records():
    """(id, record or text, words the one error line must contain)."""
    yield "malformed", '{"format": "allfives-record/1", "rounds": [', ["malformed JSON"]
    yield "not-object", "[1, 2]", ["object"]
    yield "format", _set(_base(), ("format",), "other/9"), ["format"]
    yield "rule-set", _set(_base(), ("rules",), "dominoes"), ["rules", "dominoes"]
    yield "players", _set(_base(), ("num_players",), 5), ["num_players"]
    yield "opening", _set(_base(), ("opening",), "descending"), ["opening"]
    yield "partnerships", _set(_base(), ("partnerships",), True), ["partnerships"]
    yield "target", _set(_base(), ("target",), -5), ["target"]
    yield "no-rounds", _set(_base(), ("rounds",), []), ["rounds"]
    base = _base()
    hand = base["rounds"][0]["hands"][0]
    yield "duplicate-tile", _set(_base(), ("rounds", 0, "hands", 1, 0), hand[0]), ["round 0", "twice"]
    yield "bad-tile", _set(_base(), ("rounds", 0, "boneyard", 0), "7-7"), ["round 0", "7-7"]
    short = _base()
    moved = short["rounds"][0]["hands"][0].pop()
    short["rounds"][0]["boneyard"].append(moved)
    yield "hand-size", short, ["round 0", "hand 0", "8"]
    later = _base()
    later["rounds"][2]["hands"][1].pop()
    yield "hand-size-later", later, ["round 2", "hand 1"]
    yield "leader-not-a-seat", _set(_base(), ("rounds", 0, "leader"), 2), ["round 0", "leader"]
    record = _base()
    index = _first_domino_round(record)
    wrong = 1 - record["rounds"][index + 1]["leader"]
    yield "leader-after-domino", _set(record, ("rounds", index + 1, "leader"), wrong), [f"round {index + 1}", "leader"]
    fives = to_record(random_match(("fives", 2), seed=3))
    leader = fives["rounds"][0]["leader"]
    yield "leader-fives-round-one", _set(fives, ("rounds", 0, "leader"), 1 - leader), ["round 0", "leader"]
    record = _base()
    actions = record["rounds"][1]["actions"]
    at = next(i for i, a in enumerate(actions) if i > 0 and a not in ("draw", "pass"))
    actions[at] = "draw"
    yield "illegal-draw", record, ["round 1", f"action {at}", "illegal", "draw"]
    record = _base()
    at = next(i for i, a in enumerate(record["rounds"][0]["actions"]) if i > 0 and a != "draw")
    record["rounds"][0]["actions"][at] = "pass"
    yield "illegal-pass", record, ["round 0", f"action {at}", "illegal"]
    record = _base()
    record["rounds"][0]["actions"][0] = "banana"
    yield "unreadable-action", record, ["round 0", "action 0", "banana"]
    record = _base()
    record["rounds"][0]["actions"][0] = 7
    yield "action-not-text", record, ["round 0", "action 0"]
    record = scenario_record("pagat2_domino_13")
    record["rounds"][0]["actions"][3] = "5-3 N"  # no branch before both line sides are covered
    yield "branch-too-early", record, ["round 0", "action 3", "illegal"]
    ambiguous = {
        "format": FORMAT,
        "rules": "pagat",
        "num_players": 2,
        "rounds": [
            {
                "hands": [
                    ["3-3", "0-0", "0-1", "0-2", "0-4", "0-5", "0-6", "1-1", "1-2"],
                    ["3-5", "1-4", "1-5", "1-6", "2-2", "2-4", "2-5", "2-6", "4-4"],
                ],
                "boneyard": ["0-3", "1-3", "2-3", "3-4", "3-6", "4-5", "4-6", "5-5", "5-6", "6-6"],
                "leader": 0,
                "actions": ["3-3", "3-5"],
            }
        ],
    }
    yield "ambiguous-bare", ambiguous, ["round 0", "action 1", "ambiguous"]
    record = _base()
    record["rounds"][0]["actions"] = record["rounds"][0]["actions"][:-1]
    yield "round-not-over", record, ["round 0", "not over"]
    record = _base()
    record["rounds"][0]["actions"].append(record["rounds"][1]["actions"][0])
    yield "action-after-round", record, ["round 0", "already over"]
    record = to_record(random_match(("pagat", 2), seed=13))
    record["rounds"][-1]["actions"].append("draw")
    yield "action-after-match", record, [f"round {len(record['rounds']) - 1}", "over"]
    record = _base()
    record["rounds"].append(copy.deepcopy(record["rounds"][0]))
    yield "round-after-match", record, ["round", "ended"]


BAD = list(_bad_records())


@pytest.mark.parametrize("record, words", [(r, w) for _, r, w in BAD], ids=[i for i, _, _ in BAD])
def test_bad_record_exits_2_with_one_line(tmp_path, capsys, record, words):
    for flags in ((), ("--json",)):
        code, out, err = run_cli(tmp_path, copy.deepcopy(record), *flags, capsys=capsys)
        assert code == 2
        assert out == ""
        assert err.count("\n") == 1 and err.endswith("\n")
        for word in words:
            assert word in err, f"{word!r} not in {err!r}"


@pytest.mark.parametrize(
    "record", [r for _, r, _ in BAD if not isinstance(r, str)], ids=[i for i, r, _ in BAD if not isinstance(r, str)]
)
def test_bad_record_raises_record_error(record):
    with pytest.raises(RecordError):
        replay(copy.deepcopy(record))


def test_missing_file_exits_2(tmp_path, capsys):
    code = main(["replay", str(tmp_path / "nowhere.json")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1


def test_drawn_tile_must_be_placed_in_a_record():
    record = scenario_record("pagat2_domino_13")
    actions = record["rounds"][0]["actions"]
    at = actions.index("draw")
    record["rounds"][0]["actions"][at + 1] = "draw"  # drew a playable 3-4, must place it
    with pytest.raises(RecordError, match=f"round 0, action {at + 1}"):
        replay(record)


def test_draw_and_pass_events_are_plain():
    summary = replay(scenario_record("pagat2_block_tie")).summary()
    kinds = {e["action"] for e in summary["events"] if "end_total" not in e}
    assert kinds == {"draw", "pass"}
    assert sum(1 for e in summary["events"] if e["action"] == "pass") == 2
