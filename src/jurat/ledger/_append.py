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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select

from jurat.canonical import canonical_json
from jurat.errors import LedgerError, ValidationError
from jurat.ledger._backend import ZERO_HASH
from jurat.ledger._entry import entry_bytes, entry_from_row, load_payload
from jurat.ledger._jobs import ReceiptFields, check_receipt_payload
from jurat.ledger._merkle import leaf_hash
from jurat.ledger._models import ENTRY_KINDS, Entry
from jurat.ledger._queries import now, receipt_row, review_slot
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
    """The chain tail and Merkle frontier while a batch is being placed."""

    def __init__(self, conn: Connection, tables: Tables) -> None:
        self.conn, self.tables = conn, tables
        e = tables.entries
        tail = conn.execute(
            select(e.c.seq, e.c.entry_hash, e.c.leaf_hash).order_by(e.c.seq.desc()).limit(1)
        ).first()
        if tail is None:
            self.seq, self.prev = 0, ZERO_HASH
            self.tree: TreeState = sync_tree(conn, tables, 0, None)
        else:
            self.seq, self.prev = int(tail.seq) + 1, str(tail.entry_hash)
            self.tree = sync_tree(conn, tables, self.seq, str(tail.leaf_hash))
        self.rows: list[dict[str, Any]] = []
        self.nodes: list[tuple[int, int, bytes]] = []

    def apply(self, request: AppendRequest) -> Entry:
        """Place one request (and its supersession entry, for a new review version)."""
        receipt = request.receipt
        if receipt is None:
            return self._place(request.kind, request.job_id, request.data, request)
        assert request.campaign_id is not None and request.artifact_id is not None
        # The checks below read entries: earlier requests of this batch must be visible.
        self.flush()
        entries = self.tables.entries
        existing = receipt_row(self.conn, entries, job_id=request.job_id)
        if existing is not None:
            stored = entry_from_row(existing._mapping)
            if stored.payload.get("receipt_sha256") == receipt.receipt_sha256:
                return stored
            raise LedgerError(f"job {request.job_id} already has a different receipt")
        slot = review_slot(self.conn, entries, request.campaign_id, request.artifact_id)
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
        return self._place(request.kind, request.job_id, request.data, request)

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
        return Entry(payload=load_payload(data, seq=fields["seq"]), **fields)

    def flush(self) -> None:
        """Insert the entries placed so far (one statement for all of them)."""
        if self.rows:
            self.conn.execute(self.tables.entries.insert(), self.rows)
            self.rows = []

    def finish(self) -> None:
        """Insert what is left: entries, then the tree nodes they complete."""
        self.flush()
        insert_nodes(self.conn, self.tables.tree, self.tree.epoch, self.nodes)
        self.nodes = []


def append_batch(
    conn: Connection, tables: Tables, requests: list[AppendRequest]
) -> list[Entry | LedgerError]:
    """Place and insert ``requests`` in order inside the caller's write transaction.

    Returns each request's entry, or the LedgerError that refused it alone.
    """
    batch = _Batch(conn, tables)
    results: list[Entry | LedgerError] = []
    for request in requests:
        try:
            results.append(batch.apply(request))
        except LedgerError as exc:
            results.append(exc)
    batch.finish()
    return results
