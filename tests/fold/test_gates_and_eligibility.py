"""The hard-gate veto and rubric eligibility: named results, one rule each."""

from __future__ import annotations

from fractions import Fraction

from jurat.fold import eligibility, gate_veto, hard_gates_pass, required_gates
from jurat.models import DEFAULT_HARD_GATES, GATE_LINT_RUFF, GATE_PYTHON_PARSE, GATE_TESTS_PASS
from tests.support.builders import gate

# Outcomes as the checks record them; only the lint error marks itself required.
PARSED = gate(GATE_PYTHON_PARSE, required=False)
FAILED = gate(GATE_TESTS_PASS, "fail", required=False, detail="2 failed")
LINT_ERROR = gate(GATE_LINT_RUFF, "error")
HARD = DEFAULT_HARD_GATES


def test_required_gates_are_the_listed_and_the_recorded_ones() -> None:
    assert required_gates(HARD, [PARSED, LINT_ERROR]) == (
        GATE_LINT_RUFF,
        GATE_PYTHON_PARSE,
        GATE_TESTS_PASS,
    )


def test_a_failed_gate_rejects_and_a_missing_one_escalates() -> None:
    failed = gate_veto(HARD, [PARSED, FAILED])
    assert (failed.failed, failed.hard_fail, failed.passed) == ((GATE_TESTS_PASS,), True, False)
    assert failed.reasons == ("required gate tests.pass fail (2 failed): veto",)
    assert failed.apply("accept", ["3/3 agree"]) == ("reject", [*failed.reasons, "3/3 agree"])
    missing = gate_veto(HARD, [PARSED])
    assert missing.reasons == ("required gate tests.pass has no outcome",)
    assert missing.apply("accept", []) == ("escalate", list(missing.reasons))
    errored = gate_veto((), [PARSED, LINT_ERROR])
    assert errored.apply("reject", ["Q low"])[0] == "escalate"


def test_nothing_required_vetoes_nothing() -> None:
    veto = gate_veto((), [FAILED])  # tests.pass failed but nobody required it
    assert veto.passed and veto.apply("accept", ["ok"]) == ("accept", ["ok"])
    assert hard_gates_pass([FAILED], ()) is True
    assert hard_gates_pass([PARSED], HARD) is False


def test_eligibility_is_exact_and_minima_cannot_be_bought() -> None:
    weights = {"correctness": 0.5, "reasoning": 0.5}
    minima = {"correctness": 3, "reasoning": None}
    # Q = (0.5 * 3 + 0.5 * 2) / 4 = 5/8 exactly: at a threshold of 0.625 it is eligible.
    at = eligibility(
        {"correctness": 4, "reasoning": 3}, weights=weights, minima=minima, threshold=0.625
    )
    assert (at.q, at.eligible, at.label) == (Fraction(5, 8), True, "accept")
    low = eligibility(
        {"correctness": 2, "reasoning": 5}, weights=weights, minima=minima, threshold=0.5
    )
    assert low.q >= Fraction(1, 2) and low.below_minimum == ("correctness",)
    assert low.label == "reject"
