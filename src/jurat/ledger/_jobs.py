"""Idempotent job identities and the receipt payload layout."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import Any, NamedTuple

from jurat.canonical import digest_json
from jurat.errors import LedgerError, ValidationError

__all__ = ["decode_receipt", "job_id", "receipt_payload"]

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def job_id(
    artifact_sha256: str,
    task_version: str,
    policy_sha256: str,
    evaluator_version: str,
    attempt: int,
) -> str:
    """The idempotency key of an evaluation job (seed 000: bind every job to these five).

    sha256 of the RFC 8785 canonical JSON object
    ``{"artifact_sha256", "attempt", "evaluator_version", "policy_sha256", "task_version"}``.
    The same inputs always give the same id, so a resubmitted job finds its
    earlier receipt; a changed artifact or policy gives a new id.
    """
    for name, value in (("artifact_sha256", artifact_sha256), ("policy_sha256", policy_sha256)):
        if not _HEX64.match(value):
            raise ValidationError(f"{name} must be 64 lower-case hex digits, got {value!r}")
    for name, value in (("task_version", task_version), ("evaluator_version", evaluator_version)):
        if not value:
            raise ValidationError(f"{name} must not be empty")
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 0:
        raise ValidationError(f"attempt must be an integer >= 0, got {attempt!r}")
    return digest_json(
        {
            "artifact_sha256": artifact_sha256,
            "task_version": task_version,
            "policy_sha256": policy_sha256,
            "evaluator_version": evaluator_version,
            "attempt": attempt,
        }
    )


def receipt_payload(
    receipt: bytes,
    *,
    review_version: int,
    supersedes: str | None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The payload of a ``receipt`` entry.

    The receipt is kept byte-exact (base64) because ``supersedes`` and outside
    verifiers hash the exact bytes, which need not be canonical JSON.
    """
    payload: dict[str, Any] = dict(extra or {})
    payload.update(
        receipt=base64.b64encode(receipt).decode("ascii"),
        receipt_sha256=hashlib.sha256(receipt).hexdigest(),
        review_version=review_version,
        supersedes=supersedes,
    )
    return payload


def decode_receipt(payload: dict[str, Any], *, seq: int | None = None) -> bytes:
    """The receipt bytes from a ``receipt`` payload, checked against its digest."""
    where = f"seq {seq}: " if seq is not None else ""
    try:
        data = base64.b64decode(payload["receipt"], validate=True)
        digest = payload["receipt_sha256"]
    except (KeyError, TypeError, binascii.Error) as exc:
        raise LedgerError(f"{where}receipt payload is malformed") from exc
    if hashlib.sha256(data).hexdigest() != digest:
        raise LedgerError(f"{where}receipt bytes do not match receipt_sha256")
    return data


class ReceiptFields(NamedTuple):
    """What the ledger reads from a receipt payload to keep review versions monotonic."""

    review_version: int
    supersedes: str | None
    receipt_sha256: str


def check_receipt_payload(payload: dict[str, Any]) -> ReceiptFields:
    """Validate a receipt payload and return the fields the ledger enforces."""
    decode_receipt(payload)
    version = payload.get("review_version")
    supersedes = payload.get("supersedes")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise LedgerError("receipt payload: review_version must be an integer >= 1")
    if supersedes is not None and not (isinstance(supersedes, str) and _HEX64.match(supersedes)):
        raise LedgerError("receipt payload: supersedes must be a sha256 hex digest or null")
    return ReceiptFields(version, supersedes, str(payload["receipt_sha256"]))
