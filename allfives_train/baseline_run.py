"""The project's PPO self-play as one baseline run: ``python -m agents.baselines --only ppo`` starts this.

The trainer of ``train.py`` with the default config, less what is not PPO:
no imitation warm start (``imitation.teacher=null``), no rounds of policy
iteration (``iteration.rounds=0``), no time limit and no evaluation of its own
(the baselines evaluate every algorithm alike). ``train.total_steps`` is the
budget. It trains one update at a time (``Trainer.run(stop_after=1)``) and
saves the policy each time the count passes a mark of the budget. A decision
is one learning decision as the trainer counts them: a choice made by a seat
the learning policy plays (both seats in self-play), forced moves left out.

    python -m allfives_train.baseline_run ppo --seed 1 --budget 2000000 --points 10 --out baselines/runs/ppo/seed1
"""

from __future__ import annotations

import shutil
import sys

from agents.baselines.job import read_job
from agents.baselines.train import open_run

from .config import load_config
from .trainer import Trainer

#: What the baseline changes in the default config (``--set`` keys of train.py), with ``{budget}`` and ``{seed}``.
OVERRIDES = (
    "imitation.teacher=null",
    "iteration.rounds=0",
    "train.total_steps={budget}",
    "run.seed={seed}",
    "run.max_minutes=null",
    "eval.every=0",
    "eval.matches=1",
    "eval.final_matches=0",
    "train.envs=512",  # the self-play settings its documented figures were measured with (the default's then)
    "train.minibatch=1024",
    "opponents.snapshot_every=4",
)


def main(argv: list[str] | None = None) -> int:
    job, resume = read_job(argv, "python -m allfives_train.baseline_run", ["ppo"])
    overrides = [o.format(budget=job.budget, seed=job.seed) for o in OVERRIDES]
    try:
        recorder = open_run(job, resume, {"overrides": overrides})  # it keeps no training state to go on from
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if recorder is None:
        return 0
    cfg = load_config(None, [*overrides, f"run.dir={job.out}", "run.name=train"])
    trainer = Trainer(cfg, job.out / "train", progress=False)
    try:
        finished = False
        while not finished:
            finished = trainer.run(stop_after=1)
            taken = recorder.snapshots[-1].decisions if recorder.snapshots else None
            if taken != trainer.steps and (recorder.due(trainer.steps) or finished):
                path = recorder.path(trainer.steps, ".pt")
                shutil.copyfile(trainer.save_policy(), path)
                recorder.save(trainer.steps, f"checkpoint:{path}")
    finally:
        trainer.close()
    recorder.write(trainer.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
