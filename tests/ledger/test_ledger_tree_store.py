"""The stored tree in the database: migration of older ledgers, catching up, edits caught."""

from __future__ import annotations

import pytest

from jurat.errors import LedgerError, TamperError
from jurat.ledger import Ledger, LogSigner, verify_entry_proof
from jurat.ledger._merkle import inclusion_path
from jurat.ledger._tree import node_key

from .conftest import Target


def _fill(ledger: Ledger, n: int, tag: str = "") -> None:
    ledger.append_many(
        [
            {"kind": "sample_recorded", "job_id": f"job{tag}-{i}", "payload": {"i": i}}
            for i in range(n)
        ]
    )


def _blob(target: Target, data: bytes) -> str:
    return f"X'{data.hex()}'" if target.backend == "sqlite" else f"'\\x{data.hex()}'::bytea"


def _keys_past(m: int, n: int) -> list[int]:
    """Keys of every node of a tree of n leaves that covers a leaf at or after m."""
    keys = []
    level = 0
    while n >> level:
        for index in range(n >> level):
            if (index + 1) << level > m:
                keys.append(node_key(level, index))
        level += 1
    return keys


def test_a_ledger_without_the_tree_table_is_migrated_on_open(
    target: Target, signer: LogSigner
) -> None:
    with target.open() as ledger:
        _fill(ledger, 300)
        note = ledger.checkpoint(signer)
        root = ledger.verify().root_hash
    # A ledger written before the tree was stored: same tables, no tree.
    target.tamper(f"DROP TABLE {target.table('tree')}")
    with target.open(create=False) as ledger:
        report = ledger.verify(public_key=signer.public_key)
        assert (report.tree_size, report.root_hash, report.warnings) == (300, root, ())
        proof = ledger.prove_entries([123], note)[0]
        verify_entry_proof(proof.model_dump_json(), signer.public_key)
        _fill(ledger, 5, "b")
        ledger.checkpoint(signer)
        assert ledger.verify(public_key=signer.public_key).warnings == ()
    # The recreated table is append-only like the others.
    with pytest.raises(Exception, match="append-only"):
        target.raw(f"UPDATE {target.table('tree')} SET node = node + 1")
    with pytest.raises(Exception, match="append-only"):
        target.raw(f"DELETE FROM {target.table('tree')}")


def test_entries_without_nodes_are_caught_up(target: Target, signer: LogSigner) -> None:
    with target.open() as ledger:
        _fill(ledger, 10)
        leaves = [bytes.fromhex(e.leaf_hash) for e in ledger.entries()]
    # As if an older jurat had appended seq 6..9: entries without nodes.
    keys = ", ".join(str(k) for k in _keys_past(6, 10))
    target.tamper(f"DELETE FROM {target.table('tree')} WHERE node IN ({keys})")
    with target.open() as ledger:
        assert any("covers 6 of 10" in w for w in ledger.verify().warnings)
        proof = ledger.inclusion_proof(8)  # completes the tree first
        assert [bytes.fromhex(h) for h in proof.hashes] == inclusion_path(8, leaves)
        assert ledger.verify().warnings == (
            "no checkpoint yet: losing the newest entries would not be detected",
        )
        ledger.checkpoint(signer)
        assert ledger.verify(public_key=signer.public_key).warnings == ()


@pytest.mark.parametrize("node", [(0, 5), (1, 2), (2, 0), (3, 0)])
def test_an_edited_node_is_caught_never_handed_out(
    target: Target, signer: LogSigner, node: tuple[int, int]
) -> None:
    with target.open() as ledger:
        _fill(ledger, 10)
        note = ledger.checkpoint(signer)
    forged = _blob(target, bytes(32))
    target.tamper(
        f"UPDATE {target.table('tree')} SET hash = {forged} WHERE node = {node_key(*node)}"
    )
    level, index = node
    with target.open() as ledger:
        with pytest.raises(TamperError, match=rf"^seq {index << level}"):
            ledger.verify()
        failures = 0
        for seq in range(10):
            try:
                proof = ledger.prove_entries([seq], note)[0]
            except TamperError:
                failures += 1
                continue
            verify_entry_proof(proof.model_dump_json(), signer.public_key)
        assert failures >= 1


def test_a_tree_ahead_of_truncated_entries_is_rebuilt_as_a_new_epoch(
    target: Target, signer: LogSigner
) -> None:
    with target.open() as ledger:
        _fill(ledger, 10)
    target.tamper(f"DELETE FROM {target.table('entries')} WHERE seq >= 7")
    with target.open() as ledger:
        assert any("holds 10 leaves but the ledger 7" in w for w in ledger.verify().warnings)
        _fill(ledger, 4, "fork")
        report = ledger.verify()
        assert report.tree_size == 11
        assert any("rebuilt 1 time" in w for w in report.warnings)
        ledger.checkpoint(signer)
        for proof in ledger.prove_entries(range(11)):
            verify_entry_proof(proof.model_dump_json(), signer.public_key)


def test_append_many_is_all_or_nothing(target: Target) -> None:
    with target.open() as ledger:
        _fill(ledger, 3)
        with pytest.raises(LedgerError, match="unknown entry kind"):
            ledger.append_many(
                [
                    {"kind": "decision", "job_id": "j", "payload": {}},
                    {"kind": "nonsense", "job_id": "j", "payload": {}},
                ]
            )
        bad_receipt = {
            "kind": "receipt",
            "job_id": "j",
            "payload": {"receipt": "eA==", "receipt_sha256": "0" * 64, "review_version": 1},
            "campaign_id": "c",
            "artifact_id": "a",
        }
        with pytest.raises(LedgerError):
            ledger.append_many([{"kind": "decision", "job_id": "j", "payload": {}}, bad_receipt])
        assert ledger.size() == 3
        assert ledger.verify().tree_size == 3
