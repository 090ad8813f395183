"""A decision's gate failures as counts per kind, its adjudication, and its reasons as the
codes of ``jurat.explain`` (the same codes ``jurat run --json`` writes, docs/ci.md).

The public board and ``jurat diff`` show *why* a decision came out as it did without
showing text: a reason is a code with ids from the signed policy (``gate_not_passed
tests.pass fail``, ``criterion_not_passed``), a gate failure is a kind and a range-checked
count (``tests_failed 2``, ``lint_findings 3``), never a test's name, source or assertion
(reference material, docs/receipt-format.md §11) nor anything the candidate printed.
"""

from __future__ import annotations

import re

from jurat.explain import Reason, not_passed
from jurat.explain import reason_codes as _reason_codes
from jurat.models import (
    GATE_EQUIVALENCE_DETERMINISTIC,
    GATE_LINT_RUFF,
    GATE_PYTHON_IMPORTS,
    GATE_PYTHON_PARSE,
    GATE_TESTS_PASS,
    Adjudication,
    Frozen,
    GateOutcome,
)
from jurat.receipts._predicate import DecisionPredicate

__all__ = [
    "AdjudicationNote",
    "GateFailure",
    "Reason",
    "adjudication_note",
    "gate_failures",
    "reason_codes",
]


def reason_codes(predicate: DecisionPredicate) -> tuple[Reason, ...]:
    """A receipt's reasons as codes (``jurat.explain.reason_codes``)."""
    return _reason_codes(predicate.campaign.policy, predicate.gates, predicate.decision,
                         judges_asked=predicate.inputs.judges_skipped is None)


class GateFailure(Frozen):
    """Gate failures of one kind in one decision, counted."""

    kind: str
    """``tests_failed``, ``lint_findings``, ``imports_denied``, ``parse_failed``, or
    ``<gate>_failed`` / ``_error`` / ``_skipped`` / ``_missing`` for any other gate."""
    count: int
    """How many: failing tests, findings, denied imports; 1 for a gate that is one unit."""

    @property
    def text(self) -> str:
        """``kind count``, e.g. ``tests_failed 2``."""
        return f"{self.kind} {self.count}"


class AdjudicationNote(Frozen):
    """What the panel said and what the reviewer decided, for a receipt of an adjudication."""

    panel: str
    """The panel's consensus label (``accept``, ``reject``, ``A``…), or ``no verdict``."""
    judges: int
    """How many judges the policy has (``judge:`` or ``judges:`` when shown)."""
    disposition: str
    """The reviewer's decision: accept or reject."""
    reviewer: str
    """Who adjudicated (the reviewer token's subject, or ``--reviewer``)."""
    at: str
    """When, as the receipt records it."""
    rationale: str | None
    """The reviewer's rationale when the reviewer marked it public; None otherwise."""

    @property
    def text(self) -> str:
        """``judge: accept, adjudicated: reject by rita at 2026-…Z``."""
        who = "judge" if self.judges == 1 else "judges"
        return (f"{who}: {self.panel}, adjudicated: {self.disposition} by {self.reviewer} "
                f"at {self.at}")


def _count(value: object, default: int = 1) -> int:
    # Counts come from a signed receipt, but a page shows only a number it has checked.
    return value if type(value) is int and 0 <= value <= 1_000_000 else default


def _slug(gate_id: str) -> str:
    short = {GATE_TESTS_PASS: "tests", GATE_PYTHON_PARSE: "parse",
             GATE_PYTHON_IMPORTS: "imports", GATE_LINT_RUFF: "lint"}.get(gate_id)
    return short or (re.sub(r"[^a-z0-9]+", "_", gate_id.lower()).strip("_")[:40] or "gate")


def _failure(gate: GateOutcome) -> GateFailure:
    data = gate.data
    if gate.outcome == "fail" and gate.id == GATE_TESTS_PASS:
        collected, passed = _count(data.get("collected"), -1), _count(data.get("passed"), -1)
        failing = (collected - passed if 0 <= passed <= collected
                   else _count(data.get("not_passed_count")))
        run = data.get("outcome")
        if run in ("timeout", "memory_limit", "output_limit", "process_limit",
                   "sandbox_error", "error"):
            return GateFailure(kind=f"tests_{run}", count=1)
        return GateFailure(kind="tests_failed", count=max(failing, 1))
    if gate.outcome == "fail" and gate.id == GATE_LINT_RUFF:
        return GateFailure(kind="lint_findings", count=_count(data.get("findings")))
    if gate.outcome == "fail" and gate.id == GATE_PYTHON_IMPORTS:
        findings = data.get("findings")
        denied = sum(1 for f in findings if isinstance(f, dict) and f.get("severity") == "deny"
                     ) if isinstance(findings, list) else 0
        return GateFailure(kind="imports_denied", count=denied or 1)
    word = {"fail": "failed", "error": "error", "skip": "skipped"}.get(gate.outcome, "failed")
    return GateFailure(kind=f"{_slug(gate.id)}_{word}", count=1)


def gate_failures(predicate: DecisionPredicate) -> tuple[GateFailure, ...]:
    """Every gate that failed or errored, and every required gate that did not pass, as a
    kind and a count: root cause first, then the other gates in pipeline order. An
    equivalence campaign's deterministic gate is not a failure (its ``fail`` means
    *different*)."""
    hard = predicate.campaign.policy.hard_gates
    by_id = {g.id: g for g in predicate.gates}
    required = not_passed(hard, predicate.gates)
    out: list[GateFailure] = []
    for gate_id, _ in required:
        if gate_id == GATE_EQUIVALENCE_DETERMINISTIC:
            continue
        out.append(_failure(by_id[gate_id]) if gate_id in by_id
                   else GateFailure(kind=f"{_slug(gate_id)}_missing", count=1))
    named = {gate_id for gate_id, _ in required}
    out += [_failure(g) for g in predicate.gates
            if g.id not in named and g.id != GATE_EQUIVALENCE_DETERMINISTIC
            and g.outcome in ("fail", "error")]
    return tuple(out)


def adjudication_note(predicate: DecisionPredicate) -> AdjudicationNote | None:
    """The adjudication of a receipt, with its rationale only where the reviewer marked it
    public (``Adjudication.rationale_public``); None for a receipt without one."""
    adjudication: Adjudication | None = predicate.review.adjudication
    if adjudication is None:
        return None
    return AdjudicationNote(
        panel=predicate.decision.label or "no verdict",
        judges=len(predicate.campaign.policy.judges),
        disposition=adjudication.disposition,
        reviewer=adjudication.reviewer,
        at=adjudication.at,
        rationale=adjudication.rationale if adjudication.rationale_public else None,
    )
