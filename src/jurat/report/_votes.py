"""One recorded judge sample as the report shows it: what *that* sample said.

Every vote row names the sample's own label, the one the fold reads from it
(docs/report.md, "How the numbers are derived"), never the decision's word: a rubric
sample is *accept* or *reject* by its own scores (``jurat.fold.eligibility``), a pairwise
sample is its canonical preference (``jurat.fold.canonical_preference``), a criteria sample
its verdict, an equivalence sample its decision, and an errored sample its error kind.

A rubric answer also carries the judge's own ``disposition``, which the fold does not read
(the validator forces ``reject`` when the hard gates failed, whatever the scores say);
showing it as the sample's word made every vote of a vetoed artifact read "reject". It is
shown only beside the label, and only when it differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import pydantic

from jurat.errors import JuratError
from jurat.fold import canonical_preference, eligibility
from jurat.models import Frozen, Tone, Vote
from jurat.report._lenient import as_float, as_int, as_list, as_object, as_text

__all__ = ["VoteRow", "vote_row"]

_EXPLANATION_CHARS = 240

#: The fold's reading of an errored sample, per kind (seed 001 §1: unsure; seed 002 §3:
#: PARSE_ERROR); rubric and pairwise read no label from it.
_ERROR_LABEL = {"criteria": "unsure", "equivalence": "PARSE_ERROR"}

#: How a sample's own label reads; labels not named here are neutral (A, B, tie, unsure).
_SAID_TONE: dict[str, Tone] = {
    "accept": "good",
    "yes": "good",
    "EQUIVALENT": "good",
    "reject": "bad",
    "no": "bad",
    "DIFFERENT": "bad",
}


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
    said: str
    """What this sample said, in one word or two: its label, ``abstain``, or ``error: kind``."""
    said_tone: Tone
    """How ``said`` reads: good, bad, hold (errors) or none."""
    presented: str | None
    """Pairwise: the preference as presented, before restoring canonical order."""
    summary: str
    """The answer behind ``said``: Q and scores, the presented preference, the error's effect."""
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


def _clip(text: str) -> str:
    return text if len(text) <= _EXPLANATION_CHARS else text[: _EXPLANATION_CHARS - 1] + "…"


def _rubric(answer: Mapping[str, Any], rubric: Mapping[str, Any]) -> tuple[str, str]:
    """The fold's per-sample eligibility (``jurat.fold.eligibility``) and the scores behind it."""
    scores = as_object(answer.get("scores"))
    items = [as_object(c) for c in as_list(rubric.get("criteria"))]
    # In the rubric's order (the receipt's canonical JSON sorts the keys), then any others.
    order = [str(c.get("id")) for c in items]
    keys = [k for k in order if k in scores] + sorted(k for k in scores if k not in order)
    marks = ", ".join(f"{k} {scores[k]}" for k in keys)
    threshold = as_float(rubric.get("threshold"))
    if threshold is None or not items:
        return "unscorable", marks
    try:
        weights = {str(c.get("id")): float(c.get("weight", 0.0)) for c in items}
        verdict = eligibility(
            {k: scores[k] for k in weights},
            weights=weights,
            minima={str(c.get("id")): c.get("minimum") for c in items},
            threshold=threshold,
        )
    except (JuratError, KeyError, TypeError, ValueError):
        return "unscorable", marks
    summary = f"Q {float(verdict.q):.4f} · {marks}"
    disposition = answer.get("disposition")
    if isinstance(disposition, str) and disposition != verdict.label:
        summary += f" · its disposition field: {disposition} (the fold reads the scores)"
    return verdict.label, summary


def _pairwise(raw: Mapping[str, Any]) -> str | None:
    known = {k: v for k, v in raw.items() if k in Vote.model_fields}
    try:
        return canonical_preference(Vote.model_validate(known))
    except pydantic.ValidationError:
        return None


def _errored(kind: str, error: str) -> tuple[str | None, str]:
    label = _ERROR_LABEL.get(kind)
    effect = f"counts as {label}" if label else "no vote: stays in the denominator"
    return label, effect


def vote_row(kind: str, raw: Mapping[str, Any], rubric: Mapping[str, Any]) -> VoteRow:
    """Summarise one recorded vote of a ``kind`` receipt."""
    answer = raw.get("answer")
    error = raw.get("error")
    usage = as_object(raw.get("usage"))
    presented: str | None = None
    explanation = ""
    if error is not None or not isinstance(answer, dict):
        error = as_text(error, "missing answer")
        label, summary = _errored(kind, error)
        said, tone = f"error: {error}", "hold"
    else:
        # An equivalence judge has read the reference answer; older receipts kept its reason
        # (docs/receipt-format.md §11.2), so no free text of that kind is shown.
        if kind != "equivalence":
            explanation = _clip(as_text(answer.get("explanation") or answer.get("reason"), ""))
        if kind == "rubric":
            label, summary = _rubric(answer, rubric)
        elif kind == "pairwise":
            label = _pairwise(raw)
            presented = as_text(answer.get("preference"))
            summary = f"canonical; presented {presented}, order {as_text(raw.get('order'))}"
        elif kind == "criteria":
            label, summary = as_text(answer.get("verdict")), ""
        else:
            label = as_text(answer.get("decision"))
            agree = answer.get("numeric_agree")
            summary = "" if not isinstance(agree, bool) else (
                "the two numbers agree" if agree else "the two numbers differ"
            )
        said = as_text(label, "no label")
        tone = _SAID_TONE.get(said, "none")
        if kind == "pairwise" and label == "abstain":
            label = None  # an abstention carries no label (seed 000, multi-annotator consensus)
    return VoteRow(
        judge=as_text(raw.get("judge")),
        criterion=as_text(raw.get("criterion")),
        sample=as_int(raw.get("sample")),
        order=raw.get("order") if isinstance(raw.get("order"), str) else None,
        attempts=as_int(raw.get("attempts")) or 1,
        label=label,
        said=said,
        said_tone=cast(Tone, tone),
        presented=presented,
        summary=summary,
        explanation=explanation,
        error=error,
        latency_ms=as_int(raw.get("latency_ms")),
        dispatch_ms=as_int(raw.get("dispatch_ms")),
        input_tokens=as_int(usage.get("input_tokens")) or 0,
        output_tokens=as_int(usage.get("output_tokens")) or 0,
    )
