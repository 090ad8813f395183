"""Appending: checking a request, and writing a batch of them in one transaction.

A request is checked and its payload canonicalised by the caller
(:func:`prepare`), so a bad payload fails where it was made. A batch
(:func:`append_batch`) runs inside the ledger's write transaction: it reads
the chain tail and the Merkle frontier once, gives each request its
``seq``, ``prev_hash`` and hashes in order, and inserts the entries and the
tree nodes they complete. One request's own refusal (a receipt for a
review slot another writer took) is returned in its place and the rest of
the batch still commits; a database error fails the whole batch, which then
commits nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, func, select

from jurat.canonical import canonical_json
from jurat.errors import LedgerError, ValidationError
from jurat.ledger._backend import ZERO_HASH
from jurat.ledger._entry import entry_bytes, entry_from_row
from jurat.ledger._jobs import ReceiptFields, check_receipt_payload
from jurat.ledger._merkle import leaf_hash
from jurat.ledger._models import ENTRY_KINDS, Entry, ReviewSlot
from jurat.ledger._queries import now, slot_after
from jurat.ledger._sql import chunks, one_of
from jurat.ledger._treestore import TreeState, insert_nodes, sync_tree

if TYPE_CHECKING:
    from jurat.ledger._backend import Tables

__all__ = ["AppendRequest", "append_batch", "prepare"]

_MAX_ID = 256


@dataclass(frozen=True)
class AppendRequest:
    """One entry to append, checked and canonicalised, not yet placed in the chain."""

    kind: str
    job_id: str
    data: bytes
    campaign_id: str | None
    artifact_id: str | None
    receipt: ReceiptFields | None


def _check_id(name: str, value: str | None, *, required: bool) -> None:
    if value is None:
        if required:
            raise LedgerError(f"{name} is required")
        return
    if not isinstance(value, str) or not value or len(value) > _MAX_ID:
        raise LedgerError(f"{name} must be a non-empty string of at most {_MAX_ID} characters")


def prepare(
    kind: str,
    job_id: str,
    payload: dict[str, Any],
    *,
    campaign_id: str | None = None,
    artifact_id: str | None = None,
) -> AppendRequest:
    """Check an append and canonicalise its payload; LedgerError names what is wrong."""
    if kind not in ENTRY_KINDS:
        raise LedgerError(f"unknown entry kind {kind!r}; expected one of {ENTRY_KINDS}")
    _check_id("job_id", job_id, required=True)
    _check_id("campaign_id", campaign_id, required=kind == "receipt")
    _check_id("artifact_id", artifact_id, required=kind == "receipt")
    if not isinstance(payload, dict):
        raise LedgerError("payload must be a JSON object (dict)")
    try:
        data = canonical_json(payload)
    except ValidationError as exc:
        raise LedgerError(f"payload cannot be stored: {exc}") from exc
    receipt = check_receipt_payload(payload) if kind == "receipt" else None
    return AppendRequest(kind, job_id, data, campaign_id, artifact_id, receipt)


class _Batch:
    """The chain tail, the Merkle frontier and the receipts in play while a batch is placed."""

    def __init__(self, conn: Connection, tables: Tables, requests: list[AppendRequest]) -> None:
        self.conn, self.tables = conn, tables
        e, t = tables.entries, tables.tree
        # The chain's tail and the tree's newest epoch in one round trip: a batch's fixed
        # cost is mostly its statements.
        newest_epoch = select(func.max(t.c.epoch)).scalar_subquery()
        tail = conn.execute(
            select(e.c.seq, e.c.entry_hash, e.c.leaf_hash, newest_epoch)
            .order_by(e.c.seq.desc())
            .limit(1)
        ).first()
        if tail is None:
            self.seq, self.prev = 0, ZERO_HASH
            self.tree: TreeState = sync_tree(conn, tables, 0, None)
        else:
            self.seq, self.prev = int(tail.seq) + 1, str(tail.entry_hash)
            epoch = 0 if tail[3] is None else int(tail[3])
            self.tree = sync_tree(conn, tables, self.seq, str(tail.leaf_hash), epoch=epoch)
        self.rows: list[dict[str, Any]] = []
        self.nodes: list[tuple[int, int, bytes]] = []
        self.job_receipts, self.slots = _receipts_in_play(conn, tables, requests)

    def apply(self, request: AppendRequest) -> Entry:
        """Place one request (and its supersession entry, for a new review version)."""
        receipt = request.receipt
        if receipt is None:
            return self._place(request.kind, request.job_id, request.data, request)
        assert request.campaign_id is not None and request.artifact_id is not None
        stored = self.job_receipts.get(request.job_id)
        if stored is not None:
            if stored.payload.get("receipt_sha256") == receipt.receipt_sha256:
                return stored
            raise LedgerError(f"job {request.job_id} already has a different receipt")
        subject = (request.campaign_id, request.artifact_id)
        slot = self.slots.get(subject) or ReviewSlot(version=1)
        if (receipt.review_version, receipt.supersedes) != (slot.version, slot.supersedes):
            raise LedgerError(
                f"receipt for {request.campaign_id}/{request.artifact_id} claims review "
                f"version {receipt.review_version} superseding {receipt.supersedes}, but the "
                f"ledger expects version {slot.version} superseding {slot.supersedes}"
            )
        if slot.previous_seq is not None:
            supersession = {
                "review_version": slot.version,
                "superseded_seq": slot.previous_seq,
                "superseded_receipt_sha256": slot.supersedes,
            }
            self._place("supersession", request.job_id, canonical_json(supersession), request)
        entry = self._place(request.kind, request.job_id, request.data, request)
        # Later requests of this batch see this receipt as the database will.
        self.job_receipts[request.job_id] = entry
        self.slots[subject] = ReviewSlot(
            version=receipt.review_version + 1,
            supersedes=receipt.receipt_sha256,
            previous_seq=entry.seq,
        )
        return entry

    def _place(self, kind: str, job_id: str, data: bytes, request: AppendRequest) -> Entry:
        fields: dict[str, Any] = {
            "seq": self.seq,
            "kind": kind,
            "job_id": job_id,
            "campaign_id": request.campaign_id,
            "artifact_id": request.artifact_id,
            "payload_sha256": hashlib.sha256(data).hexdigest(),
            "recorded_at": now(),
            "prev_hash": self.prev,
        }
        hashed = entry_bytes(**fields)
        leaf = leaf_hash(hashed)
        fields["entry_hash"] = hashlib.sha256(hashed).hexdigest()
        fields["leaf_hash"] = leaf.hex()
        self.rows.append({**fields, "payload": data})
        self.nodes.extend(self.tree.range.append(leaf))
        self.seq, self.prev = self.seq + 1, fields["entry_hash"]
        # Built here from bytes this process just made canonical: nothing to check again,
        # and the strict reader's and the model's checks cost more than the insert.
        return Entry.model_construct(payload=json.loads(data), **fields)

    def finish(self) -> None:
        """Insert the batch: its entries (one statement), then the tree nodes they complete."""
        if self.rows:
            self.conn.execute(self.tables.entries.insert(), self.rows)
            self.rows = []
        insert_nodes(self.conn, self.tables.tree, self.tree.epoch, self.nodes)
        self.nodes = []


def _receipts_in_play(
    conn: Connection, tables: Tables, requests: list[AppendRequest]
) -> tuple[dict[str, Entry], dict[tuple[str, str], ReviewSlot]]:
    """The stored receipts the batch's receipts must agree with, read once per batch.

    Returns each job's receipt (a job has at most one) and each (campaign, artifact)'s
    next review slot, for the jobs and subjects the batch's receipts name. The lookups
    select only (key, seq) and have no ORDER BY, so each is answered from its covering
    index (``entries_job``, ``entries_subject``) whatever the ledger's size: ordered by
    seq, SQLite walks the ``kind`` index instead, every receipt ever stored. The few
    rows found are then read by seq.
    """
    receipts = [r for r in requests if r.receipt is not None]
    if not receipts:
        return {}, {}
    e = tables.entries
    newest_for_job: dict[str, int] = {}
    jobs = sorted({r.job_id for r in receipts})
    for chunk in chunks(conn, jobs):
        found = conn.execute(
            select(e.c.job_id, e.c.seq).where(
                e.c.kind == "receipt", one_of(conn, e.c.job_id, chunk)
            )
        ).all()
        for job, seq in found:
            newest_for_job[str(job)] = max(int(seq), newest_for_job.get(str(job), -1))
    newest_for_subject: dict[tuple[str, str], int] = {}
    campaigns: dict[str, set[str]] = {}
    for r in receipts:
        assert r.campaign_id is not None and r.artifact_id is not None
        campaigns.setdefault(r.campaign_id, set()).add(r.artifact_id)
    for campaign, artifacts in campaigns.items():
        ids = sorted(artifacts)
        for chunk in chunks(conn, ids):
            found = conn.execute(
                select(e.c.artifact_id, e.c.seq).where(
                    e.c.kind == "receipt",
                    e.c.campaign_id == campaign,
                    one_of(conn, e.c.artifact_id, chunk),
                )
            ).all()
            for artifact, seq in found:
                key = (campaign, str(artifact))
                newest_for_subject[key] = max(int(seq), newest_for_subject.get(key, -1))
    wanted = sorted({*newest_for_job.values(), *newest_for_subject.values()})
    stored: dict[int, Entry] = {}
    for seqs in chunks(conn, wanted):
        rows = conn.execute(select(e).where(one_of(conn, e.c.seq, seqs)))
        for row in rows:
            stored[int(row.seq)] = entry_from_row(row._mapping)
    by_job = {job: stored[seq] for job, seq in newest_for_job.items()}
    slots = {key: slot_after(stored[seq]) for key, seq in newest_for_subject.items()}
    return by_job, slots


def append_batch(
    conn: Connection, tables: Tables, requests: list[AppendRequest]
) -> list[Entry | LedgerError]:
    """Place and insert ``requests`` in order inside the caller's write transaction.

    Returns each request's entry, or the LedgerError that refused it alone.
    """
    batch = _Batch(conn, tables, requests)
    results: list[Entry | LedgerError] = []
    for request in requests:
        try:
            results.append(batch.apply(request))
        except LedgerError as exc:
            results.append(exc)
    batch.finish()
    return results
