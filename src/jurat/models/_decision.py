"""The fold's output, and the words that name a decision: the one place they are spelled.

A decision is named by one word per campaign kind (docs/receipt-format.md §6.8): a
disposition (rubric, pairwise), a rollout (criteria), or the equivalence outcome
(true/false/null, read as equivalent/different/undecided). ``outcome_word`` picks it and
``tone_of`` classes it; the summary table, the HTML report and ``jurat replay`` call these
instead of spelling their own, and colours for a tone live in ``jurat.style``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from jurat.models._base import Frozen
from jurat.models._grounding import GroundingRecord

Disposition = Literal["accept", "reject", "escalate"]
"""rubric and pairwise decisions."""
Rollout = Literal["SHIP", "WARN", "BLOCK"]
"""criteria decisions (seed 001 §2)."""
Verdict = Literal["yes", "no", "unsure"]
"""A binary criterion's answer, and its folded majority (seed 001 §1)."""
StabilityGate = Literal["pass", "warn", "block"]
"""One criterion evaluation after the stability gate (seed 001 §2)."""
EquivalenceWord = Literal["equivalent", "different", "undecided"]
"""An equivalence decision's ``equivalent`` (true, false, null) as a word."""
Tone = Literal["good", "bad", "hold", "none"]
"""What a decision word means for the reader: go, stop, look again, or unknown."""

_TONES: dict[str, Tone] = {
    "accept": "good",
    "SHIP": "good",
    "equivalent": "good",
    "reject": "bad",
    "BLOCK": "bad",
    "different": "bad",
    "escalate": "hold",
    "WARN": "hold",
    "undecided": "hold",
}


def equivalence_word(equivalent: bool | None) -> EquivalenceWord:
    """true, false and null as the words people read: equivalent, different, undecided."""
    if equivalent is None:
        return "undecided"
    return "equivalent" if equivalent else "different"


def outcome_word(
    kind: str | None,
    *,
    disposition: str | None = None,
    rollout: str | None = None,
    equivalent: bool | None = None,
) -> str | None:
    """The one word that names a decision of ``kind``; None when that field is not set.

    Takes the fields rather than a ``Decision`` so that a reader that knows the campaign's
    kind (the report, from ``predicate.campaign.kind``) names the decision by it.
    """
    if kind == "equivalence":
        return equivalence_word(equivalent)
    if kind == "criteria":
        return rollout
    return disposition


def tone_of(word: str | None) -> Tone:
    """good for accept/SHIP/equivalent, bad for reject/BLOCK/different, hold for the rest."""
    return _TONES.get(word, "none") if word is not None else "none"


class CriterionOutcome(Frozen):
    """A binary criterion after the fold (seed 001 §1-2), one per (judge, criterion)."""

    judge: str
    """Judge id whose samples were folded."""
    criterion_id: str
    """Criterion id."""
    blocker: bool
    """Whether it is a blocker."""
    verdict: Verdict
    """Majority of the samples; a plurality tie is unsure."""
    samples: int
    """N, errored samples included."""
    agreement: float
    """Top count / N."""
    agreement_votes: str
    """The same as an exact fraction ``top/N``."""
    sample_verdicts: tuple[str, ...]
    """Per-sample verdicts in dispatch order (errors as ``error:<kind>``)."""
    gate: StabilityGate
    """Stability-gate result."""
    drawn: int | None = Field(None, exclude_if=lambda value: value is None)
    """``jurat.fold/v2``: samples drawn (recorded, errors included) when fewer than ``samples``
    were drawn because the result was already settled (exact curtailment); absent otherwise."""


class Decision(Frozen):
    """The fold's output. Which fields are set depends on the campaign kind."""

    kind: str
    """Campaign kind."""
    fold_rule: str
    """Aggregation rule id, e.g. ``jurat.fold/v1``."""
    disposition: Disposition | None = None
    """rubric and pairwise: accept, reject or escalate."""
    rollout: Rollout | None = None
    """criteria: SHIP, WARN or BLOCK."""
    equivalent: bool | None = None
    """equivalence: true, false, or null (undecided)."""
    equivalence_settled: bool = False
    """equivalence: whether the verdict was reached (deterministically or by the judges)."""
    reasons: tuple[str, ...] = ()
    """Why, in order of precedence (gate vetoes first)."""
    gates_failed: tuple[str, ...] = ()
    """Required gates that did not pass."""
    scores: dict[str, float] | None = None
    """Panel score per criterion (median across judges of each judge's median)."""
    q: float | None = None
    """Q = sum w_j (s_j - 1)/4."""
    q_bp: int | None = None
    """Q in basis points, rounded half-up, for exact comparison."""
    aggregation: str | None = None
    """Named aggregation operator, e.g. ``median-of-judge-medians``."""
    label: str | None = None
    """Consensus label: accept/reject (rubric), A/B/tie (pairwise), or the equivalence answer."""
    agreement: float | None = None
    """Share of independent votes (judges) carrying the consensus label; None when n = 0."""
    agreement_votes: str | None = None
    """The same as an exact fraction."""
    entropy: float | None = None
    """Normalised entropy over {A, B, tie} (pairwise)."""
    independent_votes: int = 0
    """Judges with a substantive vote."""
    independent_families: int | None = Field(None, exclude_if=lambda value: value is None)
    """``jurat.fold/v2``, rubric and pairwise: distinct model families among the judges with
    a substantive vote (``JudgeConfig.family``); the risk tier counts these. Absent under
    ``jurat.fold/v1``, so v1 decisions keep their normal form."""
    missing: int = 0
    """Judges (or samples, for equivalence) abstaining or errored: missing coverage."""
    samples: int = 0
    """All samples recorded, errors included."""
    valid_samples: int = 0
    """Samples with a validated answer."""
    sample_agreement: float | None = None
    """Agreement among all valid samples (recorded, not used for the tier)."""
    criteria: tuple[CriterionOutcome, ...] = ()
    """criteria kind: every criterion evaluation."""
    stability: dict[str, float | int] | None = None
    """criteria kind: present only when multi-sampling ran."""
    curtailment: dict[str, str | int] | None = Field(None, exclude_if=lambda v: v is None)
    """``jurat.fold/v2``, criteria kind: ``{"rule", "planned", "drawn"}``, the curtailment
    rule id (fold/_curtail.py) and the samples planned and drawn over all criteria. Absent
    under ``jurat.fold/v1``."""
    grounding: GroundingRecord | None = Field(None, exclude_if=lambda value: value is None)
    """Grounded campaigns (``[grounding]``): claims, labels, weights, evidence digests,
    coverage, contradiction rate and the gate (fold/_grounded.py). Absent otherwise, so
    other decisions keep their normal form."""
    adjudicated: bool | None = Field(None, exclude_if=lambda value: value is None)
    """True when a reviewer's adjudication (``review.adjudication``) settled an escalation;
    absent otherwise, so decisions recorded before the field existed keep their normal form."""

    @property
    def outcome(self) -> str | None:
        """The decision's word (``outcome_word``): disposition, rollout or equivalence word."""
        return outcome_word(
            self.kind,
            disposition=self.disposition,
            rollout=self.rollout,
            equivalent=self.equivalent,
        )
