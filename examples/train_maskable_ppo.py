"""Train sb3-contrib's MaskablePPO on the single-agent environment, then measure its win rate.

    pip install -e ".[sb3]"
    python examples/train_maskable_ppo.py --timesteps 50000 --opponent random --matches 200

The learner's seat is drawn each match; the mask comes from ``env.action_masks()``,
so the policy never chooses an illegal action. The win rate is measured against
``random`` and ``greedy``, next to that of a uniformly random player as a floor.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sb3_contrib import MaskablePPO

from allfives_env.gym_env import AllFivesSingleAgentEnv


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=50_000, help="learner decisions to train on")
    parser.add_argument(
        "--opponent", default="random", help="bot for the other seats while training (random, greedy, ...)"
    )
    parser.add_argument("--num-players", type=int, default=2)
    parser.add_argument("--rules", default="pagat", choices=("pagat", "fives"))
    parser.add_argument("--reward", default="points", choices=("win_loss", "points"))
    parser.add_argument("--matches", type=int, default=200, help="matches per evaluation opponent")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", help="where to save the trained model (.zip)")
    return parser.parse_args(argv)


def win_rate(model: MaskablePPO | None, opponent: str, args: argparse.Namespace) -> float:
    """Share of ``args.matches`` whole matches the learner wins (a shared win counts half)."""
    env = AllFivesSingleAgentEnv(
        num_players=args.num_players, rules=args.rules, opponents=opponent, learner_seat="random"
    )
    rng = np.random.default_rng(args.seed + 1)
    score = 0.0
    for match in range(args.matches):
        obs, _ = env.reset(seed=10_000 + match)
        terminated = False
        while not terminated:
            mask = env.action_masks()
            if model is None:
                action = int(rng.choice(np.flatnonzero(mask)))
            else:
                action, _ = model.predict(obs, action_masks=mask, deterministic=True)
            obs, reward, terminated, _, _ = env.step(int(action))
        score += {1.0: 1.0, 0.0: 0.5, -1.0: 0.0}[reward]
    return score / args.matches


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    env = AllFivesSingleAgentEnv(
        num_players=args.num_players,
        rules=args.rules,
        opponents=args.opponent,
        learner_seat="random",
        reward=args.reward,
    )
    env.reset(seed=args.seed)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=1024, batch_size=256, seed=args.seed, verbose=0)
    start = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    print(f"trained {args.timesteps} steps against {args.opponent} in {time.perf_counter() - start:.0f} s")
    if args.save:
        model.save(args.save)
    print(f"win rate over {args.matches} matches ({args.num_players} players, {args.rules}):")
    print(f"{'opponent':<10} {'trained':>8} {'random play':>12}")
    for opponent in ("random", "greedy"):
        print(f"{opponent:<10} {win_rate(model, opponent, args):>8.3f} {win_rate(None, opponent, args):>12.3f}")


if __name__ == "__main__":
    main()
