"""Training against bad input: resumed logs, corrupted and foreign checkpoints, bad configs, diverging losses.

One regression test per defect found by fuzzing (the TensorBoard history a
resume deleted, corruption outside the weights, torch's multi-line advice on a
foreign file, non-finite settings and weights), then the fuzzing itself:
random byte flips, truncations and foreign files for every checkpoint reader,
random keys, values and YAML for the config. A refused checkpoint or config
leaves the run directory exactly as it was.
"""

from __future__ import annotations

import io
import json
import random
import zipfile
from pathlib import Path

import pytest
import torch
from train_snapshots import TINY, differences, load_payload, run_differences, run_train, snapshot, tb_view

from agents.policy_agent import DEFAULT_CHECKPOINT, load_policy_agent
from agents.policy_net import CheckpointError, read_checkpoint
from agents.registry import make_agent
from allfives_env.core import State, make_rules
from allfives_train.checkpoint import read_training_checkpoint

#: A short run that still snapshots, evaluates every 2 updates and runs the final evaluation.
SHORT = ["--config", TINY, "--set", "train.total_steps=300", "--set", "eval.final_matches=1",
         "--set", "eval.baselines=[random, greedy]"]  # fmt: skip


class Killed(BaseException):
    """Stands for the process being killed: nothing catches it on the way out."""


@pytest.fixture(scope="module")
def straight(tmp_path_factory) -> Path:
    """The uninterrupted run every interrupted one must end up equal to."""
    base = tmp_path_factory.mktemp("straight")
    assert run_train(*SHORT, "--set", f"run.dir={base}") == 0
    return base / "tiny"


@pytest.fixture(scope="module")
def checkpoint_file(straight, tmp_path_factory) -> Path:
    """A pristine copy of a whole training checkpoint, for tests that damage copies of it."""
    path = tmp_path_factory.mktemp("pristine") / "checkpoint.pt"
    path.write_bytes((straight / "checkpoint.pt").read_bytes())
    return path


def copy_run(source: Path, target: Path) -> Path:
    for path in source.rglob("*"):
        if path.is_file():
            dest = target / path.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(path.read_bytes())
    return target


# -- defect 6: resuming kept the TensorBoard history only up to the update count ----------------------------


def test_resume_keeps_the_tensorboard_history(straight, tmp_path):
    assert run_train(*SHORT, "--set", f"run.dir={tmp_path}", "--stop-after-updates", "3") == 0
    assert run_train("--resume", tmp_path / "tiny") == 0
    view = tb_view(tmp_path / "tiny")
    assert view["loss/loss"][0][0] == tb_view(straight)["loss/loss"][0][0]  # the first update's point is there
    assert run_differences(straight, tmp_path / "tiny") == []


def test_a_kill_during_the_final_evaluation_keeps_the_tensorboard_history(straight, tmp_path, monkeypatch):
    import allfives_train.trainer as trainer_module

    def killed(*args, **kwargs):
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(trainer_module, "final_eval", killed)
        with pytest.raises(Killed):
            run_train(*SHORT, "--set", f"run.dir={tmp_path}")
    assert run_train("--resume", tmp_path / "tiny") == 0
    assert len(tb_view(tmp_path / "tiny")["loss/loss"]) == len(tb_view(straight)["loss/loss"]) > 3
    assert run_differences(straight, tmp_path / "tiny") == []


# -- defect 7: only the weights carried a checksum ---------------------------------------------------------


def member_offsets(path: Path) -> dict[str, tuple[int, int]]:
    """Where each member of a torch zip file lies in the file: name -> (first byte, size)."""
    data = path.read_bytes()
    out = {}
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            start = info.header_offset
            name_len = int.from_bytes(data[start + 26 : start + 28], "little")
            extra_len = int.from_bytes(data[start + 28 : start + 30], "little")
            out[info.filename] = (start + 30 + name_len + extra_len, info.file_size)
    return out


def flipped(source: Path, target: Path, position: int) -> Path:
    data = bytearray(source.read_bytes())
    data[position] ^= 0x10
    target.write_bytes(bytes(data))
    return target


def test_a_flipped_byte_in_any_part_of_a_training_checkpoint_is_refused(checkpoint_file, tmp_path):
    members = member_offsets(checkpoint_file)
    assert len(members) > 20  # weights, optimizer moments, pool snapshots, random states, the pickled tree
    accepted = []
    for name, (start, size) in members.items():
        if size == 0:
            continue
        bad = flipped(checkpoint_file, tmp_path / "checkpoint.pt", start + size // 2)
        try:
            read_training_checkpoint(bad)
        except CheckpointError as error:
            assert "checkpoint.pt" in str(error) and "\n" not in str(error)
        else:
            accepted.append(name)
    assert accepted == []


def optimizer_member(path: Path) -> str:
    """The zip member holding one of the optimizer's moment tensors (not a weight)."""
    payload = load_payload(path)
    moment = next(iter(payload["training"]["optimizer"]["state"].values()))["exp_avg"]
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if archive.read(info) == moment.numpy().tobytes():
                return info.filename
    raise AssertionError("no member holds the optimizer moment")


def test_resume_refuses_a_corrupted_optimizer_state_and_changes_nothing(straight, tmp_path, capsys):
    run = copy_run(straight, tmp_path / "run")
    start, size = member_offsets(run / "checkpoint.pt")[optimizer_member(run / "checkpoint.pt")]
    flipped(run / "checkpoint.pt", run / "checkpoint.pt", start + size // 2)
    before = snapshot(run)
    capsys.readouterr()
    assert run_train("--resume", run) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "checkpoint.pt" in err and "corrupt" in err
    assert snapshot(run) == before


# -- defect 8: a foreign file got torch's multi-line advice ---------------------------------------------------


def foreign_files(directory: Path, checkpoint: Path) -> dict[str, Path]:
    """Files that are not allfives checkpoints, each in its own way."""
    files = {}

    def put(name: str, body: bytes) -> None:
        files[name] = directory / name
        files[name].write_bytes(body)

    put("json.pt", json.dumps({"weights": [1, 2, 3]}).encode())
    put("random.pt", random.Random(1).randbytes(5000))
    put("empty.pt", b"")
    put("truncated.pt", checkpoint.read_bytes()[: checkpoint.stat().st_size // 3])
    put("text.pt", b"a checkpoint, honest\n")
    buffer = io.BytesIO()
    torch.save({"state_dict": {"w": torch.zeros(3)}}, buffer)
    put("torch_dict.pt", buffer.getvalue())
    buffer = io.BytesIO()
    torch.save(torch.nn.Linear(2, 2), buffer)  # a pickled module: code, not data
    put("torch_module.pt", buffer.getvalue())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "not a checkpoint")
    put("archive.pt", buffer.getvalue())
    return files


def assert_one_line_naming(message: str, path: Path) -> None:
    assert message.count("\n") == 0, message
    assert str(path) in message, message
    assert "weights_only" not in message and "Traceback" not in message, message


def test_foreign_files_get_one_line_from_every_reader(checkpoint_file, tmp_path, capsys):
    for name, path in foreign_files(tmp_path, checkpoint_file).items():
        for load in (
            read_checkpoint,
            read_training_checkpoint,
            load_policy_agent,
            lambda p: make_agent(f"checkpoint:{p}"),
        ):
            with pytest.raises(CheckpointError) as info:
                load(path)
            assert_one_line_naming(str(info.value), path)
        before = snapshot(tmp_path)
        capsys.readouterr()
        assert run_train("--resume", path) == 2, name
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.count("\n") == 1, captured.err
        assert_one_line_naming(captured.err.rstrip("\n"), path)
        assert snapshot(tmp_path) == before


# -- defect 9: non-finite settings and weights ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("train.lr=.inf", ["train.lr", "(0, 1]"]),
        ("train.lr=-.inf", ["train.lr", "(0, 1]"]),
        ("train.lr=.nan", ["train.lr", "(0, 1]"]),
        ("train.gamma=.nan", ["train.gamma", "[0, 1]"]),
        ("reward.win=.inf", ["reward.win", "finite"]),
        ("opponents.greedy=.inf", ["opponents.greedy", "finite"]),
        ("run.max_minutes=.inf", ["run.max_minutes", "finite"]),
        ("train.lr=1e999", ["train.lr", "(0, 1]"]),
        (
            "train.clip=100000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
            "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
            "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
            "0000000000000000000000000000000000000000000000000000000000000000000000000",
            ["train.clip"],
        ),
        ("run.seed=100000000000000000000000000000", ["run.seed"]),
    ],
)
def test_non_finite_and_out_of_range_numbers_are_refused(tmp_path, capsys, override, words):
    assert run_train(*SHORT, "--set", f"run.dir={tmp_path}", "--set", override) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(w in err for w in words), err
    assert list(tmp_path.iterdir()) == []


def test_a_non_finite_weight_stops_training_and_nothing_is_saved(tmp_path):
    from allfives_train.config import load_config
    from allfives_train.trainer import Trainer

    trainer = Trainer(load_config(TINY, [f"run.dir={tmp_path}"]), tmp_path / "run", progress=False)
    try:
        trainer.step()
        trainer.save()
        before = snapshot(tmp_path / "run")
        with torch.no_grad():
            trainer.net.trunk[0].weight[0, 0] = float("nan")
        with pytest.raises(FloatingPointError, match="not finite"):
            trainer.step()
        with pytest.raises(FloatingPointError, match="not finite"):
            trainer.save()
        assert snapshot(tmp_path / "run") == before
    finally:
        trainer.close()


def test_a_loss_that_becomes_nan_stops_the_run_with_one_line(tmp_path, capsys, monkeypatch):
    import allfives_train.ppo as ppo

    real = ppo.losses
    calls = []

    def poisoned(*args, **kwargs):
        terms = real(*args, **kwargs)
        calls.append(1)
        if len(calls) > 6:  # a few updates in
            terms["value_loss"] = terms["value_loss"] * float("nan")
        return terms

    monkeypatch.setattr(ppo, "losses", poisoned)
    assert run_train(*SHORT, "--set", f"run.dir={tmp_path}") == 1
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "value_loss" in captured.err and "not finite" in captured.err
    saved = load_payload(tmp_path / "tiny" / "checkpoint.pt")
    assert all(torch.isfinite(w).all() for w in saved["weights"].values())
    assert not (tmp_path / "tiny" / "policy.pt").exists()


# -- files written before the seal still load ----------------------------------------------------------------


def test_the_shipped_checkpoint_loads_as_stored_and_plays_as_before(monkeypatch):
    """The shipped file has no seal: it loads through the older path, and plays as its raw bytes say."""
    data = read_checkpoint(DEFAULT_CHECKPOINT)
    assert differences(data, load_payload(DEFAULT_CHECKPOINT)) == []
    checked = load_policy_agent(None, seed=0)
    import agents.policy_agent as module

    monkeypatch.setattr(module, "read_checkpoint", load_payload)  # torch's bytes as they are, no checks at all
    unchecked = load_policy_agent(None, seed=0)
    state = State(make_rules(), seed=5)
    choices = 0
    while not state.finished:
        view = state.view(state.to_act)
        action = checked.act(view)
        assert action == unchecked.act(view)
        choices += len(view.legal) > 1
        state.apply(action)
    assert choices > 10


def test_an_unsealed_checkpoint_still_loads_with_the_same_contents(checkpoint_file, tmp_path):
    from agents.checkpoint_file import SEAL_SIZE

    sealed = checkpoint_file.read_bytes()
    assert sealed[-SEAL_SIZE:].startswith(b"allfives-sha256:")
    unsealed = tmp_path / "old.pt"
    unsealed.write_bytes(sealed[: -SEAL_SIZE - 2] + b"\0\0")  # as torch.save wrote it: an empty zip comment
    assert differences(read_training_checkpoint(unsealed), read_training_checkpoint(checkpoint_file)) == []
