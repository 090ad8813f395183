from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict

from jurat.canonical import digest_json


class Frozen(BaseModel):
    """Base of every jurat record: immutable, unknown keys refused, field docstrings kept."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    @functools.cached_property
    def _sha256(self) -> str:
        """sha256 of the record's canonical JSON (``record_digest``, models/_digest.py).

        Computed on first use and kept with the record: no field can be reassigned, so the
        digest of one object never changes. Not a field: never validated, dumped, compared
        or hashed (pydantic reads only the fields).
        """
        return digest_json(self)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """pydantic's copy; one with ``update`` is another record, so it digests afresh."""
        copied = super().model_copy(update=update, deep=deep)
        if update:
            copied.__dict__.pop("_sha256", None)
        return copied
