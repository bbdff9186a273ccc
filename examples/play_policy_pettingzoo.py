"""Play the shipped policy through the PettingZoo environment, with nothing but its observations.

    python examples/play_policy_pettingzoo.py --opponent greedy --matches 20

The policy seat reads only what ``allfives_env.env(action_features=True)``
gives every agent: ``obs["observation"]``, ``obs["action_mask"]`` and
``obs["action_features"]``; the network scores the legal actions and the loop
plays the best one. The other seat plays a uniformly random legal action
(``random``) or the legal action whose feature row scores the most points
(``greedy``). Seats alternate from match to match; the script prints each
match's final score and the policy's win rate.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import allfives_env
from agents.policy_agent import DEFAULT_CHECKPOINT
from agents.policy_net import PolicyNet, net_from_checkpoint, read_checkpoint
from allfives_env.views.action_features import ACTION_FEATURE_OFFSETS


def policy_action(net: PolicyNet, obs: dict) -> int:
    """The policy's choice: the best logit over the legal actions (illegal ones are never scored)."""
    with torch.no_grad():
        logits = net.logits(
            torch.from_numpy(obs["observation"])[None],
            torch.from_numpy(obs["action_features"])[None],
            torch.from_numpy(obs["action_mask"])[None],
        )
    return int(logits[0].argmax())


def opponent_action(kind: str, obs: dict, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    if kind == "random":
        return int(rng.choice(legal))
    points = obs["action_features"][legal, ACTION_FEATURE_OFFSETS["points"]]
    return int(legal[points.argmax()])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT), help="a policy file written by train.py")
    parser.add_argument("--opponent", default="greedy", choices=("random", "greedy"))
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    net = net_from_checkpoint(read_checkpoint(args.checkpoint), args.checkpoint).eval()
    rng = np.random.default_rng(args.seed)
    env = allfives_env.env(action_features=True)  # two-player pagat, as the shipped policy was trained
    wins = 0.0
    for match in range(args.matches):
        mine = f"player_{match % 2}"
        env.reset(seed=args.seed + match)
        for agent in env.agent_iter():
            obs, _, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(policy_action(net, obs) if agent == mine else opponent_action(args.opponent, obs, rng))
        winners = [f"player_{w}" for w in info["winners"]]  # two players: side i is seat i
        wins += (1.0 / len(winners)) if mine in winners else 0.0
        print(f"match {match + 1}: policy as {mine}, scores {info['scores']}, winners {', '.join(winners)}")
    print(f"policy vs {args.opponent}: won {wins:g} of {args.matches} matches ({100 * wins / args.matches:.0f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
