"""The ``[monitor]`` table: the bounds the live bias monitor holds a campaign's judges to.

Seed 000: "Monitor order reversal consistency, model-family dependence, and domain
calibration"; published LLM-as-a-judge research reports position, verbosity and
self-preference biases. Seed 002 §6 names the always-equivalent pathology. The statistics
live in judges/_bias.py; ``jurat selftest`` and ``jurat run`` read the same bounds.

The table is kept out of the policy and its digest, like ``[intake]``: an alarm never
changes a decision, so tightening a bound must not make every recorded vote unreusable.
"""

from __future__ import annotations

from pydantic import Field

from jurat.models._base import Frozen

__all__ = ["MonitorBounds"]


class MonitorBounds(Frozen):
    """Bounds of the bias monitor; a judge reading outside one raises an alarm."""

    max_always_equivalent: float = Field(0.9, ge=0.0, le=1.0)
    """Equivalence: the largest share of a judge's valid answers that may be EQUIVALENT."""
    max_first_position: float = Field(0.75, ge=0.5, le=1.0)
    """Pairwise: the largest share of a judge's A/B answers for the candidate shown first
    (and, symmetrically, ``1 - max`` the smallest: a taste for the second is a bias too)."""
    min_order_consistency: float = Field(0.5, ge=0.0, le=1.0)
    """Pairwise: the smallest share of artifacts, answered under both AB and BA, whose
    plurality canonical preference is the same under both orders. Lower than selftest's
    0.75 on its obvious controls: a live artifact may be hard, and with three samples a side
    a fair judge of reliability 0.85 keeps its plurality on about 0.9 of artifacts, so few
    artifacts scatter widely; a judge led by position keeps it on none."""
    max_verbosity_correlation: float = Field(0.5, ge=0.0, le=1.0)
    """Rubric and pairwise: the largest Pearson correlation between answer length and the
    judge's preference or score (judges/_bias.py defines it)."""
    min_votes: int = Field(20, ge=1)
    """Readings over fewer valid answers (or, for order consistency, fewer artifacts seen in
    both orders than ``min_votes // 4``, at least 1) are shown but raise no alarm: a handful of
    samples says little about a bias."""
