"""The ``[grounding]`` table and the grounding record a decision carries (seed 000,
"Factual grounding and hallucination audit"; docs/grounding.md).

The claims, their weights and the pinned references are policy, not artifact data: the fold
reads only the policy, the gates and the votes, and ``jurat verify`` re-runs it from the
policy the receipt carries, so everything coverage and the gate depend on must be in it.
A claim's sim ``truth`` is the one exception: it is excluded from the dump (and so from the
policy digest and every receipt), as ``Artifact.truth`` never leaves the machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field, model_validator

from jurat.models._base import Frozen
from jurat.models._problems import Problem, close_match, duplicate_problems, raise_problems

__all__ = [
    "CLAIM_LABELS",
    "WORK_CLAIM_PREFIXES",
    "CaptureRecord",
    "ClaimExtract",
    "ClaimExtraction",
    "ClaimOrigin",
    "ClaimRecord",
    "ClaimTruth",
    "GroundedClaim",
    "GroundingEvidence",
    "GroundingPolicy",
    "GroundingRecord",
    "ReferenceSpec",
    "WorkClaim",
    "claim_criterion",
    "work_claims",
    "grounding_problems",
]

ClaimTruth = Literal["supported", "contradicted", "unresolved", "not_applicable"]
"""Seed 000's four claim classes, as a sim truth label."""
CLAIM_LABELS: tuple[str, ...] = ("supported", "contradicted", "unresolved", "not_applicable")
ClaimOrigin = Literal["campaign", "submitted", "extracted"]
"""Who wrote a claim: the campaign file, the contributor with the artifact, or the
extraction judge (docs/grounding.md, "Claims from the work")."""
WorkOrigin = Literal["submitted", "extracted"]
#: The id prefixes of claims from the work (``submitted.1``, ``extracted.1``): reserved, so
#: no campaign claim of the same artifact can take one.
WORK_CLAIM_PREFIXES = {"submitted": "submitted.", "extracted": "extracted."}

#: Prefix of a claim's ``Vote.criterion``: claim votes live beside a kind's own votes.
_CLAIM_PREFIX = "claim:"
_SHA256 = r"^[0-9a-f]{64}$"
_ID = r"^[A-Za-z0-9._-]+$"


def claim_criterion(claim_id: str) -> str:
    """The ``Vote.criterion`` of a claim's samples: ``claim:<id>``."""
    return _CLAIM_PREFIX + claim_id


class CaptureRecord(Frozen):
    """What one live capture of a ``url`` reference was (seed 000: "retrieve authorized live
    sources and preserve enough non-sensitive evidence"; docs/grounding.md, "Live
    references"): recorded in the policy, so in every receipt and in the policy digest."""

    url: str
    """The URL the campaign names, as asked."""
    final_url: str
    """The URL the body came from, after redirects (each re-checked)."""
    retrieved_at: str
    """When the body was complete: RFC 3339, UTC."""
    status: int = Field(ge=200, le=299)
    """The final HTTP status."""
    content_type: str
    """The media type as the fetcher checked it: lower-case, one of the retrieval policy's
    ``content_types``, never the Content-Type header as sent (its parameters are the
    server's text). Captures recorded before kept the header whole, and are reused as
    recorded: the capture is part of the policy, whose digest a re-run must keep."""
    length: int = Field(ge=0)
    """Body length in bytes."""
    sha256: str = Field(pattern=_SHA256)
    """sha256 of the body: the bytes every judge is shown."""


class ReferenceSpec(Frozen):
    """One ``[[grounding.references]]`` entry: a piece of evidence pinned by digest, from a
    file of the campaign (``path``) or captured once from a ``url``."""

    id: str = Field(min_length=1, max_length=128, pattern=_ID)
    """The reference's id; claims cite it in ``evidence``."""
    path: str | None = Field(None, min_length=1, exclude_if=lambda v: v is None)
    """File holding the evidence text (UTF-8), relative to the campaign file, inside its
    directory; read by intake under ``[intake] max_artifact_bytes``."""
    url: str | None = Field(None, min_length=1, exclude_if=lambda v: v is None)
    """A live source instead of ``path``: fetched once by ``jurat run`` through the SSRF-safe
    fetcher from an origin ``[grounding] origins`` allows; absent for file references."""
    source: str | None = Field(None, min_length=1)
    """Where it comes from: a URL, a DOI, a document id (a ``url`` reference: the URL)."""
    version: str | None = Field(None, min_length=1)
    """The source's version label or retrieval time (RFC 3339; a ``url`` reference: the
    capture's retrieval time)."""
    sha256: str | None = Field(None, pattern=_SHA256)
    """SHA-256 of the bytes every judge is shown (a ``url`` reference: the capture's)."""
    span: tuple[int, int] | None = None
    """``[start, end)`` character offsets of the passage that matters; None: the whole text."""
    capture: CaptureRecord | None = Field(None, exclude_if=lambda v: v is None)
    """The live capture a ``url`` reference was pinned to; absent for file references."""
    captured_file: str | None = Field(None, exclude=True)
    """Where this machine keeps the capture's bytes; never dumped (a local path)."""

    @model_validator(mode="after")
    def _span(self) -> ReferenceSpec:
        if self.span is not None and not 0 <= self.span[0] < self.span[1]:
            raise_problems([Problem(("span",), f"span {list(self.span)} is not [start, end) "
                                    "with 0 <= start < end", "span = [0, 120]")])
        raise_problems(_source_problems(self))
        return self


def _source_problems(spec: ReferenceSpec) -> list[Problem]:
    """A file reference pins its digest by hand; a ``url`` reference's capture pins it."""
    if (spec.path is None) == (spec.url is None):
        return [Problem(("path",), f"reference {spec.id!r} needs exactly one of path and url",
                        'path = "references/page.txt" or url = "https://…/page"')]
    if spec.path is not None:
        return [Problem((key,), f"reference {spec.id!r} has no {key}",
                        f"{key} = {example}") for key, example in _PINNED
                if getattr(spec, key) is None]
    if spec.capture is None and (spec.sha256 is not None or spec.version is not None):
        return [Problem(("sha256",), f"reference {spec.id!r} names a url: its sha256 and "
                        "version are the capture's", "remove sha256 and version")]
    return []


_PINNED = (("source", '"https://example.org/page"'), ("version", '"2026-01-15"'),
           ("sha256", '"<sha256sum of the file>"'))


class GroundedClaim(Frozen):
    """One ``[[grounding.claims]]`` entry: a checkable claim of one artifact."""

    id: str = Field(min_length=1, max_length=128, pattern=_ID)
    """The claim's id, unique in the campaign."""
    artifact: str = Field(min_length=1)
    """Id of the ``[[artifacts]]`` entry the claim is made by."""
    text: str = Field(min_length=1)
    """The claim, as the judges are asked to check it."""
    weight: float = Field(1.0, ge=0, allow_inf_nan=False)
    """Nonnegative, finite weight in coverage and contradiction rate."""
    material: bool = False
    """A material assertion (``require_evidence_for_material``)."""
    evidence: tuple[str, ...] = ()
    """Ids of the references the claim is checked against."""
    truth: ClaimTruth | None = Field(None, exclude=True)
    """The sim judge's truth label; never dumped, so never in a digest or a receipt."""
    origin: ClaimOrigin = Field("campaign", exclude=True)
    """Who wrote it; a claim from the work is untrusted text, shown to a judge only as
    delimited data and never dumped (its receipt record is ``WorkClaim``)."""


def _absent(value: object) -> bool:
    return value is None


class ClaimExtract(Frozen):
    """``[grounding] extract``: claims decomposed from each artifact by a pinned judge
    (seed 000, "Decompose factual statements into checkable claims")."""

    judge: str = Field(min_length=1)
    """Id of one of the campaign's ``[[judges]]``; asked once per artifact at temperature 0."""
    max_claims: int = Field(8, ge=1, le=32)
    """The most claims it may return; an answer with more is refused (schema_violation)."""
    weight: float = Field(1.0, ge=0, allow_inf_nan=False)
    """Weight of every extracted claim in coverage and contradiction rate."""


class GroundingPolicy(Frozen):
    """The ``[grounding]`` table of rubric and criteria campaigns."""

    samples: int = Field(3, ge=1, le=101)
    """Samples per claim per judge."""
    min_coverage: float | None = Field(None, ge=0, le=1)
    """Coverage below this escalates (warn)."""
    max_contradiction_rate: float | None = Field(None, ge=0, le=1)
    """A contradiction rate above this blocks."""
    require_evidence_for_material: bool = False
    """Every material claim must be supported and cite a reference, else warn."""
    references: tuple[ReferenceSpec, ...] = ()
    """The reference set, shown to every judge of every claim."""
    origins: tuple[str, ...] = Field((), exclude_if=lambda v: not v)
    """Origins (``scheme://host[:port]``) a ``url`` reference may be fetched from; absent
    from the policy when empty, so older digests stand."""
    allow_private: tuple[str, ...] = Field((), exclude_if=lambda v: not v)
    """Exact origins of ``origins`` that may resolve to loopback or private addresses (a
    test server, an intranet wiki); never a range or a host without its port."""
    claims: tuple[GroundedClaim, ...] = ()
    """The campaign's claims, each naming its artifact; may be empty only when claims come
    from the work (``submitted_weight`` or ``extract``)."""
    submitted_weight: float | None = Field(None, ge=0, allow_inf_nan=False, exclude_if=_absent)
    """Weight of each claim an artifact submits (``claims = [...]``); unset: artifacts may
    not submit claims. Absent from the policy when unset, so older digests stand."""
    extract: ClaimExtract | None = Field(None, exclude_if=_absent)
    """The extraction judge, when claims are extracted from each artifact."""

    def claims_of(self, artifact: str) -> tuple[GroundedClaim, ...]:
        """The claims of one artifact, in file order."""
        return tuple(c for c in self.claims if c.artifact == artifact)

    @model_validator(mode="after")
    def _ids(self) -> GroundingPolicy:
        problems = grounding_problems(self.references, self.claims)
        if not self.claims and self.submitted_weight is None and self.extract is None:
            problems.append(Problem(("claims",), "a [grounding] table needs claims",
                                    "add a [[grounding.claims]] entry, or set "
                                    "submitted_weight = 1.0 or extract = { judge = \"…\" }"))
        problems += _origin_problems(self)
        raise_problems(problems)
        return self


def _origin_problems(grounding: GroundingPolicy) -> list[Problem]:
    """``origins`` and ``allow_private`` are exact origins; each ``url`` is on one of them."""
    from jurat.models._endpoints import normalise_url

    problems: list[Problem] = []
    for key in ("origins", "allow_private"):
        for index, origin in enumerate(getattr(grounding, key)):
            try:
                spelled = normalise_url(origin)
            except ValueError as exc:
                problems.append(Problem((key, index), str(exc), f'{key} = ["http://host:port"]'))
                continue
            if spelled != origin or spelled.count("/") != 2:
                problems.append(Problem((key, index), f"{origin!r} is not an exact origin",
                                        f'{key} = ["{_origin(spelled)}"]'))
    for index, origin in enumerate(grounding.allow_private):
        if origin not in grounding.origins:
            problems.append(Problem(("allow_private", index), f"{origin!r} is not in origins",
                                    f'origins = ["{origin}"]'))
    for index, spec in enumerate(grounding.references):
        if spec.url is None:
            continue
        try:
            origin = _origin(normalise_url(spec.url.split("?", 1)[0].split("#", 1)[0]))
        except ValueError as exc:
            problems.append(Problem(("references", index, "url"), str(exc),
                                    'url = "https://example.org/page"'))
            continue
        if origin not in grounding.origins:
            problems.append(Problem(("references", index, "url"),
                                    f"reference {spec.id!r}: origin {origin!r} is not in "
                                    "[grounding] origins", f'origins = ["{origin}"]'))
    return problems


def _origin(normalised: str) -> str:
    scheme, rest = normalised.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


def grounding_problems(
    references: Sequence[ReferenceSpec], claims: Sequence[GroundedClaim]
) -> list[Problem]:
    """Unique reference and claim ids; every cited reference exists."""
    problems = duplicate_problems([r.id for r in references], "references", "reference")
    problems += duplicate_problems([c.id for c in claims], "claims", "claim")
    known = [r.id for r in references]
    for index, claim in enumerate(claims):
        for k, ref in enumerate(claim.evidence):
            if ref in known:
                continue
            guess = close_match(ref, known)
            problems.append(Problem(
                ("claims", index, "evidence", k),
                f"claim {claim.id!r} cites unknown reference {ref!r}"
                + (f"; did you mean {guess!r}?" if guess else ""),
                f'evidence = ["{guess}"]' if guess else
                "add a [[grounding.references]] entry with that id, or remove it"))
    for index, claim in enumerate(claims):
        if claim.id.startswith(tuple(WORK_CLAIM_PREFIXES.values())):
            problems.append(Problem(("claims", index, "id"),
                                    f"claim id {claim.id!r} starts with a prefix reserved for "
                                    "claims from the work", f'id = "c-{claim.id}"'))
    problems += _weightless(claims)
    return problems


def _weightless(claims: Sequence[GroundedClaim]) -> list[Problem]:
    # An artifact whose claims weigh nothing in all would be sampled, then measure
    # nothing: refused at load, before a sample is paid for.
    totals: dict[str, float] = {}
    first: dict[str, int] = {}
    for index, claim in enumerate(claims):
        totals[claim.artifact] = totals.get(claim.artifact, 0.0) + claim.weight
        first.setdefault(claim.artifact, index)
    return [
        Problem(("claims", first[artifact], "weight"),
                f"the claims of artifact {artifact!r} weigh 0 in all "
                f"({', '.join(repr(c.id) for c in claims if c.artifact == artifact)})",
                "give at least one of them a positive weight, or remove them")
        for artifact, total in totals.items() if total <= 0
    ]


# -- what a decision records --------------------------------------------------------------


class GroundingEvidence(Frozen):
    """A reference a claim cites, as the receipt pins it."""

    id: str
    """The reference's id."""
    source: str
    """Source identifier."""
    version: str
    """Version label or retrieval time."""
    sha256: str
    """Digest of the approved representation the judges were shown."""
    span: tuple[int, int] | None
    """The passage, ``[start, end)``, or None for the whole text."""


class ClaimRecord(Frozen):
    """One claim's folded label and what it weighs in the outcome."""

    id: str
    """Claim id."""
    weight: float
    """Weight in coverage and contradiction rate."""
    material: bool
    """Whether the campaign called it material."""
    label: ClaimTruth
    """The panel's label: the judges' labels folded with ``fold_claim`` (a judge is one vote)."""
    judge_labels: dict[str, str]
    """Each judge's label over its N samples (``fold_claim``), by judge id."""
    agreement_votes: str
    """Judges agreeing with the panel label, as ``top/n``."""
    evidence: tuple[GroundingEvidence, ...]
    """The references the claim cites."""
    origin: WorkOrigin | None = Field(None, exclude_if=_absent)
    """``submitted`` or ``extracted`` for a claim from the work; absent for the campaign's
    own claims, so receipts written before claims came from the work keep their bytes."""
    sha256: str | None = Field(None, pattern=_SHA256, exclude_if=_absent)
    """sha256 of a claim from the work's UTF-8 text (the text itself is untrusted and never
    in a receipt); absent for the campaign's claims, whose text is in the policy."""


class WorkClaim(Frozen):
    """A claim from the work as a fold input (``predicate.inputs.claims``): everything the
    fold reads of it, its text only by digest (docs/receipt-format.md §6.4, §8.10)."""

    id: str = Field(min_length=1, max_length=128, pattern=_ID)
    """``submitted.<n>`` or ``extracted.<n>``, 1-based in the order given or extracted."""
    origin: WorkOrigin
    """Who wrote it: the contributor (``submitted``) or the extraction judge (``extracted``)."""
    sha256: str = Field(pattern=_SHA256)
    """sha256 of its UTF-8 text."""
    weight: float = Field(ge=0, allow_inf_nan=False)
    """Its weight: ``[grounding] submitted_weight`` or ``extract.weight``."""
    material: bool = False
    """Never material: the campaign did not read it before it was judged."""
    evidence: tuple[str, ...] = ()
    """The reference ids it is checked against: every ``[[grounding.references]]`` entry."""


class ClaimExtraction(Frozen):
    """``predicate.inputs.claim_extraction``: the extraction call the extracted claims come
    from, bound by digest (its full answer is in the ledger's ``claims_extracted`` entry)."""

    judge: str
    """The extraction judge's id in the panel."""
    model: str
    """Its pinned model."""
    returned_model: str | None
    """The model the endpoint said answered, when it said."""
    prompt_id: str
    """``jurat/claim-extract@1``."""
    output_sha256: str = Field(pattern=_SHA256)
    """sha256 of the answer's exact bytes (UTF-8) as the ledger records them."""
    claims: int = Field(ge=0)
    """How many claims it returned (0 when its answer was refused, ``failure``)."""
    failure: str | None = Field(None, max_length=64, pattern=r"^[a-z0-9_]+$",
                                exclude_if=_absent)
    """The error kind of a refused answer (``malformed_json``, ``schema_violation``, ...):
    the job went on with no extracted claims rather than fail, so a contributor whose text
    steers the extractor into prose cannot keep the artifact from being decided; absent
    for a valid answer, so those receipts keep their bytes. An enum-like word from jurat's
    validator, never the answer's text."""
    replay_fidelity_level: Literal["RF-1"]
    """Always RF-1 (docs/receipt-format.md §6.1): the claims are bound by the recorded
    answer's digest and the votes on them replay, but a model's extraction itself does not
    reproduce (the extraction judge is an API model; deterministic ones cannot extract)."""


class GroundingRecord(Frozen):
    """``Decision.grounding``: the claims, the measures and the gate (docs/receipt-format.md)."""

    claims: tuple[ClaimRecord, ...]
    """The artifact's claims in campaign order."""
    coverage: float | None
    """sum(w * supported) / sum(w), not-applicable claims excluded; null when no claim
    applies (the gate then warns: not measured)."""
    contradiction_rate: float | None
    """sum(w * contradicted) / sum(w), not-applicable claims excluded; null likewise."""
    gate: Literal["pass", "warn", "block"]
    """The thresholds' gate."""
    reasons: tuple[str, ...]
    """Every threshold rule that fired."""
    unevidenced_material: tuple[str, ...]
    """Material claims not supported with evidence (when evidence is required)."""


def work_claims(claims: Sequence[GroundedClaim]) -> tuple[WorkClaim, ...]:
    """An artifact's claims from the work as the fold reads them: text by digest only."""
    from jurat.canonical import sha256_digest

    out = []
    for claim in claims:
        assert claim.origin != "campaign", "a campaign claim is in the policy"
        out.append(WorkClaim(id=claim.id, origin=claim.origin, sha256=sha256_digest(claim.text),
                             weight=claim.weight, material=claim.material,
                             evidence=claim.evidence))
    return tuple(out)
