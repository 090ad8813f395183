"""Rubric aggregation: Q, per-criterion minima and the median operator (seed 000)."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

from jurat.errors import FoldInputError
from jurat.models import Disposition, Frozen

_TOLERANCE = Fraction(1, 10**9)


def exact(value: float | int | Fraction, field: str) -> Fraction:
    """A decimal as the user wrote it (0.45 is 9/20), refusing NaN, infinities and bools."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FoldInputError(field, f"must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise FoldInputError(field, f"must be finite, got {value!r}")
    return Fraction(str(value))


def check_weights(weights: Mapping[str, float]) -> dict[str, Fraction]:
    """Weights are non-negative and sum to 1 (cached: verification folds many votes)."""
    return dict(_checked(tuple(weights.items())))


@functools.lru_cache(maxsize=256)
def _checked(items: tuple[tuple[str, float], ...]) -> tuple[tuple[str, Fraction], ...]:
    return tuple(_check_weights(dict(items)).items())


def _check_weights(weights: Mapping[str, float]) -> dict[str, Fraction]:
    if not weights:
        raise FoldInputError("weights", "no criteria; a rubric needs at least one weight")
    out = {}
    for key, w in weights.items():
        value = exact(w, f"weights.{key}")
        if value < 0:
            raise FoldInputError(f"weights.{key}", f"must be >= 0, got {w!r}")
        out[key] = value
    total = sum(out.values(), Fraction(0))
    if abs(total - 1) > _TOLERANCE:
        raise FoldInputError("weights", f"must sum to 1, they sum to {float(total):g}")
    return out


def q_exact(scores: Mapping[str, float | Fraction], weights: Mapping[str, float]) -> Fraction:
    """Q = sum_j w_j (s_j - 1) / 4 as an exact fraction (seed 000, score aggregation)."""
    exact_weights = check_weights(weights)
    missing = sorted(set(exact_weights) - set(scores))
    if missing:
        raise FoldInputError(f"scores.{missing[0]}", "missing score for a weighted criterion")
    extra = sorted(set(scores) - set(exact_weights))
    if extra:
        raise FoldInputError(f"scores.{extra[0]}", "score for a criterion with no weight")
    total = Fraction(0)
    for key, w in exact_weights.items():
        s = exact(scores[key], f"scores.{key}")
        if not 1 <= s <= 5:
            raise FoldInputError(f"scores.{key}", f"must be in 1-5, got {scores[key]!r}")
        total += w * (s - 1) / 4
    return total


def rubric_score(scores: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """Q for scores in 1-5 and weights summing to 1: a normalised aggregate, not a probability."""
    return float(q_exact(scores, weights))


def basis_points(q: Fraction) -> int:
    """Q in basis points, rounded half up, so receipts compare integers."""
    return math.floor(q * 10000 + Fraction(1, 2))


def median(values: Sequence[Fraction]) -> Fraction:
    """The median, exact (the mean of the middle two for an even count)."""
    if not values:
        raise FoldInputError("scores", "median of no values")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def below_minima(scores: Mapping[str, Fraction], minima: Mapping[str, int | None]) -> list[str]:
    """Criteria whose score is under their minimum: style cannot compensate for correctness."""
    return [k for k, m in minima.items() if m is not None and scores.get(k, Fraction(0)) < m]


class Eligibility(Frozen):
    """Whether a set of rubric scores is acceptable, and why not."""

    q: Fraction
    """Q of the scores, exact."""
    below_minimum: tuple[str, ...]
    """Criteria scored under their minimum."""
    eligible: bool
    """Q reaches the threshold and no criterion is under its minimum."""

    @property
    def label(self) -> Disposition:
        """``accept`` when eligible, else ``reject``: the label a judge's (or a sample's) scores
        carry in the rubric fold."""
        return "accept" if self.eligible else "reject"


def eligibility(
    scores: Mapping[str, float | Fraction],
    *,
    weights: Mapping[str, float],
    minima: Mapping[str, int | None],
    threshold: float,
) -> Eligibility:
    """Seed 000: acceptable when Q >= threshold and every criterion meets its minimum.

    Decided on exact fractions (a float Q could land on the other side of a threshold). The
    fold calls it for each judge's median scores, for the panel's and for each sample; the
    report calls it for each recorded sample, with the rubric read from the receipt.
    """
    exact_scores = {k: exact(v, f"scores.{k}") for k, v in scores.items()}
    q = q_exact(exact_scores, weights)
    low = below_minima(exact_scores, minima)
    return Eligibility(
        q=q, below_minimum=tuple(low), eligible=q >= exact(threshold, "threshold") and not low
    )
