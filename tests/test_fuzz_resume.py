"""Kill training at random moments, resume, and compare every part of the saved state with an uninterrupted run.

Each trial starts the short tiny-config run in a child process and sends it
SIGKILL a random time after its trainer is built, drawn over the length of an
uninterrupted run's training, so a kill can land while it imitates, plays,
learns, labels or fits a round of policy iteration, writes a checkpoint, a
CSV row or TensorBoard events, cuts the logs on a resume, or runs the final
evaluation. Then it resumes, the resume is killed at a random moment too, and
the run finally finishes. A kill before the first checkpoint is followed by
the original command, as a person would rerun it. The finished run must equal
the uninterrupted one in every saved part: weights, optimizer state, opponent
pool, every random generator, counters and config, the policy file, the CSV
rows, the TensorBoard scalars (in the files and as TensorBoard shows them),
the policy-iteration labels and the final evaluation table; no temporary file
may be left.

Children are forked from a server process that has imported the trainer
but never run torch, so each one starts in milliseconds. Three trials run by
default; ``ALLFIVES_FUZZ_KILLS=40 python -m pytest tests/test_fuzz_resume.py``
runs more, ``ALLFIVES_FUZZ_SEED`` picks other delays.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import pytest
from train_snapshots import TINY, run_differences, run_train

import train

KILLS = int(os.environ.get("ALLFIVES_FUZZ_KILLS", "3"))
SEED = int(os.environ.get("ALLFIVES_FUZZ_SEED", "8"))
#: Short, but with every stage: imitation, snapshots into the pool, quick evaluations, a round of policy
#: iteration and the final evaluation.
SHORT = ["--config", TINY, "--set", "train.total_steps=300", "--set", "eval.final_matches=1",
         "--set", "eval.baselines=[random, greedy]", "--set", "iteration.rounds=1", "--set", "iteration.matches=3",
         "--set", "iteration.epochs=1"]  # fmt: skip
PRELOAD = ["train", "allfives_train.trainer", "allfives_train.plot", "agents.evaluate", "torch.utils.tensorboard"]


@pytest.fixture(scope="module")
def forker():
    """Starts ``train.main`` in children forked from a server that imported the trainer once."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def start(context, argv: list) -> multiprocessing.Process:
    child = context.Process(target=train.main, args=([*map(str, argv), "--no-progress"],))
    child.start()
    return child


def config_mark(run: Path) -> tuple[int, int] | None:
    """Which ``config.yaml`` is there: a run rewrites it (a new file) once its trainer is built."""
    try:
        info = (run / "config.yaml").stat()
    except FileNotFoundError:
        return None
    return info.st_ino, info.st_mtime_ns


def run_and_kill(context, argv: list, run: Path, delay: float | None) -> tuple[bool, float]:
    """Run ``train.py ARGV`` in a child; SIGKILL it ``delay`` seconds after its trainer is built (None: never).

    Timing from the trainer's start, not the fork, spreads the kills over the
    training itself however long the imports take. Returns (killed, seconds from
    the trainer's start to the end).
    """
    before = config_mark(run)
    child = start(context, argv)
    while child.is_alive() and config_mark(run) == before:
        time.sleep(0.002)
    began = time.perf_counter()
    child.join(delay)
    killed = child.is_alive()
    if killed:
        try:
            os.kill(child.pid, signal.SIGKILL)
        except ProcessLookupError:  # it finished between the check and the signal
            killed = False
    child.join()
    assert killed or child.exitcode == 0, f"train.py {argv} exited with {child.exitcode}"
    return killed, time.perf_counter() - began


@pytest.fixture(scope="module")
def reference(forker, tmp_path_factory) -> tuple[Path, float]:
    """The uninterrupted run, played in a child like the killed ones, and how long its training took."""
    base = tmp_path_factory.mktemp("reference")
    killed, seconds = run_and_kill(forker, [*SHORT, "--set", f"run.dir={base}"], base / "tiny", delay=None)
    assert not killed
    return base / "tiny", seconds


@pytest.mark.parametrize("trial", range(KILLS))
def test_killed_and_resumed_at_random_moments_equals_an_uninterrupted_run(forker, reference, tmp_path, trial):
    straight, seconds = reference
    rng = random.Random(f"{SEED}-{trial}")
    fresh = [*SHORT, "--set", f"run.dir={tmp_path}"]
    run = tmp_path / "tiny"
    delays, finished = [], False
    for _ in range(2):  # the first run, then its resume, each killed at a random moment
        delay = rng.uniform(0.0, 1.1 * seconds)
        delays.append(round(delay, 3))
        argv = ["--resume", run] if (run / "checkpoint.pt").exists() else fresh
        killed, _ = run_and_kill(forker, argv, run, delay)
        if not killed:
            finished = True
            break
    if not finished:
        argv = ["--resume", run] if (run / "checkpoint.pt").exists() else fresh
        assert run_train(*argv) == 0
    assert run_differences(straight, run) == [], f"killed {delays} s into training (seed {SEED}, trial {trial})"
