"""Baselines for benchmarking algorithms: the standard algorithms trained on two-player pagat under one budget.

``python -m agents.baselines`` (:mod:`.__main__`) trains each algorithm of
:data:`.algorithms.ALGORITHMS` for the same number of environment decisions
and measures it with the project's own tools: learning curves through the
duplicate harness on held-out seeds, the benchmark's ladder, and
exploitability. One module per library holds its runner; docs/baselines.md
is the page of results.
"""

from .algorithms import ALGORITHMS, Algorithm
from .job import Job, Recorder, read_record
