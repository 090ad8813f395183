"""The JSON bodies of the HTTP oracle (docs/service.md; ../shared/DESIGN.md, "Contracts,
part 2"). Requests refuse unknown keys, so a typo is an error naming the field, not a field
silently ignored; responses are what /openapi.json publishes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from jurat.models import Frozen
from jurat.models._adjudication import MAX_RATIONALE_CHARS

__all__ = [
    "AdjudicationAccepted",
    "AdjudicationRequest",
    "ArtifactIn",
    "CampaignInfo",
    "CampaignList",
    "CheckpointOut",
    "DecisionRow",
    "DecisionsPage",
    "ErrorOut",
    "JobAccepted",
    "JobOut",
    "JobRequest",
    "JobStatus",
]

JobStatus = Literal["queued", "running", "decided", "failed"]
_ID = r"^[A-Za-z0-9._-]+$"


class ArtifactIn(Frozen):
    """The artifact of a job: its id and content (``text`` or ``content_base64``)."""

    id: str = Field(min_length=1, max_length=200, pattern=_ID)
    """The contributor's id for it; the receipt records it as ``<contributor>:<id>``."""
    text: str | None = None
    """The content as text."""
    content_base64: str | None = Field(None, max_length=48 * 1024 * 1024)
    """The content as base64 of UTF-8 bytes (instead of ``text``)."""
    media_type: str | None = Field(None, min_length=1, max_length=100)
    """``text/x-python`` runs the campaign's code checks; default ``text/plain``."""
    task: str | None = Field(None, min_length=1, max_length=200)
    """The task or test-case id it answers."""


class JobRequest(Frozen):
    """``POST /v1/campaigns/{cid}/jobs``."""

    artifact: ArtifactIn
    """What to evaluate."""
    assignment: str | None = Field(None, min_length=1, max_length=200)
    """The assignment id it answers, bound into the job identity and the receipt."""
    contributor: str | None = Field(None, min_length=1, max_length=100, pattern=_ID)
    """Operator tokens only: who submitted it (a contributor token fixes its own subject)."""
    upstream_receipts: list[dict[str, Any]] = Field(default_factory=list, max_length=8)
    """Stage 1/2 receipts (Sigstore bundles) about this artifact, signed by keys the
    campaign trusts (``[upstream] keys``)."""


class JobAccepted(Frozen):
    """202: the job is durable in the ledger (the same body again gives the same id)."""

    job_id: str
    """The job's id: sha256 of its identity (campaign, policy, contributor, artifact digest,
    assignment, upstream receipts, evaluator)."""
    status: JobStatus
    """Where it is now."""


class JobOut(Frozen):
    """``GET /v1/jobs/{job_id}``."""

    job_id: str
    """The job's id."""
    campaign_id: str
    """Its campaign."""
    artifact_id: str
    """The artifact id as submitted."""
    status: JobStatus
    """queued, running, decided or failed (a failed job runs again, from what it recorded,
    when the same body is submitted again or the server restarts)."""
    decision: dict[str, Any] | None = None
    """The latest review's ``predicate.decision``, once decided."""
    review_version: int | None = None
    """The latest review's version, once decided."""


class CampaignInfo(Frozen):
    """One served campaign."""

    id: str
    """Campaign id."""
    kind: str
    """rubric, pairwise, criteria or equivalence."""
    policy_sha256: str
    """sha256 of the pinned policy, as every receipt records it."""


class CampaignList(Frozen):
    """``GET /v1/campaigns``."""

    campaigns: list[CampaignInfo]
    """The campaigns this server serves that the token may see."""


class AdjudicationRequest(Frozen):
    """``POST /v1/jobs/{job_id}/adjudication``."""

    disposition: Literal["accept", "reject"]
    """The reviewer's decision on the escalation."""
    rationale: str = Field(min_length=1, max_length=MAX_RATIONALE_CHARS)
    """Why; published in the receipt, so it must not quote the campaign's tests."""


class AdjudicationAccepted(Frozen):
    """202: the new review is signed and recorded; poll the job."""

    job_id: str
    """The job."""
    review_version: int
    """The new review's version."""


class DecisionRow(Frozen):
    """One receipt of a campaign."""

    job_id: str
    """The job it decides."""
    artifact_id: str
    """The artifact id as the receipt records it."""
    review_version: int
    """Its review version."""
    decision: dict[str, Any]
    """Its ``predicate.decision``."""


class DecisionsPage(Frozen):
    """``GET /v1/campaigns/{cid}/decisions``."""

    decisions: list[DecisionRow]
    """Receipts in ledger order."""
    next: str | None
    """The cursor of the next page, or null at the end."""


class CheckpointOut(Frozen):
    """``GET /v1/checkpoint``."""

    tree_size: int
    """Entries the checkpoint commits to."""
    root_hash: str
    """Its Merkle tree head (hex)."""
    note: str
    """The signed note, exactly as signed (save it as the --checkpoint file)."""


class ErrorOut(Frozen):
    """Every 4xx: what was wrong and how to fix it."""

    error: str
    """What was refused and why."""
    field: str | None = None
    """The request field at fault, when one is."""
    fix: str | None = None
    """What to do instead, when known."""
    detail: list[dict[str, Any]] | None = None
    """A request that does not match the schema: each problem's ``loc``, ``msg``, ``type``."""
