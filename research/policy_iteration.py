"""Rounds of policy iteration on the policy's own play-outs, starting from any policy file.

The trainer runs the same rounds after self-play (``iteration.rounds``, see
:mod:`allfives_train.iteration`); this script starts them from a finished
policy instead, such as a shipped checkpoint. Each round plays ``--matches``
self-play matches of the current policy, labels every legal action of their
decisions with a choice by the policy's own play-out of the round, and fits
a fresh network to all the labels so far.

    python research/policy_iteration.py --start agents/checkpoints/default.pt --rounds 3 --out runs/iteration

Round ``k`` writes ``round<k>.pt``, a policy for ``checkpoint:PATH``
(``python -m agents.evaluate checkpoint:runs/iteration/round3.pt heuristic --matches 1000 --workers 2``),
and its labels, ``labels<k>.npz``. ``--more`` goes on from the last round in
``--out`` with its labels, for ``--rounds`` more rounds.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from agents.checkpoint_file import serialize
from agents.policy_net import net_from_checkpoint, policy_payload, read_checkpoint
from allfives_env.help_text import plain_help
from allfives_train.iteration import FIELDS, Fit, fit_fresh, label_round, load_labels, save_labels

VALUE_SCALE = 10.0  # points per unit of the actor's scores, as the trainer's imitation.value_scale


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=plain_help(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter
    )
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
            gathered.append(load_labels(out / f"labels{done}.npz"))
        if not done:
            parser.error(f"--more: no round<k>.pt with its labels<k>.npz in {str(out)!r}")
        policy = str(out / f"round{done}.pt")
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(args.workers)
    rng = np.random.default_rng([args.seed, done] if done else args.seed)  # new matches for the rounds after ``done``
    fit = Fit(args.epochs, args.lr, args.minibatch, args.huber, VALUE_SCALE)
    for k in range(done + 1, done + args.rounds + 1):
        clock = time.perf_counter()
        net = net_from_checkpoint(read_checkpoint(policy), policy)
        seeds, sample_seeds = (rng.integers(2**62, size=args.matches).tolist() for _ in range(2))
        fresh = label_round(net.actor_state_dict(), net.sizes(), start["rules"], seeds, sample_seeds, args.workers)
        save_labels(out / f"labels{k}.npz", fresh)
        gathered.append(fresh)
        labelled = time.perf_counter()
        labels = {key: np.concatenate([part[key] for part in gathered]) for key in FIELDS}
        net = fit_fresh(labels, net.sizes(), fit, args.seed * 1000 + k, torch.device("cpu"))
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
