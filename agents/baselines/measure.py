"""Run a training process and measure it: wall time and the peak memory of its whole process tree.

Libraries start processes of their own (RLCard's actors, Ray's raylet and
workers, the trainer's rollout workers), so the memory figure is the largest
sum of resident memory over the process and all its descendants, sampled
every quarter second from ``/proc`` (Linux). Where ``/proc`` is missing it
falls back to the largest single child's peak (``getrusage``). The peak so
far is also kept in a file, so a run stopped and resumed (``--resume``)
reports the peak of all its sittings.
"""

from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PEAK = "peak_memory"  # the file in a run's folder with the peak so far, in bytes
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class Measured:
    returncode: int
    seconds: float
    peak_bytes: int


def _tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and every descendant, read from ``/proc``; 0 when it is gone."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            parents[int(entry.name)] = int(fields[1])
            rss[int(entry.name)] = int(fields[21]) * PAGE
        except (OSError, ValueError, IndexError):
            continue
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in tree]
        tree.update(children)
        frontier += children
    return sum(rss.get(pid, 0) for pid in tree)


def run_measured(
    command: list[str], log: Path, env: dict[str, str] | None = None, peak_file: Path | None = None,
    append: bool = False,
) -> Measured:  # fmt: skip
    """Run ``command`` with its output in ``log``; its exit status, wall seconds and peak tree memory.

    With ``peak_file`` the peak is written there as it grows; with ``append`` (a later sitting of the same
    run) the log is added to and the peak starts from the file's.
    """
    peak = int(peak_file.read_text()) if append and peak_file is not None and peak_file.is_file() else 0
    with open(log, "a" if append else "w", encoding="utf-8") as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.wait(0.25):
                now = _tree_rss(process.pid)
                if now > peak:
                    peak = now
                    if peak_file is not None:
                        peak_file.write_text(str(peak))

        sampler = threading.Thread(target=sample, daemon=True)
        if os.path.isdir("/proc"):
            sampler.start()
        code = process.wait()
        done.set()
        seconds = time.perf_counter() - start
    if not peak:
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return Measured(code, seconds, peak)
