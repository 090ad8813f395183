"""Tiles, entry bundles and a tlog-tiles directory, read from the stored tree (see ``_tiles``)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection

from jurat.errors import LedgerError, TamperError
from jurat.ledger._entry import hashed_bytes
from jurat.ledger._models import Checkpoint, Entry
from jurat.ledger._proofs import TreeIncomplete
from jurat.ledger._tiles import TILE_WIDTH, Tile, entry_bundle, tile_path, tiles_for_size
from jurat.ledger._treestore import heads, read_level

if TYPE_CHECKING:
    from collections.abc import Callable

    from jurat.ledger._backend import Tables

__all__ = ["bundle_bytes", "export_directory", "tile_bytes"]


def tile_bytes(conn: Connection, tables: Tables, tile: Tile) -> bytes:
    """A tile's hashes, concatenated; LedgerError if the ledger is too small for it."""
    size, epoch = heads(conn, tables)
    end = (tile.first + tile.width) << tile.tree_level
    if end > size:
        raise LedgerError(f"tile {tile.path()} needs {end} entries; the ledger has {size}")
    try:
        hashes = read_level(
            conn, tables.tree, epoch, tile.tree_level, tile.first, tile.first + tile.width
        )
    except TamperError as exc:
        raise TreeIncomplete(str(exc)) from exc
    return b"".join(hashes)


def bundle_bytes(entries: Iterable[Entry], index: int, width: int) -> bytes:
    """Entry bundle ``index`` of ``width`` from the entries that follow seq ``256·index - 1``."""
    data: list[bytes] = []
    for entry in entries:
        if len(data) == width:
            break
        data.append(hashed_bytes(entry))
    if len(data) != width:
        raise LedgerError(f"entry bundle {index} needs {index * TILE_WIDTH + width} entries")
    return entry_bundle(data)


def export_directory(
    directory: Path,
    checkpoint: Checkpoint,
    tile: Callable[[Tile], bytes],
    bundle: Callable[[int, int], bytes],
) -> int:
    """Write the checkpoint, tiles and entry bundles of its size; return files written."""
    written = 0
    for t in tiles_for_size(checkpoint.tree_size):
        names = [t.path()] + ([tile_path("entries", t.index, t.width)] if t.level == 0 else [])
        for name in names:
            path = directory / name
            if t.width == TILE_WIDTH and path.exists():
                continue  # a full tile never changes
            is_bundle = name.startswith("tile/entries/")
            _write_file(path, bundle(t.index, t.width) if is_bundle else tile(t))
            written += 1
    _write_file(directory / "checkpoint", checkpoint.note.encode("utf-8"))
    return written + 1


def _write_file(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically, so a reader never sees half a tile."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        raise LedgerError(f"cannot write {path}: {exc.strerror}") from exc
    finally:
        tmp.unlink(missing_ok=True)
