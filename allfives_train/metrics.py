"""Training metrics: one CSV row and one set of TensorBoard scalars per update, and per policy-iteration round.

On resume, rows written after the checkpoint being resumed (by a run killed
before its next checkpoint) are dropped from the CSV, and the TensorBoard
points after the checkpoint's decision count are cut from the event files
(:mod:`allfives_train.tb_events`), so the logs read as one uninterrupted run.
A fresh run starts both logs empty. Both rewrites are atomic, so a kill
during them leaves logs the next resume cuts the same way.

The rounds of policy iteration that follow self-play have their own pair,
``iteration.csv`` and ``tb/iteration/``, logged at the round number, since
a round adds no decisions to the count the updates are logged at; a resume
cuts them back to the rounds its checkpoint holds.
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


def round_columns(baselines: list[str]) -> list[str]:
    cols = ["round", "steps", "labelled", "labels_total", "label_s", "fit_s"]
    for b in baselines:
        cols += [f"eval_win_{b}", f"eval_ci_{b}"]
    cols.append("eval_s")
    return cols


def _start_csv(path: Path, cols: list[str], kept: list[dict]) -> None:
    """Write ``path`` anew, atomically: the header and the rows kept."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, cols, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(kept)
    atomic_write(path, text.getvalue().encode())


def _append_csv(path: Path, cols: list[str], row: dict) -> None:
    with path.open("a", newline="") as f:
        csv.DictWriter(f, cols).writerow({k: _cell(row.get(k)) for k in cols})


def _add_scalars(tb: SummaryWriter, row: dict, keys: list[str], step: int, group) -> None:
    for key in keys:
        value = row.get(key)
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            tb.add_scalar(f"{group(key)}/{key}", value, step)
    tb.flush()


class MetricsLog:
    """Appends rows to ``metrics.csv`` and scalars to TensorBoard under ``tb/``.

    ``resume``: the (iteration, steps) of the checkpoint a run resumes from,
    or None for a fresh run.
    """

    def __init__(self, run_dir: Path, baselines: list[str], resume: tuple[int, int] | None) -> None:
        self.path = run_dir / "metrics.csv"
        self.columns = columns(baselines)
        _start_csv(self.path, self.columns, _rows_up_to(self.path, "iteration", resume[0]) if resume else [])
        cut_events(run_dir / "tb", resume[1] if resume is not None else None)
        self.tb = SummaryWriter(log_dir=str(run_dir / "tb"))

    def write(self, row: dict) -> None:
        _append_csv(self.path, self.columns, row)
        _add_scalars(self.tb, row, self.columns[3:], row["steps"], _update_group)

    def close(self) -> None:
        self.tb.close()


def _update_group(key: str) -> str:
    if key in ("decisions_per_s", "rollout_s", "update_s", "mean_reward", "lr"):
        return "rollout"
    return "eval" if key.startswith("eval") else "train" if key.startswith("train_") else "loss"


class RoundLog:
    """Appends one row per round of a stage (``name``: policy or expert iteration) to ``NAME.csv``, and its scalars
    to ``tb/NAME/``.

    ``done``: the rounds the checkpoint a run resumes from holds, or None for
    a fresh run. The file and the folder are made by the first round.
    """

    def __init__(self, run_dir: Path, baselines: list[str], done: int | None, name: str = "iteration") -> None:
        self.name = name
        self.path = run_dir / f"{name}.csv"
        self.tb_dir = run_dir / "tb" / name
        self.columns = round_columns(baselines)
        self.tb: SummaryWriter | None = None
        if self.path.exists():
            _start_csv(self.path, self.columns, _rows_up_to(self.path, "round", done) if done else [])
        cut_events(self.tb_dir, done)

    def write(self, row: dict) -> None:
        if not self.path.exists():
            _start_csv(self.path, self.columns, [])
        _append_csv(self.path, self.columns, row)
        self.tb = self.tb or SummaryWriter(log_dir=str(self.tb_dir))
        _add_scalars(self.tb, row, self.columns[1:], row["round"], lambda key: self.name)

    def close(self) -> None:
        if self.tb is not None:
            self.tb.close()


def _rows_up_to(path: Path, key: str, last: int) -> list[dict]:
    """The complete rows numbered 1..``last`` in column ``key``, once each (a line cut short by a kill is not a row)."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8", errors="replace")
    if not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    rows, seen = [], set()
    for row in csv.DictReader(io.StringIO(text, newline="")):
        try:
            number = int(row.get(key) or "")
        except ValueError:
            continue
        if 1 <= number <= last and number not in seen and None not in row.values():
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
