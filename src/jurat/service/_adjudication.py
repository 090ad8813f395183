"""Signing an adjudicated review: shared by the service's endpoint and `jurat adjudicate`."""

from __future__ import annotations

from jurat.errors import FoldInputError, ValidationError
from jurat.ledger import ReviewSlot
from jurat.models import Adjudication, Decision
from jurat.receipts import (
    PrivateKey,
    adjudicated_statement,
    read_decision_statement,
    receipt_digest,
    sign_statement,
)
from jurat.service._errors import ServiceRefusal

__all__ = ["adjudicated_receipt"]


def adjudicated_receipt(signed: bytes, slot: ReviewSlot, adjudication: Adjudication,
                        key: PrivateKey, *, read: int | None = None) -> tuple[bytes, Decision]:
    """Review ``slot.version`` of the receipt ``signed``, settled by ``adjudication`` and
    signed with ``key``: its bytes and its decision. ServiceRefusal (409) when ``read`` (the
    version the reviewer read, if it said) is not ``signed``'s, when ``signed`` is not the
    artifact's current review, or when the fold does not admit the adjudication (not an
    escalation, or an accept over a required gate that did not pass)."""
    current = read_decision_statement(signed)
    version = current.predicate.review.version
    if read is not None and read != version:
        # The reviewer decided on other material than the job now holds: never applied to
        # a version it did not read (docs/service.md, "The reviewer's view").
        raise ServiceRefusal(409, f"review_version is not the job's current review, which is "
                             f"version {version}", field="review_version",
                             fix=f"read the job again (GET /v1/jobs/{{job_id}}/review) and, to "
                             f"settle it, send review_version {version}")
    if slot.supersedes is None or slot.supersedes != receipt_digest(signed):
        raise ServiceRefusal(409, "this review is superseded by a later receipt for the same "
                             "artifact; adjudicate the latest one",
                             fix="read the job again and adjudicate its latest review")
    try:
        statement = adjudicated_statement(current, version=slot.version,
                                          supersedes=slot.supersedes,
                                          adjudication=adjudication)
        receipt = sign_statement(statement, key)
    except FoldInputError as exc:
        raise ServiceRefusal(
            409, f"adjudication refused: {exc}", field="disposition",
            fix="adjudicate only an escalated decision, and reject when a required "
                "gate did not pass") from exc
    except ValidationError as exc:
        raise ServiceRefusal(409, f"adjudication refused: {exc}") from exc
    return receipt, statement.predicate.decision
