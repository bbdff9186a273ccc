"""The search bot: determinized Monte Carlo over the tiles it cannot see.

For each decision with a choice it repeats: deal the hidden tiles (every tile
not in its hand or the layout) into the other hands and the boneyard, in the
sizes the view shows and never giving a seat a value it is known to lack
(:func:`sample_hidden`); then, from that one deal, play every candidate action
and the rest of the round with a fast rollout policy (:func:`play_out`), so
the candidates are compared on the same luck. The candidate with the best mean
outcome is played. An outcome is the own side's points gained over the rest
of the round (hand award included) minus the opponents' mean gain, plus
``WIN_BONUS`` if the match is won in the rollout (minus it if lost).

The rest of the round after a candidate is played by the compiled play-outs of
:mod:`agents.rollout`, a whole batch of deals and candidates in one call, move
for move as :func:`play_out` plays it on the core's state.

Rollout policies (every seat plays the same one, with all tiles of the deal known):
- ``guarded`` (default): most points now minus the best answer the next seat
  could make with its hand, then the heaviest tile;
- ``greedy``: most points now, then the heaviest tile (about 4x cheaper).

With ``inference`` above 0 (plain ``search`` keeps 0), each deal counts in the
means with the weight :class:`~agents.inference.PlayModel` gives it: how
likely it makes the other seats' placements this round. With a ``belief``
model (:mod:`agents.belief`; ``search:belief``), the deals are drawn from
its learned marginals instead of uniformly, within the same known facts.
With ``equity`` (``search:equity``), a play-out whose round ends short of the
target is also valued by its side's chance of winning the match from the
scores it ends with (:mod:`agents.match_equity`).

Budget: ``simulations`` rollouts per decision, shared evenly among the
candidates (deterministic for a seed), or ``time_limit`` seconds per decision
(as many deals as fit, at least one). A decision with a single legal action
costs no search.
"""

from __future__ import annotations

import math
import random
import time
from typing import Protocol

import numpy as np

from allfives_env.core import DRAW, PASS, PIPS, SeatView, State
from allfives_env.core.layout import Layout
from allfives_env.core.scoring import POINTS_FOR_TOTAL, zero_sum_gain
from allfives_env.core.tiles import END_COUNT, SUIT_MASK, mask_to_tiles

from .base import Agent
from .heuristic import ALL_TILES, SCORING_REPLIES, lacked_tiles
from .inference import PlayModel
from .match_equity import equity_table
from .rollout import (
    NO_EQUITY,
    WIN_BONUS,
    add_deal_arrays,
    add_deal_values,
    config_of,
    deal_arrays,
    state_record,
    table_values,
)

DEFAULT_SIMULATIONS = 240
ROLLOUTS = ("guarded", "greedy")
SAMPLE_TRIES = 50  # random fills tried before the exact (matching) fill
TIMED_BATCH = 8  # deals played per compiled call under a time limit, between looks at the clock


class DealSampler(Protocol):
    """Deals of one view's hidden tiles (:class:`agents.belief.Dealer`)."""

    def deals(self, rng: random.Random, count: int) -> tuple[np.ndarray, np.ndarray]:
        """``count`` deals of the view's hidden tiles: hand masks [count, 4] and boneyards [count, B]."""


class DealModel(Protocol):
    """What draws a search's deals instead of :func:`sample_hidden` (:class:`agents.belief.BeliefModel`)."""

    def dealer(self, view: SeatView) -> DealSampler:
        """A sampler of deals that agree with ``view``."""


class SamplingError(ValueError):
    """No deal of the hidden tiles agrees with the view (the view is inconsistent)."""


def sample_hidden(view: SeatView, rng: random.Random) -> tuple[list[int], tuple[int, ...]]:
    """Deal the tiles ``view`` cannot see: (hand masks for every seat, boneyard in draw order).

    Hand sizes and the boneyard size follow the view; a seat known to lack a
    value gets no tile showing it. The most constrained seats are filled first,
    each uniformly from the tiles it may hold; if that dead-ends (rare) a few
    times, an exact matching finds a consistent deal, and SamplingError is
    raised only if none exists.
    """
    hidden = ALL_TILES & ~view.hand & ~view.layout.played
    others = [s for s in range(len(view.hand_counts)) if s != view.seat]
    need = sum(view.hand_counts[s] for s in others) + view.boneyard_left
    if hidden.bit_count() != need:
        raise SamplingError(f"{hidden.bit_count()} tiles are hidden but the other hands and boneyard hold {need}")
    allowed = {s: hidden & ~lacked_tiles(view.lacks[s]) for s in others}
    constrained = sorted((s for s in others if allowed[s] != hidden), key=lambda s: allowed[s].bit_count())
    free = [s for s in others if allowed[s] == hidden]
    for _ in range(SAMPLE_TRIES):
        hands = _fill(view, rng, hidden, allowed, constrained, free)
        if hands is not None:
            return hands
    return _fill_exact(view, rng, hidden, allowed, others)


def _fill(view, rng, hidden, allowed, constrained, free):
    hands = [0] * len(view.hand_counts)
    hands[view.seat] = view.hand
    pool = hidden
    for seat in constrained:
        choices = mask_to_tiles(pool & allowed[seat])
        count = view.hand_counts[seat]
        if len(choices) < count:
            return None
        for tile in rng.sample(choices, count):
            hands[seat] |= 1 << tile
        pool &= ~hands[seat]
    rest = mask_to_tiles(pool)
    rng.shuffle(rest)
    start = 0
    for seat in free:
        count = view.hand_counts[seat]
        for tile in rest[start : start + count]:
            hands[seat] |= 1 << tile
        start += count
    return hands, tuple(rest[start:])


def _fill_exact(view, rng, hidden, allowed, others):
    """Bipartite matching of hidden tiles to places (hand positions and boneyard positions)."""
    places = [s for s in others for _ in range(view.hand_counts[s])] + [-1] * view.boneyard_left
    tiles = mask_to_tiles(hidden)
    rng.shuffle(tiles)
    rng.shuffle(places)
    holder = [-1] * len(places)  # place index -> tile index

    def fits(tile: int, place: int) -> bool:
        seat = places[place]
        return seat < 0 or allowed[seat] >> tile & 1

    def augment(t: int, seen: set[int]) -> bool:
        for place in range(len(places)):
            if place not in seen and fits(tiles[t], place):
                seen.add(place)
                if holder[place] < 0 or augment(holder[place], seen):
                    holder[place] = t
                    return True
        return False

    for t in range(len(tiles)):
        if not augment(t, set()):
            raise SamplingError("no deal of the hidden tiles respects every seat's known lacks")
    hands = [0] * len(view.hand_counts)
    hands[view.seat] = view.hand
    boneyard = []
    for place, t in enumerate(holder):
        if places[place] < 0:
            boneyard.append(tiles[t])
        else:
            hands[places[place]] |= 1 << tiles[t]
    rng.shuffle(boneyard)
    return hands, tuple(boneyard)


def best_placement(layout: Layout, fit: int) -> int:
    """The rollout policy: the placement of a tile in ``fit`` scoring most now, then the heaviest tile.

    Ties go to the lowest action id, so the policy is a pure function of the position.
    """
    values = layout.values
    best, best_key = -1, -1
    for slot in range(4):
        v = values[slot]
        if v < 0:
            continue
        tiles = fit & SUIT_MASK[v]
        while tiles:
            low = tiles & -tiles
            tiles ^= low
            tile = low.bit_length() - 1
            action = tile * 4 + slot
            key = PIPS[tile] + POINTS_FOR_TOTAL[layout.end_total_after(tile, slot)] * 64
            if key > best_key or key == best_key and action < best:
                best, best_key = action, key
    return best


def best_answer(layout: Layout, hand: int) -> int:
    """The most points one placement of a tile in ``hand`` scores on ``layout`` (0 if none scores).

    End by end, only the tiles that score on the total the other ends leave
    are tried (the heuristic's reply table): this runs for every candidate of
    every rollout step, and most end totals leave no scoring tile at all.
    """
    best = 0
    for slot, value in enumerate(layout.values):
        if value < 0 or not hand & SUIT_MASK[value]:
            continue
        for _, bit, points in SCORING_REPLIES[value][layout.covered_total(slot)]:
            if hand & bit and points > best:
                best = points
    return best


def guarded_placement(layout: Layout, fit: int, reply_hand: int) -> int:
    """A stronger rollout policy: points now minus the best the next seat could answer with ``reply_hand``.

    Placements are tried from the highest ceiling (the key they would have if
    the next seat could not answer) down, and the loop stops once no ceiling
    left can beat the best key found: the same choice as trying them all, at a
    fraction of the cost.
    """
    values = layout.values
    ranked = []
    for slot in range(4):
        v = values[slot]
        if v < 0:
            continue
        covered = layout.covered_total(slot)
        tiles = fit & SUIT_MASK[v]
        while tiles:
            low = tiles & -tiles
            tiles ^= low
            tile = low.bit_length() - 1
            points = POINTS_FOR_TOTAL[covered + END_COUNT[tile][v]]
            ranked.append((points * 64 + PIPS[tile], -(tile * 4 + slot), points, tile, slot))
    if len(ranked) == 1:
        return -ranked[0][1]
    ranked.sort(reverse=True)
    best, best_key = -1, None
    for ceiling, negative_action, points, tile, slot in ranked:
        if best_key is not None and (ceiling < best_key or ceiling == best_key and -negative_action > best):
            break
        after = layout.copy()
        after.place(tile, slot)
        key = (points - best_answer(after, reply_hand)) * 64 + PIPS[tile]
        action = -negative_action
        if best_key is None or key > best_key or key == best_key and action < best:
            best, best_key = action, key
    return best


def rollout_action(layout: Layout, fit: int, answers: int, guarded: bool = True) -> int:
    """The rollout policy's placement among the tiles in ``fit``; ``answers`` is the next seat's hand."""
    return guarded_placement(layout, fit, answers) if guarded else best_placement(layout, fit)


def play_out(state: State, guarded: bool = True) -> None:
    """Play ``state`` on under the rollout policy until it stops (build it with ``round_limit``).

    Every seat uses the same policy with every tile of the deal known; the
    core decides the rest (forced draws, passes, blocks, awards, the target).
    The search plays the same moves compiled (:mod:`agents.rollout`); this is
    the reference they are tested against.
    """
    n = state.rules.num_players
    while not state.finished:
        seat = state.to_act
        layout = state.layout
        fit = 1 << state.drawn if state.drawn >= 0 else state.hands[seat] & layout.playable_mask()
        if fit:
            state.apply(rollout_action(layout, fit, state.hands[(seat + 1) % n], guarded))
        else:
            state.apply(DRAW if state.boneyard_left else PASS)


def outcome(state: State, side: int, root_scores: tuple) -> float:
    """The value of a rollout for ``side``: its gain since the root minus the opponents' mean gain, plus the match result."""
    return outcome_of(state.scores, state.winners, side, root_scores)


def outcome_of(scores: list, winners: tuple[int, ...], side: int, root_scores: tuple) -> float:
    """:func:`outcome` from a rollout's final scores and winning sides."""
    gains = [now - before for now, before in zip(scores, root_scores, strict=True)]
    value = zero_sum_gain(gains, side)
    if winners:
        value += WIN_BONUS / len(winners) if side in winners else -WIN_BONUS
    return value


def playout_values(state: State, actions: list[int] | None = None, guarded: bool = True) -> list[float]:
    """The seat to act's outcome of each legal action (default: all, in id order) on ``state``'s own deal.

    One play-out per action on the tiles as they really lie, where the search
    plays many on guessed deals. Averaged over the positions a seat meets, the
    true deals are a fair sample of what it cannot see, so a network fit to
    these values learns what the search would find with unlimited deals, at
    the cost of one play-out per action (the trainer's ``playouts`` warm start).
    """
    legal = state.legal_actions() if actions is None else list(actions)
    records = np.repeat(state_record(state), len(legal))
    return table_values(records, config_of(state.rules), np.arange(len(legal)), legal, guarded).tolist()


class SearchAgent(Agent):
    """Determinized Monte Carlo with fast rollouts; see the module docstring."""

    name = "search"

    def __init__(
        self,
        seed: int | None = None,
        simulations: int = DEFAULT_SIMULATIONS,
        time_limit: float | None = None,
        rollout: str = "guarded",
        inference: float = 0.0,
        belief: DealModel | None = None,
        equity: bool = False,
    ) -> None:
        super().__init__(seed)
        if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 1:
            raise ValueError(f"simulations={simulations!r} is not allowed; allowed: a positive whole number")
        if time_limit is not None and not time_limit > 0:
            raise ValueError(f"time_limit={time_limit!r} is not allowed; allowed: None or a positive number of seconds")
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout={rollout!r} is not a rollout policy; allowed: {', '.join(map(repr, ROLLOUTS))}")
        if isinstance(inference, bool) or not isinstance(inference, int | float) or not 0 <= inference < math.inf:
            raise ValueError(
                f"inference={inference!r} is not allowed; allowed: a finite number >= 0 (0: deals unweighted)"
            )
        if belief is not None and not callable(getattr(belief, "dealer", None)):
            raise ValueError(
                f"belief={belief!r} is not allowed; allowed: None or a model from agents.belief.load_belief()"
            )
        if not isinstance(equity, bool):
            raise ValueError(f"equity={equity!r} is not allowed; allowed: True or False")
        self.simulations = simulations
        self.time_limit = time_limit
        self.rollout = rollout
        self.inference = inference
        self.belief = belief
        self.equity = equity

    def equity_table(self, view: SeatView) -> np.ndarray:
        """The match-equity table the play-outs of ``view`` are valued with (empty: points and matches won alone)."""
        return equity_table(view.rules) if self.equity else NO_EQUITY

    def act(self, view: SeatView) -> int:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        values = self.evaluate(view)
        return legal[values.index(max(values))]

    def budget(self, view: SeatView) -> int:
        """Rollouts for this decision, shared among the candidates (``simulations`` here)."""
        return self.simulations

    def deal_arrays(self, view: SeatView, count: int) -> tuple[np.ndarray, np.ndarray]:
        """``count`` deals of the view's hidden tiles, drawn as this search draws them: hand masks [count, 4] (the
        viewer's own included) and boneyards [count, B] in draw order."""
        if self.belief is not None:
            return self.belief.dealer(view).deals(self.rng, count)
        return deal_arrays(view, [sample_hidden(view, self.rng) for _ in range(count)])

    def evaluate(self, view: SeatView, actions: list[int] | None = None) -> list[float]:
        """Mean rollout outcome of each of ``actions`` (default ``view.legal``), in that order, on the same deals."""
        legal = view.legal if actions is None else actions
        totals = np.zeros(len(legal))
        model = PlayModel(view, self.inference) if self.inference else None
        dealer = self.belief.dealer(view) if self.belief is not None else None
        weights = 0.0
        deals = max(1, self.budget(view) // len(legal))
        guarded = self.rollout == "guarded"
        equity = self.equity_table(view)
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        done = 0
        while done < deals if deadline is None else done == 0 or time.perf_counter() < deadline:
            count = deals - done if deadline is None else TIMED_BATCH
            if dealer is not None:
                hands, boneyards = dealer.deals(self.rng, count)
                n = len(view.hand_counts)
                batch_weights = [model.weight(h[:n].tolist()) for h in hands] if model else [1.0] * count
                add_deal_arrays(totals, view, hands, boneyards, batch_weights, legal, guarded, equity)
            else:
                batch = [sample_hidden(view, self.rng) for _ in range(count)]
                batch_weights = [model.weight(hands) if model else 1.0 for hands, _ in batch]
                add_deal_values(totals, view, batch, batch_weights, legal, guarded, equity)
            for weight in batch_weights:
                weights += weight
            done += count
        return [float(total) / weights for total in totals.tolist()]
