from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Base of every jurat record: immutable, unknown keys refused, field docstrings kept."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
