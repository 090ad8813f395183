"""The evidence behind a decision, in the operator's words, root cause first.

``jurat run`` prints these lines after its table (runner/_summary.py, cli/_summary.py), and
the HTML report words a receipt's gates with the same lines, less the operator-only ones
(report/_why.py): this module is below both, so neither imports the other. The lines say
what the gates measured, from each gate's ``data`` (the policy entries denied, the lint
codes, where the parse failed), and, as hidden-test lines for the operator only, what the
hidden tests' run measured (which tests failed, how: ``CheckRecord.record``) with each
failing test's name and first assertion line (``CheckReport.reference_detail``). Those
quote the campaign's tests or tell what the candidate did while it held their inputs: they
reach the terminal through ``JobResult`` and nothing else, and only on the operator's
request. Receipts, telemetry and the report are contributor-visible and never carry them
(docs/receipt-format.md §11).

Order: a gate that ran and failed is the root cause and comes first, then gates that
could not run (errored, missing), then the gates skipped because of them: a candidate
that does not parse reads "python.parse failed", then "python.imports skipped".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurat.fold import required_gates
from jurat.models import (
    GATE_LINT_RUFF,
    GATE_PYTHON_IMPORTS,
    GATE_PYTHON_PARSE,
    GATE_TESTS_PASS,
    Frozen,
    GateOutcome,
    Untrusted,
)

__all__ = ["Line", "gate_lines", "not_passed", "record_lines", "root_causes"]

#: Outcomes in root-cause order; a required gate with no outcome at all ranks as ``missing``.
_RANK = {"fail": 0, "error": 1, "missing": 2, "skip": 3}
#: How many test ids or findings one line names before it says how many more there are.
_NAMED = 5


class Line(Frozen):
    """One line of evidence under an artifact in the run summary."""

    text: str
    """What it says, as plain text (the printer escapes it)."""
    reference: bool = False
    """Hidden-test detail: it quotes the campaign's tests (reference material) or tells
    what the candidate did while it held their inputs (which tests failed, how). Shown only
    on the operator's request (``jurat run --show-hidden``), never by default."""
    depth: int = 0
    """Indentation under the line it belongs to."""


def not_passed(
    hard_gates: Sequence[str], gates: Sequence[GateOutcome]
) -> list[tuple[str, str]]:
    """The required gates without a pass as (gate id, outcome), root cause first.

    Outcome is ``missing`` for a required gate the checks never reported; within one
    outcome, the gates keep the order the pipeline ran them in.
    """
    by_id = {g.id: g for g in gates}
    position = {g.id: i for i, g in enumerate(gates)}
    found = [
        (gate_id, by_id[gate_id].outcome if gate_id in by_id else "missing")
        for gate_id in required_gates(hard_gates, gates)
    ]
    failed = [(gate_id, outcome) for gate_id, outcome in found if outcome != "pass"]
    return sorted(failed, key=lambda f: (_RANK[f[1]], position.get(f[0], len(gates))))


def root_causes(hard_gates: Sequence[str], gates: Sequence[GateOutcome]) -> list[str]:
    """The required gates that ran and failed: the veto, without what it made skip."""
    return [gate_id for gate_id, outcome in not_passed(hard_gates, gates) if outcome == "fail"]


def gate_lines(gate: GateOutcome, reference_detail: Sequence[Untrusted] = (),
               record: Mapping[str, Any] | None = None) -> list[Line]:
    """What ``gate`` found, in one line (plus, for the operator, hidden-test lines: what the
    run measured, from ``record`` (``CheckRecord.record``), and the assertion quoted)."""
    data = gate.data
    if gate.outcome == "fail" and gate.id == GATE_PYTHON_PARSE:
        return [Line(text=_parse_line(data, gate.detail))]
    if gate.outcome == "fail" and gate.id == GATE_PYTHON_IMPORTS:
        return [Line(text=_imports_line(data, gate.detail))]
    if gate.outcome == "fail" and gate.id == GATE_LINT_RUFF:
        return [Line(text=_lint_line(data, gate.detail))]
    if gate.outcome == "fail" and gate.id == GATE_TESTS_PASS:
        return _tests_lines(data, gate.detail, reference_detail, record)
    verb = {"fail": "failed", "error": "could not run", "skip": "skipped"}.get(
        gate.outcome, gate.outcome
    )
    return [Line(text=f"{gate.id} {verb}" + (f": {gate.detail}" if gate.detail else ""))]


def _parse_line(data: Mapping[str, Any], detail: str) -> str:
    line, column = data.get("line"), data.get("column")
    if line is None:
        return f"{GATE_PYTHON_PARSE} failed: {detail}"
    return f"{GATE_PYTHON_PARSE} failed: line {line}, column {column}"


def _named(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_NAMED])
    more = len(names) - _NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def _imports_line(data: Mapping[str, Any], detail: str) -> str:
    findings = data.get("findings")
    denied = [
        f"{f.get('entry')} (line {f.get('line')})"
        for f in (findings if isinstance(findings, list) else [])
        if isinstance(f, dict) and f.get("severity") == "deny"
    ]
    if not denied:
        return f"{GATE_PYTHON_IMPORTS} failed: {detail}"
    return f"{GATE_PYTHON_IMPORTS} failed: denied {_named(denied)}"


def _lint_line(data: Mapping[str, Any], detail: str) -> str:
    codes = data.get("by_code")
    if not isinstance(codes, dict) or not codes:
        return f"{GATE_LINT_RUFF} failed: {detail}"
    # The most frequent codes first: they say what kind of problem the file has.
    ranked = sorted(codes.items(), key=lambda c: (-c[1] if isinstance(c[1], int) else 0, c[0]))
    counted = [f"{code} ({count})" for code, count in ranked]
    total = data.get("findings")
    many = f"{total} finding{'' if total == 1 else 's'}: " if isinstance(total, int) else ""
    return f"{GATE_LINT_RUFF} failed: {many}{_named(counted)}"


def _tests_lines(
    data: Mapping[str, Any], detail: str, reference_detail: Sequence[Untrusted],
    record: Mapping[str, Any] | None,
) -> list[Line]:
    run = record.get("tests") if record is not None else None
    if "collected" in data:
        # Receipts before issue 36 carried the run's counts in the gate (and before issue
        # 25, node ids: those are not repeated).
        lines = [Line(text=f"{GATE_TESTS_PASS} failed{_run_text(data, detail)}")]
    else:
        lines = [Line(text=f"{GATE_TESTS_PASS} failed" + (f": {detail}" if detail else ""))]
    if isinstance(run, Mapping):
        # The operator's record: what the candidate chose while it held the hidden inputs.
        text = _run_text(run, detail).removeprefix(": ") or "the run did not pass"
        lines.append(Line(text=text, reference=True, depth=1))
        data = run
    ids = [t for t in data.get("not_passed") or () if type(t) is int]
    quoted = _assertion([b.reveal() for b in reference_detail],
                        f"test #{ids[0]}" if ids else None)
    lines += [Line(text=q, reference=True, depth=1) for q in quoted]
    return lines


def _run_text(data: Mapping[str, Any], detail: str) -> str:
    """How a run failed, after the gate's id: ``(timeout: …): 2 of 5 tests did not pass:
    test #1, test #3``."""
    ids = [f"test #{t}" for t in data.get("not_passed") or () if type(t) is int]
    collected = data.get("collected")
    passed = data.get("passed")
    outcome = str(data.get("outcome") or detail)
    how = "" if outcome == "failed" else f" ({outcome}: {data.get('explanation') or detail})"
    if isinstance(collected, int) and isinstance(passed, int) and collected > passed:
        named = f": {_named(ids)}" if ids else ""
        return f"{how}: {collected - passed} of {collected} tests did not pass{named}"
    if collected == 0:
        return f"{how}: no test was collected"
    return how or f": {detail}"


def _assertion(reference_detail: Sequence[str], test_id: str | None) -> list[str]:
    """The test's name, its failing statement (pytest's ``>`` line) and first ``E`` line;
    without a failing test, the first error of a collection failure."""
    if test_id is not None:
        header = f"--- {test_id} "
        block = next((b for b in reference_detail if b.startswith(header)), None)
    else:
        block = next((b for b in reference_detail if b.startswith("--- collection error")),
                     None)
    if block is None:
        return []
    head, *body = block.splitlines()
    name = head.split(" ", 4)[4] if test_id is not None and head.count(" ") >= 4 else None
    source = next((ln[1:].strip() for ln in body if ln.startswith(">")), None)
    error = next((ln[1:].strip() for ln in body if ln.startswith("E ")), None)
    return [q for q in (name, source, f"E {error}" if error else None) if q]


def record_lines(record: Mapping[str, Any]) -> list[str]:
    """The operator's record of a hidden tests' run (``CheckRecord.record``), one line per
    measurement: the run, coverage, mutants. Hidden-test detail: the operator's only."""
    lines: list[str] = []
    run = record.get("tests")
    if isinstance(run, Mapping):
        if run.get("outcome") == "sandbox_error":
            lines.append(f"tests: the sandbox could not be created: {run.get('message')}")
        else:
            lines.append(f"tests: {run.get('passed')}/{run.get('collected')} passed, "
                         f"{run.get('outcome')} ({run.get('reason')}){_run_text(run, '')}; "
                         f"wall {run.get('wall_s')} s, cpu {run.get('cpu_s')} s, memory peak "
                         f"{run.get('memory_peak_bytes')} B, output {run.get('output_bytes')} B")
    coverage = record.get("coverage")
    if isinstance(coverage, Mapping):
        if "error" in coverage:
            lines.append(f"coverage: not measured ({coverage.get('error')})")
        else:
            missing = list(coverage.get("missing_lines") or ())
            lines.append(f"coverage: {coverage.get('percent')}% (lines and branches); "
                         f"{coverage.get('missing_count', len(missing))} lines missing"
                         + (f": {_named([str(n) for n in missing])}" if missing else ""))
    mutation = record.get("mutation")
    if isinstance(mutation, Mapping):
        if "killed" in mutation:
            survivors = [f"{r.get('operator')} line {r.get('line')}"
                         for r in mutation.get("results") or () if isinstance(r, Mapping)
                         and r.get("outcome") == "passed"]
            lines.append(f"mutation: {mutation.get('killed')}/{mutation.get('total')} mutants "
                         "killed" + (f"; survived: {_named(survivors)}" if survivors else ""))
        else:
            lines.append(f"mutation: the sandbox could not be created: {mutation.get('message')}")
    return lines
