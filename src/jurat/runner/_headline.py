"""A run's headline metric: the rate each kind is read by, with a small-sample interval.

- equivalence: the equivalent rate (undecided artifacts count in n, not as equivalent);
- rubric and pairwise: the accept rate; rubric adds a pass rate per criterion that has a
  ``minimum`` (the panel score meets it);
- criteria: the ship rate, and a pass rate per criterion (every judge's stability gate
  passed; a criterion no judge was asked about counts in n as not passed).

Each rate comes with its Wilson 95% interval (``fold/_rates.py``, shared with the
report). The denominator is every artifact the run judged, so missing evidence lowers a
rate and never raises it.

What it measures is the work judged (the model, program or answers under test) as this
panel decided it; it says nothing of the judges' own accuracy, which is what `jurat
calibrate` measures against gold labels.
"""

from __future__ import annotations

from collections.abc import Iterable

from jurat.fold._rates import CONFIDENCE, MEASURES, Rate, overall_rate, rate
from jurat.models import Policy
from jurat.runner._results import ArtifactResult

__all__ = ["CONFIDENCE", "MEASURES", "Rate", "headline"]


def headline(policy: Policy, results: Iterable[ArtifactResult]) -> list[Rate]:
    """The kind's overall rate first, then one pass rate per criterion (criteria; rubric
    criteria with a ``minimum``), in the campaign's order."""
    items = list(results)
    n = len(items)
    rates = [overall_rate(policy.kind, (r.decision for r in items))]
    if policy.criteria is not None and policy.kind == "criteria":
        for item in policy.criteria.items:
            gates = [c.gate for r in items for c in r.criteria if c.criterion == item.id]
            rates.append(rate("pass_rate", gates.count("pass"), n, criterion=item.id,
                               unsettled=gates.count("not_judged") + n - len(gates)))
    if policy.rubric is not None and policy.kind == "rubric":
        for c in policy.rubric.criteria:
            if c.minimum is None:
                continue
            scored = [s for r in items for s in r.scores if s.criterion == c.id]
            rates.append(rate("pass_rate", sum(1 for s in scored if s.passed), n,
                               criterion=c.id,
                               unsettled=sum(1 for s in scored if s.score is None)
                               + n - len(scored)))
    return rates
