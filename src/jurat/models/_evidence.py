from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from jurat.canonical import digest_json
from jurat.models._base import Frozen

GateStatus = Literal["pass", "fail", "error", "skip"]


class EvidenceItem(Frozen):
    """One piece of evidence a judge may cite by its index in the bundle."""

    kind: str
    """What it is: ``artifact``, ``parse``, ``imports``, ``lint``, ``tests``, ``coverage``, ..."""
    tool: str
    """The tool that produced it (``jurat``, ``ruff``, ``pytest``, ``coverage``, ...)."""
    tool_version: str
    """The pinned version of that tool."""
    sha256: str
    """sha256 of the full evidence content (the excerpt may be truncated)."""
    excerpt: str = ""
    """A short human-readable excerpt, at most a few KiB."""
    gate: str | None = None
    """The gate id this evidence supports, if any."""


class EvidenceBundle(Frozen):
    """The evidence a judge sees. Index 0 is always the artifact itself."""

    items: tuple[EvidenceItem, ...] = ()
    """Evidence items in citation order."""

    @property
    def digest(self) -> str:
        """sha256 of the bundle's canonical JSON."""
        return digest_json(self)


class GateOutcome(Frozen):
    """The outcome of one deterministic check. A required gate that is not ``pass`` vetoes."""

    id: str
    """Gate id, e.g. ``python.parse``, ``tests.pass``, ``lint.ruff``."""
    outcome: GateStatus
    """``pass``; ``fail`` (the check ran and failed); ``error`` (it could not run); ``skip``."""
    required: bool = False
    """Whether the campaign lists this gate in ``hard_gates`` (a failure is a veto)."""
    tool: str = "jurat"
    """The tool that decided the outcome."""
    tool_version: str = ""
    """Its pinned version."""
    evidence_index: int | None = None
    """Index of the supporting item in the evidence bundle."""
    detail: str = ""
    """Finer outcome, e.g. ``timeout``, ``memory_limit``, ``3 findings``."""
    data: dict[str, Any] = Field(default_factory=dict)
    """Structured measurements (counts, percentages, locations)."""
