"""The stored Merkle tree: proofs from stored nodes equal the reference proofs, at many sizes.

The reference is ``_merkle.inclusion_path`` / ``consistency_path`` computed
from all the leaves (pinned byte for byte by the transparency-dev vectors in
``test_ledger_merkle.py``) and, independently, RFC 9162's PATH and PROOF
written recursively as the RFC states them.
"""

from __future__ import annotations

import hashlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jurat.errors import LedgerError
from jurat.ledger import Ledger, LogSigner, parse_checkpoint, verify_entry_proof
from jurat.ledger._merkle import (
    CompactRange,
    consistency_path,
    consistency_ranges,
    inclusion_path,
    inclusion_ranges,
    leaf_hash,
    node_hash,
    root_from_leaves,
    verify_consistency,
    verify_inclusion,
)
from jurat.ledger._tree import frontier, node_key, range_hash, range_nodes

from .conftest import Target

# -- an RFC 9162 oracle, written as the RFC states it -----------------------


def _k(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def _mth(d: list[bytes]) -> bytes:
    if not d:
        return hashlib.sha256(b"").digest()
    if len(d) == 1:
        return d[0]
    k = _k(len(d))
    return node_hash(_mth(d[:k]), _mth(d[k:]))


def _path(m: int, d: list[bytes]) -> list[bytes]:
    """RFC 9162 §2.1.3.1 PATH(m, D[n])."""
    if len(d) == 1:
        return []
    k = _k(len(d))
    if m < k:
        return [*_path(m, d[:k]), _mth(d[k:])]
    return [*_path(m - k, d[k:]), _mth(d[:k])]


def _subproof(m: int, d: list[bytes], b: bool) -> list[bytes]:
    """RFC 9162 §2.1.4.1 SUBPROOF(m, D[n], b)."""
    n = len(d)
    if m == n:
        return [] if b else [_mth(d)]
    k = _k(n)
    if m <= k:
        return [*_subproof(m, d[:k], b), _mth(d[k:])]
    return [*_subproof(m - k, d[k:], False), _mth(d[:k])]


# -- stored nodes in memory, written exactly as the ledger writes them -------


def _store(leaves: list[bytes]) -> dict[int, bytes]:
    rng = CompactRange()
    nodes: dict[int, bytes] = {}
    for leaf in leaves:
        for level, index, value in rng.append(leaf):
            assert node_key(level, index) not in nodes  # each node is written once
            nodes[node_key(level, index)] = value
    return nodes


def _leaves(n: int, salt: bytes = b"") -> list[bytes]:
    return [leaf_hash(salt + i.to_bytes(4, "big")) for i in range(n)]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3000), st.binary(max_size=4), st.data())
def test_proofs_from_stored_nodes_equal_the_reference(
    n: int, salt: bytes, data: st.DataObject
) -> None:
    leaves = _leaves(n, salt)
    nodes = _store(leaves)
    assert len(nodes) == 2 * n - n.bit_count()
    for _ in range(4):
        size = data.draw(st.integers(1, n))
        head = leaves[:size]
        root = root_from_leaves(head)
        assert range_hash(0, size, nodes) == root
        index = data.draw(st.integers(0, size - 1))
        path = [range_hash(lo, hi, nodes) for lo, hi in inclusion_ranges(index, size)]
        assert path == inclusion_path(index, head)
        verify_inclusion(leaves[index], index, size, path, root)
        old = data.draw(st.integers(1, size))
        proof = [range_hash(lo, hi, nodes) for lo, hi in consistency_ranges(old, size)]
        assert proof == consistency_path(old, head)
        verify_consistency(old, size, proof, root_from_leaves(leaves[:old]), root)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 255, 256, 257, 511, 513])
def test_every_proof_of_boundary_sizes_equals_the_rfc_recursion(n: int) -> None:
    leaves = _leaves(n)
    nodes = _store(leaves)
    sizes = sorted({s for s in (1, 2, n // 2, n - 1, n) if 1 <= s <= n})
    for size in sizes:
        head = leaves[:size]
        assert range_hash(0, size, nodes) == _mth(head)
        for index in sorted({0, size // 3, size // 2, size - 1}):
            path = [range_hash(lo, hi, nodes) for lo, hi in inclusion_ranges(index, size)]
            assert path == _path(index, head)
        for old in sorted({1, size // 2 or 1, size - 1 or 1, size}):
            proof = [range_hash(lo, hi, nodes) for lo, hi in consistency_ranges(old, size)]
            assert proof == _subproof(old, head, True)


def test_a_proof_reads_logarithmically_many_nodes() -> None:
    for size in (10**3, 10**6, 10**9, 2**47 + 12345):
        index = size // 3
        keys = {
            node_key(*node)
            for lo, hi in inclusion_ranges(index, size)
            for node in range_nodes(lo, hi)
        } | {node_key(*node) for node in frontier(size)}
        assert len(keys) <= 2 * size.bit_length()
        cons = {
            node_key(*node)
            for lo, hi in consistency_ranges(index, size)
            for node in range_nodes(lo, hi)
        }
        assert len(cons) <= 2 * size.bit_length()


def test_range_nodes_refuses_ranges_no_proof_uses() -> None:
    assert range_nodes(8, 13) == [(2, 2), (0, 12)]
    with pytest.raises(ValueError):
        range_nodes(3, 7)


# -- the same against real ledgers ------------------------------------------


def _fill(ledger: Ledger, n: int) -> None:
    items = [
        {"kind": "sample_recorded", "job_id": f"job-{i // 5}", "payload": {"i": i}}
        for i in range(n)
    ]
    for i in range(0, n, 200):
        ledger.append_many(items[i : i + 200])


def _stored_leaves(ledger: Ledger) -> list[bytes]:
    return [bytes.fromhex(e.leaf_hash) for e in ledger.entries()]


@pytest.mark.parametrize("n", [1, 2, 255, 256, 257, 700])
def test_ledger_proofs_equal_the_reference(target: Target, n: int) -> None:
    rnd = random.Random(n)
    with target.open() as ledger:
        _fill(ledger, n)
        leaves = _stored_leaves(ledger)
        for _ in range(12):
            size = rnd.randint(1, n)
            seq = rnd.randrange(size)
            proof = ledger.inclusion_proof(seq, size)
            assert proof.root_hash == root_from_leaves(leaves[:size]).hex()
            assert [bytes.fromhex(h) for h in proof.hashes] == inclusion_path(seq, leaves[:size])
            old = rnd.randint(1, size)
            cons = ledger.consistency_proof(old, size)
            assert [bytes.fromhex(h) for h in cons.hashes] == consistency_path(old, leaves[:size])
            assert cons.old_root == root_from_leaves(leaves[:old]).hex()


def test_prove_entries_against_one_checkpoint(target: Target, signer: LogSigner) -> None:
    with target.open() as ledger:
        _fill(ledger, 300)
        note = ledger.checkpoint(signer)
        _fill(ledger, 20)  # later entries do not change proofs against the checkpoint
        seqs = [299, 0, 17, 17, 256, 255]
        proofs = ledger.prove_entries(seqs, note)
        assert [p.entry.seq for p in proofs] == seqs
        for proof in proofs:
            assert proof.checkpoint == note
            assert proof.proof.tree_size == 300
            verify_entry_proof(proof.model_dump_json(), signer.public_key)
        # prove_entry uses the latest stored checkpoint: this one.
        assert ledger.prove_entry(17) == proofs[2]
        parsed = parse_checkpoint(note, signer.public_key)
        assert ledger.prove_entries([5], parsed)[0].proof == ledger.prove_entries([5])[0].proof
        with pytest.raises(LedgerError, match="not in the checkpoint's tree"):
            ledger.prove_entries([300], note)
        assert ledger.prove_entries([], note) == []
