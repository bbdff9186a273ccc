"""research/finetune.py: its matches go to the named opponent, and the critic learns first while the actor is held."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from agents.policy_net import net_from_checkpoint, read_checkpoint
from allfives_train.config import load_config
from allfives_train.rollout import CURRENT

ROOT = Path(__file__).resolve().parent.parent
START = ROOT / "agents" / "checkpoints" / "default.pt"


def _script():
    spec = importlib.util.spec_from_file_location("finetune", ROOT / "research" / "finetune.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _trainer(tmp_path: Path, share: float):
    model = read_checkpoint(START)["model"]
    cfg = load_config(None, [f"run.dir={tmp_path}", "run.name=ft", "train.rollout_workers=1", "train.envs=6",
                             f"model.hidden={model['hidden']}", f"model.action_hidden={model['action_hidden']}",
                             "imitation.teacher=null", "iteration.rounds=0", "eval.every=0",
                             "eval.final_matches=0"])  # fmt: skip
    return _script().FinetuneTrainer(cfg, tmp_path / "ft", "random", share)


def test_the_share_of_matches_goes_to_the_opponent_at_the_other_side(tmp_path):
    trainer = _trainer(tmp_path, 1.0)
    try:
        for spec in trainer._specs():
            assert spec.opponent == "random"
            assert sum(c is CURRENT for c in spec.controls) == 1
            assert all(type(c).__name__ == "RandomAgent" for c in spec.controls if c is not CURRENT)
        trainer.share = 0.0
        assert all(spec.opponent != "random" for spec in trainer._specs())
    finally:
        trainer.close()


def test_the_critic_learns_alone_from_the_sharpened_start(tmp_path):
    trainer = _trainer(tmp_path, 1.0)
    try:
        critic = {k: v.clone() for k, v in trainer.net.state_dict().items() if k.startswith("critic.")}
        trainer.start_from(str(START), 5.0, 1)
        start = net_from_checkpoint(read_checkpoint(START), START).state_dict()
        now = trainer.net.state_dict()
        for name, weight in start.items():
            if name.startswith("critic."):
                continue
            expected = weight * 5.0 if name.startswith("score.") else weight
            assert torch.equal(now[name], expected), name
        assert all(not torch.equal(now[k], v) for k, v in critic.items()), "the critic did not learn"
        assert all(p.requires_grad for p in trainer.net.parameters())
        assert (trainer.steps, trainer.iteration, trainer.pool) == (0, 0, [])
    finally:
        trainer.close()


def test_bad_input_is_refused_before_any_training(tmp_path, capsys):
    script = _script()
    for argv, said in ((["--share", "2"], "allowed: 0 to 1"), (["--opponent", "nosuch"], "unknown agent spec"),
                       (["--start", str(ROOT / "README.md")], "cannot be read")):  # fmt: skip
        with pytest.raises(SystemExit):
            script.main([*argv, "--out", str(tmp_path / "ft")])
        assert said in capsys.readouterr().err
    assert not (tmp_path / "ft").exists()
