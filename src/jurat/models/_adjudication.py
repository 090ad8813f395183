"""A reviewer's adjudication of an escalated decision (seed 000: "escalation … with
adjudication for what the panel cannot settle"; the mission-critical tier's "explicit
adjudication before certification").

It is a fold input: ``decide(…, adjudication=…)`` applies it to the decision the recorded
gates and votes give, and a verifier re-derives the adjudicated decision from the
receipt's ``review.adjudication`` (docs/receipt-format.md §6.10, §8.9). It settles only
what the panel left open: an escalated rubric or pairwise decision, never over a required
gate that did not pass.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from jurat.models._base import Frozen

__all__ = ["Adjudication", "AdjudicationDisposition", "MAX_RATIONALE_CHARS"]

AdjudicationDisposition = Literal["accept", "reject"]
"""What a reviewer may decide: an escalation is settled either way, never escalated again."""

#: The longest rationale a receipt records.
MAX_RATIONALE_CHARS = 4000


class Adjudication(Frozen):
    """``review.adjudication``: who decided an escalated decision, when, what and why."""

    reviewer: str = Field(min_length=1, max_length=200)
    """Who adjudicated: the reviewer token's subject."""
    at: str = Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$")
    """When, UTC, RFC 3339 with ``Z`` (recorded by the service, not chosen by the reviewer)."""
    disposition: AdjudicationDisposition
    """The reviewer's decision: ``accept`` or ``reject``."""
    rationale: str = Field(min_length=1, max_length=MAX_RATIONALE_CHARS)
    """Why, in the reviewer's words; published in the receipt, so it quotes no reference
    material (the service refuses a rationale that quotes the campaign's tests)."""
    rationale_public: bool = Field(False, exclude_if=lambda public: not public)
    """The reviewer marked the rationale for the public board's page (issue 29); default
    private: the page then shows who and when, not why. Absent when false, so receipts
    adjudicated before the flag existed keep their normal form. The rationale is in the
    signed receipt either way."""
