"""The seeds' worked numbers, reproduced exactly."""

from __future__ import annotations

import math

import pytest

import jurat
from jurat.fold import basis_points, q_exact, quorum_count
from jurat.fold._criterion import meets
from jurat.models import RISK_TIERS
from tests.support.builders import SEED_WEIGHTS, scores


def test_q_for_seed_000_example_is_exactly_0_8625() -> None:
    # Weights [0.45, 0.25, 0.20, 0.10] and scores [5, 4, 4, 4] give Q = 0.8625.
    assert list(SEED_WEIGHTS.values()) == [0.45, 0.25, 0.20, 0.10]
    example = scores((5, 4, 4, 4))
    assert jurat.rubric_score(example, SEED_WEIGHTS) == 0.8625
    assert basis_points(q_exact(example, SEED_WEIGHTS)) == 8625


def test_aab_agreement_two_thirds_passes_standard_tier() -> None:
    c = jurat.pairwise_consensus(["A", "A", "B"])
    assert c.n == 3 and c.agreement == pytest.approx(2 / 3)
    assert c.majority == "A"
    # Standard tier: 3 votes, minimum agreement 2/3.
    standard = RISK_TIERS["standard"]
    assert (standard.votes, standard.min_agreement) == (3, 2 / 3)
    assert meets(c.top, c.n, standard.min_agreement)


def test_abtie_has_no_majority_and_maximal_entropy() -> None:
    c = jurat.pairwise_consensus(["A", "B", "tie"])
    assert c.majority is None
    assert c.entropy == pytest.approx(1.0)
    assert c.agreement == pytest.approx(1 / 3)


def test_clean_pass_probability_0_85_to_the_10th_is_about_0_20() -> None:
    p = jurat.clean_pass_probability(0.85, 10)
    assert round(p, 2) == 0.20
    assert p == pytest.approx(0.85**10)


def test_false_block_probability_n5_q08_p015_is_about_0_0022() -> None:
    p = jurat.false_block_probability(5, 0.8, 0.15)
    assert round(p, 4) == 0.0022
    exact = 5 * 0.15**4 * 0.85 + 0.15**5
    assert p == pytest.approx(exact, rel=1e-12)
    assert p < 0.005  # the seed's false-BLOCK budget


def test_quorum_count_is_exact() -> None:
    assert quorum_count(5, 0.8) == 4
    assert quorum_count(10, 0.7) == 7  # 0.7 * 10 in floats is 7.000000000000001
    assert quorum_count(11, 0.8) == 9


@pytest.mark.parametrize(
    ("votes", "blocker", "verdict", "agreement", "gate"),
    [
        # seed 001 §2 table
        (["no"] * 5, True, "no", 1.0, "block"),
        (["no", "no", "no", "no", "yes"], True, "no", 0.8, "block"),
        (["no", "no", "no", "yes", "yes"], True, "no", 0.6, "warn"),
        (["yes"] * 5, True, "yes", 1.0, "pass"),
        (["no", "no", "yes", "yes", "unsure"], True, "unsure", 0.4, "warn"),
        (["no"] * 5, False, "no", 1.0, "warn"),
        (["yes", "yes", "yes", "no", "no"], False, "yes", 0.6, "pass"),
        # errored samples stay in the denominator: 2 "no" + 3 errors is never 2/2
        (["no", "no", None, None, None], True, "unsure", 0.6, "warn"),
        (["no", "no", "no", None, None], True, "no", 0.6, "warn"),
        (["no", "no", "no", "no", None], True, "no", 0.8, "block"),
        # N = 1: the legacy rule stands
        (["no"], True, "no", 1.0, "block"),
        (["yes"], True, "yes", 1.0, "pass"),
        ([None], True, "unsure", 1.0, "warn"),
        (["no"], False, "no", 1.0, "warn"),
    ],
)
def test_stability_gate_table(
    votes: list[str | None], blocker: bool, verdict: str, agreement: float, gate: str
) -> None:
    result = jurat.fold_criterion(votes, blocker=blocker)
    assert result.verdict == verdict
    assert math.isclose(result.agreement, agreement)
    assert result.samples == len(votes)
    assert jurat.stability_gate(result, quorum=0.8) == gate


def test_five_samples_three_errors_never_reports_two_of_two() -> None:
    r = jurat.fold_criterion(["no", "no", None, None, None], blocker=True)
    assert r.samples == 5
    assert r.tally == {"yes": 0, "no": 2, "unsure": 3}
    assert r.agreement != 1.0


def test_rollout_precedence() -> None:
    assert jurat.rollout(["pass", "pass"]) == "SHIP"
    assert jurat.rollout(["pass", "warn"]) == "WARN"
    assert jurat.rollout(["warn", "block", "pass"]) == "BLOCK"


def test_claims_coverage_excludes_not_applicable() -> None:
    cov, contra = jurat.claims_coverage(
        [(2.0, "supported"), (1.0, "contradicted"), (1.0, "unresolved"), (5.0, "not_applicable")]
    )
    assert cov == 0.5 and contra == 0.25


def test_equivalence_decision_table_and_multivote() -> None:
    v = jurat.equivalence_verdict
    assert v(["EQUIVALENT"], min_agreement=1) is True
    assert v(["DIFFERENT"], min_agreement=1) is False
    assert v(["ABSTAIN"], min_agreement=1) is None
    assert v(["PARSE_ERROR"], min_agreement=1) is None
    assert v(["ABSTAIN"], min_agreement=1, abstain_as_neither=False) is False
    assert v(["PARSE_ERROR"], min_agreement=1, abstain_as_neither=False) is None
    # seed 002 §8: votes=3, minAgreement=3 with a 2-1 split must be null
    assert v(["EQUIVALENT", "EQUIVALENT", "DIFFERENT"], min_agreement=3) is None
    assert v(["EQUIVALENT", "EQUIVALENT", "DIFFERENT"], min_agreement=2) is True
    assert v(["EQUIVALENT"] * 3, min_agreement=3) is True


def test_wilson_interval_contains_the_point_estimate() -> None:
    lo, hi = jurat.wilson_interval(4, 5)
    assert lo < 0.8 < hi
    assert 0 <= lo and hi <= 1
    assert jurat.wilson_interval(0, 10)[0] == 0.0
