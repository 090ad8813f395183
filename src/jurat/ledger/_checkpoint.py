"""The checkpoint file kept outside the database.

A database restored from an older backup (or truncated) is internally
consistent; only something it does not contain can show it lost entries.
Every ``Ledger.checkpoint()`` also writes the signed note to this file, and
``verify()`` requires the database to still reach that tree size and root.
"""

from __future__ import annotations

import os
from pathlib import Path

from jurat.errors import LedgerError, TamperError
from jurat.ledger._models import Checkpoint
from jurat.ledger._note import parse_unverified_checkpoint

__all__ = ["read_external", "write_external"]

_MAX_NOTE = 64 * 1024


def read_external(path: Path) -> Checkpoint | None:
    """The checkpoint in ``path`` (signature unchecked), or None if there is no file."""
    try:
        with path.open("rb") as fh:
            data = fh.read(_MAX_NOTE + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LedgerError(f"cannot read checkpoint file {path}: {exc.strerror}") from exc
    if len(data) > _MAX_NOTE:
        raise TamperError(f"checkpoint file {path} is larger than any checkpoint")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TamperError(f"checkpoint file {path} is not UTF-8") from exc
    try:
        return parse_unverified_checkpoint(text)
    except TamperError as exc:
        raise TamperError(f"checkpoint file {path}: {exc}") from exc


def write_external(path: Path, note: str) -> None:
    """Replace ``path`` with ``note`` atomically and durably.

    A crash leaves either the old or the new checkpoint, never a torn file
    that would make the next ``verify()`` fail for no reason.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(note.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as exc:
        raise LedgerError(f"cannot write checkpoint file {path}: {exc.strerror}") from exc
    finally:
        tmp.unlink(missing_ok=True)
