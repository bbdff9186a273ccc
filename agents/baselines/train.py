"""One training run in its own process: ``python -m agents.baselines.train ALGORITHM --seed S --budget B ...``.

``python -m agents.baselines`` starts one of these per algorithm and seed, so
each library runs alone (its threads, its Ray instance, its actor processes)
and the process tree's memory and wall time are that run's. The project's
PPO is started as ``python -m allfives_train.baseline_run`` instead: the
training layer is never imported from here.
"""

from __future__ import annotations

import importlib
import sys

from .algorithms import ALGORITHMS
from .job import Recorder, read_job


def main(argv: list[str] | None = None) -> int:
    names = [a.name for a in ALGORITHMS.values() if a.runner is not None]
    job = read_job(argv, "python -m agents.baselines.train", names)
    runner = importlib.import_module(ALGORITHMS[job.algorithm].runner)
    recorder = Recorder(job, settings=dict(runner.SETTINGS))
    decisions = runner.train(job, recorder)
    recorder.write(decisions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
