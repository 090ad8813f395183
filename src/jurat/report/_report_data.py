"""Read receipt predicates into the records the HTML report draws. Pure: no I/O, no clock.

Receipts are read leniently (``_lenient``: a missing field shows as a dash) because the report
must still render a receipt from an older or newer jurat; only a statement without a predicate
is refused. Nothing here re-decides anything: outcomes come from the signed ``decision`` and
are named by ``jurat.models.recorded_outcome_word``, the per-sample labels use the fold's own rules
(``canonical_preference``, ``eligibility``), and cost uses ``jurat.judges.judge_phase``.

The report is contributor-visible, so it shows no reference material (docs/receipt-format.md,
"Reference material") even from receipts written before jurat kept it out of them: an
equivalence judge's free text is never shown, and the ``equivalence.deterministic`` gate's
detail only when the gate says how it treated ``b``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import pydantic

from jurat.errors import JuratError, ValidationError
from jurat.fold import canonical_preference, eligibility
from jurat.judges import PhaseCost, Price, judge_phase
from jurat.models import (
    GATE_EQUIVALENCE_DETERMINISTIC,
    Frozen,
    Tone,
    Vote,
    recorded_outcome_word,
    tone_of,
)
from jurat.report._lenient import as_float, as_int, as_list, as_object, as_text

_EXPLANATION_CHARS = 240
_WITHHELD = "not shown: recorded before receipts kept the reference answer out"


class ReportReceipt(Frozen):
    """One receipt as the report reads it."""

    statement: dict[str, Any]
    """The in-toto Statement v1 (the decoded DSSE payload)."""
    receipt_path: str | None = None
    """Where the Sigstore bundle lies, for the verify command; None when unknown."""
    key_path: str | None = None
    """The public key that verifies it; None when unknown."""


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


class VoteRow(Frozen):
    """One recorded judge sample, summarised for display."""

    judge: str
    """Judge id."""
    criterion: str
    """Criterion id, or rubric / pairwise / equivalence."""
    sample: int | None
    """Sample index k."""
    order: str | None
    """Presentation order (pairwise)."""
    attempts: int
    """Transport attempts, i.e. calls made for this sample."""
    label: str | None
    """The label the fold reads from this sample (canonical for pairwise); None if none."""
    presented: str | None
    """Pairwise: the preference as presented, before restoring canonical order."""
    summary: str
    """Short answer summary."""
    explanation: str
    """The judge's explanation or reason, truncated (untrusted text)."""
    error: str | None
    """Error kind of an errored sample."""
    latency_ms: int | None
    """Call latency."""
    dispatch_ms: int | None
    """Dispatch time since job start."""
    input_tokens: int
    """Input tokens the endpoint reported."""
    output_tokens: int
    """Output tokens the endpoint reported."""


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
    """Q (rubric), preference (pairwise), pass fraction (criteria) or how it was settled."""
    agreement: float | None
    """Decision-level agreement among independent votes, if the kind has one."""
    agreement_text: str
    """Agreement as shown, e.g. ``2/3``; for criteria the weakest evaluation."""
    valid_samples: int | None
    """Samples with a validated answer."""
    samples: int | None
    """All samples recorded."""
    gates_failed: tuple[str, ...]
    """Required gates that did not pass."""
    gates: tuple[GateRow, ...]
    """Every recorded gate."""
    reasons: tuple[str, ...]
    """The decision's reasons."""
    review_version: int | None
    """Review version of this receipt."""
    supersedes: str | None
    """Digest of the receipt it supersedes."""
    superseded: bool = False
    """Whether a later review of the same artifact is in the report."""
    fidelity: str
    """replay_fidelity_level, or ``unstated``."""
    verify_command: str
    """The verify command for this receipt."""
    paths_known: bool
    """Whether the command names real paths rather than placeholders."""
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


def _clip(text: str) -> str:
    return text if len(text) <= _EXPLANATION_CHARS else text[: _EXPLANATION_CHARS - 1] + "…"


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


def verify_command(artifact_id: str, receipt_path: str | None, key_path: str | None) -> str:
    """The exact command; placeholders (unquoted, visibly so) where a path is unknown."""
    receipt = shlex.quote(receipt_path) if receipt_path else f"<out>/{artifact_id}.sigstore.json"
    key = shlex.quote(key_path) if key_path else "<pub>"
    return f"jurat verify {receipt} --key {key}"


def _rubric_label(answer: Mapping[str, Any], rubric: Mapping[str, Any]) -> tuple[str, str]:
    """The fold's per-sample eligibility (``jurat.fold.eligibility``), with Q for display."""
    scores = as_object(answer.get("scores"))
    items = [as_object(c) for c in as_list(rubric.get("criteria"))]
    threshold = as_float(rubric.get("threshold"))
    if threshold is None or not items:
        return "unscorable", ""
    try:
        weights = {str(c.get("id")): float(c.get("weight", 0.0)) for c in items}
        verdict = eligibility(
            {k: scores[k] for k in weights},
            weights=weights,
            minima={str(c.get("id")): c.get("minimum") for c in items},
            threshold=threshold,
        )
    except (JuratError, KeyError, TypeError, ValueError):
        return "unscorable", ""
    return verdict.label, f"Q {float(verdict.q):.4f}"


def _pairwise_label(raw: Mapping[str, Any]) -> str | None:
    known = {k: v for k, v in raw.items() if k in Vote.model_fields}
    try:
        return canonical_preference(Vote.model_validate(known))
    except pydantic.ValidationError:
        return None


def _vote_row(kind: str, raw: Mapping[str, Any], rubric: Mapping[str, Any]) -> VoteRow:
    answer = raw.get("answer")
    error = raw.get("error")
    usage = as_object(raw.get("usage"))
    label: str | None = None
    presented: str | None = None
    summary = ""
    explanation = ""
    if error is not None or not isinstance(answer, dict):
        error = as_text(error, "missing answer")
        # The fold's own error mapping, so the last point of a convergence line is its agreement.
        label = {"criteria": "unsure", "equivalence": "PARSE_ERROR"}.get(kind)
    else:
        # An equivalence judge has read the reference answer; older receipts kept its reason.
        if kind != "equivalence":
            explanation = _clip(as_text(answer.get("explanation") or answer.get("reason"), ""))
        if kind == "rubric":
            label, q = _rubric_label(answer, rubric)
            scores = as_object(answer.get("scores"))
            marks = " ".join(f"{k[:1]}{v}" for k, v in scores.items())
            summary = f"{label} ({q}; {marks}); judge said {as_text(answer.get('disposition'))}"
        elif kind == "pairwise":
            label = _pairwise_label(raw)
            presented = as_text(answer.get("preference"))
            order = as_text(raw.get("order"))
            summary = f"{as_text(label)} canonical (presented {presented}, order {order})"
        elif kind == "criteria":
            label = as_text(answer.get("verdict"))
            summary = label
        else:
            label = as_text(answer.get("decision"))
            summary = label
        if kind == "pairwise" and label == "abstain":
            label = None
    return VoteRow(
        judge=as_text(raw.get("judge")),
        criterion=as_text(raw.get("criterion")),
        sample=as_int(raw.get("sample")),
        order=raw.get("order") if isinstance(raw.get("order"), str) else None,
        attempts=as_int(raw.get("attempts")) or 1,
        label=label,
        presented=presented,
        summary=summary,
        explanation=explanation,
        error=error,
        latency_ms=as_int(raw.get("latency_ms")),
        dispatch_ms=as_int(raw.get("dispatch_ms")),
        input_tokens=as_int(usage.get("input_tokens")) or 0,
        output_tokens=as_int(usage.get("output_tokens")) or 0,
    )


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


def _gate_detail(gate: Mapping[str, Any]) -> str:
    """The gate's detail; an equivalence gate's only if it records how it treated ``b``."""
    detail = as_text(gate.get("detail"), "")
    if gate.get("id") == GATE_EQUIVALENCE_DETERMINISTIC and detail:
        if as_object(gate.get("data")).get("reference") not in ("b", "none"):
            return _WITHHELD
    return detail


def artifact_view(index: int, receipt: ReportReceipt) -> ArtifactView:
    """Summarise one receipt."""
    predicate = as_object(receipt.statement.get("predicate"))
    campaign, artifact = as_object(predicate.get("campaign")), as_object(predicate.get("artifact"))
    decision, review = as_object(predicate.get("decision")), as_object(predicate.get("review"))
    policy = as_object(campaign.get("policy"))
    kind = as_text(campaign.get("kind") or decision.get("kind") or policy.get("kind"))
    artifact_id = as_text(artifact.get("id"), f"artifact-{index}")
    rubric = as_object(policy.get("rubric"))
    votes = tuple(_vote_row(kind, as_object(v), rubric) for v in as_list(predicate.get("votes")))
    criteria = tuple(_criterion_row(as_object(c)) for c in as_list(decision.get("criteria")))
    suite = as_object(policy.get("criteria"))
    outcome, tone = _outcome(kind, decision)
    gates = tuple(
        GateRow(
            id=as_text(g.get("id")),
            outcome=as_text(g.get("outcome")),
            required=g.get("required") is True,
            tool=f"{as_text(g.get('tool'), '')} {as_text(g.get('tool_version'), '')}".strip(),
            detail=_gate_detail(g),
        )
        for g in map(as_object, as_list(predicate.get("gates")))
    )
    return ArtifactView(
        index=index,
        artifact_id=artifact_id,
        campaign_id=as_text(campaign.get("id")),
        artifact_sha256=as_text(artifact.get("sha256")),
        policy_sha256=as_text(campaign.get("policy_sha256")),
        kind=kind,
        outcome=outcome,
        tone=tone,
        score=_score(kind, decision, policy),
        agreement=as_float(decision.get("agreement")),
        agreement_text=_agreement_text(decision, criteria),
        valid_samples=as_int(decision.get("valid_samples")),
        samples=as_int(decision.get("samples")),
        gates_failed=tuple(str(g) for g in as_list(decision.get("gates_failed"))),
        gates=gates,
        reasons=tuple(str(r) for r in as_list(decision.get("reasons"))),
        review_version=as_int(review.get("version")),
        supersedes=review.get("supersedes") if isinstance(review.get("supersedes"), str) else None,
        fidelity=as_text(predicate.get("replay_fidelity_level"), "unstated"),
        verify_command=verify_command(artifact_id, receipt.receipt_path, receipt.key_path),
        paths_known=bool(receipt.receipt_path and receipt.key_path),
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


def artifact_views(receipts: Sequence[ReportReceipt]) -> list[ArtifactView]:
    """All views, with earlier reviews of an artifact marked superseded by later ones."""
    views = [artifact_view(i, r) for i, r in enumerate(receipts)]
    latest: dict[tuple[str, str], int] = {}
    for v in views:
        key = (v.campaign_id, v.artifact_id)
        latest[key] = max(latest.get(key, -1), v.review_version or 0)
    return [
        v.model_copy(
            update={"superseded": (v.review_version or 0) < latest[(v.campaign_id, v.artifact_id)]}
        )
        for v in views
    ]
