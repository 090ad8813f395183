"""Read receipt predicates into the records the HTML report draws. Pure: no I/O, no clock.

Receipts are read leniently (a missing field shows as a dash) because the report must still
render a receipt from an older or newer jurat; only a statement without a predicate is refused.
Nothing here re-decides anything: outcomes come from the signed ``decision``, and the per-sample
labels use the fold's own mapping (``canonical_preference``, Q from ``q_exact``).

The report is contributor-visible, so it shows no reference material (docs/receipt-format.md,
"Reference material") even from receipts written before jurat kept it out of them: an
equivalence judge's free text is never shown, and the ``equivalence.deterministic`` gate's
detail only when the gate says how it treated ``b``.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Literal

import pydantic

from jurat.errors import JuratError, ValidationError
from jurat.fold import DETERMINISTIC_EQUIVALENCE_GATE, canonical_preference, q_exact
from jurat.models import Frozen, Vote

Tone = Literal["good", "bad", "hold", "none"]

_EXPLANATION_CHARS = 240
_WITHHELD = "not shown: recorded before receipts kept the reference answer out"
_TONES: dict[str, Tone] = {
    "accept": "good",
    "SHIP": "good",
    "reject": "bad",
    "BLOCK": "bad",
    "escalate": "hold",
    "WARN": "hold",
}


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
    tokens_in: int
    """Input tokens the endpoint reported."""
    tokens_out: int
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
    judge_usd: float | None
    """Judge spend from recorded usage and pinned prices; None when any price is unknown."""


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _s(value: Any, default: str = "—") -> str:
    return default if value is None else str(value)


def _i(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _f(value: Any) -> float | None:
    # Python's json reads NaN and Infinity; a chart cannot place them, so they are "not given".
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _l(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else []


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
    """The fold's per-sample eligibility (Q against threshold and minima), with Q for display.

    Compared exactly, as the fold does: a float Q could land on the other side of a threshold.
    """
    scores = _d(answer.get("scores"))
    items = [_d(c) for c in _l(rubric.get("criteria"))]
    threshold = _f(rubric.get("threshold"))
    if threshold is None or not items:
        return "unscorable", ""
    try:
        weights = {str(c.get("id")): float(c.get("weight", 0.0)) for c in items}
        q = q_exact({k: scores[k] for k in weights}, weights)
        low = any(
            c.get("minimum") is not None and scores[str(c.get("id"))] < c["minimum"] for c in items
        )
    except (JuratError, KeyError, TypeError, ValueError):
        return "unscorable", ""
    label = "accept" if q >= Fraction(str(threshold)) and not low else "reject"
    return label, f"Q {float(q):.4f}"


def _pairwise_label(raw: Mapping[str, Any]) -> str | None:
    known = {k: v for k, v in raw.items() if k in Vote.model_fields}
    try:
        return canonical_preference(Vote.model_validate(known))
    except pydantic.ValidationError:
        return None


def _vote_row(kind: str, raw: Mapping[str, Any], rubric: Mapping[str, Any]) -> VoteRow:
    answer = raw.get("answer")
    error = raw.get("error")
    usage = _d(raw.get("usage"))
    label: str | None = None
    presented: str | None = None
    summary = ""
    explanation = ""
    if error is not None or not isinstance(answer, dict):
        error = _s(error, "missing answer")
        # The fold's own error mapping, so the last point of a convergence line is its agreement.
        label = {"criteria": "unsure", "equivalence": "PARSE_ERROR"}.get(kind)
    else:
        # An equivalence judge has read the reference answer; older receipts kept its reason.
        if kind != "equivalence":
            explanation = _clip(_s(answer.get("explanation") or answer.get("reason"), ""))
        if kind == "rubric":
            label, q = _rubric_label(answer, rubric)
            scores = _d(answer.get("scores"))
            marks = " ".join(f"{k[:1]}{v}" for k, v in scores.items())
            summary = f"{label} ({q}; {marks}); judge said {_s(answer.get('disposition'))}"
        elif kind == "pairwise":
            label = _pairwise_label(raw)
            presented = _s(answer.get("preference"))
            summary = f"{_s(label)} canonical (presented {presented}, order {_s(raw.get('order'))})"
        elif kind == "criteria":
            label = _s(answer.get("verdict"))
            summary = label
        else:
            label = _s(answer.get("decision"))
            summary = label
        if kind == "pairwise" and label == "abstain":
            label = None
    return VoteRow(
        judge=_s(raw.get("judge")),
        criterion=_s(raw.get("criterion")),
        sample=_i(raw.get("sample")),
        order=raw.get("order") if isinstance(raw.get("order"), str) else None,
        attempts=_i(raw.get("attempts")) or 1,
        label=label,
        presented=presented,
        summary=summary,
        explanation=explanation,
        error=error,
        latency_ms=_i(raw.get("latency_ms")),
        dispatch_ms=_i(raw.get("dispatch_ms")),
        tokens_in=_i(usage.get("input_tokens")) or 0,
        tokens_out=_i(usage.get("output_tokens")) or 0,
    )


def _criterion_row(raw: Mapping[str, Any]) -> CriterionRow:
    return CriterionRow(
        judge=_s(raw.get("judge")),
        criterion_id=_s(raw.get("criterion_id")),
        blocker=raw.get("blocker") is True,
        verdict=_s(raw.get("verdict")),
        agreement=_f(raw.get("agreement")),
        agreement_votes=_s(raw.get("agreement_votes")),
        gate=_s(raw.get("gate")),
        sample_verdicts=tuple(str(v) for v in _l(raw.get("sample_verdicts"))),
    )


def _outcome(kind: str, decision: Mapping[str, Any]) -> tuple[str, Tone]:
    if kind == "equivalence":
        value = decision.get("equivalent")
        if value is None:
            return "undecided", "hold"
        return ("equivalent", "good") if value else ("different", "bad")
    value = decision.get("rollout") if kind == "criteria" else decision.get("disposition")
    if value is None:
        return "missing", "none"
    return str(value), _TONES.get(str(value), "none")


def _score(kind: str, decision: Mapping[str, Any], policy: Mapping[str, Any]) -> str:
    if kind == "rubric":
        q_bp, q = _i(decision.get("q_bp")), _f(decision.get("q"))
        threshold = _f(_d(policy.get("rubric")).get("threshold"))
        shown = (
            f"Q {q_bp / 10000:.4f}"
            if q_bp is not None
            else f"Q {q:.4f}"
            if q is not None
            else "no Q"
        )
        return shown + (f" (min {threshold:g})" if threshold is not None else "")
    if kind == "pairwise":
        label, entropy = decision.get("label"), _f(decision.get("entropy"))
        shown = f"prefers {label}" if label else "no majority"
        return shown + (f", H {entropy:.2f}" if entropy is not None else "")
    if kind == "criteria":
        gates = [_d(c).get("gate") for c in _l(decision.get("criteria"))]
        return f"pass {gates.count('pass')}/{len(gates)}"
    if kind == "equivalence":
        if decision.get("equivalence_settled") and not decision.get("samples"):
            return "settled deterministically"
        return f"by judges: {_s(decision.get('label'), 'no verdict')}"
    return "—"


def _agreement_text(decision: Mapping[str, Any], criteria: Sequence[CriterionRow]) -> str:
    if decision.get("agreement_votes"):
        return str(decision["agreement_votes"])
    scored = [c for c in criteria if c.agreement is not None]
    if scored:
        weakest = min(scored, key=lambda c: c.agreement or 0.0)
        return f"min {weakest.agreement_votes}"
    return "—"


def _judge_usd(policy: Mapping[str, Any], votes: Iterable[VoteRow]) -> float | None:
    prices = {
        str(_d(j).get("id")): (
            _f(_d(j).get("price_in_per_mtok")),
            _f(_d(j).get("price_out_per_mtok")),
        )
        for j in _l(policy.get("judges"))
    }
    total = 0.0
    for v in votes:
        p_in, p_out = prices.get(v.judge, (None, None))
        if (v.tokens_in and p_in is None) or (v.tokens_out and p_out is None):
            return None
        total += v.tokens_in * (p_in or 0.0) / 1e6 + v.tokens_out * (p_out or 0.0) / 1e6
    return total


def _gate_detail(gate: Mapping[str, Any]) -> str:
    """The gate's detail; an equivalence gate's only if it records how it treated ``b``."""
    detail = _s(gate.get("detail"), "")
    if gate.get("id") == DETERMINISTIC_EQUIVALENCE_GATE and detail:
        if _d(gate.get("data")).get("reference") not in ("b", "none"):
            return _WITHHELD
    return detail


def artifact_view(index: int, receipt: ReportReceipt) -> ArtifactView:
    """Summarise one receipt."""
    predicate = _d(receipt.statement.get("predicate"))
    campaign, artifact = _d(predicate.get("campaign")), _d(predicate.get("artifact"))
    decision, review = _d(predicate.get("decision")), _d(predicate.get("review"))
    policy = _d(campaign.get("policy"))
    kind = _s(campaign.get("kind") or decision.get("kind") or policy.get("kind"))
    artifact_id = _s(artifact.get("id"), f"artifact-{index}")
    rubric = _d(policy.get("rubric"))
    votes = tuple(_vote_row(kind, _d(v), rubric) for v in _l(predicate.get("votes")))
    criteria = tuple(_criterion_row(_d(c)) for c in _l(decision.get("criteria")))
    suite = _d(policy.get("criteria"))
    outcome, tone = _outcome(kind, decision)
    gates = tuple(
        GateRow(
            id=_s(g.get("id")),
            outcome=_s(g.get("outcome")),
            required=g.get("required") is True,
            tool=f"{_s(g.get('tool'), '')} {_s(g.get('tool_version'), '')}".strip(),
            detail=_gate_detail(g),
        )
        for g in map(_d, _l(predicate.get("gates")))
    )
    return ArtifactView(
        index=index,
        artifact_id=artifact_id,
        campaign_id=_s(campaign.get("id")),
        artifact_sha256=_s(artifact.get("sha256")),
        policy_sha256=_s(campaign.get("policy_sha256")),
        kind=kind,
        outcome=outcome,
        tone=tone,
        score=_score(kind, decision, policy),
        agreement=_f(decision.get("agreement")),
        agreement_text=_agreement_text(decision, criteria),
        valid_samples=_i(decision.get("valid_samples")),
        samples=_i(decision.get("samples")),
        gates_failed=tuple(str(g) for g in _l(decision.get("gates_failed"))),
        gates=gates,
        reasons=tuple(str(r) for r in _l(decision.get("reasons"))),
        review_version=_i(review.get("version")),
        supersedes=review.get("supersedes") if isinstance(review.get("supersedes"), str) else None,
        fidelity=_s(predicate.get("replay_fidelity_level"), "unstated"),
        verify_command=verify_command(artifact_id, receipt.receipt_path, receipt.key_path),
        paths_known=bool(receipt.receipt_path and receipt.key_path),
        quorum=_f(suite.get("blocker_quorum")),
        blockers=tuple(
            str(_d(c).get("id")) for c in _l(suite.get("items")) if _d(c).get("blocker")
        ),
        votes=votes,
        criteria=criteria,
        judge_usd=_judge_usd(policy, votes),
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
