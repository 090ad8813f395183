"""The records of the ``https://jurat.dev/decision/v1`` predicate and its in-toto statement.

They are the predicate's schema: ``build_statement`` fills them and dumps them to JSON,
and the verifier parses the signed JSON back into them and requires the re-dump to be
the same JSON, so that what a reader sees is exactly what the fold read.
``docs/receipt-format.md`` §6 describes every field.
"""

from __future__ import annotations

from typing import Literal

import pydantic
from pydantic import ConfigDict, Field

from jurat.canonical import KEYED_DIGEST
from jurat.models import Adjudication, Decision, Frozen, GateOutcome, Policy, Vote
from jurat.models._grounding import ClaimExtraction, WorkClaim

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://jurat.dev/decision/v1"
ReplayFidelity = Literal["RF-1", "RF-2"]

_SHA256 = r"^[0-9a-f]{64}$"
#: A keyed digest (``jurat.canonical.keyed_digest``): HMAC-SHA256 under the campaign's key.
_KEYED = KEYED_DIGEST.pattern


class CampaignPart(Frozen):
    """``predicate.campaign``: the pinned policy, whole, with its digest."""

    id: str
    """Campaign id (``policy.id``)."""
    kind: str
    """Campaign kind (``policy.kind``)."""
    rubric_version: str | None
    """``policy.rubric.version`` for rubric and pairwise campaigns, else null."""
    policy_sha256: str = Field(pattern=_SHA256)
    """sha256 of the RFC 8785 canonical JSON of ``policy``."""
    policy: Policy
    """The policy the fold read (judge configs name API-key variables, never keys)."""


class ArtifactPart(Frozen):
    """``predicate.artifact``: the evaluated artifact, also the statement's subject."""

    id: str
    """Artifact id."""
    sha256: str = Field(pattern=_SHA256)
    """sha256 of its content (pairs: of the canonical JSON of both parts' digests)."""
    media_type: str
    """Its media type."""


class TaskRef(Frozen):
    """``predicate.inputs.task``."""

    id: str | None
    """The task or test-case id the artifact answers, when known."""
    version: str
    """``policy.task_version``."""
    statement_sha256: str | None = Field(None, pattern=_SHA256, exclude_if=lambda d: d is None)
    """sha256 of the UTF-8 bytes of the task's statement (``[[tasks]]``) the judges read;
    absent for a campaign without tasks, so receipts written before tasks keep their form."""


def _absent(value: object) -> bool:
    return value is None


class UpstreamReceipt(Frozen):
    """One earlier-stage receipt this decision relies on (seed 000: Stage 1/2 receipts).
    The last three fields say what was checked (runner/_upstream.py); receipts made before
    stages existed have none of them, and leave them out, so they keep their normal form."""

    name: str
    """What it is: the upstream statement's ``predicateType``."""
    sha256: str = Field(pattern=_SHA256)
    """sha256 of its signed DSSE payload."""
    stage: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$",
                              exclude_if=_absent)
    """The stage it is of, which the key that verified it signs for."""
    key_sha256: str | None = Field(None, pattern=_SHA256, exclude_if=_absent)
    """sha256 of the DER SubjectPublicKeyInfo of the key that verified it."""
    issued_at: str | None = Field(None, pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$",
                                  exclude_if=_absent)
    """Its ``predicate.issued_at``, as jurat writes times (microseconds, ``Z``): what a
    later receipt of the same stage supersedes it by."""


class EvidenceRef(Frozen):
    """One evidence item, listed without its excerpt (which may quote the artifact)."""

    kind: str
    """Evidence kind."""
    tool: str
    """Tool that produced it."""
    tool_version: str
    """Pinned tool version."""
    sha256: str
    """sha256 of the full evidence content."""
    gate: str | None
    """Gate it supports, if any."""


class EvidencePart(Frozen):
    """``predicate.inputs.evidence_bundle``."""

    sha256: str = Field(pattern=_SHA256)
    """sha256 of the canonical JSON of the whole evidence bundle (excerpts included)."""
    items: tuple[EvidenceRef, ...]
    """The items in citation order (index 0 is the artifact)."""


class WorkRef(Frozen):
    """``predicate.inputs.work``: the piece of work the artifact is (issue 37)."""

    rule: str = Field(pattern=r"^jurat\.work/v[0-9]+/[a-z-]+$")
    """``jurat.work/v1/<rule>``: the normalisation that applied (docs/receipt-format.md
    §6.4.2)."""
    sha256: str = Field(pattern=_SHA256)
    """Lowercase hex SHA-256 of the normalised work."""


class InputsPart(Frozen):
    """``predicate.inputs``: what the evaluation was bound to besides the policy."""

    assignment: str | None
    """Assignment id (the job identity), when the runner supplies one."""
    attempt: str | None
    """Attempt identity, when the runner supplies one."""
    job_id: str | None
    """The evaluation job's id in the ledger, when the runner supplies one."""
    task: TaskRef
    """The task and its version."""
    contributor: str | None
    """Who submitted the artifact."""
    upstream_receipts: tuple[UpstreamReceipt, ...]
    """Earlier receipts, by digest."""
    evidence_bundle: EvidencePart
    """The evidence bundle the judges saw."""
    explanation_sha256: str | None = Field(None, pattern=_SHA256,
                                           exclude_if=lambda d: d is None)
    """sha256 of the UTF-8 bytes of the contributor's explanation the judges read; absent
    when the artifact came without one (its text is never in a receipt)."""
    judges_skipped: str | None = Field(None, exclude_if=lambda why: why is None)
    """Why no judge was asked (a veto, a settled pair, a subject without output); absent
    when they were asked, so receipts made before the field existed stay in normal form."""
    claims: tuple[WorkClaim, ...] = Field((), max_length=256, exclude_if=lambda c: not c)
    """The artifact's claims from the work (submitted, then extracted), by digest: a fold
    input (docs/receipt-format.md §8.10); absent when there are none, as in every receipt
    made before claims came from the work."""
    claim_extraction: ClaimExtraction | None = Field(None, exclude_if=_absent)
    """The extraction call its extracted claims come from; absent without extraction."""
    target_sha256: str | None = Field(None, pattern=_SHA256, exclude_if=_absent)
    """sha256 of the reference answer (``target``) a criteria artifact's judges compared its
    output with, as receipts recorded it before ``target_hmac``: read, never written (a
    short answer is found from it by hashing guesses); absent in every new receipt."""
    target_hmac: str | None = Field(None, pattern=_KEYED, exclude_if=_absent)
    """``hmac-sha256:<hex>`` of that reference answer under the campaign's reference key
    (docs/receipt-format.md §11): operator material, so its keyed digest and never its text
    or a plain digest; absent without one."""
    work: WorkRef | None = Field(None, exclude_if=_absent)
    """The piece of work the artifact is, under the campaign's ``same_work`` rule: what a
    settlement pays for once; absent in receipts written before issue 37."""
    duplicate_of: str | None = Field(None, pattern=_SHA256, exclude_if=_absent)
    """The job that first submitted this work, when that was another contributor's: the
    ledger's first ``work_claimed`` entry of the work names it. The first submitter owns
    the work; a settlement of a copy is refused (docs/signer.md). Absent otherwise."""
    input_sha256: str | None = Field(None, pattern=_SHA256, exclude_if=_absent)
    """sha256 of the input a criteria artifact's given output answers (its judges read both;
    the subject is the output's digest); absent otherwise: a ``[subject]``'s artifact digest
    is its input's already (issue 29)."""


class Decoding(Frozen):
    """A judge's pinned decoding parameters."""

    temperature: float
    """Sampling temperature."""
    max_tokens: int
    """Output token budget."""
    seed: int
    """Seed (sim judge; presentation-order draws)."""
    structured_output: bool
    """Whether JSON-schema structured output was requested."""


class JudgePart(Frozen):
    """One entry of ``predicate.judges``, in panel order."""

    id: str
    """Judge id."""
    provider: str
    """Provider."""
    model: str
    """Pinned model id (returned models are in each vote)."""
    prompt_id: str | None
    """Prompt template id@version; null when its votes used several (see each vote)."""
    prompt_derived_from: str | None = Field(None, exclude_if=_absent)
    """The seed's prompt id that ``prompt_id`` derives from (jurat's equivalence prompt:
    seed 002 §4's ``invariance-checker/judge/v1``); absent for prompts of jurat's own, and
    in receipts written before it was recorded, which keep their normal form."""
    schema_id: str | None
    """Output schema id, when the runner supplies it."""
    decoding: Decoding
    """Decoding parameters."""
    config_sha256: str = Field(pattern=_SHA256)
    """sha256 of the canonical JSON of this judge's entry in ``campaign.policy.judges``."""


class ReviewPart(Frozen):
    """``predicate.review``: monotonic review versions (seed 000)."""

    version: int = Field(ge=1)
    """1 for a first review; each change of bytes is a new, higher version."""
    supersedes: str | None = Field(pattern=_SHA256)
    """Receipt digest of the version this one replaces; null exactly when version is 1."""
    adjudication: Adjudication | None
    """A reviewer's adjudication of the escalated decision of the version this one
    supersedes: who, when, disposition, rationale; null when none. A fold input: the
    decision re-derives with it (fold/_adjudication.py, docs/receipt-format.md §8.9)."""

    @pydantic.model_validator(mode="after")
    def _chain(self) -> ReviewPart:
        if (self.version == 1) != (self.supersedes is None):
            raise ValueError("supersedes must be null for version 1 and set for later versions")
        return self


class DecisionPredicate(Frozen):
    """The predicate: every fold input, the decision, and how to replay it."""

    jurat_version: str
    """jurat version that produced the receipt."""
    fold_rule: str
    """Aggregation rule id the verifier must re-run, e.g. ``jurat.fold/v1``."""
    replay_fidelity_level: ReplayFidelity
    """RF-1: the fold replays from the votes; RF-2: the votes reproduce too."""
    campaign: CampaignPart
    """The campaign and its pinned policy."""
    artifact: ArtifactPart
    """The artifact."""
    inputs: InputsPart
    """Assignment, task, contributor, upstream receipts, evidence bundle."""
    gates: tuple[GateOutcome, ...]
    """Deterministic gate outcomes the fold read."""
    judges: tuple[JudgePart, ...]
    """The judge panel's pinned configuration."""
    votes: tuple[Vote, ...]
    """Every recorded sample in dispatch order, errors included."""
    decision: Decision
    """The fold's output."""
    review: ReviewPart
    """Review version and the receipt it supersedes."""


class Subject(Frozen):
    """An in-toto subject."""

    name: str
    """Artifact id."""
    digest: dict[str, str]
    """``{"sha256": <hex>}``."""


class Statement(Frozen):
    """An in-toto Statement v1 carrying the decision predicate."""

    model_config = ConfigDict(populate_by_name=True)

    statement_type: str = Field(alias="_type")
    """``https://in-toto.io/Statement/v1``."""
    subject: tuple[Subject, ...]
    """Exactly one subject: the artifact."""
    predicate_type: str = Field(alias="predicateType")
    """``https://jurat.dev/decision/v1``."""
    predicate: DecisionPredicate
    """The decision predicate."""
