"""Run a campaign: intake, then every artifact's job concurrently, then checkpoint the log."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurat import __version__
from jurat.errors import JuratError
from jurat.fold import decide
from jurat.models import Artifact, Campaign, EvidenceBundle, Vote, policy_digest
from jurat.runner._intake import intake
from jurat.runner._job import (
    JobResult,
    Progress,
    artifact_evidence,
    deterministic_checks,
    job_identity,
)

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


def exit_code(decisions: Sequence[Any]) -> int:
    """DESIGN.md: 0 all accepted/shipped/settled, 1 escalate/warn/undecided, 2 reject/block."""
    code = 0
    for d in decisions:
        if d.disposition == "reject" or d.rollout == "BLOCK":
            return 2
        if d.disposition == "escalate" or d.rollout == "WARN":
            code = 1
        if d.kind == "equivalence" and d.equivalent is None:
            code = 1
    return code


class _Runner:
    def __init__(self, campaign: Campaign, options: RunOptions, ledger: Any, key: Any,
                 progress: Progress, telemetry: Any) -> None:
        self.campaign = campaign
        self.policy = campaign.policy
        self.policy_sha256 = policy_digest(self.policy)
        self.options = options
        self.ledger = ledger
        self.key = key
        self.progress = progress
        self.telemetry = telemetry
        self.lock = asyncio.Lock()

    async def _append(self, kind: str, job: str, artifact: Artifact, payload: dict[str, Any]
                      ) -> Any:
        async with self.lock:
            return self.ledger.append(kind, job, payload, campaign_id=self.campaign.id,
                                      artifact_id=artifact.id)

    def _out_path(self, artifact: Artifact) -> Path:
        return self.options.out_dir / f"{artifact.id}.sigstore.json"

    async def run_one(self, artifact: Artifact) -> JobResult:
        job = job_identity(self.policy_sha256, artifact, self.policy, self.options.attempt)
        existing = self.ledger.receipt_for_job(job)
        if existing is not None:
            return self._reuse(artifact, existing)
        received = next(iter(self.ledger.entries(job_id=job, kind="job_received")), None)
        execution: dict[str, Any] | None = None
        if received is not None:
            execution = received.payload.get("execution")
        else:
            if artifact.input is not None and self.policy.subject is not None:
                execution = await self._execute(artifact)
            payload: dict[str, Any] = {
                "artifact_sha256": artifact.sha256, "policy_sha256": self.policy_sha256,
                "task_version": self.policy.task_version, "evaluator": f"jurat/{__version__}",
                "attempt": self.options.attempt,
            }
            if execution is not None:
                payload["execution"] = execution
            await self._append("job_received", job, artifact, payload)
        try:
            return await self._evaluate(job, artifact, execution)
        except JuratError as exc:
            await self._append("evaluation_failed", job, artifact,
                               {"error": type(exc).__name__, "message": str(exc)})
            raise

    async def _execute(self, artifact: Artifact) -> dict[str, Any]:
        """Seed 001 §3: run the subject once, pinned; a failure is recorded, never judged."""
        from jurat.runner._execute import execute_subject

        try:
            return await execute_subject(self.policy, artifact)
        except JuratError as exc:
            return {"output": None, "error": getattr(exc, "kind", type(exc).__name__),
                    "message": str(exc)}

    async def _evaluate(self, job: str, artifact: Artifact, execution: dict[str, Any] | None
                        ) -> JobResult:
        from jurat.judges import run_samples
        from jurat.receipts import build_statement, replay_fidelity_level_for, sign_statement
        from jurat.runner._execute import execution_evidence

        gates, evidence = await deterministic_checks(self.policy, artifact)
        if execution is not None:
            gate, item, artifact = execution_evidence(self.policy, artifact, execution,
                                                      index=1 + len(evidence))
            gates.append(gate)
            evidence.append(item)
        bundle = EvidenceBundle(items=(artifact_evidence(artifact), *evidence))
        recorded = [Vote.model_validate(p["vote"]) for p in self.ledger.samples_for_job(job)]

        async def on_vote(vote: Vote) -> None:
            await self._append("sample_recorded", job, artifact,
                               {"vote": vote.model_dump(mode="json")})
            self.progress.vote(vote, job_cost(self.policy, [vote], None)["usd"])

        async def on_retry(judge: str, sample: int, kind: str) -> None:
            await self._append("transport_retry", job, artifact,
                               {"judge": judge, "sample": sample, "error": kind})

        settled = any(g.id == "equivalence.deterministic" and g.outcome in ("pass", "fail")
                      for g in gates)
        failed_execution = any(g.id == "subject.execution" and g.outcome != "pass"
                               for g in gates)
        votes: list[Vote] = recorded
        if not settled and not failed_execution:
            votes = await run_samples(self.policy, artifact, bundle, gates, existing=recorded,
                                      on_vote=on_vote, on_retry=on_retry,
                                      telemetry=self.telemetry)
        decision = decide(self.policy, gates, votes)
        if decision.disposition == "escalate" or (
            decision.kind == "equivalence" and decision.equivalent is None
        ):
            await self._append("unresolved_disagreement", job, artifact,
                               {"reasons": list(decision.reasons)})
        await self._append("decision", job, artifact, decision.model_dump(mode="json"))
        slot = self.ledger.next_review(self.campaign.id, artifact.id)
        statement = build_statement(
            policy=self.policy, artifact=artifact, gates=gates, votes=votes, decision=decision,
            bundle=bundle, review_version=slot.version, supersedes=slot.supersedes,
            replay_fidelity_level=replay_fidelity_level_for(self.policy),
            jurat_version=__version__,
            inputs={"task": artifact.task, "contributor": artifact.contributor,
                    "upstream_receipts": [], "evidence_bundle": bundle.digest,
                    "job_id": job},
        )
        signed = sign_statement(statement, self.key)
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
        from jurat.receipts import read_statement

        statement = read_statement(signed)
        pred = statement["predicate"]
        from jurat.models import GateOutcome

        gates = [GateOutcome.model_validate(g) for g in pred["gates"]]
        votes = [Vote.model_validate(v) for v in pred["votes"]]
        decision = decide(self.policy, gates, votes)
        return JobResult(artifact=artifact, decision=decision, votes=votes, gates=gates,
                         receipt_path=str(path), review_version=pred["review"]["version"],
                         reused=True, cost=job_cost(self.policy, votes, None))


def job_cost(policy: Any, votes: Sequence[Vote], execution: dict[str, Any] | None
             ) -> dict[str, Any]:
    """Tokens and USD per phase for one job (seed 001 §5): only the judge phase multiplies."""
    from jurat.judges import PhaseCost, cost_summary
    from jurat.judges._cost import usd

    extra = []
    if execution is not None and policy.subject is not None:
        usage = execution.get("usage") or {}
        tin, tout = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
        extra.append(PhaseCost(phase="execution", calls=1,
                               attempts=int(execution.get("attempts", 1)), input_tokens=tin,
                               output_tokens=tout, usd=usd(policy.subject, tin, tout)))
    summary = cost_summary(votes, policy.judges, extra)
    return {"usd": summary.total.usd, "summary": summary}


async def run_campaign_async(campaign: Campaign, options: RunOptions, *, ledger: Any, key: Any,
                             progress: Progress, telemetry: Any = None) -> list[JobResult]:
    """Evaluate every artifact; intake for all of them happens before anything is sent."""
    artifacts = intake(campaign)
    options.out_dir.mkdir(parents=True, exist_ok=True)
    runner = _Runner(campaign, options, ledger, key, progress, telemetry)
    gate = asyncio.Semaphore(ARTIFACT_CONCURRENCY)

    async def bounded(artifact: Artifact) -> JobResult:
        async with gate:
            return await runner.run_one(artifact)

    from jurat.judges import default_engine

    try:
        return list(await asyncio.gather(*(bounded(a) for a in artifacts)))
    finally:
        # Unclosed SDK clients collected later can swallow responses in the same process.
        await default_engine().aclose()
