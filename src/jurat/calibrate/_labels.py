"""What each rater said about one artifact: every judge of the panel, and the folded decision.

A judge's label is what the fold makes of that judge alone: the same ``decide`` on the
recorded policy with a panel of that one judge and a tier of one vote, so a judge's
samples are folded exactly as in the receipt (seed 000: a judge's samples are one
witness, folded first). ``None`` is "undecided": no substantive vote, a tie, an
abstention, or an escalation. Nothing here re-implements a fold rule.

A judge is compared only on the artifacts it was asked about (``asked``): a pair the
deterministic pass settled, or a vetoed artifact, records why no judge was asked
(``inputs.judges_skipped``) and holds none of its votes; such a row is the pipeline's
settlement, not the judge's undecided answer (``settled_without_judge``).
"""

from __future__ import annotations

from jurat.errors import ConfigError
from jurat.fold import decide
from jurat.models import Decision, Policy, RiskTier
from jurat.receipts import Statement

__all__ = ["DECISION", "asked", "rater_labels", "settled_without_judge"]

#: The rater name of the folded decision, beside the judges' ids.
DECISION = "decision"

#: One vote settles a lone judge's label: the tier's quorum is the panel's business.
_ONE_VOTE = RiskTier(name="declared", votes=1, min_agreement=1e-9)


def _label_of(kind: str, decision: Decision, *, folded: bool) -> str | None:
    if kind == "equivalence":
        if decision.equivalent is None:
            return None
        return "EQUIVALENT" if decision.equivalent else "DIFFERENT"
    if kind == "rubric":
        if folded:
            return decision.disposition if decision.disposition in ("accept", "reject") else None
        return decision.label
    if kind == "pairwise":
        if folded and decision.disposition != "accept":
            return None
        return decision.label
    raise ConfigError(f"one label per artifact is read for rubric, pairwise and equivalence "
                      f"campaigns, not {kind!r} (criteria: per criterion, calibrate/_criteria.py)")


def _alone(policy: Policy, judge_id: str) -> Policy:
    judge = next(j for j in policy.judges if j.id == judge_id)
    return policy.model_copy(update={"judges": (judge,), "risk_tier": _ONE_VOTE})


def rater_labels(statement: Statement) -> dict[str, str | None]:
    """Judge id → that judge's label, and ``DECISION`` → the folded decision's label."""
    predicate = statement.predicate
    policy = predicate.campaign.policy
    labels: dict[str, str | None] = {}
    for judge in policy.judges:
        own = [v for v in predicate.votes if v.judge == judge.id]
        alone = decide(_alone(policy, judge.id), (), own, rule=predicate.fold_rule,
                       artifact=predicate.artifact.id, claims=predicate.inputs.claims)
        labels[judge.id] = _label_of(policy.kind, alone, folded=False)
    labels[DECISION] = _label_of(policy.kind, predicate.decision, folded=True)
    return labels


def settled_without_judge(statement: Statement) -> str | None:
    """Why no judge was asked about this artifact (the receipt's ``judges_skipped``), or None."""
    return statement.predicate.inputs.judges_skipped


def asked(statement: Statement, judge_id: str) -> bool:
    """Whether ``judge_id`` was asked about this artifact: it has a recorded vote (errors
    included), or the receipt does not record that no judge was asked (a judge left without
    a vote then is undecided, never dropped)."""
    predicate = statement.predicate
    if predicate.inputs.judges_skipped is None:
        return True
    return any(v.judge == judge_id for v in predicate.votes)
