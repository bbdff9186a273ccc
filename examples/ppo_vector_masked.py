"""Masked PPO in one file on the vector environment: one learning seat per table against a bot, in torch.

    pip install torch==2.13.0 && pip install -e ".[train]"
    python examples/ppo_vector_masked.py --total-steps 200000 --opponent random

The environment is agents.gym_vector.AllFivesVectorEnv, a gymnasium.vector.VectorEnv
over the batched engine: every step is one learner decision at each of
--num-envs tables, the opponent's moves played in between. The policy scores
each of the 114 actions from the observation and that action's feature row,
puts minus infinity on the illegal ones and samples from the softmax; a value
head reads the observation. Training is PPO: rollouts of --num-steps steps,
advantages by GAE, the clipped objective, a few epochs of minibatches.
Rewards are the points mode (zero-sum points over the target), so every
scoring move is felt at once. The env autoresets in the same step
(Gymnasium's SAME_STEP mode): the observation after a finished episode is
already the next episode's first, and the termination flag says where to cut
the returns.

Before and after training the policy's argmax (the legal action of highest
score) plays --eval-matches whole matches against --opponent at a fresh
vector env, the learner's seat drawn per match; the script prints its win
rate with a 95% interval. --harness-matches also plays the trained policy
through the project's duplicate-match harness (python -m agents.evaluate).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import torch
from torch import nn

from agents.base import Agent
from agents.evaluation import evaluate, wilson_interval
from agents.gym_vector import AllFivesVectorEnv
from agents.registry import make_agent
from allfives_env.core import NUM_ACTIONS, SeatView
from allfives_env.views.action_features import action_features
from allfives_env.views.observation import encode_observation


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total-steps", type=int, default=200_000, help="learner decisions to train on, all tables")
    parser.add_argument("--num-envs", type=int, default=64, help="tables stepped together")
    parser.add_argument("--num-steps", type=int, default=64, help="steps per table in each rollout")
    parser.add_argument("--epochs", type=int, default=4, help="passes over each rollout")
    parser.add_argument("--minibatches", type=int, default=4, help="minibatches per pass")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate, annealed to 0")
    parser.add_argument("--gamma", type=float, default=0.99, help="discount per learner decision")
    parser.add_argument("--gae-lambda", type=float, default=0.95)
    parser.add_argument("--clip", type=float, default=0.2, help="the ratio's clipping range")
    parser.add_argument("--ent-coef", type=float, default=0.01, help="weight of the entropy bonus")
    parser.add_argument("--vf-coef", type=float, default=0.5, help="weight of the value loss")
    parser.add_argument("--max-grad-norm", type=float, default=0.5)
    parser.add_argument("--hidden", type=int, default=128, help="width of the layers")
    parser.add_argument("--opponent", default="random", help="the bot at the other seats (random, greedy, ...)")
    parser.add_argument("--num-players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--rules", default="pagat", choices=("pagat", "fives"))
    parser.add_argument("--eval-matches", type=int, default=400, help="matches of each evaluation")
    parser.add_argument("--harness-matches", type=int, default=0, help="duplicate matches through the harness after")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    return parser.parse_args(argv)


class Policy(nn.Module):
    """Logits per action from (observation, that action's features); a value from the observation."""

    def __init__(self, obs_high: np.ndarray, feature_high: np.ndarray, hidden: int) -> None:
        super().__init__()
        self.register_buffer("obs_scale", 1.0 / torch.as_tensor(np.maximum(obs_high, 1), dtype=torch.float32))
        column_high = np.maximum(feature_high.reshape(-1, feature_high.shape[-1]).max(axis=0), 1)
        self.register_buffer("feature_scale", 1.0 / torch.as_tensor(column_high, dtype=torch.float32))
        width = column_high.size
        self.body = nn.Sequential(nn.Linear(obs_high.size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.scorer = nn.Sequential(nn.Linear(hidden + width, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.value = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, obs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(masked logits (B, 114), legal mask (B, 114) bool, values (B,))."""
        state = self.body(obs["observation"].float() * self.obs_scale)
        legal = obs["action_mask"].bool()
        rows, actions = legal.nonzero(as_tuple=True)  # only legal actions are scored: a few of the 114 per row
        features = obs["action_features"][rows, actions].float() * self.feature_scale
        scores = self.scorer(torch.cat([state[rows], features], dim=-1)).squeeze(-1)
        logits = torch.full(legal.shape, float("-inf")).index_put((rows, actions), scores)
        return logits, legal, self.value(state).squeeze(-1)


def log_probs_and_entropy(logits: torch.Tensor, legal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities of every action (-inf where illegal) and the entropy over the legal ones."""
    logp = torch.log_softmax(logits, dim=-1)
    finite = logp.masked_fill(~legal, 0.0)  # 0 * -inf would be NaN, in the loss and in its gradient
    entropy = -(logp.exp() * finite).sum(-1)
    return logp, entropy


def as_tensors(obs: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    return {key: torch.from_numpy(np.asarray(value)) for key, value in obs.items()}


def make_env(args: argparse.Namespace, num_envs: int, reward: str) -> AllFivesVectorEnv:
    return AllFivesVectorEnv(num_envs, num_players=args.num_players, rules=args.rules, opponents=args.opponent,
                             learner_seat="random", reward=reward, action_features=True)  # fmt: skip


def win_rate(policy: Policy, args: argparse.Namespace, seed: int) -> tuple[float, float, float]:
    """The share of --eval-matches matches the policy's argmax wins (a shared win counts half), with its 95% interval.

    One match per table: each table's first episode counts, whatever it plays after.
    """
    matches = args.eval_matches
    env = make_env(args, matches, "win_loss")
    obs, _ = env.reset(seed=seed)
    result = np.full(matches, np.nan)
    while np.isnan(result).any():
        with torch.no_grad():
            logits, _, _ = policy(as_tensors(obs))
        obs, reward, terminated, _, _ = env.step(logits.argmax(-1).numpy())
        first = terminated & np.isnan(result)
        result[first] = reward[first]
    env.close()
    score = float(np.sum((result + 1) / 2))  # +1 a win, 0 a shared win (a half), -1 a loss
    low, high = wilson_interval(score, matches)
    return score / matches, low, high


def train(policy: Policy, args: argparse.Namespace) -> int:
    """PPO on rollouts of the vector env; prints a line per tenth of the run and returns the steps taken."""
    envs = make_env(args, args.num_envs, "points")
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr, eps=1e-5)
    steps, tables = args.num_steps, args.num_envs
    updates = max(1, args.total_steps // (steps * tables))
    obs, _ = envs.reset(seed=args.seed)
    starts = np.zeros(tables, dtype=bool)  # whether obs opens an episode (the previous step ended one)
    stored = {key: torch.zeros((steps, *value.shape), dtype=torch.int8) for key, value in obs.items()}
    actions = torch.zeros((steps, tables), dtype=torch.long)
    old_logp, values, rewards, dones = (torch.zeros((steps, tables)) for _ in range(4))
    returns_done: list[float] = []  # the returns of the episodes that ended in this tenth
    episode_return = np.zeros(tables)
    batch = steps * tables
    minibatch = batch // args.minibatches
    for update in range(updates):
        for group in optimizer.param_groups:
            group["lr"] = args.lr * (1.0 - update / updates)
        for t in range(steps):
            tensors = as_tensors(obs)
            for key, array in tensors.items():
                stored[key][t] = array
            dones[t] = torch.from_numpy(starts.astype(np.float32))
            with torch.no_grad():
                logits, legal, value = policy(tensors)
            chosen = torch.distributions.Categorical(logits=logits).sample()
            actions[t], values[t] = chosen, value
            old_logp[t] = torch.log_softmax(logits, -1).gather(1, chosen[:, None]).squeeze(1)
            obs, reward, terminated, truncated, _ = envs.step(chosen.numpy())
            rewards[t] = torch.from_numpy(reward.astype(np.float32))
            starts = terminated | truncated
            episode_return += reward
            returns_done.extend(episode_return[starts].tolist())
            episode_return[starts] = 0.0
        with torch.no_grad():
            _, _, next_value = policy(as_tensors(obs))
        advantages = torch.zeros((steps, tables))
        running = torch.zeros(tables)
        following, following_start = next_value, torch.from_numpy(starts.astype(np.float32))
        for t in reversed(range(steps)):  # GAE: a step whose next observation opens an episode does not bootstrap
            carry = 1.0 - following_start
            delta = rewards[t] + args.gamma * following * carry - values[t]
            running = delta + args.gamma * args.gae_lambda * carry * running
            advantages[t] = running
            following, following_start = values[t], dones[t]
        targets = advantages + values
        flat = {key: array.reshape(batch, *array.shape[2:]) for key, array in stored.items()}
        flat_actions, flat_logp = actions.reshape(batch), old_logp.reshape(batch)
        flat_advantages, flat_targets = advantages.reshape(batch), targets.reshape(batch)
        for _ in range(args.epochs):
            order = torch.randperm(batch)
            for start in range(0, batch - minibatch + 1, minibatch):
                index = order[start : start + minibatch]
                logits, legal, value = policy({key: array[index] for key, array in flat.items()})
                logp, entropy = log_probs_and_entropy(logits, legal)
                new_logp = logp.gather(1, flat_actions[index, None]).squeeze(1)
                advantage = flat_advantages[index]
                advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
                ratio = (new_logp - flat_logp[index]).exp()
                clipped = ratio.clamp(1.0 - args.clip, 1.0 + args.clip)
                policy_loss = -torch.min(ratio * advantage, clipped * advantage).mean()
                value_loss = 0.5 * (value - flat_targets[index]).pow(2).mean()
                loss = policy_loss + args.vf_coef * value_loss - args.ent_coef * entropy.mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(policy.parameters(), args.max_grad_norm)
                optimizer.step()
        if (update + 1) % max(1, updates // 10) == 0 or update + 1 == updates:
            mean = f"{np.mean(returns_done):+.3f}" if returns_done else "-"
            print(f"step {(update + 1) * batch:>8,}  episodes ended {len(returns_done):>5}  mean points return {mean}")
            returns_done = []
    envs.close()
    return updates * batch


class TorchPolicyAgent(Agent):
    """The trained policy as an ``Agent`` for the harness: the legal action of highest logit."""

    name = "ppo-vector"

    def __init__(self, policy: Policy, seed: int | None = None) -> None:
        super().__init__(seed)
        self.policy = policy

    def act(self, view: SeatView) -> int:
        obs = {"observation": encode_observation(view)[None], "action_features": action_features(view)[None]}
        mask = np.zeros((1, NUM_ACTIONS), dtype=np.int8)
        mask[0, list(view.legal)] = 1
        obs["action_mask"] = mask
        with torch.no_grad():
            logits, _, _ = self.policy(as_tensors(obs))
        return int(logits.argmax(-1))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    space = make_env(args, 1, "points").single_observation_space
    policy = Policy(space["observation"].high, space["action_features"].high, args.hidden)
    eval_seed = 10**9 + args.seed  # the same matches before and after, none of them trained on
    rate, low, high = win_rate(policy, args, eval_seed)
    print(f"before training: win rate {rate:.3f} [{low:.3f}, {high:.3f}] over {args.eval_matches} matches "
          f"against {args.opponent}")  # fmt: skip
    start = time.perf_counter()
    steps = train(policy, args)
    print(f"trained {steps:,} steps in {time.perf_counter() - start:.0f} s")
    rate, low, high = win_rate(policy, args, eval_seed)
    print(f"after training: win rate {rate:.3f} [{low:.3f}, {high:.3f}] over {args.eval_matches} matches "
          f"against {args.opponent}")  # fmt: skip
    if args.harness_matches:
        policy_agent = TorchPolicyAgent(policy)

        def factory(spec: str, seed: int | None = None) -> Agent:
            return policy_agent if spec == policy_agent.name else make_agent(spec, seed)

        lineup = [policy_agent.name] + [args.opponent] * (args.num_players - 1)
        result = evaluate(lineup, args.harness_matches, rules=args.rules, num_players=args.num_players,
                          seed=args.seed + 1, workers=1, progress=False, agent_factory=factory)  # fmt: skip
        print(result.markdown(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
