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
import os
import random
import zipfile
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
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
    """The shipped file loads exactly as torch stored it, and plays as its raw bytes say, checks or no checks."""
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


# -- fuzzing: damaged and foreign checkpoints ------------------------------------------------------------------

EXAMPLES = int(os.environ.get("ALLFIVES_FUZZ_EXAMPLES", "120"))


def refused_in_one_line(load, path: Path) -> None:
    """``load(path)`` raises CheckpointError with one line naming the file, and nothing else."""
    with pytest.raises(CheckpointError) as info:
        load(path)
    assert_one_line_naming(str(info.value), path)


def test_random_byte_flips_anywhere_are_refused(checkpoint_file, straight, tmp_path):
    """Every byte counts: the zip's records and padding, the pickle, every tensor, the seal itself."""
    rng = random.Random(11)
    for source, load in ((checkpoint_file, read_training_checkpoint), (straight / "policy.pt", read_checkpoint)):
        size = source.stat().st_size
        positions = set(range(64)) | set(range(size - 300, size))  # the head, the zip end records, the seal
        positions |= {rng.randrange(size) for _ in range(2 * EXAMPLES)}
        original = source.read_bytes()
        target = tmp_path / source.name
        for position in sorted(positions):
            data = bytearray(original)
            data[position] ^= rng.randrange(1, 256)
            target.write_bytes(bytes(data))
            refused_in_one_line(load, target)


def test_truncated_and_extended_checkpoints_are_refused(checkpoint_file, tmp_path):
    rng = random.Random(12)
    original = checkpoint_file.read_bytes()
    size = len(original)
    lengths = set(range(0, 40)) | set(range(size - 120, size)) | {rng.randrange(size) for _ in range(EXAMPLES)}
    target = tmp_path / "checkpoint.pt"
    for length in sorted(lengths):
        target.write_bytes(original[:length])
        refused_in_one_line(read_training_checkpoint, target)
    for tail in (b"\0", b"\n", rng.randbytes(100)):
        target.write_bytes(original + tail)
        refused_in_one_line(read_training_checkpoint, target)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.one_of(
        st.binary(max_size=3000),
        st.binary(max_size=3000).map(lambda b: b"PK\x03\x04" + b),  # looks like a zip archive at first
        st.binary(max_size=600).map(lambda b: b + b"PK\x05\x06" + bytes(18)),  # ends like one
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
            max_leaves=20,
        ).map(lambda tree: json.dumps(tree).encode()),
    )
)
def test_any_byte_string_is_refused_in_one_line(tmp_path, body):
    path = tmp_path / "foreign.pt"
    path.write_bytes(body)
    refused_in_one_line(read_training_checkpoint, path)
    refused_in_one_line(load_policy_agent, path)


def torch_bytes(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "payload",
    [
        [1, 2, 3],
        {"format": "allfives-policy"},
        {"format": "allfives-policy", "version": 99},
        {"weights": {"w": torch.zeros(2)}, "format": "something-else"},
        torch.zeros(5),
        {"format": "allfives-policy", "training": {"optimizer": "adam"}},
    ],
    ids=["list", "format-only", "future-version", "other-format", "bare-tensor", "odd-training"],
)
def test_torch_files_of_other_shapes_are_refused(tmp_path, payload):
    path = tmp_path / "other.pt"
    path.write_bytes(torch_bytes(payload))
    refused_in_one_line(read_training_checkpoint, path)
    refused_in_one_line(lambda p: make_agent(f"checkpoint:{p}"), path)


def test_an_unsealed_training_state_is_held_to_what_a_run_can_write(checkpoint_file, tmp_path):
    """Older files carry no seal; their parts are checked one by one (counters, pool, optimizer, generators, config)."""
    from agents.policy_net import weights_digest

    good = load_payload(checkpoint_file)
    damage = {
        "negative steps": lambda t: t.update(steps=-5),
        "pool snapshot of another shape": lambda t: t["pool"].append({k: v[:1] for k, v in t["pool"][0].items()}),
        "optimizer of another network": lambda t: t["optimizer"]["param_groups"][0].update(params=[0, 1]),
        "moment of the wrong shape": lambda t: t["optimizer"]["state"][0].update(exp_avg=torch.zeros(3)),
        "python generator": lambda t: t["rng"].update(python=(3, [1, 2, 3], None)),
        "torch generator": lambda t: t["rng"].update(torch_generator=torch.zeros(7, dtype=torch.uint8)),
        "numpy generator": lambda t: t["rng"].update(numpy_global=["MT19937", [1, 2], 0, 0, 0.0]),
        "config value": lambda t: t["config"]["train"].update(lr=float("inf")),
        "config key": lambda t: t["config"]["train"].update(warmup=3),
        "recent results": lambda t: t["recent"].update(pool=[7.0]),
        "non-finite moment": lambda t: t["optimizer"]["state"][0]["exp_avg"].fill_(float("nan")),
        "optimizer state of another kind": lambda t: t["optimizer"].update(state=[1, 2]),
        "no optimizer at all": lambda t: t.update(optimizer="adam"),
    }
    for what, harm in damage.items():
        payload = load_payload(checkpoint_file)
        harm(payload["training"])
        payload["weights_sha256"] = weights_digest(payload["weights"])
        path = tmp_path / "old.pt"
        path.write_bytes(torch_bytes(payload))  # unsealed, as files were written before the seal
        with pytest.raises(CheckpointError) as info:
            read_training_checkpoint(path)
        assert_one_line_naming(str(info.value), path)
        assert what  # each kind of damage above is refused
    path = tmp_path / "old.pt"
    path.write_bytes(torch_bytes(good))
    assert differences(read_training_checkpoint(path), read_training_checkpoint(checkpoint_file)) == []


def test_a_refused_resume_leaves_the_run_directory_exactly_as_it_was(straight, tmp_path, capsys):
    run = copy_run(straight, tmp_path / "run")
    (run / ".checkpoint.pt.stale.tmp").write_bytes(b"left by a kill")  # even this is not tidied away
    data = bytearray((run / "checkpoint.pt").read_bytes())
    rng = random.Random(13)
    for _ in range(3):
        position = rng.randrange(len(data))
        data[position] ^= 0x01
        (run / "checkpoint.pt").write_bytes(bytes(data))
        before = snapshot(run)
        assert run_train("--resume", run) == 2
        assert snapshot(run) == before
        data[position] ^= 0x01
    (run / "checkpoint.pt").write_bytes(bytes(data))
    before = snapshot(run)
    for bad in (["--set", "train.lr=.inf"], ["--set", "train.nope=1"], ["--set", "game.num_players=9"]):
        assert run_train("--resume", run, *bad) == 2
        assert snapshot(run) == before
    assert run_train(*SHORT, "--set", f"run.dir={tmp_path}", "--set", "run.name=run") == 2  # has a checkpoint
    assert run_train(*SHORT, "--set", f"run.dir={tmp_path}", "--set", "run.name=run", "--overwrite",
                     "--set", "train.clip=.nan") == 2  # fmt: skip
    assert snapshot(run) == before
    err = capsys.readouterr().err
    assert err.count("\n") == 8 and "Traceback" not in err


# -- fuzzing: configs --------------------------------------------------------------------------------------------

SECTIONS = ["run", "game", "model", "train", "reward", "opponents", "imitation", "eval"]
odd_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**18, max_value=10**400),
    st.floats(),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), 1e308, 5e-324, -0.0]),
    st.text(max_size=12),
    st.lists(st.text(max_size=10), max_size=3),
    st.lists(st.sampled_from(["random", "greedy", "heuristic", "search"]), max_size=5),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def names_in(section: str) -> st.SearchStrategy[str]:
    from allfives_train.config import SCHEMA

    known = list(SCHEMA.get(section, {})) or ["x"]
    return st.one_of(st.sampled_from(known), st.text(max_size=10))


config_trees = st.dictionaries(
    st.one_of(st.sampled_from(SECTIONS), st.text(max_size=8)),
    st.one_of(
        st.just(None),
        odd_values,
        st.sampled_from(SECTIONS).flatmap(lambda s: st.dictionaries(names_in(s), odd_values, max_size=4)),
    ),
    max_size=4,
)


def assert_valid(cfg: dict) -> None:
    """An accepted config passes its own checks again unchanged: every number finite and in range."""
    import math

    from allfives_train.config import check_config

    assert check_config(cfg) == cfg
    for section in cfg.values():
        for value in section.values():
            assert not isinstance(value, float) or math.isfinite(value)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=config_trees)
def test_random_config_files_are_accepted_valid_or_refused_in_one_line(tmp_path, tree):
    import yaml

    from allfives_train.config import ConfigError, _show, load_config

    path = tmp_path / "fuzz.yaml"
    path.write_text(yaml.safe_dump(tree, allow_unicode=True), encoding="utf-8")
    try:
        cfg = load_config(path)
    except ConfigError as error:
        message = str(error)
        assert "\n" not in message and len(message) < 600, message
        read = yaml.safe_load(path.read_text(encoding="utf-8")) or {}  # as YAML reads it back (line breaks fold)
        named = [f"{s}.{n}" for s, v in read.items() if isinstance(v, dict) for n in v] + list(read)
        shown = [str(name)[:40] for name in named] + [_show(name)[:40] for name in named]
        assert any(name in message for name in shown) or message.startswith(("game:", "opponents:")), message
    else:
        assert_valid(cfg)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    key=st.one_of(
        st.sampled_from([f"{s}.{n}" for s in SECTIONS for n in ("lr", "seed", "target", "name", "baselines", "every")]),
        st.text(max_size=15),
    ),
    raw=st.one_of(
        st.sampled_from([".inf", "-.inf", ".nan", "1e999", "-1", "0", "1e-320", "[1, 2", "{a: [", "!!int x",
                         "!!python/object:os.system x", "'", "null", "~", "[[[[[[[[[[", "10" * 200, "yes"]),
        st.text(max_size=30),
    ),
)  # fmt: skip
def test_random_overrides_are_accepted_valid_or_refused_in_one_line(key, raw):
    from allfives_train.config import ConfigError, load_config

    try:
        cfg = load_config(TINY, [f"{key}={raw}"])
    except ConfigError as error:
        message = str(error)
        assert "\n" not in message and len(message) < 600, message
    else:
        assert_valid(cfg)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(st.binary(max_size=400), st.text(max_size=400).map(str.encode)))
def test_any_config_file_bytes_are_accepted_valid_or_refused_in_one_line(tmp_path, body):
    from allfives_train.config import ConfigError, load_config

    path = tmp_path / "any.yaml"
    path.write_bytes(body)
    try:
        cfg = load_config(path)
    except ConfigError as error:
        assert "\n" not in str(error), str(error)
        assert str(path) in str(error) or "." in str(error).split(":")[0] or str(error).startswith("unknown")
    else:
        assert_valid(cfg)


def test_deep_or_odd_yaml_is_refused_in_one_line(tmp_path):
    from allfives_train.config import ConfigError, load_config

    for body in ("[" * 5000, "train:\n  lr: !!float nope\n", "a: !!timestamp x\n", "train: {lr: 0.1\n", "\xff\xfe"):
        path = tmp_path / "odd.yaml"
        path.write_bytes(body.encode("latin-1"))
        with pytest.raises(ConfigError) as info:
            load_config(path)
        assert "\n" not in str(info.value) and "odd.yaml" in str(info.value)
