"""RFC 8785 canonical JSON and sha256 digests.

Every digest jurat records (artifacts, policies, judge configs, evidence
bundles, ledger entries) is the sha256 of bytes produced here, so two
machines always agree on it.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import rfc8785
from pydantic import BaseModel

from jurat.errors import ValidationError

__all__ = ["canonical_json", "digest_json", "loads_strict", "sha256_digest"]


def _plain(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    return obj


def canonical_json(obj: Any) -> bytes:
    """Serialise ``obj`` (JSON values or pydantic models) as RFC 8785 bytes.

    Refuses NaN, infinities and integers beyond 2**53, which RFC 8785 cannot
    represent exactly.
    """
    try:
        return bytes(rfc8785.dumps(_plain(obj)))
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise ValidationError(f"cannot canonicalise value: {exc}") from exc


def sha256_digest(data: bytes | str) -> str:
    """Lower-case hex sha256 of ``data`` (str is encoded as UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def digest_json(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj``."""
    return sha256_digest(canonical_json(obj))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} overflows a double")
    return value


def loads_strict(data: bytes | str) -> Any:
    """Parse one JSON document refusing duplicate keys, NaN/Infinity and overflowing numbers.

    Python's ``json`` keeps the last duplicate key and accepts NaN (FACTS.md), which would
    let two readers see two different documents in the same bytes. Raises ValueError.
    """
    return json.loads(
        data, object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant,
        parse_float=_finite,
    )
