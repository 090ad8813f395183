"""The commit path's shortcuts: the tail a writer last committed, fixed SQL, entry bytes."""

from __future__ import annotations

import random
import string
from typing import Any

import pytest

from jurat.canonical import canonical_json_value
from jurat.errors import LedgerError
from jurat.ledger import Ledger, LogSigner, ReviewSlot, receipt_payload, verify_entry_proof
from jurat.ledger._commitsql import CommitSQL
from jurat.ledger._entry import ENTRY_FORMAT, entry_bytes
from jurat.ledger._merkle import root_from_leaves

from .conftest import Target


def _count_frontier_reads(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the stored-frontier reads of ``ledger``'s appends (none when its tip holds)."""
    reads: list[int] = []
    sql = ledger._backend.commit_sql
    real = sql.read_nodes

    def read_nodes(cur: Any, epoch: int, keys: Any) -> dict[int, bytes]:
        reads.append(epoch)
        return real(cur, epoch, keys)

    monkeypatch.setattr(sql, "read_nodes", read_nodes)
    return reads


def _items(tag: str, n: int) -> list[dict[str, Any]]:
    return [
        {"kind": "sample_recorded", "job_id": f"{tag}-{i}", "payload": {"i": i, "tag": tag}}
        for i in range(n)
    ]


def _receipt(ledger: Ledger, job: str, body: bytes, artifact: str) -> dict[str, Any]:
    slot = ledger.next_review("camp", artifact)
    return {
        "kind": "receipt",
        "job_id": job,
        "payload": receipt_payload(body, review_version=slot.version, supersedes=slot.supersedes),
        "campaign_id": "camp",
        "artifact_id": artifact,
    }


def test_writers_taking_turns_keep_one_chain_and_tree(
    target: Target, signer: LogSigner, monkeypatch: pytest.MonkeyPatch
) -> None:
    with target.open() as a, target.open() as b:
        reads_a = _count_frontier_reads(a, monkeypatch)
        a.append_many(_items("a0", 3))  # an empty ledger: the tree is set up, not read
        a.append_many(_items("a1", 5))
        a.append("decision", "a2", {"x": 1})
        assert reads_a == []  # nobody else wrote: A went on from its own tail
        b.append_many(_items("b0", 7))
        a.append_many(_items("a3", 2))
        assert len(reads_a) == 1  # B wrote in between: A read the frontier back
        for turn in range(6):
            writer = (a, b)[turn % 2]
            receipt = _receipt(writer, f"r{turn}", b"v1", f"art{turn % 2}")
            writer.append_many([*_items(f"t{turn}", turn + 1), receipt])
        # A receipt superseding one the other writer stored.
        b.append_many([_receipt(b, "r-new", b"v2", "art0")])
        a.append("decision", "last", {})
        entries = list(a.entries())
        assert [e.seq for e in entries] == list(range(len(entries)))
        assert [e.kind for e in entries].count("supersession") >= 1
        for before, after in zip(entries, entries[1:], strict=False):
            assert after.prev_hash == before.entry_hash
        note = a.checkpoint(signer)
        report = b.verify(public_key=signer.public_key)
        leaves = [bytes.fromhex(e.leaf_hash) for e in entries]
        assert report.root_hash == root_from_leaves(leaves).hex()
        assert (report.tree_size, report.warnings) == (len(entries), ())
        for proof in b.prove_entries(range(len(entries)), note):
            verify_entry_proof(proof.model_dump_json(), signer.public_key)


def test_a_failed_batch_leaves_the_next_one_a_true_tail(
    target: Target, signer: LogSigner, monkeypatch: pytest.MonkeyPatch
) -> None:
    with target.open() as ledger:
        ledger.append_many(_items("x", 5))
        sql = ledger._backend.commit_sql
        real = sql.insert_nodes

        def broken(cur: Any, epoch: int, nodes: Any) -> None:
            real(cur, epoch, nodes)  # the entries and nodes are in, then the batch fails
            raise RuntimeError("crash before commit")

        monkeypatch.setattr(sql, "insert_nodes", broken)
        with pytest.raises(RuntimeError, match="crash before commit"):
            ledger.append_many(_items("lost", 4))
        monkeypatch.setattr(sql, "insert_nodes", real)
        assert ledger.size() == 5
        ledger.append_many(_items("y", 6))
        ledger.checkpoint(signer)
        report = ledger.verify(public_key=signer.public_key)
        assert (report.tree_size, report.warnings) == (11, ())
        assert [e.job_id for e in ledger.entries(after_seq=4)][:1] == ["y-0"]


def test_a_refused_statement_is_a_ledger_error_and_commits_nothing(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    with target.open() as ledger:
        ledger.append("decision", "j", {})
        sql: CommitSQL = ledger._backend.commit_sql
        monkeypatch.setattr(sql, "_insert_nodes", sql._insert_nodes.replace("hash", "hash_x", 1))
        with pytest.raises(LedgerError, match="appending to the ledger failed"):
            ledger.append("decision", "k", {})
        monkeypatch.undo()
        assert ledger.size() == 1
        assert ledger.append("decision", "k", {}).seq == 1
        assert ledger.verify().tree_size == 2


def test_receipts_checked_against_another_writers_receipts(target: Target) -> None:
    with target.open() as a, target.open() as b:
        first = a.append_many([_receipt(a, "job", b"v1", "art")])[0]
        # B's slot read is stale once A has stored a newer receipt for the artifact.
        stale = b.next_review("camp", "art")
        a.append_many([_receipt(a, "job-2", b"v2", "art")])
        payload = receipt_payload(b"v3", review_version=stale.version, supersedes=stale.supersedes)
        with pytest.raises(LedgerError, match="expects version 3"):
            b.append("receipt", "job-3", payload, campaign_id="camp", artifact_id="art")
        # The same receipt again for a job is the stored entry; a different one is refused.
        again = receipt_payload(b"v1", review_version=1, supersedes=None)
        assert b.append("receipt", "job", again, campaign_id="camp", artifact_id="art") == first
        with pytest.raises(LedgerError, match="already has a different receipt"):
            b.append_receipt(
                "job", b"other", campaign_id="camp", artifact_id="x", review=ReviewSlot(version=1)
            )


_ALPHABET = string.printable + '\x00\x01\x1f\x7f"\\/é€😀\u2028'


@pytest.mark.parametrize("seed", range(4))
def test_entry_bytes_are_rfc8785_whatever_the_strings(seed: int) -> None:
    rng = random.Random(seed)

    def text() -> str:
        return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 12)))

    for _ in range(3000):
        fields: dict[str, Any] = {
            "seq": rng.choice([0, 1, 12345, 2**40, 2**53 - 1]),
            "kind": rng.choice(["decision", "receipt"]),
            "job_id": text(),
            "campaign_id": rng.choice([None, text()]),
            "artifact_id": rng.choice([None, text()]),
            "payload_sha256": text(),
            "recorded_at": text(),
            "prev_hash": text(),
        }
        expected = canonical_json_value({"format": ENTRY_FORMAT, **fields})
        assert entry_bytes(**fields) == expected
