"""Pairwise presentation order: the seeded draw and the order-reversal consistency report.

Seed 000: "Randomize candidate presentation order and map results back to canonical A/B
identifiers ... Monitor order reversal consistency."
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from jurat.fold import canonical_preference
from jurat.models import Vote

__all__ = ["order_reversal_consistency", "presentation_order"]

_LABELS = ("A", "B", "tie", "abstain", "error")


def presentation_order(seed: int, artifact_sha256: str, sample: int) -> str:
    """The presentation order of one pairwise sample, ``AB`` or ``BA``.

    ``random.Random`` seeded with a string hashes it with SHA-512, so the draw is the same on
    every machine and Python process for the same (judge seed, artifact, k).
    """
    rng = random.Random(f"jurat.order/v1:{seed}:{artifact_sha256}:{sample}")
    return "AB" if rng.random() < 0.5 else "BA"


def _summary(votes: Sequence[Vote]) -> dict[str, Any]:
    by_order: dict[str, Counter[str]] = {"AB": Counter(), "BA": Counter()}
    first = second = 0
    for vote in votes:
        if vote.order not in by_order:
            continue
        label = canonical_preference(vote) or "error"
        by_order[vote.order][label] += 1
        presented = vote.answer.get("preference") if vote.answer else None
        first += presented == "A"
        second += presented == "B"
    ab, ba = by_order["AB"], by_order["BA"]
    pairs = sum(ab.values()) * sum(ba.values())
    consistent = sum(ab[label] * ba[label] for label in ("A", "B", "tie"))
    return {
        "samples": {"AB": sum(ab.values()), "BA": sum(ba.values())},
        "canonical": {o: {label: c[label] for label in _LABELS} for o, c in by_order.items()},
        "pairs": pairs,
        "consistent_pairs": consistent,
        "consistency": consistent / pairs if pairs else None,
        "first_position_rate": first / (first + second) if first + second else None,
    }


def order_reversal_consistency(votes: Sequence[Vote]) -> dict[str, Any]:
    """How often a judge's canonical answer survives reversing the presentation order.

    Over every pair of one AB-presented and one BA-presented sample (of one artifact, as
    ``run_samples`` returns them): ``consistency`` is the share of pairs whose canonical
    labels agree on A, B or tie (abstentions and errors never agree), ``None`` when one of
    the orders has no samples. ``first_position_rate`` is the share of A/B answers that
    picked the candidate shown first (0.5 without position bias). Reported for the panel
    and per judge; a judge's samples are not independent witnesses (seed 000).
    """
    pairwise = [v for v in votes if v.criterion == "pairwise"]
    report = _summary(pairwise)
    judges = sorted({v.judge for v in pairwise})
    report["judges"] = {j: _summary([v for v in pairwise if v.judge == j]) for j in judges}
    return report
