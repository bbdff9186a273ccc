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

from ..core.deal import Deal, seeded_tiles
from ..core.rules import Rules
from ..core.scoring import RoundResult, block_award, domino_award
from ..core.tiles import NUM_TILES
from .arrays import RoundEnds, Tables

#: At most this many awards are kept (about a kilobyte each); past it the store starts again.
AWARDS_KEPT = 4_096


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
        self.deals: list[Deal | None] = [None] * b  # each table's current deal, kept for the records only
        self.logs: list[MatchLog] = [MatchLog(0) for _ in range(b)]
        # Rounds to deal, gathered over a step and dealt together by flush() (one batch of array writes).
        self.pending_rows: list[int] = []
        self.pending_indices: list[int] = []
        self.pending_previous: list[RoundResult | None] = []
        # The core's hand awards by (domino seat, or -1 for a block, then each seat's pips): an award depends on
        # nothing else, and rounds end the same way again and again, so each is asked of the core once.
        self.awards: dict[tuple[int, ...], RoundResult] = {}

    def take(self, rows: list[int], tables: Tables) -> Rounds:
        """The bookkeeping of these tables' ``rows``, in that order, over ``tables`` (their :meth:`Tables.take`)."""
        if self.pending_rows:
            raise RuntimeError("rounds are waiting to be dealt; flush() first")
        kept = Rounds(self.rules, tables, self.single_round, self.keep_logs)
        kept.seeds = [self.seeds[row] for row in rows]
        kept.deals = [self.deals[row] for row in rows]
        kept.logs = [self.logs[row] for row in rows]
        return kept

    # -- starting ---------------------------------------------------------------------------

    def start_matches(self, rows: list[int], seeds: list[int]) -> None:
        """New matches on these tables: scores to zero, round 0 dealt from each seed."""
        for row, seed in zip(rows, seeds, strict=True):
            self.seeds[row] = seed
            self.logs[row] = MatchLog(seed)
        self.tables.scores[rows] = 0
        self.pending_rows += rows
        self.pending_indices += [0] * len(rows)
        self.pending_previous += [None] * len(rows)

    def flush(self) -> None:
        """Deal every pending round."""
        if self.pending_rows:
            self.deal(self.pending_rows, self.pending_indices, self.pending_previous)
            self.pending_rows, self.pending_indices, self.pending_previous = [], [], []

    def deal(self, rows: list[int], indices: list[int], previous: list[RoundResult | None]) -> None:
        """Deal round ``indices[i]`` on table ``rows[i]`` after the round that ended with ``previous[i]``."""
        rules = self.rules
        count, n, size = len(rows), rules.num_players, rules.hand_size
        dealt = seeded_tiles(rules, [self.seeds[row] for row in rows], indices, previous)
        if self.keep_logs:
            for row, deal in zip(rows, dealt.deals(rules), strict=True):
                self.deals[row] = deal
        orders = np.array(dealt.orders, dtype=np.intp).reshape(count, NUM_TILES)
        self.tables.start_rounds(
            np.array(rows, dtype=np.intp),
            orders[:, : n * size].reshape(count, n, size),
            orders[:, n * size :],
            np.array(dealt.leaders, dtype=np.intp),
            np.array(dealt.lead_tiles, dtype=np.intp),
            np.array(indices, dtype=np.intp),
        )

    # -- ending -------------------------------------------------------------------------------

    def end(self, ends: RoundEnds, finished: Finished) -> None:
        """Settle the rounds that ended: award, then a new round (pending until flush()), or the episode's end."""
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
        seats = ends.domino_seat.tolist() + [-1] * len(ends.block)
        awards = self.awards
        keys = [(seat, *p) for seat, p in zip(seats, pips, strict=True)]
        results = [awards.get(key) or self._award(key) for key in keys]
        scores = tables.scores.take(ended, axis=0) + np.array([result.gains for result in results], dtype=np.float64)
        tables.scores[ended] = scores
        if self.keep_logs:
            for row in ended.tolist():
                self._log_round(row)
        over = (scores >= target).any(axis=1)
        going = np.flatnonzero(~over) if not self.single_round else ended[:0]
        for i in np.flatnonzero(over).tolist() if not self.single_round else range(len(ended)):
            values = scores[i].tolist()
            result = results[i]
            if self.single_round:
                winners = (result.winner,) if result.winner is not None else ()
            else:
                best = max(score for score in values if score >= target)
                winners = tuple(side for side, score in enumerate(values) if score == best)
            self._finish(int(ended[i]), values, winners, finished)
        if going.size:  # the next round, dealt at the next flush()
            rows = ended[going]
            self.pending_rows += rows.tolist()
            self.pending_indices += (tables.round_index[rows] + 1).tolist()
            self.pending_previous += [results[i] for i in going.tolist()]

    def _award(self, key: tuple[int, ...]) -> RoundResult:
        """The core's award for ``key`` (see ``awards``), kept for the next time."""
        if len(self.awards) >= AWARDS_KEPT:
            self.awards.clear()
        seat, pips = key[0], list(key[1:])
        result = domino_award(self.rules, seat, pips) if seat >= 0 else block_award(self.rules, pips)
        self.awards[key] = result
        return result

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
