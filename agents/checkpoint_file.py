"""Checkpoint files sealed with a SHA-256 of every byte, and read back in one checked step.

A checkpoint is a ``torch.save`` zip archive. Torch does not check the zip's
CRCs and unpickles whatever bytes it finds, so a flipped byte in an optimizer
moment, a pool snapshot or the pickled config would load silently. A sealed
file carries, as the zip archive's own comment (the last bytes of the file,
which zip readers, ``torch.load`` included, skip), ``allfives-sha256:`` and the
SHA-256 of every byte before it. Reading checks the seal before anything is
unpickled, so a flipped byte anywhere is refused.

Files written before the seal existed (the shipped policy among them) have an
empty comment; they still load, with the weights' own SHA-256 as their only
check. Anything else (text, JSON, random bytes, another program's archive, a
truncated file, a pickle holding code) is refused with one line that names
the file and says what is wrong; torch's own messages never leak out.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import warnings
import zipfile
from pathlib import Path

import torch

SEAL_PREFIX = b"allfives-sha256:"
SEAL_SIZE = len(SEAL_PREFIX) + 64
_END = b"PK\x05\x06"  # the zip's end-of-central-directory record: 22 bytes, then the comment
_END_SIZE = 22


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used; the message is one line naming the file and the problem."""


def _walk(tree, where: str = ""):
    """Every tensor in a nested payload, with where it sits (``training.optimizer.state.3.exp_avg``)."""
    if isinstance(tree, torch.Tensor):
        yield where, tree
    elif isinstance(tree, dict):
        for key, value in tree.items():
            yield from _walk(value, f"{where}.{key}" if where else str(key))
    elif isinstance(tree, (list, tuple)):
        for i, value in enumerate(tree):
            yield from _walk(value, f"{where}.{i}" if where else str(i))


def non_finite(tree) -> str | None:
    """Where the first NaN or infinite value of a payload sits, or None when every tensor is finite."""
    for where, tensor in _walk(tree):
        if (tensor.is_floating_point() or tensor.is_complex()) and not bool(torch.isfinite(tensor).all()):
            return where
    return None


def seal(data: bytes) -> bytes:
    """A ``torch.save`` archive with the SHA-256 of its bytes stored as its zip comment."""
    if len(data) < _END_SIZE or data[-_END_SIZE:-18] != _END or data[-2:] != b"\0\0":
        raise ValueError("not a torch archive ending in an empty zip comment")
    head = data[:-2] + SEAL_SIZE.to_bytes(2, "little")
    return head + SEAL_PREFIX + hashlib.sha256(head).hexdigest().encode()


def serialize(payload: dict) -> bytes:
    """The sealed bytes of ``payload``; FloatingPointError (nothing serialized) if a tensor holds NaN or inf."""
    where = non_finite(payload)
    if where is not None:
        raise FloatingPointError(f"refusing to save a checkpoint whose {where} is not finite (NaN or infinite)")
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    return seal(buffer.getvalue())


def _describe(data: bytes) -> str:
    """What a file that is not a torch archive looks like, for the error message."""
    if not data:
        return "it is empty"
    head = data[:64].lstrip()
    if head[:1] in (b"{", b"["):
        return "it looks like JSON or text, not a torch checkpoint"
    if data[:4] == b"PK\x03\x04":
        return "it is truncated or corrupt (the zip archive has no end record)"
    try:
        data[:4096].decode("utf-8")
    except UnicodeDecodeError:
        return "it is not a torch checkpoint (no zip archive inside)"
    return "it looks like text, not a torch checkpoint"


def check_seal(data: bytes, name: str) -> bool:
    """True for a sealed file whose seal matches, False for an unsealed archive; CheckpointError otherwise."""
    sealed_end = len(data) - SEAL_SIZE - _END_SIZE
    if sealed_end >= 0 and data[sealed_end : sealed_end + 4] == _END:
        comment_size = int.from_bytes(data[sealed_end + 20 : sealed_end + 22], "little")
        seal_text = data[-SEAL_SIZE:]
        if comment_size != SEAL_SIZE or not seal_text.startswith(SEAL_PREFIX):
            raise CheckpointError(f"checkpoint {name} is corrupt: its SHA-256 seal is damaged")
        if hashlib.sha256(data[:-SEAL_SIZE]).hexdigest().encode() != seal_text[len(SEAL_PREFIX) :]:
            raise CheckpointError(f"checkpoint {name} is corrupt: its bytes do not match their SHA-256")
        return True
    if len(data) >= _END_SIZE and data[-_END_SIZE:-18] == _END and data[-2:] == b"\0\0":
        return False
    raise CheckpointError(f"checkpoint {name} cannot be read: {_describe(data)}")


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    line = text[0] if text else type(error).__name__
    return line if len(line) <= 160 else line[:157] + "..."


def load_file(path: str | os.PathLike) -> tuple[dict, bool]:
    """The payload of a checkpoint file and whether it was sealed; CheckpointError (one line) if unusable.

    The seal is checked before a byte is unpickled; loading is ``weights_only`` (no code runs).
    """
    path = Path(path)
    name = repr(str(path))
    if not path.is_file():
        raise CheckpointError(f"checkpoint {name} does not exist or is not a file")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CheckpointError(f"checkpoint {name} cannot be read: {error.strerror or error}") from None
    sealed = check_seal(data, name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise CheckpointError(
            f"checkpoint {name} cannot be read: it holds Python objects other than tensors and plain data "
            "(not an allfives checkpoint; such files are never loaded, as loading them could run code)"
        ) from None
    except (RuntimeError, EOFError, OSError, ValueError, zipfile.BadZipFile, KeyError, AttributeError) as error:
        raise CheckpointError(
            f"checkpoint {name} cannot be read (truncated, corrupt or not a torch checkpoint): {_first_line(error)}"
        ) from None
    except Exception as error:  # the unpickler refuses odd contents with various errors
        raise CheckpointError(
            f"checkpoint {name} cannot be read: {type(error).__name__}: {_first_line(error)}"
        ) from None
    if not isinstance(payload, dict):
        raise CheckpointError(f"checkpoint {name} is not an allfives checkpoint (it holds a {type(payload).__name__})")
    where = non_finite(payload)
    if where is not None:
        raise CheckpointError(f"checkpoint {name} cannot be used: its {where} is not finite (NaN or infinite)")
    return payload, sealed
