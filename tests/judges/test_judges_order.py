"""Order-reversal consistency and position bias: the one definition the report and selftest use."""

from __future__ import annotations

import pytest

from jurat.judges import OrderedAnswer, order_reversal, presentation_order
from jurat.models import Vote
from tests.support import builders


def vote(judge: str, k: int, order: str, preference: str | None) -> Vote:
    """A pairwise sample as presented in ``order``; no preference is a timed-out sample."""
    answer = None if preference is None else builders.arcv(preference=preference)
    return builders.vote(judge, k, answer, "pairwise", order=order, error="timeout")


def answers(*votes: Vote) -> list[OrderedAnswer]:
    return [OrderedAnswer.of(v) for v in votes]


def test_a_consistent_judge_keeps_its_canonical_preference() -> None:
    # Canonical A is presented first under AB and second under BA.
    report = order_reversal([answers(vote("A", 0, "AB", "A"), vote("A", 1, "BA", "B"))])
    assert (report.items, report.consistent, report.pairs, report.agreeing_pairs) == (1, 1, 1, 1)
    assert report.consistency == 1.0
    assert report.first_position_rate == pytest.approx(1 / 2)


def test_a_position_biased_judge_flips_with_the_order() -> None:
    biased = answers(vote("B", 0, "AB", "A"), vote("B", 1, "BA", "A"), vote("B", 2, "BA", None))
    report = order_reversal([biased])
    # The errored sample has no preference: it is in no pair and no A/B answer.
    assert (report.items, report.consistent, report.pairs, report.agreeing_pairs) == (1, 0, 1, 0)
    assert report.consistency == 0.0
    assert (report.first_position, report.ab_answers) == (2, 2)


def test_pairs_stay_within_an_artifact_and_ties_have_no_majority() -> None:
    first = answers(vote("A", 0, "AB", "A"), vote("A", 1, "AB", "tie"), vote("A", 2, "BA", "B"))
    second = answers(vote("A", 0, "BA", "A"))  # only one order: no pair, still an A/B answer
    report = order_reversal([first, second])
    assert (report.items, report.pairs, report.agreeing_pairs) == (1, 2, 1)
    assert report.consistent == 0  # AB has no plurality (A and tie once each)
    assert (report.first_position, report.ab_answers) == (2, 3)


def test_abstentions_and_nothing_to_compare() -> None:
    abstained = OrderedAnswer.of(vote("A", 0, "AB", "abstain"))
    assert abstained.canonical is None and abstained.presented == "abstain"
    report = order_reversal([answers(vote("A", 0, "AB", "A"))])
    assert report.items == 0 and report.consistency is None
    assert order_reversal([]).first_position_rate is None


def test_presentation_order_is_a_seeded_draw() -> None:
    draws = {presentation_order(7, "ab" * 32, k) for k in range(40)}
    assert draws == {"AB", "BA"}
    assert presentation_order(7, "ab" * 32, 3) == presentation_order(7, "ab" * 32, 3)
