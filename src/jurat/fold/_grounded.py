"""A grounded campaign's claims folded into its decision (seed 000, "Factual grounding and
hallucination audit"; docs/grounding.md, docs/receipt-format.md "Grounding").

Per claim, each judge's N samples go through ``fold_claim`` (errored = unresolved, tie =
unresolved); the judges' labels go through ``fold_claim`` again (a judge is one vote, as for
criteria); ``grounding_outcome`` turns the labels and weights into coverage, contradiction
rate and a gate. The gate joins a criteria rollout, and acts on a rubric disposition as a
hard gate does: block rejects, warn escalates an accept.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from jurat.errors import FoldInputError
from jurat.fold._criterion import rollout
from jurat.fold._grounding import ClaimFinding, GroundingThresholds, fold_claim, grounding_outcome
from jurat.models import Decision, Policy, Vote
from jurat.models._grounding import (
    ClaimRecord,
    GroundedClaim,
    GroundingEvidence,
    GroundingPolicy,
    GroundingRecord,
    WorkClaim,
    claim_criterion,
)

__all__ = ["apply_grounding", "fold_grounding"]

_SAMPLE = operator.attrgetter("sample")


def _label(vote: Vote | None) -> str | None:
    if vote is None or vote.error is not None or vote.answer is None:
        return None
    label = vote.answer.get("label")
    return label if isinstance(label, str) else None


def _judge_samples(votes: Sequence[Vote], judge: str, criterion: str, n: int) -> list[str | None]:
    """The judge's N samples of a claim in sample order; unrecorded ones are errored (None)."""
    mine = sorted((v for v in votes if v.judge == judge and v.criterion == criterion),
                  key=_SAMPLE)
    if len({v.sample for v in mine}) != len(mine):
        raise FoldInputError("votes", f"duplicate sample index for {judge}/{criterion}")
    labels = [_label(v) for v in mine]
    return labels + [None] * max(0, n - len(labels))


def fold_grounding(
    policy: Policy, grounding: GroundingPolicy, artifact: str, votes: Sequence[Vote],
    work: Sequence[WorkClaim] = (),
) -> GroundingRecord:
    """Seed 000 grounding: the artifact's claims labelled, measured and gated: the
    campaign's, then those from the work (``work``: submitted, then extracted)."""
    claims: list[GroundedClaim | WorkClaim] = [*grounding.claims_of(artifact), *work]
    takes_work = grounding.submitted_weight is not None or grounding.extract is not None
    if not claims and not takes_work:
        raise FoldInputError("grounding.claims", f"artifact {artifact!r} has no claims")
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise FoldInputError("inputs.claims", f"artifact {artifact!r} has a claim id twice")
    references = {r.id: r for r in grounding.references}
    for i, item in enumerate(work):
        unknown = [ref for ref in item.evidence if ref not in references]
        if unknown:
            raise FoldInputError(f"inputs.claims[{i}].evidence", f"unknown references {unknown}")
    records: list[ClaimRecord] = []
    findings: list[ClaimFinding] = []
    for claim in claims:
        criterion = claim_criterion(claim.id)
        per_judge: dict[str, str] = {
            j.id: fold_claim(_judge_samples(votes, j.id, criterion, grounding.samples)).label
            for j in policy.judges
        }
        panel = fold_claim(list(per_judge.values()))
        evidence = tuple(
            # A url reference reaches the fold captured: its digest is the capture's.
            GroundingEvidence(id=r.id, source=r.source or "", version=r.version or "",
                              sha256=r.sha256 or "",
                              span=r.span)
            for r in (references[ref] for ref in claim.evidence)
        )
        origin = sha = None
        if isinstance(claim, WorkClaim):
            origin, sha = claim.origin, claim.sha256
        records.append(ClaimRecord(
            id=claim.id, weight=claim.weight, material=claim.material, label=panel.label,
            judge_labels=per_judge, agreement_votes=f"{panel.top}/{panel.samples}",
            evidence=evidence, origin=origin, sha256=sha,
        ))
        findings.append(ClaimFinding(id=claim.id, weight=claim.weight, label=panel.label,
                                     material=claim.material,
                                     evidence=tuple(e.sha256 for e in evidence)))
    outcome = grounding_outcome(findings, GroundingThresholds(
        min_coverage=grounding.min_coverage,
        max_contradiction_rate=grounding.max_contradiction_rate,
        require_evidence_for_material=grounding.require_evidence_for_material,
    ))
    return GroundingRecord(
        claims=tuple(records), coverage=outcome.coverage,
        contradiction_rate=outcome.contradiction_rate, gate=outcome.gate,
        reasons=outcome.reasons, unevidenced_material=outcome.unevidenced_material,
    )


def apply_grounding(
    policy: Policy, decision: Decision, votes: Sequence[Vote], artifact: str | None,
    claims: Sequence[WorkClaim] = (),
) -> Decision:
    """The decision with its grounding recorded and the grounding gate applied.

    Criteria: the gate joins the rollout (seed 001 §2: any block blocks, any warn warns).
    Rubric: block → reject (contradicted claims are false), warn → an accept escalates
    (unresolved is not false). A policy without ``[grounding]`` returns ``decision`` as is.
    """
    grounding = policy.grounding
    if grounding is None:
        if claims:
            raise FoldInputError("inputs.claims", "claims from the work need [grounding]")
        return decision
    if artifact is None:
        raise FoldInputError("artifact", "a grounded campaign's fold needs the artifact id")
    record = fold_grounding(policy, grounding, artifact, votes, claims)
    why = [f"grounding: {r}" for r in record.reasons]
    update: dict[str, object] = {"grounding": record, "reasons": (*decision.reasons, *why)}
    if decision.kind == "criteria" and decision.rollout is not None:
        gates = {"SHIP": "pass", "WARN": "warn", "BLOCK": "block"}
        update["rollout"] = rollout([gates[decision.rollout], record.gate])
    elif decision.kind == "rubric":
        if record.gate == "block":
            update["disposition"] = "reject"
        elif record.gate == "warn" and decision.disposition == "accept":
            update["disposition"] = "escalate"
    return decision.model_copy(update=update)
