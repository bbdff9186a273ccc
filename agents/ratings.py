"""Skill ratings fitted over evaluation games with openskill's Plackett-Luce model.

Each game is one multi-team result: the teams are the scoring sides, each
holding the line-up entries that played it, ranked by their final scores
(equal scores share a rank). Games are fed in a fixed order, so the same
games always give the same ratings.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Rating:
    """An entry's skill estimate: ``mu`` the mean, ``sigma`` its uncertainty, ``ordinal`` = mu - 3 sigma."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma


def side_ranks(scores: Sequence[float]) -> list[int]:
    """Rank of each side by final score: 0 for the best, equal scores equal ranks."""
    return [sum(1 for other in scores if other > own) for own in scores]


def fit_ratings(games: Iterable[tuple[Sequence[Sequence[int]], Sequence[float]]], num_entries: int) -> list[Rating]:
    """Fit a rating per entry from ``(teams, scores)`` pairs, one per game, in order.

    ``teams[side]`` lists the entry indices that played that side (an entry
    that filled both seats of a partnership is listed once); ``scores[side]``
    is the side's final score.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    current = [model.rating(name=str(i)) for i in range(num_entries)]
    for teams, scores in games:
        ranks = side_ranks(scores)
        rated = model.rate([[current[i] for i in team] for team in teams], ranks=ranks)
        for team, new_team in zip(teams, rated, strict=True):
            for i, new in zip(team, new_team, strict=True):
                current[i] = new
    return [Rating(r.mu, r.sigma) for r in current]
