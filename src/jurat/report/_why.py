"""Why a receipt's decision came out as it did, root cause first, read from the receipt.

The signed ``reasons`` list the required gates in id order, so a candidate that does not
parse read "python.imports skip", then "python.parse fail", then "tests.pass skip": the
root cause after the gates it made skip. The report orders them as ``jurat run`` does
(``jurat.explain``: a gate that ran and failed first, then errored, missing and
skipped ones, each group in pipeline order) and words each gate from its recorded ``data``
with the same lines, without the operator-only assertion text (reference material,
docs/receipt-format.md §11).

A **veto** is a required gate that decided the outcome whatever the judges said: for rubric
and pairwise one that ran and failed (reject), for criteria any required gate that did not
pass (BLOCK); equivalence folds no veto (docs/design.md, "Fold rules"). Under a veto the
judges' Q and agreement decided nothing, so they are never shown as the decision's support:
the judges were not asked (``inputs.judges_skipped``), or their votes are marked "not
considered: veto" (receipts made before judges were skipped, or ``judge_after_veto``).
"""

from __future__ import annotations

from collections.abc import Sequence

from jurat.explain import gate_lines, not_passed
from jurat.fold import gate_veto
from jurat.models import GATE_EQUIVALENCE_DETERMINISTIC, Frozen, GateOutcome
from jurat.receipts._predicate import DecisionPredicate

__all__ = ["WITHHELD", "Why", "gate_detail", "why"]

WITHHELD = "not shown: recorded before receipts kept the reference answer out"


class Why(Frozen):
    """The veto, the failed gates in root-cause order, and the reasons to show."""

    vetoed_by: tuple[str, ...]
    """The required gates that decided the outcome (the root causes); empty without a veto."""
    gates_failed: tuple[str, ...]
    """Every required gate that did not pass, root cause first."""
    gates_text: str
    """The same for a table cell: ``python.parse; skipped: python.imports, tests.pass``."""
    lines: tuple[str, ...]
    """The evidence, root cause first, then what the judges did, then faults of gates that
    are not required."""


def gate_detail(gate: GateOutcome) -> str:
    """The gate's detail; an equivalence gate's only if it records how it treated ``b``.

    Receipts written before docs/receipt-format.md §11.2 quoted the gold answer there.
    """
    if gate.id == GATE_EQUIVALENCE_DETERMINISTIC and gate.detail:
        if gate.data.get("reference") not in ("b", "none"):
            return WITHHELD
    return gate.detail


def _shown(gate: GateOutcome) -> GateOutcome:
    """The gate as it may be shown: its detail withheld where it could quote a reference,
    and no ``data`` for an equivalence gate (older ones held the gold answer's value)."""
    data = {} if gate.id == GATE_EQUIVALENCE_DETERMINISTIC else gate.data
    return gate.model_copy(update={"detail": gate_detail(gate), "data": data})


def _gates_text(failed: Sequence[tuple[str, str]]) -> str:
    named = [g if o == "fail" else f"{g} ({o})" for g, o in failed if o != "skip"]
    skipped = [g for g, o in failed if o == "skip"]
    if skipped:
        named.append(f"skipped: {', '.join(skipped)}")
    return "; ".join(named)


def _vetoed_by(kind: str, failed: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    if kind == "equivalence" or not failed:
        return ()
    if kind == "criteria":
        causes = [g for g, o in failed if o != "skip"]
        return tuple(causes or (g for g, _ in failed))
    return tuple(g for g, o in failed if o == "fail")


def _judges_line(
    vetoed_by: Sequence[str], votes: int, judges_skipped: str | None, reading: str
) -> str | None:
    veto = ", ".join(vetoed_by)
    if votes == 0 and vetoed_by:
        return f"judges not asked: veto by {veto}"
    if votes == 0 and judges_skipped:
        return f"judges not asked: {judges_skipped}"
    if vetoed_by:
        said = f" (for the record, they said {reading})" if reading else ""
        return f"{votes} judge votes not considered: veto by {veto}{said}"
    return None


def why(predicate: DecisionPredicate, reading: str) -> Why:
    """Root causes and reasons of one receipt's decision.

    ``reading`` is what the judges said (``accept, Q 1.0000, 2/3``): under a veto it is
    shown only as not considered, for the record.
    """
    kind, decision = predicate.campaign.kind, predicate.decision
    hard_gates = predicate.campaign.policy.hard_gates
    recorded = predicate.gates
    by_id = {g.id: _shown(g) for g in recorded}
    failed = not_passed(hard_gates, recorded)
    # The signed list is the record; a gate it names that the gates above do not (an odd or
    # older receipt) is still shown, after the ones whose order is known.
    known = {g for g, _ in failed}
    failed += [(g, by_id[g].outcome if g in by_id else "missing")
               for g in decision.gates_failed if g not in known]
    vetoed_by = _vetoed_by(kind, failed)
    votes = len(predicate.votes)
    lines: list[str] = []
    for gate_id, outcome in failed:
        if outcome == "missing" or gate_id not in by_id:
            lines.append(f"{gate_id} has no outcome (required)")
        else:
            # No reference_detail: the assertion text is the operator's terminal's only.
            lines += [line.text for line in gate_lines(by_id[gate_id]) if not line.reference]
    judges = _judges_line(vetoed_by, votes, predicate.inputs.judges_skipped, reading)
    if judges is not None:
        lines.append(judges)
    if not vetoed_by:
        # The fold's own reasons, less the veto lines the evidence above replaces; beside a
        # required gate that could not run they are the judges' part, not the cause.
        veto = gate_veto(hard_gates, recorded)
        mark = "judges: " if veto.failed else ""
        lines += [mark + r for r in decision.reasons if r not in veto.reasons]
    required = {gate_id for gate_id, _ in failed}
    for gate in map(_shown, recorded):
        faulty = gate.outcome in ("fail", "error") and gate.id != GATE_EQUIVALENCE_DETERMINISTIC
        if gate.id not in required and faulty:
            evidence = [line.text for line in gate_lines(gate) if not line.reference]
            lines += [evidence[0] + " (not required: reported, no veto)", *evidence[1:]]
    return Why(
        vetoed_by=vetoed_by,
        gates_failed=tuple(g for g, _ in failed),
        gates_text=_gates_text(failed),
        lines=tuple(lines),
    )
