"""Rounds of policy iteration on the policy's own play-outs, outside the trainer.

The trainer's warm start fits each action's score to one play-out of the
round under the search's rollout policy, which peeks at the next seat's hand.
Here the play-outs are the policy's own. Each round plays ``--matches``
self-play matches of the current policy (sampling its softmax); at every
decision with a choice the batched engine copies the table once per legal
action (``VectorEnv.branch``), each copy plays its action and then the rest
of the round with the policy's favourite at every seat, each seat from its
own view, and the action is valued as the search values a play-out: the own
side's points minus the other sides' mean, plus 100 for a match won inside
the round (minus 100 if lost). A fresh network is then fit to all the labels
gathered so far, with the warm start's loss (errors beyond ``--huber``
points counted linearly), and it plays the next round.

    python benchmarks/policy_iteration.py --start agents/checkpoints/default.pt --rounds 3 --out runs/iteration

Round ``k`` writes ``round<k>.pt``, a policy for ``checkpoint:PATH``
(``python -m agents.evaluate checkpoint:runs/iteration/round3.pt heuristic --matches 1000 --workers 2``),
and its labels, ``labels<k>.npz``. ``--more`` goes on from the last round in
``--out`` with its labels, for ``--rounds`` more rounds.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.checkpoint_file import serialize
from agents.policy_net import NEG, PolicyNet, net_from_checkpoint, policy_payload, read_checkpoint
from agents.search import WIN_BONUS
from allfives_env.vector import VectorEnv
from allfives_train.imitation import _loss
from allfives_train.ppo import Tensors

INPUTS = ("obs", "state", "rows", "width")
VALUE_SCALE = 10.0  # points per unit of the actor's scores, as the trainer's imitation.value_scale


def engine(rules: dict, num_envs: int) -> VectorEnv:
    return VectorEnv(num_envs, **rules, reward="points", auto_forced=True, action_features=True)


@torch.no_grad()
def choose(net: PolicyNet, step, tables: np.ndarray, rng: np.random.Generator | None) -> np.ndarray:
    """The policy's action on ``tables``: drawn from its softmax with ``rng``, else its favourite."""
    mask = step.action_mask[tables].astype(bool)
    width = mask.sum(1)
    b, a = np.nonzero(mask)
    first = np.cumsum(width) - width
    embedded = net.embed(torch.from_numpy(step.observation[tables]))
    scores = net.score_rows(embedded[torch.from_numpy(b)], torch.from_numpy(step.action_features[tables[b], a]))
    logits = np.full((len(tables), int(width.max())), NEG, dtype=np.float32)
    logits[b, np.arange(len(b)) - first[b]] = scores.numpy()
    if rng is None:
        pick = logits.argmax(1)
    else:
        weights = np.exp(logits - logits.max(1, keepdims=True))
        u = rng.random(len(tables)) * weights.sum(1)
        pick = np.minimum((np.cumsum(weights, 1) <= u[:, None]).sum(1), width - 1)
    return a[first + pick]


def play_outs(net: PolicyNet, env: VectorEnv, owners: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Each ``actions[j]`` played on a copy of table ``owners[j]``, then the round out with the policy's favourites."""
    copies, step = env.branch(owners, episode="round")
    seats = step.current_player.copy()
    side_of = np.array(env.game_rules.side_of)
    target = env.game_rules.target
    points = np.zeros(len(owners))  # the seat's zero-sum points rewards, in units of the target
    bonus = np.zeros(len(owners))
    ids = np.arange(len(owners))
    step = copies.step(actions)
    while True:
        points[ids] += step.rewards[np.arange(ids.size), seats[ids]]
        for r in np.flatnonzero(step.terminated).tolist():
            scores = step.final_scores[r]
            if scores.max() >= target:  # the match was decided inside the round
                winners = np.flatnonzero(scores == scores.max())
                side = side_of[seats[ids[r]]]
                bonus[ids[r]] = WIN_BONUS / len(winners) if side in winners else -WIN_BONUS
        going = np.flatnonzero(~step.terminated)
        if not going.size:
            return (points * target + bonus).astype(np.float32)
        if going.size < ids.size:
            copies.keep(going)
            step = step._replace(**{f: v[going] for f, v in step._asdict().items() if v is not None})
            ids = ids[going]
        moves = step.action_mask.argmax(1)
        tables = np.flatnonzero(step.action_mask.sum(1) > 1)
        if tables.size:
            moves[tables] = choose(net, step, tables, None)
        step = copies.step(moves)


def label(args: tuple[str, list[int], int]) -> dict[str, np.ndarray]:
    """Self-play matches of the policy at ``path``; every decision with a choice, with each legal action's value."""
    path, seeds, sample_seed = args
    torch.set_num_threads(1)
    data = read_checkpoint(path)
    net = net_from_checkpoint(data, path).eval()
    rng = np.random.default_rng(sample_seed)
    env = engine(data["rules"], len(seeds))
    step = env.reset(seeds)
    ids, active = np.arange(len(seeds)), np.ones(len(seeds), dtype=bool)
    found: dict[str, list] = {k: [] for k in (*INPUTS, "values")}
    while ids.size:
        live = active[ids]
        if live.sum() <= 0.8 * ids.size:  # stop stepping finished matches
            kept = np.flatnonzero(live)
            if not kept.size:
                break
            env.keep(kept)
            step = step._replace(**{f: v[kept] for f, v in step._asdict().items() if v is not None})
            ids, live = ids[kept], live[kept]
        mask = step.action_mask.astype(bool)
        actions = mask.argmax(1)
        tables = np.flatnonzero(live & (mask.sum(1) > 1))
        if tables.size:
            width = mask[tables].sum(1)
            b, a = np.nonzero(mask[tables])
            found["obs"].append(step.observation[tables])
            found["state"].append(env.state()[tables])
            found["rows"].append(step.action_features[tables[b], a])
            found["width"].append(width)
            found["values"].append(play_outs(net, env, tables[b], a))
            actions[tables] = choose(net, step, tables, rng)
        step = env.step(actions)
        active[ids[np.flatnonzero(step.terminated & live)]] = False
    return {k: np.concatenate(v) for k, v in found.items()}


def fit(labels: dict[str, np.ndarray], model: dict, args: argparse.Namespace, seed: int) -> PolicyNet:
    """A fresh network fit to every label so far; the step size decays linearly to 0."""
    torch.manual_seed(seed)
    torch.set_num_threads(args.workers)
    net = PolicyNet(model["hidden"], model["action_hidden"])
    n = len(labels["width"])
    start = np.cumsum(labels["width"]) - labels["width"]
    data = Tensors(
        *(torch.from_numpy(np.ascontiguousarray(labels[k])) for k in ("obs", "state", "rows")),
        start=torch.from_numpy(start),
        width=torch.from_numpy(labels["width"].astype(np.int64)),
        chosen=torch.zeros(n, dtype=torch.int64),
        logp=torch.zeros(n),
        ret=torch.zeros(n),
    )
    values = torch.from_numpy(labels["values"] / VALUE_SCALE)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    generator = torch.Generator().manual_seed(seed)
    updates, done = args.epochs * -(-n // args.minibatch), 0
    for _ in range(args.epochs):
        order = torch.randperm(n, generator=generator)
        for first in range(0, n, args.minibatch):
            optimizer.param_groups[0]["lr"] = args.lr * (1 - done / updates)
            done += 1
            loss, _ = _loss(net, data, order[first : first + args.minibatch], 0.0, values, args.huber / VALUE_SCALE)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            optimizer.step()
    return net


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--start", default="agents/checkpoints/default.pt", help="the policy of round 0")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--matches", type=int, default=3000, help="self-play matches labelled a round")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--minibatch", type=int, default=512)
    parser.add_argument("--huber", type=float, default=10.0, help="points beyond which errors count linearly")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1, help="seeds the matches (not the evaluation seeds)")
    parser.add_argument("--out", default="runs/iteration")
    parser.add_argument("--more", action="store_true", help="go on from the last round in --out, with its labels")
    args = parser.parse_args(argv)
    out = Path(args.out)
    start = read_checkpoint(args.start)
    policy, gathered, done = args.start, [], 0
    if args.more:
        while (out / f"round{done + 1}.pt").exists() and (out / f"labels{done + 1}.npz").exists():
            done += 1
            with np.load(out / f"labels{done}.npz") as saved:
                gathered.append({key: saved[key] for key in saved.files})
        if not done:
            parser.error(f"--more: no round<k>.pt with its labels<k>.npz in {str(out)!r}")
        policy = str(out / f"round{done}.pt")
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([args.seed, done] if done else args.seed)  # new matches for the rounds after ``done``
    context = multiprocessing.get_context("spawn")
    for k in range(done + 1, done + args.rounds + 1):
        clock = time.perf_counter()
        seeds = [int(s) for s in rng.integers(2**62, size=args.matches)]
        shares = [(policy, seeds[w :: args.workers], int(rng.integers(2**62))) for w in range(args.workers)]
        with context.Pool(args.workers) as pool:
            parts = pool.map(label, shares)
        fresh = {key: np.concatenate([part[key] for part in parts]) for key in (*INPUTS, "values")}
        np.savez(out / f"labels{k}.npz", **fresh)
        gathered.append(fresh)
        labelled = time.perf_counter()
        labels = {key: np.concatenate([part[key] for part in gathered]) for key in (*INPUTS, "values")}
        net = fit(labels, start["model"], args, args.seed * 1000 + k)
        policy = str(out / f"round{k}.pt")
        payload = policy_payload(net, actor_only=True, rules=start["rules"], steps=0, config=start.get("config"))
        Path(policy).write_bytes(serialize(payload))
        print(
            f"round {k}: {len(fresh['width'])} decisions labelled in {labelled - clock:.0f} s; a fresh network fit to all "
            f"{len(labels['width'])} in {time.perf_counter() - labelled:.0f} s: {policy}",
            flush=True,
        )


if __name__ == "__main__":
    main()
