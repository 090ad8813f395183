"""C2SP tlog-tiles: the tile math of the spec, and tiles read back from real ledgers."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from jurat.errors import LedgerError
from jurat.ledger import TILE_WIDTH, Ledger, LogSigner, Tile, tile_path, tiles_for_size
from jurat.ledger._merkle import leaf_hash, root_from_leaves

from .conftest import Target


def test_tile_paths_follow_the_spec() -> None:
    assert tile_path(0, 1234067) == "tile/0/x001/x234/067"
    assert tile_path(1, 0, 17) == "tile/1/000.p/17"
    assert tile_path("entries", 5, 112) == "tile/entries/005.p/112"
    assert tile_path(2, 1000) == "tile/2/x001/000"
    for bad in (0, 257):
        with pytest.raises(ValueError):
            tile_path(0, 0, bad)


def test_tiles_of_a_size_follow_the_spec_examples() -> None:
    tiles = tiles_for_size(70_000)
    level0 = [t for t in tiles if t.level == 0]
    assert len([t for t in level0 if t.width == TILE_WIDTH]) == 273
    assert level0[-1] == Tile(0, 273, 112)
    assert [t for t in tiles if t.level == 1] == [Tile(1, 0, 256), Tile(1, 1, 17)]
    assert [t for t in tiles if t.level == 2] == [Tile(2, 0, 1)]
    assert tiles_for_size(256) == [Tile(0, 0, 256), Tile(1, 0, 1)]
    assert tiles_for_size(0) == []


def _fill(ledger: Ledger, n: int) -> None:
    for start in range(0, n, 500):
        ledger.append_many(
            [
                {"kind": "decision", "job_id": f"job-{i}", "payload": {"i": i}}
                for i in range(start, min(n, start + 500))
            ]
        )


def _read_tiles(root: Path) -> dict[tuple[int, int], bytes]:
    """What a tlog-tiles client fetches: the hashes of every tile, by (level, index)."""
    found: dict[tuple[int, int], bytes] = {}
    for path in (root / "tile").rglob("*"):
        parts = path.relative_to(root / "tile").parts
        if not path.is_file() or parts[0] == "entries":
            continue
        level, rest = int(parts[0]), list(parts[1:])
        if len(rest) >= 2 and rest[-2].endswith(".p"):  # .../NNN.p/W: a partial tile
            rest = [*rest[:-2], rest[-2].removesuffix(".p")]
        index = int("".join(p.removeprefix("x") for p in rest))
        data = path.read_bytes()
        # A wider copy of the same tile (a later export) supersedes a partial one.
        if len(data) > len(found.get((level, index), b"")):
            found[(level, index)] = data
    return found


def test_tiles_and_bundles_hold_the_tree_and_the_entries(
    sqlite_target: Target, signer: LogSigner, tmp_path: Path
) -> None:
    n = 256 * 256 + 300  # a full level-1 tile, partial tiles at levels 0, 1 and 2
    with sqlite_target.open() as ledger:
        _fill(ledger, n)
        leaves = [bytes.fromhex(e.leaf_hash) for e in ledger.entries()]
        note = ledger.checkpoint(signer)
        written = ledger.export_tiles(tmp_path / "log", note)
        assert (
            written
            == 2 * len([t for t in tiles_for_size(n) if t.level == 0])
            + len([t for t in tiles_for_size(n) if t.level > 0])
            + 1
        )
        # A second export writes only what may have grown: partial tiles, the checkpoint.
        partial = [t for t in tiles_for_size(n) if t.width < TILE_WIDTH]
        assert ledger.export_tiles(tmp_path / "log", note) == 1 + len(partial) + 1
        with pytest.raises(LedgerError):
            ledger.tile(Tile(0, n // 256 + 1, 1))
    root = tmp_path / "log"
    assert (root / "checkpoint").read_text() == note
    tiles = _read_tiles(root)
    # Level 0: leaf hashes; level L: the hash of each full tile's subtree below it.
    for (level, index), data in tiles.items():
        hashes = [data[i : i + 32] for i in range(0, len(data), 32)]
        span = TILE_WIDTH**level
        for i, value in enumerate(hashes):
            lo = (index * TILE_WIDTH + i) * span
            assert value == root_from_leaves(leaves, lo, lo + span)
    assert len(tiles[(2, 0)]) == 32 and len(tiles[(1, 1)]) == 1 * 32
    # The client's root from level-0 tiles is the signed root.
    from_tiles = [
        tiles[(0, i)][j : j + 32]
        for i in range(n // 256 + 1)
        for j in range(0, len(tiles[(0, i)]), 32)
    ]
    assert from_tiles == leaves
    assert root_from_leaves(from_tiles) == base64.b64decode(note.split("\n")[2])
    # Entry bundles: uint16-prefixed entries whose leaf hashes are the level-0 tile.
    bundle = (root / tile_path("entries", 1)).read_bytes()
    entries, at = [], 0
    while at < len(bundle):
        size = int.from_bytes(bundle[at : at + 2], "big")
        entries.append(bundle[at + 2 : at + 2 + size])
        at += 2 + size
    assert [leaf_hash(e) for e in entries] == leaves[256:512]
