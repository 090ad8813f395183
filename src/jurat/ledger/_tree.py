"""The Merkle tree's stored nodes, and proofs assembled from them in O(log n) reads.

Node ``(h, k)`` is the RFC 9162 hash of the perfect subtree over leaves
``[k·2^h, (k+1)·2^h)``. The ledger stores every node that lies wholly inside
the log, the leaf hashes (level 0) and every interior hash, in the same
transaction as the entries that complete them: ``2n − popcount(n)`` hashes
for ``n`` leaves, about two per entry. A perfect subtree's leaves never
change, so a node is written once and never updated, and the table stays
append-only like the rest of the ledger. This is the "stored hashes" view of
a log; C2SP tiles are ranges of it (``_tiles``).

Every subtree hash a proof needs (``inclusion_ranges``, ``consistency_ranges``
in ``_merkle``) covers a range ``[lo, hi)`` whose start is a multiple of a
power of two at least ``hi − lo``. Such a range is one stored node or, on the
right edge of the tree, the right fold of the nodes of its binary
decomposition (RFC 9162's MTH splits off the largest power of two first). So
an inclusion proof, a consistency proof and a tree head each read at most
about 2·log2(n) nodes, and an append writes about two.

Nodes are keyed by one integer, ``level · 2^48 + index``, so a level's nodes
are one contiguous key range (a tile is one range scan) and a set of nodes is
one ``IN`` list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from jurat.ledger._merkle import EMPTY_ROOT, node_hash

__all__ = [
    "INDEX_BITS",
    "frontier",
    "leaf_key",
    "node_key",
    "range_hash",
    "range_keys",
    "range_nodes",
    "ranges_keys",
]

INDEX_BITS = 48
"""Bits of a node key that hold the index: room for 2^48 leaves."""


def node_key(level: int, index: int) -> int:
    """The integer key of node ``(level, index)``."""
    return (level << INDEX_BITS) | index


def leaf_key(index: int) -> int:
    """The key of leaf ``index`` (a level-0 node)."""
    return index


def frontier(size: int) -> list[tuple[int, int]]:
    """The perfect subtrees covering ``[0, size)``, largest (leftmost) first.

    One per set bit of ``size``; their hashes resume a ``CompactRange`` at
    ``size`` and fold into the tree head.
    """
    return range_nodes(0, size)


def range_nodes(lo: int, hi: int) -> list[tuple[int, int]]:
    """The nodes whose right fold is MTH(D[lo:hi]), left to right.

    ``lo`` must be a multiple of a power of two at least ``hi - lo``, as
    every range of an RFC 9162 proof is.
    """
    nodes: list[tuple[int, int]] = []
    while lo < hi:
        level = (hi - lo).bit_length() - 1
        if lo & ((1 << level) - 1):
            raise ValueError(f"[{lo}, {hi}) is not a subtree range of an RFC 9162 tree")
        nodes.append((level, lo >> level))
        lo += 1 << level
    return nodes


def range_keys(lo: int, hi: int) -> list[int]:
    """Keys of ``range_nodes(lo, hi)``."""
    return [node_key(level, index) for level, index in range_nodes(lo, hi)]


def ranges_keys(ranges: Iterable[tuple[int, int]]) -> set[int]:
    """Every node key the given ranges need."""
    keys: set[int] = set()
    for lo, hi in ranges:
        keys.update(range_keys(lo, hi))
    return keys


def range_hash(lo: int, hi: int, nodes: Mapping[int, bytes]) -> bytes:
    """MTH(D[lo:hi]) from stored nodes; ``KeyError`` names a missing node key."""
    keys = range_keys(lo, hi)
    if not keys:
        return EMPTY_ROOT
    value = nodes[keys[-1]]
    for key in reversed(keys[:-1]):
        value = node_hash(nodes[key], value)
    return value
