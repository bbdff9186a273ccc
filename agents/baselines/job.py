"""One training run of one algorithm: what it is asked for, and the snapshots it leaves at points of the budget.

A run trains until its library has stepped ``budget`` decisions and saves a
snapshot each time the count passes the next of ``points`` (the budget cut in
equal parts), at the first boundary of the library's own training loop past
it. Each snapshot is an agent spec the harness can play (``sb3:PATH``,
``checkpoint:PATH``...), recorded with the decisions stepped and the seconds
spent when it was taken. The run's record, ``run.json`` in its folder, is what
the evaluation reads.

A run of an algorithm that can resume (``Algorithm.resumes``) may be
stopped and started again with ``--resume``: it goes on from its last
snapshot, and its clock from the seconds that snapshot was taken at, so the
work after that snapshot, lost with the stop, is neither kept nor counted.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

RECORD = "run.json"


class ResumeError(ValueError):
    """A stopped run that cannot go on: the message names the file and what is wrong with it."""


@dataclass(frozen=True)
class Job:
    """Train ``algorithm`` with ``seed`` for ``budget`` decisions into ``out``, snapshotting at ``points`` parts."""

    algorithm: str
    seed: int
    budget: int
    points: int
    out: Path

    def marks(self) -> list[int]:
        """The decision counts at which a snapshot is due: the budget cut in ``points`` equal parts."""
        return [max(1, self.budget * k // self.points) for k in range(1, self.points + 1)]


@dataclass
class Snapshot:
    decisions: int
    seconds: float
    spec: str


@dataclass
class Recorder:
    """Keeps the clock and the snapshots of one run, and writes ``run.json``."""

    job: Job
    settings: dict = field(default_factory=dict)
    snapshots: list[Snapshot] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    resumed_at: list[int] = field(default_factory=list)  # the decisions each later sitting went on from

    @classmethod
    def resume(cls, job: Job, settings: dict | None = None) -> Recorder:
        """The recorder of ``job``'s run, going on from the snapshots of its ``run.json`` (a fresh one if none).

        ValueError if the record was made for another run (algorithm, seed, budget or points).
        """
        if not (job.out / RECORD).is_file():
            return cls(job, settings=dict(settings or {}))
        record = read_record(job.out)
        asked = {k: v for k, v in asdict(job).items() if k != "out"}  # the folder may have moved
        differ = ", ".join(f"{k} {record['job'].get(k)!r} (asked: {v!r})" for k, v in asked.items()
                           if record["job"].get(k) != v)  # fmt: skip
        if differ:
            raise ValueError(f"{job.out / RECORD}: made for another run ({differ}); --resume goes on only with "
                             "the algorithm, seed, budget and points it was started with")  # fmt: skip
        last = record["snapshots"][-1]
        return cls(job, settings=dict(settings or {}), snapshots=record["snapshots"],
                   started=time.perf_counter() - last.seconds,
                   resumed_at=[*record.get("resumed_at", []), last.decisions])  # fmt: skip

    @property
    def last(self) -> Snapshot | None:
        """The latest snapshot: where a resumed run goes on from (None: the run starts afresh)."""
        return self.snapshots[-1] if self.snapshots else None

    def due(self, decisions: int) -> bool:
        """Whether ``decisions`` has passed a mark that no snapshot covers yet."""
        covered = self.last.decisions if self.last else 0
        return any(covered < mark <= decisions for mark in self.job.marks())

    def finished(self, decisions: int) -> bool:
        return decisions >= self.job.budget

    def path(self, decisions: int, suffix: str = "") -> Path:
        """Where the snapshot at ``decisions`` goes (the folder is made)."""
        folder = self.job.out / "snapshots"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{decisions:010d}{suffix}"

    def save(self, decisions: int, spec: str) -> None:
        self.snapshots.append(Snapshot(decisions, time.perf_counter() - self.started, spec))
        self.write(decisions)
        print(self.progress(), file=sys.stderr, flush=True)  # NFSP's runner silences stdout

    def progress(self) -> str:
        """One line for the run's log: how far it is, and, at its pace so far, how long it has left.

        Full-budget runs take hours and their libraries log little that says how far they are.
        """
        last = self.snapshots[-1]
        share = min(last.decisions / self.job.budget, 1.0)
        line = f"snapshot: {last.decisions:,} of {self.job.budget:,} decisions ({share:.0%}) in {last.seconds:,.0f} s"
        if share < 1.0:
            line += f"; at this pace about {_duration(last.seconds * (1 - share) / share)} more"
        return line

    def write(self, decisions: int) -> Path:
        record = {"job": {**asdict(self.job), "out": str(self.job.out)}, "decisions": decisions,
                  "seconds": time.perf_counter() - self.started, "settings": self.settings,
                  "snapshots": [asdict(s) for s in self.snapshots], "resumed_at": self.resumed_at}  # fmt: skip
        path = self.job.out / RECORD
        path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        return path


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"


def read_record(folder: Path) -> dict:
    """The ``run.json`` a run left in ``folder``; ValueError naming the file when it is missing or unreadable."""
    path = Path(folder) / RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        record["snapshots"] = [Snapshot(**s) for s in record["snapshots"]]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: no readable run record ({err})") from None
    if not record["snapshots"]:
        raise ValueError(f"{path}: the run left no snapshot")
    return record


def read_job(argv: list[str] | None, prog: str, algorithms: list[str]) -> tuple[Job, bool]:
    """The job a training process is started with, ``ALGORITHM --seed S --budget B --points P --out DIR``, and
    whether to go on from the run already in ``DIR`` (``--resume``)."""
    import argparse

    p = argparse.ArgumentParser(prog=prog, description="Train one baseline algorithm, leaving snapshots and run.json.")
    p.add_argument("algorithm", choices=algorithms)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--budget", type=int, required=True, help="environment decisions to train on")
    p.add_argument("--points", type=int, required=True, help="snapshots, at equal parts of the budget")
    p.add_argument("--out", type=Path, required=True, help="the run's folder")
    p.add_argument("--resume", action="store_true", help="go on from the last snapshot of the run in --out")
    args = p.parse_args(argv)
    if args.budget < 1 or args.points < 1 or args.seed < 0:
        p.error("--budget and --points must be positive whole numbers, --seed a whole number >= 0")
    args.out.mkdir(parents=True, exist_ok=True)
    return Job(args.algorithm, args.seed, args.budget, args.points, args.out), args.resume
