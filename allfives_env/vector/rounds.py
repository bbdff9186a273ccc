"""The rare events of each table, decided by the core one table at a time.

A round starts (the core's seeded deal and its allowed leaders), a round
ends (the core's domino or block award), a match ends: these happen once
every twenty-odd decisions per table, so they are left to the core's own
functions, and the core stays the one authority on deals, leaders and
awards. Only their results are written into the arrays of
:class:`~allfives_env.vector.arrays.Tables`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.deal import Deal, allowed_leaders, seeded_deal
from ..core.rules import Rules
from ..core.scoring import RoundResult, block_award, domino_award
from .arrays import RoundEnds, Tables


@dataclass
class MatchLog:
    """One table's match so far, as the core would log it: the seed and each round's deal and moves."""

    seed: int
    rounds: list[tuple[Deal, tuple[tuple[int, int], ...]]] = field(default_factory=list)


@dataclass
class Finished:
    """The episodes that ended in one step: table rows, final scores, winning sides, their logs."""

    rows: list[int] = field(default_factory=list)
    scores: list[list[float]] = field(default_factory=list)
    winners: list[tuple[int, ...]] = field(default_factory=list)
    logs: list[MatchLog] = field(default_factory=list)


class Rounds:
    """Per-table match bookkeeping: seeds, the current deal, the last round's result, the logs."""

    def __init__(self, rules: Rules, tables: Tables, single_round: bool, keep_logs: bool) -> None:
        self.rules = rules
        self.tables = tables
        self.single_round = single_round
        self.keep_logs = keep_logs
        b = tables.num_envs
        self.seeds: list[int] = [0] * b
        self.deals: list[Deal | None] = [None] * b
        self.logs: list[MatchLog] = [MatchLog(0) for _ in range(b)]

    # -- starting ---------------------------------------------------------------------------

    def start_matches(self, rows: list[int], seeds: list[int]) -> None:
        """New matches on these tables: scores to zero, round 0 dealt from each seed."""
        for row, seed in zip(rows, seeds, strict=True):
            self.seeds[row] = seed
            self.logs[row] = MatchLog(seed)
        self.tables.scores[rows] = 0
        self.tables.refresh_need(rows)
        self.deal(rows, [0] * len(rows), [None] * len(rows))

    def deal(self, rows: list[int], indices: list[int], previous: list[RoundResult | None]) -> None:
        """Deal round ``indices[i]`` on table ``rows[i]`` after the round that ended with ``previous[i]``."""
        rules = self.rules
        hands, boneyards, leaders, required = [], [], [], []
        for row, index, prev in zip(rows, indices, previous, strict=True):
            deal = seeded_deal(rules, self.seeds[row], index, prev)
            _, lead_tile = allowed_leaders(rules, index, deal.hands, prev)
            self.deals[row] = deal
            hands.append(deal.hands)
            boneyards.append(deal.boneyard)
            leaders.append(deal.leader)
            required.append(lead_tile)
        self.tables.start_rounds(
            np.array(rows, dtype=np.intp),
            np.array(hands, dtype=np.intp).reshape(len(rows), rules.num_players, rules.hand_size),
            np.array(boneyards, dtype=np.intp).reshape(len(rows), rules.boneyard_size),
            np.array(leaders, dtype=np.intp),
            np.array(required, dtype=np.intp),
            np.array(indices, dtype=np.intp),
        )

    # -- ending -------------------------------------------------------------------------------

    def end(self, ends: RoundEnds, finished: Finished) -> None:
        """Settle the rounds that ended: award, then a new round, or the episode's end into ``finished``."""
        tables = self.tables
        rules = self.rules
        target = rules.target
        for row in ends.target.tolist():
            self._log_round(row)
            scores = tables.scores[row].tolist()
            side = max(range(rules.num_sides), key=lambda s: scores[s])  # the one side that just reached it
            self._finish(row, scores, (side,), finished)
        ended = np.concatenate([ends.domino, ends.block])
        if not ended.size:
            return
        pips = tables.seat_pips(ended).tolist()
        results = [domino_award(rules, seat, p) for seat, p in zip(ends.domino_seat.tolist(), pips, strict=False)]
        results += [block_award(rules, p) for p in pips[len(ends.domino) :]]
        next_rows, next_indices, previous = [], [], []
        for row, result in zip(ended.tolist(), results, strict=True):
            scores = tables.scores[row]
            for side, gain in enumerate(result.gains):
                if gain:
                    scores[side] += gain
            self._log_round(row)
            values = scores.tolist()
            if any(score >= target for score in values):
                if self.single_round:
                    winners = (result.winner,) if result.winner is not None else ()
                else:
                    best = max(score for score in values if score >= target)
                    winners = tuple(side for side, score in enumerate(values) if score == best)
                self._finish(row, values, winners, finished)
            elif self.single_round:
                self._finish(row, values, (result.winner,) if result.winner is not None else (), finished)
            else:
                next_rows.append(row)
                next_indices.append(int(tables.round_index[row]) + 1)
                previous.append(result)
        tables.refresh_need(ended)
        if next_rows:
            self.deal(next_rows, next_indices, previous)

    def _log_round(self, row: int) -> None:
        if self.keep_logs:
            tables = self.tables
            count = int(tables.move_count[row])
            moves = tuple(
                zip(tables.move_seat[row, :count].tolist(), tables.move_action[row, :count].tolist(), strict=True)
            )
            self.logs[row].rounds.append((self.deals[row], moves))

    def _finish(self, row: int, scores: list[float], winners: tuple[int, ...], finished: Finished) -> None:
        finished.rows.append(row)
        finished.scores.append(scores)
        finished.winners.append(winners)
        finished.logs.append(self.logs[row])
