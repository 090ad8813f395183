"""The service's jobs: their identity, what the ledger records about them, and their state.

The ledger is the durable queue of record (docs/service.md, "Durability"). A job is
accepted by appending its ``job_received`` entry, which carries, besides the fields
`jurat run` records (artifact and policy digests, task version, evaluator, attempt), a
``service`` object with what a restart needs to run it again: the artifact as submitted,
its contributor, assignment and verified upstream receipts. The 202 is sent after that
entry is committed. On start, every ``job_received`` with a ``service`` object and no
receipt is run again through the runner, which resumes from the recorded samples and never
draws one twice (runner/_run.py).

A job whose work (its normalised form, runner/_work.py) another contributor's job of the
same campaign submitted first is marked a duplicate of that first job: each submission's
``work_claimed`` entry follows its ``job_received``, and the ledger's order of those
entries decides, on every replica alike. It still runs and gets its receipt, which names
the first (``inputs.duplicate_of``), and the settlement signer refuses to pay a copy
(docs/signer.md). Every role that may read the job sees the mark, as in the receipt.

An adjudicated review is a receipt of its own ledger job (the ledger keeps one receipt per
job), ``adjudication_job(job, version)``, whose payload names the job it reviews
(``adjudicates``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from jurat._version import __version__
from jurat.canonical import digest_json, sha256_digest
from jurat.models import Artifact, ArtifactSpec, Campaign
from jurat.runner import context_digests
from jurat.service._models import JobStatus

__all__ = [
    "SERVICE_KEY",
    "JobState",
    "adjudication_job",
    "job_identity",
    "ledger_artifact_id",
    "receipt_inputs",
    "received_payload",
    "spec_of",
]

#: The key of the ``service`` object in a ``job_received`` payload.
SERVICE_KEY = "service"
_IDENTITY = "jurat.service.job/v1"


@dataclass
class JobState:
    """One job as the server tracks it; rebuilt from the ledger on start."""

    job_id: str
    """The job id (``job_identity``), also its ledger job."""
    campaign_id: str
    """Its campaign."""
    artifact_id: str
    """As submitted."""
    ledger_artifact_id: str
    """As the ledger and the receipt record it (``ledger_artifact_id``)."""
    contributor: str | None
    """Who submitted it; a contributor token reads only jobs with its subject here."""
    status: JobStatus = "queued"
    """queued until a slot is free, running, decided once it has a receipt, or failed."""
    reviews: list[tuple[int, int]] = field(default_factory=list)
    """(review version, ledger seq of its receipt), oldest first."""
    durable: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once its ``job_received`` entry is committed."""
    duplicate_of: str | None = None
    """The job that first submitted this job's work, when that was another contributor's
    (``Service.duplicate_of``, runner/_work.py)."""
    work_key: str | None = None
    """The ledger job id of its work's ``work_claimed`` entries; None for a job recorded
    before issue 37."""
    work_known: bool = False
    """Whether ``duplicate_of`` was read from the ledger (after the job's own claim)."""
    received_seq: int = 0
    """The ledger seq of its ``job_received`` entry (0 until durable): listings are in
    this order, oldest first, and page on it."""
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    """Set while the job is decided or failed (``mark``): what a long-poll waits on."""
    disposition: tuple[int, str] | None = None
    """(ledger seq of the latest review, its disposition), read once per review."""

    def mark(self, status: JobStatus) -> None:
        """Set the status, waking every long-poll once the job is decided or failed."""
        self.status = status
        if status in ("decided", "failed"):
            self.settled.set()
        else:
            self.settled.clear()


def ledger_artifact_id(artifact_id: str, contributor: str | None) -> str:
    """``<contributor>:<id>``: contributors choose their ids, so two of them may pick the
    same one; the ledger's review versions (per campaign and artifact id) must never chain
    one contributor's receipt to another's. Neither part may contain ``:``."""
    return artifact_id if contributor is None else f"{contributor}:{artifact_id}"


def job_identity(campaign: Campaign, policy_sha256: str, artifact: Artifact, *,
                 contributor: str | None, assignment: str | None,
                 upstream: tuple[dict[str, JsonValue], ...]) -> str:
    """The job id: sha256 of the canonical JSON of everything the job is bound to (seed
    000: "Bind every job to the artifact digest, task version, campaign policy, evaluator
    version, and attempt identity"); here the attempt is the submission itself (who, which
    artifact id, which assignment, which upstream receipts). The same body gives the same
    id, so a retried submission finds its job and draws no new sample."""
    return digest_json({
        "identity": _IDENTITY,
        "campaign": campaign.id,
        "policy_sha256": policy_sha256,
        "task_version": campaign.policy.task_version,
        "evaluator": f"jurat/{__version__}",
        "contributor": contributor,
        "assignment": assignment,
        "artifact": {"id": artifact.id, "sha256": artifact.sha256,
                     "media_type": artifact.media_type, "task": artifact.task},
        "upstream": [dict(u) for u in upstream],
        # Only when it submitted claims: other claims are another judgment.
        **({"claims": [sha256_digest(c.text) for c in artifact.claims]} if artifact.claims
           else {}),
        # Only when present: a job of a campaign without tasks keeps the id it always had.
        **context_digests(artifact),
    })


def adjudication_job(job_id: str, version: int) -> str:
    """The ledger job of review ``version`` of ``job_id`` made by an adjudication."""
    return digest_json({"identity": "jurat.service.adjudication/v1", "job": job_id,
                        "review_version": version})


def received_payload(policy_sha256: str, campaign: Campaign, artifact: Artifact, *,
                     submitted_id: str, contributor: str | None, assignment: str | None,
                     upstream: tuple[dict[str, JsonValue], ...],
                     work_key: str | None = None) -> dict[str, JsonValue]:
    """The ``job_received`` payload: `jurat run`'s fields plus the ``service`` object
    (with ``work_key``, where the job's ``work_claimed`` entries are, runner/_work.py)."""
    return {
        "artifact_sha256": artifact.sha256, "policy_sha256": policy_sha256,
        "task_version": campaign.policy.task_version, "evaluator": f"jurat/{__version__}",
        "attempt": 1,
        SERVICE_KEY: {
            "artifact_id": submitted_id, "contributor": contributor, "assignment": assignment,
            "media_type": artifact.media_type, "task": artifact.task, "text": artifact.text,
            "upstream_receipts": [dict(u) for u in upstream],
            **({"work_key": work_key} if work_key is not None else {}),
            # The contributor's claims, for re-intake on resume (the operator's ledger only).
            **({"claims": [c.text for c in artifact.claims]} if artifact.claims else {}),
            # The contributor's text, kept in the operator's ledger for re-intake on resume.
            **({"explanation": artifact.explanation.reveal()}
               if artifact.explanation is not None else {}),
        },
    }


def spec_of(service: dict[str, Any]) -> ArtifactSpec:
    """The artifact entry a recorded ``service`` object describes (for re-intake on resume)."""
    return ArtifactSpec(id=str(service["artifact_id"]), text=str(service["text"]),
                        media_type=service.get("media_type"), task=service.get("task"),
                        contributor=service.get("contributor"),
                        claims=tuple(service.get("claims", ())),
                        explanation=service.get("explanation"))


def receipt_inputs(service: dict[str, Any]) -> dict[str, JsonValue]:
    """The receipt's ``inputs`` a recorded job adds to the runner's: its assignment and its
    verified upstream receipts (docs/receipt-format.md §6.4)."""
    return {"assignment": service.get("assignment"),
            "upstream_receipts": list(service.get("upstream_receipts", ()))}
