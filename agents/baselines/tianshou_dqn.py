"""Tianshou's DQN on the Gymnasium env (``AllFives-v0``), one seat against the bot mix.

Tianshou masks a discrete action space through an observation with ``obs``
and ``mask`` entries (its ``PettingZooEnv`` builds exactly that); Gymnasium's
own ``TransformObservation`` renames the env's ``observation`` and
``action_mask`` so. The bots need the rules state to play, which a Tianshou
policy in the PettingZoo setting never sees, so the learner meets them
through the single-agent env, where its reward arrives in its own step and
``HeldRewards`` has nothing to fix. DQN's own defaults (gamma 0.99, one-step
returns, no target network); where the library has no default, the values of
its DQN tutorial: three hidden layers of 128, Adam at 1e-3, a buffer of
20,000, batches of 64, epsilon 0.1 while training, 10 envs collecting 10 steps
between updates. A decision is one env step, one learner decision; the
collector counts them.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
from gymnasium import spaces
from gymnasium.wrappers import TransformObservation
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.utils.net.common import Net
from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

from allfives_env.gym_env import AllFivesSingleAgentEnv

from ..tianshou_agent import FORMAT
from .bot_mix import BotMix
from .job import Job, Recorder

HIDDEN = [128, 128, 128]
ENVS, PER_COLLECT, BATCH, BUFFER, LR, EPS = 10, 10, 64, 20_000, 1e-3, 0.1

SETTINGS = {
    "env": "TransformObservation(AllFivesSingleAgentEnv(opponents=BotMix(), learner_seat='random', "
    "auto_forced=True)) to {'obs', 'mask'}",
    "hidden_sizes": "128, 128, 128 (tutorial)",
    "lr": "1e-3 (tutorial)",
    "buffer": "20,000 (tutorial)",
    "batch_size": "64 (tutorial)",
    "eps_training": "0.1 (tutorial)",
    "collection": "10 envs, 10 steps per collect, one update per collect (tutorial)",
}


def make_env(reward: str = "win_loss") -> TransformObservation:
    inner = AllFivesSingleAgentEnv(opponents=BotMix(), learner_seat="random", auto_forced=True, reward=reward)
    box = inner.observation_space["observation"]
    space = spaces.Dict({"obs": box, "mask": spaces.MultiBinary(int(inner.action_space.n))})
    return TransformObservation(inner, lambda o: {"obs": o["observation"], "mask": o["action_mask"].astype(bool)},
                                space)  # fmt: skip


def train(job: Job, recorder: Recorder, reward: str = "win_loss") -> int:
    """The baseline's run; ``reward`` is the environment's (the baselines keep its default, ``win_loss``)."""
    torch.manual_seed(job.seed)
    np.random.seed(job.seed)  # Tianshou's exploration draws from numpy's global generator
    envs = DummyVectorEnv([partial(make_env, reward) for _ in range(ENVS)])
    envs.seed(job.seed)
    single = make_env(reward)  # for its spaces
    size = single.observation_space["obs"].shape
    net = Net(state_shape=size, action_shape=single.action_space.n, hidden_sizes=HIDDEN)
    policy = DiscreteQLearningPolicy(model=net, action_space=single.action_space, eps_training=EPS)
    algorithm = DQN(policy=policy, optim=AdamOptimizerFactory(lr=LR))
    collector = Collector(algorithm, envs, VectorReplayBuffer(BUFFER, ENVS), exploration_noise=True)
    collector.reset()
    steps = 0
    while not recorder.finished(steps):
        with policy_within_training_step(algorithm.policy):
            steps += collector.collect(n_step=PER_COLLECT).n_collected_steps
            with torch_train_mode(algorithm.policy):
                algorithm.update(buffer=collector.buffer, sample_size=BATCH)
        if recorder.due(steps) or recorder.finished(steps):
            path = recorder.path(steps, ".pt")
            torch.save({"format": FORMAT, "hidden_sizes": HIDDEN, "observation_size": int(np.prod(size)),
                        "state_dict": net.state_dict()}, path)  # fmt: skip
            recorder.save(steps, f"tianshou:{path}")
    return steps
