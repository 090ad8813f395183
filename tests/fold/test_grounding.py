"""Grounding fold: claim labels over N samples, coverage, contradiction rate, thresholds.

Seed 000, "Factual grounding and hallucination audit":
coverage = sum(w_i * supported_i) / sum(w_i), contradiction_rate likewise with contradicted;
weights nonnegative, denominator positive.
"""

from __future__ import annotations

import math
import random

import pydantic
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from jurat.errors import FoldInputError
from jurat.fold import (
    NOT_MEASURED,
    ClaimFinding,
    GroundingThresholds,
    fold_claim,
    grounding_outcome,
)

LABELS = ["supported", "contradicted", "unresolved", "not_applicable"]


def claim(
    id: str, weight: float, label: str, *, material: bool = False, evidence: tuple[str, ...] = ()
) -> ClaimFinding:
    return ClaimFinding.model_validate(
        {"id": id, "weight": weight, "label": label, "material": material, "evidence": evidence}
    )


# -- fold_claim ------------------------------------------------------------------------------


def test_plurality_label_wins() -> None:
    r = fold_claim(["supported", "supported", "contradicted"])
    assert r.label == "supported"
    assert (r.top, r.samples) == (2, 3)
    assert r.agreement == pytest.approx(2 / 3)
    assert r.tally == {"supported": 2, "contradicted": 1, "unresolved": 0, "not_applicable": 0}


def test_plurality_tie_is_unresolved() -> None:
    assert fold_claim(["supported", "contradicted"]).label == "unresolved"
    assert fold_claim(["supported", "not_applicable", "contradicted"]).label == "unresolved"


def test_errored_samples_count_as_unresolved_and_stay_in_n() -> None:
    r = fold_claim(["supported", None, None])
    assert r.label == "unresolved"
    assert r.tally["unresolved"] == 2 and r.samples == 3
    # errors tying the lead also unresolve it
    assert fold_claim(["supported", "supported", None, None]).label == "unresolved"
    assert fold_claim(["supported", "supported", None]).label == "supported"


def test_fold_claim_refuses_bad_input() -> None:
    with pytest.raises(FoldInputError, match="votes"):
        fold_claim([])
    with pytest.raises(FoldInputError, match=r"votes\[1\]"):
        fold_claim(["supported", "true"])


# -- coverage and contradiction rate --------------------------------------------------------


def test_seed_formulas_worked_example() -> None:
    # w = [3, 1, 1, 2, 4]; supported 3+1, contradicted 1, unresolved 2, n/a 4 (excluded):
    # coverage = 4/7, contradiction_rate = 1/7.
    claims = [
        claim("c1", 3, "supported"),
        claim("c2", 1, "supported"),
        claim("c3", 1, "contradicted"),
        claim("c4", 2, "unresolved"),
        claim("c5", 4, "not_applicable"),
    ]
    out = grounding_outcome(claims, GroundingThresholds())
    assert out.coverage == pytest.approx(4 / 7)
    assert out.contradiction_rate == pytest.approx(1 / 7)
    assert (out.gate, out.reasons) == ("pass", ())


def test_zero_weight_claims_change_nothing() -> None:
    base = [claim("a", 2, "supported"), claim("b", 2, "contradicted")]
    with_zero = [*base, claim("z", 0, "contradicted"), claim("y", 0, "unresolved")]
    t = GroundingThresholds()
    a, b = grounding_outcome(base, t), grounding_outcome(with_zero, t)
    assert (a.coverage, a.contradiction_rate) == (b.coverage, b.contradiction_rate) == (0.5, 0.5)


@pytest.mark.parametrize(
    "claims",
    [
        [],
        [claim("a", 0, "supported"), claim("b", 0, "contradicted")],
        [claim("a", 5, "not_applicable")],
        [claim("a", 0, "supported"), claim("b", 3, "not_applicable")],
    ],
    ids=["no-claims", "all-zero-weight", "all-not-applicable", "zero-plus-not-applicable"],
)
def test_nothing_applicable_is_not_measured_and_warns(claims: list[ClaimFinding]) -> None:
    # Issue 27: once an exception (the run exited 4 for good); now a defined outcome.
    out = grounding_outcome(claims, GroundingThresholds(min_coverage=0.5))
    assert (out.coverage, out.contradiction_rate, out.gate) == (None, None, "warn")
    assert out.reasons == (NOT_MEASURED,)


def test_all_unresolved_has_zero_coverage_and_zero_contradiction() -> None:
    claims = [claim("a", 1, "unresolved"), claim("b", 2, "unresolved")]
    out = grounding_outcome(claims, GroundingThresholds(min_coverage=0.5))
    assert (out.coverage, out.contradiction_rate) == (0.0, 0.0)
    assert out.gate == "warn"  # unresolved is not false: escalate, do not block
    assert out.reasons == ("coverage 0.0000 < min_coverage 0.5",)


@pytest.mark.parametrize("weight", [-1.0, math.inf, math.nan])
def test_bad_weights_are_refused_naming_the_claim(weight: float) -> None:
    claims = [claim("a", 1, "supported"), claim("b", weight, "supported")]
    with pytest.raises(FoldInputError, match=r"claims\[1\]\.weight"):
        grounding_outcome(claims, GroundingThresholds())


def test_bool_weight_is_not_a_number() -> None:
    with pytest.raises(pydantic.ValidationError):
        claim("a", True, "supported")


# -- thresholds -----------------------------------------------------------------------------


def test_contradiction_above_max_blocks_and_equal_passes() -> None:
    claims = [claim("a", 3, "supported"), claim("b", 1, "contradicted")]  # rate 0.25
    assert grounding_outcome(claims, GroundingThresholds(max_contradiction_rate=0.25)).gate == (
        "pass"
    )
    out = grounding_outcome(claims, GroundingThresholds(max_contradiction_rate=0.2))
    assert out.gate == "block"
    assert out.reasons == ("contradiction rate 0.2500 > max_contradiction_rate 0.2",)


def test_coverage_below_min_warns_and_equal_passes() -> None:
    claims = [claim("a", 3, "supported"), claim("b", 1, "unresolved")]  # coverage 0.75
    assert grounding_outcome(claims, GroundingThresholds(min_coverage=0.75)).gate == "pass"
    assert grounding_outcome(claims, GroundingThresholds(min_coverage=0.8)).gate == "warn"


def test_block_outranks_warn_and_every_reason_is_listed() -> None:
    claims = [
        claim("a", 1, "supported"),
        claim("b", 1, "contradicted"),
        claim("c", 2, "unresolved"),
    ]
    out = grounding_outcome(
        claims, GroundingThresholds(min_coverage=0.9, max_contradiction_rate=0.1)
    )
    assert out.gate == "block"
    assert len(out.reasons) == 2


def test_material_claims_need_support_and_evidence_when_required() -> None:
    digest = "ab" * 32
    claims = [
        claim("ok", 1, "supported", material=True, evidence=(digest,)),
        claim("no-evidence", 1, "supported", material=True),
        claim("unresolved", 1, "unresolved", material=True, evidence=(digest,)),
        claim("na", 1, "not_applicable", material=True, evidence=(digest,)),
        claim("minor", 1, "unresolved"),
    ]
    lax = grounding_outcome(claims, GroundingThresholds())
    assert (lax.gate, lax.unevidenced_material) == ("pass", ())
    strict = grounding_outcome(claims, GroundingThresholds(require_evidence_for_material=True))
    assert strict.gate == "warn"
    assert strict.unevidenced_material == ("no-evidence", "unresolved", "na")


def test_thresholds_are_shares() -> None:
    with pytest.raises(pydantic.ValidationError):
        GroundingThresholds(min_coverage=1.5)
    with pytest.raises(pydantic.ValidationError):
        GroundingThresholds(max_contradiction_rate=-0.1)


# -- properties -----------------------------------------------------------------------------

weights = st.one_of(st.just(0.0), st.floats(min_value=0, max_value=1e6, allow_nan=False))
findings = st.lists(st.tuples(weights, st.sampled_from(LABELS)), min_size=1, max_size=12)


def _claims(pairs: list[tuple[float, str]]) -> list[ClaimFinding]:
    return [claim(f"c{i}", w, label) for i, (w, label) in enumerate(pairs)]


def _applicable_weight(pairs: list[tuple[float, str]]) -> float:
    return sum(w for w, label in pairs if label != "not_applicable")


@given(findings)
def test_coverage_and_rate_are_shares_that_sum_to_at_most_one(
    pairs: list[tuple[float, str]],
) -> None:
    assume(_applicable_weight(pairs) > 0)
    out = grounding_outcome(_claims(pairs), GroundingThresholds())
    assert 0.0 <= out.coverage <= 1.0
    assert 0.0 <= out.contradiction_rate <= 1.0
    assert out.coverage + out.contradiction_rate <= 1.0 + 1e-12


@given(findings, st.data())
def test_resolving_an_unresolved_claim_as_supported_never_lowers_coverage(
    pairs: list[tuple[float, str]], data: st.DataObject
) -> None:
    unresolved = [i for i, (_, label) in enumerate(pairs) if label == "unresolved"]
    assume(unresolved and _applicable_weight(pairs) > 0)
    i = data.draw(st.sampled_from(unresolved))
    better = list(pairs)
    better[i] = (pairs[i][0], "supported")
    t = GroundingThresholds(min_coverage=0.5, max_contradiction_rate=0.3)
    before, after = grounding_outcome(_claims(pairs), t), grounding_outcome(_claims(better), t)
    assert after.coverage >= before.coverage
    assert after.contradiction_rate == before.contradiction_rate  # same denominator
    rank = {"pass": 0, "warn": 1, "block": 2}
    assert rank[after.gate] <= rank[before.gate]


@given(st.lists(st.sampled_from([*LABELS, None]), min_size=1, max_size=15), st.randoms())
def test_claim_fold_ignores_sample_order(votes: list[str | None], rnd: random.Random) -> None:
    shuffled = list(votes)
    rnd.shuffle(shuffled)
    assert fold_claim(votes) == fold_claim(shuffled)


@given(st.lists(st.sampled_from([*LABELS, None]), min_size=1, max_size=15))
def test_claim_label_is_a_strict_plurality_or_unresolved(votes: list[str | None]) -> None:
    r = fold_claim(votes)
    assert sum(r.tally.values()) == len(votes)
    if r.label != "unresolved":
        assert all(r.tally[r.label] > n for label, n in r.tally.items() if label != r.label)
