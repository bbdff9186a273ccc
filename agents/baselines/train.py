"""One training run in its own process: ``python -m agents.baselines.train ALGORITHM --seed S --budget B ...``.

``python -m agents.baselines`` starts one of these per algorithm and seed, so
each library runs alone (its threads, its Ray instance, its actor processes)
and the process tree's memory and wall time are that run's. The project's
PPO is started as ``python -m allfives_train.baseline_run`` instead: the
training layer is never imported from here.

With ``--resume`` a run goes on from the last snapshot in its folder, where
its algorithm can (``Algorithm.resumes``: RLlib PPO and NFSP, the runs that
take hours); a finished run is left as it is.
"""

from __future__ import annotations

import importlib
import sys

from .algorithms import ALGORITHMS, resume_refusal
from .job import Job, Recorder, ResumeError, read_job


def open_run(job: Job, resume: bool, settings: dict) -> Recorder | None:
    """The recorder ``job`` trains with: fresh, or with ``resume`` going on from its folder's snapshots.

    None when the run in the folder is finished. ValueError when it was made for another job, or stopped
    halfway and its algorithm cannot go on from a snapshot.
    """
    if not resume:
        return Recorder(job, settings=dict(settings))
    recorder = Recorder.resume(job, settings)
    if recorder.last is None:
        return recorder
    if recorder.finished(recorder.last.decisions):
        print(f"{job.out}: finished at {recorder.last.decisions:,} decisions; nothing to resume", flush=True)
        return None
    if not ALGORITHMS[job.algorithm].resumes:
        raise ValueError(f"--resume: {resume_refusal(job.algorithm)}")
    print(f"resuming at {recorder.last.decisions:,} decisions, {recorder.last.seconds:,.0f} s", flush=True)
    return recorder


def main(argv: list[str] | None = None) -> int:
    names = [a.name for a in ALGORITHMS.values() if a.runner is not None]
    job, resume = read_job(argv, "python -m agents.baselines.train", names)
    runner = importlib.import_module(ALGORITHMS[job.algorithm].runner)
    try:
        recorder = open_run(job, resume, runner.SETTINGS)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if recorder is None:
        return 0
    try:
        decisions = runner.train(job, recorder)
    except ResumeError as err:
        print(f"error: --resume: {err}", file=sys.stderr)
        return 2
    recorder.write(decisions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
