"""Read receipt predicates into the records the HTML report draws. Pure: no I/O, no clock.

Receipts are read leniently (``_lenient``: a missing field shows as a dash) because the report
must still render a receipt from an older or newer jurat; only a statement without a predicate
is refused. Nothing here re-decides anything: outcomes come from the signed ``decision`` and
are named by ``jurat.models.recorded_outcome_word``, each sample's label is read by
``_votes`` with the fold's own rules, the reasons are ordered root cause first by ``_why``,
and cost uses ``jurat.judges.judge_phase``.

The report is contributor-visible, so it shows no reference material (docs/receipt-format.md
§11) even from receipts written before jurat kept it out of them: an equivalence judge's free
text is never shown (``_votes``), and the ``equivalence.deterministic`` gate's detail only
when the gate says how it treated ``b`` (``_why.gate_detail``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import pydantic

from jurat.errors import ValidationError
from jurat.judges import PhaseCost, Price, judge_phase
from jurat.models import Frozen, Tone, recorded_outcome_word, tone_of
from jurat.report._lenient import as_float, as_int, as_list, as_object, as_text
from jurat.report._votes import VoteRow, vote_row
from jurat.report._why import gate_detail, why

__all__ = [
    "ArtifactView",
    "CriterionRow",
    "GateRow",
    "ReportReceipt",
    "VoteRow",
    "artifact_view",
    "coerce_receipts",
    "verify_command",
]


class ReportReceipt(Frozen):
    """One receipt as the report reads it."""

    statement: dict[str, Any]
    """The in-toto Statement v1 (the decoded DSSE payload)."""
    receipt_path: str | None = None
    """Where the Sigstore bundle lies, for the verify command; None when unknown."""
    key_path: str | None = None
    """The public key that verifies it; None when unknown."""
    ledger: str | None = None
    """The ledger the receipt was read from, as given (a file or a URL without password), for
    ``jurat replay`` when the receipt has no file of its own; None when not from a ledger."""
    ledger_seq: int | None = None
    """Its entry's position in that ledger."""


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
    """Finer outcome, if recorded."""


class CriterionRow(Frozen):
    """One criterion evaluation of a criteria-kind decision."""

    judge: str
    """Judge id."""
    criterion_id: str
    """Criterion id."""
    blocker: bool
    """Whether it is a blocker."""
    verdict: str
    """Majority verdict."""
    agreement: float | None
    """Top count / N."""
    agreement_votes: str
    """The same as ``top/N``."""
    gate: str
    """pass, warn or block."""
    sample_verdicts: tuple[str, ...]
    """Per-sample verdicts in dispatch order."""


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
    valid_samples: int | None
    """Samples with a validated answer."""
    samples: int | None
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
    review_version: int | None
    """Review version of this receipt."""
    supersedes: str | None
    """Digest of the receipt it supersedes."""
    superseded_by: int | None = None
    """The next review version of the same artifact in the report, if any (``_rows``)."""
    versions: int = 1
    """How many review versions of the same artifact the report lists."""
    fidelity: str
    """replay_fidelity_level, or ``unstated``."""
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
    criteria: tuple[CriterionRow, ...]
    """criteria: every criterion evaluation."""
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


def coerce_receipts(
    receipts: Sequence[ReportReceipt] | Sequence[Mapping[str, Any]],
) -> list[ReportReceipt]:
    """Accept records or plain dicts; refuse a receipt without a predicate, naming the field."""
    out = []
    for i, item in enumerate(receipts):
        if isinstance(item, ReportReceipt):
            out.append(item)
            continue
        try:
            out.append(ReportReceipt.model_validate(item))
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValidationError(f"receipts[{i}].{where}: {first['msg']}") from exc
    for i, r in enumerate(out):
        if not isinstance(r.statement.get("predicate"), dict):
            raise ValidationError(
                f"receipts[{i}].statement.predicate: missing or not an object; "
                "pass the decoded in-toto statement"
            )
    return out


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


def _criterion_row(raw: Mapping[str, Any]) -> CriterionRow:
    return CriterionRow(
        judge=as_text(raw.get("judge")),
        criterion_id=as_text(raw.get("criterion_id")),
        blocker=raw.get("blocker") is True,
        verdict=as_text(raw.get("verdict")),
        agreement=as_float(raw.get("agreement")),
        agreement_votes=as_text(raw.get("agreement_votes")),
        gate=as_text(raw.get("gate")),
        sample_verdicts=tuple(str(v) for v in as_list(raw.get("sample_verdicts"))),
    )


def _outcome(kind: str, decision: Mapping[str, Any]) -> tuple[str, Tone]:
    word = recorded_outcome_word(decision, kind)
    return (word, tone_of(word)) if word is not None else ("missing", "none")


def _score(kind: str, decision: Mapping[str, Any], policy: Mapping[str, Any]) -> str:
    if kind == "rubric":
        q_bp, q = as_int(decision.get("q_bp")), as_float(decision.get("q"))
        threshold = as_float(as_object(policy.get("rubric")).get("threshold"))
        shown = (
            f"Q {q_bp / 10000:.4f}"
            if q_bp is not None
            else f"Q {q:.4f}"
            if q is not None
            else "no Q"
        )
        return shown + (f" (min {threshold:g})" if threshold is not None else "")
    if kind == "pairwise":
        label, entropy = decision.get("label"), as_float(decision.get("entropy"))
        shown = f"prefers {label}" if label else "no majority"
        return shown + (f", H {entropy:.2f}" if entropy is not None else "")
    if kind == "criteria":
        gates = [as_object(c).get("gate") for c in as_list(decision.get("criteria"))]
        return f"pass {gates.count('pass')}/{len(gates)}"
    if kind == "equivalence":
        if decision.get("equivalence_settled") and not decision.get("samples"):
            return "settled deterministically"
        return f"by judges: {as_text(decision.get('label'), 'no verdict')}"
    return "—"


def _agreement_text(decision: Mapping[str, Any], criteria: Sequence[CriterionRow]) -> str:
    if decision.get("agreement_votes"):
        return str(decision["agreement_votes"])
    scored = [c for c in criteria if c.agreement is not None]
    if scored:
        weakest = min(scored, key=lambda c: c.agreement or 0.0)
        return f"min {weakest.agreement_votes}"
    return "—"


def _reading(kind: str, decision: Mapping[str, Any], score: str, agreement: str) -> str:
    """What the judges said, in a few words: shown under a veto only as not considered."""
    label = decision.get("label")
    if kind == "rubric" and isinstance(label, str):
        return f"{label}, {score.split(' (')[0]}, {agreement}"
    if isinstance(label, str):
        return f"{label}, {agreement}"
    return "" if score in ("—", "no Q") else score


def _judge_cost(policy: Mapping[str, Any], votes: Sequence[VoteRow]) -> PhaseCost:
    """The receipt's judge phase, at the prices pinned in the receipt's own policy."""
    prices = {
        as_text(judge.get("id")): Price(
            in_per_mtok=as_float(judge.get("price_in_per_mtok")),
            out_per_mtok=as_float(judge.get("price_out_per_mtok")),
        )
        for judge in map(as_object, as_list(policy.get("judges")))
    }
    return judge_phase(votes, prices)


def _gate_row(gate: Mapping[str, Any]) -> GateRow:
    return GateRow(
        id=as_text(gate.get("id")),
        outcome=as_text(gate.get("outcome")),
        required=gate.get("required") is True,
        tool=f"{as_text(gate.get('tool'), '')} {as_text(gate.get('tool_version'), '')}".strip(),
        detail=gate_detail(gate),
    )


def artifact_view(index: int, receipt: ReportReceipt) -> ArtifactView:
    """Summarise one receipt (its review versions are related to others by ``_rows``)."""
    predicate = as_object(receipt.statement.get("predicate"))
    campaign, artifact = as_object(predicate.get("campaign")), as_object(predicate.get("artifact"))
    decision, review = as_object(predicate.get("decision")), as_object(predicate.get("review"))
    policy = as_object(campaign.get("policy"))
    kind = as_text(campaign.get("kind") or decision.get("kind") or policy.get("kind"))
    artifact_id = as_text(artifact.get("id"), f"artifact-{index}")
    rubric = as_object(policy.get("rubric"))
    votes = tuple(vote_row(kind, as_object(v), rubric) for v in as_list(predicate.get("votes")))
    criteria = tuple(_criterion_row(as_object(c)) for c in as_list(decision.get("criteria")))
    suite = as_object(policy.get("criteria"))
    outcome, tone = _outcome(kind, decision)
    score, agreement_text = _score(kind, decision, policy), _agreement_text(decision, criteria)
    reading = _reading(kind, decision, score, agreement_text) if votes else ""
    cause = why(kind, policy, predicate, decision, len(votes), reading)
    agreement = as_float(decision.get("agreement"))
    if cause.vetoed_by:
        # The veto decided: Q and agreement would read as the judges backing it.
        score, agreement = "vetoed", None
        agreement_text = "not considered: veto" if votes else "not asked"
    return ArtifactView(
        index=index,
        artifact_id=artifact_id,
        campaign_id=as_text(campaign.get("id")),
        artifact_sha256=as_text(artifact.get("sha256")),
        policy_sha256=as_text(campaign.get("policy_sha256")),
        kind=kind,
        outcome=outcome,
        tone=tone,
        score=score,
        agreement=agreement,
        agreement_text=agreement_text,
        valid_samples=as_int(decision.get("valid_samples")),
        samples=as_int(decision.get("samples")),
        vetoed_by=cause.vetoed_by,
        gates_failed=cause.gates_failed,
        gates_text=cause.gates_text,
        gates=tuple(_gate_row(g) for g in map(as_object, as_list(predicate.get("gates")))),
        reasons=cause.lines,
        review_version=as_int(review.get("version")),
        supersedes=review.get("supersedes") if isinstance(review.get("supersedes"), str) else None,
        fidelity=as_text(predicate.get("replay_fidelity_level"), "unstated"),
        verify_command=verify_command(artifact_id, receipt),
        paths_known=bool(receipt.key_path and (
            receipt.receipt_path or (receipt.ledger_seq is not None and receipt.ledger))),
        ledger_seq=receipt.ledger_seq,
        quorum=as_float(suite.get("blocker_quorum")),
        blockers=tuple(
            str(as_object(c).get("id"))
            for c in as_list(suite.get("items"))
            if as_object(c).get("blocker")
        ),
        votes=votes,
        criteria=criteria,
        judge_cost=_judge_cost(policy, votes),
    )
