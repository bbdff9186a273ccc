"""Train the belief model (:mod:`agents.belief`) on matches where every hidden tile's place is known.

    python -m allfives_train.belief --out agents/checkpoints/belief.npz

Bots and the shipped policy play seeded matches in each setting; at every
decision with a choice, the acting seat's view gives the model's rows and the
true deal gives each hidden tile's place. A network scores each (tile,
place) row; the loss is the cross-entropy of the tile's softmax over its
possible places against where it really lies. Held-out matches (their own
seed range) measure the log-loss per hidden tile, in nats, beside two
baselines computed on the same views from sampled deals: uniform deals
(what the searches drew before) and the same deals weighted by
:class:`agents.inference.PlayModel`. Training, evaluation and the weights
follow from ``--seed``.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import random
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from agents.belief import MAX_PLACES, NUM_FEATURES, save_belief, sinkhorn, tile_features, true_places
from agents.inference import DEFAULT_BETA, PlayModel
from agents.policy_agent import DEFAULT_CHECKPOINT, SHIPPED, shipped_checkpoint
from agents.registry import make_agent
from agents.search import sample_hidden
from allfives_env.core import State, make_rules
from allfives_env.help_text import plain_help

#: (rules, players, partnerships, share of the matches, the line-ups played in turn)
SETTINGS: tuple[tuple[str, int, bool, float, tuple[tuple[str, ...], ...]], ...] = (
    ("pagat", 2, False, 0.7, (("heuristic", "heuristic"), ("search", "heuristic"), ("trained", "heuristic"),
                              ("search", "trained"), ("trained", "trained"), ("search", "search"),
                              ("greedy", "heuristic"), ("search", "greedy"))),
    ("fives", 3, False, 0.15, (("search", "heuristic", "greedy"), ("trained", "heuristic", "search"),
                               ("heuristic", "heuristic", "heuristic"))),
    ("pagat", 4, True, 0.15, (("search", "heuristic", "search", "heuristic"),
                              ("trained", "heuristic", "trained", "heuristic"),
                              ("heuristic", "greedy", "heuristic", "greedy"))),
)  # fmt: skip
TRAIN_SEEDS = 50_000_000  # the matches' seeds start here; the held-out ones at EVAL_SEEDS
EVAL_SEEDS = 60_000_000
BASELINE_DEALS = 400  # deals sampled per held-out view for the uniform and play-model marginals


@dataclass
class Examples:
    """Hidden tiles at decisions: rows [T, P, F], allowed [T, P], sizes [T, P], true place [T], view [T]."""

    rows: np.ndarray
    allowed: np.ndarray
    sizes: np.ndarray
    label: np.ndarray
    view: np.ndarray
    lineup: list[str]  # per view
    setting: list[str]  # per view
    baselines: dict[str, np.ndarray] | None = None  # name -> probabilities [T, P]

    def __len__(self) -> int:
        return len(self.label)


def setting_name(rules: str, players: int, partnerships: bool) -> str:
    return f"{rules}{players}{'_partners' if partnerships else ''}"


def _play(job: tuple) -> dict:
    """One match of a job: every decision with a choice, as model rows, labels and (maybe) baselines."""
    rules_name, players, partners, lineup, seed, baselines, trained = job
    rules = make_rules(rules_name, players, partnerships=partners)
    state = State(rules, seed=seed)
    if trained and os.path.isdir(trained):
        trained = shipped_checkpoint(rules, Path(trained))
    elif (rules_name, players, partners) != ("pagat", 2, False):
        trained = None
    lineup_specs = [f"checkpoint:{trained}" if spec == "trained" and trained else spec for spec in lineup]
    agents = [make_agent(spec, seed * 10 + s) for s, spec in enumerate(lineup_specs)]
    rng = random.Random(seed)
    out = defaultdict(list)
    while not state.finished:
        view = state.view(state.to_act)
        if len(view.legal) > 1:
            hidden, sizes, allowed, rows = tile_features(view)
            if len(hidden):
                boneyard = sum(1 << t for t in state.boneyard[state.bone_pos :])
                label = true_places(view, state.hands, boneyard, hidden)
                pad = MAX_PLACES - rows.shape[1]
                out["rows"].append(np.pad(rows, ((0, 0), (0, pad), (0, 0))).astype(np.float16))
                out["allowed"].append(np.pad(allowed, ((0, 0), (0, pad))))
                out["sizes"].append(np.pad(np.broadcast_to(sizes, allowed.shape), ((0, 0), (0, pad))))
                out["label"].append(label)
                out["count"].append(len(hidden))
                out["lineup"].append(" vs ".join(lineup[view.seat :] + lineup[: view.seat]))
                if baselines:
                    for name, probs in baseline_marginals(view, hidden, sizes, allowed, rng).items():
                        out[name].append(np.pad(probs, ((0, 0), (0, pad))))
        state.apply(agents[state.to_act].act(view))
    return dict(out)


def baseline_marginals(view, hidden, sizes, allowed, rng: random.Random) -> dict[str, np.ndarray]:
    """Each hidden tile's place under uniform deals and under play-model-weighted deals (sampled)."""
    places = [(view.seat + k) % len(view.hand_counts) for k in range(1, len(view.hand_counts))] + [-1]
    index = {int(t): i for i, t in enumerate(hidden)}
    model = PlayModel(view, DEFAULT_BETA)
    counts = {"uniform": np.zeros((len(hidden), len(places))), "inference": np.zeros((len(hidden), len(places)))}
    for _ in range(BASELINE_DEALS):
        hands, boneyard = sample_hidden(view, rng)
        weight = model.weight(hands)
        for j, p in enumerate(places):
            tiles = boneyard if p < 0 else [t for t in index if hands[p] >> t & 1]
            for t in tiles:
                counts["uniform"][index[t], j] += 1
                counts["inference"][index[t], j] += weight
    # A little of the place sizes' prior, so a tile never sampled at a possible place keeps some probability.
    prior = allowed * sizes
    prior = prior / prior.sum(1, keepdims=True)
    out = {}
    for name, c in counts.items():
        c = c / np.maximum(c.sum(1, keepdims=True), 1e-300)
        out[name] = (1 - 1e-3) * c + 1e-3 * prior
    return out


def collect(matches: int, seed_base: int, workers: int, baselines: bool = False, progress: bool = True,
            trained: str | None = None) -> Examples:  # fmt: skip
    """``matches`` seeded matches shared among :data:`SETTINGS`, played on ``workers`` processes.

    ``trained``: a policy checkpoint to play where a two-player line-up names ``trained``, or a directory laid out as
    the shipped checkpoints' (:func:`checkpoint_names`) whose file for each table plays it there (default: the
    shipped ones).
    """
    jobs = []
    for rules_name, players, partners, share, lineups in SETTINGS:
        count = max(1, round(matches * share))
        for i in range(count):
            lineup = lineups[i % len(lineups)]
            shift = i % players  # every bot sits at every seat in turn
            seated = lineup[shift:] + lineup[:shift]
            jobs.append((rules_name, players, partners, seated, seed_base + len(jobs), baselines, trained))
    began = time.perf_counter()
    parts = []
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        for k, part in enumerate(pool.imap(_play, jobs, chunksize=4)):
            parts.append((jobs[k], part))
            if progress and (k + 1) % max(1, len(jobs) // 10) == 0:
                print(f"  {k + 1}/{len(jobs)} matches, {time.perf_counter() - began:.0f} s", flush=True)
    return _join(parts, baselines)


def _join(parts: list[tuple[tuple, dict]], baselines: bool) -> Examples:
    rows, allowed, sizes, label, view, lineup, setting = [], [], [], [], [], [], []
    extra = defaultdict(list)
    views = 0
    for job, part in parts:
        for k in range(len(part.get("label", []))):
            rows.append(part["rows"][k])
            allowed.append(part["allowed"][k])
            sizes.append(part["sizes"][k])
            label.append(part["label"][k])
            view.append(np.full(part["count"][k], views))
            lineup.append(part["lineup"][k])
            setting.append(setting_name(*job[:3]))
            for name in ("uniform", "inference") if baselines else ():
                extra[name].append(part[name][k])
            views += 1
    return Examples(np.concatenate(rows), np.concatenate(allowed), np.concatenate(sizes).astype(np.float32),
                    np.concatenate(label), np.concatenate(view), lineup, setting,
                    {k: np.concatenate(v) for k, v in extra.items()} if baselines else None)  # fmt: skip


# -- the network ---------------------------------------------------------------------------------


class BeliefNet(nn.Module):
    """Scores a (tile, place) row; :mod:`agents.belief` runs the same layers in numpy."""

    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(NUM_FEATURES, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                    nn.Linear(hidden, 1))  # fmt: skip

    def log_probs(self, rows: torch.Tensor, allowed: torch.Tensor, sizes: torch.Tensor) -> torch.Tensor:
        """Per tile, the log-probability of each place [T, P] (illegal places at -inf)."""
        logits = self.layers(rows.float()).squeeze(-1) + torch.log(sizes.clamp_min(1e-9))
        return torch.log_softmax(logits.masked_fill(~allowed, -torch.inf), dim=-1)

    def arrays(self) -> dict[str, np.ndarray]:
        linears = [m for m in self.layers if isinstance(m, nn.Linear)]
        out = {}
        for i, layer in enumerate(linears):
            out[f"w{i}"] = layer.weight.detach().T.numpy().copy()
            out[f"b{i}"] = layer.bias.detach().numpy().copy()
        return out


def fit(data: Examples, epochs: int, seed: int, hidden: int = 64, lr: float = 2e-3, minibatch: int = 4096) -> BeliefNet:
    torch.manual_seed(seed)
    net = BeliefNet(hidden)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    rows, allowed = torch.from_numpy(data.rows), torch.from_numpy(data.allowed)
    sizes, label = torch.from_numpy(data.sizes), torch.from_numpy(data.label)
    generator = torch.Generator().manual_seed(seed)
    steps = epochs * math.ceil(len(data) / minibatch)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: 1 - k / steps)
    for epoch in range(epochs):
        order = torch.randperm(len(data), generator=generator)
        total = 0.0
        for start in range(0, len(data), minibatch):
            idx = order[start : start + minibatch]
            loss = nn.functional.nll_loss(net.log_probs(rows[idx], allowed[idx], sizes[idx]), label[idx])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            total += float(loss.detach()) * len(idx)
        print(f"  epoch {epoch + 1}/{epochs}: training log-loss {total / len(data):.4f}", flush=True)
    return net


# -- evaluation -----------------------------------------------------------------------------------


def model_probs(net: BeliefNet, data: Examples, balanced: bool) -> np.ndarray:
    """The model's probabilities [T, P] on ``data``, with or without the Sinkhorn passes (per view)."""
    with torch.no_grad():
        probs = net.log_probs(torch.from_numpy(data.rows), torch.from_numpy(data.allowed),
                              torch.from_numpy(data.sizes)).exp().numpy().astype(np.float64)  # fmt: skip
    if balanced:
        bounds = np.flatnonzero(np.diff(data.view)) + 1
        for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(data)], strict=True):
            probs[lo:hi] = sinkhorn(probs[lo:hi], data.sizes[lo], data.allowed[lo:hi])
    return probs


def log_loss(probs: np.ndarray, label: np.ndarray, rows: np.ndarray | None = None) -> float:
    picked = probs[np.arange(len(label)), label]
    picked = picked if rows is None else picked[rows]
    return float(-np.log(np.maximum(picked, 1e-12)).mean())


def report(net: BeliefNet, data: Examples) -> str:
    """A Markdown table of log-loss and accuracy per setting and line-up: uniform, play model, the model."""
    candidates = {"uniform deals": data.baselines["uniform"], "play model (`inference`)": data.baselines["inference"],
                  "belief model": model_probs(net, data, balanced=False),
                  "belief model, balanced": model_probs(net, data, balanced=True)}  # fmt: skip
    groups: dict[str, list[int]] = defaultdict(list)
    for v, (setting, lineup) in enumerate(zip(data.setting, data.lineup, strict=True)):
        groups[setting].append(v)
        groups[f"{setting}: {lineup.split(' vs ')[1]}"].append(v)  # by the next seat's player
    names = list(candidates)
    lines = ["| views | hidden tiles | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]
    for key in sorted(groups):
        rows = np.isin(data.view, groups[key])
        cells = []
        for name in names:
            probs = candidates[name]
            accuracy = float((probs[rows].argmax(1) == data.label[rows]).mean())
            cells.append(f"{log_loss(probs, data.label, rows):.4f} ({100 * accuracy:.1f}%)")
        lines.append(f"| {key} | {int(rows.sum()):,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def checkpoint_names() -> list[str]:
    """The file names a ``--trained`` directory holds: a checkpoint for each table the shipped ones cover."""
    return [DEFAULT_CHECKPOINT.name, *SHIPPED.values()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=plain_help(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", required=True, help="where to write the model (.npz)")
    parser.add_argument("--matches", type=int, default=2400, help="training matches over all settings")
    parser.add_argument("--eval-matches", type=int, default=200, help="held-out matches for the log-loss table")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--trained", metavar="PATH", help="what plays `trained`: a policy checkpoint (.pt), in two-player pagat, "
        f"or a directory holding {', '.join(checkpoint_names())}, each at its table (default: the shipped ones; "
        "the shipped model was trained with earlier ones, see docs/agents.md)"
    )  # fmt: skip
    args = parser.parse_args(argv)
    allowed = f"allowed: a policy checkpoint (.pt), or a directory holding {', '.join(checkpoint_names())}"
    if args.trained and os.path.isdir(args.trained):
        missing = [name for name in checkpoint_names() if not os.path.isfile(os.path.join(args.trained, name))]
        if missing:
            parser.error(f"--trained {args.trained}: the directory lacks {', '.join(missing)}; {allowed}")
    elif args.trained and not os.path.isfile(args.trained):
        parser.error(f"--trained {args.trained}: no such file; {allowed}")
    torch.set_num_threads(max(1, args.workers))
    began = time.perf_counter()
    print(f"playing {args.matches:,} training matches ...", flush=True)
    train = collect(args.matches, TRAIN_SEEDS + args.seed * 1_000_000, args.workers, trained=args.trained)
    print(f"{len(train):,} hidden tiles at {len(train.lineup):,} decisions; fitting ...", flush=True)
    net = fit(train, args.epochs, args.seed, args.hidden)
    meta = {"matches": args.matches, "epochs": args.epochs, "seed": args.seed, "examples": len(train)}
    save_belief(args.out, net.arrays(), meta)
    print(f"wrote {args.out} after {time.perf_counter() - began:.0f} s", flush=True)
    if args.eval_matches:
        print(f"playing {args.eval_matches:,} held-out matches for the table ...", flush=True)
        held_out = collect(
            args.eval_matches, EVAL_SEEDS + args.seed * 1_000_000, args.workers, baselines=True, trained=args.trained
        )
        print("\nLog-loss per hidden tile in nats (and how often the likeliest place is the true one):\n")
        print(report(net, held_out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
