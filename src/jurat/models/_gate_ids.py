"""Gate ids: the one place they are spelled.

A gate id is part of the record (``GateOutcome.id``, a campaign's ``hard_gates``, a receipt's
``gates_failed``), so a misspelling is not a typo but a gate that never passes: the checks
that write these ids, the fold and the judge validator that read them, the report and the
runner all import them from here.
"""

from __future__ import annotations

from typing import Final

# Seed 000, "Code correctness pipeline": one gate per step.
GATE_PYTHON_PARSE: Final = "python.parse"
GATE_PYTHON_IMPORTS: Final = "python.imports"
GATE_LINT_RUFF: Final = "lint.ruff"
GATE_TESTS_PASS: Final = "tests.pass"
GATE_COVERAGE: Final = "coverage"
GATE_PROPERTIES: Final = "properties"
GATE_COMPLEXITY: Final = "complexity"
GATE_MUTATION: Final = "mutation"

#: Seed 002 §3: the answer pair was settled (pass: equal, fail: different) without a judge.
GATE_EQUIVALENCE_DETERMINISTIC: Final = "equivalence.deterministic"
#: Seed 001 §3: the subject under test ran once, pinned; a failure is recorded, never judged.
GATE_SUBJECT_EXECUTION: Final = "subject.execution"

#: The Python pipeline's gates in the order the steps run (and the report lists them).
PYTHON_GATES: Final = (
    GATE_PYTHON_PARSE,
    GATE_PYTHON_IMPORTS,
    GATE_LINT_RUFF,
    GATE_TESTS_PASS,
    GATE_COVERAGE,
    GATE_PROPERTIES,
    GATE_COMPLEXITY,
    GATE_MUTATION,
)
#: What `run_checks` requires when its caller names no hard gates: parse, and pass the tests.
DEFAULT_HARD_GATES: Final = (GATE_PYTHON_PARSE, GATE_TESTS_PASS)
#: Every gate id jurat records: the ids a campaign's ``hard_gates`` may name.
ALL_GATE_IDS: Final = (*PYTHON_GATES, GATE_EQUIVALENCE_DETERMINISTIC, GATE_SUBJECT_EXECUTION)
#: Gates measured where the candidate can steer the figures (coverage in its own process;
#: mutants it can tell apart): recorded for the operator, never a hard gate (issue 36).
FORGEABLE_GATES: Final = (GATE_COVERAGE, GATE_MUTATION)
