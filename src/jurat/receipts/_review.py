"""A later review version of a receipt: the same signed inputs, settled by an adjudication.

Seed 000, "Decision receipt and signing separation": transitions are monotonic and
"changing bytes creates a new review version". An adjudicated review copies every fold
input of the version it supersedes (policy, artifact, inputs, gates, judges, votes)
unchanged, records the reviewer's ``review.adjudication``, and carries the decision the
fold derives from all of it (fold/_adjudication.py), so a verifier re-derives the
adjudicated decision exactly as it re-derives the panel's.
"""

from __future__ import annotations

from jurat.errors import ValidationError
from jurat.fold import decide
from jurat.models import Adjudication
from jurat.receipts._predicate import ReviewPart, Statement

__all__ = ["adjudicated_statement"]


def adjudicated_statement(previous: Statement, *, version: int, supersedes: str,
                          adjudication: Adjudication) -> Statement:
    """Review ``version`` of ``previous`` (whose receipt digest is ``supersedes``), settled
    by ``adjudication``.

    Raises FoldInputError when the adjudication does not apply (the decision is not an
    escalation, or an accept would lift a required gate that did not pass) and
    ValidationError when ``previous`` was adjudicated already or the versions do not chain.
    ``sign_statement`` checks it, as every statement, before it signs it.
    """
    predicate = previous.predicate
    if predicate.review.adjudication is not None:
        raise ValidationError(
            f"review version {predicate.review.version} was adjudicated already; an "
            "adjudication settles an escalation once")
    if version <= predicate.review.version:
        raise ValidationError(
            f"review version {version} does not follow version {predicate.review.version}")
    decision = decide(predicate.campaign.policy, predicate.gates, predicate.votes,
                      rule=predicate.fold_rule, adjudication=adjudication,
                      artifact=predicate.artifact.id, claims=predicate.inputs.claims)
    review = ReviewPart(version=version, supersedes=supersedes, adjudication=adjudication)
    updated = predicate.model_copy(update={"decision": decision, "review": review})
    return previous.model_copy(update={"predicate": updated})
