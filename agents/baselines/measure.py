"""Run a training process and measure it: wall time and the peak memory of its whole process tree.

Libraries start processes of their own (RLCard's actors, Ray's raylet and
workers, the trainer's rollout workers), so the memory figure is the largest
sum of resident memory over the process and all its descendants, sampled
every quarter second from ``/proc`` (Linux). Where ``/proc`` is missing it
falls back to the largest single child's peak (``getrusage``).
"""

from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

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


def run_measured(command: list[str], log: Path, env: dict[str, str] | None = None) -> Measured:
    """Run ``command`` with its output in ``log``; its exit status, wall seconds and peak tree memory."""
    peak = 0
    with open(log, "w", encoding="utf-8") as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.wait(0.25):
                peak = max(peak, _tree_rss(process.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        if os.path.isdir("/proc"):
            sampler.start()
        code = process.wait()
        done.set()
        seconds = time.perf_counter() - start
    if not peak:
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return Measured(code, seconds, peak)
