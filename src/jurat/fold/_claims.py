"""Claims coverage and contradiction rate (seed 000, factual grounding)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from jurat.errors import FoldInputError

_LABELS = ("supported", "contradicted", "unresolved", "not_applicable")


def claims_coverage(claims: Iterable[tuple[float, str]]) -> tuple[float, float]:
    """(coverage, contradiction_rate); not_applicable claims leave the denominator."""
    supported = contradicted = total = 0.0
    for i, (weight, label) in enumerate(claims):
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise FoldInputError(f"claims[{i}].weight", f"must be a number, got {weight!r}")
        if not math.isfinite(weight) or weight < 0:
            raise FoldInputError(f"claims[{i}].weight", f"must be finite and >= 0, got {weight}")
        if label not in _LABELS:
            raise FoldInputError(f"claims[{i}].label", f"unknown label {label!r}; use {_LABELS}")
        if label == "not_applicable":
            continue
        total += weight
        supported += weight if label == "supported" else 0.0
        contradicted += weight if label == "contradicted" else 0.0
    if total <= 0:
        raise FoldInputError("claims", "the weight of applicable claims must be positive")
    return supported / total, contradicted / total
