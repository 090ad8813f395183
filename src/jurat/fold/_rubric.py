"""Rubric aggregation: Q, per-criterion minima and the median operator (seed 000)."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import NamedTuple

from jurat.errors import FoldInputError
from jurat.models import Criterion, Disposition, Frozen

_TOLERANCE = Fraction(1, 10**9)


def exact(value: float | int | Fraction, field: str) -> Fraction:
    """A decimal as the user wrote it (0.45 is 9/20), refusing NaN, infinities and bools."""
    if isinstance(value, Fraction):
        return value
    if type(value) is int:
        return Fraction(value)  # the same number as Fraction(str(value)), without parsing text
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FoldInputError(field, f"must be a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise FoldInputError(field, f"must be finite, got {value!r}")
    return _decimal(value)


@functools.lru_cache(maxsize=4096, typed=True)
def _decimal(value: float | int) -> Fraction:
    # Cached: verification reads the same few weights, thresholds and scores many times,
    # and parsing the decimal text is most of what a Fraction costs to make.
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
    # The sum is kept as one integer numerator over one integer denominator and reduced
    # once at the end: the same exact number as adding Fractions term by term, without a
    # gcd per operation (verification computes Q for every sample, judge and panel).
    num, den = 0, 1
    for key, w in exact_weights.items():
        s = exact(scores[key], f"scores.{key}")
        # 1 <= s <= 5 on the integers (a Fraction's denominator is positive).
        if not s.denominator <= s.numerator <= 5 * s.denominator:
            raise FoldInputError(f"scores.{key}", f"must be in 1-5, got {scores[key]!r}")
        term_num = w.numerator * (s.numerator - s.denominator)
        term_den = w.denominator * s.denominator
        num, den = num * term_den + term_num * den, den * term_den
    return Fraction(num, 4 * den)


def rubric_score(scores: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """Q for scores in 1-5 and weights summing to 1: a normalised aggregate, not a probability."""
    return float(q_exact(scores, weights))


def basis_points(q: Fraction) -> int:
    """Q in basis points, rounded half up, so receipts compare integers."""
    if not isinstance(q, Fraction):
        return math.floor(q * 10000 + Fraction(1, 2))
    # floor(q * 10000 + 1/2) on the integers: (20000 n + d) // 2d, as d > 0.
    return (20000 * q.numerator + q.denominator) // (2 * q.denominator)


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


#: A set of scores in criterion order, each number in one normal form so that equal scores
#: are equal keys: an ``int`` when the exact value is whole, else its ``Fraction``.
ScoreKey = tuple[int | Fraction, ...]


_INT = {int}


def _normal(value: Fraction) -> int | Fraction:
    return value.numerator if value.denominator == 1 else value


def _median_of(values: Sequence[int | Fraction]) -> int | Fraction:
    """``median`` on normal-form numbers; whole scores (the usual case) sort as ints."""
    if not values:
        raise FoldInputError("scores", "median of no values")
    if set(map(type, values)) == _INT:
        ordered = sorted(values)
        mid = len(ordered) // 2
        if len(ordered) % 2:
            return ordered[mid]
        return _normal(Fraction(ordered[mid - 1] + ordered[mid], 2))
    return _normal(median([Fraction(v) for v in values]))


class RubricScorer:
    """One rubric's view of scores for one fold call: keys, medians and eligibility.

    ``eligibility`` of a distinct set of scores is computed once per scorer: a receipt's
    samples repeat the same few score sets, and verification folds every sample, every
    judge and the panel. ``decide`` makes a new scorer per call, so the fold stays a pure
    function of its inputs; the numbers are ``eligibility``'s and ``median``'s, exact.
    """

    def __init__(self, criteria: Sequence[Criterion], threshold: float) -> None:
        self.ids = tuple(c.id for c in criteria)
        self._read = operator.itemgetter(*self.ids) if len(self.ids) > 1 else None
        self._weights = {c.id: c.weight for c in criteria}
        self._minima = {c.id: c.minimum for c in criteria}
        self._threshold = threshold
        self._seen: dict[ScoreKey, Eligibility] = {}
        self._labels: dict[ScoreKey, Disposition] = {}
        self._on_integers: _IntegerRule | None | bool = len(set(self.ids)) == len(self.ids)

    def key(self, scores: object) -> ScoreKey:
        """A valid vote's ``answer.scores`` as a key; a missing or non-number score raises."""
        if self._read is not None and isinstance(scores, dict):
            try:
                values = self._read(scores)
            except KeyError:
                pass  # raised below, for the first criterion missing
            else:
                if set(map(type, values)) == _INT:  # whole scores, the usual case
                    return tuple(values)
        out: list[int | Fraction] = []
        for cid in self.ids:
            if not isinstance(scores, dict) or cid not in scores:
                raise FoldInputError(f"votes.answer.scores.{cid}", "missing from a valid vote")
            value = scores[cid]
            out.append(value if type(value) is int else _normal(exact(value, f"scores.{cid}")))
        return tuple(out)

    def median(self, keys: Sequence[ScoreKey]) -> ScoreKey:
        """The per-criterion median of several score sets (seed 000's median operator)."""
        if not keys:
            return tuple(_median_of(()) for _ in self.ids)  # raises, as median() does
        return tuple(map(_median_of, zip(*keys, strict=True)))

    def label(self, key: ScoreKey) -> Disposition:
        """``eligibility(key).label``: the label a sample's or a judge's scores carry."""
        known = self._labels.get(key)
        if known is None:
            known = self._labels[key] = self.eligibility(key).label
        return known

    def eligibility(self, key: ScoreKey) -> Eligibility:
        """``eligibility`` of these scores under this rubric."""
        known = self._seen.get(key)
        if known is None:
            known = self._whole(key)
            if known is None:
                known = eligibility(
                    {cid: Fraction(v) for cid, v in zip(self.ids, key, strict=True)},
                    weights=self._weights,
                    minima=self._minima,
                    threshold=self._threshold,
                )
            self._seen[key] = known
        return known

    def _whole(self, key: ScoreKey) -> Eligibility | None:
        """``eligibility`` of whole scores in 1-5 on the integers, or None to ask it.

        With the weights over one common denominator D (w_j = a_j / D), 4 D Q is the
        integer sum of a_j (s_j - 1): Q and its comparison with the threshold are exact
        without a Fraction per term. Anything else (a fractional or out-of-range score, a
        weight or threshold ``eligibility`` refuses) is left to ``eligibility``, so its
        errors are raised there, in its order.
        """
        rule = self._integer_rule()
        if rule is None or not all(type(v) is int and 1 <= v <= 5 for v in key):
            return None
        scaled = sum(a * (v - 1) for a, v in zip(rule.weights, key, strict=True))
        q = Fraction(scaled, 4 * rule.denominator)
        low = tuple(
            cid for cid, m, v in zip(self.ids, rule.minima, key, strict=True)
            if m is not None and v < m
        )
        meets_threshold = scaled * rule.threshold.denominator >= (
            rule.threshold.numerator * 4 * rule.denominator
        )
        return Eligibility(q=q, below_minimum=low, eligible=meets_threshold and not low)

    def _integer_rule(self) -> _IntegerRule | None:
        if isinstance(self._on_integers, bool):
            self._on_integers = _integer_rule(
                self.ids,
                tuple(self._weights.items()),
                tuple(self._minima.items()),
                self._threshold,
            ) if self._on_integers else None
        return self._on_integers


class _IntegerRule(NamedTuple):
    weights: tuple[int, ...]
    """Each exact weight times ``denominator``."""
    denominator: int
    """The weights' least common denominator."""
    minima: tuple[int | None, ...]
    threshold: Fraction


@functools.lru_cache(maxsize=256)
def _integer_rule(
    ids: tuple[str, ...],
    weight_items: tuple[tuple[str, float], ...],
    minima_items: tuple[tuple[str, int | None], ...],
    threshold: float,
) -> _IntegerRule | None:
    # Cached: a pure function of the rubric, and every fold of its receipts asks for it.
    minima = dict(minima_items)
    try:
        exact_weights = check_weights(dict(weight_items))
        exact_threshold = exact(threshold, "threshold")
    except FoldInputError:
        return None  # eligibility raises it, in its own order
    if any(m is not None and type(m) is not int for m in minima.values()):
        return None
    denominator = math.lcm(*(exact_weights[cid].denominator for cid in ids))
    return _IntegerRule(
        weights=tuple(
            exact_weights[cid].numerator * (denominator // exact_weights[cid].denominator)
            for cid in ids
        ),
        denominator=denominator,
        minima=tuple(minima[cid] for cid in ids),
        threshold=exact_threshold,
    )
