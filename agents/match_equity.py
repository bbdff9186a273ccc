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
the expectation. Far from the target it grows nearly in step with the
points, so the choices stay those of the points; near it, it bends.

The chances come from a table over the points each side still needs, worked
out backwards from the target (:func:`win_chances`) over the results of
rounds that the ``heuristic`` bot plays at every seat on the batched engine
(:func:`round_results`), each result counted for either side alike. The
model is that of two sides whose rounds are drawn independently from that
sample; a round in which both sides would pass the target counts as half a
win, since which passes first depends on the order of its placements. Two
sides only (two players, or partnerships); with three or four sides, or a
target beyond ``MAX_TARGET``, there is no table and play-outs keep their
points-only values.
"""

from __future__ import annotations

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

MAX_TARGET = 1000  # points: past this the table (needed points squared) costs more than it brings
ROUNDS = 20_000  # rounds measured a rule set: results are counted for both sides, so 40,000 in the sample
TABLES = 500  # tables of the batched engine playing them


def round_results(rules: Rules, rounds: int = ROUNDS, seed: int = 0) -> np.ndarray:
    """[rounds, 2] points each of two sides scored in rounds played by ``heuristic`` at every seat (first rounds of
    matches with no target in reach, so no round is cut short)."""
    if rules.num_sides != 2:
        raise ValueError(f"match equity needs two sides; these rules have {rules.num_sides}")
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
    """``table[i, j]``: the chance that a side needing ``i`` more steps of ``UNIT`` points wins against one needing
    ``j``, its rounds and the other's drawn from ``results`` ([rounds, 2] points, either column for either side).

    Row and column 0 are the ends: a side needing nothing has won (1), half when both do (0.5).
    """
    size = math.ceil(target / UNIT)
    steps = np.concatenate([results, results[:, ::-1]]) // UNIT
    pairs, counts = np.unique(steps, axis=0, return_counts=True)
    scored = pairs.sum(1) > 0  # a round where nobody scores leaves the match as it was: it does not count
    pairs, weights = pairs[scored], counts[scored] / counts[scored].sum()
    table = np.zeros((size + 1, size + 1))
    table[0, 1:] = 1.0
    table[0, 0] = 0.5
    for total in range(2, 2 * size + 1):  # a state depends only on states nearer the end: smaller sums of needs
        own = np.arange(max(1, total - size), min(size, total - 1) + 1)
        other = total - own
        after_own = np.maximum(own[:, None] - pairs[None, :, 0], 0)
        after_other = np.maximum(other[:, None] - pairs[None, :, 1], 0)
        table[own, other] = table[after_own, after_other] @ weights
    return table


@lru_cache(maxsize=16)
def _round_results(key: tuple) -> np.ndarray:
    return round_results(make_rules(**dict(key)))


@lru_cache(maxsize=64)
def equity_table(rules: Rules) -> np.ndarray:
    """The table of :func:`win_chances` for ``rules`` (its rounds measured once a process), or ``NO_EQUITY`` where
    there is none: more than two sides, or a target above ``MAX_TARGET``."""
    if rules.num_sides != 2 or rules.target > MAX_TARGET:
        return NO_EQUITY
    key = tuple(sorted({**rules.as_dict(), "target": None}.items()))
    return win_chances(_round_results(key), rules.target)


def equity_bonus(table: np.ndarray, target: float, scores: list | tuple, side: int) -> float:
    """What a round's end short of ``target`` adds to the value of a play-out for ``side`` of two sides:
    ``WIN_BONUS * (2 * chance - 1)``, as the compiled rollouts add it (:func:`agents.rollout.equity_of`); 0
    without a table."""
    if not table.size:
        return 0.0
    return equity_of(table, target, scores[side], scores[1 - side])
