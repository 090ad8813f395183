"""Read receipt statements into the records the HTML report draws. Pure: no I/O, no clock.

A receipt reaches the report as the typed ``Statement`` the verifier reads
(``jurat.receipts``: verification's bounds and step 4, schema and normal form), so every
field this module reads has the type docs/receipt-format.md §6 gives it; a receipt that
does not parse is refused where it is read, naming it. Nothing here re-decides anything:
outcomes come from the signed ``decision`` and are named by ``jurat.models.outcome_word``,
each sample's label is read by ``_votes`` with the fold's own rules, the reasons are ordered
root cause first by ``_why``, and cost uses ``jurat.judges.judge_phase``.

The report is contributor-visible, so it shows no reference material (docs/receipt-format.md
§11) even from receipts written before jurat kept it out of them: an equivalence judge's free
text is never shown (``_votes``), and the ``equivalence.deterministic`` gate's detail only
when the gate says how it treated ``b`` (``_why.gate_detail``).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

import pydantic

from jurat.judges import PhaseCost, Price, judge_phase
from jurat.models import (
    CriterionOutcome,
    Decision,
    Frozen,
    GateOutcome,
    Policy,
    Tone,
    outcome_word,
    tone_of,
)
from jurat.receipts import Statement
from jurat.receipts._statement import parse_statement
from jurat.report._codes import (
    AdjudicationNote,
    GateFailure,
    Reason,
    adjudication_note,
    gate_failures,
    reason_codes,
)
from jurat.report._votes import VoteRow, vote_row
from jurat.report._why import gate_detail, why

__all__ = [
    "ArtifactView",
    "GateRow",
    "ReportReceipt",
    "VoteRow",
    "artifact_view",
    "verify_command",
]


class ReportReceipt(Frozen):
    """One receipt as the report reads it."""

    statement: Statement
    """The in-toto Statement v1 of the receipt, as the verifier parses it. Given as its JSON
    document it is parsed the same way (schema and normal form: ``parse_statement``), never
    leniently."""
    receipt_path: str | None = None
    """Where the Sigstore bundle lies, for the verify command; None when unknown."""
    key_path: str | None = None
    """The public key that verifies it; None when unknown."""
    ledger: str | None = None
    """The ledger the receipt was read from, as given (a file or a URL without password), for
    ``jurat replay`` when the receipt has no file of its own; None when not from a ledger."""
    ledger_seq: int | None = None
    """Its entry's position in that ledger."""

    @pydantic.field_validator("statement", mode="before")
    @classmethod
    def _strict(cls, value: Any) -> Any:
        # pydantic would fill a document's missing fields with their defaults; the verifier's
        # parse refuses it (VerificationError, step "parse statement").
        return value if isinstance(value, Statement) else parse_statement(value)


class GateRow(Frozen):
    """One deterministic gate outcome as recorded."""

    id: str
    """Gate id."""
    outcome: str
    """pass, fail, error or skip."""
    required: bool
    """Whether a non-pass vetoes."""
    tool: str
    """Tool and version that decided it."""
    detail: str
    """Finer outcome, if recorded (``_why.gate_detail``)."""


class ArtifactView(Frozen):
    """Everything the report shows about one receipt."""

    index: int
    """Position in the input, for stable element ids."""
    artifact_id: str
    """Artifact id."""
    campaign_id: str
    """Campaign id."""
    artifact_sha256: str
    """Digest of the artifact the receipt is about."""
    policy_sha256: str
    """Digest of the pinned policy."""
    kind: str
    """Campaign kind."""
    outcome: str
    """disposition, rollout, or equivalent / different / undecided."""
    tone: Tone
    """Colour class of the outcome."""
    score: str
    """Q (rubric), preference (pairwise), pass fraction (criteria) or how it was settled;
    ``vetoed`` when a veto decided."""
    agreement: float | None
    """Decision-level agreement among independent votes, if the kind has one and no veto
    decided (under a veto it supports nothing)."""
    agreement_text: str
    """Agreement as shown, e.g. ``2/3``; for criteria the weakest evaluation; under a veto
    ``not asked`` or ``not considered: veto``."""
    valid_samples: int
    """Samples with a validated answer."""
    samples: int
    """All samples recorded."""
    vetoed_by: tuple[str, ...]
    """The required gates that decided the outcome whatever the judges said (``_why``)."""
    gates_failed: tuple[str, ...]
    """Required gates that did not pass, root cause first."""
    gates_text: str
    """The same as shown: ``python.parse; skipped: python.imports, tests.pass``."""
    gates: tuple[GateRow, ...]
    """Every recorded gate, in pipeline order."""
    reasons: tuple[str, ...]
    """Why, root cause first (``_why``)."""
    reason_codes: tuple[Reason, ...] = ()
    """The decision's reasons as codes (``_codes``): what the public board shows."""
    gate_failures: tuple[GateFailure, ...] = ()
    """Gate failures as kinds and counts (``tests_failed 2``), never test text."""
    adjudication: AdjudicationNote | None = None
    """The reviewer's adjudication (rationale only where marked public); None without."""
    review_version: int
    """Review version of this receipt."""
    supersedes: str | None
    """Digest of the receipt it supersedes."""
    superseded_by: int | None = None
    """The next review version of the same artifact in the report, if any (``_rows``)."""
    versions: int = 1
    """How many review versions of the same artifact the report lists."""
    fidelity: str
    """replay_fidelity_level."""
    verify_command: str
    """The command that verifies this receipt."""
    paths_known: bool
    """Whether the command names real paths rather than placeholders."""
    ledger_seq: int | None
    """Its entry's position in the ledger it was read from."""
    quorum: float | None
    """criteria: the blocker quorum in force."""
    blockers: tuple[str, ...]
    """criteria: ids of blocker criteria."""
    votes: tuple[VoteRow, ...]
    """All samples in dispatch order."""
    criteria: tuple[CriterionOutcome, ...]
    """criteria: every criterion evaluation, as the decision records it."""
    judge_cost: PhaseCost
    """The judge phase of this receipt: recorded usage at the policy's pinned prices."""

    @property
    def superseded(self) -> bool:
        """A later review of the same artifact is in the report."""
        return self.superseded_by is not None

    @property
    def vetoed(self) -> bool:
        """A required gate decided the outcome; the votes, if any, were not considered."""
        return bool(self.vetoed_by)


def verify_command(artifact_id: str, receipt: ReportReceipt) -> str:
    """The exact command; placeholders (unquoted, visibly so) where a path is unknown.

    A receipt read from a ledger with no file of its own (a superseded review: ``jurat run``
    writes the current one over it) is verified by ``jurat replay``, which checks every
    receipt of the ledger, this one among them.
    """
    key = shlex.quote(receipt.key_path) if receipt.key_path else "<pub>"
    if not receipt.receipt_path and receipt.ledger_seq is not None:
        ledger = shlex.quote(receipt.ledger) if receipt.ledger else "<ledger>"
        return f"jurat replay {ledger} --key {key}"
    path = receipt.receipt_path
    shown = shlex.quote(path) if path else f"<out>/{artifact_id}.sigstore.json"
    return f"jurat verify {shown} --key {key}"


def _outcome(kind: str, decision: Decision) -> tuple[str, Tone]:
    word = outcome_word(kind, disposition=decision.disposition, rollout=decision.rollout,
                        equivalent=decision.equivalent)
    return (word, tone_of(word)) if word is not None else ("missing", "none")


def _score(kind: str, decision: Decision, policy: Policy) -> str:
    if kind == "rubric":
        q_bp, q = decision.q_bp, decision.q
        threshold = policy.rubric.threshold if policy.rubric is not None else None
        shown = (
            f"Q {q_bp / 10000:.4f}"
            if q_bp is not None
            else f"Q {q:.4f}"
            if q is not None
            else "no Q"
        )
        return shown + (f" (min {threshold:g})" if threshold is not None else "")
    if kind == "pairwise":
        label, entropy = decision.label, decision.entropy
        shown = f"prefers {label}" if label else "no majority"
        return shown + (f", H {entropy:.2f}" if entropy is not None else "")
    if kind == "criteria":
        gates = [c.gate for c in decision.criteria]
        return f"pass {gates.count('pass')}/{len(gates)}"
    if kind == "equivalence":
        if decision.equivalence_settled and not decision.samples:
            return "settled deterministically"
        return f"by judges: {decision.label or 'no verdict'}"
    return "—"


def _agreement_text(decision: Decision) -> str:
    if decision.agreement_votes:
        return decision.agreement_votes
    if decision.criteria:
        weakest = min(decision.criteria, key=lambda c: c.agreement)
        return f"min {weakest.agreement_votes}"
    return "—"


def _reading(kind: str, decision: Decision, score: str, agreement: str) -> str:
    """What the judges said, in a few words: shown under a veto only as not considered."""
    label = decision.label
    if kind == "rubric" and label is not None:
        return f"{label}, {score.split(' (')[0]}, {agreement}"
    if label is not None:
        return f"{label}, {agreement}"
    return "" if score in ("—", "no Q") else score


def _gate_row(gate: GateOutcome) -> GateRow:
    return GateRow(
        id=gate.id,
        outcome=gate.outcome,
        required=gate.required,
        tool=f"{gate.tool} {gate.tool_version}".strip(),
        detail=gate_detail(gate),
    )


def _paths_known(receipt: ReportReceipt) -> bool:
    from_ledger = receipt.ledger_seq is not None and receipt.ledger
    return bool(receipt.key_path and (receipt.receipt_path or from_ledger))


def artifact_view(index: int, receipt: ReportReceipt) -> ArtifactView:
    """Summarise one receipt (its review versions are related to others by ``_rows``)."""
    predicate = receipt.statement.predicate
    campaign, decision, policy = predicate.campaign, predicate.decision, predicate.campaign.policy
    kind, artifact_id = campaign.kind, predicate.artifact.id
    votes = tuple(vote_row(kind, v, policy.rubric) for v in predicate.votes)
    outcome, tone = _outcome(kind, decision)
    score, agreement_text = _score(kind, decision, policy), _agreement_text(decision)
    reading = _reading(kind, decision, score, agreement_text) if votes else ""
    cause = why(predicate, reading)
    agreement = decision.agreement
    if cause.vetoed_by:
        # The veto decided: Q and agreement would read as the judges backing it.
        score, agreement = "vetoed", None
        agreement_text = "not considered: veto" if votes else "not asked"
    suite = policy.criteria
    return ArtifactView(
        index=index,
        artifact_id=artifact_id,
        campaign_id=campaign.id,
        artifact_sha256=predicate.artifact.sha256,
        policy_sha256=campaign.policy_sha256,
        kind=kind,
        outcome=outcome,
        tone=tone,
        score=score,
        agreement=agreement,
        agreement_text=agreement_text,
        valid_samples=decision.valid_samples,
        samples=decision.samples,
        vetoed_by=cause.vetoed_by,
        gates_failed=cause.gates_failed,
        gates_text=cause.gates_text,
        gates=tuple(_gate_row(g) for g in predicate.gates),
        reasons=cause.lines,
        reason_codes=reason_codes(predicate),
        gate_failures=gate_failures(predicate),
        adjudication=adjudication_note(predicate),
        review_version=predicate.review.version,
        supersedes=predicate.review.supersedes,
        fidelity=predicate.replay_fidelity_level,
        verify_command=verify_command(artifact_id, receipt),
        paths_known=_paths_known(receipt),
        ledger_seq=receipt.ledger_seq,
        quorum=suite.blocker_quorum if suite is not None else None,
        blockers=tuple(c.id for c in suite.items if c.blocker) if suite is not None else (),
        votes=votes,
        criteria=decision.criteria,
        judge_cost=judge_phase(predicate.votes, {j.id: Price.of(j) for j in policy.judges}),
    )


def views_of(receipts: Sequence[ReportReceipt]) -> list[ArtifactView]:
    """Every receipt's view, in input order (``index`` is the position)."""
    return [artifact_view(i, r) for i, r in enumerate(receipts)]
