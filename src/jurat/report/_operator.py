"""The report's operator section (``jurat report LEDGER --operator``, issue 28): each refused
judge answer with its raw text and failing JSON path, each refused claim extraction likewise,
each ``[subject]`` output next to the verdict on it, and each adjudication with its
rationale, public or not (issue 29).

Opt-in, and from a ledger only: the report without it is contributor-visible (it names
only what receipts hold), while this section shows text a judge or the subject model
wrote, which only the operator, who can read the ledger, may see (docs/checks.md, "What
crosses into a trusted output"). All of it passes ``html.escape``.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from jurat.errors import IntakeError, JuratError
from jurat.judges import RAW_CAP
from jurat.ledger import Entry, Ledger, decode_receipt
from jurat.models._base import Frozen
from jurat.receipts import read_decision_statement
from jurat.report._report_data import ArtifactView
from jurat.report._report_html import cell, table

__all__ = ["OperatorAdjudication", "OperatorExtraction", "OperatorRecord", "OperatorSample",
           "SubjectOutput", "operator_record", "operator_section"]


class OperatorSample(Frozen):
    """One refused judge answer, as the ledger's debug record keeps it."""

    ledger_seq: int
    """The receipt entry of the review it belongs to."""
    job_id: str
    """The ledger job of its sample (for ``jurat sample``)."""
    judge: str
    """Judge id."""
    criterion: str
    """Criterion (or the kind's single slot)."""
    sample: int
    """Sample number k."""
    kind: str
    """The failure's kind."""
    path: str | None
    """JSON path of the failing member, when the check has one."""
    message: str
    """The validator's message (may quote judge text)."""
    answer: str | None
    """The raw answer, capped at ``RAW_CAP`` bytes."""
    answer_bytes: int
    """The answer's whole size."""
    answer_capped: bool
    """Whether ``answer`` was cut."""


class OperatorExtraction(Frozen):
    """A claim extraction whose answer was refused: the job went on without extracted
    claims (runner/_work_claims.py), and this is the only place its answer shows."""

    ledger_seq: int
    """The receipt entry of the review it belongs to."""
    job_id: str
    """The ledger job whose ``claims_extracted`` entry holds it."""
    judge: str
    """The extraction judge's id."""
    kind: str
    """The failure's kind (the receipt's ``inputs.claim_extraction.failure``)."""
    path: str | None
    """JSON path of the failing member, when the check has one."""
    message: str
    """The validator's message (may quote judge text)."""
    answer: str | None
    """The raw answer (or the unusable response body), capped at ``RAW_CAP`` bytes."""
    answer_bytes: int
    """The answer's whole size."""
    answer_capped: bool
    """Whether ``answer`` was cut."""


class SubjectOutput(Frozen):
    """What the ``[subject]`` answered for the output a review judged."""

    ledger_seq: int
    """The receipt entry of that review."""
    output: str | None
    """The subject model's text; None when it produced none."""
    error: str | None
    """Why there is no output, when there is none."""


class OperatorAdjudication(Frozen):
    """A reviewer's adjudication as its receipt records it, rationale included."""

    ledger_seq: int
    """The receipt entry of the adjudicated review."""
    reviewer: str
    """Who adjudicated."""
    at: str
    """When."""
    disposition: str
    """accept or reject."""
    rationale: str
    """Why, in the reviewer's words (shown here whether or not it was marked public)."""
    public: bool
    """Whether the reviewer marked it for the public board."""


class OperatorRecord(Frozen):
    """Everything the operator section shows, read from the ledger."""

    ledger: str
    """The ledger's URL, password hidden (for the ``jurat sample`` commands)."""
    samples: tuple[OperatorSample, ...]
    """Refused answers, by review in log order, then sample order."""
    outputs: tuple[SubjectOutput, ...]
    """Subject outputs, one per review of a ``[subject]`` campaign."""
    adjudications: tuple[OperatorAdjudication, ...] = ()
    """Adjudicated reviews, in log order."""
    extractions: tuple[OperatorExtraction, ...] = ()
    """Refused claim extractions, by review in log order."""


def _execution(ledger: Ledger, job: str) -> dict[str, Any] | None:
    received = next(ledger.entries(job_id=job, kind="job_received"), None)
    if received is None:
        return None
    kept = received.payload.get("execution")
    if kept is None and received.payload.get("execution_job"):
        # Issue 27: a judged job names the run's execution job, which holds the output.
        return _execution(ledger, str(received.payload["execution_job"]))
    return kept if isinstance(kept, dict) else None


def _refused(entry: Entry, seq: int) -> OperatorSample | None:
    debug = entry.payload.get("debug") or {}
    failure = debug.get("failure")
    if failure is None:
        return None
    vote = entry.payload["vote"]
    return OperatorSample(
        ledger_seq=seq, job_id=entry.job_id, judge=str(vote["judge"]),
        criterion=str(vote["criterion"]), sample=int(vote["sample"]),
        kind=str(failure["kind"]), path=failure.get("path"), message=str(failure["message"]),
        answer=debug.get("answer"), answer_bytes=int(debug.get("answer_bytes", 0)),
        answer_capped=bool(debug.get("answer_capped", False)))


def _refused_extraction(entry: Entry, seq: int) -> OperatorExtraction | None:
    failure = entry.payload.get("failure")
    if not isinstance(failure, dict):
        return None
    debug = entry.payload.get("debug") or {}
    found = debug.get("failure") or {}
    return OperatorExtraction(
        ledger_seq=seq, job_id=entry.job_id, judge=str(entry.payload["judge"]),
        kind=str(failure["kind"]), path=failure.get("path"),
        message=str(found.get("message", "")), answer=debug.get("answer"),
        answer_bytes=int(debug.get("answer_bytes", 0)),
        answer_capped=bool(debug.get("answer_capped", False)))


def operator_record(ledger: Ledger) -> OperatorRecord:
    """Read the operator section's rows for every receipt in ``ledger``. The caller opens
    and closes the ledger."""
    samples: list[OperatorSample] = []
    outputs: list[SubjectOutput] = []
    adjudications: list[OperatorAdjudication] = []
    extractions: list[OperatorExtraction] = []
    for entry in ledger.entries(kind="receipt"):
        if "adjudicates" in entry.payload:
            adjudications.append(_adjudication(entry))
        # An adjudicated review's own job names the job whose samples it settled.
        job = str(entry.payload.get("adjudicates", entry.job_id))
        for recorded in ledger.entries(job_id=job, kind="sample_recorded"):
            refused = _refused(recorded, entry.seq)
            if refused is not None:
                samples.append(refused)
        for recorded in ledger.entries(job_id=job, kind="claims_extracted"):
            extraction = _refused_extraction(recorded, entry.seq)
            if extraction is not None:
                extractions.append(extraction)
        execution = _execution(ledger, job)
        if execution is not None:
            outputs.append(SubjectOutput(ledger_seq=entry.seq, output=execution.get("output"),
                                         error=execution.get("error")))
    return OperatorRecord(ledger=ledger.url, samples=tuple(samples), outputs=tuple(outputs),
                          adjudications=tuple(adjudications), extractions=tuple(extractions))


def _adjudication(entry: Entry) -> OperatorAdjudication:
    try:
        statement = read_decision_statement(decode_receipt(entry.payload, seq=entry.seq))
    except JuratError as exc:
        raise IntakeError(f"ledger entry {entry.seq}: not a jurat receipt: {exc}") from exc
    given = statement.predicate.review.adjudication
    if given is None:
        raise IntakeError(f"ledger entry {entry.seq}: names the job it adjudicates, but its "
                          "receipt records no adjudication")
    return OperatorAdjudication(ledger_seq=entry.seq, reviewer=given.reviewer, at=given.at,
                                disposition=given.disposition, rationale=given.rationale,
                                public=given.rationale_public)


def _pre(text: str | None, cls: str) -> str:
    return "<em>no text</em>" if text is None else f'<pre class="{cls}">{escape(text)}</pre>'


def _review(view: ArtifactView | None) -> tuple[str, str]:
    if view is None:
        return "", ""
    return (escape(view.artifact_id) + f" v{view.review_version}",
            f'<span class="badge tone-{view.tone}">{escape(view.outcome)}</span>')


def operator_section(record: OperatorRecord, views: Sequence[ArtifactView]) -> str:
    """The section's markup; ``views`` are the report's rows, in display order."""
    by_seq = {v.ledger_seq: v for v in views if v.ledger_seq is not None}
    order = {v.ledger_seq: i for i, v in enumerate(views)}
    outputs = []
    for out in sorted(record.outputs, key=lambda o: order.get(o.ledger_seq, len(order))):
        view = by_seq.get(out.ledger_seq)
        review, outcome = _review(view)
        outputs.append(
            f'<tr data-ledger-seq="{out.ledger_seq}">' + cell(review, "artifact")
            + cell(outcome, "outcome") + cell(_pre(out.output, "subject-output"), "output")
            + cell(escape(out.error or ""), "error") + "</tr>")
    samples = []
    for s in sorted(record.samples, key=lambda o: order.get(o.ledger_seq, len(order))):
        review, _ = _review(by_seq.get(s.ledger_seq))
        cut = f" (cut at {RAW_CAP} bytes)" if s.answer_capped else ""
        command = (f"jurat sample {record.ledger} {s.job_id} --judge {s.judge} "
                   f"--criterion {s.criterion} --sample {s.sample}")
        samples.append(
            f'<tr data-ledger-seq="{s.ledger_seq}" data-kind="{escape(s.kind)}">'
            + cell(review, "artifact") + cell(escape(s.judge)) + cell(escape(s.criterion))
            + cell(str(s.sample), "num") + cell(escape(s.kind), "kind")
            + cell(f"<code>{escape(s.path or '')}</code>", "path")
            + cell(_pre(s.message, "failure-message"), "message")
            + cell(_pre(s.answer, "raw-answer") + f"{s.answer_bytes} bytes{cut}", "answer")
            + cell(f'<code class="sample-command">{escape(command)}</code>', "command")
            + "</tr>")
    extractions = []
    for x in sorted(record.extractions, key=lambda o: order.get(o.ledger_seq, len(order))):
        review, outcome = _review(by_seq.get(x.ledger_seq))
        cut = f" (cut at {RAW_CAP} bytes)" if x.answer_capped else ""
        extractions.append(
            f'<tr data-ledger-seq="{x.ledger_seq}" data-kind="{escape(x.kind)}">'
            + cell(review, "artifact") + cell(outcome, "outcome") + cell(escape(x.judge))
            + cell(escape(x.kind), "kind") + cell(f"<code>{escape(x.path or '')}</code>", "path")
            + cell(_pre(x.message, "failure-message"), "message")
            + cell(_pre(x.answer, "raw-answer") + f"{x.answer_bytes} bytes{cut}", "answer")
            + "</tr>")
    adjudications = []
    for a in sorted(record.adjudications, key=lambda o: order.get(o.ledger_seq, len(order))):
        review, outcome = _review(by_seq.get(a.ledger_seq))
        adjudications.append(
            f'<tr data-ledger-seq="{a.ledger_seq}" data-public="{"yes" if a.public else "no"}">'
            + cell(review, "artifact") + cell(outcome, "outcome") + cell(escape(a.reviewer))
            + cell(escape(a.at)) + cell("public" if a.public else "private", "published")
            + cell(_pre(a.rationale, "operator-rationale"), "rationale") + "</tr>")
    return (
        '<section id="operator"><h2>Operator: judge answers and subject outputs</h2>'
        '<p class="note">For the operator only: this section shows text written by judges '
        "and by the subject model, which no receipt holds; do not publish a page with it. "
        f"Answers are kept up to {RAW_CAP} bytes.</p>"
        "<h3>Subject outputs</h3>"
        + (table("subject-outputs", ["review", "verdict", "subject output", "error"], outputs)
           if outputs else '<p class="note">No [subject] outputs.</p>')
        + "<h3>Refused judge answers</h3>"
        + (table("operator-samples", ["review", "judge", "criterion", "sample", "failure",
                                      "JSON path", "message", "raw answer", "request"],
                 samples)
           if samples else '<p class="note">No refused judge answer.</p>')
        + "<h3>Refused claim extractions</h3>"
        + (table("operator-extractions", ["review", "verdict", "judge", "failure",
                                          "JSON path", "message", "raw answer"], extractions)
           if extractions else '<p class="note">No refused claim extraction.</p>')
        + "<h3>Adjudications</h3>"
        + (table("operator-adjudications", ["review", "verdict", "reviewer", "at",
                                            "rationale on the board", "rationale"],
                 adjudications)
           if adjudications else '<p class="note">No adjudication.</p>')
        + "</section>"
    )
