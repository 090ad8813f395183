"""RFC 6962 / RFC 9162 Merkle tree hashing, proof generation and proof verification.

No maintained Python library generates or checks RFC 9162 inclusion and
consistency proofs (``pymerkle`` has its own proof format), and the
algorithms are short, so they live here and are tested against every
transparency-dev vector (``tests/ledger/data``).

Hashes are raw 32-byte ``bytes`` in this module; the public models carry hex.
Verification failures raise :class:`~jurat.errors.TamperError` so a caller
cannot mistake a bad proof for a good one by ignoring a return value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from jurat.errors import TamperError

__all__ = [
    "EMPTY_ROOT",
    "CompactRange",
    "consistency_path",
    "consistency_ranges",
    "inclusion_path",
    "inclusion_ranges",
    "leaf_hash",
    "node_hash",
    "root_from_leaves",
    "verify_consistency",
    "verify_inclusion",
    "verify_subtree_consistency",
    "verify_subtree_inclusion",
]

_HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    """RFC 9162 §2.1.1 leaf hash: SHA-256(0x00 || data)."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 9162 §2.1.1 interior node hash: SHA-256(0x01 || left || right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """The largest power of two strictly below ``size`` (size >= 2): RFC 9162's ``k``."""
    return 1 << ((size - 1).bit_length() - 1)


class CompactRange:
    """The perfect-subtree roots covering leaves ``[0, size)``.

    Enough to give the tree head at the current size and to keep appending,
    in O(log n) memory, so a whole ledger can be hashed while streaming it.
    """

    def __init__(self) -> None:
        self.size = 0
        self._nodes: list[bytes] = []

    @classmethod
    def resume(cls, size: int, nodes: Sequence[bytes]) -> CompactRange:
        """The range at ``size`` from its perfect-subtree roots, largest (leftmost) first.

        These are the hashes of ``frontier(size)`` in ``_tree``: one per set
        bit of ``size``.
        """
        if len(nodes) != size.bit_count():
            raise ValueError(
                f"a range of size {size} has {size.bit_count()} roots, not {len(nodes)}"
            )
        rng = cls()
        rng.size, rng._nodes = size, list(nodes)
        return rng

    def append(self, leaf: bytes) -> list[tuple[int, int, bytes]]:
        """Add one leaf hash, merging the subtrees it completes.

        Returns every perfect subtree the leaf completes as ``(level, index,
        hash)``, the leaf itself first: exactly the hashes a log that stores
        its interior nodes must add for this leaf.
        """
        node = leaf
        made = [(0, self.size, leaf)]
        # Each trailing one bit of the old size is a perfect subtree of equal
        # height waiting on its right sibling.
        size, level = self.size, 0
        while size & 1:
            node = node_hash(self._nodes.pop(), node)
            size >>= 1
            level += 1
            made.append((level, size, node))
        self._nodes.append(node)
        self.size += 1
        return made

    def roots(self) -> tuple[bytes, ...]:
        """The perfect-subtree roots, largest first: what :meth:`resume` takes back."""
        return tuple(self._nodes)

    def root(self) -> bytes:
        """RFC 9162 MTH of the leaves appended so far."""
        if not self._nodes:
            return EMPTY_ROOT
        root = self._nodes[-1]
        for node in reversed(self._nodes[:-1]):
            root = node_hash(node, root)
        return root


def root_from_leaves(leaves: Sequence[bytes], lo: int = 0, hi: int | None = None) -> bytes:
    """MTH(D[lo:hi]) over leaf hashes."""
    end = len(leaves) if hi is None else hi
    rng = CompactRange()
    for i in range(lo, end):
        rng.append(leaves[i])
    return rng.root()


def inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The leaf ranges ``[lo, hi)`` whose hashes make up PATH(index, D_size), leaf side first.

    RFC 9162 §2.1.3.1 as ranges rather than hashes, so the same walk serves
    proofs computed from leaves and proofs assembled from stored nodes.
    """
    if not 0 <= index < size:
        raise ValueError(f"leaf index {index} outside a tree of size {size}")
    ranges: list[tuple[int, int]] = []
    lo, hi = 0, size
    # Walk down from the root; siblings are collected top-first, the RFC
    # lists them leaf-first.
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            ranges.append((lo + k, hi))
            hi = lo + k
        else:
            ranges.append((lo, lo + k))
            lo += k
    ranges.reverse()
    return ranges


def consistency_ranges(old_size: int, size: int) -> list[tuple[int, int]]:
    """The leaf ranges whose hashes make up PROOF(old_size, D_size) (RFC 9162 §2.1.4.1)."""
    if not 0 < old_size <= size:
        raise ValueError(f"consistency needs 0 < old size <= new size, got {old_size}, {size}")
    ranges: list[tuple[int, int]] = []
    lo, hi, m, complete = 0, size, old_size, True
    while True:
        if m == hi - lo:
            # The old tree is this whole subtree: the verifier knows its hash
            # only when it is the old root itself.
            if not complete:
                ranges.append((lo, hi))
            break
        k = _split(hi - lo)
        if m <= k:
            ranges.append((lo + k, hi))
            hi = lo + k
        else:
            ranges.append((lo, lo + k))
            lo += k
            m -= k
            complete = False
    ranges.reverse()
    return ranges


def inclusion_path(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    """RFC 9162 §2.1.3.1 PATH(index, D_n) for the tree over ``leaves``."""
    return [root_from_leaves(leaves, lo, hi) for lo, hi in inclusion_ranges(index, len(leaves))]


def consistency_path(old_size: int, leaves: Sequence[bytes]) -> list[bytes]:
    """RFC 9162 §2.1.4.1 PROOF(old_size, D_n) for the tree over ``leaves``."""
    return [
        root_from_leaves(leaves, lo, hi) for lo, hi in consistency_ranges(old_size, len(leaves))
    ]


def _check_proof_hashes(proof: Sequence[bytes]) -> None:
    for i, item in enumerate(proof):
        if len(item) != _HASH_SIZE:
            raise TamperError(f"proof element {i} is {len(item)} bytes, not {_HASH_SIZE}")


def _root_from_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """RFC 9162 §2.1.3.2 steps 1-4; returns the root the proof implies."""
    if not 0 <= index < size:
        raise TamperError(f"leaf index {index} outside a tree of size {size}")
    if len(leaf) != _HASH_SIZE:
        raise TamperError(f"leaf hash is {len(leaf)} bytes, not {_HASH_SIZE}")
    _check_proof_hashes(proof)
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise TamperError("inclusion proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise TamperError("inclusion proof is shorter than the tree is deep")
    return r


def verify_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> None:
    """Check an RFC 9162 inclusion proof; raise :class:`TamperError` if it fails."""
    if _root_from_inclusion(index, size, leaf, proof) != root:
        raise TamperError(f"inclusion proof for leaf {index} does not reach the root")


def verify_consistency(
    old_size: int, new_size: int, proof: Sequence[bytes], old_root: bytes, new_root: bytes
) -> None:
    """Check an RFC 9162 consistency proof; raise :class:`TamperError` if it fails."""
    if new_size < old_size:
        raise TamperError(f"new size {new_size} is smaller than old size {old_size}")
    if old_size == 0:
        # Every tree extends the empty tree, so such a proof proves nothing.
        raise TamperError("a consistency proof from the empty tree is meaningless")
    if old_size == new_size:
        if proof:
            raise TamperError("equal sizes need an empty consistency proof")
        if old_root != new_root:
            raise TamperError("equal sizes but different roots: the log forked")
        return
    if not proof:
        raise TamperError("empty consistency proof between different sizes")
    _check_proof_hashes(proof)
    # RFC 9162 §2.1.4.2, steps 2-7.
    path = list(proof)
    if old_size & (old_size - 1) == 0:
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise TamperError("consistency proof is longer than needed")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise TamperError("consistency proof is shorter than needed")
    if fr != old_root:
        raise TamperError(f"consistency proof does not reproduce the root at size {old_size}")
    if sr != new_root:
        raise TamperError(f"consistency proof does not reproduce the root at size {new_size}")


# Subtree proofs come from the Merkle Tree Certificates draft
# (draft-ietf-plants-merkle-tree-certs §4.3-4.4). The ledger does not issue
# them; they are here so every transparency-dev vector family is exercised.


def _valid_subtree(start: int, end: int) -> bool:
    if not 0 <= start < end:
        return False
    width = 1 << (end - start - 1).bit_length()
    return start % width == 0


def verify_subtree_inclusion(
    leaf: bytes, index: int, start: int, end: int, proof: Sequence[bytes], root: bytes
) -> None:
    """Check that ``leaf`` at ``index`` is in the subtree ``[start, end)`` with hash ``root``."""
    if not _valid_subtree(start, end):
        raise TamperError(f"[{start}, {end}) is not a valid subtree")
    if not start <= index < end:
        raise TamperError(f"leaf index {index} outside subtree [{start}, {end})")
    # A valid subtree is itself an RFC 9162 tree of end - start leaves.
    if _root_from_inclusion(index - start, end - start, leaf, proof) != root:
        raise TamperError(f"subtree inclusion proof for leaf {index} does not reach the root")


def verify_subtree_consistency(
    start: int, end: int, size: int, proof: Sequence[bytes], sub_root: bytes, root: bytes
) -> None:
    """Check that subtree ``[start, end)`` with hash ``sub_root`` lies in the tree of ``size``."""
    if start == end and 0 <= end <= size:
        # The empty subtree sits in every tree; transparency-dev accepts it
        # only with the empty-tree hash and no proof.
        if proof or sub_root != EMPTY_ROOT:
            raise TamperError("an empty subtree needs the empty-tree hash and no proof")
        return
    if not _valid_subtree(start, end) or end > size:
        raise TamperError(f"[{start}, {end}) is not a valid subtree of a tree of size {size}")
    _check_proof_hashes(proof)
    # fn, sn, tn: the subtree's first and last leaf and the tree's last leaf,
    # climbing one level per right shift, as in RFC 9162 consistency.
    fn, sn, tn = start, end - 1, size - 1
    if sn == tn:
        while fn != sn:
            fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
    else:
        while fn != sn and sn & 1:
            fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
    if fn == sn:
        fr = sr = sub_root
        rest = list(proof)
    else:
        if not proof:
            raise TamperError("empty subtree consistency proof")
        fr = sr = proof[0]
        rest = list(proof[1:])
    for c in rest:
        if tn == 0:
            raise TamperError("subtree consistency proof is longer than needed")
        if sn & 1 or sn == tn:
            if fn < sn:
                fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not sn & 1:
                fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
    if tn != 0:
        raise TamperError("subtree consistency proof is shorter than needed")
    if fr != sub_root:
        raise TamperError(f"proof does not reproduce the hash of subtree [{start}, {end})")
    if sr != root:
        raise TamperError(f"proof does not reproduce the root at size {size}")
