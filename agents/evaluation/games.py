"""Playing the games of a duplicate evaluation: one runner seats the agents and plays match after match.

A :class:`MatchConfig` says everything a game needs (it is picklable, so it
can travel to worker processes); a :class:`Runner` holds one agent per
line-up slot, built once, and plays every rotation of a match, timing each
decision and checking that every action is legal.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from allfives_env.core import Rules, State
from allfives_env.core.record import exact, write_record

from ..base import Agent
from ..factory import AgentFactory, default_agent_factory
from ..seeding import derive_seed
from .seating import Seating, match_seed


class EvaluationError(RuntimeError):
    """An agent misbehaved during a game (an illegal action, a crash): says which agent, where and why."""


@dataclass(frozen=True)
class GameResult:
    """One game of one duplicate match under one rotation; per-entry tuples are in line-up order."""

    match: int
    rotation: int
    match_seed: int
    seat_entries: tuple[int, ...]  # the entry in each seat
    scores: tuple  # final score per side
    winners: tuple[int, ...]  # winning side(s)
    rounds: int
    actions: int
    share: tuple[float, ...]  # per entry: 1 for a win, 1/k for a win shared by k sides, else 0
    margin: tuple[float, ...]  # per entry: own side's score minus the best other side's
    decisions: tuple[int, ...]  # per entry: all decisions taken
    choices: tuple[int, ...]  # per entry: decisions with more than one legal action
    choice_seconds: tuple[float, ...]  # per entry: total seconds over those
    slowest: tuple[float, ...]  # per entry: the slowest of those (0 if none)
    seconds: tuple[float, ...]  # per entry: total seconds over all decisions

    def teams(self, rules: Rules) -> list[list[int]]:
        """The entries that played each side (each listed once)."""
        teams: list[list[int]] = [[] for _ in range(rules.num_sides)]
        for seat, entry in enumerate(self.seat_entries):
            team = teams[rules.side_of[seat]]
            if entry not in team:
                team.append(entry)
        return teams


@dataclass(frozen=True)
class MatchConfig:
    """What every game of one evaluation shares; picklable, so a worker process can rebuild the runner."""

    rules: Rules
    lineup: tuple[str, ...]
    seating: Seating
    seed: int
    records_dir: str | None
    factory: AgentFactory | None


def record_name(match: int, rotation: int) -> str:
    """The file name of one game's record inside the records folder."""
    return f"match{match:05d}-rot{rotation}.json"


class Runner:
    """Plays the games of one worker; holds one agent per line-up slot, built once."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config
        factory = config.factory or default_agent_factory
        self.agents = [
            factory(config.lineup[entry], derive_seed(config.seed, "agent", slot))
            for slot, entry in enumerate(config.seating.pattern)
        ]

    def play_match(self, match: int) -> list[GameResult]:
        """Every rotation of duplicate match ``match``, in rotation order."""
        return [self.play_game(match, rotation) for rotation in range(self.config.seating.rotations)]

    def play_game(self, match: int, rotation: int) -> GameResult:
        """One game; EvaluationError if an agent raises or plays an illegal action."""
        config = self.config
        rules, seating = config.rules, config.seating
        n, entries = rules.num_players, len(config.lineup)
        seed = match_seed(config.seed, match)
        seat_entries = seating.entries_at_seats(rotation)
        seat_agents: list[Agent] = [None] * n  # type: ignore[list-item]
        for slot, agent in enumerate(self.agents):
            agent.reset(derive_seed(config.seed, match, rotation, slot))
            seat_agents[seating.seat_of_slot(slot, rotation)] = agent
        decisions, choices = [0] * entries, [0] * entries
        choice_seconds, slowest, seconds = [0.0] * entries, [0.0] * entries, [0.0] * entries
        state = State(rules, seed=seed)
        actions = 0
        while not state.finished:
            seat = state.to_act
            entry = seat_entries[seat]
            view = state.view(seat)
            start = time.perf_counter()
            try:
                action = seat_agents[seat].act(view)
            except Exception as err:
                raise EvaluationError(
                    f"agent {config.lineup[entry]!r} (seat {seat}) failed in match {match}, rotation {rotation}, "
                    f"round {state.round_index}: {type(err).__name__}: {err}"
                ) from err
            spent = time.perf_counter() - start
            if action not in view.legal:
                legal = ", ".join(state.action_text(a) for a in view.legal)
                raise EvaluationError(
                    f"agent {config.lineup[entry]!r} (seat {seat}) chose {action!r}, which is illegal in match "
                    f"{match}, rotation {rotation}, round {state.round_index}; legal: {legal}"
                )
            decisions[entry] += 1
            seconds[entry] += spent
            if len(view.legal) > 1:
                choices[entry] += 1
                choice_seconds[entry] += spent
                slowest[entry] = max(slowest[entry], spent)
            state.apply(int(action))
            actions += 1
        if config.records_dir is not None:
            write_record(
                state,
                os.path.join(config.records_dir, record_name(match, rotation)),
                seed=seed,
                agents=[config.lineup[e] for e in seat_entries],
                evaluation={"seed": config.seed, "match": match, "rotation": rotation, "lineup": list(config.lineup)},
            )
        return _game_result(state, match, rotation, seed, seat_entries, entries, actions,
                            (decisions, choices, choice_seconds, slowest, seconds))  # fmt: skip


def _game_result(state: State, match, rotation, seed, seat_entries, entries, actions, timing) -> GameResult:
    rules = state.rules
    scores = tuple(exact(s) for s in state.scores)
    share_of_side = [1 / len(state.winners) if side in state.winners else 0.0 for side in range(rules.num_sides)]
    margin_of_side = [
        scores[side] - max(scores[o] for o in range(rules.num_sides) if o != side) for side in range(rules.num_sides)
    ]
    side_of_entry = [0] * entries
    for seat, entry in enumerate(seat_entries):
        side_of_entry[entry] = rules.side_of[seat]
    decisions, choices, choice_seconds, slowest, seconds = timing
    return GameResult(
        match=match,
        rotation=rotation,
        match_seed=seed,
        seat_entries=seat_entries,
        scores=scores,
        winners=tuple(state.winners),
        rounds=len(state.past),
        actions=actions,
        share=tuple(share_of_side[s] for s in side_of_entry),
        margin=tuple(float(margin_of_side[s]) for s in side_of_entry),
        decisions=tuple(decisions),
        choices=tuple(choices),
        choice_seconds=tuple(choice_seconds),
        slowest=tuple(slowest),
        seconds=tuple(seconds),
    )
