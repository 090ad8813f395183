"""Pairwise consensus over {A, B, tie} (seed 000, multi-annotator consensus)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from jurat.errors import FoldInputError
from jurat.models import Frozen

_SUBSTANTIVE = ("A", "B", "tie")
_KNOWN = (*_SUBSTANTIVE, "abstain")


class Consensus(Frozen):
    """Agreement among substantive labels; abstentions and errors are missing coverage."""

    n: int
    """Valid substantive votes (A, B or tie)."""
    missing: int
    """Abstentions and errored votes, excluded from n."""
    counts: dict[str, int]
    """Count per label in {A, B, tie}."""
    agreement: float | None
    """max_l p_l; None when n = 0."""
    top: int
    """The largest count."""
    entropy: float | None
    """-sum p_l ln p_l / ln 3; None when n = 0."""
    majority: str | None
    """The label with a strict majority of n, or None."""


def pairwise_consensus(labels: Sequence[str | None]) -> Consensus:
    """Fold labels A, B, tie, abstain or None (error) into agreement, entropy and majority."""
    if len(labels) == 0:
        raise FoldInputError("labels", "empty vote list")
    counts = dict.fromkeys(_SUBSTANTIVE, 0)
    missing = 0
    for i, label in enumerate(labels):
        if label is None or label == "abstain":
            missing += 1
        elif label in counts:
            counts[label] += 1
        else:
            raise FoldInputError(
                f"labels[{i}]", f"unknown label {label!r}; use one of {list(_KNOWN)} or None"
            )
    n = sum(counts.values())
    if n == 0:
        return Consensus(
            n=0, missing=missing, counts=counts, agreement=None, top=0, entropy=None, majority=None
        )
    top = max(counts.values())
    entropy = -sum((c / n) * math.log(c / n) for c in counts.values() if c) / math.log(3)
    majority = next((label for label, c in counts.items() if 2 * c > n), None)
    return Consensus(
        n=n,
        missing=missing,
        counts=counts,
        agreement=top / n,
        top=top,
        entropy=abs(entropy),
        majority=majority,
    )
