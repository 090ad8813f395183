"""The bytes of a journal entry, and turning stored rows back into checked entries.

Entry bytes (what ``entry_hash`` and the Merkle leaf cover) are the RFC 8785
canonical JSON of::

    {"format": "jurat.ledger.entry/v1", "seq", "kind", "job_id", "campaign_id",
     "artifact_id", "payload_sha256", "recorded_at", "prev_hash"}

The payload enters through its sha256, not inline: a leaf stays small however
large a receipt is, and an inclusion proof for a receipt can be checked from
the receipt, its payload digest and these few fields.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import pydantic

from jurat.canonical import canonical_json_value, loads_strict
from jurat.errors import TamperError
from jurat.ledger._merkle import leaf_hash
from jurat.ledger._models import ENTRY_KINDS, Entry
from jurat.models._invalid import invalid

__all__ = [
    "ENTRY_FORMAT",
    "broken_link",
    "check_row",
    "entry_bytes",
    "entry_from_row",
    "hashed_bytes",
    "load_payload",
]

ENTRY_FORMAT = "jurat.ledger.entry/v1"
# The entry's keys in RFC 8785 order (code point order of ASCII keys).
_TEMPLATE = (
    '{"artifact_id":%s,"campaign_id":%s,"format":"' + ENTRY_FORMAT + '","job_id":%s,'
    '"kind":%s,"payload_sha256":%s,"prev_hash":%s,"recorded_at":%s,"seq":%d}'
)
_STRING = json.JSONEncoder(ensure_ascii=False).encode
_MAX_SEQ = 2**53 - 1


def entry_bytes(
    *,
    seq: int,
    kind: str,
    job_id: str,
    campaign_id: str | None,
    artifact_id: str | None,
    payload_sha256: str,
    recorded_at: str,
    prev_hash: str,
) -> bytes:
    """Canonical bytes of an entry's hashed fields (see module docstring)."""
    strings = (artifact_id, campaign_id, job_id, kind, payload_sha256, prev_hash, recorded_at)
    if type(seq) is int and 0 <= seq <= _MAX_SEQ and all(map(_plain_text, strings)):
        # Every entry is hashed once when written and once per verification: the fixed
        # key order filled in directly is a fifth of the cost. ASCII strings and nulls
        # are written by the C encoder exactly as RFC 8785 writes them (escapes
        # included); anything else takes the general path.
        return (_TEMPLATE % (*map(_STRING, strings), seq)).encode("ascii")
    # Plain str keys and JSON scalars: no model walk needed before serialising.
    return canonical_json_value(
        {
            "format": ENTRY_FORMAT,
            "seq": seq,
            "kind": kind,
            "job_id": job_id,
            "campaign_id": campaign_id,
            "artifact_id": artifact_id,
            "payload_sha256": payload_sha256,
            "recorded_at": recorded_at,
            "prev_hash": prev_hash,
        }
    )


def _plain_text(value: object) -> bool:
    return value is None or (type(value) is str and value.isascii())


def load_payload(data: bytes, *, seq: int) -> dict[str, Any]:
    """Parse stored payload bytes strictly (no duplicate keys, no NaN) into a JSON object.

    The bytes were canonical when written and ``payload_sha256`` pins them, so
    re-canonicalising on every read would only cost time.
    """
    try:
        value = loads_strict(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise TamperError(f"seq {seq}: stored payload is not valid JSON") from exc
    if not isinstance(value, dict):
        raise TamperError(f"seq {seq}: stored payload is not a JSON object")
    return value


def check_row(row: Mapping[Any, Any]) -> bytes:
    """Refuse a row whose hashes do not match its content; return its payload bytes.

    Checks the kind, ``payload_sha256``, ``entry_hash`` and ``leaf_hash``; the payload
    is not parsed (a checkpoint needs the hashes alone). The chain link (``prev_hash``
    equals the previous row's hash) needs the neighbour and is the caller's.
    """
    seq = int(row["seq"])
    payload_data = bytes(row["payload"])
    if row["kind"] not in ENTRY_KINDS:
        raise TamperError(f"seq {seq}: unknown entry kind {row['kind']!r}")
    if hashlib.sha256(payload_data).hexdigest() != row["payload_sha256"]:
        raise TamperError(f"seq {seq}: payload does not match its sha256")
    data = entry_bytes(
        seq=seq,
        kind=row["kind"],
        job_id=row["job_id"],
        campaign_id=row["campaign_id"],
        artifact_id=row["artifact_id"],
        payload_sha256=row["payload_sha256"],
        recorded_at=row["recorded_at"],
        prev_hash=row["prev_hash"],
    )
    if hashlib.sha256(data).hexdigest() != row["entry_hash"]:
        raise TamperError(f"seq {seq}: entry hash does not match the entry's content")
    if leaf_hash(data).hex() != row["leaf_hash"]:
        raise TamperError(f"seq {seq}: Merkle leaf hash does not match the entry's content")
    return payload_data


def entry_from_row(row: Mapping[Any, Any]) -> Entry:
    """Rebuild an entry from its row, refusing any row whose hashes do not match its content.

    The chain link (``prev_hash`` equals the previous row's hash) needs the
    neighbour and is checked by ``Ledger.verify()``.
    """
    payload_data = check_row(row)
    seq = int(row["seq"])
    fields = {
        "seq": seq,
        "kind": row["kind"],
        "job_id": row["job_id"],
        "campaign_id": row["campaign_id"],
        "artifact_id": row["artifact_id"],
        "payload": load_payload(payload_data, seq=seq),
        "payload_sha256": row["payload_sha256"],
        "recorded_at": row["recorded_at"],
        "prev_hash": row["prev_hash"],
        "entry_hash": row["entry_hash"],
        "leaf_hash": row["leaf_hash"],
    }
    try:
        return Entry.model_validate(fields)
    except pydantic.ValidationError as exc:
        raise invalid(exc, Entry, fields, TamperError,
                      source=f"seq {seq}: stored entry is malformed", fix=False) from exc


def hashed_bytes(entry: Entry) -> bytes:
    """The entry bytes of a (possibly untrusted) Entry record."""
    return entry_bytes(
        seq=entry.seq,
        kind=entry.kind,
        job_id=entry.job_id,
        campaign_id=entry.campaign_id,
        artifact_id=entry.artifact_id,
        payload_sha256=entry.payload_sha256,
        recorded_at=entry.recorded_at,
        prev_hash=entry.prev_hash,
    )


def broken_link(seq: int) -> str:
    """Message for entry ``seq`` whose prev_hash is not its predecessor's hash."""
    # Each row matched its own hashes, so one of the two was rewritten with
    # fresh hashes; the earlier one is the first that may be bad.
    return (
        f"seq {seq - 1}: its hash is not the prev_hash of seq {seq} "
        f"(seq {seq - 1} or {seq} was rewritten)"
    )
