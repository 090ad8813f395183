"""Which job holds an artifact's latest review: a job another job superseded leaves the queue.

The ledger keeps one chain of review versions per campaign and ledger artifact id
(``<contributor>:<id>``, ``_jobs.ledger_artifact_id``; docs/receipt-format.md §12). A
contributor who sends the same artifact id again, with another explanation or other bytes,
makes another job, and that job's receipt is the next version of the same chain: it
supersedes the earlier job's latest review. The earlier job can then never be settled (an
adjudication must supersede the artifact's latest receipt, ``_adjudication.py``), so the
service shows it as ``superseded``, names the job that holds the latest review, and leaves
it out of the reviewer's queue (docs/service.md, "The reviewer's queue").

Artifact ids are per contributor, so the job that supersedes one is the same contributor's
(an operator's job without a contributor has an id with no ``:``, which no contributor's
has): naming it to the job's owner names no one else's job.
"""

from __future__ import annotations

from dataclasses import dataclass

from jurat.service._errors import ServiceRefusal
from jurat.service._jobs import JobState

__all__ = ["ArtifactReviews", "Latest"]


@dataclass(frozen=True)
class Latest:
    """The review that superseded a job's latest one."""

    job_id: str
    """The job whose review it is."""
    version: int
    """Its review version."""

    def refusal(self) -> ServiceRefusal:
        """409 for adjudicating the job it superseded, naming the job to read instead: the
        signing would refuse it too (``_adjudication``), without saying which job that is.
        The superseded job's id, the caller's text in the URL, is not quoted."""
        return ServiceRefusal(
            409, f"this job is superseded: its artifact's latest review is version "
            f"{self.version}, of job {self.job_id}", field="job_id",
            fix=f"read GET /v1/jobs/{self.job_id}/review and adjudicate that job")


class ArtifactReviews:
    """The jobs of each artifact, indexed from ``Service.jobs`` as it grows.

    ``Service.jobs`` only grows by appending, but for one case: a submission whose
    ``job_received`` entry the ledger did not confirm is removed again, before it was ever
    durable. So only durable jobs are indexed, and each look first indexes the jobs added
    since the last look (walking the dictionary from its newest key back to the newest
    indexed one) and the jobs seen before they were durable: a look costs the jobs added
    since, not every job (a job view is read at every long-poll).
    """

    def __init__(self, jobs: dict[str, JobState]) -> None:
        self._jobs = jobs
        self._groups: dict[tuple[str, str], list[str]] = {}
        """(campaign id, ledger artifact id) -> its jobs' ids, in the order indexed."""
        self._indexed: set[str] = set()
        self._pending: set[str] = set()
        """Jobs seen before their entry was committed: indexed once durable, dropped once
        removed."""

    def superseded_by(self, state: JobState) -> Latest | None:
        """The artifact's latest review when another job holds it and it is later than this
        job's latest; None for a job without a review (it will supersede the others when it
        runs) and for one whose latest review is the artifact's."""
        if not state.reviews:
            return None
        self._refresh()
        own = state.reviews[-1][0]
        found: Latest | None = None
        for job_id in self._groups.get((state.campaign_id, state.ledger_artifact_id), ()):
            other = self._jobs.get(job_id)
            if other is None or other is state or not other.reviews:
                continue
            version = other.reviews[-1][0]
            if version > own and (found is None or version > found.version):
                found = Latest(job_id=job_id, version=version)
        return found

    def _refresh(self) -> None:
        # Keys are appended, and an indexed job is durable and never removed: every key
        # older than the newest indexed one was seen by an earlier look.
        for job_id in reversed(self._jobs):
            if job_id in self._indexed:
                break
            self._pending.add(job_id)
        for job_id in list(self._pending):
            state = self._jobs.get(job_id)
            if state is None:
                self._pending.discard(job_id)
            elif state.durable.is_set():
                self._pending.discard(job_id)
                self._indexed.add(job_id)
                self._groups.setdefault((state.campaign_id, state.ledger_artifact_id),
                                        []).append(job_id)
