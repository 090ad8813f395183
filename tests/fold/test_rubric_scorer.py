"""The fold's per-call rubric arithmetic equals the plain, exact definitions it stands for.

``RubricScorer`` (fold/_rubric.py) reads scores once and computes each distinct score set's
eligibility once; ``q_exact`` sums on integers; ``basis_points`` and ``meets`` compare on
integers. Each is checked here against the Fraction-by-Fraction formula of seed 000 (score
aggregation) and seed 001 §2 on random input, errors included.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurat.errors import FoldInputError
from jurat.fold import basis_points, eligibility
from jurat.fold._criterion import meets
from jurat.fold._rubric import RubricScorer, exact, median, q_exact
from jurat.models import ARCV_SCORE_KEYS, Criterion

WEIGHTS = (0.45, 0.25, 0.2, 0.1)
score = st.one_of(
    st.integers(1, 5),
    st.integers(1, 5),
    st.sampled_from([1.5, 2.25, 4.0, 3.3333, 4.999999999999999, 5.0000001, 0, 6, True, "4"]),
    st.fractions(min_value=1, max_value=5, max_denominator=12),
)
score_sets = st.tuples(score, score, score, score)
minima = st.tuples(*[st.sampled_from([None, 2, 3, 4, 5])] * 4)
thresholds = st.sampled_from([0.0, 0.5, 0.75, 0.8625, 0.86, 1.0])


def _criteria(mins: tuple[int | None, ...]) -> tuple[Criterion, ...]:
    return tuple(
        Criterion(id=key, weight=w, minimum=m)
        for key, w, m in zip(ARCV_SCORE_KEYS, WEIGHTS, mins, strict=True)
    )


def _outcome(call: Any) -> Any:
    try:
        return ("ok", call())
    except FoldInputError as exc:
        return ("error", exc.field, str(exc))


def _plain_scores(values: tuple[Any, ...]) -> dict[str, Fraction]:
    """What the fold read before: each score through ``exact``, in criterion order."""
    return {key: exact(v, f"scores.{key}") for key, v in zip(ARCV_SCORE_KEYS, values, strict=True)}


@given(st.lists(score_sets, min_size=1, max_size=7), minima, thresholds)
def test_scorer_labels_and_medians_are_the_exact_ones(
    samples: list[tuple[Any, ...]], mins: tuple[int | None, ...], threshold: float
) -> None:
    criteria = _criteria(mins)
    weights = {c.id: c.weight for c in criteria}
    lows = {c.id: c.minimum for c in criteria}
    scorer = RubricScorer(criteria, threshold)

    def fast() -> Any:
        keys = []
        for values in samples:
            key = scorer.key(dict(zip(ARCV_SCORE_KEYS, values, strict=True)))
            keys.append((key, scorer.label(key), scorer.eligibility(key)))
        joint = scorer.median([k for k, _, _ in keys])
        return [(lab, e) for _, lab, e in keys], scorer.eligibility(joint), joint

    def plain() -> Any:
        per_sample = []
        exact_sets = []
        for values in samples:
            scores = _plain_scores(values)
            verdict = eligibility(scores, weights=weights, minima=lows, threshold=threshold)
            per_sample.append((verdict.label, verdict))
            exact_sets.append(scores)
        joint = {k: median([s[k] for s in exact_sets]) for k in ARCV_SCORE_KEYS}
        verdict = eligibility(joint, weights=weights, minima=lows, threshold=threshold)
        return per_sample, verdict, tuple(joint.values())

    got, want = _outcome(fast), _outcome(plain)
    assert got == want
    if got[0] == "ok":  # the keys are the exact scores, whole ones as ints
        assert all(type(v) is int for v in got[1][2] if Fraction(v).denominator == 1)


def test_a_missing_or_non_number_score_is_refused_in_criterion_order() -> None:
    scorer = RubricScorer(_criteria((None,) * 4), 0.75)
    with pytest.raises(FoldInputError) as missing:
        scorer.key({"correctness": 5, "reasoning": 4})
    assert missing.value.field == "votes.answer.scores.adherence"
    with pytest.raises(FoldInputError) as boolean:
        scorer.key({"correctness": True, "reasoning": "4", "adherence": 4, "presentation": 4})
    assert boolean.value.field == "scores.correctness"
    with pytest.raises(FoldInputError) as not_a_dict:
        scorer.key([5, 4, 4, 4])
    assert not_a_dict.value.field == "votes.answer.scores.correctness"


@given(st.tuples(score, score, score, score))
def test_q_exact_sums_the_same_number_as_adding_fractions(values: tuple[Any, ...]) -> None:
    weights = dict(zip(ARCV_SCORE_KEYS, WEIGHTS, strict=True))

    def plain() -> Fraction:
        scores = _plain_scores(values)
        total = Fraction(0)
        for key, w in weights.items():
            s = scores[key]
            if not 1 <= s <= 5:
                raise FoldInputError(f"scores.{key}", f"must be in 1-5, got {scores[key]!r}")
            total += Fraction(str(w)) * (s - 1) / 4
        return total

    assert _outcome(lambda: q_exact(_plain_scores(values), weights)) == _outcome(plain)


@given(st.fractions(max_denominator=10**9) | st.integers(-(10**6), 10**6))
def test_basis_points_rounds_half_up_on_the_integers(q: Fraction) -> None:
    q = Fraction(q)
    assert basis_points(q) == math.floor(q * 10000 + Fraction(1, 2))


def test_basis_points_of_a_float_is_the_float_formula() -> None:
    assert basis_points(0.86255) == math.floor(0.86255 * 10000 + Fraction(1, 2))  # type: ignore[arg-type]


@given(
    st.integers(0, 200),
    st.integers(1, 200),
    st.sampled_from([2 / 3, 0.8, 1.0, 0.5, 0.7, 1e-9]) | st.fractions(0, 1),
)
def test_meets_compares_the_exact_share(top: int, n: int, share: float | Fraction) -> None:
    exact_share = share if isinstance(share, Fraction) else Fraction(str(share))
    assert meets(top, n, share) == (Fraction(top, n) >= exact_share)
