"""Run a campaign: preflight, then stream its artifacts through their jobs (docs/design.md,
"The pipeline").

``preflight`` refuses a campaign that cannot run (files, digests, destinations, API keys,
replay files, adapters, every dataset row) for all its artifacts at once, before anything
is sent or written; the command line calls it before it even opens the ledger (exit 3,
ledger untouched) and hands its ``Inventory`` to ``run_campaign_async``, which otherwise
calls it first thing itself.

At scale (issue 12; measured in bench/README.md, "Whole runs"):

- artifacts are read one at a time as jobs start (runner/_datasets.py), never all at
  once, and at most ``artifacts_in_flight`` jobs run together: enough to keep every
  judge's ``max_concurrency`` busy, bounded by the memory their content may take;
- every ledger write goes through one group commit (ledger/_group.py): a vote is durable
  before the job goes on to its fold, as with one commit per write, but writes that
  arrive together share a transaction, and the commit runs off the event loop;
- a result is handed to ``on_result`` as its job ends and kept nowhere else, so a run of
  10^5 artifacts holds no job's votes once its receipt is written.

The judge ``Engine`` (adapters, limits, connections) is shared by all the run's jobs:
``run_campaign_async`` opens one and closes it when the last job ends, or uses the
caller's (which the caller closes). So is the ``CheckPool`` the code checks run in, which
``run_campaign_async`` opens for the run's jobs and shuts down when they end
(``check_pool``). The ledger, the signing key and the telemetry sink are the caller's,
opened and closed by it, and passed in.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import JsonValue

from jurat._version import __version__
from jurat.canonical import digest_json
from jurat.errors import BudgetExhausted, ConfigError, JobIncomplete, JuratError
from jurat.fold import decide
from jurat.judges import (
    Engine,
    SampleDebug,
    SampleTelemetry,
    judge_pins,
    limit_share,
    no_answer,
    plan_samples,
    usd,
)
from jurat.ledger import (
    CampaignHistory,
    Entry,
    EntryKind,
    GroupCommit,
    Ledger,
    ReviewSlot,
    decode_receipt,
)
from jurat.models import (
    Artifact,
    Campaign,
    EvidenceBundle,
    GateOutcome,
    Policy,
    Vote,
    policy_digest,
)
from jurat.models._artifact import IntakeLimits
from jurat.models._grounding import work_claims
from jurat.receipts import (
    PrivateKey,
    decision_statement,
    proof_path_for,
    read_decision_statement,
    receipt_path_for,
    replay_fidelity_level_for,
    sign_statement,
)
from jurat.runner._budget import attach_budget, stopped_by_budget
from jurat.runner._datasets import Inventory, check_artifacts, iter_artifacts, iter_placed
from jurat.runner._execute import Execution, execute_subject, execution_evidence
from jurat.runner._job import (
    JobResult,
    Progress,
    artifact_evidence,
    check_pool,
    deterministic_checks,
    job_cost,
    job_identity,
    judges_skipped,
    recorded_vote,
)
from jurat.runner._outage import all_answered_somewhere, undecided_entry
from jurat.runner._reference_evidence import reference_evidence
from jurat.runner._rerun import execution_job, judged_job
from jurat.runner._selection import Selection
from jurat.runner._stream import still_as_checked, stream_jobs
from jurat.runner._upstream import RunUpstream
from jurat.runner._work import Work, duplicate_of, work_claim, work_key, work_of
from jurat.runner._work_claims import claims_identity, with_extracted_claims

if TYPE_CHECKING:
    from jurat.checks import CheckPool

__all__ = [
    "ARTIFACT_MEMORY",
    "LEDGER_IN_FLIGHT",
    "JobRunner",
    "RunOptions",
    "artifacts_in_flight",
    "preflight",
    "run_campaign_async",
    "still_as_checked",
]

#: The most artifact content the jobs in flight may hold, counting each at the intake cap
#: (``[intake] max_artifact_bytes``): 64 jobs at the default 4 MiB cap, 8 at the ceiling.
ARTIFACT_MEMORY = 256 * 1024 * 1024
#: The fewest jobs in flight (memory allowing). A job waits on the ledger several times
#: (its record, its samples, its decision, its receipt), and the group commit writes what
#: is waiting together: the more jobs wait, the fewer and larger the commits. Judges
#: without latency (``sim``) would otherwise keep few jobs in flight and wait on commits.
LEDGER_IN_FLIGHT = 32

OnResult = Callable[[JobResult, int], None]
"""Called with each job's result and its artifact's place in the campaign, as it ends."""


def artifacts_in_flight(policy: Policy, first: Artifact | None, limits: IntakeLimits,
                        shards: int = 1) -> int:
    """How many jobs run at once: enough to keep every endpoint's pipe full, within memory.

    A job asks each judge for its planned samples at once, so a judge with
    ``max_concurrency`` c and n samples per artifact is kept busy by ceil(c / n) jobs
    (the ``[subject]``, one call per artifact, by c jobs). Twice the most any endpoint
    needs: while some jobs run their checks, fold, sign and write, the others keep the
    endpoints busy; and at least ``LEDGER_IN_FLIGHT``. At most ``ARTIFACT_MEMORY`` of
    artifact content, at the intake cap. With ``shards`` processes sharing the run, each
    has its part of every limit (``limit_share``) and of the memory.
    """
    wanted = 1
    if first is not None:
        per_judge = Counter(planned.judge.id for planned in plan_samples(policy, first))
        for config in policy.judges:
            if per_judge[config.id]:
                part = limit_share(config.max_concurrency, 0, shards)
                wanted = max(wanted, math.ceil(part / per_judge[config.id]))
    if policy.subject is not None:
        wanted = max(wanted, limit_share(policy.subject.max_concurrency, 0, shards))
    memory = max(1, ARTIFACT_MEMORY // shards // limits.max_artifact_bytes)
    return max(1, min(max(2 * wanted, LEDGER_IN_FLIGHT), memory))


@dataclass
class RunOptions:
    """Where a run writes and what it signs with."""

    out_dir: Path
    ledger_url: str | None = None
    key_path: Path | None = None
    telemetry_path: Path | None = None
    otlp: str | None = None
    """The OTLP/HTTP traces URL spans go to (``--otlp`` or the standard variables;
    judges/_otlp.py); None: no span is exported."""
    attempt: int = 1
    run_id: str | None = None
    """The run the subject is executed under (runner/_rerun.py): fresh for each `jurat run`
    of a campaign with a ``[subject]``, or the ``--resume``d one; None: the subject is
    executed once per job, as the service does."""
    quiet: bool = False
    show_hidden_tests: bool = False
    """Print the hidden tests' detail under the summary (``--show-hidden``): never by
    default, since a CI log is public."""
    workers: int | None = None
    """Processes sharing the run (runner/_shards.py); None: chosen by its size."""
    selection: Selection = field(default_factory=Selection)
    """The artifacts the run judges (``--limit``, ``--only``; runner/_selection.py)."""


class JobRunner:
    """One run's jobs, sharing its ledger, key, telemetry, engine and check pool (``jurat
    run``'s, or a service's: ``run_one`` per artifact); the caller owns each of them."""

    def __init__(self, campaign: Campaign, options: RunOptions, *, ledger: Ledger,
                 log: GroupCommit, key: PrivateKey, progress: Progress,
                 telemetry: SampleTelemetry | None, engine: Engine,
                 checks: CheckPool | None, history: CampaignHistory | None = None) -> None:
        self.campaign = campaign
        self.policy = campaign.policy
        self.policy_sha256 = policy_digest(self.policy)
        # The answer schema each judge is held to, recorded in its receipt pin.
        self.schema_meta = [{"id": p["id"], "schema_id": p["schema_id"]}
                            for p in judge_pins(self.policy)]
        self.options = options
        self.ledger = ledger
        self.log = log
        """Every write of the run: durable when its ``await`` returns, off the event loop."""
        self.key = key
        self.progress = progress
        self.telemetry = telemetry
        self.engine = engine
        self.checks = checks
        """Where the code checks run (``check_pool``); None for a campaign without them."""
        self.judges = {config.id: config for config in self.policy.judges}
        # Grounding references, read and digest-checked once: every judge sees this capture.
        self.references = reference_evidence(campaign)
        self.history = history
        """The campaign's jobs and receipts in the ledger when the run started; None: read
        each job's own (a job in neither set has nothing to resume or supersede)."""

    async def _append(self, kind: EntryKind, job: str, artifact: Artifact,
                      payload: dict[str, JsonValue]) -> Entry:
        return await self.log.append(kind, job, payload, campaign_id=self.campaign.id,
                                     artifact_id=artifact.id)

    def _out_path(self, artifact: Artifact) -> Path:
        return receipt_path_for(self.options.out_dir, artifact.id)

    async def run_one(self, artifact: Artifact, *, job: str | None = None,
                      inputs: dict[str, JsonValue] | None = None) -> JobResult:
        """One artifact's job. ``job`` and ``inputs`` are for callers with their own job
        identities (the service, service/_service.py): the ledger job id to record under
        (default: ``job_identity``) and receipt inputs that replace the run's defaults
        (``assignment``, the verified ``upstream_receipts``)."""
        if job is None:
            job = claims_identity(job_identity(self.policy_sha256, artifact, self.policy,
                                               self.options.attempt), artifact)
        run_id = self.options.run_id
        fresh: tuple[Execution, bool] | None = None
        base = job
        if run_id is not None and artifact.input is not None and self.policy.subject is not None:
            # Issue 27: each run executes the subject again, and the judging is keyed by
            # what came out, so a changed model is judged anew (runner/_rerun.py).
            fresh = await self._execution(base, artifact, run_id)
            job = judged_job(base, fresh[0])
        # One read for all the job left in the ledger: its receipt, its recorded input and
        # the samples a resume must not draw again.
        known = self.history is None or job in self.history.jobs
        history = list(self.ledger.entries(job_id=job)) if known else []
        receipt = next((e for e in reversed(history) if e.kind == "receipt"), None)
        carried: list[Vote] = []
        if fresh is not None and receipt is not None:
            job, history, receipt, carried = self._revisit(artifact, job, history, receipt)
        if receipt is not None:
            reused = self._reuse(artifact, self._latest_review(artifact, job, receipt))
            if fresh is not None and fresh[1]:
                reused.drawn_cost = job_cost(self.policy, [], fresh[0])
            return reused
        received = next((e for e in history if e.kind == "job_received"), None)
        recorded = [*carried, *(recorded_vote(e.payload["vote"]) for e in history
                                if e.kind == "sample_recorded")]
        execution: Execution | None = None
        executed_now = False
        if fresh is not None:
            execution, executed_now = fresh
            if received is None:
                assert run_id is not None
                # The output itself is in the execution job's entry; this one names it.
                await self._append("job_received", job, artifact, {
                    **self._received(artifact), "run_id": run_id,
                    "execution_job": execution_job(base, run_id),
                    "output_sha256": execution.output_sha256})
        elif received is not None:
            kept = received.payload.get("execution")
            if kept is not None:
                execution = Execution.model_validate(kept)
        else:
            if artifact.input is not None and self.policy.subject is not None:
                execution = await execute_subject(self.policy, artifact, self.engine)
                executed_now = True
            payload = self._received(artifact)
            if execution is not None:
                payload["execution"] = execution.record()
            await self._append("job_received", job, artifact, payload)
        try:
            with self._traced(job, artifact):
                return await self._evaluate(job, artifact, execution, recorded,
                                            executed_now=executed_now, given=inputs)
        except (JobIncomplete, BudgetExhausted):
            # An outage (each sample without an answer is journalled as transport_failed),
            # or the cap: neither is a failed evaluation, and a later run resumes the job.
            raise
        except JuratError as exc:
            await self._append("evaluation_failed", job, artifact,
                               {"error": type(exc).__name__, "message": str(exc)})
            raise

    def _traced(self, job: str, artifact: Artifact) -> AbstractContextManager[None]:
        """The telemetry's view of one job: its samples and its decision are one trace."""
        if self.telemetry is None:
            return nullcontext()
        return self.telemetry.job(job, artifact.id, self.campaign.id)

    def _received(self, artifact: Artifact) -> dict[str, JsonValue]:
        """What every ``job_received`` entry of the run records (seed 000: the job binds
        the artifact and policy digests, task version, evaluator and attempt)."""
        return {"artifact_sha256": artifact.sha256, "policy_sha256": self.policy_sha256,
                "task_version": self.policy.task_version, "evaluator": f"jurat/{__version__}",
                "attempt": self.options.attempt}

    def _revisit(self, artifact: Artifact, job: str, history: list[Entry], receipt: Entry
                 ) -> tuple[str, list[Entry], Entry | None, list[Vote]]:
        """The job that decides an output judged before (``job``, its ``history`` and
        ``receipt``), when a review of another output has superseded that receipt since
        (the subject's answer changed, then changed back): a job of its own, after that
        review, whose receipt is the next version; its votes are carried from ``job``,
        so no judge is asked again. Returns the job, its history, its receipt (None: to be
        signed) and the votes carried; ``job`` itself while its receipt is current."""
        carried: list[Vote] = [recorded_vote(e.payload["vote"]) for e in history
                               if e.kind == "sample_recorded"]
        current: Entry | None = receipt
        while current is not None:
            latest = self.ledger.latest_receipt(self.campaign.id, artifact.id)
            if latest is None or latest[0].seq == current.seq or \
                    latest[0].payload.get("adjudicates") == job:
                return job, history, current, []
            job = digest_json({"job": job, "after": latest[0].payload["receipt_sha256"]})
            history = list(self.ledger.entries(job_id=job))
            current = next((e for e in reversed(history) if e.kind == "receipt"), None)
        return job, history, None, carried

    async def _execution(self, base: str, artifact: Artifact, run_id: str
                         ) -> tuple[Execution, bool]:
        """The subject's execution for ``base`` in run ``run_id``, and whether it ran now:
        the one the run recorded (a ``--resume``d run executes nothing again), else a new
        one, recorded before any judge sees its output."""
        job = execution_job(base, run_id)
        if self.history is None or job in self.history.jobs:
            received = next(self.ledger.entries(job_id=job, kind="job_received"), None)
            if received is not None:
                return Execution.model_validate(received.payload["execution"]), False
        execution = await execute_subject(self.policy, artifact, self.engine)
        await self._append("job_received", job, artifact, {
            **self._received(artifact), "run_id": run_id,
            "execution": execution.record()})
        return execution, True

    async def _judge(self, job: str, artifact: Artifact, bundle: EvidenceBundle,
                     gates: list[GateOutcome], recorded: list[Vote], drawn: list[Vote]
                     ) -> list[Vote]:
        """The judges' votes: every planned sample, those already recorded kept as they are.

        Each vote drawn in this run is also appended to ``drawn``, for honest call counts.
        """

        outage: list[Vote] = []
        # Issue 28: the operator's record of each answer, kept beside its vote in the
        # ledger and never in the vote, which is signed into the receipt.
        debugs: dict[tuple[str, str, int], dict[str, JsonValue]] = {}

        def on_debug(vote: Vote, debug: SampleDebug) -> None:
            debugs[(vote.judge, vote.criterion, vote.sample)] = debug.record()

        async def on_vote(vote: Vote) -> None:
            drawn.append(vote)
            # The vote's own price, as job_cost prices it, without building a cost summary.
            price = usd(self.judges.get(vote.judge), vote.input_tokens, vote.output_tokens)
            self.progress.vote(vote, price)
            if no_answer(vote.error):
                # No answer is an outage, not a judgment: journalled as such, and a vote
                # only once its judge is known to have answered the job's other samples.
                outage.append(vote)
                await self._append("transport_failed", job, artifact, {
                    "judge": vote.judge, "criterion": vote.criterion, "sample": vote.sample,
                    "error": vote.error, "attempts": vote.attempts})
                return
            # Durable before the engine goes on, and so before the fold (seed 000).
            payload: dict[str, JsonValue] = {"vote": vote.model_dump(mode="json")}
            debug = debugs.pop((vote.judge, vote.criterion, vote.sample), None)
            if debug is not None:
                payload["debug"] = debug
            await self._append("sample_recorded", job, artifact, payload)

        async def on_retry(judge: str, sample: int, kind: str) -> None:
            await self._append("transport_retry", job, artifact,
                               {"judge": judge, "sample": sample, "error": kind})

        votes = await self.engine.run_samples(
            self.policy, artifact, bundle, gates, existing=recorded, on_vote=on_vote,
            on_retry=on_retry, telemetry=self.telemetry, on_debug=on_debug)
        all_answered_somewhere(artifact, votes)
        for vote in outage:
            # Its judge answered other samples: seed 001's partial failure, an unsure vote.
            await self._append("sample_recorded", job, artifact,
                               {"vote": vote.model_dump(mode="json")})
        return votes

    async def _evaluate(self, job: str, artifact: Artifact, execution: Execution | None,
                        recorded: list[Vote], *, executed_now: bool,
                        given: dict[str, JsonValue] | None = None) -> JobResult:
        # Issue 37: the work this is, and whether another contributor submitted it first.
        work = work_of(self.policy.same_work, artifact)
        first = await self._claim_work(job, artifact, work)
        checked = await deterministic_checks(self.policy, artifact, self.checks)
        if checked.record is not None:
            # Operator-only; the receipt binds it by the commitment its gates carry.
            await self._append("checks_recorded", job, artifact,
                               checked.record.model_dump(mode="json"))
        gates, evidence = checked.gates, checked.evidence
        if execution is not None:
            gate, item, artifact = execution_evidence(self.policy, artifact, execution,
                                                      index=1 + len(evidence))
            gates.append(gate)
            evidence.append(item)
        bundle = EvidenceBundle(items=(artifact_evidence(artifact), *evidence, *self.references))
        # The one place that decides whether judges are asked (a settled pair, a subject
        # without output, a veto): the receipt records why when they are not.
        skipped = judges_skipped(self.policy, gates)
        drawn: list[Vote] = []
        votes = recorded
        extraction: dict[str, JsonValue] | None = None
        if skipped is None:
            async def extracted(payload: dict[str, JsonValue]) -> None:
                await self._append("claims_extracted", job, artifact, payload)

            # Before any claim is labelled; a job that has its extraction reuses it.
            artifact, extraction = await with_extracted_claims(
                self.policy, artifact, self.engine,
                lambda: list(self.ledger.entries(job_id=job, kind="claims_extracted")),
                extracted)
            votes = await self._judge(job, artifact, bundle, gates, recorded, drawn)
        decision = decide(self.policy, gates, votes, artifact=artifact.id,
                          claims=work_claims(artifact.claims))
        if self.telemetry is not None:
            self.telemetry.decision(artifact.id, decision)  # seed 001 §6: samples, agreement
        if decision.disposition == "escalate" or (
            decision.kind == "equivalence" and decision.equivalent is None
        ):
            kind, why = undecided_entry(decision.reasons, votes)
            await self._append(kind, job, artifact, why)
        await self._append("decision", job, artifact, decision.model_dump(mode="json"))
        slot = self._review_slot(artifact)
        inputs: dict[str, JsonValue] = {
            "task": artifact.task, "contributor": artifact.contributor, "upstream_receipts": [],
            "evidence_bundle": bundle.digest, "job_id": job, **(given or {}),
            "work": work.model_dump(mode="json"),
        }
        if first is not None:
            inputs["duplicate_of"] = first
        if skipped is not None:
            inputs["judges_skipped"] = skipped
        if extraction is not None:
            inputs["claim_extraction"] = extraction
        statement = decision_statement(
            policy=self.policy, artifact=artifact, gates=gates, votes=votes, decision=decision,
            bundle=bundle, review_version=slot.version, supersedes=slot.supersedes,
            replay_fidelity_level=replay_fidelity_level_for(self.policy),
            jurat_version=__version__, inputs=inputs, judges_meta=self.schema_meta,
        )
        signed = sign_statement(statement, self.key)
        # The ledger writes the supersession entry itself, in the same transaction.
        entry = await self.log.append_receipt(job, signed, campaign_id=self.campaign.id,
                                              artifact_id=artifact.id, review=slot)
        path = self._out_path(artifact)
        # On the event loop: a thread of its own for the files cost more in handoffs of the
        # interpreter's lock than the writes themselves (bench/README.md, "Whole runs").
        _write_receipt(path, signed)
        fresh = {(v.judge, v.criterion, v.sample) for v in drawn}
        earlier = [v for v in votes if (v.judge, v.criterion, v.sample) not in fresh]
        return JobResult(
            artifact=artifact, decision=decision, votes=votes, gates=gates,
            receipt_path=str(path), review_version=slot.version, drawn=drawn,
            drawn_cost=job_cost(self.policy, drawn, execution if executed_now else None),
            reused_cost=job_cost(self.policy, earlier, None if executed_now else execution),
            judges_skipped=skipped, reference_detail=checked.reference_detail,
            record=checked.record,
            receipt_seq=entry.seq,
        )

    async def _claim_work(self, job: str, artifact: Artifact, work: Work) -> str | None:
        """Record that ``job`` submitted ``work`` (unless it did already: the service records
        it on submission, so its order is the submissions'), and return the job that
        submitted it first, when that job is another contributor's. Read again after the
        append: the ledger's order decides, whatever another process appended meanwhile."""
        key = work_key(self.campaign.id, artifact.task, work)
        claims = list(self.ledger.entries(job_id=key, kind="work_claimed"))
        if not any(claim.payload.get("job") == job for claim in claims):
            await self.log.append("work_claimed", key,
                                  work_claim(job, work, artifact.contributor),
                                  campaign_id=self.campaign.id, artifact_id=artifact.id)
            claims = list(self.ledger.entries(job_id=key, kind="work_claimed"))
        return duplicate_of(claims, job, artifact.contributor)

    def _review_slot(self, artifact: Artifact) -> ReviewSlot:
        if self.history is not None and artifact.id not in self.history.receipted:
            # Nothing to supersede when the run started; the append checks it again.
            return ReviewSlot(version=1)
        return self.ledger.next_review(self.campaign.id, artifact.id)

    def _latest_review(self, artifact: Artifact, job: str, receipt: Entry) -> Entry:
        """The job's latest review: its own receipt, or a later review that adjudicated it
        (`jurat adjudicate`, the service: a receipt of its own ledger job that names this
        one in ``adjudicates``)."""
        latest = self.ledger.latest_receipt(self.campaign.id, artifact.id)
        if latest is not None:
            entry, _ = latest
            if entry.seq > receipt.seq and entry.payload.get("adjudicates") == job:
                return entry
        return receipt

    def _reuse(self, artifact: Artifact, receipt: Entry) -> JobResult:
        """The job already has a receipt: return it (idempotent), restoring the file if lost."""
        signed = decode_receipt(receipt.payload, seq=receipt.seq)
        predicate = read_decision_statement(signed).predicate
        if predicate.artifact.id != artifact.id:
            # Same bytes, so the same job: its receipt is about the artifact decided first,
            # and a file named after this one must hold this one's receipt.
            raise ConfigError(
                f"artifact {artifact.id!r} has the same bytes as {predicate.artifact.id!r}, "
                f"already decided in campaign {self.campaign.id!r}: its receipt names "
                f"{predicate.artifact.id!r} (fix: drop the copy, or judge it in a new "
                "campaign id or task_version)")
        path = self._out_path(artifact)
        # The output directory holds each artifact's latest review, which its proof is for.
        if not path.exists() or path.read_bytes() != signed:
            path.write_bytes(signed)
        gates = list(predicate.gates)
        votes = list(predicate.votes)
        # The rule the receipt names: a jurat.fold/v1 receipt reports its v1 decision.
        decision = decide(self.policy, gates, votes, rule=predicate.fold_rule,
                          adjudication=predicate.review.adjudication, artifact=artifact.id,
                          claims=predicate.inputs.claims)
        return JobResult(artifact=artifact, decision=decision, votes=votes, gates=gates,
                         receipt_path=str(path), review_version=predicate.review.version,
                         reused=True, drawn_cost=job_cost(self.policy, [], None),
                         reused_cost=job_cost(self.policy, votes, None),
                         judges_skipped=predicate.inputs.judges_skipped,
                         receipt_seq=receipt.seq)


def _write_receipt(path: Path, signed: bytes) -> None:
    """Write a receipt, and create its proof file, empty, if there is none yet.

    The proof is written once the run's checkpoint is signed (cli/_run.py). Creating a
    file costs the kernel many times what rewriting one does: created here while the jobs
    run, the proofs at the end cost only their bytes. An empty proof file says its run
    has not finished (`jurat verify` says so), as a missing one did before.
    """
    path.write_bytes(signed)
    try:
        proof_path_for(path).open("xb").close()
    except FileExistsError:
        pass  # a proof from an earlier run: rewritten with this run's


def preflight(campaign: Campaign, engine: Engine, selection: Selection | None = None
              ) -> Inventory:
    """Everything that can refuse the run, for all artifacts at once, before anything is
    sent or written: intake of every artifact and every dataset row (files, caps, digests,
    ids, destinations; runner/_datasets.py) and the engine's preflight (adapters, API keys,
    replay files, kinds). Returns how many artifacts there are and the first, keeping none:
    with a ``selection``, how many it keeps (an unknown ``--only`` id is refused).

    Raises ConfigError or IntakeError (exit 3). The adapters it builds stay in ``engine``.
    """
    inventory = check_artifacts(campaign, selection=selection)
    engine.preflight(campaign.policy, [inventory.first] if inventory.first else [])
    return inventory


async def run_campaign_async(campaign: Campaign, options: RunOptions, *, ledger: Ledger,
                             key: PrivateKey, progress: Progress,
                             telemetry: SampleTelemetry | None = None,
                             engine: Engine | None = None, checked: Inventory | None = None,
                             on_result: OnResult | None = None,
                             appends: GroupCommit | None = None) -> list[JobResult]:
    """Evaluate every artifact; ``preflight`` for all of them happens before anything is
    sent or written (``checked``: the caller already ran it and this is what it returned).

    Without ``on_result``, returns every job's result in the campaign's order. With it,
    each result is handed to ``on_result`` as its job ends and not kept: the list returned
    is empty, and a run of any size holds no more than its jobs in flight.

    ``engine`` is the caller's, which the caller closes (the command line passes the one
    it preflighted); without it, the run opens one and closes it before returning,
    whatever happens. An engine with a ``share`` (k, n) runs only the artifacts whose
    place in the campaign is k modulo n: one of n processes sharing the run
    (runner/_shards.py). ``appends``: the group commit every write goes through, not yet
    opened (a worker's ``remote_group_commit``); default, the ledger's own.
    """
    if engine is None:
        async with Engine() as own:
            return await run_campaign_async(
                campaign, options, ledger=ledger, key=key, progress=progress,
                telemetry=telemetry, engine=own, checked=checked, on_result=on_result,
                appends=appends)
    inventory = checked if checked is not None else preflight(campaign, engine,
                                                                options.selection)
    # A receipt older than one the ledger bound: refused before anything is written.
    upstream = RunUpstream(campaign, ledger, policy_digest(campaign.policy), options.attempt)
    upstream.refuse_superseded(iter_artifacts(campaign, selection=options.selection))
    options.out_dir.mkdir(parents=True, exist_ok=True)
    kept: list[tuple[int, JobResult]] = []
    deliver: OnResult = on_result or (lambda result, index: kept.append((index, result)))
    # Issue 29: the cap counts from what the ledger records, so a raised one resumes.
    guard = attach_budget(campaign, ledger, engine)
    decided = 0
    shard, shards = engine.share
    limit = artifacts_in_flight(campaign.policy, inventory.first, campaign.intake, shards)
    history = ledger.campaign_history(campaign.id)
    async with check_pool([campaign.policy]) as checks, appends or ledger.group_commit() as log:
        runner = JobRunner(campaign, options, ledger=ledger, log=log, key=key,
                           progress=progress, telemetry=telemetry, engine=engine,
                           checks=checks, history=history)

        async def job(index: int, artifact: Artifact) -> None:
            nonlocal decided
            deliver(await runner.run_one(artifact, **upstream.job(artifact)), index)
            decided += 1

        mine = still_as_checked(iter_placed(campaign, shard=(shard, shards),
                                            selection=options.selection))
        try:
            await stream_jobs(mine, limit, job)
        except BudgetExhausted as exc:
            if guard is None:
                raise
            raise stopped_by_budget(guard, inventory.count, decided) from exc
    return [result for _, result in sorted(kept, key=lambda item: item[0])]
