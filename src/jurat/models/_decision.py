from __future__ import annotations

from typing import Literal

from jurat.models._base import Frozen

Disposition = Literal["accept", "reject", "escalate"]
Rollout = Literal["SHIP", "WARN", "BLOCK"]


class CriterionOutcome(Frozen):
    """A binary criterion after the fold (seed 001 §1-2), one per (judge, criterion)."""

    judge: str
    """Judge id whose samples were folded."""
    criterion_id: str
    """Criterion id."""
    blocker: bool
    """Whether it is a blocker."""
    verdict: Literal["yes", "no", "unsure"]
    """Majority of the samples; a plurality tie is unsure."""
    samples: int
    """N, errored samples included."""
    agreement: float
    """Top count / N."""
    agreement_votes: str
    """The same as an exact fraction ``top/N``."""
    sample_verdicts: tuple[str, ...]
    """Per-sample verdicts in dispatch order (errors as ``error:<kind>``)."""
    gate: Literal["pass", "warn", "block"]
    """Stability-gate result."""


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
