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
(``reason_codes``), and a check's ``detail`` never leaves the receipt.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, fields

from jurat.explain import not_passed
from jurat.models import (
    GATE_EQUIVALENCE_DETERMINISTIC,
    GATE_SUBJECT_EXECUTION,
    Decision,
    GateOutcome,
    Policy,
)
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

#: Every reason code a result may carry (the schema's enum; docs/ci.md says what each means).
REASON_CODES = (
    "gate_not_passed",
    "gate_reported",
    "judges_not_asked",
    "criterion_not_passed",
    "too_few_votes",
    "too_few_families",
    "no_majority",
    "low_agreement",
    "panel_disagrees",
    "adjudication_required",
    "below_minimum",
    "below_threshold",
    "votes_agree",
    "settled_deterministically",
    "no_judge",
    "judge_votes",
    "grounding",
    "adjudicated",
    "other",
)

#: The fold's own reason sentences (fold/_decide.py, fold/_adjudication.py), by how they
#: start: each becomes its code. A sentence none matches is ``other``, never dropped.
_FOLD_REASONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), code) for pattern, code in (
        (r"too few independent votes", "too_few_votes"),
        (r"\d+ votes from \d+ model famil", "too_few_families"),
        (r"no (strict )?majority", "no_majority"),
        (r"agreement \d+/\d+ below the tier minimum", "low_agreement"),
        (r"judges' majority and panel median disagree", "panel_disagrees"),
        (r"tier requires explicit adjudication", "adjudication_required"),
        (r"below per-criterion minimum", "below_minimum"),
        (r"Q [0-9.]+ below threshold", "below_threshold"),
        (r"\d+/\d+ independent votes agree", "votes_agree"),
        (r"settled deterministically", "settled_deterministically"),
        (r"not settled deterministically and no judge", "no_judge"),
        (r"judge votes ", "judge_votes"),
        (r"grounding: ", "grounding"),
        (r"adjudicated ", "adjudicated"),
    ))


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason of a decision as a code, with the ids and counts it is about."""

    code: str
    """One of ``REASON_CODES``."""
    gate: str | None = None
    """``gate_*``: the gate id."""
    outcome: str | None = None
    """``gate_*``: its outcome (fail, error, skip, missing); ``judges_not_asked``: why
    (veto, settled, no_subject_output)."""
    judge: str | None = None
    """``criterion_not_passed``: the judge id."""
    criterion: str | None = None
    """``criterion_not_passed``: the criterion id."""
    verdict: str | None = None
    """``criterion_not_passed``: the samples' majority (yes, no, unsure)."""
    stability: str | None = None
    """``criterion_not_passed``: the stability gate (warn, block)."""
    agree: int | None = None
    """``criterion_not_passed``: samples carrying the majority."""
    samples: int | None = None
    """``criterion_not_passed``: samples recorded, errors included."""

    def text(self) -> str:
        """The reason in a few words, from its code, ids and counts only."""
        if self.code == "gate_not_passed":
            return f"required gate {self.gate} {self.outcome}"
        if self.code == "gate_reported":
            return f"gate {self.gate} {self.outcome} (not required)"
        if self.code == "judges_not_asked":
            return f"judges not asked ({self.outcome})"
        if self.code == "criterion_not_passed":
            return (f"{self.judge}/{self.criterion}: {self.stability} ({self.verdict}, "
                    f"{self.agree}/{self.samples})")
        return self.code.replace("_", " ")

    def to_json(self) -> dict[str, str | int]:
        """The reason without its unset fields."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not None}


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


def _fold_code(sentence: str) -> str:
    return next((code for pattern, code in _FOLD_REASONS if pattern.match(sentence)), "other")


def _skipped_why(gates: list[GateOutcome]) -> str:
    for gate in gates:
        if gate.id == GATE_EQUIVALENCE_DETERMINISTIC and gate.outcome in ("pass", "fail"):
            return "settled"
        if gate.id == GATE_SUBJECT_EXECUTION and gate.outcome != "pass":
            return "no_subject_output"
    return "veto"


def reason_codes(policy: Policy, result: JobResult) -> tuple[Reason, ...]:
    """The decision's reasons as codes: required gates without a pass first (the veto and
    what it made skip), then why no judge was asked, the criteria that did not pass, the
    fold's own reasons, and gates that failed without being required."""
    d = result.decision
    out: list[Reason] = []
    required = not_passed(policy.hard_gates, result.gates)
    out += [Reason("gate_not_passed", gate=g, outcome=o) for g, o in required]
    if result.judges_skipped is not None:
        out.append(Reason("judges_not_asked", outcome=_skipped_why(result.gates)))
    for c in d.criteria:
        if c.gate != "pass":
            top, _, n = c.agreement_votes.partition("/")
            out.append(Reason("criterion_not_passed", judge=c.judge, criterion=c.criterion_id,
                              verdict=c.verdict, stability=c.gate, agree=int(top),
                              samples=int(n)))
    if d.kind != "criteria":
        # Criteria reasons are the criteria above and the veto; the others' are sentences.
        for sentence in d.reasons:
            reason = Reason(_fold_code(sentence))
            if not sentence.startswith("required gate ") and reason not in out:
                out.append(reason)
    named = {g for g, _ in required}
    out += [Reason("gate_reported", gate=g.id, outcome=g.outcome) for g in result.gates
            if g.id not in named and g.outcome in ("fail", "error")
            and g.id != GATE_EQUIVALENCE_DETERMINISTIC]
    return tuple(out)


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
            reasons=reason_codes(self.policy, result), receipt=result.receipt_path,
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
