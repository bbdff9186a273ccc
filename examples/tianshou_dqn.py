"""Train a Tianshou DQN seat against random seats on the PettingZoo environment, then evaluate it.

    pip install -e ".[ray]"       # brings tianshou
    python examples/tianshou_dqn.py --steps 40000 --matches 100

Tianshou's ``PettingZooEnv`` makes one row per move and gives each seat the
reward of the rows where it moved. Most matches end on the winner's move,
so without help the loser's -1 is never seen. The env is therefore wrapped
in :class:`allfives_env.wrappers.HeldRewards` (each seat is paid what it
earned since its previous move in its next move's row, and every other seat
gets one last single-action turn when the match ends, which pays its
outcome) and :class:`~allfives_env.wrappers.FloatObservations`.

Seat ``player_0`` learns (a masked DQN); the others play Tianshou's masked
random policy. Rewards are the env's ``points`` mode: zero-sum points per
step over the target, which add up over a match to the seat's margin over
the other sides divided by the target (no extra reward for winning),
discounted with a short horizon: Tianshou's next
observation of a row is the next seat's, so long bootstrapping would mix
seats. The trained network then plays every seat of duplicate matches
against ``random`` through the harness (``ObservationAgent``).
"""

from __future__ import annotations

import argparse
import logging
import sys

import numpy as np
import torch
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.utils.net.common import Net
from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

import allfives_env
from agents.callable_agent import ObservationAgent
from agents.evaluate import evaluate
from agents.registry import make_agent
from allfives_env.wrappers import FloatObservations, HeldRewards

LEARNER = "player_0"
# Episode returns here are one per seat; Tianshou's statistics warn about every such vector.
logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)


def make_env(players: int, target: int | None = None, reward: str = "points") -> PettingZooEnv:
    """The environment as Tianshou sees it: held rewards, float observations, the ``points`` reward."""
    inner = allfives_env.env(num_players=players, reward=reward, target=target)
    return PettingZooEnv(HeldRewards(FloatObservations(inner)))


def build(players: int, hidden: int, lr: float, gamma: float, seed: int):
    """The multi-agent algorithm (DQN for ``player_0``, random elsewhere) and the DQN's Q network."""
    torch.manual_seed(seed)
    env = make_env(players)
    space = env.observation_space["observation"]
    net = Net(state_shape=space.shape, action_shape=env.action_space.n, hidden_sizes=[hidden, hidden])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=1.0)
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=lr), gamma=gamma, target_update_freq=200)
    others = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in range(players - 1)]
    return MultiAgentOffPolicyAlgorithm(algorithms=[dqn, *others], env=env), dqn, net


def train(players: int = 2, steps: int = 40_000, envs: int = 8, hidden: int = 128, lr: float = 1e-3,
          gamma: float = 0.5, batch: int = 128, seed: int = 0, log=print) -> torch.nn.Module:  # fmt: skip
    """Collect ``steps`` environment steps (every seat's) with epsilon decaying to 0.05; return the Q network."""
    np.random.seed(seed)  # the random seats draw from numpy's global generator
    algorithm, dqn, net = build(players, hidden, lr, gamma, seed)
    train_envs = DummyVectorEnv([lambda: make_env(players) for _ in range(envs)])
    train_envs.seed(seed)
    collector = Collector(algorithm, train_envs, VectorReplayBuffer(50_000, envs), exploration_noise=True)
    collector.reset()
    per_round = 16 * envs
    rounds = max(1, steps // per_round)
    returns: list[float] = []
    for r in range(rounds):
        dqn.policy.set_eps_training(max(0.05, 1.0 - r / (0.6 * rounds)))
        with policy_within_training_step(algorithm.policy):
            stats = collector.collect(n_step=per_round)
            with torch_train_mode(algorithm.policy):
                for _ in range(per_round // 32):
                    algorithm.update(buffer=collector.buffer, sample_size=batch)
        if stats.n_collected_episodes:
            returns += np.asarray(stats.returns).reshape(-1, players)[:, 0].tolist()
        if log and (r + 1) % max(1, rounds // 10) == 0:
            recent = returns[-50:]
            mean = f"{np.mean(recent):+.2f}" if recent else "n/a"
            log(f"steps {(r + 1) * per_round:,}: {len(returns)} matches, learner return (last 50) {mean}")
    net.eval()
    return net


def greedy_policy(net: torch.nn.Module):
    """``(observation, action_mask) -> action``: the legal action with the highest Q value."""

    def act(observation: np.ndarray, mask: np.ndarray) -> int:
        with torch.no_grad():
            q, _ = net(torch.from_numpy(observation.astype(np.float32))[None])
        q = q[0].numpy()
        legal = np.flatnonzero(mask)
        return int(legal[int(q[legal].argmax())])

    return act


def evaluate_net(net: torch.nn.Module, players: int, matches: int, seed: int = 0, opponent: str = "random"):
    """Duplicate matches of the network (as ``tianshou-dqn``) against ``opponent`` in every other seat."""
    policy = greedy_policy(net)

    def factory(spec: str, agent_seed: int | None = None):
        if spec == "tianshou-dqn":
            agent = ObservationAgent(policy, seed=agent_seed)
            agent.name = spec
            return agent
        return make_agent(spec, agent_seed)

    lineup = ["tianshou-dqn"] + [opponent] * (players - 1)
    return evaluate(lineup, matches, num_players=players, seed=seed, workers=1, progress=False,
                    agent_factory=factory)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2, choices=(2, 3))
    parser.add_argument("--steps", type=int, default=40_000, help="environment steps to collect (all seats)")
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--gamma", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--matches", type=int, default=100, help="duplicate matches against random afterwards")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    net = train(args.players, args.steps, args.envs, args.hidden, gamma=args.gamma, seed=args.seed)
    print(evaluate_net(net, args.players, args.matches, seed=args.seed + 1).markdown(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
