"""The evidence behind a decision, in the operator's words, root cause first.

``jurat run`` prints these lines after its table (runner/_summary.py, cli/_summary.py), and
the HTML report words a receipt's gates with the same lines, less the operator-only ones
(report/_why.py): this module is below both, so neither imports the other. The lines say
what the gates measured, from each gate's ``data`` (the failing tests by index, the policy
entries denied, the lint codes, where the parse failed), and, for the operator only, each
failing test's name and the first assertion line from ``CheckReport.reference_detail``.
That detail quotes the campaign's tests, which are reference material: it reaches the
terminal through ``JobResult`` and nothing else. Receipts, the ledger, telemetry and the
report are contributor-visible and never carry it (docs/receipt-format.md §11).

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

__all__ = ["Line", "gate_lines", "not_passed", "root_causes"]

#: Outcomes in root-cause order; a required gate with no outcome at all ranks as ``missing``.
_RANK = {"fail": 0, "error": 1, "missing": 2, "skip": 3}
#: How many test ids or findings one line names before it says how many more there are.
_NAMED = 5


class Line(Frozen):
    """One line of evidence under an artifact in the run summary."""

    text: str
    """What it says, as plain text (the printer escapes it)."""
    reference: bool = False
    """It quotes the campaign's tests (reference material): the operator's terminal only."""
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


def gate_lines(gate: GateOutcome, reference_detail: Sequence[Untrusted] = ()) -> list[Line]:
    """What ``gate`` found, in one line (plus the operator-only assertion lines of tests)."""
    data = gate.data
    if gate.outcome == "fail" and gate.id == GATE_PYTHON_PARSE:
        return [Line(text=_parse_line(data, gate.detail))]
    if gate.outcome == "fail" and gate.id == GATE_PYTHON_IMPORTS:
        return [Line(text=_imports_line(data, gate.detail))]
    if gate.outcome == "fail" and gate.id == GATE_LINT_RUFF:
        return [Line(text=_lint_line(data, gate.detail))]
    if gate.outcome == "fail" and gate.id == GATE_TESTS_PASS:
        return _tests_lines(data, gate.detail, reference_detail)
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
    data: Mapping[str, Any], detail: str, reference_detail: Sequence[Untrusted]
) -> list[Line]:
    ids = [f"test #{t}" for t in data.get("not_passed") or () if type(t) is int]
    collected = data.get("collected")
    passed = data.get("passed")
    outcome = str(data.get("outcome") or detail)
    how = "" if outcome == "failed" else f" ({outcome}: {data.get('explanation') or detail})"
    if isinstance(collected, int) and isinstance(passed, int) and collected > passed:
        # Receipts before issue 25 named tests by node id: those are not repeated.
        named = f": {_named(ids)}" if ids else ""
        head = (f"{GATE_TESTS_PASS} failed{how}: {collected - passed} of {collected} tests did "
                f"not pass{named}")
    elif collected == 0:
        head = f"{GATE_TESTS_PASS} failed{how}: no test was collected"
    else:
        head = f"{GATE_TESTS_PASS} failed{how or f': {detail}'}"
    lines = [Line(text=head)]
    first = ids[0] if ids else None
    quoted = _assertion([b.reveal() for b in reference_detail], first)
    lines += [Line(text=q, reference=True, depth=1) for q in quoted]
    return lines


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
