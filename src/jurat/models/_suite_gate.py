"""The ``[gate]`` table: a suite-level CI rule over a run's decisions (issue 29).

Without it, ``jurat run`` exits 2 on any BLOCK or reject and 1 on any WARN or escalate.
A suite of criteria or rubric artifacts usually wants a rate instead ("ship at least 90%
and block at most one"), so the campaign may declare the bounds that decide the run's
exit status: 0 when every declared bound holds, 2 when one does not.

The table is kept out of the policy and its digest, like ``[intake]``, ``[monitor]`` and
``[budget]``: it decides nothing per artifact, only what the run's exit status says about
the decisions, so it never enters a receipt and changing it reuses every recorded vote and
receipt. The run prints it and records it in ``--json``'s result (docs/ci.md).
"""

from __future__ import annotations

from pydantic import Field, model_validator

from jurat.models._base import Frozen
from jurat.models._problems import Problem, RecordProblems

__all__ = ["GATED_KINDS", "SuiteGate", "suite_gate_problems"]

#: The kinds a ``[gate]`` applies to: their decisions read as ship / warn / block.
GATED_KINDS = ("criteria", "rubric")


class SuiteGate(Frozen):
    """The bounds a run's decisions must meet; a bound left out is not checked."""

    min_ship_rate: float | None = Field(None, ge=0.0, le=1.0)
    """The smallest share of the run's artifacts that may SHIP (criteria) or be accepted
    (rubric), over every artifact the run judged: an artifact whose evidence is missing or
    errored never ships, so it counts against the rate."""
    max_block: int | None = Field(None, ge=0)
    """The most artifacts that may BLOCK (criteria) or be rejected (rubric)."""
    max_warn: int | None = Field(None, ge=0)
    """The most artifacts that may WARN (criteria) or be escalated (rubric)."""

    @model_validator(mode="after")
    def _some_bound(self) -> SuiteGate:
        # An empty [gate] would hold for any decisions: BLOCKs would exit 0 unnoticed.
        if self.min_ship_rate is None and self.max_block is None and self.max_warn is None:
            raise RecordProblems([Problem(
                (), "[gate] sets no bound (it would hold whatever the decisions are)",
                "set min_ship_rate = 0.9, max_block = 0, max_warn = 2, or remove [gate]")])
        return self


def suite_gate_problems(gate: SuiteGate | None, kind: str) -> list[Problem]:
    """A ``[gate]`` on a kind whose decisions are not ship / warn / block is refused at
    load, never silently ignored."""
    if gate is None or kind in GATED_KINDS:
        return []
    return [Problem(("gate",), f"[gate] applies to criteria and rubric campaigns; this one "
                    f"is {kind}", "remove [gate]: the decisions decide the exit status")]
