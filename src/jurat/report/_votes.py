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
from typing import Any

from jurat.errors import JuratError
from jurat.fold import canonical_preference, eligibility
from jurat.models import Frozen, Rubric, Tone, Vote

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
    sample: int
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
    """The judge's explanation or reason, truncated (untrusted text), from receipts made
    before votes recorded it by its digest (docs/receipt-format.md §6.7); else empty."""
    error: str | None
    """Error kind of an errored sample."""
    latency_ms: int
    """Call latency."""


def _clip(text: str) -> str:
    return text if len(text) <= _EXPLANATION_CHARS else text[: _EXPLANATION_CHARS - 1] + "…"


def _text(answer: Mapping[str, Any], key: str) -> str | None:
    """A string field of a judge's answer (the predicate types the answer as an object)."""
    value = answer.get(key)
    return value if isinstance(value, str) else None


def _rubric(answer: Mapping[str, Any], rubric: Rubric | None) -> tuple[str, str]:
    """The fold's per-sample eligibility (``jurat.fold.eligibility``) and the scores behind it."""
    scores = answer.get("scores")
    scores = scores if isinstance(scores, dict) else {}
    criteria = rubric.criteria if rubric is not None else ()
    # In the rubric's order (the receipt's canonical JSON sorts the keys), then any others.
    order = [c.id for c in criteria]
    keys = [k for k in order if k in scores] + sorted(k for k in scores if k not in order)
    marks = ", ".join(f"{k} {scores[k]}" for k in keys)
    if rubric is None:
        return "unscorable", marks
    try:
        verdict = eligibility(
            {c.id: scores[c.id] for c in criteria},
            weights={c.id: c.weight for c in criteria},
            minima={c.id: c.minimum for c in criteria},
            threshold=rubric.threshold,
        )
    except (JuratError, KeyError, TypeError, ValueError):
        return "unscorable", marks
    summary = f"Q {float(verdict.q):.4f} · {marks}"
    disposition = _text(answer, "disposition")
    if disposition is not None and disposition != verdict.label:
        summary += f" · its disposition field: {disposition} (the fold reads the scores)"
    return verdict.label, summary


def _errored(kind: str) -> tuple[str | None, str]:
    label = _ERROR_LABEL.get(kind)
    effect = f"counts as {label}" if label else "no vote: stays in the denominator"
    return label, effect


def vote_row(kind: str, vote: Vote, rubric: Rubric | None) -> VoteRow:
    """Summarise one recorded vote of a ``kind`` receipt."""
    answer = vote.answer
    error = vote.error
    presented: str | None = None
    explanation = ""
    tone: Tone
    if error is not None or answer is None:
        error = error or "missing answer"
        label, summary = _errored(kind)
        said, tone = f"error: {error}", "hold"
    else:
        # An equivalence judge has read the reference answer; older receipts kept its reason
        # (docs/receipt-format.md §11.2), so no free text of that kind is shown.
        if kind != "equivalence":
            explanation = _clip(_text(answer, "explanation") or _text(answer, "reason") or "")
        if kind == "rubric":
            label, summary = _rubric(answer, rubric)
        elif kind == "pairwise":
            label = canonical_preference(vote)
            presented = _text(answer, "preference") or "—"
            summary = f"canonical; presented {presented}, order {vote.order or '—'}"
        elif kind == "criteria":
            label, summary = _text(answer, "verdict") or "—", ""
        else:
            label = _text(answer, "decision") or "—"
            agree = answer.get("numeric_agree")
            summary = "" if not isinstance(agree, bool) else (
                "the two numbers agree" if agree else "the two numbers differ"
            )
        said = label if label is not None else "no label"
        tone = _SAID_TONE.get(said, "none")
        if kind == "pairwise" and label == "abstain":
            label = None  # an abstention carries no label (seed 000, multi-annotator consensus)
    return VoteRow(
        judge=vote.judge,
        criterion=vote.criterion,
        sample=vote.sample,
        order=vote.order,
        attempts=vote.attempts,
        label=label,
        said=said,
        said_tone=tone,
        presented=presented,
        summary=summary,
        explanation=explanation,
        error=error,
        latency_ms=vote.latency_ms,
    )
