"""The Ledger: appending entries, finding receipts, checkpoints and proofs."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import Connection, select
from sqlalchemy.exc import SQLAlchemyError

from jurat.canonical import canonical_json
from jurat.errors import LedgerError, TamperError, ValidationError
from jurat.ledger._backend import ZERO_HASH, Backend, default_checkpoint_path
from jurat.ledger._checkpoint import sign_checkpoint
from jurat.ledger._entry import entry_bytes, entry_from_row, load_payload
from jurat.ledger._jobs import check_receipt_payload, decode_receipt, receipt_payload
from jurat.ledger._merkle import consistency_path, inclusion_path, leaf_hash, root_from_leaves
from jurat.ledger._models import (
    ENTRY_KINDS,
    Checkpoint,
    ConsistencyProof,
    Entry,
    EntryProof,
    InclusionProof,
    LedgerReport,
    ReviewSlot,
)
from jurat.ledger._note import LogSigner, parse_unverified_checkpoint
from jurat.ledger._queries import current_size, now, receipt_row, review_slot, stored_leaves
from jurat.ledger._verify import verify_ledger

__all__ = ["Ledger", "open_ledger"]

_MAX_ID = 256
_BATCH = 1000


def _check_id(name: str, value: str | None, *, required: bool) -> None:
    if value is None:
        if required:
            raise LedgerError(f"{name} is required")
        return
    if not isinstance(value, str) or not value or len(value) > _MAX_ID:
        raise LedgerError(f"{name} must be a non-empty string of at most {_MAX_ID} characters")


@contextmanager
def _db(action: str) -> Iterator[None]:
    """Turn driver and SQLAlchemy errors into LedgerError at the boundary."""
    try:
        yield
    except SQLAlchemyError as exc:
        detail = getattr(exc, "orig", None) or exc
        raise LedgerError(f"{action} failed: {detail}") from exc


def open_ledger(
    url: str | None = None,
    *,
    checkpoint_path: str | os.PathLike[str] | None = None,
    create: bool = True,
    prefix: str = "jurat_",
    schema: str | None = None,
) -> Ledger:
    """Open (and by default create) the ledger at ``url``.

    ``url`` is ``sqlite:///path.db`` or ``postgresql://…``; None means
    ``sqlite:///jurat.db`` in the working directory. ``checkpoint_path`` is
    the checkpoint file kept outside the database (default: next to a SQLite
    file, under ``$XDG_STATE_HOME/jurat`` for PostgreSQL). With
    ``create=False`` a missing ledger is a :class:`LedgerError`, not a new one.
    ``prefix`` and ``schema`` (PostgreSQL) let several ledgers share a database.
    """
    backend = Backend(url, prefix=prefix, schema=schema)
    try:
        if backend.exists():
            backend.check_format()
        elif create:
            with _db("creating the ledger"):
                backend.install()
        else:
            raise LedgerError(f"no ledger at {backend.display_url()}")
    except BaseException:
        backend.dispose()
        raise
    path = (
        Path(checkpoint_path)
        if checkpoint_path is not None
        else default_checkpoint_path(backend.url, prefix=prefix, schema=schema)
    )
    return Ledger(backend, checkpoint_path=path)


class Ledger:
    """An append-only, hash-chained journal with a Merkle log over its entries.

    Safe to share between threads; several processes may append to the same
    database, serialised by the database's write lock.
    """

    def __init__(self, backend: Backend, *, checkpoint_path: Path) -> None:
        self._backend = backend
        self._t = backend.tables
        self.checkpoint_path = checkpoint_path
        e = self._t.entries
        self._tail_query = select(e.c.seq, e.c.entry_hash).order_by(e.c.seq.desc()).limit(1)
        self._insert_stmt = e.insert()

    # -- lifecycle -------------------------------------------------------

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._backend.name

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        return self._backend.display_url()

    def close(self) -> None:
        """Release every database connection."""
        self._backend.dispose()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- appending -------------------------------------------------------

    def append(
        self,
        kind: str,
        job_id: str,
        payload: dict[str, Any],
        *,
        campaign_id: str | None = None,
        artifact_id: str | None = None,
    ) -> Entry:
        """Append one entry and commit it durably; return it as stored.

        A ``receipt`` payload (see :func:`receipt_payload`) must carry the
        review version the ledger expects for its (campaign, artifact): 1, or
        the previous receipt's version + 1 with ``supersedes`` its sha256. A
        ``supersession`` entry is then written just before it, in the same
        transaction. Appending the same receipt for a job again returns the
        stored entry; a different receipt for a job that has one is refused.
        """
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
        with _db("appending to the ledger"), self._backend.write() as conn:
            if receipt is not None:
                assert campaign_id is not None and artifact_id is not None
                existing = receipt_row(conn, self._t.entries, job_id=job_id)
                if existing is not None:
                    stored = entry_from_row(existing._mapping)
                    if stored.payload.get("receipt_sha256") == receipt.receipt_sha256:
                        return stored
                    raise LedgerError(f"job {job_id} already has a different receipt")
                slot = review_slot(conn, self._t.entries, campaign_id, artifact_id)
                if (receipt.review_version, receipt.supersedes) != (slot.version, slot.supersedes):
                    raise LedgerError(
                        f"receipt for {campaign_id}/{artifact_id} claims review version "
                        f"{receipt.review_version} superseding {receipt.supersedes}, but the "
                        "ledger expects "
                        f"version {slot.version} superseding {slot.supersedes}"
                    )
                if slot.previous_seq is not None:
                    self._insert(
                        conn,
                        "supersession",
                        job_id,
                        canonical_json(
                            {
                                "review_version": slot.version,
                                "superseded_seq": slot.previous_seq,
                                "superseded_receipt_sha256": slot.supersedes,
                            }
                        ),
                        campaign_id,
                        artifact_id,
                    )
            return self._insert(conn, kind, job_id, data, campaign_id, artifact_id)

    def append_receipt(
        self,
        job_id: str,
        receipt: bytes,
        *,
        campaign_id: str,
        artifact_id: str,
        review: ReviewSlot,
        extra: dict[str, Any] | None = None,
    ) -> Entry:
        """Append a receipt whose bytes were signed for ``review`` (from :meth:`next_review`)."""
        payload = receipt_payload(
            receipt, review_version=review.version, supersedes=review.supersedes, extra=extra
        )
        return self.append(
            "receipt", job_id, payload, campaign_id=campaign_id, artifact_id=artifact_id
        )

    def _insert(
        self,
        conn: Connection,
        kind: str,
        job_id: str,
        data: bytes,
        campaign_id: str | None,
        artifact_id: str | None,
    ) -> Entry:
        tail = conn.execute(self._tail_query).first()
        seq, prev = (0, ZERO_HASH) if tail is None else (int(tail.seq) + 1, str(tail.entry_hash))
        row: dict[str, Any] = {
            "seq": seq,
            "kind": kind,
            "job_id": job_id,
            "campaign_id": campaign_id,
            "artifact_id": artifact_id,
            "payload": data,
            "payload_sha256": hashlib.sha256(data).hexdigest(),
            "recorded_at": now(),
            "prev_hash": prev,
        }
        hashed = entry_bytes(**{k: v for k, v in row.items() if k != "payload"})
        row["entry_hash"] = hashlib.sha256(hashed).hexdigest()
        row["leaf_hash"] = leaf_hash(hashed).hex()
        # Parameters, not .values(): one cached statement for every append.
        conn.execute(self._insert_stmt, row)
        fields = {k: v for k, v in row.items() if k != "payload"}
        return Entry(payload=load_payload(data, seq=seq), **fields)

    # -- reading ---------------------------------------------------------

    def size(self) -> int:
        """Number of entries (the next ``seq``)."""
        e = self._t.entries
        with _db("reading the ledger"), self._backend.read() as conn:
            tail = conn.execute(select(e.c.seq).order_by(e.c.seq.desc()).limit(1)).first()
        return 0 if tail is None else int(tail.seq) + 1

    def entry(self, seq: int) -> Entry:
        """The entry at ``seq``; :class:`LedgerError` if there is none."""
        e = self._t.entries
        with _db("reading the ledger"), self._backend.read() as conn:
            row = conn.execute(select(e).where(e.c.seq == seq)).first()
        if row is None:
            raise LedgerError(f"no entry with seq {seq}")
        return entry_from_row(row._mapping)

    def entries(
        self,
        *,
        job_id: str | None = None,
        kind: str | None = None,
        after_seq: int | None = None,
        campaign_id: str | None = None,
        artifact_id: str | None = None,
    ) -> Iterator[Entry]:
        """Entries in ``seq`` order, filtered; each row's hashes are checked as it is read.

        Reads in batches, each in its own short transaction, so an abandoned
        iterator holds no connection.
        """
        e = self._t.entries
        query = select(e).order_by(e.c.seq).limit(_BATCH)
        if job_id is not None:
            query = query.where(e.c.job_id == job_id)
        if kind is not None:
            query = query.where(e.c.kind == kind)
        if campaign_id is not None:
            query = query.where(e.c.campaign_id == campaign_id)
        if artifact_id is not None:
            query = query.where(e.c.artifact_id == artifact_id)
        cursor = -1 if after_seq is None else after_seq
        while True:
            with _db("reading the ledger"), self._backend.read() as conn:
                rows = conn.execute(query.where(e.c.seq > cursor)).all()
            for row in rows:
                yield entry_from_row(row._mapping)
            if len(rows) < _BATCH:
                return
            cursor = int(rows[-1].seq)

    def samples_for_job(self, job_id: str) -> list[dict[str, Any]]:
        """Payloads of the job's ``sample_recorded`` entries, in order: what a resume replays."""
        return [entry.payload for entry in self.entries(job_id=job_id, kind="sample_recorded")]

    def receipt_for_job(self, job_id: str) -> bytes | None:
        """The receipt already recorded for ``job_id``, so a resubmitted job returns it."""
        with _db("reading the ledger"), self._backend.read() as conn:
            row = receipt_row(conn, self._t.entries, job_id=job_id)
        if row is None:
            return None
        entry = entry_from_row(row._mapping)
        return decode_receipt(entry.payload, seq=entry.seq)

    def latest_receipt(self, campaign_id: str, artifact_id: str) -> tuple[Entry, bytes] | None:
        """The newest receipt for an artifact of a campaign, with its bytes."""
        with _db("reading the ledger"), self._backend.read() as conn:
            row = receipt_row(conn, self._t.entries, subject=(campaign_id, artifact_id))
        if row is None:
            return None
        entry = entry_from_row(row._mapping)
        return entry, decode_receipt(entry.payload, seq=entry.seq)

    def next_review(self, campaign_id: str, artifact_id: str) -> ReviewSlot:
        """The review version and ``supersedes`` digest a new receipt must be signed with.

        Another writer may take the slot first; :meth:`append` then refuses
        the receipt rather than fork the review history.
        """
        with _db("reading the ledger"), self._backend.read() as conn:
            return review_slot(conn, self._t.entries, campaign_id, artifact_id)

    def receipts(self, *, campaign_id: str | None = None) -> Iterator[tuple[Entry, bytes]]:
        """Every receipt entry with its bytes, in order: what ``jurat replay`` re-derives."""
        for entry in self.entries(kind="receipt", campaign_id=campaign_id):
            yield entry, decode_receipt(entry.payload, seq=entry.seq)

    # -- checkpoints and proofs -----------------------------------------

    def checkpoints(self) -> list[Checkpoint]:
        """Checkpoints stored in the database, oldest first (signatures not checked)."""
        c = self._t.checkpoints
        with _db("reading checkpoints"), self._backend.read() as conn:
            rows = conn.execute(select(c.c.note).order_by(c.c.id)).all()
        return [parse_unverified_checkpoint(row.note) for row in rows]

    def checkpoint(self, signer: LogSigner) -> str:
        """Sign the current tree head, store it, write it to the checkpoint file; return the note.

        Refuses (TamperError) when the database no longer reaches the last
        stored or external checkpoint, so a restored or rewritten database is
        never re-signed.
        """
        with _db("writing a checkpoint"), self._backend.write() as conn:
            return sign_checkpoint(conn, self._t, signer, self.checkpoint_path)

    def inclusion_proof(self, seq: int, tree_size: int | None = None) -> InclusionProof:
        """RFC 9162 inclusion proof of entry ``seq`` in the tree of ``tree_size`` (default: all)."""
        with _db("building an inclusion proof"), self._backend.read() as conn:
            size = current_size(conn, self._t.entries)
            target = size if tree_size is None else tree_size
            if not 0 <= seq < target <= size:
                raise LedgerError(
                    f"need 0 <= seq < tree size <= {size}; got seq {seq}, size {target}"
                )
            leaves = stored_leaves(conn, self._t.entries, target)
            row = conn.execute(select(self._t.entries).where(self._t.entries.c.seq == seq)).one()
        entry = entry_from_row(row._mapping)
        if bytes.fromhex(entry.leaf_hash) != leaves[seq]:
            raise TamperError(f"seq {seq}: stored leaf hash is stale")
        return InclusionProof(
            leaf_index=seq,
            tree_size=target,
            leaf_hash=entry.leaf_hash,
            root_hash=root_from_leaves(leaves).hex(),
            hashes=tuple(h.hex() for h in inclusion_path(seq, leaves)),
        )

    def consistency_proof(self, old_size: int, new_size: int | None = None) -> ConsistencyProof:
        """RFC 9162 consistency proof from ``old_size`` to ``new_size`` (default: all)."""
        with _db("building a consistency proof"), self._backend.read() as conn:
            size = current_size(conn, self._t.entries)
            target = size if new_size is None else new_size
            if not 0 < old_size <= target <= size:
                raise LedgerError(
                    f"need 0 < old size <= new size <= {size}; got {old_size}, {target}"
                )
            leaves = stored_leaves(conn, self._t.entries, target)
        return ConsistencyProof(
            old_size=old_size,
            new_size=target,
            old_root=root_from_leaves(leaves, 0, old_size).hex(),
            new_root=root_from_leaves(leaves).hex(),
            hashes=tuple(h.hex() for h in consistency_path(old_size, leaves)),
        )

    def prove_entry(self, seq: int) -> EntryProof:
        """Entry ``seq`` with its inclusion proof in the latest stored checkpoint covering it."""
        covering = [cp for cp in self.checkpoints() if cp.tree_size > seq]
        if not covering:
            raise LedgerError(f"no checkpoint covers seq {seq} yet; run `jurat log checkpoint`")
        checkpoint = covering[-1]
        proof = self.inclusion_proof(seq, checkpoint.tree_size)
        if proof.root_hash != checkpoint.root_hash:
            raise TamperError(
                f"the ledger's root at size {checkpoint.tree_size} differs from its checkpoint"
            )
        return EntryProof(entry=self.entry(seq), proof=proof, checkpoint=checkpoint.note)

    # -- verification ----------------------------------------------------

    def verify(self, *, public_key: Ed25519PublicKey | str | None = None) -> LedgerReport:
        """Recompute everything from the stored bytes; see :func:`verify_ledger` for the steps.

        Raises :class:`TamperError` naming the first bad sequence number.
        With ``public_key`` (Ed25519 key or C2SP verifier key string) every
        checkpoint signature is checked too.
        """
        with _db("verifying the ledger"), self._backend.read() as conn:
            return verify_ledger(
                conn,
                self._t,
                backend=self.backend,
                checkpoint_path=self.checkpoint_path,
                public_key=public_key,
            )
