"""One artifact's job: checks → judges → validation → fold → receipt → ledger.

The stages and their order are docs/design.md's pipeline.

Every sample is appended to the ledger as soon as it is final, so an interrupted run
resumes from the ledger and never resamples (seed 000: a retry is not a new sample).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jurat import __version__
from jurat.checks import deterministic_equivalence, run_checks_async
from jurat.judges import CostSummary, PhaseCost, cost_summary, usd
from jurat.ledger import job_id
from jurat.models import (
    Artifact,
    Decision,
    EvidenceItem,
    GateOutcome,
    Policy,
    Vote,
)
from jurat.runner._execute import Execution

EXCERPT_CHARS = 2000


@dataclass
class JobResult:
    """What the summary table and the exit code need from one artifact's job."""

    artifact: Artifact
    decision: Decision
    votes: list[Vote]
    gates: list[GateOutcome]
    receipt_path: str
    cost: CostSummary
    review_version: int = 1
    reused: bool = False


@dataclass
class Progress:
    """Counters the progress bar shows; updated from the event loop only."""

    samples: int = 0
    errors: int = 0
    spend_usd: float = 0.0
    on_change: Callable[[], None] | None = None

    def vote(self, vote: Vote, usd: float | None) -> None:
        self.samples += 1
        self.errors += vote.error is not None
        self.spend_usd += usd or 0.0
        if self.on_change:
            self.on_change()


def artifact_evidence(artifact: Artifact) -> EvidenceItem:
    """Index 0 of every bundle: the artifact itself, so judges cite it by number."""
    if artifact.a is not None or artifact.b is not None:
        half = EXCERPT_CHARS // 2
        excerpt = f"A:\n{(artifact.a or '')[:half]}\nB:\n{(artifact.b or '')[:half]}"
    else:
        excerpt = artifact.text[:EXCERPT_CHARS]
    return EvidenceItem(kind="artifact", tool="jurat", tool_version=__version__,
                        sha256=artifact.sha256, excerpt=excerpt)


async def deterministic_checks(
    policy: Policy, artifact: Artifact
) -> tuple[list[GateOutcome], list[EvidenceItem]]:
    """Seed 000 code pipeline for Python artifacts; seed 002 numeric pass for answer pairs."""
    hard_gates = policy.hard_gates
    if policy.kind == "equivalence" and artifact.a is not None and artifact.b is not None:
        settings = policy.equivalence
        if settings is None or settings.deterministic_first:
            check = deterministic_equivalence(artifact.a, artifact.b)
            # By default `b` is the reference (the gold answer): the gate binds it by digest
            # only (docs/receipt-format.md, "Reference material").
            reference = settings is None or settings.reference == "b"
            return [check.to_gate(reference=reference)], []
        return [], []
    if policy.python is not None and artifact.media_type == "text/x-python":
        report = await run_checks_async(
            artifact.text, tests=artifact.tests or None, config=policy.python,
            hard_gates=hard_gates, artifact_sha256=artifact.sha256,
        )
        return list(report.gates), list(report.evidence)
    return [], []


def job_identity(policy_sha256: str, artifact: Artifact, policy: Policy, attempt: int) -> str:
    """Seed 000: bind every job to artifact digest, task version, policy, evaluator, attempt."""
    return job_id(artifact.sha256, policy.task_version, policy_sha256, f"jurat/{__version__}",
                  attempt)


def job_cost(policy: Policy, votes: Sequence[Vote], execution: Execution | None) -> CostSummary:
    """Tokens and USD per phase for one job (seed 001 §5): only the judge phase multiplies."""
    extra = []
    if execution is not None and policy.subject is not None:
        tin = int(execution.usage.get("input_tokens", 0))
        tout = int(execution.usage.get("output_tokens", 0))
        extra.append(PhaseCost(phase="execution", calls=1, attempts=execution.attempts,
                               input_tokens=tin, output_tokens=tout,
                               usd=usd(policy.subject, tin, tout)))
    return cost_summary(votes, policy.judges, extra)

