"""Whether a library baseline learns with the points reward: one trained as the baselines train it, but for the reward.

The baselines train on the environment's default reward, ``win_loss``: one
+1 or -1 when a match ends, after about 55 of the learner's decisions.
``reward="points"`` pays every decision what the seats scored since the
learner's last one (its side's points minus the other's), so the signal
comes at every decision. This trains sb3-contrib's MaskablePPO or Tianshou's
DQN (the Gymnasium env against the bot mix) or RLlib's PPO (the PettingZoo
env in self-play; like every Ray run here, inside a network namespace with
only loopback up) as ``python -m agents.baselines --only ALGORITHM`` does
(the library's defaults, one torch thread, snapshots at the same marks)
with the reward chosen, and measures every snapshot with the baselines'
learning curve: the duplicate harness against random, greedy and heuristic
on the held-out seeds. It prints one row a snapshot and writes them to
curve.csv.

    python research/baseline_reward.py --seed 1 --budget 200000 --points 4 --matches 20 --out results/reward/seed1
    python research/baseline_reward.py --algorithm tianshou_dqn --seed 1 --out results/reward/dqn1
"""

from __future__ import annotations

import argparse
import csv
import importlib
from pathlib import Path

import torch

from agents.baselines.algorithms import ALGORITHMS
from agents.baselines.evaluation import Budgets, curve_rows
from agents.baselines.job import Job, Recorder
from allfives_env.common import REWARD_MODES
from allfives_env.help_text import plain_help

#: The baselines that learn from the project's environment's own rewards (RLCard's DMC and NFSP take payoffs).
LEARNERS = ("maskable_ppo", "tianshou_dqn", "rllib_ppo")


def main() -> None:
    p = argparse.ArgumentParser(description=plain_help(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algorithm", choices=LEARNERS, default=LEARNERS[0], help="the baseline to train")
    p.add_argument("--seed", type=int, default=1, help="the run's seed (the baselines use 1, 2 and 3)")
    p.add_argument("--reward", choices=REWARD_MODES, default="points", help="the environment's reward")
    p.add_argument("--budget", type=int, default=200_000, help="learner decisions to train on")
    p.add_argument("--points", type=int, default=4, help="snapshots, at equal parts of the budget")
    p.add_argument("--matches", type=int, default=20, help="duplicate matches a snapshot plays each opponent")
    p.add_argument("--workers", type=int, default=1, help="harness worker processes")
    p.add_argument("--out", type=Path, default=Path("results/reward"), help="the run's folder")
    args = p.parse_args()
    torch.set_num_threads(1)  # as the baselines run it
    runner = importlib.import_module(ALGORITHMS[args.algorithm].runner)
    job = Job(args.algorithm, args.seed, args.budget, args.points, args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    recorder = Recorder(job, settings={**runner.SETTINGS, "reward": args.reward})
    recorder.write(runner.train(job, recorder, reward=args.reward))
    budgets = Budgets(curve_matches=args.matches, workers=args.workers)
    tag = {"algorithm": args.algorithm, "reward": args.reward, "seed": args.seed}
    rows = []
    print(f"{args.algorithm}, reward={args.reward}, seed {args.seed}: win rate of each snapshot")
    print("decisions | vs random | vs greedy | vs heuristic")
    for snapshot in recorder.snapshots:
        curve = curve_rows(snapshot.spec, budgets)
        rows += [{**tag, "decisions": snapshot.decisions, **row} for row in curve]
        print(f"{snapshot.decisions:,} | " + " | ".join(f"{r['win_rate']:.1%}" for r in curve), flush=True)
    with open(args.out / "curve.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
