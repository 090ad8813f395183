"""Factual grounding: claim labels folded over N samples, then coverage and thresholds.

Seed 000, "Factual grounding and hallucination audit"; docs/grounding.md states the rules.
A claim's label is a judge vote, sampled N times and folded like a binary criterion
(``fold_criterion``): errored samples count as ``unresolved`` and stay in N, a plurality
tie is ``unresolved``. Weighted coverage and contradiction rate are ``claims_coverage``'s
(the one implementation of the seed formulas); the campaign's thresholds then decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, cast, get_args

from pydantic import Field

from jurat.fold._claims import claims_coverage
from jurat.fold._criterion import plurality
from jurat.models import Frozen, StabilityGate

__all__ = [
    "ClaimFinding",
    "ClaimLabel",
    "ClaimResult",
    "GroundingOutcome",
    "GroundingThresholds",
    "fold_claim",
    "grounding_outcome",
]

ClaimLabel = Literal["supported", "contradicted", "unresolved", "not_applicable"]
"""Seed 000's four claim classes."""

_LABELS: tuple[ClaimLabel, ...] = get_args(ClaimLabel)


class ClaimResult(Frozen):
    """One claim's label folded over its N samples."""

    label: ClaimLabel
    """The plurality label; a tie, or errored samples in the lead, give ``unresolved``."""
    agreement: float
    """Top count / N, errored samples included in N."""
    top: int
    """The top count."""
    samples: int
    """N: every sample, errored ones included."""
    tally: dict[str, int]
    """Counts of the four labels (errored samples count as unresolved)."""


def fold_claim(votes: Sequence[str | None]) -> ClaimResult:
    """Seed 000 grounding: N samples of one claim; errored (None) = unresolved, tie = unresolved."""
    tally, top, leader = plurality(votes, _LABELS, errored="unresolved", what="a claim")
    label = cast(ClaimLabel, leader or "unresolved")
    n = len(votes)
    return ClaimResult(label=label, agreement=top / n, top=top, samples=n, tally=tally)


class ClaimFinding(Frozen):
    """A claim as the grounding decision sees it: its folded label, weight and evidence."""

    id: str
    """The claim's id in the campaign (or as extracted)."""
    weight: float = Field(strict=True)
    """Nonnegative, finite weight in the coverage sums (seed 000); checked by the fold, which
    names the claim, rather than here."""
    label: ClaimLabel
    """The folded label (``fold_claim``)."""
    material: bool = False
    """A material assertion: with ``require_evidence_for_material`` it must be supported
    and cite evidence."""
    evidence: tuple[str, ...] = ()
    """Digests (sha256) of the captured evidence the claim is checked against."""


class GroundingThresholds(Frozen):
    """A campaign's grounding thresholds; an unset threshold does not decide."""

    min_coverage: float | None = Field(default=None, ge=0, le=1)
    """Coverage below this escalates (warn): unresolved claims are not false."""
    max_contradiction_rate: float | None = Field(default=None, ge=0, le=1)
    """A contradiction rate above this blocks."""
    require_evidence_for_material: bool = False
    """Every material claim must be supported and cite evidence, else warn."""


class GroundingOutcome(Frozen):
    """The grounding numbers and the gate the thresholds give them."""

    coverage: float | None
    """sum(w * supported) / sum(w), not-applicable claims excluded; None when no claim
    applies (nothing to measure)."""
    contradiction_rate: float | None
    """sum(w * contradicted) / sum(w), not-applicable claims excluded; None likewise."""
    gate: StabilityGate
    """block if any rule blocks, else warn if any warns, else pass."""
    reasons: tuple[str, ...]
    """Why the gate is not pass: one line per rule that fired, in rule order."""
    unevidenced_material: tuple[str, ...]
    """Ids of material claims not supported with evidence (only when evidence is required)."""


#: The grounding reason when no claim of an artifact applies (docs/receipt-format.md §8.10).
NOT_MEASURED = "no applicable claim (every claim not applicable or of weight 0): not measured"


def contradiction_gate(rate: float, limit: float | None) -> StabilityGate:
    """Seed 000 grounding: contradicted claims are false, so a rate above the limit blocks."""
    return "block" if limit is not None and rate > limit else "pass"


def coverage_gate(coverage: float, minimum: float | None) -> StabilityGate:
    """Seed 000 grounding: unresolved is not false, so coverage below the minimum escalates."""
    return "warn" if minimum is not None and coverage < minimum else "pass"


def unevidenced_material(claims: Sequence[ClaimFinding]) -> tuple[str, ...]:
    """Seed 000 grounding: material assertions need evidence before acceptance.

    A material claim passes only as ``supported`` citing at least one capture; a material
    claim the panel calls ``not_applicable`` does not pass (the campaign called it material).
    """
    return tuple(c.id for c in claims if c.material and not (c.label == "supported" and c.evidence))


def grounding_outcome(
    claims: Sequence[ClaimFinding], thresholds: GroundingThresholds
) -> GroundingOutcome:
    """Coverage, contradiction rate and the thresholds' gate for one artifact's claims.

    When no claim applies (every one labelled ``not_applicable``, or the applicable ones
    weigh nothing) there is nothing to measure: coverage and rate are None and the gate
    warns (``NOT_MEASURED``), since a silent 0 or 1 would decide and unmeasured grounding
    is not grounding that passed; a rubric accept then escalates to a person.
    """
    if not any(c.label != "not_applicable" and c.weight > 0 for c in claims):
        missing = unevidenced_material(claims) if thresholds.require_evidence_for_material else ()
        unmeasured = [NOT_MEASURED]
        if missing:
            unmeasured.append(f"material claims without supporting evidence: {', '.join(missing)}")
        return GroundingOutcome(coverage=None, contradiction_rate=None, gate="warn",
                                reasons=tuple(unmeasured), unevidenced_material=missing)
    coverage, rate = claims_coverage((c.weight, c.label) for c in claims)
    gates: list[StabilityGate] = []
    reasons: list[str] = []
    gate = contradiction_gate(rate, thresholds.max_contradiction_rate)
    if gate != "pass":
        gates.append(gate)
        reasons.append(
            f"contradiction rate {rate:.4f} > max_contradiction_rate "
            f"{thresholds.max_contradiction_rate}"
        )
    gate = coverage_gate(coverage, thresholds.min_coverage)
    if gate != "pass":
        gates.append(gate)
        reasons.append(f"coverage {coverage:.4f} < min_coverage {thresholds.min_coverage}")
    missing = unevidenced_material(claims) if thresholds.require_evidence_for_material else ()
    if missing:
        gates.append("warn")
        reasons.append(f"material claims without supporting evidence: {', '.join(missing)}")
    worst: StabilityGate = "block" if "block" in gates else "warn" if gates else "pass"
    return GroundingOutcome(
        coverage=coverage,
        contradiction_rate=rate,
        gate=worst,
        reasons=tuple(reasons),
        unevidenced_material=missing,
    )
