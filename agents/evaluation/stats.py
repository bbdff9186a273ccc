"""The statistics of an evaluation: intervals, and per-entry figures over every game.

Win rate: the share of games an entry's side won, a shared win counting
1 / (number of sides sharing it), with a 95% Wilson score interval that
treats games as independent (the rotations of one duplicate match are
negatively correlated in luck, so this interval is conservative), and a
paired interval over duplicate matches. Margin: its side's final score minus
the best other side's, per game, with a 95% normal interval over the
duplicate-match means. Timing: seconds per decision counted over decisions
with more than one legal action (a forced action costs no thought), and the
slowest such decision. With three or more entries, openskill Plackett-Luce
ratings fitted over every game.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from allfives_env.core import Rules

from ..ratings import Rating, fit_ratings
from .games import GameResult
from .seating import entry_labels

#: The two-sided 95% quantile of the standard normal distribution.
Z95 = 1.959963984540054


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion; (0, 1) when there are no trials."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """Mean and the half-width of its normal 95% interval (nan with fewer than two values)."""
    k = len(values)
    if k == 0:
        return math.nan, math.nan
    mean = sum(values) / k
    if k < 2:
        return mean, math.nan
    var = sum((v - mean) ** 2 for v in values) / (k - 1)
    return mean, z * math.sqrt(var / k)


@dataclass(frozen=True)
class AgentStats:
    """One entry's results over every game it played."""

    label: str
    spec: str
    games: int
    wins: float  # shared wins count as fractions
    win_rate: float
    ci_low: float  # Wilson, games as the unit
    ci_high: float
    paired_low: float  # normal interval over the duplicate matches' mean win shares
    paired_high: float
    margin: float  # mean points margin per game
    margin_half_width: float  # 95% interval half-width over duplicate matches
    decisions: int
    choices: int  # decisions with more than one legal action
    seconds_per_choice: float  # mean seconds over those
    slowest: float  # the slowest of those
    seconds_per_decision: float  # mean seconds over all decisions
    rating: Rating | None = None


def summarize(games: Sequence[GameResult], lineup: Sequence[str], rules: Rules) -> list[AgentStats]:
    """Per-entry statistics (and ratings with three or more entries) from games in (match, rotation) order."""
    labels = entry_labels(lineup)
    ratings = None
    if len(lineup) >= 3 and games:
        ratings = fit_ratings(((g.teams(rules), g.scores) for g in games), len(lineup))
    by_match: dict[int, list[GameResult]] = {}
    for g in games:
        by_match.setdefault(g.match, []).append(g)
    stats = []
    for i, spec in enumerate(lineup):
        n = len(games)
        wins = sum(g.share[i] for g in games)
        low, high = wilson_interval(wins, n)
        share_means = [sum(g.share[i] for g in gs) / len(gs) for gs in by_match.values()]
        paired_mean, paired_half = mean_interval(share_means)
        margin, margin_half = mean_interval([sum(g.margin[i] for g in gs) / len(gs) for gs in by_match.values()])
        decisions = sum(g.decisions[i] for g in games)
        choices = sum(g.choices[i] for g in games)
        stats.append(
            AgentStats(
                label=labels[i],
                spec=spec,
                games=n,
                wins=wins,
                win_rate=wins / n if n else math.nan,
                ci_low=low,
                ci_high=high,
                paired_low=max(0.0, paired_mean - paired_half) if n else math.nan,
                paired_high=min(1.0, paired_mean + paired_half) if n else math.nan,
                margin=margin,
                margin_half_width=margin_half,
                decisions=decisions,
                choices=choices,
                seconds_per_choice=sum(g.choice_seconds[i] for g in games) / choices if choices else 0.0,
                slowest=max((g.slowest[i] for g in games), default=0.0),
                seconds_per_decision=sum(g.seconds[i] for g in games) / decisions if decisions else 0.0,
                rating=ratings[i] if ratings else None,
            )
        )
    return stats
