"""``GET /v1/jobs``: the jobs a token may read, filtered, oldest first, paged.

What a token may list is ``Service.jobs_for``'s rule (a contributor its own jobs only);
each row is the job view ``GET /v1/jobs/{job_id}`` gives the same token (``job_view``),
so a listing shows nothing the single view would not. A reviewer's queue is
``?disposition=escalate``: the decided jobs whose latest review escalates, that is, awaiting
an adjudication (an adjudicated review is accept or reject). A job whose artifact has a
later review, another job's, is ``superseded`` (``_history``): it can no longer be settled,
so it is in no disposition's list. Pages follow the ledger order of the jobs'
``job_received`` entries; the cursor is the last row's seq, as in
``/v1/campaigns/{cid}/decisions``.
"""

from __future__ import annotations

from jurat.receipts import read_statement
from jurat.service._errors import ServiceRefusal
from jurat.service._jobs import JobState
from jurat.service._models import JobOut, JobsPage, ListedDisposition, ShownStatus
from jurat.service._service import Service
from jurat.service._tokens import Principal

__all__ = ["job_view", "list_jobs", "shown_status"]


def shown_status(svc: Service, state: JobState) -> tuple[ShownStatus, str | None]:
    """The job's status as every view shows it, and the job that superseded it."""
    later = svc.artifact_reviews.superseded_by(state)
    return ("superseded", later.job_id) if later is not None else (state.status, None)


def job_view(svc: Service, who: Principal, state: JobState) -> JobOut:
    """The job as ``who`` may see it (``duplicate_of`` as ``Service.duplicate_of`` says)."""
    decision, version = svc.decision_of(state)
    status, superseded_by = shown_status(svc, state)
    return JobOut(job_id=state.job_id, campaign_id=state.campaign_id,
                  artifact_id=state.artifact_id, status=status, decision=decision,
                  review_version=version, duplicate_of=svc.duplicate_of(who, state),
                  superseded_by=superseded_by)


def _disposition(svc: Service, state: JobState) -> str | None:
    """The latest review's disposition, read from its receipt once per review."""
    if not state.reviews:
        return None
    seq = state.reviews[-1][1]
    if state.disposition is None or state.disposition[0] != seq:
        _, signed = svc.receipt_of(state)
        state.disposition = (seq, str(read_statement(signed)["predicate"]["decision"][
            "disposition"]))
    return state.disposition[1]


def list_jobs(svc: Service, who: Principal, *, campaign_id: str | None,
              status: ShownStatus | None, disposition: ListedDisposition | None, limit: int,
              cursor: int | None) -> JobsPage:
    """One page of the jobs ``who`` may read that match every filter given."""
    if campaign_id is not None and (campaign_id not in svc.served
                                    or not who.covers(campaign_id)):
        # The allowed values are what GET /v1/campaigns lists to this token; the id sent
        # is the caller's text and is not repeated.
        ids = [cid for cid in svc.served if who.covers(cid)]
        raise ServiceRefusal(422, "campaign_id is not a campaign this token may read",
                             field="campaign_id",
                             fix=f"one of: {', '.join(ids)}" if ids else "leave it out")
    rows: list[JobOut] = []
    more = False
    for state in svc.jobs_for(who):
        if cursor is not None and state.received_seq <= cursor:
            continue
        if campaign_id is not None and state.campaign_id != campaign_id:
            continue
        if status is not None or disposition is not None:
            shown, _ = shown_status(svc, state)
            if status is not None and shown != status:
                continue
            if disposition is not None and (shown != "decided"
                                            or _disposition(svc, state) != disposition):
                continue
        if len(rows) == limit:
            more = True
            break
        rows.append(job_view(svc, who, state))
    last = svc.jobs[rows[-1].job_id].received_seq if rows else None
    return JobsPage(jobs=rows, next=str(last) if more and last is not None else None)
