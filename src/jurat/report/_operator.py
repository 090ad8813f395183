"""The report's operator section (``jurat report LEDGER --operator``, issue 28): each refused
judge answer with its raw text and failing JSON path, each refused claim extraction likewise,
each ``[subject]`` output next to the verdict on it, and each adjudication with its
rationale, public or not (issue 29); and what a reviewer sees of a job over HTTP (issue 37,
service/_review.py), from the same reader (report/_job_record.py): the hidden tests' run
as the operator's record holds it, every judge's rationale, the duplicate relations and
the review history.

Opt-in, and from a ledger only: the report without it is contributor-visible (it names
only what receipts hold), while this section shows text a judge or the subject model
wrote, which only the operator, who can read the ledger, may see (docs/checks.md, "What
crosses into a trusted output"). All of it passes ``html.escape``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from jurat.judges import RAW_CAP
from jurat.ledger import Entry, Ledger
from jurat.models._base import Frozen
from jurat.report._job_record import (
    JobRecord,
    JudgeAnswer,
    ReviewStep,
    job_record,
    review_step,
)
from jurat.report._report_data import ArtifactView
from jurat.report._report_html import cell, table

__all__ = ["OperatorAdjudication", "OperatorExtraction", "OperatorJob", "OperatorRecord",
           "OperatorSample", "SubjectOutput", "operator_record", "operator_section"]


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


class OperatorJob(Frozen):
    """One reviewed job's checks record, judge answers and duplicate relation."""

    ledger_seq: int
    """The receipt entry of the job's latest review: the row it is shown against."""
    record: JobRecord
    """What the ledger holds about it beyond its receipts."""
    duplicate_of: str | None
    """The job that first submitted its work, as its latest receipt names it."""


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
    jobs: tuple[OperatorJob, ...] = ()
    """Each reviewed job once, in the log order of its first review."""
    reviews: tuple[ReviewStep, ...] = ()
    """Every review version, in log order: the review history."""


def _execution(ledger: Ledger, job: str) -> dict[str, Any] | None:
    received = next(ledger.entries(job_id=job, kind="job_received"), None)
    if received is None:
        return None
    kept = received.payload.get("execution")
    if kept is None and received.payload.get("execution_job"):
        # Issue 27: a judged job names the run's execution job, which holds the output.
        return _execution(ledger, str(received.payload["execution_job"]))
    return kept if isinstance(kept, dict) else None


def _refused(answer: JudgeAnswer, seq: int) -> OperatorSample | None:
    debug = answer.debug
    if debug is None or debug.failure is None:
        return None
    vote, failure = answer.vote, debug.failure
    return OperatorSample(
        ledger_seq=seq, job_id=answer.job_id, judge=vote.judge, criterion=vote.criterion,
        sample=vote.sample, kind=failure.kind, path=failure.path, message=failure.message,
        answer=debug.answer, answer_bytes=debug.answer_bytes,
        answer_capped=debug.answer_capped)


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
    reviews: list[ReviewStep] = []
    jobs: dict[str, JobRecord] = {}
    latest: dict[str, ReviewStep] = {}
    for entry in ledger.entries(kind="receipt"):
        step = review_step(entry)
        reviews.append(step)
        if step.adjudication is not None and "adjudicates" in entry.payload:
            adjudications.append(_adjudication(step))
        # An adjudicated review's own job names the job whose samples it settled.
        job = step.job_id
        if job not in jobs:
            jobs[job] = job_record(ledger, job)
        latest[job] = step
        for answer in jobs[job].answers:
            refused = _refused(answer, entry.seq)
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
    shown = tuple(OperatorJob(ledger_seq=latest[job].ledger_seq, record=record,
                              duplicate_of=latest[job].duplicate_of)
                  for job, record in jobs.items())
    return OperatorRecord(ledger=ledger.url, samples=tuple(samples), outputs=tuple(outputs),
                          adjudications=tuple(adjudications), extractions=tuple(extractions),
                          jobs=shown, reviews=tuple(reviews))


def _adjudication(step: ReviewStep) -> OperatorAdjudication:
    given = step.adjudication
    assert given is not None
    return OperatorAdjudication(ledger_seq=step.ledger_seq, reviewer=given.reviewer,
                                at=given.at, disposition=given.disposition,
                                rationale=given.rationale, public=given.rationale_public)


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
        + _job_tables(record, by_seq, order)
        + "</section>"
    )


def _short(job_id: str) -> str:
    """A job id as a cell: its first 16 hex digits, the whole id in ``title``."""
    return f'<code title="{escape(job_id)}">{escape(job_id[:16])}</code>'


def _said(answer: dict[str, Any] | None) -> str:
    """What a valid answer said, from the vote's own record of it (enums and scores; the
    explanation is a digest there)."""
    if not answer:
        return ""
    words = [f"{k} {answer[k]}" for k in ("disposition", "verdict", "preference", "decision")
             if isinstance(answer.get(k), str)]
    scores = answer.get("scores")
    if isinstance(scores, dict):
        words.append(", ".join(f"{k} {v}" for k, v in scores.items()))
    return escape("; ".join(words))


def _tests(record: dict[str, Any]) -> str:
    """The tests' run in a line: outcome and reason, passed of collected, the indices that
    did not pass."""
    tests = record.get("tests")
    if not isinstance(tests, dict):
        return ""
    line = f"{tests.get('outcome', '')} ({tests.get('reason', '')})"
    if "passed" in tests:
        line += f", {tests.get('passed')} of {tests.get('collected')} passed"
    if tests.get("not_passed"):
        line += f", not passed: {tests['not_passed']}"
    return escape(line)


def _job_tables(record: OperatorRecord, by_seq: dict[int, ArtifactView],
                order: dict[int | None, int]) -> str:
    """What a reviewer sees of each job over HTTP (service/_review.py), offline: the hidden
    tests' run, every judge's rationale, duplicate relations, the review history."""
    jobs = sorted(record.jobs, key=lambda j: order.get(j.ledger_seq, len(order)))
    checks, rationales, duplicates = [], [], []
    for job in jobs:
        review, outcome = _review(by_seq.get(job.ledger_seq))
        row = f'<tr data-ledger-seq="{job.ledger_seq}" data-job="{escape(job.record.job_id)}">'
        found = job.record.checks
        if found is not None:
            run = found.record.get("tests")
            resources = {k: run.get(k) for k in ("wall_s", "cpu_s", "memory_peak_bytes")
                         } if isinstance(run, dict) else {}
            checks.append(
                row + cell(review, "artifact") + cell(outcome, "outcome")
                + cell(_short(job.record.job_id), "job") + cell(_tests(found.record), "tests")
                + cell(escape(", ".join(f"{k} {v}" for k, v in resources.items()
                                        if v is not None)), "resources")
                + cell(f"<details><summary><code>{escape(found.record_sha256[:16])}</code>"
                       "</summary>" + _pre(json.dumps(found.record, indent=1, sort_keys=True),
                                           "check-record") + "</details>", "record") + "</tr>")
        for answer in job.record.answers:
            vote, debug = answer.vote, answer.debug
            if vote.error is not None:
                continue  # a refused answer is in the table of refused answers
            text = answer.rationale if answer.rationale is not None else (
                None if debug is None else debug.answer)
            rationales.append(
                f'<tr data-ledger-seq="{job.ledger_seq}" data-judge="{escape(vote.judge)}">'
                + cell(review, "artifact") + cell(escape(vote.judge))
                + cell(escape(vote.criterion)) + cell(str(vote.sample), "num")
                + cell(_said(vote.answer), "said")
                + cell(_pre(text, "judge-rationale" if answer.rationale is not None
                            else "raw-answer"), "rationale") + "</tr>")
        if job.duplicate_of is not None:
            duplicates.append(row + cell(review, "artifact") + cell(outcome, "outcome")
                              + cell(_short(job.record.job_id), "job")
                              + cell(_short(job.duplicate_of), "duplicate-of") + "</tr>")
    history = []
    for step in sorted(record.reviews, key=lambda r: order.get(r.ledger_seq, len(order))):
        review, outcome = _review(by_seq.get(step.ledger_seq))
        given = step.adjudication
        settled = "the panel" if given is None else (
            f"adjudicated: {escape(given.disposition)} by {escape(given.reviewer)} at "
            f"{escape(given.at)}")
        history.append(f'<tr data-ledger-seq="{step.ledger_seq}" data-review="{step.version}">'
                       + cell(review, "artifact") + cell(outcome, "outcome")
                       + cell(_short(step.job_id), "job") + cell(settled, "settled") + "</tr>")
    return (
        "<h3>The hidden tests' runs</h3>"
        + (table("operator-checks", ["review", "verdict", "job", "tests", "resources",
                                     "operator's record"], checks)
           if checks else '<p class="note">No sandboxed run.</p>')
        + "<h3>Judges' rationales</h3>"
        + (table("operator-rationales", ["review", "judge", "criterion", "sample", "answer",
                                         "rationale (raw answer when it cannot be read)"],
                 rationales)
           if rationales else '<p class="note">No judge answer.</p>')
        + "<h3>Duplicates</h3>"
        + (table("operator-duplicates", ["review", "verdict", "job", "first submitted by job"],
                 duplicates)
           if duplicates else '<p class="note">No job copies another contributor\'s work.</p>')
        + "<h3>Review history</h3>"
        + (table("operator-history", ["review", "verdict", "job", "settled by"], history)
           if history else '<p class="note">No review.</p>')
    )
