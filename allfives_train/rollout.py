"""Playing many matches side by side and collecting the network's decisions.

The core :class:`~allfives_env.core.State` objects are stepped directly (no
environment wrapper): at each tick every match runs forced moves and bot
moves until the network must choose, then all waiting decisions go through
the network in one batch. A decision with a single legal action is played
without asking the network and is not learned from; its points still count
towards the reward of the seat's previous decision.

Reward of a decision: the zero-sum points (own side's gain minus the mean
gain of the other sides, per target) until the seat's next decision, plus
``+win``/``-win`` on its last decision of the match.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import torch

from agents.base import Agent
from agents.policy_features import ACTION_SIZE, encode_decision
from agents.policy_net import GLOBAL_SIZE, PolicyNet
from allfives_env.core import Rules, State

CURRENT = "current"  # a seat played (and learned) by the network being trained
POOL = "pool"  # a seat played by a past snapshot of it
TEACHER = "teacher"


@dataclass
class Teacher:
    """A seat played by a bot whose decisions are recorded as if the network had made them (imitation)."""

    agent: Agent


def hidden_tiles(state: State, seat: int) -> np.ndarray:
    """What the centralised critic sees beyond the seat's view: the other hands and the boneyard."""
    out = np.zeros(GLOBAL_SIZE, dtype=np.float32)
    n = state.rules.num_players
    for rel in range(1, n):
        hand = state.hands[(seat + rel) % n]
        base = 28 * (rel - 1)
        while hand:
            low = hand & -hand
            out[base + low.bit_length() - 1] = 1.0
            hand ^= low
    for tile in state.boneyard[state.bone_pos :]:
        out[84 + tile] = 1.0
    return out


@dataclass
class MatchSpec:
    """One match to play: its deal seed, who plays each seat, and what it counts towards."""

    seed: int
    controls: list  # per seat: CURRENT, POOL or an Agent
    opponent: str  # "self", "pool" or a bot name, for the win-rate statistics
    sample_seed: int = 0  # seeds this match's own sampling generator (and its bots' resets)


@dataclass
class Batch:
    """The decisions of the current network, in collection order, with what PPO needs (values come later)."""

    states: list = field(default_factory=list)
    actions: list = field(default_factory=list)
    hidden: list = field(default_factory=list)
    chosen: list = field(default_factory=list)
    logp: list = field(default_factory=list)
    reward: list = field(default_factory=list)
    trajectories: list = field(default_factory=list)  # lists of decision indices, one per (match, seat)

    def __len__(self) -> int:
        return len(self.chosen)


class _Match:
    __slots__ = ("spec", "state", "last", "side_of", "rules", "steps", "rng")

    def __init__(self, rules: Rules, spec: MatchSpec) -> None:
        self.spec = spec
        self.rng = random.Random(spec.sample_seed)  # per match, so how matches are batched never matters
        self.rules = rules
        self.state = State(rules, seed=spec.seed)
        self.side_of = rules.side_of
        self.last = list(self.state.scores)
        self.steps: dict[int, list[int]] = {}


def _zero_sum(delta: list, side: int) -> float:
    others = len(delta) - 1
    return delta[side] - (sum(delta) - delta[side]) / others


class RolloutWorker:
    """Plays a list of matches to the end with the current network (and maybe one pool snapshot)."""

    def __init__(self, rules: Rules, device: torch.device, points_weight: float, win_weight: float) -> None:
        self.rules = rules
        self.device = device
        self.points_weight = points_weight
        self.points_scale = points_weight / rules.target
        self.win_weight = win_weight

    def play(
        self,
        specs: list[MatchSpec],
        net: PolicyNet,
        pool_net: PolicyNet | None = None,
        learn: bool = True,
    ) -> tuple[Batch, list[tuple[str, float]]]:
        """Play ``specs`` to the end; return the batch and (opponent, learner result) per match (1, 0.5 or 0).

        Network seats sample from the policy, each match from its own generator. With ``learn=False``
        (evaluation) nothing is collected and the network plays its argmax.
        """
        batch = Batch()
        matches = [_Match(self.rules, spec) for spec in specs]
        for m in matches:
            for seat, control in enumerate(m.spec.controls):
                agent = control.agent if isinstance(control, Teacher) else control
                if isinstance(agent, Agent):
                    agent.reset(m.spec.sample_seed + seat)
        results: list[tuple[str, float]] = []
        active = matches
        while active:
            waiting: dict[str, list] = {CURRENT: [], POOL: [], TEACHER: []}
            still = []
            for m in active:
                self._advance(m, batch)
                if m.state.finished:
                    results.append(self._finish(m, batch))
                    continue
                still.append(m)
                seat = m.state.to_act
                control = m.spec.controls[seat]
                waiting[TEACHER if isinstance(control, Teacher) else control].append((m, seat))
            active = still
            if waiting[CURRENT]:
                self._decide(waiting[CURRENT], net, batch, learn=learn, sample=learn)
            if waiting[POOL]:
                self._decide(waiting[POOL], pool_net, batch, learn=False, sample=True)
            for m, seat in waiting[TEACHER]:
                view = m.state.view(seat)
                state_vec, rows = encode_decision(view)
                pick = view.legal.index(m.spec.controls[seat].agent.act(view))
                self._record(m, seat, state_vec, rows, pick, 0.0, batch)
                self._apply(m, view.legal[pick], batch)
        return batch, results

    def _advance(self, m: _Match, batch: Batch) -> None:
        """Play forced and bot moves until a network seat must choose, or the match ends."""
        state = m.state
        controls = m.spec.controls
        while not state.finished:
            legal = state.legal_actions()
            seat = state.to_act
            control = controls[seat]
            if len(legal) == 1:
                self._apply(m, legal[0], batch)
            elif isinstance(control, Agent):
                self._apply(m, control.act(state.view(seat)), batch)
            else:
                return

    def _apply(self, m: _Match, action: int, batch: Batch) -> None:
        state = m.state
        state.apply(action)
        scores = state.scores
        if scores != m.last:
            delta = [a - b for a, b in zip(scores, m.last, strict=True)]
            m.last = list(scores)
            for seat, steps in m.steps.items():
                if steps:
                    batch.reward[steps[-1]] += self.points_scale * _zero_sum(delta, m.side_of[seat])

    def _finish(self, m: _Match, batch: Batch) -> tuple[str, float]:
        winners = m.state.winners
        for seat, steps in m.steps.items():
            if steps:
                side = m.side_of[seat]
                outcome = (1.0 if len(winners) == 1 else 0.0) if side in winners else -1.0
                batch.reward[steps[-1]] += self.win_weight * outcome
                batch.trajectories.append(steps)
        learner = next((s for s, c in enumerate(m.spec.controls) if c == CURRENT), None)
        if learner is None or m.spec.opponent == "self":
            return m.spec.opponent, 0.5
        side = m.side_of[learner]
        return m.spec.opponent, (0.5 if len(winners) > 1 else 1.0) if side in winners else 0.0

    @torch.no_grad()
    def _decide(self, waiting: list, net: PolicyNet, batch: Batch, learn: bool, sample: bool) -> None:
        views = [m.state.view(seat) for m, seat in waiting]
        encoded = [encode_decision(v) for v in views]
        k = max(len(a) for _, a in encoded)
        b = len(encoded)
        states = np.stack([s for s, _ in encoded])
        actions = np.zeros((b, k, ACTION_SIZE), dtype=np.float32)
        mask = np.zeros((b, k), dtype=bool)
        for i, (_, a) in enumerate(encoded):
            actions[i, : len(a)] = a
            mask[i, : len(a)] = True
        st = torch.from_numpy(states).to(self.device)
        logits = net.logits(st, torch.from_numpy(actions).to(self.device), torch.from_numpy(mask).to(self.device))
        logp_all = torch.log_softmax(logits, dim=-1).cpu().numpy()
        if sample:
            cumulative = np.cumsum(np.exp(logp_all), axis=1)
        else:
            picks = logp_all.argmax(axis=1)
        for i, (m, seat) in enumerate(waiting):
            if sample:
                width = len(encoded[i][1])
                u = m.rng.random() * cumulative[i, width - 1]
                pick = min(int(np.searchsorted(cumulative[i, :width], u, side="right")), width - 1)
            else:
                pick = int(picks[i])
            if learn:
                self._record(m, seat, states[i], encoded[i][1], pick, float(logp_all[i, pick]), batch)
            self._apply(m, views[i].legal[pick], batch)

    @staticmethod
    def _record(m: _Match, seat: int, state_vec, rows, pick: int, logp: float, batch: Batch) -> None:
        m.steps.setdefault(seat, []).append(len(batch.chosen))
        batch.states.append(state_vec)
        batch.actions.append(rows)
        batch.hidden.append(hidden_tiles(m.state, seat))
        batch.chosen.append(pick)
        batch.logp.append(logp)
        batch.reward.append(0.0)
