"""Appending: checking a request, and writing a batch of them in one transaction.

A request is checked and its payload canonicalised by the caller
(:func:`prepare`), so a bad payload fails where it was made. A batch
(:func:`append_batch`) runs inside the ledger's write transaction: it reads
the chain tail and the Merkle frontier once (the frontier not at all when the
tail is still the one this writer last committed, :class:`Tip`), gives each
request its ``seq``, ``prev_hash`` and hashes in order, and inserts the
entries and the tree nodes they complete. Its statements are fixed SQL run on
the driver's cursor (``_commitsql``). One request's own refusal (a receipt for a
review slot another writer took) is returned in its place and the rest of
the batch still commits; a database error fails the whole batch, which then
commits nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Connection, select

from jurat.canonical import canonical_json
from jurat.errors import LedgerError, ValidationError
from jurat.ledger._backend import ZERO_HASH
from jurat.ledger._commitsql import CommitSQL, Tail
from jurat.ledger._entry import entry_bytes, entry_from_row
from jurat.ledger._jobs import ReceiptFields, check_receipt_payload
from jurat.ledger._merkle import CompactRange, leaf_hash
from jurat.ledger._models import ENTRY_KINDS, Entry, EntryKind, ReviewSlot
from jurat.ledger._queries import now, slot_after
from jurat.ledger._sql import chunks, one_of
from jurat.ledger._tree import frontier, leaf_key, node_key
from jurat.ledger._treestore import TreeState, sync_tree

if TYPE_CHECKING:
    from jurat.ledger._backend import Tables

__all__ = ["AppendRequest", "Tip", "append_batch", "prepare"]

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


@dataclass(frozen=True)
class Tip:
    """The tail a Ledger last committed, with the Merkle frontier there.

    The next batch resumes the tree from it instead of reading the frontier back, when
    the tail it reads under the write lock is still this one (same seq, hashes and
    epoch): no other writer has committed since. ``entry_hash`` pins every entry before
    it through the chain, so it pins their leaves and the frontier too. Any other tail
    (another process wrote, a commit failed after this was taken, the database was
    swapped) does not match and the frontier is read as before.
    """

    seq: int
    entry_hash: str
    leaf_hash: str
    epoch: int
    roots: tuple[bytes, ...]


class _Batch:
    """The chain tail, the Merkle frontier and the receipts in play while a batch is placed."""

    def __init__(
        self,
        conn: Connection,
        cur: Any,
        tables: Tables,
        sql: CommitSQL,
        requests: list[AppendRequest],
        tip: Tip | None,
        payloads: bool = True,
    ) -> None:
        self.cur, self.sql = cur, sql
        self.payloads = payloads
        tail = sql.tail(cur)
        if tail is None:
            self.seq, self.prev, self.leaf = 0, ZERO_HASH, ""
            self.tree: TreeState = sync_tree(conn, tables, 0, None)
        else:
            self.seq, self.prev, self.leaf = tail[0] + 1, tail[1], tail[2]
            self.tree = _resume_tree(conn, cur, tables, sql, tail, tip)
        self.rows: list[tuple[Any, ...]] = []
        self.nodes: list[tuple[int, int, bytes]] = []
        self.job_receipts, self.slots = _receipts_in_play(conn, cur, tables, sql, requests)

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
        seq, prev = self.seq, self.prev
        campaign, artifact = request.campaign_id, request.artifact_id
        payload_sha256 = hashlib.sha256(data).hexdigest()
        recorded_at = now()
        hashed = entry_bytes(
            seq=seq,
            kind=kind,
            job_id=job_id,
            campaign_id=campaign,
            artifact_id=artifact,
            payload_sha256=payload_sha256,
            recorded_at=recorded_at,
            prev_hash=prev,
        )
        leaf = leaf_hash(hashed)
        entry_hash = hashlib.sha256(hashed).hexdigest()
        self.leaf = leaf.hex()
        # In ENTRY_COLUMNS order.
        self.rows.append(
            (seq, kind, job_id, campaign, artifact, data, payload_sha256, recorded_at, prev,
             entry_hash, self.leaf)
        )  # fmt: skip
        self.nodes.extend(self.tree.range.append(leaf))
        self.seq, self.prev = seq + 1, entry_hash
        # Built here from bytes this process just made canonical: nothing to check again,
        # and the strict reader's and the model's checks cost more than the insert. A
        # receipt's payload is read back whatever ``payloads`` says: a later receipt of the
        # same job in this batch is compared with it.
        parsed = json.loads(data) if self.payloads or request.receipt is not None else {}
        return Entry.model_construct(
            seq=seq,
            kind=cast(EntryKind, kind),
            job_id=job_id,
            campaign_id=campaign,
            artifact_id=artifact,
            payload=parsed,
            payload_sha256=payload_sha256,
            recorded_at=recorded_at,
            prev_hash=prev,
            entry_hash=entry_hash,
            leaf_hash=self.leaf,
        )

    def finish(self) -> Tip | None:
        """Insert the batch: its entries (one statement), then the tree nodes they complete.

        Returns the tail the batch leaves, for the next batch of this writer.
        """
        if self.rows:
            self.sql.insert_entries(self.cur, self.rows)
            self.rows = []
        self.sql.insert_nodes(self.cur, self.tree.epoch, self.nodes)
        self.nodes = []
        if self.seq == 0:
            return None
        rng = self.tree.range
        return Tip(self.seq - 1, self.prev, self.leaf, self.tree.epoch, rng.roots())


def _resume_tree(
    conn: Connection, cur: Any, tables: Tables, sql: CommitSQL, tail: Tail, tip: Tip | None
) -> TreeState:
    """The tree at the tail's size: from ``tip``, else its stored frontier, else repaired.

    The newest epoch's highest leaf being the tail's means no nodes past the entries and
    none missing at the end; with the tail's leaf stored as it is and every frontier node
    present, the tree is level (``sync_tree``'s check). Anything else is ``sync_tree``'s.
    """
    seq, entry_hash, leaf, epoch, top = tail
    size = seq + 1
    if top == seq:
        if tip is not None and (tip.seq, tip.entry_hash, tip.leaf_hash, tip.epoch) == tail[:4]:
            return TreeState(epoch, CompactRange.resume(size, tip.roots))
        keys = [node_key(level, index) for level, index in frontier(size)]
        found = sql.read_nodes(cur, epoch, [*keys, leaf_key(seq)])
        if found.get(leaf_key(seq)) == bytes.fromhex(leaf) and all(k in found for k in keys):
            return TreeState(epoch, CompactRange.resume(size, [found[k] for k in keys]))
    return sync_tree(conn, tables, size, leaf, epoch=epoch)


def _receipts_in_play(
    conn: Connection, cur: Any, tables: Tables, sql: CommitSQL, requests: list[AppendRequest]
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
    jobs = sorted({r.job_id for r in receipts})
    campaigns: dict[str, set[str]] = {}
    for r in receipts:
        assert r.campaign_id is not None and r.artifact_id is not None
        campaigns.setdefault(r.campaign_id, set()).add(r.artifact_id)
    subjects = {campaign: sorted(ids) for campaign, ids in campaigns.items()}
    newest_for_job, newest_for_subject = sql.receipt_seqs(cur, jobs, subjects)
    wanted = sorted({*newest_for_job.values(), *newest_for_subject.values()})
    stored: dict[int, Entry] = {}
    e = tables.entries
    for seqs in chunks(conn, wanted):
        rows = conn.execute(select(e).where(one_of(conn, e.c.seq, seqs)))
        for row in rows:
            stored[int(row.seq)] = entry_from_row(row._mapping)
    by_job = {job: stored[seq] for job, seq in newest_for_job.items()}
    slots = {key: slot_after(stored[seq]) for key, seq in newest_for_subject.items()}
    return by_job, slots


def append_batch(
    conn: Connection,
    tables: Tables,
    sql: CommitSQL,
    requests: list[AppendRequest],
    tip: Tip | None = None,
    *,
    payloads: bool = True,
) -> tuple[list[Entry | LedgerError], Tip | None]:
    """Place and insert ``requests`` in order inside the caller's write transaction.

    Returns each request's entry, or the LedgerError that refused it alone, and the tail
    the batch leaves. ``tip`` is what the caller's previous batch returned: only once
    that batch's transaction has committed may it be handed to the next. With
    ``payloads=False`` the entries placed from a request (not a receipt) have an empty
    ``payload``: for a caller that has the request's bytes and reads no payload back.
    """
    with sql.cursor(conn) as cur:
        batch = _Batch(conn, cur, tables, sql, requests, tip, payloads)
        results: list[Entry | LedgerError] = []
        for request in requests:
            try:
                results.append(batch.apply(request))
            except LedgerError as exc:
                results.append(exc)
        return results, batch.finish()
