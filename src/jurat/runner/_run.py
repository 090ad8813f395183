"""Run a campaign: intake, then every artifact's job concurrently (docs/design.md, "The pipeline").

The run owns the judge ``Engine`` (adapters, limits, connections): it opens one for all its
jobs and closes it when the last job ends. The ledger, the signing key and the telemetry
sink are the caller's, opened and closed by it, and passed in.
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
    GATE_EQUIVALENCE_DETERMINISTIC,
    GATE_SUBJECT_EXECUTION,
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
)

__all__ = ["ARTIFACT_CONCURRENCY", "RunOptions", "run_campaign_async"]

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
        if received is not None:
            recorded = received.payload.get("execution")
            if recorded is not None:
                execution = Execution.model_validate(recorded)
        else:
            if artifact.input is not None and self.policy.subject is not None:
                execution = await execute_subject(self.policy, artifact, self.engine)
            payload: dict[str, JsonValue] = {
                "artifact_sha256": artifact.sha256, "policy_sha256": self.policy_sha256,
                "task_version": self.policy.task_version, "evaluator": f"jurat/{__version__}",
                "attempt": self.options.attempt,
            }
            if execution is not None:
                payload["execution"] = execution.record()
            await self._append("job_received", job, artifact, payload)
        try:
            return await self._evaluate(job, artifact, execution)
        except JuratError as exc:
            await self._append("evaluation_failed", job, artifact,
                               {"error": type(exc).__name__, "message": str(exc)})
            raise

    async def _judge(self, job: str, artifact: Artifact, bundle: EvidenceBundle,
                     gates: list[GateOutcome], recorded: list[Vote]) -> list[Vote]:
        """The judges' votes: every planned sample, those already recorded kept as they are."""

        async def on_vote(vote: Vote) -> None:
            await self._append("sample_recorded", job, artifact,
                               {"vote": vote.model_dump(mode="json")})
            self.progress.vote(vote, job_cost(self.policy, [vote], None).total.usd)

        async def on_retry(judge: str, sample: int, kind: str) -> None:
            await self._append("transport_retry", job, artifact,
                               {"judge": judge, "sample": sample, "error": kind})

        return await self.engine.run_samples(
            self.policy, artifact, bundle, gates, existing=recorded, on_vote=on_vote,
            on_retry=on_retry, telemetry=self.telemetry)

    async def _evaluate(self, job: str, artifact: Artifact, execution: Execution | None
                        ) -> JobResult:
        gates, evidence = await deterministic_checks(self.policy, artifact)
        if execution is not None:
            gate, item, artifact = execution_evidence(self.policy, artifact, execution,
                                                      index=1 + len(evidence))
            gates.append(gate)
            evidence.append(item)
        bundle = EvidenceBundle(items=(artifact_evidence(artifact), *evidence))
        recorded = [Vote.model_validate(p["vote"]) for p in self.ledger.samples_for_job(job)]
        settled = any(g.id == GATE_EQUIVALENCE_DETERMINISTIC and g.outcome in ("pass", "fail")
                      for g in gates)
        failed_execution = any(g.id == GATE_SUBJECT_EXECUTION and g.outcome != "pass"
                               for g in gates)
        votes = recorded
        if not settled and not failed_execution:
            votes = await self._judge(job, artifact, bundle, gates, recorded)
        decision = decide(self.policy, gates, votes)
        if decision.disposition == "escalate" or (
            decision.kind == "equivalence" and decision.equivalent is None
        ):
            await self._append("unresolved_disagreement", job, artifact,
                               {"reasons": list(decision.reasons)})
        await self._append("decision", job, artifact, decision.model_dump(mode="json"))
        slot = self.ledger.next_review(self.campaign.id, artifact.id)
        statement = decision_statement(
            policy=self.policy, artifact=artifact, gates=gates, votes=votes, decision=decision,
            bundle=bundle, review_version=slot.version, supersedes=slot.supersedes,
            replay_fidelity_level=replay_fidelity_level_for(self.policy),
            jurat_version=__version__,
            inputs={"task": artifact.task, "contributor": artifact.contributor,
                    "upstream_receipts": [], "evidence_bundle": bundle.digest,
                    "job_id": job},
        )
        signed = sign_statement(statement_document(statement), self.key)
        # The ledger writes the supersession entry itself, in the same transaction.
        async with self.lock:
            self.ledger.append_receipt(job, signed, campaign_id=self.campaign.id,
                                       artifact_id=artifact.id, review=slot)
        path = self._out_path(artifact)
        path.write_bytes(signed)
        return JobResult(artifact=artifact, decision=decision, votes=votes, gates=gates,
                         receipt_path=str(path), review_version=slot.version,
                         cost=job_cost(self.policy, votes, execution))

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
                         reused=True, cost=job_cost(self.policy, votes, None))


async def run_campaign_async(campaign: Campaign, options: RunOptions, *, ledger: Ledger,
                             key: PrivateKey, progress: Progress,
                             telemetry: SampleTelemetry | None = None) -> list[JobResult]:
    """Evaluate every artifact; intake for all of them happens before anything is sent.

    Opens the run's judge engine and closes it before returning, whatever happens.
    """
    artifacts = intake(campaign)
    options.out_dir.mkdir(parents=True, exist_ok=True)
    gate = asyncio.Semaphore(ARTIFACT_CONCURRENCY)
    async with Engine() as engine:
        runner = _Runner(campaign, options, ledger=ledger, key=key, progress=progress,
                         telemetry=telemetry, engine=engine)

        async def bounded(artifact: Artifact) -> JobResult:
            async with gate:
                return await runner.run_one(artifact)

        return list(await asyncio.gather(*(bounded(a) for a in artifacts)))
