"""The HTTP oracle's state: served campaigns, jobs, the ledger, the keys; no HTTP here.

``Service`` is an async context manager that owns what it opens: the judge engine, the
ledger's group commit, the runner of each campaign and the background tasks (jobs, the
checkpoint loop). ``_app.py`` maps requests onto its methods; every refusal is a
``ServiceRefusal`` with its status. Who may do what is decided here, in ``_access``, once.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, cast

from jurat.errors import JuratError, LedgerError
from jurat.judges import Engine
from jurat.ledger import Entry, GroupCommit, Ledger, LogSigner, decode_receipt
from jurat.models import (
    Adjudication,
    AdjudicationDisposition,
    Campaign,
    policy_digest,
)
from jurat.receipts import (
    PrivateKey,
    proof_path_for,
    read_statement,
)
from jurat.runner import (
    JobRunner,
    KnownUpstream,
    Progress,
    RayJobs,
    RunOptions,
    artifacts_in_flight,
    check_pool,
    duplicate_of,
    intake_spec,
    work_claim,
    work_key,
    work_of,
)
from jurat.service._adjudication import adjudicated_receipt
from jurat.service._errors import ServiceRefusal
from jurat.service._history import ArtifactReviews
from jurat.service._jobs import (
    SERVICE_KEY,
    JobState,
    adjudication_job,
    job_identity,
    ledger_artifact_id,
    receipt_inputs,
    received_payload,
    spec_of,
)
from jurat.service._lease import LEASE_TTL_S, AlreadyRecorded, Replica, replica_id
from jurat.service._models import JobRequest
from jurat.service._submission import Served, check_campaigns, submitted_artifact
from jurat.service._test_lines import quotes_reference, reference_lines
from jurat.service._tokens import Principal
from jurat.service._upstream import stage_keys, verify_upstream

__all__ = ["Service"]

log = logging.getLogger("jurat.service")

#: Seconds between checkpoints while receipts are being added.
CHECKPOINT_INTERVAL_S = 2.0
#: Seconds between a long-poll's reads of the ledger for a receipt another process made.
FALLBACK_POLL_S = 2.0
#: Receipts of the jobs decided last kept in memory (ledger seq -> signed bytes): what
#: their submitters read next (the decision with the job, then the receipt), served
#: without reading the ledger again. About 5 KB each.
RECENT_RECEIPTS = 512


def now_utc() -> str:
    """UTC now as RFC 3339 with microseconds and ``Z``: when an adjudication was made."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Service:
    """The served campaigns and their jobs, over one ledger and one signing key."""

    def __init__(self, campaigns: Sequence[Campaign], *, ledger: Ledger, key: PrivateKey,
                 log_signer: LogSigner, checkpoint_interval: float = CHECKPOINT_INTERVAL_S,
                 ray: RayJobs | None = None, replica_name: str | None = None,
                 lease_ttl: float = LEASE_TTL_S) -> None:
        self._campaigns = list(campaigns)
        self.replica: Replica | None = None
        """On a PostgreSQL ledger: this server's leases among its replicas (``_lease``)."""
        self._replica_name, self._lease_ttl = replica_name, lease_ttl
        self.ray = ray
        """``--executor ray``: each job runs as a Ray task (runner/_ray_jobs.py); opened
        with the service, closed with it."""
        self.ledger = ledger
        self.key = key
        self.log_signer = log_signer
        self.checkpoint_interval = checkpoint_interval
        self.served: dict[str, Served] = {}
        self.jobs: dict[str, JobState] = {}
        self.artifact_reviews = ArtifactReviews(self.jobs)
        """Which job holds each artifact's latest review: a job another one superseded."""
        self._upstream = KnownUpstream()
        """The latest upstream receipt bound per (artifact, stage): an older one is refused."""
        self._seen_received = self._seen_receipts = -1
        """The last ``job_received`` and ``receipt`` seqs read (``_resume``, ``_catch_up``)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._stack = AsyncExitStack()
        self._receipts_since_checkpoint = 0
        self._log: GroupCommit | None = None
        self._artifact_locks: dict[tuple[str, str], asyncio.Lock] = {}
        """One job at a time per (campaign, ledger artifact id): jobs of one artifact id
        chain review versions, and two running at once would claim the same version."""
        self._just_received: OrderedDict[str, dict[str, Any]] = OrderedDict()
        """The ``service`` object of the jobs recorded last, as committed, until each job
        starts: a job that gets a slot at once is not read back from the ledger. At most
        ``_received_cap`` of them (the slots of every campaign): queued jobs beyond that
        are read back, so however many wait they hold no artifact."""
        self._received_cap = 0
        self._recent: OrderedDict[int, bytes] = OrderedDict()
        """The last ``RECENT_RECEIPTS`` receipts this server signed, by ledger seq."""

    # -- lifecycle ---------------------------------------------------------------------

    async def __aenter__(self) -> Service:
        try:
            await self._open()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(set(self._tasks))
        await self._stack.aclose()

    async def _open(self) -> None:
        engine = Engine()
        check_campaigns(self._campaigns, self.ledger, engine)
        await self._stack.enter_async_context(engine)
        checks = await self._stack.enter_async_context(
            check_pool(c.policy for c in self._campaigns))
        if self.ledger.backend == "postgresql":
            self.replica = Replica(self.ledger, replica_id(self._replica_name), self._lease_ttl)
            self._log = await self._stack.enter_async_context(self.replica.group_commit())
        else:
            self._log = await self._stack.enter_async_context(self.ledger.group_commit())
        out = Path(self._stack.enter_context(tempfile.TemporaryDirectory(prefix="jurat-serve-")))
        for campaign in self._campaigns:
            runner = JobRunner(campaign, RunOptions(out_dir=out, quiet=True), ledger=self.ledger,
                               log=self._log, key=self.key, progress=Progress(), telemetry=None,
                               engine=engine, checks=checks)
            limit = artifacts_in_flight(campaign.policy, None, campaign.intake)
            self._received_cap += limit
            self.served[campaign.id] = Served(
                campaign=campaign, policy_sha256=policy_digest(campaign.policy), runner=runner,
                slots=asyncio.Semaphore(limit), upstream_keys=stage_keys(campaign),
                references=reference_lines(campaign))
        if self.ray is not None:
            self.ray.open()
            self._stack.callback(self.ray.close)
            log.info("jobs run as Ray tasks (jurat_job), at most %d at once", self.ray.slots)
        self._resume()
        # Receipts recorded since the last checkpoint (a server stopped before signing it)
        # get theirs too.
        stored = self.ledger.checkpoints()
        if self.ledger.size() > (stored[-1].tree_size if stored else 0):
            self._receipts_since_checkpoint = 1
        self._spawn(self._checkpoints())
        if self.replica is not None:
            capacity = sum(artifacts_in_flight(c.policy, None, c.intake) for c in self._campaigns)
            self._spawn(self.replica.run(list(self.served), lambda: capacity, self._take_over))

    def _resume(self) -> None:
        """Rebuild the jobs from the ledger and run again every one without a receipt."""
        for entry in self.ledger.entries(kind="job_received"):
            service = entry.payload.get(SERVICE_KEY)
            if isinstance(service, dict):
                self._upstream.note(str(entry.payload.get("artifact_sha256")),
                                    service.get("upstream_receipts", ()))
            state = self._state_of(entry)
            if state is not None:
                self.jobs[entry.job_id] = state
            self._seen_received = entry.seq
        for entry in self.ledger.entries(kind="receipt"):
            self._note_review(entry)
        undecided = [s for s in self.jobs.values() if s.status != "decided"]
        if self.replica is not None:
            # Replicas share these jobs: each runs those whose lease it takes (``_lease``).
            self.replica.open({s.job_id: s.campaign_id for s in undecided}, list(self.served))
            return
        for state in undecided:
            self._start(state)

    def _note_review(self, entry: Entry) -> None:
        """A ``receipt`` entry as a review of the job it reviews, once."""
        self._seen_receipts = max(self._seen_receipts, entry.seq)
        reviewed = self.jobs.get(str(entry.payload.get("adjudicates", entry.job_id)))
        if reviewed is None:
            return
        version = int(entry.payload["review_version"])
        # A review this replica made itself may be known already: the ledger's seq stands.
        reviewed.reviews = sorted([*(r for r in reviewed.reviews if r[0] != version),
                                   (version, entry.seq)])
        reviewed.mark("decided")

    def _catch_up(self) -> None:
        """Replicas: the jobs and reviews the others recorded since this one last looked,
        so that a listing on any replica shows every job of the ledger, as it stands."""
        for entry in self.ledger.entries(kind="job_received", after_seq=self._seen_received):
            if entry.job_id not in self.jobs:
                state = self._state_of(entry)
                if state is not None:
                    self.jobs[entry.job_id] = state
            self._seen_received = entry.seq
        for entry in self.ledger.entries(kind="receipt", after_seq=self._seen_receipts):
            self._note_review(entry)

    def _state_of(self, entry: Entry) -> JobState | None:
        """The job a ``job_received`` entry recorded, if the service made it for a campaign
        served here."""
        service = entry.payload.get(SERVICE_KEY)
        served = self.served.get(entry.campaign_id or "")
        if not isinstance(service, dict) or served is None:
            return None
        state = JobState(job_id=entry.job_id, campaign_id=served.campaign.id,
                         artifact_id=str(service["artifact_id"]),
                         ledger_artifact_id=entry.artifact_id or "",
                         contributor=service.get("contributor"))
        key = service.get("work_key")
        state.work_key = key if isinstance(key, str) else None
        state.received_seq = entry.seq
        state.durable.set()
        return state

    def _adopt(self, job_id: str) -> JobState | None:
        """A job another replica recorded, read from the ledger (None: no such job).

        Raises LedgerError when the ledger cannot be read: that is not "no such job" (a
        request gets 503, not 404; a takeover waits for the lease to come round again)."""
        entry = next(self.ledger.entries(job_id=job_id, kind="job_received"), None)
        state = None if entry is None else self._state_of(entry)
        if state is None:
            return None
        state.reviews.extend(self._receipts_of(job_id))
        if state.reviews:
            state.mark("decided")
        return self.jobs.setdefault(job_id, state)

    def _take_over(self, job_id: str) -> None:
        """Run a job whose lease this replica took (another replica's, expired)."""
        try:
            state = self.jobs.get(job_id) or self._adopt(job_id)
        except LedgerError:
            # Not settled: its lease expires unrenewed and a replica takes it over again.
            log.warning("job %s could not be read from the ledger", job_id, exc_info=True)
            return
        if state is None:
            assert self.replica is not None
            self.replica.settled(job_id, "done")  # nothing of it to run
            return
        state.mark("queued")
        self._start(state)

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _checkpoints(self) -> None:
        """Sign a checkpoint every ``checkpoint_interval`` seconds while receipts arrive, so
        a decided job's proof is soon available."""
        while True:
            await asyncio.sleep(self.checkpoint_interval)
            if self.replica is not None:
                try:
                    await asyncio.to_thread(self.replica.sign_checkpoint, lambda: (
                        self.ledger.checkpoint(self.log_signer)))
                except JuratError:
                    log.exception("signing a checkpoint failed; trying again")
                continue
            if self._receipts_since_checkpoint:
                pending, self._receipts_since_checkpoint = self._receipts_since_checkpoint, 0
                try:
                    await asyncio.to_thread(self.ledger.checkpoint, self.log_signer)
                except JuratError:
                    log.exception("signing a checkpoint failed; trying again")
                    self._receipts_since_checkpoint += pending

    # -- jobs --------------------------------------------------------------------------

    def _start(self, state: JobState) -> None:
        task = self._spawn(self._run(state))
        if self.replica is not None:
            self.replica.running(state.job_id, task)

    async def _run(self, state: JobState) -> None:
        """Run one job from what its ``job_received`` entry recorded, new or resumed alike.

        A queued job holds no artifact: it is read back from the ledger when a slot is
        free, so jobs waiting for one take no more memory than their state, however many
        were submitted, and a resumed job runs exactly as a new one.
        """
        served = self.served[state.campaign_id]
        same = self._artifact_locks.setdefault((state.campaign_id, state.ledger_artifact_id),
                                               asyncio.Lock())
        try:
            async with same, served.slots:
                state.mark("running")
                service = self._received(state)
                artifact = intake_spec(served.campaign, spec_of(service), "artifact")
                artifact = artifact.model_copy(update={"id": state.ledger_artifact_id})
                if self.ray is not None:
                    version, seq = await self.ray.run_one(
                        served.campaign, artifact, job=state.job_id,
                        inputs=receipt_inputs(service))
                else:
                    result = await served.runner.run_one(artifact, job=state.job_id,
                                                         inputs=receipt_inputs(service))
                    version, seq = result.review_version, result.receipt_seq
                    # The service serves receipts from the ledger: the runner's file copy
                    # (and its empty proof) would only fill the temporary directory. The
                    # bytes, just written and the ledger's own, are what the submitter reads
                    # next: kept for it (``RECENT_RECEIPTS``).
                    written = Path(result.receipt_path)
                    if seq is not None and not result.reused:
                        self._remember(seq, written.read_bytes())
                    written.unlink(missing_ok=True)
                    proof_path_for(written).unlink(missing_ok=True)
            if not state.reviews or state.reviews[-1][1] != seq:
                state.reviews.append((version, seq or 0))
            state.mark("decided")
            self._receipts_since_checkpoint += 1
            self._settle(state, "done")
        except asyncio.CancelledError:
            if self.replica is not None and state.job_id not in self.replica.owned:
                state.mark("queued")  # its lease was taken over: another replica runs it
            raise
        except Exception as exc:
            # Recorded in the ledger (evaluation_failed) by the runner for JuratErrors; the
            # job runs again when the server restarts. Never shown to the contributor.
            log.exception("job %s failed", state.job_id)
            if self.replica is not None and isinstance(exc, LedgerError) and not state.reviews:
                # The database failed under it (a lost connection, a lease taken over): the
                # job is not failed, and a replica resumes it from what was recorded.
                state.mark("queued")
                self.replica.settled(state.job_id, "retry")
                return
            # A receipt another server recorded meanwhile (``refresh``) still decides it.
            state.mark("decided" if state.reviews else "failed")
            self._settle(state, "done" if state.reviews else "failed")

    def _settle(self, state: JobState, outcome: str) -> None:
        if self.replica is not None:
            self.replica.settled(state.job_id, outcome)

    def _remember(self, seq: int, signed: bytes) -> None:
        self._recent[seq] = signed
        if len(self._recent) > RECENT_RECEIPTS:
            self._recent.popitem(last=False)

    def _received(self, state: JobState) -> dict[str, Any]:
        kept = self._just_received.pop(state.job_id, None)
        if kept is not None:
            return kept
        entry = next(self.ledger.entries(job_id=state.job_id, kind="job_received"))
        service = entry.payload[SERVICE_KEY]
        assert isinstance(service, dict)
        return service

    # -- access ------------------------------------------------------------------------

    def campaign_for(self, principal: Principal, campaign_id: str) -> Served:
        """The served campaign, if the token's scope covers it (404 otherwise: a token of
        another campaign learns nothing about this one)."""
        served = self.served.get(campaign_id)
        if served is None or not principal.covers(campaign_id):
            # The id is the caller's text: not repeated (docs/service.md, error bodies).
            raise ServiceRefusal(
                404, "no such campaign for this token",
                field="campaign_id", fix="use a campaign id GET /v1/campaigns lists")
        return served

    def job_for(self, principal: Principal, job_id: str, *, roles: tuple[str, ...],
                owner: bool) -> JobState:
        """The job, if the token may read it: ``roles`` always, a contributor only its own
        (``owner``). Anything else is a 404, as for a job that does not exist, so a token
        cannot probe for other contributors' jobs. A role outside ``roles`` is a 403."""
        state = self.jobs.get(job_id)
        if state is None and self.replica is not None:
            state = self._adopt(job_id)  # recorded by another replica
        if principal.role not in roles and not (owner and principal.role == "contributor"):
            raise ServiceRefusal(403, f"a {principal.role} token cannot do this",
                                 fix=f"use a token with role {' or '.join(roles)}")
        missing = ServiceRefusal(404, "no such job for this token", field="job_id",
                                 fix="use the job_id the submission returned")
        if state is None or not principal.covers(state.campaign_id) or not state.durable.is_set():
            raise missing
        if principal.role == "contributor" and (
                principal.subject is None or principal.subject != state.contributor):
            raise missing
        return state

    def jobs_for(self, principal: Principal) -> list[JobState]:
        """The durable jobs the token may list, oldest first: every job of its scope for the
        operator and the reviewer, a contributor's own only, none for a verifier (403, as
        for reading a job: it reads receipts, not jobs)."""
        if principal.role not in ("operator", "reviewer", "contributor"):
            raise ServiceRefusal(403, f"a {principal.role} token cannot list jobs",
                                 fix="use an operator, reviewer or contributor token; "
                                 "GET /v1/campaigns/{campaign_id}/decisions lists receipts")
        own = principal.subject if principal.role == "contributor" else None
        if self.replica is not None:
            self._catch_up()  # a LedgerError is the app's 503 (LEDGER_UNAVAILABLE)
        found = [s for s in self.jobs.values()
                 if s.durable.is_set() and self.served.get(s.campaign_id) is not None
                 and principal.covers(s.campaign_id)
                 and (principal.role != "contributor"
                      or (own is not None and s.contributor == own))]
        return sorted(found, key=lambda s: s.received_seq)

    async def wait_settled(self, state: JobState, seconds: float) -> None:
        """Return once the job is decided or failed, or after ``seconds``. The job's own
        run wakes the wait (``JobState.mark``); every ``FALLBACK_POLL_S`` the ledger is
        read once for a receipt another server of the same ledger recorded (servers share
        a campaign: cli/_serve.py), never in a tight loop."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while not state.settled.is_set():
            left = deadline - loop.time()
            if left <= 0:
                return
            try:
                await asyncio.wait_for(state.settled.wait(), min(left, FALLBACK_POLL_S))
            except TimeoutError:
                found = await asyncio.to_thread(self._receipts_of, state.job_id)
                # Back on the loop: the state and its event are the loop's alone.
                if found and not state.reviews:
                    state.reviews.extend(found)
                    state.mark("decided")

    def _receipts_of(self, job_id: str) -> list[tuple[int, int]]:
        """(review version, seq) of the job's own receipts in the ledger, oldest first."""
        return [(int(e.payload["review_version"]), e.seq)
                for e in self.ledger.entries(job_id=job_id, kind="receipt")]

    def duplicate_of(self, principal: Principal, state: JobState) -> str | None:
        """The job that first submitted this job's work, when that was another
        contributor's (runner/_work.py): for every role that may read the job, as its
        receipt says it (issue 37: a copy is told whose work it copies, and is not paid).
        Read from the ledger's ``work_claimed`` entries once the job's own is recorded;
        their order never changes after, so the answer is kept."""
        if state.work_key is not None and not state.work_known:
            claims = list(self.ledger.entries(job_id=state.work_key, kind="work_claimed"))
            if any(claim.payload.get("job") == state.job_id for claim in claims):
                state.duplicate_of = duplicate_of(claims, state.job_id, state.contributor)
                state.work_known = True
        return state.duplicate_of

    # -- submitting --------------------------------------------------------------------

    async def submit(self, principal: Principal, campaign_id: str, request: JobRequest
                     ) -> JobState:
        """Record the job durably (its ``job_received`` entry) and start it; the same
        request again returns the same job without recording or sampling anything."""
        if principal.role not in ("operator", "contributor"):
            raise ServiceRefusal(403, f"a {principal.role} token cannot submit jobs",
                                 fix="use a contributor or operator token")
        served = self.campaign_for(principal, campaign_id)
        contributor = request.contributor
        if principal.role == "contributor":
            if contributor is not None and contributor != principal.subject:
                raise ServiceRefusal(403, "a contributor token submits only as its own subject",
                                     field="contributor", fix="leave contributor out")
            contributor = principal.subject
        artifact = submitted_artifact(served, request, contributor)
        upstream = verify_upstream(request.upstream_receipts, served.campaign,
                                   served.upstream_keys, artifact.sha256, known=self._upstream)
        job_id = job_identity(served.campaign, served.policy_sha256, artifact,
                              contributor=contributor, assignment=request.assignment,
                              upstream=upstream)
        existing = self.jobs.get(job_id)
        if existing is not None:
            await existing.durable.wait()
            if self.jobs.get(job_id) is not existing:
                raise ServiceRefusal(
                    409, "the same job was being recorded and failed; submit again",
                    fix="submit the same body again")
            if existing.status == "failed":
                # A job that failed part-way runs again from what it recorded: no sample
                # recorded is drawn again (seed 000: a retry is not a new sample).
                existing.mark("queued")
                if self.replica is not None:
                    self.replica.reopen(job_id)  # whichever replica takes its lease
                else:
                    self._start(existing)
            return existing
        ledger_id = ledger_artifact_id(artifact.id, contributor)
        state = JobState(job_id=job_id, campaign_id=campaign_id, artifact_id=artifact.id,
                         ledger_artifact_id=ledger_id, contributor=contributor)
        self.jobs[job_id] = state  # before the await: a concurrent duplicate waits on it
        work = work_of(served.campaign.policy.same_work, artifact)
        state.work_key = work_key(campaign_id, artifact.task, work)
        payload = received_payload(served.policy_sha256, served.campaign, artifact,
                                   submitted_id=artifact.id, contributor=contributor,
                                   assignment=request.assignment, upstream=upstream,
                                   work_key=state.work_key)
        assert self._log is not None
        if self.replica is not None:
            self.replica.submitting(job_id, campaign_id)
        try:
            received = await self._log.append("job_received", job_id, payload,
                                              campaign_id=campaign_id, artifact_id=ledger_id)
        except BaseException as exc:
            del self.jobs[job_id]
            state.durable.set()  # waiters find it gone and see the error themselves
            if self.replica is not None:
                self.replica.recorded(job_id, leased=False)
            if isinstance(exc, AlreadyRecorded):
                return self._recorded_elsewhere(job_id)
            if isinstance(exc, LedgerError):
                log.warning("job %s could not be recorded", job_id, exc_info=True)
                # Never a 202 for what the ledger did not confirm; the same body again is
                # the same job, whether or not this append reached the ledger.
                raise ServiceRefusal(503, "the ledger could not record the job now",
                                     fix="submit the same body again shortly") from exc
            raise
        if self.replica is not None:
            self.replica.recorded(job_id, leased=True)
        try:
            # Right after the job: the order of these entries says who submitted the work
            # first (runner/_work.py). One that fails is made when the job runs.
            await self._log.append("work_claimed", state.work_key,
                                   work_claim(job_id, work, contributor),
                                   campaign_id=campaign_id, artifact_id=ledger_id)
        except LedgerError:
            log.warning("job %s: its work claim waits for the job's run", job_id, exc_info=True)
        service = received.payload.get(SERVICE_KEY)
        if isinstance(service, dict) and self._received_cap:
            self._just_received[job_id] = service
            while len(self._just_received) > self._received_cap:
                self._just_received.popitem(last=False)
        state.received_seq = received.seq
        state.durable.set()
        self._upstream.note(artifact.sha256, upstream)
        self._start(state)
        return state

    def _recorded_elsewhere(self, job_id: str) -> JobState:
        """The job another replica recorded first (the same body submitted there)."""
        state = self._adopt(job_id)
        if state is None:
            raise ServiceRefusal(409, "the same job was being recorded and failed; submit again",
                                 fix="submit the same body again")
        if not state.reviews and self.replica is not None:
            self.replica.reopen(job_id)  # a failed job runs again, as when resubmitted here
        return state

    # -- reading -----------------------------------------------------------------------

    def receipt_of(self, state: JobState, version: int | None = None) -> tuple[int, bytes]:
        """(ledger seq, bytes) of the job's latest review, or of review ``version``."""
        if not state.reviews:
            raise ServiceRefusal(409, f"job {state.job_id} is {state.status}: no receipt yet",
                                 fix="poll GET /v1/jobs/{job_id} until status is decided")
        chosen = state.reviews[-1] if version is None else next(
            (r for r in state.reviews if r[0] == version), None)
        if chosen is None:
            raise ServiceRefusal(404, f"job {state.job_id} has no review version {version}",
                                 field="version",
                                 fix=f"versions: {', '.join(str(v) for v, _ in state.reviews)}")
        signed = self._recent.get(chosen[1])
        if signed is not None:
            return chosen[1], signed
        entry = self.ledger.entry(chosen[1])
        return entry.seq, decode_receipt(entry.payload, seq=entry.seq)

    def decision_of(self, state: JobState) -> tuple[dict[str, Any] | None, int | None]:
        """The latest review's ``predicate.decision`` and version, once decided."""
        if not state.reviews:
            return None, None
        _, signed = self.receipt_of(state)
        predicate = read_statement(signed)["predicate"]
        return predicate["decision"], int(predicate["review"]["version"])

    # -- adjudicating ------------------------------------------------------------------

    async def adjudicate(self, principal: Principal, job_id: str, disposition: str,
                         rationale: str, *, rationale_public: bool = False,
                         review_version: int | None = None) -> int:
        """Sign and record review version n+1 of an escalated job, settled by a reviewer;
        returns the new version. ``review_version``: the version the reviewer read, checked
        against the job's latest under the artifact's lock (``adjudicated_receipt``)."""
        state = self.job_for(principal, job_id, roles=("reviewer",), owner=False)
        later = self.artifact_reviews.superseded_by(state)
        if later is not None:
            raise later.refusal()
        served = self.served[state.campaign_id]
        if quotes_reference(rationale, served.references):
            raise ServiceRefusal(
                422, "the rationale quotes the campaign's tests, which contributors "
                "must never see, and the receipt is published to them",
                field="rationale", fix="describe the failure without quoting tests")
        async with self._artifact_locks.setdefault(
                (state.campaign_id, state.ledger_artifact_id), asyncio.Lock()):
            _, signed = self.receipt_of(state)
            slot = self.ledger.next_review(state.campaign_id, state.ledger_artifact_id)
            adjudication = Adjudication(reviewer=principal.name, at=now_utc(),
                                        disposition=cast(AdjudicationDisposition, disposition),
                                        rationale=rationale,  # the record checks the word
                                        rationale_public=rationale_public)
            new, decision = adjudicated_receipt(signed, slot, adjudication, self.key,
                                                read=review_version)
            assert self._log is not None
            job = adjudication_job(job_id, slot.version)
            try:
                await self._log.append("decision", job, decision.model_dump(mode="json"),
                                       campaign_id=state.campaign_id,
                                       artifact_id=state.ledger_artifact_id)
                entry = await self._log.append_receipt(
                    job, new, campaign_id=state.campaign_id,
                    artifact_id=state.ledger_artifact_id, review=slot,
                    extra={"adjudicates": job_id})
            except LedgerError as exc:
                raise ServiceRefusal(409, "another review of this artifact was recorded first; "
                                     "read the job again") from exc
            state.reviews.append((slot.version, entry.seq))
            self._receipts_since_checkpoint += 1
            return slot.version
