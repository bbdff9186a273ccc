"""Policy iteration on the policy's own play-outs: rounds after self-play that improve on the policy itself.

The warm start fits each action's score to a play-out under the search's
rollout policy, so its policy can at best play as that search would; PPO
then settles near one fixed point. A round here improves on the policy
instead, and can be repeated:

1. the policy plays ``iteration.matches`` matches against itself, sampling its softmax
   at ``iteration.temperature`` (below 1, closer to the favourite the evaluations play);
   in a share of them (``iteration.heuristic``, ``iteration.greedy``) a hand-written
   bot plays one side throughout, self-play and play-outs alike, and only the
   policy's seats are labelled: a field that holds weaker players than itself;
   with ``iteration.search`` the search plays a side of the matches, the
   policy its seats in the play-outs: positions met against a stronger player;
2. at every decision with a choice, the batched engine copies the table once
   per legal action (:meth:`VectorEnv.branch`); each copy plays its action,
   then the rest of the round with the policy's favourite at every seat, each
   seat from its own view (nobody peeks);
3. each action is valued as the search values a play-out: the seat's side's
   points minus the others', plus :data:`WIN_BONUS` for a match won inside
   the round (minus it for one lost);
4. a fresh network is fit to the labels of every round so far, with the warm
   start's loss (each action's score against its value minus the decision's
   mean), and plays the next round.

Every match draws its samples (and whether a bot sits at it, and where)
from its own generators, and the labels are ordered by match and turn, so a
round's labels and its fit do not depend on how many processes played it.
"""

from __future__ import annotations

import io
import multiprocessing
import zipfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.base import Agent
from agents.batched import choose as bot_choose
from agents.greedy import GreedyAgent
from agents.heuristic import HeuristicAgent
from agents.match_equity import equity_table
from agents.policy_net import NEG, PolicyNet
from agents.policy_playouts import SeatBots
from agents.policy_playouts import play_outs as policy_play_outs
from agents.rollout import NO_EQUITY
from agents.search import SearchAgent
from allfives_env.vector import VectorEnv

from .checkpoint import atomic_write
from .imitation import _loss
from .ppo import Tensors
from .rollout import keep_tables

#: What a round records per decision with a choice; ``match`` and ``turn`` only order the labels.
FIELDS = ("obs", "rows", "width", "values")
#: The bots that may play a side of a round's matches (``iteration.heuristic`` and the rest). The search is
#: too slow to play the play-outs: there, the policy plays its seats.
BOTS = {"heuristic": HeuristicAgent, "greedy": GreedyAgent, "search": SearchAgent}


@dataclass(frozen=True)
class Fit:
    """How a fresh network is fit to the labels."""

    epochs: int
    lr: float  # Adam's step size at the start, decayed linearly to 0
    minibatch: int
    huber: float  # points of error beyond which errors count linearly (0: squared throughout)
    value_scale: float  # points of value per unit of the actor's score
    max_grad_norm: float = 0.5


@dataclass(frozen=True)
class LabelJob:
    """A shard of a round's matches, with the policy that plays them."""

    actor: dict[str, torch.Tensor]
    model: dict  # PolicyNet sizes
    rules: dict  # Rules.as_dict()
    first: int  # the round's index of the shard's first match
    seeds: tuple[int, ...]  # a deal seed per match
    sample_seeds: tuple[int, ...]  # a sampling seed per match
    equity: bool = False  # value a round's end by the match's chances (agents.match_equity)
    temperature: float = 1.0  # the self-play's softmax is over the scores divided by it
    bots: tuple[tuple[str, float], ...] = ()  # (bot, share of the matches where it plays a side)


def _engine(rules: dict, num_envs: int) -> VectorEnv:
    return VectorEnv(num_envs, **rules, reward="points", auto_forced=True, action_features=True)


@torch.no_grad()
def choose(
    net: PolicyNet, step, tables: np.ndarray, draws: np.ndarray | None = None, temperature: float = 1.0
) -> np.ndarray:
    """The policy's action on ``tables``: its favourite, or sampled with uniform ``draws`` from the softmax of
    its scores divided by ``temperature``."""
    mask = step.action_mask[tables].astype(bool)
    width = mask.sum(1)
    b, a = np.nonzero(mask)
    first = np.cumsum(width) - width
    embedded = net.embed(torch.from_numpy(step.observation[tables]))
    scores = net.score_rows(embedded[torch.from_numpy(b)], torch.from_numpy(step.action_features[tables[b], a]))
    logits = np.full((len(tables), int(width.max())), NEG, dtype=np.float32)
    logits[b, np.arange(len(b)) - first[b]] = scores.numpy()
    if draws is None:
        pick = logits.argmax(1)
    else:
        weights = np.exp((logits - logits.max(1, keepdims=True)) / np.float32(temperature))
        u = draws * weights.sum(1)
        pick = np.minimum((np.cumsum(weights, 1) <= u[:, None]).sum(1), width - 1)
    return a[first + pick]


def play_outs(
    net: PolicyNet,
    env: VectorEnv,
    owners: np.ndarray,
    actions: np.ndarray,
    equity: np.ndarray = NO_EQUITY,
    bots: SeatBots | None = None,
) -> np.ndarray:
    """Each ``actions[j]`` played on a copy of table ``owners[j]``, then the round out with the policy's favourites
    where ``bots`` do not play (a round's end short of the target valued by the ``equity`` table, if not empty)."""
    favourites = partial(choose, net)
    return policy_play_outs(favourites, env, owners, actions, equity, bots).astype(np.float32)


def seat_bots(job: LabelJob, side_of: tuple[int, ...]) -> tuple[np.ndarray, list[Agent | None], list[Agent | None]]:
    """Which seats of each of the job's matches a bot plays ([matches, players] bool), and that bot twice: one
    plays the match, one the play-outs (None for the search), each breaking ties with its own generator. Each
    match draws whether a bot sits at it, which, and on which side from a generator of its own sampling seed."""
    seats = np.zeros((len(job.seeds), len(side_of)), dtype=bool)
    players: list[Agent | None] = [None] * len(job.seeds)
    helpers: list[Agent | None] = [None] * len(job.seeds)
    if not job.bots:
        return seats, players, helpers
    edges = np.cumsum([share for _, share in job.bots])
    for m, seed in enumerate(job.sample_seeds):
        rng = np.random.default_rng([seed, 1])
        pick = int(np.searchsorted(edges, rng.random(), side="right"))
        if pick < len(job.bots):
            seats[m] = np.array(side_of) == rng.integers(max(side_of) + 1)
            kind = BOTS[job.bots[pick][0]]
            players[m] = kind(seed=seed)
            helpers[m] = None if kind is SearchAgent else kind(seed=seed + 1)
    return seats, players, helpers


@torch.no_grad()
def label_matches(job: LabelJob) -> dict[str, np.ndarray]:
    """The shard's self-play matches; every decision with a choice, with each legal action's play-out value."""
    net = PolicyNet(**job.model).eval()
    net.load_state_dict(job.actor, strict=False)
    samplers = [np.random.default_rng(s) for s in job.sample_seeds]
    env = _engine(job.rules, len(job.seeds))
    equity = equity_table(env.game_rules) if job.equity else NO_EQUITY
    bot_seats, players, helpers = seat_bots(job, env.game_rules.side_of)
    playout_seats = bot_seats & np.array([h is not None for h in helpers])[:, None]

    def table_bots(ids: np.ndarray) -> SeatBots | None:
        """The play-outs' bots for the engine's tables as they stand (rebuilt only when tables are dropped)."""
        return SeatBots(playout_seats[ids], [helpers[i] for i in ids.tolist()]) if job.bots else None

    step = env.reset(list(job.seeds))
    ids, active = np.arange(len(job.seeds)), np.ones(len(job.seeds), dtype=bool)
    bots = table_bots(ids)
    found: dict[str, list] = {k: [] for k in (*FIELDS, "match", "turn")}
    turn = 0
    while ids.size:
        live = active[ids]
        if live.sum() <= 0.8 * ids.size:  # stop stepping finished matches
            kept = np.flatnonzero(live)
            if not kept.size:
                break
            step, ids, live = keep_tables(env, step, kept), ids[kept], live[kept]
            bots = table_bots(ids)
        mask = step.action_mask.astype(bool)
        actions = mask.argmax(1)
        choice = live & (mask.sum(1) > 1)
        by_bot = choice & bot_seats[ids, step.current_player]
        if by_bot.any():
            rows = np.flatnonzero(by_bot)
            actions[rows] = bot_choose(env, rows, [players[i] for i in ids[rows].tolist()])
        tables = np.flatnonzero(choice & ~by_bot)
        if tables.size:
            b, a = np.nonzero(mask[tables])
            found["obs"].append(step.observation[tables])
            found["rows"].append(step.action_features[tables[b], a])
            found["width"].append(mask[tables].sum(1))
            found["values"].append(play_outs(net, env, tables[b], a, equity, bots))
            found["match"].append(job.first + ids[tables])
            found["turn"].append(np.full(tables.size, turn))
            draws = np.array([samplers[i].random() for i in ids[tables].tolist()])
            actions[tables] = choose(net, step, tables, draws, job.temperature)
        step = env.step(actions)
        active[ids[np.flatnonzero(step.terminated & live)]] = False
        turn += 1
    return {k: np.concatenate(v) for k, v in found.items()}


def _one_thread() -> None:
    torch.set_num_threads(1)


def label_round(
    actor: dict[str, torch.Tensor],
    model: dict,
    rules: dict,
    seeds: list[int],
    sample_seeds: list[int],
    workers: int,
    equity: bool = False,
    temperature: float = 1.0,
    bots: dict[str, float] | None = None,
) -> dict[str, np.ndarray]:
    """A round's labels, its matches shared among ``workers`` processes (1: this one), ordered by match and turn;
    with ``equity``, a round's end is valued by the match's chances (:mod:`agents.match_equity`); the self-play
    samples the softmax of the scores divided by ``temperature``; ``bots`` names the share of the matches where
    each of :data:`BOTS` plays a side."""
    shares = tuple((name, share) for name, share in (bots or {}).items() if share > 0)
    cut = np.linspace(0, len(seeds), workers + 1).astype(int).tolist()
    jobs = [
        LabelJob(actor, model, rules, lo, tuple(seeds[lo:hi]), tuple(sample_seeds[lo:hi]), equity, temperature, shares)
        for lo, hi in zip(cut[:-1], cut[1:], strict=True)
        if hi > lo
    ]
    if len(jobs) == 1:
        parts = [label_matches(jobs[0])]
    else:
        with multiprocessing.get_context("spawn").Pool(len(jobs), initializer=_one_thread) as pool:
            parts = pool.map(label_matches, jobs)
    found = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    order = np.lexsort((found["turn"], found["match"]))
    width = found["width"][order]
    first = (np.cumsum(found["width"]) - found["width"])[order]  # each decision's first row, in the new order
    flat = np.repeat(first, width) + np.arange(width.sum()) - np.repeat(np.cumsum(width) - width, width)
    return {"obs": found["obs"][order], "rows": found["rows"][flat], "width": width, "values": found["values"][flat]}


def fit_fresh(labels: dict[str, np.ndarray], model: dict, fit: Fit, seed: int, device: torch.device) -> PolicyNet:
    """A fresh network, seeded by ``seed``, fit to ``labels`` (the step size decays linearly to 0)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = PolicyNet(**model).to(device)
    return fit_network(net, labels, fit, seed, device)


def fit_network(net: PolicyNet, labels: dict[str, np.ndarray], fit: Fit, seed: int, device: torch.device) -> PolicyNet:
    """``net`` fit in place to ``labels`` from where it stands, minibatches drawn by ``seed``; returns it."""
    n = len(labels["width"])
    start = np.cumsum(labels["width"]) - labels["width"]

    def t(x: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(x)).to(device)

    data = Tensors(
        obs=t(labels["obs"]),
        state=torch.empty(0, device=device),  # no critic is fit
        rows=t(labels["rows"]),
        start=t(start),
        width=t(labels["width"].astype(np.int64)),
        chosen=torch.zeros(n, dtype=torch.int64, device=device),
        logp=torch.zeros(n, device=device),
    )
    values = t(labels["values"] / np.float32(fit.value_scale))
    optimizer = torch.optim.Adam(net.parameters(), lr=fit.lr)
    generator = torch.Generator().manual_seed(seed)
    updates, done = fit.epochs * -(-n // fit.minibatch), 0
    for _ in range(fit.epochs):
        order = torch.randperm(n, generator=generator).to(device)
        for first in range(0, n, fit.minibatch):
            optimizer.param_groups[0]["lr"] = fit.lr * (1 - done / updates)
            done += 1
            loss, _ = _loss(net, data, order[first : first + fit.minibatch], 0.0, values, fit.huber / fit.value_scale)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), fit.max_grad_norm)
            optimizer.step()
    return net


def save_labels(path: Path, labels: dict[str, np.ndarray]) -> None:
    """Write a round's labels whole or not at all."""
    buffer = io.BytesIO()
    np.savez(buffer, **labels)
    atomic_write(path, buffer.getvalue())


def load_labels(path: Path) -> dict[str, np.ndarray]:
    """A round's labels as :func:`save_labels` wrote them; a missing or broken file raises ``ValueError``."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            labels = {k: saved[k] for k in FIELDS}
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as error:
        raise ValueError(f"cannot read the policy-iteration labels {str(path)!r} ({error}); "
                         "allowed: the file a round of this run wrote; start the run again with --overwrite") from None  # fmt: skip
    width = labels["width"]
    rows = int(width.sum()) if width.ndim == 1 and (width > 1).all() else -1
    if len(labels["obs"]) != len(width) or len(labels["rows"]) != rows or len(labels["values"]) != rows:
        raise ValueError(f"the policy-iteration labels {str(path)!r} do not fit together; "
                         "allowed: the file a round of this run wrote; start the run again with --overwrite")  # fmt: skip
    return labels
