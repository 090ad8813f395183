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
    "ClaimRecord",
    "ClaimTruth",
    "GroundedClaim",
    "GroundingEvidence",
    "GroundingPolicy",
    "GroundingRecord",
    "ReferenceSpec",
    "claim_criterion",
    "grounding_problems",
]

ClaimTruth = Literal["supported", "contradicted", "unresolved", "not_applicable"]
"""Seed 000's four claim classes, as a sim truth label."""
CLAIM_LABELS: tuple[str, ...] = ("supported", "contradicted", "unresolved", "not_applicable")

#: Prefix of a claim's ``Vote.criterion``: claim votes live beside a kind's own votes.
_CLAIM_PREFIX = "claim:"
_SHA256 = r"^[0-9a-f]{64}$"
_ID = r"^[A-Za-z0-9._-]+$"


def claim_criterion(claim_id: str) -> str:
    """The ``Vote.criterion`` of a claim's samples: ``claim:<id>``."""
    return _CLAIM_PREFIX + claim_id


class ReferenceSpec(Frozen):
    """One ``[[grounding.references]]`` entry: a fixed piece of evidence pinned by digest."""

    id: str = Field(min_length=1, max_length=128, pattern=_ID)
    """The reference's id; claims cite it in ``evidence``."""
    path: str = Field(min_length=1)
    """File holding the evidence text (UTF-8), relative to the campaign file, inside its
    directory; read by intake under ``[intake] max_artifact_bytes``."""
    source: str = Field(min_length=1)
    """Where it comes from: a URL, a DOI, a document id."""
    version: str = Field(min_length=1)
    """The source's version label or retrieval time (RFC 3339)."""
    sha256: str = Field(pattern=_SHA256)
    """SHA-256 of the file's bytes: the approved representation every judge is shown."""
    span: tuple[int, int] | None = None
    """``[start, end)`` character offsets of the passage that matters; None: the whole text."""

    @model_validator(mode="after")
    def _span(self) -> ReferenceSpec:
        if self.span is not None and not 0 <= self.span[0] < self.span[1]:
            raise_problems([Problem(("span",), f"span {list(self.span)} is not [start, end) "
                                    "with 0 <= start < end", "span = [0, 120]")])
        return self


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
    """The fixed reference set, shown to every judge of every claim."""
    claims: tuple[GroundedClaim, ...] = Field(min_length=1)
    """The claims, each naming its artifact."""

    def claims_of(self, artifact: str) -> tuple[GroundedClaim, ...]:
        """The claims of one artifact, in file order."""
        return tuple(c for c in self.claims if c.artifact == artifact)

    @model_validator(mode="after")
    def _ids(self) -> GroundingPolicy:
        raise_problems(grounding_problems(self.references, self.claims))
        return self


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
