"""The journal itself, on SQLite and on the real PostgreSQL: appends, reads, receipts, proofs."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from jurat.canonical import canonical_json
from jurat.errors import LedgerError, TamperError
from jurat.ledger import (
    ENTRY_KINDS,
    Ledger,
    LogSigner,
    ReviewSlot,
    load_or_create_log_key,
    parse_checkpoint,
    receipt_payload,
    verify_consistency,
    verify_entry_proof,
    verify_inclusion,
    verify_receipt_inclusion,
)
from jurat.ledger._entry import hashed_bytes

from .conftest import Target


def test_appends_are_gap_free_chained_and_canonical(
    target: Target, filled: Callable[[int], Ledger]
) -> None:
    with filled(10) as ledger:
        entries = list(ledger.entries())
        assert [e.seq for e in entries] == list(range(10))
        assert entries[0].prev_hash == "0" * 64
        for prev, cur in zip(entries, entries[1:], strict=False):
            assert cur.prev_hash == prev.entry_hash
        for e in entries:
            data = hashed_bytes(e)
            assert hashlib.sha256(data).hexdigest() == e.entry_hash
            assert hashlib.sha256(b"\x00" + data).hexdigest() == e.leaf_hash
            assert e.payload_sha256 == hashlib.sha256(canonical_json(e.payload)).hexdigest()
            assert json.loads(data)["payload_sha256"] == e.payload_sha256
        assert ledger.size() == 10
        assert ledger.entry(3) == entries[3]


def test_every_kind_is_kept_distinct_and_filterable(target: Target) -> None:
    with target.open() as ledger:
        for kind in ENTRY_KINDS:
            if kind in ("receipt", "supersession"):
                continue
            ledger.append(kind, "job-1", {"kind": kind})
        ledger.append("sample_recorded", "job-2", {"n": 1})
        assert [e.kind for e in ledger.entries(job_id="job-1")] == [
            k for k in ENTRY_KINDS if k not in ("receipt", "supersession")
        ]
        assert [e.payload for e in ledger.entries(kind="transport_retry")] == [
            {"kind": "transport_retry"}
        ]
        last = len(ENTRY_KINDS) - 2  # every kind but two, then job-2's: seq 0 .. last
        assert [e.seq for e in ledger.entries(after_seq=last - 2)] == [last - 1, last]
        report = ledger.verify()
        assert report.kinds["evaluation_failed"] == 1
        assert report.kinds["unresolved_disagreement"] == 1
        assert report.kinds["transport_retry"] == 1
        assert report.kinds["transport_failed"] == 1


def test_bad_appends_are_refused(target: Target) -> None:
    with target.open() as ledger:
        with pytest.raises(LedgerError, match="unknown entry kind"):
            ledger.append("opinion", "job", {})
        with pytest.raises(LedgerError, match="job_id"):
            ledger.append("decision", "", {})
        with pytest.raises(LedgerError, match="cannot be stored"):
            ledger.append("decision", "job", {"x": float("nan")})
        with pytest.raises(LedgerError, match="campaign_id is required"):
            ledger.append(
                "receipt", "job", receipt_payload(b"r", review_version=1, supersedes=None)
            )
        assert ledger.size() == 0


def test_entries_iterates_across_batches(target: Target) -> None:
    with target.open() as ledger:
        for i in range(1005):
            ledger.append("sample_recorded", "big", {"i": i})
        assert [p["i"] for p in ledger.samples_for_job("big")] == list(range(1005))


def test_update_delete_and_gaps_are_refused_by_the_database(
    target: Target, filled: Callable[[int], Ledger]
) -> None:
    filled(3).close()
    entries, checkpoints, meta = (target.table(t) for t in ("entries", "checkpoints", "meta"))
    refused = [
        f"UPDATE {entries} SET job_id = 'x' WHERE seq = 1",
        f"UPDATE {entries} SET payload = payload WHERE seq = 0",
        f"DELETE FROM {entries} WHERE seq = 2",
        f"DELETE FROM {entries}",
        f"UPDATE {meta} SET value = 'other'",
        f"DELETE FROM {meta}",
        # A row that skips a seq, and one that does not link to the tail.
        f"INSERT INTO {entries} SELECT seq + 5, kind, job_id, campaign_id, artifact_id, payload, "
        f"payload_sha256, recorded_at, prev_hash, entry_hash, leaf_hash FROM {entries} "
        "WHERE seq = 2",
        f"INSERT INTO {entries} SELECT seq + 1, kind, job_id, campaign_id, artifact_id, payload, "
        f"payload_sha256, recorded_at, prev_hash, entry_hash, leaf_hash FROM {entries} "
        "WHERE seq = 2",
    ]
    if target.backend == "postgresql":
        refused += [f"TRUNCATE {entries}", f"TRUNCATE {checkpoints}", f"TRUNCATE {meta}"]
    for statement in refused:
        with pytest.raises(Exception, match="jurat ledger"):
            target.raw(statement)
    with target.open() as ledger:
        assert ledger.verify().tree_size == 3


def test_checkpoint_rows_are_append_only_too(target: Target, signer: LogSigner) -> None:
    with target.open() as ledger:
        ledger.append("decision", "j", {})
        ledger.checkpoint(signer)
    for statement in (
        f"UPDATE {target.table('checkpoints')} SET tree_size = 0",
        f"DELETE FROM {target.table('checkpoints')}",
    ):
        with pytest.raises(Exception, match="jurat ledger"):
            target.raw(statement)


def _receipt(ledger: Ledger, job: str, data: bytes, artifact: str = "a1") -> tuple[int, int]:
    slot = ledger.next_review("camp", artifact)
    entry = ledger.append_receipt(job, data, campaign_id="camp", artifact_id=artifact, review=slot)
    return entry.seq, slot.version


def test_receipts_are_idempotent_per_job_and_versioned_per_artifact(target: Target) -> None:
    with target.open() as ledger:
        assert ledger.receipt_for_job("job-1") is None
        assert ledger.latest_receipt("camp", "a1") is None
        assert ledger.next_review("camp", "a1") == ReviewSlot(version=1)
        seq1, v1 = _receipt(ledger, "job-1", b"receipt one")
        assert (seq1, v1) == (0, 1)
        assert ledger.receipt_for_job("job-1") == b"receipt one"
        # The same job submitted again gets the stored receipt, no new entry.
        again = ledger.append_receipt(
            "job-1",
            b"receipt one",
            campaign_id="camp",
            artifact_id="a1",
            review=ReviewSlot(version=1),
        )
        assert again.seq == seq1 and ledger.size() == 1
        # A different receipt for a job that has one is refused.
        with pytest.raises(LedgerError, match="already has a different receipt"):
            _receipt(ledger, "job-1", b"a second opinion")
        # A changed artifact (new job id) makes review version 2 superseding the first.
        seq2, v2 = _receipt(ledger, "job-2", b"receipt two")
        assert v2 == 2
        supersession, receipt = ledger.entry(seq2 - 1), ledger.entry(seq2)
        assert supersession.kind == "supersession"
        assert supersession.payload == {
            "review_version": 2,
            "superseded_seq": seq1,
            "superseded_receipt_sha256": hashlib.sha256(b"receipt one").hexdigest(),
        }
        assert receipt.payload["supersedes"] == hashlib.sha256(b"receipt one").hexdigest()
        latest = ledger.latest_receipt("camp", "a1")
        assert latest is not None and latest[1] == b"receipt two"
        assert latest[0].payload["review_version"] == 2
        # Nothing was overwritten: both receipts are still there, in order.
        assert [r for _, r in ledger.receipts()] == [b"receipt one", b"receipt two"]
        # Other artifacts have their own versions.
        assert _receipt(ledger, "job-3", b"other artifact", artifact="a2")[1] == 1
        ledger.verify()


def test_a_stale_review_slot_is_refused(target: Target) -> None:
    with target.open() as ledger:
        stale = ledger.next_review("camp", "a1")
        _receipt(ledger, "job-1", b"first")
        with pytest.raises(LedgerError, match="expects version 2"):
            ledger.append_receipt(
                "job-2", b"raced", campaign_id="camp", artifact_id="a1", review=stale
            )
        with pytest.raises(LedgerError, match="expects version 2"):
            ledger.append_receipt(
                "job-2",
                b"wrong digest",
                campaign_id="camp",
                artifact_id="a1",
                review=ReviewSlot(version=2, supersedes="0" * 64),
            )
        assert ledger.size() == 1


def test_receipt_payload_must_be_consistent(target: Target) -> None:
    with target.open() as ledger:
        payload = receipt_payload(b"abc", review_version=1, supersedes=None)
        payload["receipt"] = base64.b64encode(b"abd").decode()
        with pytest.raises(LedgerError, match="do not match"):
            ledger.append("receipt", "j", payload, campaign_id="c", artifact_id="a")
        bad_version = receipt_payload(b"abc", review_version=0, supersedes=None)
        with pytest.raises(LedgerError, match="review_version"):
            ledger.append("receipt", "j", bad_version, campaign_id="c", artifact_id="a")


def test_checkpoints_and_proofs_verify_offline(
    target: Target, filled: Callable[[int], Ledger], signer: LogSigner
) -> None:
    with filled(13) as ledger:
        note1 = ledger.checkpoint(signer)
        old = parse_checkpoint(note1, signer.verifier_key(), origin=signer.origin)
        assert old.tree_size == 13
        assert target.checkpoint_path.read_text() == note1
        for i in range(13, 21):
            ledger.append("decision", f"j{i}", {"i": i})
        new = parse_checkpoint(ledger.checkpoint(signer), signer.public_key)
        assert new.tree_size == 21
        assert [cp.tree_size for cp in ledger.checkpoints()] == [13, 21]
        # Every entry is provably in the signed tree.
        for seq in range(21):
            proof = ledger.inclusion_proof(seq, 21)
            assert proof.root_hash == new.root_hash
            verify_inclusion(
                bytes.fromhex(proof.leaf_hash),
                seq,
                21,
                [bytes.fromhex(h) for h in proof.hashes],
                bytes.fromhex(new.root_hash),
            )
        # The new checkpoint extends the old one.
        cons = ledger.consistency_proof(13, 21)
        verify_consistency(
            13,
            21,
            [bytes.fromhex(h) for h in cons.hashes],
            bytes.fromhex(old.root_hash),
            bytes.fromhex(new.root_hash),
        )
        # One self-contained document per entry, checkable with the public key alone.
        doc = ledger.prove_entry(5).model_dump_json()
        entry = verify_entry_proof(doc, signer.verifier_key())
        assert entry.seq == 5 and entry.payload["marker"] == "m0005"
        report = ledger.verify(public_key=signer.public_key)
        assert (report.tree_size, report.checkpoints_checked, report.signatures_checked) == (
            21,
            2,
            3,
        )
        assert report.root_hash == new.root_hash and report.warnings == ()


def test_an_altered_entry_proof_is_refused(
    target: Target, filled: Callable[[int], Ledger], signer: LogSigner
) -> None:
    with filled(6) as ledger:
        ledger.checkpoint(signer)
        doc = json.loads(ledger.prove_entry(2).model_dump_json())
    verify_entry_proof(doc, signer.public_key)

    def altered(path: list[str], value: object) -> dict[str, object]:
        copy = json.loads(json.dumps(doc))
        node = copy
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return copy  # type: ignore[no-any-return]

    cases = [
        altered(["entry", "payload", "marker"], "m9999"),
        altered(["entry", "kind"], "decision"),
        altered(["entry", "job_id"], "job-9"),
        altered(["proof", "hashes", 0], "00" * 32),
        altered(["proof", "leaf_index"], 3),
        altered(["checkpoint"], doc["checkpoint"].replace("\n6\n", "\n7\n")),
    ]
    for case in cases:
        with pytest.raises(TamperError):
            verify_entry_proof(case, signer.public_key)
    other = LogSigner(Ed25519PrivateKey.generate(), name=signer.name)
    with pytest.raises(TamperError, match="no signature by the given log key"):
        verify_entry_proof(doc, other.public_key)


def test_proof_bounds_are_checked(target: Target, filled: Callable[[int], Ledger]) -> None:
    with filled(4) as ledger:
        for seq, size in ((4, None), (-1, None), (2, 2), (0, 5)):
            with pytest.raises(LedgerError):
                ledger.inclusion_proof(seq, size)
        for old, new in ((0, 4), (3, 2), (1, 5)):
            with pytest.raises(LedgerError):
                ledger.consistency_proof(old, new)
        with pytest.raises(LedgerError, match="no checkpoint covers"):
            ledger.prove_entry(0)
        with pytest.raises(LedgerError, match="no entry"):
            ledger.entry(99)


def test_checkpoints_keep_one_log_identity(
    target: Target, signer: LogSigner, tmp_path: Path
) -> None:
    with target.open() as ledger:
        ledger.append("decision", "j", {})
        ledger.checkpoint(signer)
        other = load_or_create_log_key(tmp_path / "other.key")
        with pytest.raises(LedgerError, match="same log key"):
            ledger.checkpoint(other)
        assert len(ledger.checkpoints()) == 1


def test_receipt_inclusion_for_jurat_verify(
    target: Target, signer: LogSigner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    with target.open() as ledger:
        ledger.append("job_received", "job-1", {})
        _receipt(ledger, "job-1", b'{"bundle": 1}')
        ledger.checkpoint(signer)
        proof = tmp_path / "c1.proof.json"
        proof.write_text(ledger.prove_entry(1).model_dump_json(indent=2))
        cp = tmp_path / "cp"
        cp.write_text(target.checkpoint_path.read_text())
        detail = verify_receipt_inclusion(
            b'{"bundle": 1}', proof, cp, public_key=signer.verifier_key()
        )
        assert "entry 1 (review version 1)" in detail and "signature checked" in detail
        assert "NOT checked" in verify_receipt_inclusion(b'{"bundle": 1}', proof, cp)
        with pytest.raises(TamperError, match="not this receipt"):
            verify_receipt_inclusion(b'{"bundle": 2}', proof, cp, public_key=signer.public_key)
        ledger.append("decision", "job-2", {})
        ledger.checkpoint(signer)
        with pytest.raises(TamperError, match="jurat log prove"):
            verify_receipt_inclusion(
                b'{"bundle": 1}', proof, target.checkpoint_path, public_key=signer.public_key
            )
        with pytest.raises(LedgerError, match="cannot read"):
            verify_receipt_inclusion(b"", tmp_path / "absent.json", cp)
