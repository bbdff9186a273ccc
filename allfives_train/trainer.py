"""The training loop: play a wave of matches, learn from them, log, evaluate, checkpoint; repeat.

A fresh run first learns from ``imitation.teacher``'s matches (a warm start), then runs
PPO updates until ``train.total_steps`` learning decisions have been used,
with the step size decayed linearly, then ``iteration.rounds`` rounds of
policy iteration on the policy's own play-outs (:mod:`.iteration`; each
round's labels are kept in the run directory, so a run killed in a round
repeats only that round). Each update plays ``train.envs`` whole
matches side by side (against itself, a past snapshot or a baseline bot), so
nothing is in flight between updates: a checkpoint written after an update
(weights, optimizer, counters, opponent pool and every random state) is all
a run needs to continue exactly as if it had never stopped.
"""

from __future__ import annotations

import os
import random
import time
from collections import deque
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from agents.policy_net import CheckpointError, PolicyNet, net_from_checkpoint, policy_payload
from agents.registry import make_agent

from .checkpoint import atomic_save, atomic_write, capture_rng, check_finite, read_training_checkpoint, restore_rng
from .config import ITERATION_BOTS, OPPONENT_KINDS, rules_of, to_yaml
from .evaluation import eval_table, final_eval, quick_eval
from .expert import label_round as expert_label_round
from .imitation import imitate
from .iteration import FIELDS, Fit, fit_fresh, fit_network, label_round, load_labels, save_labels
from .metrics import TRAIN_OPPONENTS, MetricsLog, RoundLog
from .parallel import RolloutPool
from .plot import plot_curves
from .ppo import advantages, critic_values, to_tensors, update
from .rollout import CURRENT, POOL, MatchSpec, RolloutWorker

CHECKPOINT = "checkpoint.pt"
POLICY = "policy.pt"
LABELS = "iteration"  # the folder of the policy-iteration rounds' labels
EXPERT = "expert"  # the folder of the expert-iteration rounds' guides and labels


def pick_device(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("run.device='cuda' but CUDA is not available; allowed here: 'auto' or 'cpu'")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


class Trainer:
    """One training run in ``run_dir``; built fresh from a config or from the run's checkpoint."""

    def __init__(self, cfg: dict, run_dir: Path, resume_from: Path | None = None, progress: bool = True) -> None:
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.progress = progress
        self.rules = rules_of(cfg)
        threads = cfg["run"]["threads"] or min(2, os.cpu_count() or 1)
        if cfg["train"]["rollout_workers"] == 1 and cfg["run"].get("backend", "multiprocessing") != "ray":
            threads = 1  # this process plays every match itself, with one thread as a rollout worker does
        # Set once: with deterministic kernels, changing the thread count between rollouts and updates
        # made every update ten times slower.
        torch.set_num_threads(threads)
        self.device = pick_device(cfg["run"]["device"])
        if self.device.type == "cpu":
            # Some backward passes (scatter-adds) sum in thread order otherwise: on the CPU the same seed
            # gives the same weights at any thread count, on every machine.
            torch.use_deterministic_algorithms(True)
            # Correct code never reads memory it has not written, so deterministic mode need not fill every
            # new tensor with NaNs first (about 4% of an update).
            torch.utils.deterministic.fill_uninitialized_memory = False
        seed = cfg["run"]["seed"]
        torch.manual_seed(seed)
        np.random.seed(seed % 2**32)  # saved and restored too: the whole state follows from the seed
        self.rng = random.Random(seed)
        self.generator = torch.Generator().manual_seed(seed + 1)
        self.net = PolicyNet(cfg["model"]["hidden"], cfg["model"]["action_hidden"]).to(self.device)
        # foreach: one kernel per step for all weights; the same numbers as the per-weight loop, 1.4x faster
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=cfg["train"]["lr"], foreach=True)
        self.pool: list[dict] = []  # actor weights of past snapshots
        self.pool_net = PolicyNet(cfg["model"]["hidden"], cfg["model"]["action_hidden"]).to(self.device)
        self.iteration = 0
        self.stopped_early = ""  # why the run stopped before its self-play or its rounds were done (this process only)
        self.imitated = False
        self.iterated = 0  # policy-iteration rounds done
        self.experted = 0  # expert-iteration rounds done
        self.steps = 0
        self.matches = 0
        self.recent: dict[str, deque] = {o: deque(maxlen=200) for o in TRAIN_OPPONENTS}
        worker = RolloutWorker(self.rules, self.device, cfg["reward"]["points"], cfg["reward"]["win"])
        self.rollouts = RolloutPool(worker, cfg["train"]["rollout_workers"], cfg["model"]["hidden"],
                                    cfg["model"]["action_hidden"], cfg["run"].get("backend", "multiprocessing"),
                                    cfg["run"].get("ray_address"))  # fmt: skip
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.labels: list[dict] = []  # the labels of the policy-iteration rounds done, while rounds remain
        self.expert_labels: list[dict] = []  # the same for the expert-iteration rounds
        if resume_from is not None:
            self._restore(read_training_checkpoint(resume_from), resume_from)
            try:
                if self.iterated < cfg["iteration"]["rounds"]:
                    self.labels = self._saved_labels(LABELS, self.iterated)
                if self.experted < cfg["expert"]["rounds"]:
                    self.expert_labels = self._saved_labels(EXPERT, self.experted)
            except ValueError as error:
                self.rollouts.close()
                raise CheckpointError(str(error)) from None
        for stale in self.run_dir.glob(".*.tmp"):  # left by a run killed while it wrote a file
            stale.unlink()
        atomic_write(self.run_dir / "config.yaml", to_yaml(cfg).encode())
        resumed = (self.iteration, self.steps) if resume_from is not None else None
        self.log = MetricsLog(self.run_dir, cfg["eval"]["baselines"], resumed)
        self.round_log = RoundLog(self.run_dir, cfg["eval"]["baselines"], self.iterated if resume_from else None)
        self.expert_log = RoundLog(self.run_dir, cfg["eval"]["baselines"], self.experted if resume_from else None,
                                   name=EXPERT)  # fmt: skip

    def _saved_labels(self, folder: str, rounds: int) -> list[dict]:
        return [load_labels(self.run_dir / folder / f"labels{k}.npz") for k in range(1, rounds + 1)]

    # -- state ---------------------------------------------------------------------

    def _restore(self, data: dict, path: Path) -> None:
        t = data["training"]
        self.net.load_state_dict(net_from_checkpoint(data, path).state_dict())
        self.optimizer.load_state_dict(t["optimizer"])
        self.iteration, self.steps, self.matches = t["iteration"], t["steps"], t["matches"]
        self.imitated = t["imitated"]
        self.iterated = t.get("iterated", 0)
        self.experted = t.get("experted", 0)
        self.pool = list(t["pool"])
        for o, values in t["recent"].items():
            self.recent[o].extend(values)
        restore_rng(t["rng"], self.rng, self.generator)

    def _payload(self) -> dict:
        return policy_payload(
            self.net,
            actor_only=False,
            steps=self.steps,
            training={
                "optimizer": self.optimizer.state_dict(),
                "iteration": self.iteration,
                "imitated": self.imitated,
                "iterated": self.iterated,
                "experted": self.experted,
                "steps": self.steps,
                "matches": self.matches,
                "pool": self.pool,
                "recent": {o: list(v) for o, v in self.recent.items()},
                "rng": capture_rng(self.rng, self.generator),
                "config": self.cfg,
            },
        )

    def save(self) -> Path:
        path = self.run_dir / CHECKPOINT
        atomic_save(self._payload(), path)
        return path

    def save_policy(self) -> Path:
        """The small file to play with: the actor's weights and what produced them."""
        path = self.run_dir / POLICY
        payload = policy_payload(
            self.net, actor_only=True, steps=self.steps, config=self.cfg, rules=self.rules.as_dict()
        )
        atomic_save(payload, path)
        return path

    # -- one update --------------------------------------------------------------------

    def _specs(self) -> list[MatchSpec]:
        oc = self.cfg["opponents"]
        kinds = list(OPPONENT_KINDS)
        weights = [oc[k] if (k != "pool" or self.pool) else 0.0 for k in kinds]
        if sum(weights) == 0:  # only the pool was asked for, and it is still empty
            weights[kinds.index("self")] = 1.0
        n, side_of = self.rules.num_players, self.rules.side_of
        specs = []
        for _ in range(self.cfg["train"]["envs"]):
            seed = self.rng.randrange(2**62)
            sample_seed = self.rng.randrange(2**62)
            kind = self.rng.choices(kinds, weights)[0]
            if kind == "self":
                specs.append(MatchSpec(seed, [CURRENT] * n, "self", sample_seed))
                continue
            side = self.rng.randrange(self.rules.num_sides)
            controls = []
            for s in range(n):
                if side_of[s] == side:
                    controls.append(CURRENT)
                else:
                    controls.append(POOL if kind == "pool" else make_agent(kind, self.rng.randrange(2**62)))
            specs.append(MatchSpec(seed, controls, kind, sample_seed))
        return specs

    def warm_start(self) -> None:
        """Learn from ``imitation.teacher``'s matches once, before the first update (a no-op without a teacher)."""
        if self.cfg["imitation"]["teacher"] is None or self.imitated:
            return
        stats = imitate(self.net, self.optimizer, self.rollouts, self.cfg, self.rng, self.generator, self.device,
                        progress=self.progress)  # fmt: skip
        check_finite(self.net, stats, "the imitation warm start")
        self.imitated = True
        ic = self.cfg["imitation"]
        learned = "the play-out values of" if ic["target"] == "playouts" else "the choices in"
        agreed = "its favourite plays out best" if ic["target"] == "playouts" else "agreement"
        tqdm.write(
            f"warm start: learned {learned} {stats['imitation_decisions']:,} decisions of {ic['teacher']}'s matches; "
            f"{agreed} at {100 * stats['imitation_agreement']:.1f}% of them"
        )

    def learning_rate(self) -> float:
        """The step size now: ``train.lr``, decayed linearly to ``train.lr_end`` over ``train.total_steps``."""
        tc = self.cfg["train"]
        done = min(1.0, self.steps / tc["total_steps"])
        return tc["lr"] + (tc["lr_end"] - tc["lr"]) * done

    def step(self) -> dict:
        """Play one wave of matches and learn from it; return the metrics row."""
        start = time.perf_counter()
        specs = self._specs()
        pool_net = None
        if self.pool and any(s.opponent == "pool" for s in specs):
            self.pool_net.load_state_dict(self.pool[self.rng.randrange(len(self.pool))], strict=False)
            pool_net = self.pool_net
        self.net.eval()
        batch, results = self.rollouts.play(specs, self.net, pool_net)
        self.net.train()
        played = time.perf_counter()
        tc = self.cfg["train"]
        data = to_tensors(batch, self.device)
        for group in self.optimizer.param_groups:
            group["lr"] = self.learning_rate()
        adv, ret = advantages(batch, critic_values(self.net, data), tc["gamma"], tc["gae_lambda"])
        data.adv, data.ret = torch.from_numpy(adv).to(self.device), torch.from_numpy(ret).to(self.device)
        stats = update(self.net, self.optimizer, data, self.cfg, self.generator)
        check_finite(self.net, stats, f"update {self.iteration + 1}")
        seconds = time.perf_counter() - start
        self.iteration += 1
        self.steps += len(batch)
        self.matches += len(specs)
        if self.iteration % self.cfg["opponents"]["snapshot_every"] == 0:
            self.pool.append(self.net.actor_state_dict())
            del self.pool[: -self.cfg["opponents"]["pool_size"]]
        row = {
            "iteration": self.iteration,
            "steps": self.steps,
            "matches": self.matches,
            "decisions_per_s": len(batch) / seconds,
            "rollout_s": played - start,
            "update_s": seconds - (played - start),
            "mean_reward": float(batch.reward.sum()) / max(1, batch.matches_ended),
            "lr": self.optimizer.param_groups[0]["lr"],
            **stats,
        }
        for o in TRAIN_OPPONENTS:
            mine = [r for opp, r in results if opp == o]
            self.recent[o].extend(mine)
            row[f"train_win_{o}"] = sum(mine) / len(mine) if mine else None
        return row

    def evaluate_now(self, row: dict) -> None:
        ec = self.cfg["eval"]
        start = time.perf_counter()
        for b in ec["baselines"]:
            if b == "search":
                continue  # far too slow for a quick look; the final evaluation covers it
            win, ci = quick_eval(self.rollouts, self.net, b, ec["matches"], ec["seed"])
            row[f"eval_win_{b}"], row[f"eval_ci_{b}"] = win, ci
        row["eval_s"] = time.perf_counter() - start

    # -- the run ---------------------------------------------------------------------------

    def run(self, stop_after: int | None = None) -> bool:
        """Train to ``train.total_steps``; return False when stopped early by ``stop_after`` updates."""
        tc, ec = self.cfg["train"], self.cfg["eval"]
        total = tc["total_steps"]
        limit = self.cfg["run"]["max_minutes"]
        began = time.perf_counter()
        done_updates = 0
        if not self.imitated and self.cfg["imitation"]["teacher"] is not None:
            self.save()  # a run killed while it imitates resumes from here
            self.warm_start()
            self.save()
        bar = tqdm(total=total, initial=min(self.steps, total), unit="dec", desc="self-play",
                   disable=not self.progress, dynamic_ncols=True)  # fmt: skip
        try:
            while self.steps < total and not self.stopped_early:
                if stop_after is not None and done_updates >= stop_after:
                    return False
                row = self.step()
                done_updates += 1
                out_of_time = limit is not None and time.perf_counter() - began > 60 * limit
                last = self.steps >= total or out_of_time  # the last update of the run: evaluated and saved
                if ec["every"] and self.iteration % ec["every"] == 0 or last:
                    self.evaluate_now(row)
                self.log.write(row)
                if out_of_time and self.steps < total:
                    self.stopped_early = (f"run.max_minutes={limit} was reached after update {self.iteration}, "
                                          f"{self.steps:,} of {total:,} learning decisions")  # fmt: skip
                if self.iteration % tc["checkpoint_every"] == 0 or last:
                    self.save()
                bar.update(min(self.steps, total) - bar.n)
                bar.set_postfix_str(self._postfix(row), refresh=False)
        finally:
            bar.close()
        if self.stopped_early:
            tqdm.write(f"stopped early: {self.stopped_early}; to train on: python train.py --resume {self.run_dir}")
        self.save()
        self.iterate(began, limit)
        self.expert_rounds(began, limit)
        return True

    def iterate(self, began: float, limit: float | None) -> None:
        """The rounds of policy iteration that ``iteration.rounds`` asks for and the run has not done yet."""
        ic = self.cfg["iteration"]
        if self.iterated >= ic["rounds"] or self.stopped_early:
            return  # done, or self-play itself ran out of time (its message and eval.md say so)
        folder, gathered = self.run_dir / LABELS, self.labels
        fit = Fit(ic["epochs"], ic["lr"], ic["minibatch"], ic["huber"], self.cfg["imitation"]["value_scale"])
        model, rules = self.net.sizes(), self.rules.as_dict()
        for k in range(self.iterated + 1, ic["rounds"] + 1):
            if self._out_of_time(began, limit, self.iterated, ic["rounds"], "policy iteration"):
                return
            clock = time.perf_counter()
            seeds, sample_seeds, fit_seed = self._round_seeds(ic["matches"])
            actor = {name: weight.cpu() for name, weight in self.net.actor_state_dict().items()}
            workers = self.cfg["train"]["rollout_workers"]
            bots = {name: ic[name] for name in ITERATION_BOTS}
            fresh = label_round(
                actor, model, rules, seeds, sample_seeds, workers, ic["equity"], ic["temperature"], bots
            )
            labels = self._keep_labels(folder, k, fresh, gathered)
            labelled = time.perf_counter()
            net = fit_fresh(labels, model, fit, fit_seed, self.device)
            del labels
            check_finite(net, {}, f"policy-iteration round {k}")
            self.net.load_state_dict(net.actor_state_dict(), strict=False)  # the critic stays as self-play left it
            self.iterated = k
            row, evals = self._close_round(k, fresh, gathered, clock, labelled, self.round_log)
            tqdm.write(
                f"policy iteration, round {k}: {row['labelled']:,} decisions labelled in {row['label_s']:.0f} s, "
                f"a fresh network fit to all {row['labels_total']:,} in {row['fit_s']:.0f} s; {evals}"
            )

    def expert_rounds(self, began: float, limit: float | None) -> None:
        """The rounds of expert iteration (:mod:`.expert`) that ``expert.rounds`` asks for and are not done yet."""
        xc = self.cfg["expert"]
        if self.experted >= xc["rounds"] or self.stopped_early:
            return  # done, or an earlier stage ran out of time (its message and eval.md say so)
        folder, gathered = self.run_dir / EXPERT, self.expert_labels
        fit = Fit(xc["epochs"], xc["lr"], xc["minibatch"], xc["huber"], self.cfg["imitation"]["value_scale"])
        for k in range(self.experted + 1, xc["rounds"] + 1):
            if self._out_of_time(began, limit, self.experted, xc["rounds"], "expert iteration"):
                return
            clock = time.perf_counter()
            seeds, sample_seeds, fit_seed = self._round_seeds(xc["matches"])
            folder.mkdir(exist_ok=True)
            guide = folder / f"guide{k}.pt"
            atomic_save(policy_payload(self.net, actor_only=True, steps=self.steps), guide)
            fresh = expert_label_round(guide, self.rules.as_dict(), seeds, sample_seeds,
                                       self.cfg["train"]["rollout_workers"], xc["light"], xc["deep"], xc["belief"],
                                       xc["network_deals"])  # fmt: skip
            labels = self._keep_labels(folder, k, fresh, gathered)
            labelled = time.perf_counter()
            fit_network(self.net, labels, fit, fit_seed, self.device)
            del labels
            check_finite(self.net, {}, f"expert-iteration round {k}")
            self.experted = k
            row, evals = self._close_round(k, fresh, gathered, clock, labelled, self.expert_log)
            tqdm.write(
                f"expert iteration, round {k}: {row['labelled']:,} decisions labelled by the guided search in "
                f"{row['label_s']:.0f} s, the network fit to all {row['labels_total']:,} in {row['fit_s']:.0f} s; {evals}"
            )

    def _out_of_time(self, began: float, limit: float | None, done: int, rounds: int, stage: str) -> bool:
        """True (and the run marked as stopped early, with a message) once ``run.max_minutes`` has passed."""
        if limit is None or time.perf_counter() - began <= 60 * limit:
            return False
        self.stopped_early = f"run.max_minutes={limit} was reached after {done} of {rounds} rounds of {stage}"
        tqdm.write(f"stopped early: {self.stopped_early}; to train on: python train.py --resume {self.run_dir}")
        return True

    def _round_seeds(self, matches: int) -> tuple[list[int], list[int], int]:
        """A round's deal seeds, sampling seeds and fit seed, drawn from the run's generator."""
        seeds = [self.rng.randrange(2**62) for _ in range(matches)]
        sample_seeds = [self.rng.randrange(2**62) for _ in range(matches)]
        return seeds, sample_seeds, self.rng.randrange(2**62)

    @staticmethod
    def _keep_labels(folder: Path, k: int, fresh: dict, gathered: list[dict]) -> dict[str, np.ndarray]:
        """Save round ``k``'s labels, add them to the rounds so far, and return all of them as one set."""
        folder.mkdir(exist_ok=True)
        save_labels(folder / f"labels{k}.npz", fresh)
        gathered.append(fresh)
        return {f: np.concatenate([g[f] for g in gathered]) for f in FIELDS}

    def _close_round(self, k: int, fresh: dict, gathered: list[dict], clock: float, labelled: float,
                     log: RoundLog) -> tuple[dict, str]:  # fmt: skip
        """Evaluate, log and checkpoint a finished round; its row and the evaluations as text."""
        row = {"round": k, "steps": self.steps, "labelled": len(fresh["width"]),
               "labels_total": sum(len(g["width"]) for g in gathered),
               "label_s": labelled - clock, "fit_s": time.perf_counter() - labelled}  # fmt: skip
        self.evaluate_now(row)
        log.write(row)  # before the checkpoint: a resume cuts a row its checkpoint lacks
        self.save()
        evals = ", ".join(f"eval {b} {100 * row[f'eval_win_{b}']:.0f}%" for b in self.cfg["eval"]["baselines"]
                          if row.get(f"eval_win_{b}") is not None)  # fmt: skip
        return row, evals

    def _postfix(self, row: dict) -> str:
        parts = [f"{row['decisions_per_s']:.0f} dec/s"]
        for o in ("greedy", "heuristic", "pool"):
            if self.recent[o]:
                parts.append(f"{o} {100 * sum(self.recent[o]) / len(self.recent[o]):.0f}%")
        evals = [
            f"eval {b} {100 * row[f'eval_win_{b}']:.0f}%"
            for b in self.cfg["eval"]["baselines"]
            if row.get(f"eval_win_{b}") is not None
        ]
        return ", ".join(parts + evals)

    def close(self) -> None:
        """Stop the rollout processes and close the logs (idempotent)."""
        self.rollouts.close()
        self.log.close()
        self.round_log.close()
        self.expert_log.close()

    def finish(self) -> dict:
        """Write the policy file, the learning-curve plot and the final evaluation table."""
        self.close()
        policy = self.save_policy()
        plot = plot_curves(self.log.path, self.run_dir / "learning_curves.png", self.cfg["eval"]["baselines"])
        out = {"checkpoint": self.run_dir / CHECKPOINT, "policy": policy, "plot": plot}
        ec = self.cfg["eval"]
        if ec["final_matches"]:
            rows = final_eval(policy, self.rules, ec["baselines"], ec["final_matches"], ec["seed"], ec["workers"],
                              self.run_dir / "eval")  # fmt: skip
            table = eval_table(rows, policy.name)
            if self.stopped_early:
                table = (
                    f"**Stopped early**: {self.stopped_early}. This is the policy at that point; "
                    f"`python train.py --resume {self.run_dir}` trains it on to the end.\n\n{table}"
                )
            (self.run_dir / "eval.md").write_text(table)
            out["eval"] = self.run_dir / "eval.md"
            out["table"] = table
        return out
