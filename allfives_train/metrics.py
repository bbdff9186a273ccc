"""Training metrics: one CSV row and one set of TensorBoard scalars per update.

On resume, rows written after the checkpoint being resumed (by a run killed
before its next checkpoint) are dropped from the CSV, and TensorBoard is
told to purge them, so the logs read as one uninterrupted run.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from torch.utils.tensorboard import SummaryWriter

TRAIN_OPPONENTS = ("pool", "random", "greedy", "heuristic")
LOSSES = ("loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_frac")


def columns(baselines: list[str]) -> list[str]:
    cols = ["iteration", "steps", "matches", "decisions_per_s", "rollout_s", "update_s", "mean_reward", "lr"]
    cols += [f"train_win_{o}" for o in TRAIN_OPPONENTS]
    cols += list(LOSSES)
    for b in baselines:
        cols += [f"eval_win_{b}", f"eval_ci_{b}"]
    cols.append("eval_s")
    return cols


class MetricsLog:
    """Appends rows to ``metrics.csv`` and scalars to TensorBoard under ``tb/``."""

    def __init__(self, run_dir: Path, baselines: list[str], resume_iteration: int | None) -> None:
        self.path = run_dir / "metrics.csv"
        self.columns = columns(baselines)
        kept: list[dict] = []
        if resume_iteration is not None and self.path.exists():
            with self.path.open(newline="") as f:
                kept = [row for row in csv.DictReader(f) if int(row["iteration"]) <= resume_iteration]
        with self.path.open("w", newline="") as f:
            writer = csv.DictWriter(f, self.columns)
            writer.writeheader()
            writer.writerows(kept)
        purge = None if resume_iteration is None else resume_iteration + 1
        self.tb = SummaryWriter(log_dir=str(run_dir / "tb"), purge_step=purge)

    def write(self, row: dict) -> None:
        with self.path.open("a", newline="") as f:
            csv.DictWriter(f, self.columns).writerow({k: _cell(row.get(k)) for k in self.columns})
        step = row["steps"]
        for key in self.columns[3:]:
            value = row.get(key)
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                group = "eval" if key.startswith("eval") else "train" if key.startswith("train_") else "loss"
                if key in ("decisions_per_s", "rollout_s", "update_s", "mean_reward", "lr"):
                    group = "rollout"
                self.tb.add_scalar(f"{group}/{key}", value, step)
        self.tb.flush()

    def close(self) -> None:
        self.tb.close()


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return value


def read_metrics(path: Path) -> list[dict]:
    """The CSV rows with numbers as floats (missing cells as None)."""
    with Path(path).open(newline="") as f:
        return [{k: (float(v) if v not in ("", None) else None) for k, v in row.items()} for row in csv.DictReader(f)]
