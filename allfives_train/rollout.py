"""Playing many matches side by side through the batched engine and collecting the network's decisions.

Every match of a wave is one table of an :class:`allfives_env.vector.VectorEnv`
(``auto_forced=True``, ``reward="points"``, ``action_features=True``): the
network reads exactly the environment's contract (observation, action mask,
action feature rows) and the centralised critic its ``state()`` vector, all
as arrays for every table at once. At each tick the seats to act are sorted
by who plays them: the network being trained, a past snapshot of it (both
in one batched forward pass each), or a bot. The hand-written bots choose
for all their tables in one compiled call each, reading the engine's table
records as their seats may see them (:func:`agents.batched.choose`); any
other agent is given its seat's view. A decision with a single legal action is
played without asking the network and is not learned from; its points still
count towards the reward of the seat's previous decision.

Reward of a decision: the engine's zero-sum points rewards (own side's gain
minus the mean gain of the other sides, per target) until the seat's next
decision, times ``points``, plus ``+win``/``-win`` on its last decision of
the match (0 for a shared win).

Each table samples from its own counter-based generator (a hash of its
``sample_seed`` and its decision count), so a match plays the same whichever
tables it is batched with, in one process or in several.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from agents.base import Agent
from agents.batched import choose
from agents.policy_net import NEG, PolicyNet
from agents.rollout import table_values
from allfives_env.core import Rules
from allfives_env.core.scoring import match_rewards
from allfives_env.vector import VectorEnv

CURRENT = "current"  # a seat played (and learned) by the network being trained
POOL = "pool"  # a seat played by a past snapshot of it
TEACHER = "teacher"
_CURRENT, _POOL, _BOT, _TEACHER = range(4)  # the control codes of the seat table


@dataclass
class Teacher:
    """A seat played by a bot whose decisions are recorded as if the network had made them (imitation).

    With ``playouts``, each recorded decision also carries the value of every
    legal action, one play-out of the round on the true deal each
    (:func:`agents.rollout.table_values`, on the engine's own table), in the batch's ``values``.
    """

    agent: Agent
    playouts: bool = False


@dataclass
class MatchSpec:
    """One match to play: its deal seed, who plays each seat, and what it counts towards."""

    seed: int
    controls: list  # per seat: CURRENT, POOL, an Agent or a Teacher
    opponent: str  # "self", "pool" or a bot name, for the win-rate statistics
    sample_seed: int = 0  # seeds this match's own sampling stream (and its bots' resets)


@dataclass
class Batch:
    """The learning decisions in collection order, as arrays (values and advantages come later).

    Decision ``i`` has the observation, the global state and ``width[i]``
    legal feature rows (stored flat in ``rows``, in action id order); it
    chose row ``chosen[i]``. ``next[i]`` is the same seat's next decision in
    the same match, -1 after its last one.
    """

    obs: np.ndarray  # [n, 192] int8
    state: np.ndarray  # [n, 302] int8
    rows: np.ndarray  # [sum(width), K] int8
    width: np.ndarray  # [n] int64
    chosen: np.ndarray  # [n] int64
    logp: np.ndarray  # [n] float32
    reward: np.ndarray  # [n] float64
    next: np.ndarray  # [n] int64
    values: np.ndarray | None = None  # [sum(width)] float32, per legal row: its play-out value (Teacher.playouts)

    def __len__(self) -> int:
        return len(self.width)

    @property
    def matches_ended(self) -> int:
        """Trajectories in the batch: decisions that are their seat's last of a match."""
        return int((self.next < 0).sum())

    @staticmethod
    def concat(parts: list[Batch]) -> Batch:
        """One batch of several, in order (``next`` indices shifted)."""
        offsets = np.cumsum([0] + [len(p) for p in parts[:-1]])
        nxt = [np.where(p.next >= 0, p.next + o, -1) for p, o in zip(parts, offsets, strict=True)]
        labelled = [p.values is not None for p in parts]
        if any(labelled) and not all(labelled):
            raise ValueError("batches with and without play-out values cannot be joined")
        return Batch(
            *(np.concatenate([getattr(p, f) for p in parts]) for f in ("obs", "state", "rows", "width", "chosen")),
            np.concatenate([p.logp for p in parts]),
            np.concatenate([p.reward for p in parts]),
            np.concatenate(nxt),
            np.concatenate([p.values for p in parts]) if all(labelled) and parts else None,
        )


class _Collector:
    """The growing arrays of a :class:`Batch`; rewards are added to decisions already recorded."""

    def __init__(self) -> None:
        self.chunks: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "state", "rows", "width", "chosen", "logp")}
        self.n = 0
        self.reward = np.zeros(4096)
        self.next = np.full(4096, -1, dtype=np.int64)
        self.values: list[np.ndarray] = []  # play-out values of the legal rows, for every decision or none

    def add(self, obs, state, rows, width, chosen, logp) -> np.ndarray:
        """Record decisions; returns their indices."""
        count = len(width)
        for key, value in zip(self.chunks, (obs, state, rows, width, chosen, logp), strict=True):
            self.chunks[key].append(value)
        if self.n + count > len(self.reward):
            grow = max(len(self.reward), count)
            self.reward = np.concatenate([self.reward, np.zeros(grow)])
            self.next = np.concatenate([self.next, np.full(grow, -1, dtype=np.int64)])
        index = np.arange(self.n, self.n + count)
        self.n += count
        return index

    def batch(self, obs_size: int, state_size: int, row_size: int) -> Batch:
        empty = {
            "obs": np.zeros((0, obs_size), np.int8),
            "state": np.zeros((0, state_size), np.int8),
            "rows": np.zeros((0, row_size), np.int8),
            "width": np.zeros(0, np.int64),
            "chosen": np.zeros(0, np.int64),
            "logp": np.zeros(0, np.float32),
        }
        arrays = {k: np.concatenate(v) if v else empty[k] for k, v in self.chunks.items()}
        if self.values and len(self.values) != self.n:
            raise ValueError("some recorded decisions lack play-out values: a match mixed labelled and other seats")
        values = np.concatenate(self.values) if self.values else None
        return Batch(**arrays, reward=self.reward[: self.n].copy(), next=self.next[: self.n].copy(), values=values)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def uniforms(seeds: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """One uniform in [0, 1) per (seed, counter): SplitMix64 of ``seed + (counter + 1) * golden``."""
    with np.errstate(over="ignore"):
        z = seeds.astype(np.uint64) + (counters.astype(np.uint64) + np.uint64(1)) * _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 2**53)


def keep_tables(env: VectorEnv, step, kept: np.ndarray):
    """Drop every table but ``kept`` from ``env`` and from its last outputs ``step``; returns those outputs."""
    env.keep(kept)
    return step._replace(**{f: v[kept] for f, v in step._asdict().items() if v is not None})


class RolloutWorker:
    """Plays a list of matches to the end, one table each, with the current network (and maybe one snapshot)."""

    def __init__(self, rules: Rules, device: torch.device, points_weight: float, win_weight: float) -> None:
        self.rules = rules
        self.device = device
        self.points_weight = points_weight
        self.win_weight = win_weight

    def engine(self, num_envs: int) -> VectorEnv:
        r = self.rules
        return VectorEnv(
            num_envs,
            num_players=r.num_players,
            rules=r.rules,
            partnerships=r.partnerships,
            target=r.target,
            opening=r.opening,
            reward="points",
            auto_forced=True,
            action_features=True,
        )

    def play(
        self,
        specs: list[MatchSpec],
        net: PolicyNet,
        pool_net: PolicyNet | None = None,
        learn: bool = True,
    ) -> tuple[Batch, list[tuple[str, float]]]:
        """Play ``specs`` to the end; return the batch and (opponent, learner result) per match (1, 0.5 or 0).

        Network seats sample from the policy, each match from its own stream. With ``learn=False``
        (evaluation) nothing is collected and the network plays its argmax (the lowest action id on a tie).
        """
        n, players = len(specs), self.rules.num_players
        side_of = np.array(self.rules.side_of)
        control = np.full((n, players), _BOT, dtype=np.int8)
        agents: dict[tuple[int, int], Agent] = {}
        labelled: set[tuple[int, int]] = set()  # teacher seats whose decisions get play-out values
        for i, spec in enumerate(specs):
            for seat, c in enumerate(spec.controls):
                if c == CURRENT:
                    control[i, seat] = _CURRENT
                elif c == POOL:
                    control[i, seat] = _POOL
                else:
                    control[i, seat] = _TEACHER if isinstance(c, Teacher) else _BOT
                    agent = c.agent if isinstance(c, Teacher) else c
                    agent.reset(spec.sample_seed + seat)
                    agents[i, seat] = agent
                    if isinstance(c, Teacher) and c.playouts:
                        labelled.add((i, seat))
        sample_seeds = np.array([s.sample_seed % 2**64 for s in specs], dtype=np.uint64)
        counters = np.zeros(n, dtype=np.int64)
        last = np.full((n, players), -1, dtype=np.int64)  # each seat's latest decision
        active = np.ones(n, dtype=bool)
        outcome = np.zeros((n, players))
        collect = _Collector()
        env = self.engine(n)
        step = env.reset([s.seed for s in specs])
        ids = np.arange(n)  # the match on each of the engine's tables (finished ones are dropped now and then)
        while ids.size:
            live = active[ids]
            if live.sum() <= 0.8 * ids.size:  # stop stepping finished tables
                kept = np.flatnonzero(live)
                if not kept.size:
                    break
                step, ids, live = keep_tables(env, step, kept), ids[kept], live[kept]
            mask = step.action_mask.astype(bool)
            width = mask.sum(1)
            actions = mask.argmax(1)  # the lowest legal id: the forced action, and a filler for finished tables
            seat = step.current_player
            kind = control[ids, seat]
            state = None
            for code, model, learning in ((_CURRENT, net, learn), (_POOL, pool_net, False)):
                rows = np.flatnonzero(live & (kind == code) & (width > 1))
                if not rows.size:
                    continue
                match = ids[rows]
                picks, logp, legal_rows, chosen = self._decide(rows, step, mask, width, model, learning,
                                                               sample_seeds[match], counters[match], learn)  # fmt: skip
                actions[rows] = picks
                counters[match] += 1
                if learning:
                    if state is None:
                        state = env.state()
                    index = collect.add(step.observation[rows], state[rows], legal_rows, width[rows], chosen, logp)
                    self._link(collect, last, match, seat[rows], index)
            bots = np.flatnonzero(live & (kind >= _BOT) & (width > 1))
            if bots.size:
                actions[bots] = choose(env, bots, [agents[int(ids[r]), int(seat[r])] for r in bots.tolist()])
            teaching = bots[kind[bots] == _TEACHER]
            if teaching.size:
                if state is None:
                    state = env.state()
                self._teach(collect, last, step, mask, width, actions, ids, seat, teaching, state, env, labelled)
            step = env.step(actions)
            self._reward(collect, last[ids], live, step.rewards * self.points_weight)
            ended = np.flatnonzero(step.terminated & live)
            if ended.size:
                for r in ended.tolist():  # the core's match rewards: +1 / -1, 0 to all on a shared win
                    sides = match_rewards(self.rules, np.flatnonzero(step.winners[r]).tolist())
                    outcome[ids[r]] = [sides[side] for side in side_of]
                hit = np.zeros(ids.size, dtype=bool)
                hit[ended] = True
                self._reward(collect, last[ids], hit, outcome[ids] * self.win_weight)
                active[ids[ended]] = False
        batch = collect.batch(env.observation_size, env.state_size, step.action_features.shape[2])
        return batch, [self._result(spec, outcome[i]) for i, spec in enumerate(specs)]

    def _teach(self, collect, last, step, mask, width, actions, ids, seat, rows, state, env, labelled) -> None:
        """Record the teacher's decisions on engine tables ``rows`` as if the network had made them; where its
        seat is labelled, with each legal action's play-out value on the true deal (one compiled batch)."""
        legal = [np.flatnonzero(mask[r]) for r in rows.tolist()]
        wanted = [(int(ids[r]), int(seat[r])) in labelled for r in rows.tolist()]
        pairs = [(r, a) for r, actions_here, want in zip(rows.tolist(), legal, wanted, strict=True) if want
                 for a in actions_here.tolist()]  # fmt: skip
        values = table_values(env.records, env.config, [r for r, _ in pairs], [a for _, a in pairs]) if pairs else []
        at = 0
        for r, legal_here, want in zip(rows.tolist(), legal, wanted, strict=True):
            chosen = np.array([int(np.searchsorted(legal_here, actions[r]))])
            index = collect.add(step.observation[r : r + 1], state[r : r + 1], step.action_features[r, legal_here],
                                width[r : r + 1], chosen, np.zeros(1, np.float32))  # fmt: skip
            self._link(collect, last, ids[r : r + 1], seat[r : r + 1], index)
            if want:
                collect.values.append(np.asarray(values[at : at + len(legal_here)], dtype=np.float32))
                at += len(legal_here)

    @staticmethod
    def _link(collect: _Collector, last: np.ndarray, rows: np.ndarray, seats: np.ndarray, index: np.ndarray) -> None:
        previous = last[rows, seats]
        linked = previous >= 0
        collect.next[previous[linked]] = index[linked]
        last[rows, seats] = index

    @staticmethod
    def _reward(collect: _Collector, last: np.ndarray, tables: np.ndarray, reward: np.ndarray) -> None:
        """Add each seat's reward to its latest decision (``last``, per engine table), on the given tables (a mask)."""
        hit = (last >= 0) & tables[:, None] & (reward != 0)
        if hit.any():
            np.add.at(collect.reward, last[hit], reward[hit])

    @staticmethod
    def _result(spec: MatchSpec, outcome: np.ndarray) -> tuple[str, float]:
        learner = next((s for s, c in enumerate(spec.controls) if c == CURRENT), None)
        if learner is None or spec.opponent == "self":
            return spec.opponent, 0.5
        return spec.opponent, (float(outcome[learner]) + 1.0) / 2.0

    @torch.no_grad()
    def _decide(self, rows, step, mask, width, net, learning, sample_seeds, counters, sample):
        """The network's actions, log-probabilities, legal rows and picks on tables ``rows`` (seeds, counters: theirs)."""
        w = width[rows]
        b, a = np.nonzero(mask[rows])  # row-major: each table's legal actions in id order
        legal_rows = step.action_features[rows[b], a]
        first = np.cumsum(w) - w
        pos = np.arange(len(b)) - first[b]
        emb = net.embed(torch.from_numpy(step.observation[rows]).to(self.device))
        scores = net.score_rows(emb[torch.from_numpy(b).to(self.device)], torch.from_numpy(legal_rows).to(self.device))
        logits = np.full((len(rows), int(w.max())), NEG, dtype=np.float32)
        logits[b, pos] = scores.cpu().numpy()
        logits -= logits.max(1, keepdims=True)
        probs = np.exp(logits)
        total = probs.sum(1)
        logp_all = logits - np.log(total)[:, None]
        if sample:
            u = uniforms(sample_seeds, counters) * total
            pick = np.minimum((np.cumsum(probs, axis=1) <= u[:, None]).sum(1), w - 1)
        else:
            pick = logits.argmax(1)
        actions = a[first + pick]
        logp = logp_all[np.arange(len(rows)), pick].astype(np.float32)
        return actions, logp, (legal_rows if learning else None), pick
