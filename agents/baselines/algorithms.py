"""The algorithms of the baselines, each with the library that trains it and what it needs installed.

One entry per algorithm: how it learns (self-play or against the bot mix of
:mod:`.bot_mix`), which of the project's APIs its library drives, the
packages it imports and the ``pyproject.toml`` extra that brings them, and the
module that trains it (:mod:`.maskable_ppo`, ...: each has ``SETTINGS``, what
it changes from its library's defaults, and ``train(job, recorder)``). The
project's PPO lives in the training layer and is started there.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass

from .job import Job


@dataclass(frozen=True)
class Algorithm:
    name: str
    title: str
    family: str
    api: str
    opponents: str
    packages: tuple[str, ...]
    extra: str
    runner: str | None  # the module with train(job, recorder); None: the training layer's baseline_run
    resumes: bool = False  # whether a stopped run can go on from its last snapshot (--resume)

    def command(self, job: Job, resume: bool = False) -> list[str]:
        """The training process of ``job``: a fresh Python running this algorithm's module."""
        entry = "allfives_train.baseline_run" if self.runner is None else "agents.baselines.train"
        return [sys.executable, "-m", entry, self.name, "--seed", str(job.seed), "--budget", str(job.budget),
                "--points", str(job.points), "--out", str(job.out), *(["--resume"] if resume else [])]  # fmt: skip

    def missing(self) -> list[str]:
        """The packages this algorithm needs that do not import (not installed, or broken)."""
        found = []
        for package in self.packages:
            try:
                importlib.import_module(package)
            except ImportError:
                found.append(package)
        return found


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in (
        Algorithm(
            "ppo",
            "PPO (this project, train.py)",
            "policy gradient",
            "batched engine",
            "self-play and bots",
            ("torch", "yaml"),
            "train",
            None,
        ),
        Algorithm(
            "rllib_ppo",
            "RLlib PPO",
            "policy gradient",
            "PettingZoo AEC",
            "self-play, one shared policy",
            ("ray", "torch"),
            "ray",
            "agents.baselines.rllib_ppo",
            resumes=True,
        ),
        Algorithm(
            "dmc",
            "RLCard DMC",
            "Monte-Carlo value learning",
            "RLCard env over PettingZoo AEC",
            "self-play",
            ("rlcard", "git", "torch"),
            "baselines",
            "agents.baselines.dmc",
        ),
        Algorithm(
            "tianshou_dqn",
            "Tianshou DQN",
            "value-based (Q-learning)",
            "Gymnasium (AllFives-v0)",
            "bot mix",
            ("tianshou", "torch"),
            "ray",
            "agents.baselines.tianshou_dqn",
        ),
        Algorithm(
            "maskable_ppo",
            "sb3-contrib MaskablePPO",
            "policy gradient",
            "Gymnasium (AllFives-v0)",
            "bot mix",
            ("sb3_contrib", "torch"),
            "sb3",
            "agents.baselines.maskable_ppo",
        ),
        Algorithm(
            "nfsp",
            "RLCard NFSP",
            "fictitious self-play (game-theoretic)",
            "RLCard env over PettingZoo AEC",
            "self-play",
            ("rlcard", "torch"),
            "baselines",
            "agents.baselines.nfsp",
            resumes=True,
        ),
    )  # fmt: skip
}


def resume_refusal(name: str) -> str:
    """Why the stopped run of ``name`` cannot go on, and which algorithms' runs can."""
    can = ", ".join(a.name for a in ALGORITHMS.values() if a.resumes)
    return f"{name} cannot go on from a snapshot; allowed: {can} (or start the run again without --resume)"
