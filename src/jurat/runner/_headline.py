"""A run's headline metric: the rate each kind is read by, with a small-sample interval.

- equivalence: the equivalent rate (undecided artifacts count in n, not as equivalent);
- rubric and pairwise: the accept rate; rubric adds a pass rate per criterion that has a
  ``minimum`` (the panel score meets it);
- criteria: the ship rate, and a pass rate per criterion (every judge's stability gate
  passed; a criterion no judge was asked about counts in n as not passed).

Each rate comes with the Wilson score interval at 95% (E. B. Wilson, "Probable inference,
the law of succession, and statistical inference", JASA 22 (1927) 209-212; Brown, Cai and
DasGupta, Statistical Science 16 (2001) 101-133, recommend it over the normal interval
for small n), computed by ``fold.wilson_interval``. The denominator is every artifact the
run judged, so missing evidence lowers a rate and never raises it.

What it measures is the work judged (the model, program or answers under test) as this
panel decided it; it says nothing of the judges' own accuracy, which is what `jurat
calibrate` measures against gold labels.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from jurat.fold import wilson_interval
from jurat.models import Frozen, Policy
from jurat.runner._results import ArtifactResult

__all__ = ["MEASURES", "Rate", "headline"]

Metric = Literal["ship_rate", "accept_rate", "equivalent_rate", "pass_rate"]

#: The label every headline carries: what the rate is a rate of.
MEASURES = "of the work judged (the model or submissions under test), not of the judge"

#: The confidence of every interval.
CONFIDENCE = 0.95

#: The word each kind's overall rate counts as a success.
_SUCCESS: dict[str, tuple[Metric, str]] = {
    "criteria": ("ship_rate", "SHIP"),
    "rubric": ("accept_rate", "accept"),
    "pairwise": ("accept_rate", "accept"),
    "equivalence": ("equivalent_rate", "equivalent"),
}


class Rate(Frozen):
    """One headline rate with its interval."""

    metric: Metric
    """Which rate."""
    criterion: str | None = None
    """``pass_rate``: the criterion; None for the overall rate."""
    successes: int
    """Artifacts that count: shipped, accepted, equivalent, or the criterion passed."""
    n: int
    """Artifacts judged in the run: the denominator."""
    unsettled: int = 0
    """Of ``n``, artifacts that could not count for want of a verdict: undecided
    (equivalence), or not asked about the criterion (a veto): counted as not successes."""
    low: float | None
    """Wilson 95% lower bound; None when n is 0."""
    high: float | None
    """Wilson 95% upper bound; None when n is 0."""

    @property
    def rate(self) -> float | None:
        """successes / n; None when n is 0."""
        return self.successes / self.n if self.n else None

    @property
    def name(self) -> str:
        """``ship rate``, ``pass rate cites-source``."""
        words = self.metric.replace("_", " ")
        return f"{words} {self.criterion}" if self.criterion is not None else words

    def text(self) -> str:
        """``ship rate 0.75 [0.30, 0.95] (n=4)``, and the unsettled count where there is one."""
        if self.rate is None or self.low is None or self.high is None:
            return f"{self.name} - (n=0)"
        tail = ""
        if self.unsettled:
            what = "undecided" if self.metric == "equivalent_rate" else "not judged"
            tail = f"; {self.unsettled} {what}, counted as not"
        return (f"{self.name} {self.rate:.2f} [{self.low:.2f}, {self.high:.2f}] "
                f"(n={self.n}{tail})")


def _rate(metric: Metric, successes: int, n: int, *, criterion: str | None = None,
          unsettled: int = 0) -> Rate:
    low, high = wilson_interval(successes, n, CONFIDENCE) if n else (None, None)
    return Rate(metric=metric, criterion=criterion, successes=successes, n=n,
                unsettled=unsettled, low=low, high=high)


def headline(policy: Policy, results: Iterable[ArtifactResult]) -> list[Rate]:
    """The kind's overall rate first, then one pass rate per criterion (criteria; rubric
    criteria with a ``minimum``), in the campaign's order."""
    items = list(results)
    n = len(items)
    metric, word = _SUCCESS[policy.kind]
    undecided = sum(1 for r in items if r.decision == "undecided")
    rates = [_rate(metric, sum(1 for r in items if r.decision == word), n,
                   unsettled=undecided if policy.kind == "equivalence" else 0)]
    if policy.criteria is not None and policy.kind == "criteria":
        for item in policy.criteria.items:
            gates = [c.gate for r in items for c in r.criteria if c.criterion == item.id]
            rates.append(_rate("pass_rate", gates.count("pass"), n, criterion=item.id,
                               unsettled=gates.count("not_judged") + n - len(gates)))
    if policy.rubric is not None and policy.kind == "rubric":
        for c in policy.rubric.criteria:
            if c.minimum is None:
                continue
            scored = [s for r in items for s in r.scores if s.criterion == c.id]
            rates.append(_rate("pass_rate", sum(1 for s in scored if s.passed), n,
                               criterion=c.id,
                               unsettled=sum(1 for s in scored if s.score is None)
                               + n - len(scored)))
    return rates
