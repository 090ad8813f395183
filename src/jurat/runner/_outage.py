"""An outage is not a judgment (issue 27): which jobs a judge's silence leaves incomplete,
and how a decision left to a person is journalled (docs/design.md, "An outage is not a
judgment")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import JsonValue

from jurat.errors import JobIncomplete
from jurat.judges import no_answer
from jurat.ledger import EntryKind
from jurat.models import Artifact, Vote

__all__ = ["all_answered_somewhere", "undecided_entry"]


def all_answered_somewhere(artifact: Artifact, votes: list[Vote]) -> None:
    """Raise JobIncomplete when a judge got no answer for any of its samples of the job.

    Such a job is not judged, so nothing is signed for it: its samples without an answer
    were journalled (``transport_failed``) but never recorded as votes, and running the
    same command again asks exactly those again (issue 27, "an outage is not a judgment").
    """
    asked: dict[str, Counter[str]] = {}
    answered: set[str] = set()
    for vote in votes:
        if no_answer(vote.error):
            asked.setdefault(vote.judge, Counter())[str(vote.error)] += 1
        else:
            answered.add(vote.judge)
    silent = sorted(set(asked) - answered)
    if silent:
        judge = silent[0]
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(asked[judge].items()))
        raise JobIncomplete(
            f"artifact {artifact.id!r}: judge {judge} got no answer for any of its "
            f"{asked[judge].total()} samples ({kinds}), so nothing was signed for it (fix: "
            "check the judge's endpoint, then run the same command again: only the samples "
            "without an answer are asked again)", judge=judge)


def undecided_entry(reasons: Iterable[str], votes: list[Vote]
                     ) -> tuple[EntryKind, dict[str, JsonValue]]:
    """The journal entry of a decision left to a person, by what left it undecided: seed
    000, "transport retries, evaluation failures, and unresolved disagreement remain
    distinguishable in the durable journal". Samples without an answer make it a
    ``transport_failed``, else malformed or invalid answers an ``evaluation_failed``, else
    the judges' disagreement (or a grounding or gate warning) an
    ``unresolved_disagreement``; the errors are counted by kind."""
    errors = Counter(vote.error for vote in votes if vote.error is not None)
    transport = {kind: n for kind, n in sorted(errors.items()) if no_answer(kind)}
    evaluation = {kind: n for kind, n in sorted(errors.items()) if not no_answer(kind)}
    payload: dict[str, JsonValue] = {"reasons": list(reasons)}
    if transport:
        return "transport_failed", {**payload, "escalated": True, "errors": dict(transport)}
    if evaluation:
        return "evaluation_failed", {**payload, "escalated": True, "errors": dict(evaluation)}
    return "unresolved_disagreement", payload
