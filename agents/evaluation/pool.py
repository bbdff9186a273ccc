"""Where the matches are played: in this process, in worker processes, or by any backend that maps matches.

A backend is a :data:`MatchMap`: given the picklable :class:`MatchConfig`,
the match numbers and a worker count, it plays each match (with
:func:`play_in_worker` on whatever machine it likes) and hands every
finished match to ``done(k, games)``, in any order. The harness sorts the
results, so the figures never depend on the backend or the worker count.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Sequence

from .games import GameResult, MatchConfig, Runner

MatchDone = Callable[[int, "list[GameResult]"], None]
#: ``backend(config, matches, workers, done)``: play every match in ``matches``, calling ``done(k, games)`` for each.
MatchMap = Callable[[MatchConfig, Sequence[int], int, MatchDone], None]

_WORKER: Runner | None = None


def play_in_worker(config: MatchConfig, match: int) -> list[GameResult]:
    """Play one match in a worker, reusing the worker's agents while the config stays the same."""
    global _WORKER
    if _WORKER is None or _WORKER.config != config:
        _WORKER = Runner(config)
    return _WORKER.play_match(match)


def serial_map(config: MatchConfig, matches: Sequence[int], workers: int, done: MatchDone) -> None:
    """Play the matches one after the other in this process (``workers`` is ignored)."""
    runner = Runner(config)
    for k in matches:
        done(k, runner.play_match(k))


def process_map(config: MatchConfig, matches: Sequence[int], workers: int, done: MatchDone) -> None:
    """Play the matches in ``workers`` spawned processes; an error or Ctrl-C stops them all at once."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # spawn, not fork: a parent that already runs torch threads must not be forked.
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(config,))
    try:
        pending = {pool.submit(_worker_match, k): k for k in matches}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                k = pending.pop(future)
                done(k, future.result())  # re-raises a worker's error here
    except BaseException:  # an agent's error or Ctrl-C: stop at once rather than finish the matches under way
        _stop_workers(pool)
        raise
    pool.shutdown()


def play_all(
    config: MatchConfig, matches: int, workers: int, progress: bool, backend: MatchMap | None = None
) -> list[GameResult]:
    """Every game of matches 0 .. matches - 1, in (match, rotation) order, played by ``backend``.

    Without a backend: in this process when ``workers == 1`` or there is one
    match, else in ``workers`` processes.
    """
    from tqdm import tqdm

    if backend is None:
        backend = serial_map if workers == 1 or matches == 1 else process_map
    bar = tqdm(total=matches, unit="match", desc="evaluating", disable=not progress, file=sys.stderr)
    by_match: dict[int, list[GameResult]] = {}

    def done(k: int, games: list[GameResult]) -> None:
        by_match[k] = games
        bar.update()

    try:
        backend(config, range(matches), min(workers, matches), done)
    finally:
        bar.close()
    missing = [k for k in range(matches) if k not in by_match]
    if missing:
        raise RuntimeError(f"the match backend returned no games for {len(missing)} matches (first: {missing[0]})")
    return [g for k in range(matches) for g in by_match[k]]


def _init_worker(config: MatchConfig) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the workers
    global _WORKER
    _WORKER = Runner(config)
    if "torch" in sys.modules:  # one thread per worker: the workers already share the cores
        sys.modules["torch"].set_num_threads(1)


def _worker_match(match: int) -> list[GameResult]:
    assert _WORKER is not None
    return _WORKER.play_match(match)


def _stop_workers(pool) -> None:
    """Drop the queued matches and end the worker processes (the executor offers no public way to end them)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)
