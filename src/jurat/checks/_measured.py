"""The gates measured while the hidden tests run, and who sees what they measured.

Seed 000, "Code correctness pipeline", steps 4 and 5: the campaign's tests in the
sandbox, coverage, property tests, mutation sensitivity.

Threat model (issue 36, docs/checks.md "Who sees a measurement"). While the hidden tests
run, the candidate's process holds their inputs: every test calls it with them, and the
expected values reach it as arguments too. Whatever that process can steer is then a
channel to whoever reads the result: which tests fail and how many, how they fail
(``failed``, ``timeout``, ``memory_limit``), the coverage figures (measured in its own
process, so it reports what it likes), which mutants survive (it can tell it was
mutated), its memory, CPU and wall time, its output size, even whether a measurement
could be made. A range check does not close such a channel: every in-range value is a
symbol the candidate chose. So what these gates show to anyone but the operator is only
what the candidate cannot choose beyond accepting or failing:

* ``tests.pass``: ``pass`` or ``fail`` (``error`` only when the host could not create
  the sandbox, in the host's own words), with a constant detail;
* ``properties``: static (do the tests use hypothesis?) and then the run's pass or fail;
* ``coverage`` and ``mutation``: *forgeable* measurements, always ``skip`` publicly, with a
  constant detail saying so; they cannot be hard gates (``FORGEABLE_GATES``, refused at load).

Everything measured goes into the **operator's record** (``CheckRecord``): per-test
outcomes by index, counts, the fine outcome and reason, resource use, coverage, mutants.
The ledger keeps it (entry ``checks_recorded``), operator-only; the public gates bind it by
a salted commitment (``record_sha256``), so the receipt pins what was measured without a
dictionary being able to read it back.
"""

from __future__ import annotations

import math
from importlib import metadata
from typing import Any

from jurat.checks._guard import BeyondBounds, cause_of
from jurat.checks._models import CheckRecord, SandboxRun, Step
from jurat.checks._mutation import MUTATION_OPERATORS, mutants
from jurat.checks._sandbox import SANDBOX_PROTOCOL, run_tests
from jurat.checks._steps import PARSE_FAILED, Plan, evidence_item, skipped
from jurat.errors import SandboxError
from jurat.models import (
    FORGEABLE_GATES,
    GATE_COVERAGE,
    GATE_MUTATION,
    GATE_PROPERTIES,
    GATE_TESTS_PASS,
)
from jurat.models._base import Frozen
from jurat.models._checks import Limits, PythonChecks
from jurat.models._evidence import GateOutcome
from jurat.models._taint import Untrusted

__all__ = [
    "FORGEABLE_GATES",
    "RECORD_SCHEMA",
    "Measured",
    "check_record",
    "measure",
    "measured_gates",
    "reference_detail",
]

RECORD_SCHEMA = "jurat.check-record/v1"
_FORGEABLE = "forgeable: figures in the operator's record"
_PASSED = "passed"
_NOT_PASSED = "did not pass"


class Measured(Frozen):
    """What running the hidden tests (and the mutants) measured, before anyone sees it."""

    parsed: bool = True
    """Whether the candidate parsed (nothing runs on a file that does not)."""
    run: SandboxRun | None = None
    """The test run, when it ran."""
    sandbox_error: str | None = None
    """The host's own words when it could not create the sandbox."""
    mutants: tuple[dict[str, Any], ...] | None = None
    """Each mutant's operator, place, description and run outcome, when mutation ran."""
    mutation_error: str | None = None
    """The host's own words when a mutant's sandbox could not be created."""
    mutant_limits: Limits | None = None
    """The limits the mutants ran under (derived from the original's cost)."""


def measure(source: str, tree: object | None, plan: Plan, config: PythonChecks) -> Measured:
    """Run the hidden tests, then the mutants when the original passed."""
    if tree is None or not plan.tests:
        return Measured(parsed=tree is not None)
    try:
        run = run_tests(
            {f"{plan.module}.py": source, **plan.tests}, _targets(plan), module=plan.module,
            limits=config.limits, coverage=config.coverage, hypothesis=plan.hypothesis,
            objects=config.objects, skips_fail=config.skips_fail,
        )
    except SandboxError as exc:
        # The message is the host's own (it never quotes the sandboxes' output).
        return Measured(sandbox_error=str(exc))
    if not config.mutation or run.outcome != "passed":
        return Measured(run=run)
    import ast

    assert isinstance(tree, ast.Module)
    limits = _mutant_limits(config.limits, run)
    results: list[dict[str, Any]] = []
    try:
        for mutant in mutants(tree, config.max_mutants):
            outcome = run_tests(
                {f"{plan.module}.py": mutant.source, **plan.tests}, _targets(plan),
                module=plan.module, limits=limits, coverage=False,
                hypothesis=plan.hypothesis, objects=config.objects,
                skips_fail=config.skips_fail,
            ).outcome
            results.append({**mutant.model_dump(exclude={"source"}), "outcome": outcome})
    except SandboxError as exc:
        return Measured(run=run, mutation_error=str(exc), mutant_limits=limits)
    except (BeyondBounds, RecursionError, MemoryError) as exc:
        # Making the mutants walks the candidate's tree: a bound it meets is mutation's
        # own error, named by its cause, never the run's (checks/_guard.py).
        return Measured(run=run, mutation_error=cause_of(exc) or "checker_failed",
                        mutant_limits=limits)
    return Measured(run=run, mutants=tuple(results), mutant_limits=limits)


def _targets(plan: Plan) -> list[str]:
    return sorted(name for name in plan.tests if name != "conftest.py")


def _mutant_limits(limits: Limits, run: SandboxRun) -> Limits:
    # A mutant that loops is killed by the limit; tying the limit to the original's
    # cost keeps one looping mutant from costing the campaign's full wall budget.
    wall = min(limits.wall_s, max(2.0, 4 * run.wall_s))
    cpu = min(limits.cpu_s, max(1, math.ceil(4 * run.cpu_s)))
    return limits.model_copy(update={"wall_s": wall, "cpu_s": cpu})


# --------------------------------------------------------------------------- the record


def check_record(measured: Measured, plan: Plan) -> CheckRecord | None:
    """The operator's record of ``measured``; None when nothing ran in the sandbox."""
    run = measured.run
    if run is None and measured.sandbox_error is None:
        return None
    record: dict[str, Any] = {"schema": RECORD_SCHEMA, "sandbox": SANDBOX_PROTOCOL,
                              "test_set_sha256": plan.test_set_sha256}
    if measured.sandbox_error is not None:
        record["tests"] = {"outcome": "sandbox_error", "message": measured.sandbox_error}
    if run is not None:
        record["tests"] = _run_record(run)
        record["coverage"] = (run.coverage.model_dump(mode="json") if run.coverage is not None
                              else {"error": run.coverage_error})
    if measured.mutants is not None or measured.mutation_error is not None:
        record["mutation"] = _mutation_record(measured)
    return CheckRecord.seal(record)


def _run_record(run: SandboxRun) -> dict[str, Any]:
    failing = [t.index for t in run.tests if t.outcome != "passed"]
    return {
        "outcome": run.outcome, "reason": run.reason, "explanation": run.detail,
        "collected": run.collected, "passed": run.passed, "not_passed": failing,
        "cases": [{"index": t.index, "outcome": t.outcome, "raised": t.raised,
                   "property": t.property} for t in run.tests],
        "collect_errors": len(run.collect_errors),
        "wall_s": run.wall_s, "cpu_s": run.cpu_s, "exit": run.exit,
        "candidate_exit": run.candidate_exit, "output_bytes": run.output_bytes,
        "output_truncated": run.output_truncated, "memory_peak_bytes": run.memory_peak_bytes,
        "oom_kills": run.oom_kills, "pids_max_hits": run.pids_max_hits,
        "cleanup_ok": run.cleanup_ok,
    }


def _mutation_record(measured: Measured) -> dict[str, Any]:
    limits = measured.mutant_limits.model_dump() if measured.mutant_limits else None
    if measured.mutation_error is not None:
        return {"outcome": "sandbox_error", "message": measured.mutation_error,
                "limits": limits}
    results = list(measured.mutants or ())
    killed = sum(1 for r in results if r["outcome"] != "passed")
    return {"operators": MUTATION_OPERATORS, "killed": killed, "total": len(results),
            "score": round(killed / len(results), 4) if results else None,
            "results": results, "limits": limits}


# --------------------------------------------------------------------------- public gates


def measured_gates(measured: Measured, record: CheckRecord | None, plan: Plan,
                   config: PythonChecks) -> list[Step]:
    """``tests.pass``, ``coverage``, ``properties``, ``mutation`` as anyone may see them.
    The test files are bound through the record (its ``test_set_sha256``), never named."""
    commitment = record.sha256 if record is not None else None
    return [
        _tests_gate(measured, plan, config, commitment),
        _forgeable(GATE_COVERAGE, "coverage", metadata.version("coverage"), measured,
                   config.coverage, "disabled by checks.python.coverage", commitment),
        _properties_gate(measured, plan, commitment),
        _forgeable(GATE_MUTATION, "jurat", MUTATION_OPERATORS, measured,
                   config.mutation, "disabled by checks.python.mutation", commitment,
                   needs_pass=True),
    ]


def _tests_gate(measured: Measured, plan: Plan, config: PythonChecks,
                commitment: str | None) -> Step:
    version = metadata.version("pytest")
    if measured.sandbox_error is not None:
        error = {"outcome": "sandbox_error", "message": measured.sandbox_error}
        gate = GateOutcome(id=GATE_TESTS_PASS, outcome="error", tool="pytest",
                           tool_version=version, detail="sandbox_error", data=error)
        return gate, evidence_item("tests", "pytest", version, GATE_TESTS_PASS, error,
                                   measured.sandbox_error)
    run = measured.run
    if run is None:
        why = PARSE_FAILED if not measured.parsed else "no tests supplied"
        return skipped(GATE_TESTS_PASS, "pytest", version, why)
    passed = run.outcome == "passed"
    data: dict[str, Any] = {"sandbox": SANDBOX_PROTOCOL, "limits": config.limits.model_dump(),
                            "record_sha256": commitment}
    if config.objects:
        data["objects"] = list(config.objects)
    gate = GateOutcome(id=GATE_TESTS_PASS, outcome="pass" if passed else "fail", tool="pytest",
                       tool_version=version, detail=_PASSED if passed else _NOT_PASSED,
                       data=data)
    excerpt = (f"{_PASSED}: every collected test passed and no limit was hit" if passed else
               f"{_NOT_PASSED}: which tests, and how, are in the operator's record")
    return gate, evidence_item("tests", "pytest", version, GATE_TESTS_PASS, data, excerpt)


def _properties_gate(measured: Measured, plan: Plan, commitment: str | None) -> Step:
    version = metadata.version("hypothesis")
    # Whether property tests exist is read from the test files, never from the run: which
    # tests the run collected is the candidate's to disturb.
    if not plan.hypothesis:
        return skipped(GATE_PROPERTIES, "hypothesis", version, "no property tests supplied")
    if measured.run is None:
        return skipped(GATE_PROPERTIES, "hypothesis", version, "tests did not run")
    held = measured.run.outcome == "passed"
    data = {"settings": "derandomize=True, database=None, deadline=None",
            "record_sha256": commitment}
    gate = GateOutcome(id=GATE_PROPERTIES, outcome="pass" if held else "fail",
                       tool="hypothesis", tool_version=version,
                       detail="the properties hold" if held else "the test run did not pass",
                       data=data)
    return gate, None


def _forgeable(gate_id: str, tool: str, version: str, measured: Measured, enabled: bool,
               disabled: str, commitment: str | None, *, needs_pass: bool = False) -> Step:
    if not enabled:
        return skipped(gate_id, tool, version, disabled)
    if measured.run is None:
        return skipped(gate_id, tool, version, "tests did not run")
    if needs_pass and measured.run.outcome != "passed":
        return skipped(gate_id, tool, version, "the original did not pass its tests")
    gate = GateOutcome(id=gate_id, outcome="skip", tool=tool, tool_version=version,
                       detail=_FORGEABLE, data={"forgeable": True, "record_sha256": commitment})
    return gate, None


# --------------------------------------------------------------------------- the operator


def reference_detail(run: SandboxRun | None) -> tuple[Untrusted, ...]:
    """Operator-only detail of a test run: which index is which test, failure excerpts,
    collection errors, output. Each block starts ``--- test #i`` (or ``--- collection
    error``, ``--- output``) so the operator can map the indexes the record names."""
    if run is None:
        return ()
    detail = [
        Untrusted(
            f"--- test #{t.index} {t.outcome} {t.id.reveal()}\n{t.excerpt.reveal()[-1200:]}",
            "reference",
        )
        for t in run.tests
        if t.outcome != "passed"
    ]
    detail += [
        Untrusted(f"--- collection error\n{e.reveal()[-1200:]}", "reference")
        for e in run.collect_errors[:3]
    ]
    if run.output:
        flag = " (truncated at the cap)" if run.output_truncated else ""
        detail.append(Untrusted(f"--- output{flag}\n{run.output.reveal()[:2000]}", "candidate"))
    return tuple(detail)
