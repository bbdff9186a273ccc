"""RLlib's PPO on the PettingZoo env, self-play: both seats map to one shared policy.

The env is :func:`agents.rllib_env.rllib_env` (RLlib's ``PettingZooEnv`` over
``FloatObservations``) and the module :class:`agents.rllib_module.MaskedPPOModule`
(PPO's default network with the action mask applied), the project's
documented way to run RLlib (docs/ray.md). PPO's own defaults otherwise
(4,000 steps a batch, minibatches of 128, 30 epochs, learning rate 5e-5,
two hidden layers of 256). A decision is one env step of either seat, as
RLlib counts ``num_env_steps_sampled_lifetime``.

Each snapshot is saved as the whole algorithm (``Algorithm.save_to_path``),
so a stopped run resumes (``--resume``) from its last one: the weights, the
optimizer and the step counters go on; the env runner's random stream starts
again from the seed. Once a newer one is saved, an older snapshot keeps its
RL module only (what ``rllib:PATH`` plays; a third of the size).

Torch runs on one thread in the driver, which samples (a forward pass a
step) and learns (minibatches of 128): with networks this small, on two
threads it ran several times slower when other runs shared the cores (on
the 2-core machine, beside a DMC run: 177 decisions a second on one thread,
35 on two).
"""

from __future__ import annotations

from pathlib import Path

import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME
from ray.tune.registry import register_env

from ..rllib_agent import SHARED, shared_policy
from ..rllib_env import rllib_env
from ..rllib_module import MaskedPPOModule
from .job import Job, Recorder

ENV_NAME = "allfives-baseline"

SETTINGS = {
    "env": "rllib_env(auto_forced=True), environment checking off (it steps illegal random actions)",
    "module": "MaskedPPOModule, one policy 'shared' for both seats",
    "num_env_runners": "0: sampling in the driver, as examples/rllib_ppo.py does on two cores",
    "torch threads": "1 in the driver",
}


def build_config(seed: int, reward: str = "win_loss") -> PPOConfig:
    """The baseline's PPO; ``reward`` is the environment's (the baselines keep its default, ``win_loss``)."""
    register_env(ENV_NAME, rllib_env)
    module = RLModuleSpec(module_class=MaskedPPOModule)
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config={"auto_forced": True, "reward": reward}, disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=0)
        .multi_agent(policies={SHARED}, policy_mapping_fn=shared_policy)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED: module}))
        .debugging(seed=seed)
    )


def keep_module_only(snapshot: Path) -> None:
    """Delete all of an algorithm checkpoint but its RL module (the learner's, where ``rllib:PATH`` finds it)."""
    module = snapshot / "learner_group" / "learner" / "rl_module" / SHARED
    for path in sorted(snapshot.rglob("*"), reverse=True):  # files before the folders that hold them
        if path == module or module in path.parents or path in module.parents:
            continue
        path.rmdir() if path.is_dir() else path.unlink()


def train(job: Job, recorder: Recorder, reward: str = "win_loss") -> int:
    torch.set_num_threads(1)
    ray.init(include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    algo = build_config(job.seed, reward).build_algo()
    steps = 0
    try:
        if recorder.last is not None:
            algo.restore_from_path(str(recorder.path(recorder.last.decisions).resolve()))
            steps = recorder.last.decisions
        while not recorder.finished(steps):
            steps = int(algo.train()[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME])
            if recorder.due(steps) or recorder.finished(steps):
                path = recorder.path(steps)
                algo.save_to_path(str(path.resolve()))
                recorder.save(steps, f"rllib:{path}")  # as given: a relative --out keeps the results movable
                for older in path.parent.iterdir():
                    if older.name < path.name:
                        keep_module_only(older)
    finally:
        algo.stop()
        ray.shutdown()
    return steps
