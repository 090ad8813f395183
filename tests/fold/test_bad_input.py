"""Bad input raises a JuratError subclass naming the field; nothing returns a decision."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import jurat
from jurat.errors import FoldInputError, JuratError

W = {"correctness": 0.5, "reasoning": 0.5}
S = {"correctness": 4, "reasoning": 4}


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: jurat.rubric_score(S, {"correctness": 0.5, "reasoning": 0.4}), "weights"),
        (lambda: jurat.rubric_score(S, {"correctness": 1.2, "reasoning": -0.2}),
         "weights.reasoning"),
        (lambda: jurat.rubric_score({"correctness": 6, "reasoning": 4}, W), "scores.correctness"),
        (lambda: jurat.rubric_score({"correctness": 0, "reasoning": 4}, W), "scores.correctness"),
        (lambda: jurat.rubric_score({"correctness": 4}, W), "scores.reasoning"),
        (lambda: jurat.rubric_score({"correctness": float("nan"), "reasoning": 4}, W),
         "scores.correctness"),
        (lambda: jurat.fold_criterion(["yes", "maybe"]), "votes[1]"),
        (lambda: jurat.fold_criterion([]), "votes"),
        (lambda: jurat.pairwise_consensus([]), "labels"),
        (lambda: jurat.pairwise_consensus(["A", "C"]), "labels[1]"),
        (lambda: jurat.equivalence_verdict([], min_agreement=1), "decisions"),
        (lambda: jurat.equivalence_verdict(["SAME"], min_agreement=1), "decisions[0]"),
        (lambda: jurat.equivalence_verdict(["EQUIVALENT"], min_agreement=2), "min_agreement"),
        (lambda: jurat.equivalence_verdict(["EQUIVALENT"], min_agreement=0), "min_agreement"),
        (lambda: jurat.stability_gate(jurat.fold_criterion(["no", "no"]), quorum=0), "quorum"),
        (lambda: jurat.stability_gate(jurat.fold_criterion(["no", "no"]), quorum=1.5), "quorum"),
        (lambda: jurat.false_block_probability(5, 0.0, 0.1), "quorum"),
        (lambda: jurat.false_block_probability(5, 0.8, 1.5), "error_rate"),
        (lambda: jurat.false_block_probability(0, 0.8, 0.1), "samples"),
        (lambda: jurat.rollout([]), "gates"),
        (lambda: jurat.rollout(["pass", "ok"]), "gates[1]"),
        (lambda: jurat.claims_coverage([(1.0, "maybe")]), "claims[0].label"),
        (lambda: jurat.claims_coverage([(-1.0, "supported")]), "claims[0].weight"),
        (lambda: jurat.claims_coverage([(1.0, "not_applicable")]), "claims"),
        (lambda: jurat.claims_coverage([(0.0, "supported")]), "claims"),
    ],
)
def test_bad_input_names_the_field(call: Callable[[], Any], field: str) -> None:
    with pytest.raises(FoldInputError) as info:
        call()
    assert isinstance(info.value, JuratError)
    assert info.value.field == field
    assert field in str(info.value)
