"""The Merkle code against every transparency-dev vector, and random trees."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jurat.errors import TamperError
from jurat.ledger._merkle import (
    CompactRange,
    consistency_path,
    inclusion_path,
    leaf_hash,
    node_hash,
    root_from_leaves,
    verify_consistency,
    verify_inclusion,
    verify_subtree_consistency,
    verify_subtree_inclusion,
)

DATA = Path(__file__).parent / "data"
VECTORS = sorted(DATA.rglob("*.json"))
FAMILIES = ("inclusion", "consistency", "subtreeinclusion", "subtreeconsistency")

# The RFC 6962 reference tree transparency-dev builds its happy paths from.
REFERENCE_LEAVES = [
    bytes.fromhex(h)
    for h in [
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    ]
]


def _b(text: str) -> bytes:
    return base64.b64decode(text) if text else b""


def _run(family: str, v: dict[str, Any]) -> None:
    proof = [_b(p) for p in (v["proof"] or [])]
    if family == "inclusion":
        verify_inclusion(_b(v["leafHash"]), v["leafIdx"], v["treeSize"], proof, _b(v["root"]))
    elif family == "consistency":
        verify_consistency(v["size1"], v["size2"], proof, _b(v["root1"]), _b(v["root2"]))
    elif family == "subtreeinclusion":
        verify_subtree_inclusion(
            _b(v["leafHash"]), v["leafIdx"], v["start"], v["end"], proof, _b(v["root"])
        )
    else:
        verify_subtree_consistency(
            v["start"], v["end"], v["size"], proof, _b(v["root1"]), _b(v["root2"])
        )


def test_every_vector_family_is_present() -> None:
    counts = {f: sum(1 for p in VECTORS if p.relative_to(DATA).parts[0] == f) for f in FAMILIES}
    assert counts == {
        "inclusion": 98,
        "consistency": 98,
        "subtreeinclusion": 204,
        "subtreeconsistency": 118,
    }
    assert (DATA / "LICENSE").is_file()


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: str(p.relative_to(DATA)))
def test_transparency_dev_vector(path: Path) -> None:
    vector = json.loads(path.read_text())
    family = path.relative_to(DATA).parts[0]
    if vector["wantErr"]:
        with pytest.raises(TamperError):
            _run(family, vector)
    else:
        _run(family, vector)


def test_generated_proofs_equal_the_happy_path_vectors() -> None:
    """Our proof generation reproduces transparency-dev's proofs byte for byte."""
    leaves = [leaf_hash(d) for d in REFERENCE_LEAVES]
    roots = {root_from_leaves(leaves[:n]): n for n in range(1, 9)}
    matched = 0
    for path in VECTORS:
        family = path.relative_to(DATA).parts[0]
        v = json.loads(path.read_text())
        if v["wantErr"] or family not in ("inclusion", "consistency"):
            continue
        if family == "inclusion" and _b(v["root"]) in roots:
            size = roots[_b(v["root"])]
            assert size == v["treeSize"]
            expected = [_b(p) for p in (v["proof"] or [])]
            assert inclusion_path(v["leafIdx"], leaves[:size]) == expected
            matched += 1
        elif family == "consistency" and _b(v["root2"]) in roots and v["size1"] > 0:
            size = roots[_b(v["root2"])]
            expected = [_b(p) for p in (v["proof"] or [])]
            assert consistency_path(v["size1"], leaves[:size]) == expected
            matched += 1
    assert matched >= 8, matched


def test_empty_and_single_trees() -> None:
    assert root_from_leaves([]) == hashlib.sha256(b"").digest()
    one = leaf_hash(b"x")
    assert root_from_leaves([one]) == one
    assert node_hash(one, one) == hashlib.sha256(b"\x01" + one + one).digest()
    assert leaf_hash(b"x") == hashlib.sha256(b"\x00x").digest()


def _recursive_mth(leaves: list[bytes]) -> bytes:
    """RFC 9162 §2.1.1 MTH written as the RFC states it, as an oracle."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return node_hash(_recursive_mth(leaves[:k]), _recursive_mth(leaves[k:]))


def _flip(data: bytes, bit: int) -> bytes:
    bit %= len(data) * 8
    out = bytearray(data)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


tree = st.lists(st.binary(max_size=16), min_size=1, max_size=80)


@settings(max_examples=150, deadline=None)
@given(tree)
def test_compact_range_matches_rfc_recursion(data: list[bytes]) -> None:
    leaves = [leaf_hash(d) for d in data]
    rng = CompactRange()
    for i, leaf in enumerate(leaves):
        rng.append(leaf)
        assert rng.root() == _recursive_mth(leaves[: i + 1])


@settings(max_examples=150, deadline=None)
@given(tree, st.data())
def test_every_inclusion_proof_verifies_and_a_flipped_bit_fails(
    data: list[bytes], draw: st.DataObject
) -> None:
    leaves = [leaf_hash(d) for d in data]
    root = root_from_leaves(leaves)
    for index in range(len(leaves)):
        verify_inclusion(leaves[index], index, len(leaves), inclusion_path(index, leaves), root)
    index = draw.draw(st.integers(0, len(leaves) - 1))
    proof = inclusion_path(index, leaves)
    bit = draw.draw(st.integers(0, 255))
    target = draw.draw(st.sampled_from(["leaf", "root", "proof"] if proof else ["leaf", "root"]))
    leaf = leaves[index]
    if target == "leaf":
        leaf = _flip(leaf, bit)
    elif target == "root":
        root = _flip(root, bit)
    else:
        at = draw.draw(st.integers(0, len(proof) - 1))
        proof[at] = _flip(proof[at], bit)
    with pytest.raises(TamperError):
        verify_inclusion(leaf, index, len(leaves), proof, root)


@settings(max_examples=150, deadline=None)
@given(tree, st.data())
def test_every_consistency_proof_verifies_and_a_flipped_bit_fails(
    data: list[bytes], draw: st.DataObject
) -> None:
    leaves = [leaf_hash(d) for d in data]
    n = len(leaves)
    new_root = root_from_leaves(leaves)
    for m in range(1, n + 1):
        old_root = root_from_leaves(leaves, 0, m)
        verify_consistency(m, n, consistency_path(m, leaves), old_root, new_root)
    m = draw.draw(st.integers(1, n))
    proof = consistency_path(m, leaves)
    old_root = root_from_leaves(leaves, 0, m)
    bit = draw.draw(st.integers(0, 255))
    choices = ["old", "new"] + (["proof"] if proof else [])
    target = draw.draw(st.sampled_from(choices))
    if target == "old":
        old_root = _flip(old_root, bit)
    elif target == "new":
        new_root = _flip(new_root, bit)
    else:
        at = draw.draw(st.integers(0, len(proof) - 1))
        proof[at] = _flip(proof[at], bit)
    with pytest.raises(TamperError):
        verify_consistency(m, n, proof, old_root, new_root)


def test_exhaustive_small_trees() -> None:
    """Every proof of every tree up to 64 leaves, against the RFC's recursive MTH."""
    leaves = [leaf_hash(i.to_bytes(2, "big")) for i in range(64)]
    for n in range(1, 65):
        root = _recursive_mth(leaves[:n])
        for i in range(n):
            verify_inclusion(leaves[i], i, n, inclusion_path(i, leaves[:n]), root)
        for m in range(1, n + 1):
            old = _recursive_mth(leaves[:m])
            verify_consistency(m, n, consistency_path(m, leaves[:n]), old, root)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 2000), st.binary(max_size=8), st.data())
def test_large_random_trees(n: int, salt: bytes, draw: st.DataObject) -> None:
    leaves = [leaf_hash(salt + i.to_bytes(4, "big")) for i in range(n)]
    root = root_from_leaves(leaves)
    for _ in range(3):
        i = draw.draw(st.integers(0, n - 1))
        proof = inclusion_path(i, leaves)
        verify_inclusion(leaves[i], i, n, proof, root)
        if proof:
            at = draw.draw(st.integers(0, len(proof) - 1))
            proof[at] = _flip(proof[at], draw.draw(st.integers(0, 255)))
            with pytest.raises(TamperError):
                verify_inclusion(leaves[i], i, n, proof, root)
        m = draw.draw(st.integers(1, n))
        cproof = consistency_path(m, leaves)
        old = root_from_leaves(leaves, 0, m)
        verify_consistency(m, n, cproof, old, root)
        with pytest.raises(TamperError):
            verify_consistency(m, n, cproof, _flip(old, draw.draw(st.integers(0, 255))), root)


@settings(max_examples=60, deadline=None)
@given(tree, st.data())
def test_proofs_for_other_positions_do_not_transfer(data: list[bytes], draw: st.DataObject) -> None:
    leaves = [leaf_hash(d) for d in data]
    n = len(leaves)
    if n < 2:
        return
    root = root_from_leaves(leaves)
    i = draw.draw(st.integers(0, n - 1))
    j = draw.draw(st.integers(0, n - 1).filter(lambda x: x != i))
    if leaves[i] == leaves[j]:
        return
    with pytest.raises(TamperError):
        verify_inclusion(leaves[j], i, n, inclusion_path(i, leaves), root)
