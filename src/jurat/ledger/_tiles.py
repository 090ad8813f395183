"""C2SP tlog-tiles over the stored nodes: tile math, tile paths, tile and entry-bundle bytes.

What jurat implements of https://c2sp.org/tlog-tiles (docs/ledger-format.md,
"Tiles"):

* the tile math: tiles of height 8 (256 hashes); tile ``L/N`` holds the
  hashes at tree level ``8·L`` with indices ``256·N … 256·N+255``; a tree of
  size ``s`` has ``s // 256^(L+1)`` full tiles at level ``L`` and one partial
  tile of width ``(s // 256^L) mod 256`` when that is not zero;
* the bytes: a tile is its hashes concatenated (32 bytes each); an entry
  bundle is its entries, each prefixed with its length as a big-endian
  uint16, where an entry is the bytes a leaf hashes (``_entry.entry_bytes``);
* the resource names ``tile/<L>/<N>[.p/<W>]`` and ``tile/entries/<N>[.p/<W>]``
  with ``N`` in zero-padded 3-digit groups, all but the last prefixed ``x``.

The hashes live in the ledger database (``_tree``), one row per node, not as
tile files: a tile is one range read. ``Ledger.export_tiles`` writes the
checkpoint, tiles and entry bundles of a checkpointed size to a directory
that any static file server can serve to tlog-tiles clients. No HTTP server
is part of jurat.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "TILE_HEIGHT",
    "TILE_WIDTH",
    "Tile",
    "entry_bundle",
    "tile_path",
    "tiles_for_size",
]

TILE_HEIGHT = 8
"""Tree levels per tile."""
TILE_WIDTH = 1 << TILE_HEIGHT
"""Hashes in a full tile."""
_MAX_ENTRY = 0xFFFF


@dataclass(frozen=True)
class Tile:
    """One tile: its level, its index within the level, and its width (256 when full)."""

    level: int
    index: int
    width: int

    @property
    def tree_level(self) -> int:
        """The Merkle tree level its hashes are at."""
        return self.level * TILE_HEIGHT

    @property
    def first(self) -> int:
        """Index, within ``tree_level``, of its first hash."""
        return self.index * TILE_WIDTH

    def path(self) -> str:
        """Its resource name, ``tile/<L>/<N>[.p/<W>]``."""
        return tile_path(self.level, self.index, self.width)


def _index_path(index: int) -> str:
    if index < 0:
        raise ValueError(f"tile index {index} is negative")
    groups = [f"{index % 1000:03d}"]
    index //= 1000
    while index:
        groups.append(f"x{index % 1000:03d}")
        index //= 1000
    return "/".join(reversed(groups))


def tile_path(level: int | str, index: int, width: int = TILE_WIDTH) -> str:
    """``tile/<L>/<N>[.p/<W>]``; ``level="entries"`` names an entry bundle."""
    if not 1 <= width <= TILE_WIDTH:
        raise ValueError(f"tile width {width} outside 1..{TILE_WIDTH}")
    partial = "" if width == TILE_WIDTH else f".p/{width}"
    return f"tile/{level}/{_index_path(index)}{partial}"


def tiles_for_size(size: int) -> list[Tile]:
    """Every tile of a tree of ``size`` leaves, full and partial, level by level."""
    tiles: list[Tile] = []
    level = 0
    while size >> (TILE_HEIGHT * level):
        below = size >> (TILE_HEIGHT * level)
        full, width = divmod(below, TILE_WIDTH)
        tiles.extend(Tile(level, n, TILE_WIDTH) for n in range(full))
        if width:
            tiles.append(Tile(level, full, width))
        level += 1
    return tiles


def entry_bundle(entries: Iterable[bytes]) -> bytes:
    """Entries as one bundle: each prefixed with its length, big-endian uint16."""
    out = bytearray()
    for data in entries:
        if len(data) > _MAX_ENTRY:
            raise ValueError(f"an entry of {len(data)} bytes does not fit a tlog-tiles bundle")
        out += len(data).to_bytes(2, "big") + data
    return bytes(out)
