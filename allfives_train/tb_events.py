"""TensorBoard event files cut back to a checkpoint, so that a resumed run's logs read as one uninterrupted run.

Scalars are logged at the decision count (``steps``). A run killed after
its last checkpoint has logged points the resumed run will log again, so on
resume every point after the checkpoint's step is dropped from the files
themselves (TensorBoard's own ``purge_step`` only hides them, and only from
readers that honour it). The points that stay, one per tag and step, are
gathered into one history file whose name sorts before any writer's file,
and the other event files are removed. Every step of this is safe to
interrupt: the history file is replaced atomically, and a repeated cut gives
the same files (points already kept are not kept twice).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto import event_pb2
from tensorboard.summary.writer.record_writer import RecordWriter

#: Sorts before the files SummaryWriter names ``events.out.tfevents.<seconds>...``.
HISTORY = "events.out.tfevents.0000000000.history"


def event_files(tb_dir: Path) -> list[Path]:
    """The event files of a log directory, in the order TensorBoard reads them."""
    return sorted(p for p in Path(tb_dir).iterdir() if "tfevents" in p.name and p.is_file())


def _records(path: Path) -> list[bytes]:
    """The complete records of one file (a record cut short by a kill is left out)."""
    return list(RawEventFileLoader(str(path)).Load())


def cut_events(tb_dir: str | os.PathLike, last_step: int | None) -> None:
    """Keep only scalar points at steps <= ``last_step`` (None: keep nothing), one per tag and step."""
    tb_dir = Path(tb_dir)
    if not tb_dir.is_dir():
        return
    for stale in tb_dir.glob(f".{HISTORY}.*.tmp"):
        stale.unlink()
    files = event_files(tb_dir)
    if last_step is None:
        for path in files:
            path.unlink()
        return
    if not files:
        return
    header: bytes | None = None
    kept: list[bytes] = []
    seen: set[tuple[str, int]] = set()
    for path in files:
        for record in _records(path):
            event = event_pb2.Event.FromString(record)
            if event.HasField("file_version"):
                header = header or record
                continue
            if not event.HasField("summary") or event.step > last_step:
                continue  # a point logged after the checkpoint, or a purge marker of an older run
            values = [v for v in event.summary.value if (v.tag, event.step) not in seen]
            if not values:
                continue
            seen.update((v.tag, event.step) for v in values)
            if len(values) < len(event.summary.value):
                del event.summary.value[:]
                event.summary.value.extend(values)
                record = event.SerializeToString()
            kept.append(record)
    if header is None:
        header = event_pb2.Event(wall_time=0.0, file_version="brain.Event:2").SerializeToString()
    fd, tmp = tempfile.mkstemp(prefix=f".{HISTORY}.", suffix=".tmp", dir=tb_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            writer = RecordWriter(f)
            for record in [header, *kept]:
                writer.write(record)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, tb_dir / HISTORY)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    for path in files:
        if path.name != HISTORY:
            path.unlink()
