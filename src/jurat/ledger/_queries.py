"""Small reads shared by the Ledger, appends and checkpoint signing (inside a transaction)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Row, Table, select

from jurat.ledger._entry import entry_from_row
from jurat.ledger._models import Entry, ReviewSlot

__all__ = ["current_size", "now", "receipt_row", "review_slot", "slot_after"]


def now() -> str:
    """UTC time as stored in ``recorded_at``: RFC 3339 with microseconds and ``Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def current_size(conn: Connection, entries: Table) -> int:
    """Number of entries: the tail's seq + 1."""
    tail = conn.execute(select(entries.c.seq).order_by(entries.c.seq.desc()).limit(1)).scalar()
    return 0 if tail is None else int(tail) + 1


def receipt_row(
    conn: Connection,
    entries: Table,
    *,
    job_id: str | None = None,
    subject: tuple[str, str] | None = None,
) -> Row[Any] | None:
    """The newest receipt row for a job or for a (campaign, artifact)."""
    query = (
        select(entries).where(entries.c.kind == "receipt").order_by(entries.c.seq.desc()).limit(1)
    )
    if job_id is not None:
        query = query.where(entries.c.job_id == job_id)
    if subject is not None:
        query = query.where(
            entries.c.campaign_id == subject[0], entries.c.artifact_id == subject[1]
        )
    return conn.execute(query).first()


def review_slot(conn: Connection, entries: Table, campaign_id: str, artifact_id: str) -> ReviewSlot:
    """The review version the next receipt for (campaign, artifact) must carry."""
    row = receipt_row(conn, entries, subject=(campaign_id, artifact_id))
    return ReviewSlot(version=1) if row is None else slot_after(entry_from_row(row._mapping))


def slot_after(receipt: Entry) -> ReviewSlot:
    """The review slot that follows a stored receipt entry."""
    return ReviewSlot(
        version=int(receipt.payload["review_version"]) + 1,
        supersedes=str(receipt.payload["receipt_sha256"]),
        previous_seq=receipt.seq,
    )
