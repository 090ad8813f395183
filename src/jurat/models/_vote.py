from __future__ import annotations

from typing import Any

from pydantic import Field

from jurat.models._base import Frozen
from jurat.models._echoed import token_count


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
    """Model id the endpoint reported, as its response recorded it (judges/_protocol.py):
    itself when it is a token (models/_echoed.py), else ``sha256:<hex>:<chars>``. Read as
    written, not shaped again, so a receipt written before that rule keeps verifying."""
    system_fingerprint: str | None = None
    """System fingerprint the endpoint reported, if any, recorded as ``returned_model``."""
    usage: dict[str, int] = Field(default_factory=dict)
    """Token usage the endpoint reported (input_tokens, output_tokens): counts from 0 to
    ``MAX_TOKEN_COUNT`` (models/_echoed.py; any other makes the vote ``bad_usage``). Under
    a ``[budget]``, a response that reported no count that counts records the reservation
    it was charged instead (judges/_budget.py), so the ledger holds the spend."""
    dispatch_ms: int = Field(0, ge=0)
    """Milliseconds from job start to dispatch of this sample."""
    latency_ms: int = Field(0, ge=0)
    """Milliseconds the call took."""
    prompt_id: str = ""
    """Prompt template id@version used."""

    @property
    def input_tokens(self) -> int:
        """Input tokens the endpoint reported (0 when it reported none, or none that counts:
        a vote recorded before counts were checked may hold any integer)."""
        return token_count(self.usage.get("input_tokens", 0)) or 0

    @property
    def output_tokens(self) -> int:
        """Output tokens the endpoint reported (0 likewise)."""
        return token_count(self.usage.get("output_tokens", 0)) or 0
