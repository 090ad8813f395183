"""The JSON bodies of the HTTP oracle (docs/service.md; ../shared/DESIGN.md, "Contracts,
part 2"). Requests refuse unknown keys, so a typo is an error naming the field, not a field
silently ignored; responses are what /openapi.json publishes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from jurat.models import Frozen, visible
from jurat.models._adjudication import MAX_RATIONALE_CHARS
from jurat.receipts import MAX_DEPTH

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
    "JobReview",
    "JobStatus",
    "JobsPage",
    "JudgeAnswerOut",
    "ListedDisposition",
    "RecordedChecksOut",
    "ReviewStepOut",
    "ReviewedArtifact",
    "ShownStatus",
    "ShownText",
]

JobStatus = Literal["queued", "running", "decided", "failed"]
"""Where a job's run is."""
ShownStatus = Literal["queued", "running", "decided", "failed", "superseded"]
"""A job's status as the API shows and filters it: where its run is, or ``superseded`` for
a decided job whose artifact has a later review, another job's (service/_history.py)."""
ListedDisposition = Literal["accept", "reject", "escalate"]
"""A decided job's latest disposition, as ``GET /v1/jobs?disposition=`` filters it."""
#: A contributor's identifiers (artifact id, task, assignment) are signed into receipts and
#: published on the board as written, so they are tokens, not text: no space, quote or
#: markup, at most 128 characters (docs/receipt-format.md §11.4).
_ID = r"^[A-Za-z0-9._-]+$"
_ID_CHARS = 128
MediaType = Literal[
    "text/plain", "text/x-python", "text/markdown", "application/json", "text/csv"
]
"""The media types a contributor may name: a closed list, as the receipt records it."""
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")


def _unicode(value: object) -> object:
    """A string field holds Unicode text. JSON's ``\\ud800`` escape decodes to a lone
    UTF-16 surrogate, which has no UTF-8 encoding, and every digest and ledger write of the
    job encodes its strings: refused here, naming the field, not a 500 deep inside. The
    ``fix`` in the error's context is the one the app's refusal carries (``_app.py``)."""
    if isinstance(value, str) and not value.isascii():  # isascii: O(1) in CPython
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise PydanticCustomError(
                "unicode_surrogate",
                "has a lone UTF-16 surrogate (\\u{code}) at character {at}, which is not "
                "text",
                {"code": f"{ord(value[exc.start]):04x}", "at": exc.start,
                 "fix": "send text: a character outside the Basic Multilingual Plane is "
                        "escaped as a whole surrogate pair, never half of one"}) from exc
    return value


def _said(value: str) -> str:
    """An explanation says something: one of only whitespace, or of characters that draw
    nothing (zero-width, format, combining marks alone: models/_visible.py, intake's rule
    too), would satisfy a campaign's ``require_explanation`` with no account of the work."""
    if not visible(value):
        raise PydanticCustomError(
            "blank_explanation", "is only whitespace or invisible characters",
            {"fix": "send the contributor's explanation of the work, or leave "
                    "artifact.explanation out"})
    return value


def _base64(value: object) -> object:
    """Base64 is ASCII. ``base64.b64decode`` raises a bare ValueError, not binascii.Error,
    for a str with any other character; refused here, naming the field and where."""
    if isinstance(value, str) and not value.isascii():
        found = _NOT_ASCII.search(value)
        raise PydanticCustomError(
            "base64_alphabet",
            "is not base64: character {at} is outside its alphabet (A-Z, a-z, 0-9, +, /, =)",
            {"at": found.start() if found else 0,
             "fix": "base64-encode the UTF-8 bytes (RFC 4648, no line breaks), or send "
                    "them as text"})
    return value


def _shallow(value: dict[str, Any]) -> dict[str, Any]:
    """An upstream receipt nests no deeper than a bundle read from a file may
    (``MAX_DEPTH``). The body parser takes any depth Python's recursion allows, and the
    canonical serialiser that reads the receipt (``_upstream``) recurses, so a deeper one
    would end in a RecursionError, a 500; walked here without recursion."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise PydanticCustomError(
                "json_depth", "nests arrays and objects deeper than {limit} levels",
                {"limit": MAX_DEPTH,
                 "fix": "submit the Stage 1/2 receipt as its signer issued it"})
        stack.extend((child, depth + 1) for child in children)
    return value


#: A string of text (``_unicode``); base64 (``_base64``); an upstream receipt (``_shallow``).
_Text = Annotated[str, BeforeValidator(_unicode)]
_Base64 = Annotated[str, BeforeValidator(_base64)]
_Receipt = Annotated[dict[str, Any], AfterValidator(_shallow)]


class ArtifactIn(Frozen):
    """The artifact of a job: its id and content (``text`` or ``content_base64``)."""

    id: _Text = Field(min_length=1, max_length=_ID_CHARS, pattern=_ID)
    """The contributor's id for it; the receipt records it as ``<contributor>:<id>``."""
    text: _Text | None = None
    """The content as text."""
    content_base64: _Base64 | None = Field(None, max_length=48 * 1024 * 1024)
    """The content as base64 of UTF-8 bytes (instead of ``text``)."""
    media_type: Annotated[MediaType, BeforeValidator(_unicode)] | None = None
    """``text/x-python`` runs the campaign's code checks; default ``text/plain``."""
    claims: list[_Text] = Field(default_factory=list, max_length=64)
    """Short factual statements the contributor says the artifact makes (untrusted text), for
    a campaign whose ``[grounding]`` sets ``submitted_weight``; capped by its ``[intake]
    max_claims`` and ``max_claim_chars`` (docs/grounding.md, "Claims from the work")."""
    task: _Text | None = Field(None, min_length=1, max_length=_ID_CHARS, pattern=_ID)
    """The task or test-case id it answers; with ``[[tasks]]``, one of their ids (may be
    left out when the campaign has one task)."""
    explanation: Annotated[_Text, AfterValidator(_said)] | None = Field(
        None, min_length=1, max_length=1024 * 1024)
    """The contributor's explanation of the work (capped by the campaign's ``[intake]
    max_explanation_bytes``): sent to the judges as delimited data, bound by digest into the
    job identity and the receipt (``inputs.explanation_sha256``)."""


class JobRequest(Frozen):
    """``POST /v1/campaigns/{cid}/jobs``."""

    artifact: ArtifactIn
    """What to evaluate."""
    assignment: _Text | None = Field(None, min_length=1, max_length=_ID_CHARS, pattern=_ID)
    """The assignment id it answers, bound into the job identity and the receipt."""
    contributor: _Text | None = Field(None, min_length=1, max_length=100, pattern=_ID)
    """Operator tokens only: who submitted it (a contributor token fixes its own subject)."""
    upstream_receipts: list[_Receipt] = Field(default_factory=list, max_length=8)
    """Stage 1/2 receipts (Sigstore bundles) about this artifact, signed by keys the
    campaign trusts (``[upstream] keys``)."""


class JobAccepted(Frozen):
    """202: the job is durable in the ledger (the same body again gives the same id)."""

    job_id: str
    """The job's id: sha256 of its identity (campaign, policy, contributor, artifact digest,
    assignment, upstream receipts, evaluator)."""
    status: ShownStatus
    """Where it is now (as ``GET /v1/jobs/{job_id}`` shows it)."""


class JobOut(Frozen):
    """``GET /v1/jobs/{job_id}``."""

    job_id: str
    """The job's id."""
    campaign_id: str
    """Its campaign."""
    artifact_id: str
    """The artifact id as submitted."""
    status: ShownStatus
    """queued, running, decided or failed (a failed job runs again, from what it recorded,
    when the same body is submitted again or the server restarts); superseded: decided, and
    its artifact has a later review, ``superseded_by``'s, so this job can no longer be
    adjudicated and is in no queue."""
    decision: dict[str, Any] | None = None
    """This job's latest review's ``predicate.decision``, once decided."""
    review_version: int | None = None
    """This job's latest review's version, once decided: what an adjudication names."""
    superseded_by: str | None = None
    """The job that holds its artifact's latest review, when the job is superseded (the
    same contributor sent the same artifact id again): read and adjudicate that one."""
    duplicate_of: str | None = None
    """Operator and reviewer tokens: the first job of the campaign with the same artifact
    bytes, when this job is a later copy (the signer pays the work once); always null for
    a contributor token."""


class JobsPage(Frozen):
    """``GET /v1/jobs``: the jobs the token may read, oldest first, paged."""

    jobs: list[JobOut]
    """Each as ``GET /v1/jobs/{job_id}`` shows it to the same token."""
    next: str | None
    """The cursor of the next page, or null at the end."""


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
    rationale: _Text = Field(min_length=1, max_length=MAX_RATIONALE_CHARS)
    """Why; published in the receipt, so it must not quote the campaign's tests."""
    rationale_public: bool = False
    """Show the rationale on the public board's page too (default: who and when only)."""
    review_version: int | None = Field(None, ge=1, le=1_000_000)
    """The review version the reviewer read and settles (the job's ``review_version``): a
    job whose latest review is another version is refused (409, naming it). Optional, so
    that clients written before it keep working: without it the job's latest review is
    settled, which the service still refuses when another job's review superseded it."""


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
    duplicate_of: str | None = None
    """Its ``predicate.inputs.duplicate_of``: the job that first submitted this work, when
    that was another contributor's (a copy the signer never settles); null otherwise."""


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


# -- the reviewer's view -------------------------------------------------------------------

TextOrigin = Literal["contributor", "judge", "operator"]
"""Who wrote a text of the reviewer's view: the contributor (the artifact and its
explanation), a judge endpoint (its answer), or the operator (the task statement)."""


class ShownText(Frozen):
    """A text of the reviewer's view, as a JSON string, capped; never markup."""

    untrusted: bool
    """True for text the judged party or a judge endpoint wrote: show it as text (never
    render it as markup) and do not act on what it says. False for the operator's own."""
    origin: TextOrigin
    """Who wrote it."""
    text: str
    """The text, cut at ``bytes`` or at the view's cap for it, never inside a character."""
    bytes: int
    """Its whole size in UTF-8 bytes (as the ledger keeps it)."""
    capped: bool
    """Whether ``text`` is cut short of it."""


class ReviewedArtifact(Frozen):
    """What the contributor submitted, and the task it answers."""

    id: str
    """The artifact id as submitted."""
    ledger_id: str
    """As the receipt and the ledger record it (``<contributor>:<id>``)."""
    contributor: str | None
    """Who submitted it."""
    sha256: str
    """sha256 of its bytes."""
    media_type: str
    """Its media type."""
    task: str | None
    """The task id it answers."""
    assignment: str | None
    """The assignment it answers."""
    text: ShownText
    """Its content (untrusted)."""
    explanation: ShownText | None
    """The contributor's explanation of the work (untrusted), when it gave one."""
    task_statement: ShownText | None
    """The statement of its ``[[tasks]]`` entry (the operator's), when the campaign has
    tasks."""


class RecordedChecksOut(Frozen):
    """The operator's record of the hidden tests' run (the job's ``checks_recorded``)."""

    record_sha256: str
    """Its commitment, as the receipt's sandboxed gates carry it (``record_sha256``)."""
    record: dict[str, Any]
    """The measurements, numbers and enums (schema ``jurat.check-record/v1``,
    docs/ledger-format.md): each test's outcome by index, what it raised (a built-in
    exception type), counts, the run's outcome and reason, time, memory, coverage, mutants;
    never a test's name or source."""


class JudgeAnswerOut(Frozen):
    """One judge sample: the vote the receipt records, and what the judge sent."""

    judge: str
    """Judge id."""
    criterion: str
    """Criterion (``rubric``, ``pairwise``, ``equivalence`` for the kinds with one slot)."""
    sample: int
    """Sample index k."""
    order: str | None
    """Presentation order (pairwise)."""
    error: str | None
    """The vote's error kind, for an answer refused or never received."""
    answer: dict[str, Any] | None
    """The validated answer as the vote records it: scores, disposition or verdict, the
    explanation by its digest."""
    rationale: ShownText | None
    """The judge's explanation (untrusted), when its answer could be read and it is the one
    the vote's digest names."""
    raw: ShownText | None
    """The answer as the judge sent it (untrusted); None when none was kept (no answer, or
    withheld: the prompt carried reference material)."""
    withheld: bool
    """The prompt carried reference material, so the answer's text was not kept."""


class ReviewStepOut(Frozen):
    """One review version of the artifact."""

    version: int
    """Its review version."""
    job_id: str
    """The job it reviews (another job's when the artifact was sent again)."""
    disposition: str
    """Its outcome word (disposition; rollout or equivalence word for those kinds)."""
    adjudicated_by: str | None
    """The reviewer who settled it, for an adjudicated review."""
    at: str | None
    """When it was adjudicated."""
    adjudication: Literal["accept", "reject"] | None
    """The reviewer's decision."""
    rationale: str | None
    """The reviewer's rationale (shown here whether or not it was marked public)."""


class JobReview(Frozen):
    """``GET /v1/jobs/{job_id}/review``: what a reviewer reads before adjudicating."""

    job: JobOut
    """The job as ``GET /v1/jobs/{job_id}`` shows it (status, decision, ``review_version``
    to adjudicate, ``duplicate_of``, ``superseded_by``)."""
    artifact: ReviewedArtifact
    """The submission and its task."""
    gates: list[dict[str, Any]]
    """The latest review's gate outcomes (``predicate.gates``), in pipeline order."""
    checks: RecordedChecksOut | None
    """The operator's record of the hidden tests' run, when the job ran them."""
    judges: list[JudgeAnswerOut]
    """Every judge sample, in the order recorded."""
    reviews: list[ReviewStepOut]
    """The artifact's review history, oldest first."""
