"""RLCard's Deep Monte-Carlo (DMC) on :class:`agents.rlcard_env.AllFivesRLCardEnv`, self-play.

RLCard's ``DMCTrainer`` as the library ships it: actor processes play whole
matches with every seat's current network (epsilon-greedy), each seat's
network learns the final payoff of its decisions, one network per seat. Its
defaults throughout (5 actors, batches of 32 unrolls of 100, RMSprop at
1e-4, five hidden layers of 512), on the CPU.

The trainer stops on the samples its learner has consumed
(``total_frames``), and saves on a timer; to leave a snapshot at each mark of
the budget it runs once per mark, each run resuming from the last one's
``model.tar`` (its ``load_model``), and the actors it leaves running are ended
after each. The decisions counted are those the actors stepped (a shared
counter in the env), which run somewhat past the consumed samples: the
unrolls still in flight when a run ends.
"""

from __future__ import annotations

import datetime
import multiprocessing
import shutil
from multiprocessing.sharedctypes import Synchronized

import torch
from rlcard.agents.dmc_agent import DMCTrainer, file_writer
from torch import multiprocessing as torch_mp

from ..rlcard_env import AllFivesRLCardEnv
from .job import Job, Recorder

XPID = "dmc"

SETTINGS = {
    "env": "AllFivesRLCardEnv({'seed': SEED}, auto_forced=True)",
    "cuda": "'' (the CPU)",
    "total_frames": "each mark of the budget in turn, resuming (load_model=True)",
    "save_interval": "never on the timer: a checkpoint at each run's end",
}


def _metadata_without_git() -> dict:
    """RLCard's run metadata less git's (RLCard asks for the branch and fails on a detached HEAD, as in many
    CI checkouts) and less the process environment (which would go into a file)."""
    started = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")
    return {"date_start": started, "date_end": None, "successful": False, "git": None, "slurm": None, "env": {}}


def end_actors(steps: Synchronized) -> None:
    """End the actor processes the trainer leaves running (it never stops them), holding the step counter's
    lock: an actor ended inside its increment would keep the lock forever, and the next reader would wait."""
    with steps.get_lock():
        for actor in multiprocessing.active_children():
            actor.terminate()
            actor.join()


def train(job: Job, recorder: Recorder) -> int:
    file_writer.gather_metadata = _metadata_without_git
    torch.manual_seed(job.seed)
    steps = torch_mp.get_context("spawn").Value("q", 0)
    env = AllFivesRLCardEnv({"seed": job.seed}, steps=steps, auto_forced=True)
    folder = job.out / "dmc"
    run, frames = folder / XPID, 0
    for mark in job.marks():
        if frames >= mark:  # the last run went past this mark too
            continue
        trainer = DMCTrainer(env, cuda="", load_model=True, xpid=XPID, savedir=str(folder), total_frames=mark,
                             save_interval=10**9)  # fmt: skip
        try:
            trainer.start()
        finally:
            end_actors(steps)
        frames = int(torch.load(run / "model.tar", weights_only=True)["frames"])
        for weights in run.glob("*.pth"):  # RLCard's own copies of the networks, one per checkpoint
            weights.unlink()
        (run / "meta.json").unlink(missing_ok=True)  # RLCard writes the whole process environment there
        path = recorder.path(steps.value, ".tar")
        shutil.copyfile(run / "model.tar", path)
        recorder.save(steps.value, f"dmc:{path}")
    return steps.value
