"""The reviewer's view of a job: ``GET /v1/jobs/{job_id}/review`` (docs/service.md, "The
reviewer's view"): the work, the contributor's explanation, the task, the gates and the
operator's record of the hidden tests' run, every judge's answer and rationale, the
duplicate relation and the artifact's review history, in one JSON document.

Threat model. This is the one answer of the service that carries text the judged party or
a judge endpoint wrote (docs/design.md, "Trust boundaries"), so it is for the roles that
decide on it, operator and reviewer (``REVIEW_ROLES``, the rule written here once): a
contributor or a verifier token is refused (403) whoever's job it names and whether or not
it exists, and nothing of it reaches a receipt or the public board, which are built from
receipts alone. Each such text travels as a ``ShownText``: a JSON string, capped, marked
``"untrusted": true`` with who wrote it, so that a client shows it as text, never as
markup, and a reader knows not to act on it. The hidden tests' text and names are not here:
the service holds none of them per job, only the operator's record of their run
(``checks_recorded``: numbers and enums) and the receipt's gates.
"""

from __future__ import annotations

import asyncio
from typing import Any

from jurat.judges._debug import capped
from jurat.ledger import Ledger
from jurat.models import Campaign
from jurat.receipts import read_statement
from jurat.report import (
    JobRecord,
    JudgeAnswer,
    ReviewStep,
    artifact_reviews,
    job_record,
)
from jurat.runner import intake_spec
from jurat.service._jobs import SERVICE_KEY, JobState, spec_of
from jurat.service._listing import job_view
from jurat.service._models import (
    JobReview,
    JudgeAnswerOut,
    RecordedChecksOut,
    ReviewedArtifact,
    ReviewStepOut,
    ShownText,
    TextOrigin,
)
from jurat.service._service import Service
from jurat.service._tokens import Principal

__all__ = ["ANSWER_CAP", "ARTIFACT_CAP", "REVIEW_ROLES", "TEXT_CAP", "job_review"]

#: Who may read the view: the roles that decide on a job, never a contributor (not even of
#: its own job: the judges' answers may quote what steers them) nor a verifier (it checks
#: receipts, which hold none of this).
REVIEW_ROLES = ("operator", "reviewer")
#: The caps, in UTF-8 bytes: the artifact as a reviewer reads it, the explanation and the
#: statement (one page each), and each judge's answer and rationale (a rationale is at most
#: 2000 characters by the answer schemas, judges/_validate.py).
ARTIFACT_CAP = 64 * 1024
TEXT_CAP = 16 * 1024
ANSWER_CAP = 4 * 1024


def _shown(text: str, origin: TextOrigin, cap: int, *, size: int | None = None,
           cut: bool = False) -> ShownText:
    """``text`` capped at ``cap``; ``size`` and ``cut`` when it was capped already (a judge's
    answer, which the ledger keeps cut at ``RAW_CAP``)."""
    shown, whole, capped_now = capped(text, cap)
    return ShownText(untrusted=origin != "operator", origin=origin, text=shown,
                     bytes=whole if size is None else size, capped=capped_now or cut)


async def job_review(svc: Service, who: Principal, job_id: str) -> JobReview:
    """The reviewer's view of the job, if ``who`` may read it (403 for any other role)."""
    state = svc.job_for(who, job_id, roles=REVIEW_ROLES, owner=False)
    job = job_view(svc, who, state)
    gates: list[dict[str, Any]] = []
    if state.reviews:
        _, signed = svc.receipt_of(state)
        gates = list(read_statement(signed)["predicate"]["gates"])
    campaign = svc.served[state.campaign_id].campaign
    # Ledger reads and the task statement's file: off the event loop.
    artifact, record, reviews = await asyncio.to_thread(_read, svc.ledger, campaign, state)
    return JobReview(job=job, artifact=artifact, gates=gates, checks=None if record.checks
                     is None else RecordedChecksOut(record_sha256=record.checks.record_sha256,
                                                    record=record.checks.record),
                     judges=[_answer(a) for a in record.answers],
                     reviews=[_step(s) for s in reviews])


def _read(ledger: Ledger, campaign: Campaign, state: JobState
          ) -> tuple[ReviewedArtifact, JobRecord, tuple[ReviewStep, ...]]:
    received = next(ledger.entries(job_id=state.job_id, kind="job_received"))
    service: dict[str, Any] = received.payload[SERVICE_KEY]
    # The artifact as the job's run read it (the same intake, runner/_intake.py): its text,
    # explanation and task statement.
    read = intake_spec(campaign, spec_of(service), "artifact")
    artifact = ReviewedArtifact(
        id=state.artifact_id, ledger_id=state.ledger_artifact_id,
        contributor=state.contributor, sha256=str(received.payload["artifact_sha256"]),
        media_type=read.media_type, task=read.task, assignment=service.get("assignment"),
        text=_shown(read.text, "contributor", ARTIFACT_CAP),
        explanation=None if read.explanation is None else _shown(
            read.explanation.reveal(), "contributor", TEXT_CAP),
        task_statement=None if read.task_statement is None else _shown(
            read.task_statement, "operator", TEXT_CAP))
    return (artifact, job_record(ledger, state.job_id),
            artifact_reviews(ledger, state.campaign_id, state.ledger_artifact_id))


def _answer(found: JudgeAnswer) -> JudgeAnswerOut:
    vote, debug = found.vote, found.debug
    raw = None
    if debug is not None and debug.answer is not None:
        raw = _shown(debug.answer, "judge", ANSWER_CAP, size=debug.answer_bytes,
                     cut=debug.answer_capped)
    return JudgeAnswerOut(
        judge=vote.judge, criterion=vote.criterion, sample=vote.sample, order=vote.order,
        error=vote.error, answer=vote.answer,
        rationale=None if found.rationale is None else _shown(found.rationale, "judge",
                                                              ANSWER_CAP),
        raw=raw, withheld=debug is not None and debug.withheld)


def _step(step: ReviewStep) -> ReviewStepOut:
    given = step.adjudication
    return ReviewStepOut(version=step.version, job_id=step.job_id, disposition=step.disposition,
                         adjudicated_by=None if given is None else given.reviewer,
                         at=None if given is None else given.at,
                         adjudication=None if given is None else given.disposition,
                         rationale=None if given is None else given.rationale)
