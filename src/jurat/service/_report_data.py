"""Read receipt predicates into the records the HTML report draws. Pure: no I/O, no clock.

Receipts are read leniently (a missing field shows as a dash) because the report must still
render a receipt from an older or newer jurat; only a statement without a predicate is refused.
Nothing here re-decides anything: outcomes come from the signed ``decision``, and the per-sample
labels use the fold's own mapping (``canonical_preference``, Q from ``rubric_score``).
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import pydantic
from pydantic import Field

from jurat.errors import JuratError, ValidationError
from jurat.fold import canonical_preference, rubric_score
from jurat.models import Frozen, Vote

Tone = Literal["good", "bad", "hold", "none"]
PHASES = ("trigger", "execution", "judge")

_EXPLANATION_CHARS = 240
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
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


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
    """The fold's per-sample eligibility (Q against threshold and minima), with Q for display."""
    scores = _d(answer.get("scores"))
    items = [_d(c) for c in rubric.get("criteria") or ()]
    try:
        weights = {str(c.get("id")): float(c.get("weight", 0.0)) for c in items}
        q = rubric_score({k: scores[k] for k in weights}, weights)
        low = any(
            c.get("minimum") is not None and scores[str(c.get("id"))] < c["minimum"] for c in items
        )
    except (JuratError, KeyError, TypeError, ValueError):
        return "unscorable", ""
    threshold = _f(rubric.get("threshold"))
    label = "accept" if threshold is not None and q >= threshold and not low else "reject"
    return label, f"Q {q:.3f}"


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
        sample_verdicts=tuple(str(v) for v in raw.get("sample_verdicts") or ()),
    )


def _outcome(kind: str, decision: Mapping[str, Any]) -> tuple[str, Tone]:
    if kind == "equivalence" or "equivalent" in decision:
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
        shown = f"Q {q_bp / 10000:.4f}" if q_bp is not None else f"Q {q:.4f}" if q else "no Q"
        return shown + (f" (min {threshold:g})" if threshold is not None else "")
    if kind == "pairwise":
        label, entropy = decision.get("label"), _f(decision.get("entropy"))
        shown = f"prefers {label}" if label else "no majority"
        return shown + (f", H {entropy:.2f}" if entropy is not None else "")
    if kind == "criteria":
        gates = [_d(c).get("gate") for c in decision.get("criteria") or ()]
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
        for j in policy.get("judges") or ()
    }
    total = 0.0
    for v in votes:
        p_in, p_out = prices.get(v.judge, (None, None))
        if (v.tokens_in and p_in is None) or (v.tokens_out and p_out is None):
            return None
        total += v.tokens_in * (p_in or 0.0) / 1e6 + v.tokens_out * (p_out or 0.0) / 1e6
    return total


def artifact_view(index: int, receipt: ReportReceipt) -> ArtifactView:
    """Summarise one receipt."""
    predicate = _d(receipt.statement.get("predicate"))
    campaign, artifact = _d(predicate.get("campaign")), _d(predicate.get("artifact"))
    decision, review = _d(predicate.get("decision")), _d(predicate.get("review"))
    policy = _d(campaign.get("policy"))
    kind = _s(campaign.get("kind") or decision.get("kind") or policy.get("kind"))
    artifact_id = _s(artifact.get("id"), f"artifact-{index}")
    rubric = _d(policy.get("rubric"))
    votes = tuple(_vote_row(kind, _d(v), rubric) for v in predicate.get("votes") or ())
    criteria = tuple(_criterion_row(_d(c)) for c in decision.get("criteria") or ())
    suite = _d(policy.get("criteria"))
    outcome, tone = _outcome(kind, decision)
    gates = tuple(
        GateRow(
            id=_s(g.get("id")),
            outcome=_s(g.get("outcome")),
            required=g.get("required") is True,
            tool=f"{_s(g.get('tool'), '')} {_s(g.get('tool_version'), '')}".strip(),
            detail=_s(g.get("detail"), ""),
        )
        for g in map(_d, predicate.get("gates") or ())
    )
    return ArtifactView(
        index=index,
        artifact_id=artifact_id,
        campaign_id=_s(campaign.get("id")),
        kind=kind,
        outcome=outcome,
        tone=tone,
        score=_score(kind, decision, policy),
        agreement=_f(decision.get("agreement")),
        agreement_text=_agreement_text(decision, criteria),
        valid_samples=_i(decision.get("valid_samples")),
        samples=_i(decision.get("samples")),
        gates_failed=tuple(str(g) for g in decision.get("gates_failed") or ()),
        gates=gates,
        reasons=tuple(str(r) for r in decision.get("reasons") or ()),
        review_version=_i(review.get("version")),
        supersedes=review.get("supersedes") if isinstance(review.get("supersedes"), str) else None,
        fidelity=_s(predicate.get("replay_fidelity_level"), "unstated"),
        verify_command=verify_command(artifact_id, receipt.receipt_path, receipt.key_path),
        paths_known=bool(receipt.receipt_path and receipt.key_path),
        quorum=_f(suite.get("blocker_quorum")),
        blockers=tuple(
            str(_d(c).get("id")) for c in suite.get("items") or () if _d(c).get("blocker")
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


def running_agreement(labels: Sequence[str | None]) -> tuple[float, ...]:
    """Agreement so far after each sample: the top label's count over k, unlabelled samples
    (errors, abstentions) staying in k so that failures weaken agreement, never raise it."""
    counts: Counter[str] = Counter()
    out = []
    for k, label in enumerate(labels, start=1):
        if label is not None:
            counts[label] += 1
        out.append(max(counts.values(), default=0) / k)
    return tuple(out)


class OrderRow(Frozen):
    """Order-reversal consistency of one pairwise judge over all artifacts."""

    judge: str
    """Judge id."""
    items: int
    """Artifacts where the judge answered under both AB and BA."""
    consistent: int
    """Of those, artifacts whose majority canonical preference is the same under both orders."""
    pairs: int
    """(AB sample, BA sample) pairs with a label on both sides."""
    agreeing_pairs: int
    """Of those, pairs with the same canonical preference."""
    first_position: int
    """A/B answers that picked the candidate presented first."""
    ab_answers: int
    """A/B answers (ties, abstentions and errors excluded)."""


def _plurality(labels: Counter[str]) -> str | None:
    ranked = labels.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def order_reversal(views: Sequence[ArtifactView]) -> list[OrderRow]:
    """Per judge: does the canonical preference survive swapping the presentation order?"""
    acc: dict[str, Counter[str]] = {}
    for view in views:
        if view.kind != "pairwise":
            continue
        sides: dict[str, dict[str, Counter[str]]] = {}
        for v in view.votes:
            row = acc.setdefault(v.judge, Counter())
            if v.presented in ("A", "B"):
                row["ab_answers"] += 1
                row["first_position"] += v.presented == "A"
            if v.label is not None and v.order in ("AB", "BA"):
                sides.setdefault(v.judge, {"AB": Counter(), "BA": Counter()})[v.order][v.label] += 1
        for judge, side in sides.items():
            ab, ba = side["AB"], side["BA"]
            if not ab or not ba:
                continue
            row = acc[judge]
            row["items"] += 1
            top = _plurality(ab)
            row["consistent"] += top is not None and top == _plurality(ba)
            row["pairs"] += ab.total() * ba.total()
            row["agreeing_pairs"] += sum(n * ba[label] for label, n in ab.items())
    fields = ("items", "consistent", "pairs", "agreeing_pairs", "first_position", "ab_answers")
    return [OrderRow(judge=j, **{f: row[f] for f in fields}) for j, row in sorted(acc.items())]


class PhaseInput(Frozen):
    """What a caller reports for one phase in the ``cost`` argument."""

    calls: int = Field(ge=0)
    """Calls made (transport attempts included)."""
    tokens_in: int = Field(0, ge=0)
    """Input tokens."""
    tokens_out: int = Field(0, ge=0)
    """Output tokens."""
    usd: float | None = Field(None, ge=0)
    """Spend in USD; None when unknown."""


class PhaseCost(Frozen):
    """One row of the cost table."""

    phase: str
    """trigger, execution, judge, or total."""
    calls: int | None
    """Calls; None when the phase was not recorded."""
    tokens_in: int | None
    """Input tokens; None when not recorded."""
    tokens_out: int | None
    """Output tokens; None when not recorded."""
    usd: float | None
    """USD; None when unknown."""
    source: str
    """Where the numbers come from."""


def phase_costs(views: Sequence[ArtifactView], cost: Mapping[str, Any] | None) -> list[PhaseCost]:
    """Cost per phase from ``cost``; the judge phase, when not given, from the votes' usage.

    Only the judge phase multiplies with N (seed 001 §5), which is why it is the one phase the
    receipts themselves can account for.
    """
    given: dict[str, PhaseInput] = {}
    for phase, value in (cost or {}).items():
        if phase not in PHASES:
            raise ValidationError(f"cost.{phase}: unknown phase; use one of {list(PHASES)}")
        try:
            given[phase] = PhaseInput.model_validate(value)
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValidationError(f"cost.{phase}.{where}: {first['msg']}") from exc
    rows = []
    for phase in PHASES:
        if phase in given:
            g = given[phase]
            rows.append(PhaseCost(phase=phase, **g.model_dump(), source="given"))
        elif phase == "judge":
            votes = [v for view in views for v in view.votes]
            spends = [view.judge_usd for view in views]
            rows.append(
                PhaseCost(
                    phase=phase,
                    calls=sum(v.attempts for v in votes),
                    tokens_in=sum(v.tokens_in for v in votes),
                    tokens_out=sum(v.tokens_out for v in votes),
                    usd=None if None in spends else sum(s or 0.0 for s in spends),
                    source=f"summed over {len(votes)} recorded votes",
                )
            )
        else:
            rows.append(
                PhaseCost(
                    phase=phase,
                    calls=None,
                    tokens_in=None,
                    tokens_out=None,
                    usd=None,
                    source="not recorded",
                )
            )
    known = [r for r in rows if r.calls is not None]
    rows.append(
        PhaseCost(
            phase="total",
            calls=sum(r.calls or 0 for r in known),
            tokens_in=sum(r.tokens_in or 0 for r in known),
            tokens_out=sum(r.tokens_out or 0 for r in known),
            usd=None if any(r.usd is None for r in known) else sum(r.usd or 0.0 for r in known),
            source=" + ".join(r.phase for r in known) or "nothing recorded",
        )
    )
    return rows
