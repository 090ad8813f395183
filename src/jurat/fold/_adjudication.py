"""Adjudication as a fold step (seed 000: escalation "with adjudication for what the panel
cannot settle"; the mission-critical tier's "explicit adjudication before certification").

A reviewer's decision is an input of the fold like a vote, recorded in the receipt's
``review.adjudication``, so a verifier re-derives it. It applies only where the panel
left the decision open and the evidence allows one:

1. only to a rubric or pairwise decision whose disposition is ``escalate``;
2. an ``accept`` only when every required gate passed: a reviewer can no more lift a
   failed (or errored, or missing) required gate than a judge can (seed 000: "A model
   cannot override a failed required executable test");
3. a ``reject`` always: refusing is never unsafe.

Anything else is a FoldInputError: the service refuses such an adjudication before it
signs, and a receipt that records one fails re-derivation.
"""

from __future__ import annotations

from jurat.errors import FoldInputError
from jurat.models import Adjudication, Decision

__all__ = ["apply_adjudication"]


def apply_adjudication(decision: Decision, adjudication: Adjudication) -> Decision:
    """The panel's ``decision`` settled by ``adjudication``, or FoldInputError naming why not."""
    if decision.kind not in ("rubric", "pairwise") or decision.disposition != "escalate":
        shown = decision.outcome or "undecided"
        raise FoldInputError(
            "review.adjudication",
            f"only an escalated rubric or pairwise decision can be adjudicated; this "
            f"{decision.kind} decision is {shown}",
        )
    if adjudication.disposition == "accept" and decision.gates_failed:
        raise FoldInputError(
            "review.adjudication.disposition",
            f"accept would lift required gate(s) {', '.join(decision.gates_failed)} that did "
            "not pass; an adjudication cannot override a required gate (reject instead)",
        )
    reason = (f"adjudicated {adjudication.disposition} by {adjudication.reviewer} at "
              f"{adjudication.at} (the panel escalated)")
    return decision.model_copy(update={
        "disposition": adjudication.disposition,
        "reasons": (reason, *decision.reasons),
        "adjudicated": True,
    })
