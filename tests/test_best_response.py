"""Approximate exploitability on a tiny budget: the trainer against a frozen bot, then the harness."""

from __future__ import annotations

import json
import random

import pytest
from optional import require

require("torch")

from agents.benchmark import BEST_RESPONSE_SEED  # noqa: E402
from agents.benchmark import main as benchmark_main  # noqa: E402
from agents.evaluation import evaluate  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from allfives_train.best_response import BestResponseTrainer, best_response, main  # noqa: E402
from allfives_train.config import load_config, rules_of  # noqa: E402
from allfives_train.rollout import CURRENT  # noqa: E402

# The policy-iteration rounds run too, on a handful of matches each (a full round takes minutes).
TINY = ["imitation.teacher=null", "train.envs=4", "train.total_steps=40", "train.minibatch=64", "iteration.matches=8"]


def test_a_tiny_best_response_from_the_benchmark_is_measured_by_the_harness(tmp_path, capfd):
    argv = ["--best-response", "greedy", "--cpu-minutes", "1", "--matches", "2", "--out", str(tmp_path)]
    assert benchmark_main(argv + [x for o in TINY for x in ("--set", o)]) == 0
    assert "| greedy |" in capfd.readouterr().out
    (row,) = json.loads((tmp_path / "best_response.json").read_text())
    policy = tmp_path / "best_response" / "greedy" / "policy.pt"
    assert row["agent"] == "greedy" and row["trained_steps"] >= 40 and row["cpu_minutes"] == 1.0
    rounds = (tmp_path / "best_response" / "greedy" / "iteration.csv").read_text().splitlines()[1:]
    assert [r.split(",")[0] for r in rounds] == ["1", "2", "3", "4"]  # the default's rounds, after self-play
    direct = evaluate([f"checkpoint:{policy}", "greedy"], 2, seed=BEST_RESPONSE_SEED, workers=1, progress=False)
    assert row["games"] == 4 and row["win_rate"] == direct.agents[0].win_rate
    assert (row["ci_low"], row["ci_high"]) == (direct.agents[0].ci_low, direct.agents[0].ci_high)
    assert (tmp_path / "best_response.md").read_text().count("| greedy |") == 1


def test_every_training_match_is_against_the_frozen_agent():
    trainer = object.__new__(BestResponseTrainer)  # only what _specs reads: no rollout pool, no logs
    trainer.cfg = load_config(None, TINY)
    trainer.rules = rules_of(trainer.cfg)
    trainer.rng = random.Random(0)
    trainer.frozen = make_agent("heuristic", 0)
    specs = trainer._specs()
    assert len(specs) == 4 and len({s.seed for s in specs}) == 4
    for spec in specs:
        assert sum(c is trainer.frozen for c in spec.controls) == 1 and spec.opponent == "frozen"
        assert sum(c == CURRENT for c in spec.controls) == 1


def test_bad_input_is_refused_before_training(tmp_path, capsys):
    assert main(["nonsense", "--out", str(tmp_path)]) == 2
    assert "nonsense" in capsys.readouterr().err
    with pytest.raises(ValueError, match="cpu_minutes"):
        best_response("greedy", tmp_path, cpu_minutes=0)
    assert not any(tmp_path.iterdir())
