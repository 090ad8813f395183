from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import Field, field_validator, model_validator

from jurat.models._base import Frozen
from jurat.models._checks import PythonChecks
from jurat.models._judge import JudgeConfig

Kind = Literal["rubric", "pairwise", "criteria", "equivalence"]

#: The score keys of the seed's ARCV Judge Decision v1 schema; rubric criteria must be among them.
ARCV_SCORE_KEYS = ("correctness", "reasoning", "adherence", "presentation")

_WEIGHT_TOLERANCE = 1e-9


class RiskTier(Frozen):
    """How many independent votes a decision needs and how much they must agree (seed 000)."""

    name: str = "declared"
    """Tier name: ``standard``, ``elevated``, ``critical``, or ``declared`` for a custom tier."""
    votes: int = Field(3, ge=1, le=100)
    """Independent substantive votes required (judges, never raw samples)."""
    min_agreement: float = Field(2 / 3, gt=0, le=1)
    """Minimum share of the majority label among those votes."""
    adjudication: bool = False
    """Whether explicit adjudication is required before certification (mission-critical)."""


#: Seed 000, "Multi-annotator consensus and borderline cases", the risk-tier table.
RISK_TIERS: dict[str, RiskTier] = {
    "standard": RiskTier(name="standard", votes=3, min_agreement=2 / 3),
    "elevated": RiskTier(name="elevated", votes=5, min_agreement=0.8),
    "critical": RiskTier(name="critical", votes=5, min_agreement=1.0, adjudication=True),
}


class Criterion(Frozen):
    """One rubric criterion or one binary criterion."""

    id: str = Field(min_length=1, max_length=128)
    """Criterion id; for rubric kinds one of the ARCV v1 score keys."""
    weight: float = Field(0.0, ge=0, le=1)
    """Weight in Q (rubric kinds); weights of a rubric sum to 1."""
    minimum: int | None = Field(None, ge=1, le=5)
    """Per-criterion minimum score; a lower panel score makes the artifact ineligible."""
    blocker: bool = False
    """Binary criteria: a stable "no" blocks the rollout."""
    text: str = ""
    """Binary criteria: the question put to the judge."""


def _unique_ids(items: tuple[Criterion, ...], field: str) -> None:
    dupes = sorted(i for i, n in Counter(c.id for c in items).items() if n > 1)
    if dupes:
        raise ValueError(f"{field}: duplicate criterion ids {dupes}")


class Rubric(Frozen):
    """The ``[rubric]`` table of rubric and pairwise campaigns (seed 000 score aggregation)."""

    version: str = Field(min_length=1)
    """Rubric version id, recorded in every receipt."""
    threshold: float = Field(0.75, ge=0, le=1)
    """Minimum Q for acceptance."""
    hard_gates: tuple[str, ...] = ()
    """Deterministic gates that veto acceptance when they do not pass."""
    criteria: tuple[Criterion, ...] = Field(min_length=1)
    """Weighted criteria; weights sum to 1."""

    @model_validator(mode="after")
    def _weights(self) -> Rubric:
        _unique_ids(self.criteria, "criteria")
        unknown = [c.id for c in self.criteria if c.id not in ARCV_SCORE_KEYS]
        if unknown:
            raise ValueError(
                f"criteria: unknown ids {unknown}; the ARCV Judge Decision v1 schema scores "
                f"only {list(ARCV_SCORE_KEYS)}"
            )
        total = sum(c.weight for c in self.criteria)
        if abs(total - 1.0) > _WEIGHT_TOLERANCE:
            raise ValueError(f"criteria: weights sum to {total:g}, they must sum to 1")
        return self


class CriteriaSuite(Frozen):
    """The ``[criteria]`` table of criteria campaigns (seed 001)."""

    samples: int = Field(5, ge=1, le=101)
    """Samples per non-blocker criterion per judge."""
    blocker_samples: int = Field(11, ge=1, le=101)
    """Samples per blocker criterion per judge (over-provisioned against correlation)."""
    blocker_quorum: float = Field(0.8, gt=0, le=1)
    """Agreement a blocker "no" needs to block; below it the criterion warns."""
    execution_temperature: float = Field(0.0, ge=0, le=2)
    """Decoding temperature of the subject under test (greedy by default, seed 001 §3)."""
    items: tuple[Criterion, ...] = Field(min_length=1)
    """Binary criteria with their question text."""

    @field_validator("items")
    @classmethod
    def _ids(cls, items: tuple[Criterion, ...]) -> tuple[Criterion, ...]:
        _unique_ids(items, "items")
        return items


class EquivalencePolicy(Frozen):
    """The ``[equivalence]`` table (seed 002)."""

    votes: int = Field(1, ge=1, le=101)
    """Judge samples per pair (multi-vote wrapper)."""
    min_agreement: int = Field(1, ge=1, le=101)
    """Identical answers needed for a verdict; otherwise null."""
    abstain_as_neither: bool = True
    """ABSTAIN and PARSE_ERROR map to null; false maps ABSTAIN to false (safer side)."""
    deterministic_first: bool = True
    """Settle numerically equal/different answers with math-verify before any judge call."""
    reference: Literal["b", "none"] = "b"
    """``b`` (default): ``b`` is the gold answer, reference material bound by digest only
    (docs/receipt-format.md, "Reference material"); ``none``: both are candidates, and
    receipts record ``b``'s reading and the judge's reasons too."""

    @model_validator(mode="after")
    def _agreement(self) -> EquivalencePolicy:
        if self.min_agreement > self.votes:
            raise ValueError("min_agreement: cannot exceed votes")
        return self


class Policy(Frozen):
    """Everything a campaign pins before evaluating: the fold reads only this, gates and votes."""

    id: str = Field(min_length=1, max_length=200)
    """Campaign id."""
    kind: Kind
    """Which job: rubric, pairwise, criteria or equivalence."""
    risk_tier: RiskTier = RISK_TIERS["standard"]
    """Votes and agreement required (rubric and pairwise)."""
    allowed_destinations: tuple[str, ...] = ("sim", "stub", "replay")
    """Where artifact content may be sent: base URLs, provider names, or sim/stub/replay.

    Compared after one normalisation (judges/_destinations.py): scheme and host in any case,
    default ports dropped, trailing slashes insignificant, paths exact.
    """
    task_version: str = "1"
    """Version of the task the artifacts answer; part of every job identity."""
    rubric: Rubric | None = None
    """The rubric (rubric and pairwise kinds)."""
    criteria: CriteriaSuite | None = None
    """The binary criteria (criteria kind)."""
    equivalence: EquivalencePolicy | None = None
    """Equivalence settings (equivalence kind)."""
    python: PythonChecks | None = None
    """Deterministic checks for Python artifacts."""
    judges: tuple[JudgeConfig, ...] = ()
    """The pinned judge panel."""
    subject: JudgeConfig | None = None
    """criteria kind: the model that runs the prompt or skill under test (execution phase)."""
    subject_prompt: str | None = None
    """criteria kind: the prompt template under test; ``{input}`` is the test-case input."""
    min_valid_fraction: float = Field(0.5, gt=0, le=1)
    """A judge counts as a substantive vote only with at least this share of valid samples."""

    @property
    def hard_gates(self) -> tuple[str, ...]:
        """The gates the campaign requires: the rubric's ``hard_gates``, none without a rubric."""
        return self.rubric.hard_gates if self.rubric is not None else ()

    @model_validator(mode="after")
    def _tables(self) -> Policy:
        if self.kind in ("rubric", "pairwise") and self.rubric is None:
            raise ValueError(f"rubric: a {self.kind} campaign needs a [rubric] table")
        if self.kind == "criteria" and self.criteria is None:
            raise ValueError("criteria: a criteria campaign needs a [criteria] table")
        if self.kind in ("rubric", "pairwise", "criteria") and not self.judges:
            raise ValueError(f"judges: a {self.kind} campaign needs at least one [[judges]] entry")
        dupes = sorted(i for i, n in Counter(j.id for j in self.judges).items() if n > 1)
        if dupes:
            raise ValueError(f"judges: judge ids must be unique; duplicated: {dupes}")
        return self
