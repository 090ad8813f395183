"""Run a campaign: intake, then every artifact's job concurrently, then checkpoint the log."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurat import __version__
from jurat.canonical import sha256_digest
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


@dataclass
class RunResult:
    """Everything the CLI prints after a run."""

    campaign: Campaign
    results: list[JobResult]
    ledger_url: str
    key_path: Path
    key_created: bool
    checkpoint_path: str | None = None
    cost: dict[str, Any] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """DESIGN.md: 0 all accepted/shipped, 1 any escalate/warn, 2 any reject/block."""
        return exit_code([r.decision for r in self.results])


def exit_code(decisions: Sequence[Any]) -> int:
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
        if not any(True for _ in self.ledger.entries(job_id=job, kind="job_received")):
            await self._append("job_received", job, artifact, {
                "artifact_sha256": artifact.sha256, "policy_sha256": self.policy_sha256,
                "task_version": self.policy.task_version, "evaluator": f"jurat/{__version__}",
                "attempt": self.options.attempt,
            })
        try:
            return await self._evaluate(job, artifact)
        except JuratError as exc:
            await self._append("evaluation_failed", job, artifact,
                               {"error": type(exc).__name__, "message": str(exc)})
            raise

    async def _evaluate(self, job: str, artifact: Artifact) -> JobResult:
        from jurat.judges import run_samples
        from jurat.receipts import build_statement, replay_fidelity_level_for, sign_statement

        gates, evidence = await deterministic_checks(self.policy, artifact)
        bundle = EvidenceBundle(items=(artifact_evidence(artifact), *evidence))
        recorded = [Vote.model_validate(p["vote"]) for p in self.ledger.samples_for_job(job)]

        async def on_vote(vote: Vote) -> None:
            await self._append("sample_recorded", job, artifact,
                               {"vote": vote.model_dump(mode="json")})
            self.progress.vote(vote, None)

        async def on_retry(judge: str, sample: int, kind: str) -> None:
            await self._append("transport_retry", job, artifact,
                               {"judge": judge, "sample": sample, "error": kind})

        settled = any(g.id == "equivalence.deterministic" and g.outcome in ("pass", "fail")
                      for g in gates)
        votes: list[Vote] = recorded
        if not settled:
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
                         receipt_path=str(path), review_version=slot.version)

    def _reuse(self, artifact: Artifact, signed: bytes) -> JobResult:
        """The job already has a receipt: return it (idempotent), restoring the file if lost."""
        path = self._out_path(artifact)
        if not path.exists():
            path.write_bytes(signed)
        statement = statement_of(signed)
        pred = statement["predicate"]
        from jurat.models import GateOutcome

        gates = [GateOutcome.model_validate(g) for g in pred["gates"]]
        votes = [Vote.model_validate(v) for v in pred["votes"]]
        decision = decide(self.policy, gates, votes)
        return JobResult(artifact=artifact, decision=decision, votes=votes, gates=gates,
                         receipt_path=str(path), review_version=pred["review"]["version"],
                         reused=True)


def statement_of(signed: bytes) -> dict[str, Any]:
    """The in-toto statement inside a Sigstore bundle's DSSE envelope."""
    bundle = json.loads(signed)
    payload = base64.b64decode(bundle["dsseEnvelope"]["payload"])
    statement: dict[str, Any] = json.loads(payload)
    return statement


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

    return list(await asyncio.gather(*(bounded(a) for a in artifacts)))
