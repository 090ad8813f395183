from __future__ import annotations

from typing import Any

from pydantic import Field

from jurat.models._base import Frozen


class Vote(Frozen):
    """One recorded judge sample. Errors are votes too: they stay in every denominator."""

    judge: str
    """Judge id from the panel."""
    criterion: str
    """Criterion id for binary criteria; ``rubric`` / ``pairwise`` / ``equivalence`` otherwise."""
    sample: int = Field(ge=0)
    """Sample index k of N for this (judge, criterion), fixed before dispatch."""
    attempts: int = Field(1, ge=1)
    """Transport attempts this sample took (retries are attempts, never new samples)."""
    order: str | None = None
    """Presentation order for pairwise samples: ``AB`` or ``BA``."""
    answer: dict[str, Any] | None = None
    """The validated answer exactly as the judge gave it (presented order), or None on error."""
    error: str | None = None
    """Named error kind (timeout, malformed_json, schema_violation, ...), or None."""
    returned_model: str | None = None
    """Model id the endpoint reported."""
    system_fingerprint: str | None = None
    """System fingerprint the endpoint reported, if any."""
    usage: dict[str, int] = Field(default_factory=dict)
    """Token usage the endpoint reported (input_tokens, output_tokens)."""
    dispatch_ms: int = Field(0, ge=0)
    """Milliseconds from job start to dispatch of this sample."""
    latency_ms: int = Field(0, ge=0)
    """Milliseconds the call took."""
    prompt_id: str = ""
    """Prompt template id@version used."""

    @property
    def input_tokens(self) -> int:
        """Input tokens the endpoint reported (0 when it reported none)."""
        return self.usage.get("input_tokens", 0)

    @property
    def output_tokens(self) -> int:
        """Output tokens the endpoint reported (0 when it reported none)."""
        return self.usage.get("output_tokens", 0)
