"""Headline rates with their small-sample interval: what a run prints and writes
(runner/_headline.py, per artifact result) and what the report shows (report/_report.py,
per receipt). Each rate comes with the Wilson score interval at 95% (E. B. Wilson,
"Probable inference, the law of succession, and statistical inference", JASA 22 (1927)
209-212; Brown, Cai and DasGupta, Statistical Science 16 (2001) 101-133, recommend it over
the normal interval for small n). The denominator is every artifact judged, so missing
evidence lowers a rate and never raises it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from jurat.fold._stats import wilson_interval
from jurat.models import Frozen

__all__ = ["CONFIDENCE", "MEASURES", "SUCCESS", "Metric", "Rate", "overall_rate", "rate"]

Metric = Literal["ship_rate", "accept_rate", "equivalent_rate", "pass_rate"]

#: The label every headline carries: what the rate is a rate of.
MEASURES = "of the work judged (the model or submissions under test), not of the judge"

#: The confidence of every interval.
CONFIDENCE = 0.95

#: The word each kind's overall rate counts as a success.
SUCCESS: dict[str, tuple[Metric, str]] = {
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


def rate(metric: Metric, successes: int, n: int, *, criterion: str | None = None,
          unsettled: int = 0) -> Rate:
    low, high = wilson_interval(successes, n, CONFIDENCE) if n else (None, None)
    return Rate(metric=metric, criterion=criterion, successes=successes, n=n,
                unsettled=unsettled, low=low, high=high)




def overall_rate(kind: str, decisions: Iterable[str | None]) -> Rate:
    """The kind's overall rate over the artifacts' decision words (``SUCCESS``); an
    equivalence campaign's undecided artifacts count in n as not equivalent."""
    words = list(decisions)
    metric, word = SUCCESS[kind]
    undecided = words.count("undecided") if kind == "equivalence" else 0
    return rate(metric, words.count(word), len(words), unsettled=undecided)
