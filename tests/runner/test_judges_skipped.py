"""When judges are not asked, and what the operator reads about gates (no sandbox, no CLI).

``runner._job.judges_skipped`` is the one rule (a settled pair, a subject without output, a
veto); ``jurat.explain`` turns gate data into evidence lines, root cause first.
"""

from __future__ import annotations

from typing import Any

import pytest

from jurat.explain import gate_lines, not_passed, root_causes
from jurat.models import (
    GATE_EQUIVALENCE_DETERMINISTIC,
    GATE_LINT_RUFF,
    GATE_PYTHON_IMPORTS,
    GATE_PYTHON_PARSE,
    GATE_SUBJECT_EXECUTION,
    GATE_TESTS_PASS,
    GateOutcome,
    GateStatus,
    Policy,
    Untrusted,
    policy_digest,
)
from jurat.runner._job import judges_skipped
from tests.support.builders import SEED_RUBRIC, gate, policy

HARD = (GATE_PYTHON_PARSE, GATE_PYTHON_IMPORTS, GATE_TESTS_PASS)


def _rubric(**fields: Any) -> Policy:
    return policy("rubric", rubric=SEED_RUBRIC.model_copy(update={"hard_gates": HARD}),
                  **fields)


def _gates(parse: GateStatus = "pass", imports: GateStatus = "pass",
           tests: GateStatus = "pass") -> list[GateOutcome]:
    return [gate(GATE_PYTHON_PARSE, parse), gate(GATE_PYTHON_IMPORTS, imports),
            gate(GATE_LINT_RUFF, "fail", required=False), gate(GATE_TESTS_PASS, tests)]


def test_a_failed_required_gate_skips_the_judges_and_names_only_the_root_cause() -> None:
    assert judges_skipped(_rubric(), _gates()) is None
    assert judges_skipped(_rubric(), _gates(tests="fail")) == (
        "required gate tests.pass did not pass (a veto no judge can change)")
    # A candidate that does not parse: imports and tests were skipped because of it.
    reason = judges_skipped(_rubric(), _gates(parse="fail", imports="skip", tests="skip"))
    assert reason == "required gate python.parse did not pass (a veto no judge can change)"
    reason = judges_skipped(_rubric(), _gates(imports="fail", tests="fail"))
    assert reason is not None and reason.startswith(
        "required gates python.imports, tests.pass did not pass")


@pytest.mark.parametrize("outcome", ["error", "skip"])
def test_a_required_gate_that_could_not_run_still_asks_the_judges(outcome: GateStatus) -> None:
    # Not a failure: the fold escalates for missing evidence, and the person who takes the
    # escalation up reads the judges' votes.
    assert judges_skipped(_rubric(), _gates(tests=outcome)) is None


def test_a_failed_gate_that_is_not_required_asks_the_judges() -> None:
    # lint.ruff fails in every case above and never skipped anything.
    assert judges_skipped(_rubric(), _gates()) is None


def test_judge_after_veto_asks_the_judges_anyway() -> None:
    assert judges_skipped(_rubric(judge_after_veto=True), _gates(tests="fail")) is None


def test_the_equivalence_and_execution_skips_are_the_same_rule() -> None:
    eq = policy("equivalence")
    settled = [gate(GATE_EQUIVALENCE_DETERMINISTIC, "fail", required=False)]
    assert judges_skipped(eq, settled) == (
        "settled deterministically by equivalence.deterministic")
    assert judges_skipped(eq, [gate(GATE_EQUIVALENCE_DETERMINISTIC, "skip")]) is None
    failed = [gate(GATE_SUBJECT_EXECUTION, "error")]
    assert judges_skipped(policy("criteria"), failed) == (
        "subject.execution error: the subject produced no output")


def test_the_new_key_leaves_the_policy_digest_alone_unless_set() -> None:
    off, on = _rubric(), _rubric(judge_after_veto=True)
    assert "judge_after_veto" not in off.model_dump(mode="json")
    assert on.model_dump(mode="json")["judge_after_veto"] is True
    assert policy_digest(off) != policy_digest(on)


def test_root_cause_first_then_what_could_not_run_then_what_was_skipped() -> None:
    gates = [gate(GATE_PYTHON_PARSE, "fail"), gate(GATE_PYTHON_IMPORTS, "skip"),
             gate(GATE_TESTS_PASS, "skip")]
    assert not_passed((*HARD, "coverage"), gates) == [
        (GATE_PYTHON_PARSE, "fail"), ("coverage", "missing"),
        (GATE_PYTHON_IMPORTS, "skip"), (GATE_TESTS_PASS, "skip")]
    assert root_causes(HARD, gates) == [GATE_PYTHON_PARSE]


def test_each_gate_states_its_evidence() -> None:
    parse = gate(GATE_PYTHON_PARSE, "fail", detail="SyntaxError at line 2, column 9",
                 data={"line": 2, "column": 9, "message_sha256": "0" * 64})
    assert gate_lines(parse)[0].text == "python.parse failed: line 2, column 9"
    imports = gate(GATE_PYTHON_IMPORTS, "fail", detail="1 denied, 1 warnings", data={
        "findings": [{"entry": "subprocess", "severity": "deny", "line": 1},
                     {"entry": "open", "severity": "warn", "line": 4}]})
    assert gate_lines(imports)[0].text == "python.imports failed: denied subprocess (line 1)"
    lint = gate(GATE_LINT_RUFF, "fail", detail="3 findings",
                data={"findings": 3, "by_code": {"E501": 1, "F401": 2}})
    assert gate_lines(lint)[0].text == "lint.ruff failed: 3 findings: F401 (2), E501 (1)"


def test_a_failing_test_names_its_id_and_quotes_its_assertion_for_the_operator_only() -> None:
    tests = gate(GATE_TESTS_PASS, "fail", detail="failed", data={
        "outcome": "failed", "collected": 2, "passed": 1,
        "not_passed": [1]})
    detail = (Untrusted("--- test #1 failed test_solution.py::test_add\n"
                        "def test_add() -> None:\n>       assert add(2, 3) == 5\n"
                        "E       assert -1 == 5\n\ntest_solution.py:4: AssertionError",
                        "reference"),)
    lines = gate_lines(tests, detail)
    # The gate names the test by index; only the operator's lines name and quote it.
    assert lines[0].text == "tests.pass failed: 1 of 2 tests did not pass: test #1"
    assert not lines[0].reference
    assert [(line.text, line.reference) for line in lines[1:]] == [
        ("test_solution.py::test_add", True), ("assert add(2, 3) == 5", True),
        ("E assert -1 == 5", True)]
    # Without the operator-only detail (a reused receipt), the ids alone.
    assert len(gate_lines(tests)) == 1
