"""Match equity: each side's chance of winning the match from the scores a round ends with.

The searches value a play-out by the points of the rest of the round, plus
``WIN_BONUS`` for a match won inside it. A round that ends short of the
target is worth its points alone, whatever the score: ten points count the
same at 0 to 0 as at 240 to 200 of 250, though the first changes little and
the second may decide the match. A player who wants matches, not points,
takes risks when far behind near the end and avoids them when far ahead.

With ``equity`` on, a play-out that ends the round short of the target is
worth ``WIN_BONUS * (2 * chance - 1)`` more, where ``chance`` is the side's
chance of winning the match from the new scores: the same scale as a match
won (+``WIN_BONUS``) or lost (-``WIN_BONUS``) inside the round, of which it is
the expectation, at two sides as at three. Far from the target it grows
nearly in step with the points, so the choices stay those of the points;
near it, it bends.

The chances come from a table over the points each side still needs, worked
out backwards from the target (:func:`win_chances`) over the results of
rounds that the ``heuristic`` bot plays at every seat on the batched engine
(:func:`round_results`), each result counted for every side alike. The
model is that of a match whose rounds are drawn independently from that
sample; a round in which several sides would pass the target counts as a win
shared among them, since which passes first depends on the order of its
placements. Two or three sides (two or three players, or partnerships); with
four sides, or a target beyond ``MAX_TARGETS``, there is no table and
play-outs keep their points-only values.

The kernels read every table with three indices, the needs of the side to
value and of the sides after it: a two-sided table has a last axis of one.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np

from allfives_env.core import Rules, make_rules
from allfives_env.vector import VectorEnv

from .batched import choose
from .heuristic import HeuristicAgent
from .rollout import EQUITY_UNIT as UNIT
from .rollout import NO_EQUITY, equity_of
from .rollout import needed_steps as needed_steps  # the table's index of a score, shared with the kernels

#: The largest target with a table, by the number of sides: past it the table (needed points to the power of the
#: sides, each state a sum over the sample's results) costs more than it brings.
MAX_TARGETS = {2: 1000, 3: 250}
ROUNDS = 20_000  # rounds measured a rule set; each result counts once for every order of the sides
TABLES = 500  # tables of the batched engine playing them
CHUNK = 256  # states valued at once: bounds the memory of a three-sided table's sums


def round_results(rules: Rules, rounds: int = ROUNDS, seed: int = 0) -> np.ndarray:
    """[rounds, sides] points each side scored in rounds played by ``heuristic`` at every seat (first rounds of
    matches with no target in reach, so no round is cut short)."""
    if rules.num_sides not in MAX_TARGETS:
        raise ValueError(f"match equity needs two or three sides; these rules have {rules.num_sides}")
    options = {**rules.as_dict(), "target": 10_000}
    env = VectorEnv(TABLES, **options, reward="points", episode="round", auto_forced=True)
    bots = [HeuristicAgent(seed=seed + k) for k in range(TABLES)]
    step = env.reset(seed=seed)
    results: list[np.ndarray] = []
    count = 0
    while count < rounds:
        step = env.step(choose(env, np.arange(TABLES), bots))
        ended = step.final_scores[step.terminated]
        results.append(ended)
        count += len(ended)
    return np.concatenate(results)[:rounds].astype(np.int64)


def win_chances(results: np.ndarray, target: float) -> np.ndarray:
    """``table[i, j]`` (two sides) or ``table[i, j, k]`` (three): the chance that a side needing ``i`` more steps of
    ``UNIT`` points wins against sides needing ``j`` (and ``k``), every side's rounds drawn from ``results``
    ([rounds, sides] points, any column for any side).

    Where some side needs nothing the match is over: those sides share the win.
    """
    sides = results.shape[1]
    size = math.ceil(target / UNIT)
    orders = [results[:, list(order)] for order in itertools.permutations(range(sides))]
    outcomes, counts = np.unique(np.concatenate(orders) // UNIT, axis=0, return_counts=True)
    scored = outcomes.sum(1) > 0  # a round where nobody scores leaves the match as it was: it does not count
    outcomes, weights = outcomes[scored], counts[scored] / counts[scored].sum()
    table = np.zeros((size + 1,) * sides)
    needs = np.indices(table.shape).reshape(sides, -1).T
    done = needs == 0
    over = done.any(1)
    table.flat[over] = np.where(done[over, 0], 1.0 / done[over].sum(1), 0.0)  # sides that need nothing share the win
    totals = needs.sum(1)
    for total in range(sides, sides * size + 1):  # a state depends only on states nearer the end: smaller sums
        states = np.flatnonzero(~over & (totals == total))
        for chunk in np.array_split(states, max(1, math.ceil(states.size / CHUNK))):
            after = np.maximum(needs[chunk][:, None, :] - outcomes[None], 0)
            table.flat[chunk] = table[tuple(np.moveaxis(after, 2, 0))] @ weights
    return table


def kernel_table(table: np.ndarray) -> np.ndarray:
    """``table`` with the three indices the kernels read: a two-sided one gains a last axis of one."""
    return table[:, :, None] if table.ndim == 2 else table


@lru_cache(maxsize=16)
def _round_results(key: tuple) -> np.ndarray:
    return round_results(make_rules(**dict(key)))


@lru_cache(maxsize=64)
def equity_table(rules: Rules) -> np.ndarray:
    """The table of :func:`win_chances` for ``rules`` as the kernels read it (:func:`kernel_table`; its rounds
    measured once a process), or ``NO_EQUITY`` where there is none: four sides, or a target above
    ``MAX_TARGETS``."""
    if rules.target > MAX_TARGETS.get(rules.num_sides, 0):
        return NO_EQUITY
    key = tuple(sorted({**rules.as_dict(), "target": None}.items()))
    return kernel_table(win_chances(_round_results(key), rules.target))


def equity_bonus(table: np.ndarray, target: float, scores: list | tuple, side: int) -> float:
    """What a round's end short of ``target`` adds to the value of a play-out for ``side``:
    ``WIN_BONUS * (2 * chance - 1)``, as the compiled rollouts add it (:func:`agents.rollout.equity_of`); 0
    without a table."""
    if not table.size:
        return 0.0
    return equity_of(table, target, np.asarray(scores, dtype=np.float64), side, len(scores))
