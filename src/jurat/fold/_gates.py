"""Hard gates: which gates are required, and whether they veto (seed 000, hard gates).

The fold vetoes a decision with this, and the judge validator refuses an ``accept`` with it
(``judges/_validate.py``), so a model can never accept what the fold would veto.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from jurat.models import Frozen, GateOutcome


class GateVeto(Frozen):
    """The required gates that did not pass, and what that does to a decision."""

    failed: tuple[str, ...]
    """Required gates without a ``pass``, sorted: missing, errored, skipped or failed."""
    reasons: tuple[str, ...]
    """One reason per failed gate, in the same order."""
    hard_fail: bool
    """Whether any of them ran and failed (a reject); otherwise the veto escalates."""

    @property
    def passed(self) -> bool:
        """Every required gate passed: nothing is vetoed."""
        return not self.failed

    def apply(self, disposition: str, why: Sequence[str]) -> tuple[str, list[str]]:
        """A failed required gate rejects and an unknown one escalates, whatever the votes said."""
        if self.passed:
            return disposition, list(why)
        return ("reject" if self.hard_fail else "escalate"), [*self.reasons, *why]


def required_gates(hard_gates: Iterable[str], gates: Sequence[GateOutcome]) -> tuple[str, ...]:
    """The campaign's ``hard_gates`` and every gate recorded as required, sorted."""
    return tuple(sorted(set(hard_gates) | {g.id for g in gates if g.required}))


def gate_veto(hard_gates: Iterable[str], gates: Sequence[GateOutcome]) -> GateVeto:
    """Seed 000: a required gate that is missing or did not run is not a pass.

    A required gate is one the campaign lists in ``hard_gates`` or one recorded as required.
    """
    by_id = {g.id: g for g in gates}
    failed: list[str] = []
    reasons: list[str] = []
    hard_fail = False
    for gate_id in required_gates(hard_gates, gates):
        gate = by_id.get(gate_id)
        if gate is None:
            failed.append(gate_id)
            reasons.append(f"required gate {gate_id} has no outcome")
        elif gate.outcome != "pass":
            failed.append(gate_id)
            hard_fail = hard_fail or gate.outcome == "fail"
            detail = f" ({gate.detail})" if gate.detail else ""
            reasons.append(f"required gate {gate_id} {gate.outcome}{detail}: veto")
    return GateVeto(failed=tuple(failed), reasons=tuple(reasons), hard_fail=hard_fail)


def hard_gates_pass(gates: Sequence[GateOutcome], hard_gates: Iterable[str]) -> bool:
    """Whether every required gate (listed in ``hard_gates`` or marked required) passed."""
    return gate_veto(hard_gates, gates).passed
