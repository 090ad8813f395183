"""Every artifact's result in a run, kept small enough for CI files (``--json``, ``--junit``).

The summary table keeps a few hundred rows (``runner/_summary.py``); a CI result needs one
entry per artifact, so ``ResultLog`` keeps, per artifact, only what ``jurat run --json``
and ``--junit`` write: its id, decision word, reasons as codes, receipt path, review, cost,
and its criteria's gates. A ``RunTally`` holds one and merges the workers' (``merge``).

Trust rule (docs/design.md, "Trust boundaries"): a CI file is a trusted output, so nothing
here holds text the judged party wrote or reference material. An artifact id is the
operator's (the campaign's or its dataset's); judge and criterion ids are the campaign's;
gate ids, outcomes and verdicts are jurat's enums; the rest are counts. The fold's reason
sentences are not copied: each becomes a ``Reason`` code with the ids and counts it names
(``jurat.explain.reason_codes``), and a check's ``detail`` never leaves the receipt.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from jurat.explain import REASON_CODES, Reason, reason_codes
from jurat.models import Decision, Policy
from jurat.runner._job import JobResult

__all__ = [
    "REASON_CODES",
    "ArtifactResult",
    "CriterionResult",
    "Reason",
    "ResultLog",
    "ScoreResult",
    "reason_codes",
]


@dataclass(frozen=True, slots=True)
class CriterionResult:
    """A binary criterion of one artifact over the whole panel (criteria campaigns)."""

    criterion: str
    """Criterion id."""
    gate: str
    """The worst stability gate of any judge for it: pass, warn or block; ``not_judged``
    when no judge was asked (a veto, or a subject without output)."""


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """A rubric criterion with a ``minimum`` (rubric campaigns): the panel's score against it."""

    criterion: str
    """Criterion id."""
    score: float | None
    """The panel score (1-5); None when no judge scored it."""
    minimum: int
    """The campaign's per-criterion minimum."""

    @property
    def passed(self) -> bool:
        """The score meets the minimum; no score is no pass."""
        return self.score is not None and self.score >= self.minimum


@dataclass(frozen=True, slots=True)
class ArtifactResult:
    """One artifact's entry of a CI result."""

    index: int
    """Its place in the campaign's order."""
    id: str
    """Artifact id (the operator's)."""
    decision: str | None
    """The decision word (``Decision.outcome``)."""
    reasons: tuple[Reason, ...]
    """Why, root cause first, as codes."""
    receipt: str
    """The receipt file."""
    review_version: int
    """Review version of the receipt."""
    reused: bool
    """The receipt was reused from an earlier run."""
    judged: bool
    """A judge was asked (False: a veto, a deterministic settlement, no subject output)."""
    calls: int
    """Judge and subject calls drawn in this run."""
    input_tokens: int
    """Their input tokens."""
    output_tokens: int
    """Their output tokens."""
    usd: float | None
    """What this run spent on it; None at an unknown price."""
    criteria: tuple[CriterionResult, ...] = ()
    """Criteria campaigns: each criterion, in the suite's order."""
    scores: tuple[ScoreResult, ...] = ()
    """Rubric campaigns: each criterion that has a ``minimum``."""


def _criteria(policy: Policy, d: Decision) -> tuple[CriterionResult, ...]:
    if policy.criteria is None:
        return ()
    rank = {"pass": 0, "warn": 1, "block": 2}
    worst: dict[str, str] = {}
    for c in d.criteria:
        seen = worst.get(c.criterion_id)
        if seen is None or rank[c.gate] > rank[seen]:
            worst[c.criterion_id] = c.gate
    return tuple(CriterionResult(item.id, worst.get(item.id, "not_judged"))
                 for item in policy.criteria.items)


def _scores(policy: Policy, d: Decision) -> tuple[ScoreResult, ...]:
    if policy.rubric is None or policy.kind != "rubric":
        return ()
    scores = d.scores or {}
    return tuple(ScoreResult(c.id, scores.get(c.id), c.minimum)
                 for c in policy.rubric.criteria if c.minimum is not None)


class ResultLog:
    """Every artifact's ``ArtifactResult``, added as each job ends (in any order)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._items: list[ArtifactResult] = []

    def add(self, result: JobResult, index: int) -> None:
        """Keep what a CI file needs of one job's result (its artifact's campaign ``index``)."""
        d = result.decision
        total = result.drawn_cost.total
        self._items.append(ArtifactResult(
            index=index, id=result.artifact.id, decision=d.outcome,
            reasons=reason_codes(self.policy, result.gates, d,
                                 judges_asked=result.judges_skipped is None),
            receipt=result.receipt_path,
            review_version=result.review_version, reused=result.reused,
            judged=result.judges_skipped is None or bool(result.votes),
            calls=total.calls, input_tokens=total.input_tokens,
            output_tokens=total.output_tokens, usd=total.usd,
            criteria=_criteria(self.policy, d), scores=_scores(self.policy, d)))

    def merge(self, other: ResultLog) -> None:
        """Add another part of the same run (a worker process's)."""
        self._items.extend(other._items)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[ArtifactResult]:
        """In the campaign's order."""
        return iter(sorted(self._items, key=lambda item: item.index))
