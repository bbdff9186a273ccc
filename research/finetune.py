"""PPO from a finished policy, with any agent, such as `search`, among the opponents.

The trainer runs PPO from a fresh network or its warm start, before its rounds
of policy iteration. This script runs it after them instead, from a policy file
such as a shipped checkpoint, to ask whether more self-play, or play against a
stronger opponent than the trainer's baselines, improves a policy that the
rounds already fit. Each update's matches follow the default config's opponent
mix, except a ``--share`` of them, against ``--opponent`` at every other seat.

Two things differ from a fresh run. Policy iteration fits action values (a
score of points / 10), whose softmax is far flatter than the policy's best
play, so every score is first multiplied by ``--sharpen``; and a policy file
has no critic, so the critic first learns alone for ``--critic-updates``
updates while the actor stays as it was. The step size then decays linearly to
0 over ``--steps`` learning decisions, and the run stops at ``--minutes``.

    python research/finetune.py --start agents/checkpoints/default.pt --opponent search --share 0.5 --minutes 40

The policy lands in ``--out`` as ``policy.pt``, for ``checkpoint:PATH``
(``python -m agents.evaluate checkpoint:runs/finetune/policy.pt search --matches 300 --seed 7000000 --workers 2``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from agents.policy_net import CheckpointError, net_from_checkpoint, read_checkpoint
from agents.registry import make_agent
from allfives_env.help_text import plain_help
from allfives_train.config import load_config
from allfives_train.rollout import CURRENT, MatchSpec
from allfives_train.trainer import Trainer


class FinetuneTrainer(Trainer):
    """The trainer, with a share of each update's matches against one more agent at the other side's seats."""

    def __init__(self, cfg: dict, run_dir: Path, opponent: str, share: float) -> None:
        self.opponent, self.share = opponent, share
        super().__init__(cfg, run_dir)

    def _specs(self) -> list[MatchSpec]:
        specs, side_of = super()._specs(), self.rules.side_of
        for i, spec in enumerate(specs):
            if self.rng.random() < self.share:
                side = self.rng.randrange(self.rules.num_sides)
                controls = [CURRENT if side_of[s] == side else make_agent(self.opponent, self.rng.randrange(2**62))
                            for s in range(self.rules.num_players)]  # fmt: skip
                specs[i] = MatchSpec(spec.seed, controls, self.opponent, spec.sample_seed)
        return specs

    def start_from(self, path: str, sharpen: float, critic_updates: int) -> None:
        """The actor from ``path``, its scores sharpened; then the critic alone for ``critic_updates`` updates."""
        self.net.load_state_dict(net_from_checkpoint(read_checkpoint(path), path).state_dict(), strict=False)
        with torch.no_grad():
            self.net.score.weight.mul_(sharpen)
            self.net.score.bias.mul_(sharpen)
        self.imitated = True  # no warm start: the policy file is the start
        actor = [p for name, p in self.net.named_parameters() if not name.startswith("critic.")]
        for p in actor:
            p.requires_grad_(False)
        for k in range(critic_updates):
            row = self.step()
            print(f"critic alone, update {k + 1}: value loss {row['value_loss']:.4f}", flush=True)
        for p in actor:
            p.requires_grad_(True)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.cfg["train"]["lr"], foreach=True)
        self.pool, self.iteration, self.steps = [], 0, 0  # the pool and the step size start with the actor


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=plain_help(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--start", default="agents/checkpoints/default.pt", help="the policy to start from")
    parser.add_argument("--opponent", default="search", help="the agent of the --share of matches (an agent spec)")
    parser.add_argument("--share", type=float, default=0.5, help="share of each update's matches against it")
    parser.add_argument("--minutes", type=float, default=40.0, help="wall minutes of PPO")
    parser.add_argument("--steps", type=int, default=8_000_000, help="learning decisions the step size decays over")
    parser.add_argument("--lr", type=float, default=1e-4, help="Adam step size at the start")
    parser.add_argument("--sharpen", type=float, default=5.0, help="factor on the start's action scores")
    parser.add_argument("--critic-updates", type=int, default=4, help="updates of the critic alone first")
    parser.add_argument("--envs", type=int, default=512, help="matches an update")
    parser.add_argument("--seed", type=int, default=1, help="seeds the matches (not the evaluation seeds)")
    parser.add_argument("--out", default="runs/finetune")
    args = parser.parse_args(argv)
    if not 0 <= args.share <= 1:
        parser.error(f"--share {args.share} is not allowed; allowed: 0 to 1")
    try:
        make_agent(args.opponent, 0)  # a bad spec fails here, before any training
        start = read_checkpoint(args.start)
    except (ValueError, CheckpointError) as error:
        parser.error(str(error))
    out = Path(args.out)
    cfg = load_config(
        None,
        [
            f"run.name={out.name}",
            f"run.dir={out.parent}",
            f"run.seed={args.seed}",
            f"run.max_minutes={args.minutes}",
            *(f"game.{key}={json.dumps(value)}" for key, value in start["rules"].items()),  # its table, opening too
            f"model.hidden={start['model']['hidden']}",
            f"model.action_hidden={start['model']['action_hidden']}",
            "imitation.teacher=null",
            "iteration.rounds=0",
            f"train.total_steps={args.steps}",
            f"train.lr={args.lr}",
            f"train.envs={args.envs}",
            "eval.every=10",
            "eval.baselines=[heuristic]",
            "eval.final_matches=0",
        ],
    )
    trainer = FinetuneTrainer(cfg, out, args.opponent, args.share)
    try:
        trainer.start_from(args.start, args.sharpen, args.critic_updates)
        trainer.run()
    finally:
        trainer.close()
    print(f"policy: {trainer.save_policy()}")


if __name__ == "__main__":
    main()
