"""Evidence references: source, version, span and digest of the approved representation.

Seed 000, "Factual grounding and hallucination audit": evidence carries a source
identifier, a retrieval time or version, the relevant span and a digest of the approved
evidence representation, and every judge of a decision inspects the same captured version.
A :class:`Reference` is that record, whether the bytes come from a campaign's fixed
reference set or from a :class:`~jurat.grounding.Capture`; :func:`excerpt` re-derives the
span from the bytes and refuses bytes whose digest is not the recorded one, so a judge is
never shown, and verify never accepts, evidence other than what was pinned.
"""

from __future__ import annotations

import hashlib
import re

from pydantic import Field, field_validator, model_validator

from jurat.errors import IntakeError
from jurat.grounding._fetch import Retrieved
from jurat.models import EvidenceItem, Frozen

__all__ = ["EVIDENCE_KIND", "Reference", "Span", "excerpt", "from_capture", "to_evidence_item"]

#: ``EvidenceItem.kind`` of grounding evidence in a judge's evidence bundle.
EVIDENCE_KIND = "reference"

_SHA256 = re.compile(r"[0-9a-f]{64}")


class Span(Frozen):
    """A passage of the evidence text: character offsets, ``start`` inclusive, ``end`` not."""

    start: int = Field(ge=0)
    """First character of the passage."""
    end: int = Field(gt=0)
    """One past its last character."""

    @model_validator(mode="after")
    def _ordered(self) -> Span:
        if self.end <= self.start:
            raise ValueError(f"span end {self.end} must be after start {self.start}")
        return self


class Reference(Frozen):
    """One piece of grounding evidence, pinned by digest."""

    id: str
    """The reference's id within the campaign (claims cite it)."""
    source: str
    """Where it comes from: a URL, a DOI, a document id."""
    version: str
    """Retrieval time (RFC 3339, UTC) or the source's version label."""
    sha256: str
    """Hex SHA-256 of the approved representation: the exact bytes judges see."""
    media_type: str = "text/plain"
    """Media type of those bytes (UTF-8 text)."""
    span: Span | None = None
    """The passage that matters; None means the whole text."""

    @field_validator("sha256")
    @classmethod
    def _hex(cls, value: str) -> str:
        if not _SHA256.fullmatch(value):
            raise ValueError("must be 64 lower-case hex digits")
        return value


def from_capture(retrieved: Retrieved, *, id: str, span: Span | None = None) -> Reference:
    """The reference of a live capture: its final URL, retrieval time and body digest."""
    capture = retrieved.capture
    return Reference(
        id=id,
        source=capture.final_url,
        version=capture.retrieved_at,
        sha256=capture.sha256,
        # The fetcher records the checked media type; a Capture built elsewhere may not.
        media_type=capture.content_type.split(";", 1)[0].strip().lower(),
        span=span,
    )


def excerpt(reference: Reference, body: bytes) -> str:
    """The referenced passage of ``body``; IntakeError if ``body`` is not the pinned bytes.

    The digest is checked before anything is decoded, the text must be UTF-8, and the span
    must lie inside it.
    """
    digest = hashlib.sha256(body).hexdigest()
    if digest != reference.sha256:
        raise IntakeError(
            f"evidence {reference.id!r} ({reference.source}): sha256 {digest} is not the "
            f"pinned {reference.sha256}; the evidence changed since it was captured"
        )
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IntakeError(f"evidence {reference.id!r}: not UTF-8 text ({exc})") from exc
    span = reference.span
    if span is None:
        return text
    if span.end > len(text):
        raise IntakeError(
            f"evidence {reference.id!r}: span [{span.start}, {span.end}) is past the end of "
            f"its {len(text)} characters"
        )
    return text[span.start : span.end]


def to_evidence_item(reference: Reference, body: bytes, *, tool_version: str) -> EvidenceItem:
    """The reference as an item of a judge's evidence bundle (``judges/_prompts.py`` shows
    items between per-call delimiters); the excerpt is the checked span."""
    return EvidenceItem(
        kind=EVIDENCE_KIND,
        tool="jurat.grounding",
        tool_version=tool_version,
        sha256=reference.sha256,
        excerpt=excerpt(reference, body),
    )
