"""The bias monitor's statistics, for ``jurat selftest`` (controls) and ``jurat run`` (live).

Per judge, never pooled into a panel figure: a judge's samples are not independent
witnesses (seed 000). Four readings, each against a bound of ``MonitorBounds``:

- always-equivalent rate (equivalence): EQUIVALENT answers over valid answers (seed 002 §6,
  "always-equivalent pathology");
- first-shown preference (pairwise): A/B answers for the candidate presented first, over
  A/B answers, and order-reversal consistency: the share of artifacts answered under both
  AB and BA with the same plurality canonical preference. Both are ``order_reversal``'s
  (judges/_order.py), summed over artifacts;
- verbosity correlation (rubric, pairwise): Pearson's r between a length and a preference.
  Rubric: x = ln(1 + characters of the artifact's text), y = the mean of the vote's criterion
  scores. Pairwise: x = ln(1 + chars of A) - ln(1 + chars of B) (canonical A/B), y = +1 for
  A, -1 for B, 0 for a tie. Lengths are logged so that one very long answer cannot carry r.
  Only a positive r is a verbosity bias; r is None when either side has no variance.

Counts are kept as sums (``BiasCounts``) so that a run of 10^5 artifacts, split over worker
processes, adds and merges them without holding a vote (runner/_summary.py).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from jurat.judges._order import OrderedAnswer, OrderReversal, order_reversal
from jurat.models import Artifact, Frozen, MonitorBounds, Vote

__all__ = [
    "BiasAlarm",
    "BiasCounts",
    "BiasReading",
    "Correlation",
    "equivalent_share",
    "first_position_ok",
]

Monitor = Literal["always-equivalent", "first-position", "order-consistency", "verbosity"]


def equivalent_share(decisions: Iterable[str | None]) -> tuple[int, int]:
    """(EQUIVALENT answers, valid answers) over equivalence decisions (None: no answer)."""
    seen = [d for d in decisions if d is not None]
    return sum(d == "EQUIVALENT" for d in seen), len(seen)


def first_position_ok(rate: float | None, bounds: MonitorBounds) -> bool:
    """The first-shown share is within ``[1 - max, max]`` (None, no A/B answer: not ok)."""
    top = bounds.max_first_position
    return rate is not None and 1.0 - top <= rate <= top


class Correlation(Frozen):
    """Pearson's r as running sums (mergeable)."""

    n: int = 0
    """Pairs added."""
    sx: float = 0.0
    """Sum of x."""
    sy: float = 0.0
    """Sum of y."""
    sxx: float = 0.0
    """Sum of x squared."""
    syy: float = 0.0
    """Sum of y squared."""
    sxy: float = 0.0
    """Sum of x times y."""

    def plus(self, x: float, y: float) -> Correlation:
        """With one more pair."""
        return Correlation(n=self.n + 1, sx=self.sx + x, sy=self.sy + y, sxx=self.sxx + x * x,
                           syy=self.syy + y * y, sxy=self.sxy + x * y)

    def merged(self, other: Correlation) -> Correlation:
        """The sums of both."""
        return Correlation(n=self.n + other.n, sx=self.sx + other.sx, sy=self.sy + other.sy,
                           sxx=self.sxx + other.sxx, syy=self.syy + other.syy,
                           sxy=self.sxy + other.sxy)

    @property
    def r(self) -> float | None:
        """Pearson's r; None under two pairs or without variance on a side."""
        if self.n < 2:
            return None
        vx = self.n * self.sxx - self.sx * self.sx
        vy = self.n * self.syy - self.sy * self.sy
        # Sums of floats: a constant side can leave a tiny positive residue.
        if vx <= 1e-9 * max(1.0, self.n * self.sxx) or vy <= 1e-9 * max(1.0, self.n * self.syy):
            return None
        return (self.n * self.sxy - self.sx * self.sy) / math.sqrt(vx * vy)


def _length(text: str | None) -> float:
    return math.log1p(len(text or ""))


def _mean_score(answer: dict[str, Any] | None) -> float | None:
    scores = answer.get("scores") if answer else None
    if not isinstance(scores, dict) or not scores:
        return None
    values = [v for v in scores.values() if isinstance(v, int) and not isinstance(v, bool)]
    return sum(values) / len(values) if values else None


_PAIRWISE_Y = {"A": 1.0, "B": -1.0, "tie": 0.0}


class BiasAlarm(Frozen):
    """One reading outside its bound."""

    judge: str
    """Judge id."""
    monitor: Monitor
    """Which reading."""
    value: float
    """The reading."""
    bound: str
    """The bound it crossed, as declared (``max_first_position 0.75``)."""

    @property
    def text(self) -> str:
        """One line for the summary and the report."""
        return f"judge {self.judge}: {self.monitor} {self.value:.2f} outside {self.bound}"


class BiasReading(Frozen):
    """One judge's bias readings over a campaign's votes."""

    judge: str
    """Judge id."""
    equivalent: int = 0
    """Equivalence: EQUIVALENT answers."""
    equivalence_answers: int = 0
    """Equivalence: valid answers."""
    order: OrderReversal = OrderReversal()
    """Pairwise: position bias and order-reversal consistency (``order_reversal``)."""
    verbosity: Correlation = Correlation()
    """Rubric and pairwise: length against preference or score."""

    @property
    def always_equivalent_rate(self) -> float | None:
        """EQUIVALENT over valid equivalence answers; None without one."""
        return self.equivalent / self.equivalence_answers if self.equivalence_answers else None

    @property
    def order_consistency(self) -> float | None:
        """Artifacts with the same plurality under AB and BA, over those seen in both."""
        return self.order.consistent / self.order.items if self.order.items else None

    def alarms(self, bounds: MonitorBounds) -> list[BiasAlarm]:
        """The readings outside ``bounds``, each on enough answers (``min_votes``)."""
        out: list[BiasAlarm] = []
        enough = bounds.min_votes

        def alarm(monitor: Monitor, value: float, bound: str) -> None:
            out.append(BiasAlarm(judge=self.judge, monitor=monitor, value=value, bound=bound))

        eq = self.always_equivalent_rate
        if eq is not None and self.equivalence_answers >= enough and (
                eq > bounds.max_always_equivalent):
            alarm("always-equivalent", eq, f"max_always_equivalent {bounds.max_always_equivalent}")
        first = self.order.first_position_rate
        if first is not None and self.order.ab_answers >= enough and not first_position_ok(
                first, bounds):
            top = bounds.max_first_position
            alarm("first-position", first, f"max_first_position {top} (and {1 - top:g})")
        consistency = self.order_consistency
        if consistency is not None and self.order.items >= max(1, enough // 4) and (
                consistency < bounds.min_order_consistency):
            alarm("order-consistency", consistency,
                  f"min_order_consistency {bounds.min_order_consistency}")
        r = self.verbosity.r
        if r is not None and self.verbosity.n >= enough and r > bounds.max_verbosity_correlation:
            alarm("verbosity", r, f"max_verbosity_correlation {bounds.max_verbosity_correlation}")
        return out


_ORDER_FIELDS = tuple(OrderReversal.model_fields)


class BiasCounts:
    """A campaign's bias readings, gathered per judge as each artifact's votes arrive."""

    def __init__(self) -> None:
        self._equivalent: Counter[str] = Counter()
        self._answers: Counter[str] = Counter()
        self._order: dict[str, Counter[str]] = {}
        self._verbosity: dict[str, Correlation] = {}

    def add(self, kind: str, artifact: Artifact, votes: Sequence[Vote]) -> None:
        """Count one artifact's votes (all judges) of a campaign of ``kind``."""
        by_judge: dict[str, list[Vote]] = {}
        for vote in votes:
            by_judge.setdefault(vote.judge, []).append(vote)
        for judge, mine in by_judge.items():
            if kind == "equivalence":
                decisions = [v.answer.get("decision") if v.error is None and v.answer else None
                             for v in mine]
                eq, n = equivalent_share(str(d) if d is not None else None for d in decisions)
                self._equivalent[judge] += eq
                self._answers[judge] += n
            elif kind == "pairwise":
                answers = [OrderedAnswer.of(v) for v in mine if v.error is None]
                one = order_reversal([answers])
                counts = self._order.setdefault(judge, Counter())
                for name in _ORDER_FIELDS:
                    counts[name] += getattr(one, name)
                x = _length(artifact.a) - _length(artifact.b)
                for answer in answers:
                    if answer.canonical in _PAIRWISE_Y:
                        self._plus(judge, x, _PAIRWISE_Y[answer.canonical])
            elif kind == "rubric":
                x = _length(artifact.text)
                for vote in mine:
                    y = _mean_score(vote.answer) if vote.error is None else None
                    if y is not None:
                        self._plus(judge, x, y)

    def _plus(self, judge: str, x: float, y: float) -> None:
        self._verbosity[judge] = self._verbosity.get(judge, Correlation()).plus(x, y)

    def merge(self, other: BiasCounts) -> None:
        """Add the counts of another part of the same run."""
        self._equivalent.update(other._equivalent)
        self._answers.update(other._answers)
        for judge, counts in other._order.items():
            self._order.setdefault(judge, Counter()).update(counts)
        for judge, corr in other._verbosity.items():
            self._verbosity[judge] = self._verbosity.get(judge, Correlation()).merged(corr)

    def readings(self, judges: Sequence[str]) -> list[BiasReading]:
        """One reading per judge of ``judges`` (panel order) that has anything to read."""
        out = []
        for judge in judges:
            if not (self._answers[judge] or judge in self._order or judge in self._verbosity):
                continue
            order = self._order.get(judge, Counter())
            out.append(BiasReading(
                judge=judge, equivalent=self._equivalent[judge],
                equivalence_answers=self._answers[judge],
                order=OrderReversal(**{name: order[name] for name in _ORDER_FIELDS}),
                verbosity=self._verbosity.get(judge, Correlation())))
        return out
