"""Format-1 policy checkpoints (the earlier private encoding) still load through ``checkpoint:PATH`` and play
exactly the choices they made with the code that trained them; integrity checks still hold them; the trainer
refuses to resume one in a single line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from agents.checkpoint_file import CheckpointError, serialize
from agents.legacy_policy import ACTION_SIZE, STATE_SIZE, encode_actions, encode_state
from agents.policy_agent import load_policy_agent
from agents.policy_net import read_checkpoint
from agents.registry import make_agent
from allfives_env.core import State, make_rules
from allfives_train.checkpoint import read_training_checkpoint

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
FORMAT1 = DATA / "policy_format1.pt"
CHOICES = json.loads((DATA / "policy_format1_choices.json").read_text(encoding="utf-8"))


def replay_choices(agent) -> int:
    """Replays every recorded game, asserting the agent's choice at each recorded decision; the count checked."""
    checked = 0
    for game in CHOICES["games"]:
        state = State(make_rules(game["rules"], game["players"]), seed=game["seed"])
        expected = {index: action for index, action in game["expected"]}
        for index, move in enumerate(game["moves"]):
            view = state.view(state.to_act)
            if index in expected:
                assert agent.act(view) == expected[index], (game["rules"], game["players"], game["seed"], index)
                checked += 1
            assert move in state.legal_actions()
            state.apply(move)
    return checked


def test_the_fixture_is_a_format_1_file():
    data = torch.load(FORMAT1, weights_only=True)
    assert data["format"] == "allfives-policy" and data["version"] == 1 and data["feature_version"] == 1


def test_a_format_1_checkpoint_plays_the_choices_it_made_before():
    agent = make_agent(f"checkpoint:{FORMAT1}")
    assert agent.name == "checkpoint:policy_format1.pt" and agent.legacy is not None
    assert agent.trained_steps > 0
    assert replay_choices(agent) == CHOICES["decisions"] == 200


def test_the_legacy_encoding_has_its_sizes_and_one_row_per_legal_action():
    state = State(make_rules("pagat", 4), seed=3)
    for _ in range(12):
        view = state.view(state.to_act)
        assert encode_state(view).shape == (STATE_SIZE,)
        assert encode_actions(view).shape == (len(view.legal), ACTION_SIZE)
        state.apply(view.legal[0])


def test_a_sealed_copy_plays_the_same_and_a_flipped_byte_is_refused(tmp_path):
    sealed = tmp_path / "sealed.pt"
    sealed.write_bytes(serialize(torch.load(FORMAT1, weights_only=True)))
    agent = load_policy_agent(sealed)
    assert replay_choices(agent) == 200
    damaged = bytearray(sealed.read_bytes())
    damaged[len(damaged) // 2] ^= 1
    broken = tmp_path / "broken.pt"
    broken.write_bytes(bytes(damaged))
    with pytest.raises(CheckpointError, match="broken.pt.*SHA-256"):
        load_policy_agent(broken)


def test_unsealed_format_1_weights_are_still_checked_against_their_hash(tmp_path):
    data = torch.load(FORMAT1, weights_only=True)
    data["weights"]["score.bias"] = data["weights"]["score.bias"] + 1.0
    path = tmp_path / "tampered.pt"
    torch.save(data, path)
    with pytest.raises(CheckpointError, match="tampered.pt.*corrupt"):
        load_policy_agent(path)


def test_a_format_1_file_of_another_feature_version_is_refused_in_one_line(tmp_path):
    data = torch.load(FORMAT1, weights_only=True)
    data["feature_version"] = 2
    path = tmp_path / "odd.pt"
    torch.save(data, path)
    with pytest.raises(CheckpointError) as caught:
        load_policy_agent(path)
    message = str(caught.value)
    assert "odd.pt" in message and "feature version 2" in message and "\n" not in message


def test_training_refuses_a_format_1_file_in_one_line():
    for read in (read_checkpoint, read_training_checkpoint):
        with pytest.raises(CheckpointError) as caught:
            read(FORMAT1)
        message = str(caught.value)
        assert "policy_format1.pt" in message and "version 1" in message and "train" in message
        assert "\n" not in message


@pytest.mark.parametrize("opponent", ["greedy", "heuristic"])
def test_the_harness_table_is_the_one_the_earlier_code_printed(opponent):
    spec = f"checkpoint:{FORMAT1.relative_to(ROOT)}"
    command = [
        sys.executable,
        "-m",
        "agents.evaluate",
        spec,
        opponent,
        "--matches",
        "3",
        "--seed",
        "0",
        "--workers",
        "1",
    ]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True).stdout
    rows = {}
    for line in out.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0] in (spec, opponent):
            rows[cells[0]] = cells
    expected = CHOICES["evaluate"][opponent]
    assert rows[spec][1:3] == [str(expected["games"]), expected["win_rate"]]
    assert rows[spec][4] == expected["margin"]
    assert rows[opponent][4] == "-" + expected["margin"][1:]
