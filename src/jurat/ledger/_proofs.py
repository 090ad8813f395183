"""Inclusion and consistency proofs from the stored tree nodes, one or many at a time.

Each proof reads the O(log n) nodes its ranges need (``_tree``) inside the
caller's read transaction. :func:`prove_many` proves many entries against one
checkpoint with one pass of reads: the nodes of all the proofs are fetched
together (the upper nodes are shared), and each proof is checked against the
checkpoint's root before it is handed out, so a stored node that was edited
shows up as a TamperError, never as a proof that does not verify.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sqlalchemy import Connection, select

from jurat.errors import LedgerError, TamperError
from jurat.ledger._entry import entry_from_row
from jurat.ledger._merkle import (
    consistency_ranges,
    inclusion_ranges,
    verify_consistency,
    verify_inclusion,
)
from jurat.ledger._models import Checkpoint, ConsistencyProof, Entry, EntryProof, InclusionProof
from jurat.ledger._note import parse_unverified_checkpoint
from jurat.ledger._sql import chunks, one_of
from jurat.ledger._tree import frontier, leaf_key, node_key, range_hash, ranges_keys
from jurat.ledger._treestore import heads, read_nodes

if TYPE_CHECKING:
    from jurat.ledger._backend import Tables

__all__ = [
    "TreeIncomplete",
    "consistency",
    "inclusion",
    "prove_against",
    "prove_consistency",
    "prove_inclusion",
    "prove_latest",
    "prove_many",
]


class TreeIncomplete(LedgerError):
    """A node a proof needs is not stored (yet): the tree is behind the entries."""


def _nodes(conn: Connection, tables: Tables, epoch: int, keys: set[int]) -> Mapping[int, bytes]:
    found = read_nodes(conn, tables.tree, epoch, keys)
    if len(found) != len(keys):
        missing = min(keys - found.keys())
        raise TreeIncomplete(f"Merkle tree node {missing:#x} is not stored")
    return found


def _root_keys(size: int) -> set[int]:
    return {node_key(level, index) for level, index in frontier(size)}


def _entries(conn: Connection, tables: Tables, seqs: Sequence[int]) -> dict[int, Entry]:
    e = tables.entries
    wanted = sorted(set(seqs))
    found: dict[int, Entry] = {}
    for chunk in chunks(conn, wanted):
        for row in conn.execute(select(e).where(one_of(conn, e.c.seq, chunk))):
            entry = entry_from_row(row._mapping)
            found[entry.seq] = entry
    for seq in wanted:
        if seq not in found:
            raise TamperError(f"seq {seq}: entry missing")
    return found


def inclusion(conn: Connection, tables: Tables, epoch: int, seq: int, size: int) -> InclusionProof:
    """RFC 9162 inclusion proof of ``seq`` in the tree of ``size``, root from the stored nodes."""
    ranges = inclusion_ranges(seq, size)
    nodes = _nodes(conn, tables, epoch, ranges_keys(ranges) | _root_keys(size) | {leaf_key(seq)})
    entry = _entries(conn, tables, [seq])[seq]
    if entry.leaf_hash != nodes[leaf_key(seq)].hex():
        raise TamperError(f"seq {seq}: stored leaf hash is stale")
    return InclusionProof(
        leaf_index=seq,
        tree_size=size,
        leaf_hash=entry.leaf_hash,
        root_hash=range_hash(0, size, nodes).hex(),
        hashes=tuple(range_hash(lo, hi, nodes).hex() for lo, hi in ranges),
    )


def consistency(
    conn: Connection, tables: Tables, epoch: int, old_size: int, new_size: int
) -> ConsistencyProof:
    """RFC 9162 consistency proof from ``old_size`` to ``new_size``, checked before returning."""
    ranges = consistency_ranges(old_size, new_size)
    nodes = _nodes(
        conn, tables, epoch, ranges_keys(ranges) | _root_keys(old_size) | _root_keys(new_size)
    )
    old_root, new_root = range_hash(0, old_size, nodes), range_hash(0, new_size, nodes)
    hashes = [range_hash(lo, hi, nodes) for lo, hi in ranges]
    try:
        verify_consistency(old_size, new_size, hashes, old_root, new_root)
    except TamperError as exc:
        raise TamperError(f"the stored Merkle tree does not hold together: {exc}") from exc
    return ConsistencyProof(
        old_size=old_size,
        new_size=new_size,
        old_root=old_root.hex(),
        new_root=new_root.hex(),
        hashes=tuple(h.hex() for h in hashes),
    )


def prove_many(
    conn: Connection,
    tables: Tables,
    epoch: int,
    seqs: Sequence[int],
    checkpoint: Checkpoint,
) -> list[EntryProof]:
    """Every entry of ``seqs`` with its inclusion proof in ``checkpoint``'s tree, in order.

    Reads each needed node once; costs O(k log n) for k entries in a tree of
    n. Raises TamperError when the stored tree does not reach the
    checkpoint's root or an entry's leaf is not the tree's.
    """
    size = checkpoint.tree_size
    for seq in seqs:
        if not 0 <= seq < size:
            raise LedgerError(f"seq {seq} is not in the checkpoint's tree of size {size}")
    paths = {seq: inclusion_ranges(seq, size) for seq in set(seqs)}
    keys = _root_keys(size) | {leaf_key(seq) for seq in paths}
    for ranges in paths.values():
        keys |= ranges_keys(ranges)
    nodes = _nodes(conn, tables, epoch, keys)
    root = range_hash(0, size, nodes)
    if root.hex() != checkpoint.root_hash:
        raise TamperError(f"the ledger's root at size {size} differs from its checkpoint")
    entries = _entries(conn, tables, list(paths))
    proofs: dict[int, EntryProof] = {}
    # Neighbouring entries' paths share their larger subtrees: each is hashed once.
    hashed: dict[tuple[int, int], bytes] = {}
    for seq, ranges in paths.items():
        entry, leaf = entries[seq], nodes[leaf_key(seq)]
        if entry.leaf_hash != leaf.hex():
            raise TamperError(f"seq {seq}: stored leaf hash is stale")
        path = []
        for lo, hi in ranges:
            value = hashed.get((lo, hi))
            if value is None:
                value = hashed[lo, hi] = range_hash(lo, hi, nodes)
            path.append(value)
        # O(log n) hashes: a node edited below the root is caught here.
        verify_inclusion(leaf, seq, size, path, root)
        proof = InclusionProof(
            leaf_index=seq,
            tree_size=size,
            leaf_hash=entry.leaf_hash,
            root_hash=checkpoint.root_hash,
            hashes=tuple(h.hex() for h in path),
        )
        proofs[seq] = EntryProof(entry=entry, proof=proof, checkpoint=checkpoint.note)
    return [proofs[seq] for seq in seqs]


def prove_inclusion(
    conn: Connection, tables: Tables, seq: int, tree_size: int | None
) -> InclusionProof:
    """:func:`inclusion` with its bounds checked; ``tree_size`` None means the whole ledger."""
    size, epoch = heads(conn, tables)
    target = size if tree_size is None else tree_size
    if not 0 <= seq < target <= size:
        raise LedgerError(f"need 0 <= seq < tree size <= {size}; got seq {seq}, size {target}")
    return inclusion(conn, tables, epoch, seq, target)


def prove_consistency(
    conn: Connection, tables: Tables, old_size: int, new_size: int | None
) -> ConsistencyProof:
    """:func:`consistency` with its bounds checked; ``new_size`` None means the whole ledger."""
    size, epoch = heads(conn, tables)
    target = size if new_size is None else new_size
    if not 0 < old_size <= target <= size:
        raise LedgerError(f"need 0 < old size <= new size <= {size}; got {old_size}, {target}")
    return consistency(conn, tables, epoch, old_size, target)


def prove_against(
    conn: Connection, tables: Tables, seqs: Sequence[int], anchor: Checkpoint
) -> list[EntryProof]:
    """:func:`prove_many`, refusing a checkpoint beyond the ledger (a truncated copy)."""
    size, epoch = heads(conn, tables)
    if anchor.tree_size > size:
        raise TamperError(
            f"seq {size}: the checkpoint commits to {anchor.tree_size} entries but the "
            f"ledger has {size}: truncated or restored from an older copy"
        )
    return prove_many(conn, tables, epoch, seqs, anchor)


def prove_latest(conn: Connection, tables: Tables, seq: int) -> EntryProof:
    """Entry ``seq`` proven in the latest stored checkpoint that covers it."""
    c = tables.checkpoints
    note = conn.execute(
        select(c.c.note).where(c.c.tree_size > seq).order_by(c.c.id.desc()).limit(1)
    ).scalar()
    if note is None:
        raise LedgerError(f"no checkpoint covers seq {seq} yet; run `jurat log checkpoint`")
    return prove_against(conn, tables, [seq], parse_unverified_checkpoint(str(note)))[0]
