"""Training metrics: one CSV row and one set of TensorBoard scalars per update.

On resume, rows written after the checkpoint being resumed (by a run killed
before its next checkpoint) are dropped from the CSV, and the TensorBoard
points after the checkpoint's decision count are cut from the event files
(:mod:`allfives_train.tb_events`), so the logs read as one uninterrupted run.
A fresh run starts both logs empty. Both rewrites are atomic, so a kill
during them leaves logs the next resume cuts the same way.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from torch.utils.tensorboard import SummaryWriter

from .checkpoint import atomic_write
from .tb_events import cut_events

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
    """Appends rows to ``metrics.csv`` and scalars to TensorBoard under ``tb/``.

    ``resume``: the (iteration, steps) of the checkpoint a run resumes from,
    or None for a fresh run.
    """

    def __init__(self, run_dir: Path, baselines: list[str], resume: tuple[int, int] | None) -> None:
        self.path = run_dir / "metrics.csv"
        self.columns = columns(baselines)
        kept = _rows_up_to(self.path, resume[0]) if resume is not None else []
        text = io.StringIO(newline="")
        writer = csv.DictWriter(text, self.columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(kept)
        atomic_write(self.path, text.getvalue().encode())
        cut_events(run_dir / "tb", resume[1] if resume is not None else None)
        self.tb = SummaryWriter(log_dir=str(run_dir / "tb"))

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


def _rows_up_to(path: Path, iteration: int) -> list[dict]:
    """The complete rows of updates 1..``iteration``, once each (a line cut short by a kill is not a row)."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8", errors="replace")
    if not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    rows, seen = [], set()
    for row in csv.DictReader(io.StringIO(text, newline="")):
        try:
            number = int(row.get("iteration") or "")
        except ValueError:
            continue
        if 1 <= number <= iteration and number not in seen and None not in row.values():
            seen.add(number)
            rows.append(row)
    return rows


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
