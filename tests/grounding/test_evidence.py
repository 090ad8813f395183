"""Evidence references: the pinned digest and span are re-derived from the bytes."""

from __future__ import annotations

import hashlib

import pydantic
import pytest

from jurat.errors import IntakeError
from jurat.grounding import (
    Capture,
    Reference,
    Retrieved,
    Span,
    excerpt,
    from_capture,
    to_evidence_item,
)

TEXT = b"Paris is the capital of France. The Seine flows through it."
DIGEST = hashlib.sha256(TEXT).hexdigest()


def ref(**changes: object) -> Reference:
    fields: dict[str, object] = {
        "id": "r1", "source": "https://ref.example/paris", "version": "2026-01-01",
        "sha256": DIGEST, "span": {"start": 0, "end": 31},
    }
    return Reference.model_validate({**fields, **changes})


def test_excerpt_is_the_span_of_the_pinned_bytes() -> None:
    assert excerpt(ref(), TEXT) == "Paris is the capital of France."
    assert excerpt(ref(span=None), TEXT) == TEXT.decode()


def test_changed_bytes_are_refused_before_decoding() -> None:
    with pytest.raises(IntakeError, match="evidence changed"):
        excerpt(ref(), TEXT.replace(b"Paris", b"Lyon "))


def test_span_past_the_end_is_refused() -> None:
    with pytest.raises(IntakeError, match="past the end"):
        excerpt(ref(span={"start": 10, "end": 500}), TEXT)


def test_non_utf8_evidence_is_refused() -> None:
    body = b"\xff\xfe bad"
    with pytest.raises(IntakeError, match="UTF-8"):
        excerpt(ref(sha256=hashlib.sha256(body).hexdigest(), span=None), body)


def test_bad_spans_and_digests_are_refused_at_construction() -> None:
    with pytest.raises(pydantic.ValidationError):
        Span(start=5, end=5)
    with pytest.raises(pydantic.ValidationError):
        Span(start=-1, end=3)
    with pytest.raises(pydantic.ValidationError):
        ref(sha256="ABC")


def test_reference_from_a_capture_keeps_source_time_and_digest() -> None:
    capture = Capture(
        source_url="https://ref.example/old", final_url="https://ref.example/paris",
        redirects=("https://ref.example/paris",), address="93.184.215.14",
        retrieved_at="2026-12-01T04:00:00Z", status=200,
        content_type="text/plain; charset=utf-8", byte_length=len(TEXT), sha256=DIGEST,
    )
    r = from_capture(Retrieved(capture, TEXT), id="paris", span=Span(start=32, end=59))
    assert (r.source, r.version, r.sha256, r.media_type) == (
        "https://ref.example/paris", "2026-12-01T04:00:00Z", DIGEST, "text/plain"
    )
    item = to_evidence_item(r, TEXT, tool_version="1")
    assert (item.kind, item.sha256) == ("reference", DIGEST)
    assert item.excerpt == "The Seine flows through it."
