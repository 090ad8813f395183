"""``ArtifactReviews``: which job holds an artifact's latest review, indexed from the
service's jobs as they are added, including the one removal the service makes (a
submission whose entry the ledger never confirmed) and a job seen before it was durable."""

from __future__ import annotations

from jurat.service._history import ArtifactReviews, Latest
from jurat.service._jobs import JobState


def _job(jobs: dict[str, JobState], job_id: str, artifact: str = "alice:sq", *,
         durable: bool = True, versions: tuple[int, ...] = ()) -> JobState:
    state = JobState(job_id=job_id, campaign_id="c", artifact_id=artifact.split(":")[-1],
                     ledger_artifact_id=artifact, contributor="alice")
    state.reviews.extend((v, 10 * v) for v in versions)
    if durable:
        state.durable.set()
    jobs[job_id] = state
    return state


def test_a_later_review_of_the_same_artifact_supersedes_a_job() -> None:
    jobs: dict[str, JobState] = {}
    index = ArtifactReviews(jobs)
    first = _job(jobs, "j1", versions=(1,))
    other = _job(jobs, "j0", "alice:other", versions=(1,))
    assert index.superseded_by(first) is None
    second = _job(jobs, "j2", versions=(2,))
    assert index.superseded_by(first) == Latest(job_id="j2", version=2)
    assert index.superseded_by(second) is None
    assert index.superseded_by(other) is None  # another artifact
    # A review the first job gets later (version 3) is the artifact's latest again.
    first.reviews.append((3, 30))
    assert index.superseded_by(first) is None
    assert index.superseded_by(second) == Latest(job_id="j1", version=3)
    # A job not yet decided supersedes nothing and is not superseded.
    queued = _job(jobs, "j3")
    assert index.superseded_by(queued) is None
    assert index.superseded_by(second) == Latest(job_id="j1", version=3)


def test_a_job_seen_before_it_was_durable_and_a_removed_one() -> None:
    jobs: dict[str, JobState] = {}
    index = ArtifactReviews(jobs)
    first = _job(jobs, "j1", versions=(1,))
    pending = _job(jobs, "j2", durable=False)
    assert index.superseded_by(first) is None  # j2 seen, not indexed yet
    pending.reviews.append((2, 20))
    pending.durable.set()
    assert index.superseded_by(first) == Latest(job_id="j2", version=2)
    # A submission never recorded is removed; jobs added after it are still found, and
    # the same id submitted again later is indexed again.
    failed = _job(jobs, "j3", durable=False)
    assert index.superseded_by(first) == Latest(job_id="j2", version=2)
    del jobs["j3"]
    later = _job(jobs, "j4", versions=(4,))
    assert index.superseded_by(first) == Latest(job_id="j4", version=4)
    again = _job(jobs, "j3", versions=(5,))
    assert again is not failed
    assert index.superseded_by(first) == Latest(job_id="j3", version=5)
    assert index.superseded_by(later) == Latest(job_id="j3", version=5)
