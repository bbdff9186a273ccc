"""Helpers for the training tests: run ``train.py`` in this process, and read back everything a run leaves.

A run's saved state is compared part by part with another run's: the whole
checkpoint payload (weights, optimizer, pool, random states, config,
counters), the policy file, the CSV rows and the TensorBoard scalars (of the
updates and of the policy-iteration rounds), each without the wall-clock
timings, which no two runs share.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto import event_pb2

import train
from allfives_train.iteration import load_labels

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "configs" / "tiny.yaml"
#: Columns and TensorBoard tags that measure time, different in every run.
TIMING_COLUMNS = ("decisions_per_s", "rollout_s", "update_s", "eval_s", "label_s", "fit_s")
TIMING_TAGS = (
    *(f"{'eval' if c == 'eval_s' else 'rollout'}/{c}" for c in TIMING_COLUMNS[:4]),
    *(f"iteration/{c}" for c in ("eval_s", "label_s", "fit_s")),
)
#: The two logs of a run: the updates' and the policy-iteration rounds'.
LOGS = (("metrics.csv", "tb"), ("iteration.csv", "tb/iteration"))


def run_train(*args) -> int:
    """``python train.py ARGS --no-progress`` in this process; returns the exit status."""
    return train.main([*map(str, args), "--no-progress"])


def metrics_rows(run_dir: Path, name: str = "metrics.csv") -> list[dict]:
    """The CSV rows without the timing columns (none when the file is absent)."""
    if not (Path(run_dir) / name).exists():
        return []
    with (Path(run_dir) / name).open(newline="") as f:
        rows = list(csv.DictReader(f))
    return [{k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in rows]


def tb_scalars(run_dir: Path, folder: str = "tb") -> list[tuple[str, int, float]]:
    """Every scalar point in every event file of ``run_dir/folder``, as written (duplicates kept), timings left out."""
    points = []
    for path in sorted((Path(run_dir) / folder).glob("*tfevents*")):
        for record in RawEventFileLoader(str(path)).Load():
            event = event_pb2.Event.FromString(record)
            for value in event.summary.value:
                number = value.simple_value if value.HasField("simple_value") else value.tensor.float_val[0]
                if value.tag not in TIMING_TAGS:
                    points.append((value.tag, event.step, number))
    return sorted(points)


def tb_view(run_dir: Path, folder: str = "tb") -> dict[str, list[tuple[int, float]]]:
    """The scalars as TensorBoard shows them (its reader applies purges and drops out-of-order steps)."""
    if not (Path(run_dir) / folder).is_dir():
        return {}
    acc = EventAccumulator(str(Path(run_dir) / folder), size_guidance={"scalars": 0})
    acc.Reload()
    return {
        tag: [(e.step, e.value) for e in acc.Scalars(tag)]
        for tag in sorted(acc.Tags()["scalars"])
        if tag not in TIMING_TAGS
    }


def load_payload(path: Path) -> dict:
    """A checkpoint's payload as torch stored it (no checks: the tests compare what is on disk)."""
    return torch.load(path, map_location="cpu", weights_only=True)


def differences(a, b, where: str = "") -> list[str]:
    """Where two nested payloads (dicts, lists, tuples, tensors, plain values) differ; empty when equal."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        same = (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and torch.equal(a, b)
        )
        return [] if same else [where or "<root>"]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{where}: keys {sorted(map(str, a))} != {sorted(map(str, b))}"]
        return [d for k in a for d in differences(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and type(a) is type(b):
        if len(a) != len(b):
            return [f"{where}: length {len(a)} != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{where}[{i}]")]
    return [] if type(a) is type(b) and a == b else [f"{where}: {a!r} != {b!r}"]


def _placeless(payload: dict) -> dict:
    """A payload with its config's ``run.dir`` blanked: two runs in different folders differ only there."""
    for holder in (payload, payload.get("training") or {}):
        if isinstance(holder.get("config"), dict):
            holder["config"]["run"]["dir"] = "<run.dir>"
    return payload


def run_differences(a: Path, b: Path) -> list[str]:
    """Every difference between two run directories' saved state and logs (timings and run.dir aside)."""
    out = []
    for name in ("checkpoint.pt", "policy.pt"):
        if (a / name).exists() or (b / name).exists():
            out += differences(_placeless(load_payload(a / name)), _placeless(load_payload(b / name)), name)
    for name, folder in LOGS:
        if metrics_rows(a, name) != metrics_rows(b, name):
            out.append(f"{name} rows differ")
        if tb_scalars(a, folder) != tb_scalars(b, folder):
            out.append(f"the event files in {folder} hold different scalars")
        if tb_view(a, folder) != tb_view(b, folder):
            out.append(f"TensorBoard shows different scalars in {folder}")
    if ((a / "eval.md").exists() or (b / "eval.md").exists()) and (
        not (a / "eval.md").exists()
        or not (b / "eval.md").exists()
        or (a / "eval.md").read_text() != (b / "eval.md").read_text()
    ):
        out.append("eval.md differs")
    rounds = sorted({p.name for run in (a, b) for p in (run / "iteration").glob("labels*.npz")})
    for name in rounds:
        try:
            la, lb = (load_labels(run / "iteration" / name) for run in (a, b))
        except ValueError as error:
            out.append(str(error))
            continue
        out += [f"iteration/{name}: {key} differs" for key in la if not np.array_equal(la[key], lb[key])]
    leftovers = [p.name for p in b.rglob("*") if p.name.endswith(".tmp")]
    if leftovers:
        out.append(f"temporary files left: {leftovers}")
    return out


def snapshot(directory: Path) -> dict[str, tuple]:
    """Every file and folder under ``directory`` with its bytes, mode and modification time."""
    directory = Path(directory)
    if not directory.exists():
        return {}
    out = {}
    for path in sorted(directory.rglob("*")):
        info = path.stat()
        body = path.read_bytes() if path.is_file() else None
        out[str(path.relative_to(directory))] = (body, info.st_mode, info.st_mtime_ns)
    return out
