"""Run a campaign: preflight, then every artifact's job at once (docs/design.md, "The pipeline").

``preflight`` refuses a campaign that cannot run (files, digests, destinations, API keys,
replay files, adapters) for all its artifacts at once, before anything is sent or
written; the command line calls it before it even opens the ledger (exit 3, ledger
untouched), and ``run_campaign_async`` calls it again first thing for other callers.

The judge ``Engine`` (adapters, limits, connections) is shared by all the run's jobs:
``run_campaign_async`` opens one and closes it when the last job ends, or uses the
caller's (which the caller closes). The ledger, the signing key and the telemetry sink
are the caller's, opened and closed by it, and passed in.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from jurat import __version__
from jurat.errors import JuratError
from jurat.fold import decide
from jurat.judges import Engine, SampleTelemetry
from jurat.ledger import Entry, EntryKind, Ledger
from jurat.models import (
    Artifact,
    Campaign,
    EvidenceBundle,
    GateOutcome,
    Vote,
    policy_digest,
)
from jurat.receipts import (
    PrivateKey,
    decision_statement,
    read_decision_statement,
    receipt_path_for,
    replay_fidelity_level_for,
    sign_statement,
    statement_document,
)
from jurat.runner._execute import Execution, execute_subject, execution_evidence
from jurat.runner._intake import intake
from jurat.runner._job import (
    JobResult,
    Progress,
    artifact_evidence,
    deterministic_checks,
    job_cost,
    job_identity,
    judges_skipped,
)

__all__ = ["ARTIFACT_CONCURRENCY", "RunOptions", "preflight", "run_campaign_async"]

#: Artifacts evaluated at once; judge calls are bounded separately per endpoint.
ARTIFACT_CONCURRENCY = 8


@dataclass
class RunOptions:
    """Where a run writes and what it signs with."""

    out_dir: Path
    ledger_url: str | None = None
    key_path: Path | None = None
    telemetry_path: Path | None = None
    attempt: int = 1
    quiet: bool = False


class _Runner:
    """One run's jobs, sharing its ledger, key, telemetry and engine."""

    def __init__(self, campaign: Campaign, options: RunOptions, *, ledger: Ledger,
                 key: PrivateKey, progress: Progress, telemetry: SampleTelemetry | None,
                 engine: Engine) -> None:
        self.campaign = campaign
        self.policy = campaign.policy
        self.policy_sha256 = policy_digest(self.policy)
        self.options = options
        self.ledger = ledger
        self.key = key
        self.progress = progress
        self.telemetry = telemetry
        self.engine = engine
        # The ledger is written by one job at a time; its own writes are transactions.
        self.lock = asyncio.Lock()

    async def _append(self, kind: EntryKind, job: str, artifact: Artifact,
                      payload: dict[str, JsonValue]) -> Entry:
        async with self.lock:
            return self.ledger.append(kind, job, payload, campaign_id=self.campaign.id,
                                      artifact_id=artifact.id)

    def _out_path(self, artifact: Artifact) -> Path:
        return receipt_path_for(self.options.out_dir, artifact.id)

    async def run_one(self, artifact: Artifact) -> JobResult:
        job = job_identity(self.policy_sha256, artifact, self.policy, self.options.attempt)
        existing = self.ledger.receipt_for_job(job)
        if existing is not None:
            return self._reuse(artifact, existing)
        received = next(iter(self.ledger.entries(job_id=job, kind="job_received")), None)
        execution: Execution | None = None
        executed_now = False
        if received is not None:
            recorded = received.payload.get("execution")
            if recorded is not None:
                execution = Execution.model_validate(recorded)
        else:
            if artifact.input is not None and self.policy.subject is not None:
                execution = await execute_subject(self.policy, artifact, self.engine)
                executed_now = True
            payload: dict[str, JsonValue] = {
                "artifact_sha256": artifact.sha256, "policy_sha256": self.policy_sha256,
                "task_version": self.policy.task_version, "evaluator": f"jurat/{__version__}",
                "attempt": self.options.attempt,
            }
            if execution is not None:
                payload["execution"] = execution.record()
            await self._append("job_received", job, artifact, payload)
        try:
            return await self._evaluate(job, artifact, execution, executed_now=executed_now)
        except JuratError as exc:
            await self._append("evaluation_failed", job, artifact,
                               {"error": type(exc).__name__, "message": str(exc)})
            raise

    async def _judge(self, job: str, artifact: Artifact, bundle: EvidenceBundle,
                     gates: list[GateOutcome], recorded: list[Vote], drawn: list[Vote]
                     ) -> list[Vote]:
        """The judges' votes: every planned sample, those already recorded kept as they are.

        Each vote drawn in this run is also appended to ``drawn``, for honest call counts.
        """

        async def on_vote(vote: Vote) -> None:
            drawn.append(vote)
            await self._append("sample_recorded", job, artifact,
                               {"vote": vote.model_dump(mode="json")})
            self.progress.vote(vote, job_cost(self.policy, [vote], None).total.usd)

        async def on_retry(judge: str, sample: int, kind: str) -> None:
            await self._append("transport_retry", job, artifact,
                               {"judge": judge, "sample": sample, "error": kind})

        return await self.engine.run_samples(
            self.policy, artifact, bundle, gates, existing=recorded, on_vote=on_vote,
            on_retry=on_retry, telemetry=self.telemetry)

    async def _evaluate(self, job: str, artifact: Artifact, execution: Execution | None, *,
                        executed_now: bool) -> JobResult:
        checked = await deterministic_checks(self.policy, artifact)
        gates, evidence = checked.gates, checked.evidence
        if execution is not None:
            gate, item, artifact = execution_evidence(self.policy, artifact, execution,
                                                      index=1 + len(evidence))
            gates.append(gate)
            evidence.append(item)
        bundle = EvidenceBundle(items=(artifact_evidence(artifact), *evidence))
        recorded = [Vote.model_validate(p["vote"]) for p in self.ledger.samples_for_job(job)]
        # The one place that decides whether judges are asked (a settled pair, a subject
        # without output, a veto): the receipt records why when they are not.
        skipped = judges_skipped(self.policy, gates)
        drawn: list[Vote] = []
        votes = recorded
        if skipped is None:
            votes = await self._judge(job, artifact, bundle, gates, recorded, drawn)
        decision = decide(self.policy, gates, votes)
        if decision.disposition == "escalate" or (
            decision.kind == "equivalence" and decision.equivalent is None
        ):
            await self._append("unresolved_disagreement", job, artifact,
                               {"reasons": list(decision.reasons)})
        await self._append("decision", job, artifact, decision.model_dump(mode="json"))
        slot = self.ledger.next_review(self.campaign.id, artifact.id)
        inputs: dict[str, JsonValue] = {
            "task": artifact.task, "contributor": artifact.contributor, "upstream_receipts": [],
            "evidence_bundle": bundle.digest, "job_id": job,
        }
        if skipped is not None:
            inputs["judges_skipped"] = skipped
        statement = decision_statement(
            policy=self.policy, artifact=artifact, gates=gates, votes=votes, decision=decision,
            bundle=bundle, review_version=slot.version, supersedes=slot.supersedes,
            replay_fidelity_level=replay_fidelity_level_for(self.policy),
            jurat_version=__version__, inputs=inputs,
        )
        signed = sign_statement(statement_document(statement), self.key)
        # The ledger writes the supersession entry itself, in the same transaction.
        async with self.lock:
            self.ledger.append_receipt(job, signed, campaign_id=self.campaign.id,
                                       artifact_id=artifact.id, review=slot)
        path = self._out_path(artifact)
        path.write_bytes(signed)
        fresh = {(v.judge, v.criterion, v.sample) for v in drawn}
        earlier = [v for v in votes if (v.judge, v.criterion, v.sample) not in fresh]
        return JobResult(
            artifact=artifact, decision=decision, votes=votes, gates=gates,
            receipt_path=str(path), review_version=slot.version, drawn=drawn,
            drawn_cost=job_cost(self.policy, drawn, execution if executed_now else None),
            reused_cost=job_cost(self.policy, earlier, None if executed_now else execution),
            judges_skipped=skipped, reference_detail=checked.reference_detail,
        )

    def _reuse(self, artifact: Artifact, signed: bytes) -> JobResult:
        """The job already has a receipt: return it (idempotent), restoring the file if lost."""
        path = self._out_path(artifact)
        if not path.exists():
            path.write_bytes(signed)
        predicate = read_decision_statement(signed).predicate
        gates = list(predicate.gates)
        votes = list(predicate.votes)
        decision = decide(self.policy, gates, votes)
        return JobResult(artifact=artifact, decision=decision, votes=votes, gates=gates,
                         receipt_path=str(path), review_version=predicate.review.version,
                         reused=True, drawn_cost=job_cost(self.policy, [], None),
                         reused_cost=job_cost(self.policy, votes, None),
                         judges_skipped=predicate.inputs.judges_skipped)


def preflight(campaign: Campaign, engine: Engine) -> list[Artifact]:
    """Everything that can refuse the run, for all artifacts at once, before anything is
    sent or written: intake (files, caps, digests, destinations) and the engine's
    preflight (adapters, API keys, replay files, kinds). Returns the artifacts, pinned.

    Raises ConfigError or IntakeError (exit 3). The adapters it builds stay in ``engine``.
    """
    artifacts = intake(campaign)
    engine.preflight(campaign.policy, artifacts)
    return artifacts


async def run_campaign_async(campaign: Campaign, options: RunOptions, *, ledger: Ledger,
                             key: PrivateKey, progress: Progress,
                             telemetry: SampleTelemetry | None = None,
                             engine: Engine | None = None) -> list[JobResult]:
    """Evaluate every artifact; ``preflight`` for all of them happens before anything is
    sent or written.

    ``engine`` is the caller's, which the caller closes (the command line passes the one
    it preflighted); without it, the run opens one and closes it before returning,
    whatever happens.
    """
    if engine is None:
        async with Engine() as own:
            return await run_campaign_async(campaign, options, ledger=ledger, key=key,
                                            progress=progress, telemetry=telemetry, engine=own)
    artifacts = preflight(campaign, engine)
    options.out_dir.mkdir(parents=True, exist_ok=True)
    gate = asyncio.Semaphore(ARTIFACT_CONCURRENCY)
    runner = _Runner(campaign, options, ledger=ledger, key=key, progress=progress,
                     telemetry=telemetry, engine=engine)

    async def bounded(artifact: Artifact) -> JobResult:
        async with gate:
            return await runner.run_one(artifact)

    return list(await asyncio.gather(*(bounded(a) for a in artifacts)))
