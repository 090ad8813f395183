"""Agreement of one rater with gold: confusion matrix, Cohen's kappa, Krippendorff's alpha.

"Undecided" (no label) is a category of its own, never dropped: a judge that abstains on
the hard items must not look better for it (coverage is reported beside). Kappa's interval
is the large-sample one statsmodels gives (Fleiss, Cohen and Everitt 1969); alpha's is a
percentile bootstrap over items with a fixed seed, so a report re-computes exactly.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from jurat.errors import DependencyError
from jurat.models import Frozen

__all__ = ["UNDECIDED", "Agreement", "Interval", "agreement"]

#: The category of an item a rater gave no label.
UNDECIDED = "undecided"

#: Bootstrap resamples for alpha's interval, and their seed.
_RESAMPLES = 1000
_SEED = 20261201

#: A rater giving one label to at least this share of items is flagged as constant, when
#: gold's own most common label covers clearly less (a real skew is not a bias).
_CONSTANT_SHARE = 0.95
_CONSTANT_MARGIN = 0.05


class Interval(Frozen):
    """An estimate with its 95% interval."""

    value: float | None
    """The estimate; None when it is undefined (e.g. a single category everywhere)."""
    low: float | None
    """Lower end of the 95% interval."""
    high: float | None
    """Upper end of the 95% interval."""


class Agreement(Frozen):
    """One rater (a judge, or the folded decision) against the gold labels."""

    rater: str
    """Judge id, or ``decision`` for the folded decision."""
    criterion: str | None = None
    """criteria campaigns: the criterion this judge is compared on; None otherwise."""
    items: int = Field(ge=0)
    """Items compared: artifacts with both a gold label and a verified receipt that the
    rater was asked about (a judge: not settled without a judge)."""
    not_asked: int = Field(0, ge=0)
    """Artifacts with gold and a receipt this rater was not asked about (settled without a
    judge: a deterministic settlement or a veto); not in ``items``, not in any figure."""
    coverage: float | None
    """Share of those items the rater labelled (not undecided)."""
    accuracy: float | None
    """Share of items whose label equals gold (undecided counts as wrong)."""
    categories: tuple[str, ...]
    """Row and column order of ``confusion``: the kind's labels, then ``undecided``."""
    confusion: tuple[tuple[int, ...], ...]
    """``confusion[i][j]``: items of gold ``categories[i]`` labelled ``categories[j]``."""
    kappa: Interval
    """Cohen's kappa against gold, with its asymptotic 95% interval."""
    alpha: Interval
    """Krippendorff's alpha (nominal) of gold and rater, with a bootstrap 95% interval."""
    flags: tuple[str, ...]
    """Why this rater should not be trusted as it stands (empty: nothing seen)."""


def _libraries() -> tuple[Any, Any, Any]:
    try:
        import krippendorff
        import numpy
        from statsmodels.stats.inter_rater import cohens_kappa
    except ImportError as exc:
        raise DependencyError(
            "jurat calibrate needs statsmodels and krippendorff: pip install 'jurat[calibrate]'"
        ) from exc
    return numpy, cohens_kappa, krippendorff


def _finite(x: Any) -> float | None:
    value = float(x)
    return value if value == value and abs(value) != float("inf") else None


def _kappa(table: Any, cohens_kappa: Any) -> Interval:
    with warnings.catch_warnings():
        # A constant rater has kappa 0 with zero variance; statsmodels warns while
        # computing its z statistic, which is not reported here.
        warnings.simplefilter("ignore", RuntimeWarning)
        result = cohens_kappa(table)
    value = _finite(result.kappa)
    if value is None:
        return Interval(value=None, low=None, high=None)
    return Interval(value=value, low=_finite(result.kappa_low), high=_finite(result.kappa_upp))


def _alpha(gold: Any, rated: Any, numpy: Any, krippendorff: Any) -> Interval:
    def alpha_of(rows: Any) -> float | None:
        pair = numpy.vstack([gold[rows], rated[rows]]).astype(float)
        if len(numpy.unique(pair)) < 2:
            return None  # one category everywhere: alpha is undefined
        return _finite(krippendorff.alpha(reliability_data=pair,
                                          level_of_measurement="nominal"))

    n = len(gold)
    value = alpha_of(numpy.arange(n))
    if value is None:
        return Interval(value=None, low=None, high=None)
    rng = numpy.random.default_rng(_SEED)
    draws = [alpha_of(rng.integers(0, n, n)) for _ in range(_RESAMPLES)]
    kept = numpy.array([d for d in draws if d is not None])
    low, high = numpy.percentile(kept, [2.5, 97.5])
    return Interval(value=value, low=float(low), high=float(high))


def _flags(labels: Sequence[str], gold: Sequence[str], kappa: Interval) -> list[str]:
    flags: list[str] = []
    n = len(labels)
    top, count = Counter(labels).most_common(1)[0]
    gold_top = Counter(gold).most_common(1)[0][1] / n
    if count / n >= _CONSTANT_SHARE and count / n >= gold_top + _CONSTANT_MARGIN:
        flags.append(f"constant: {top} on {count}/{n} items (gold's commonest label: "
                     f"{gold_top:.0%})")
    if kappa.value is None or kappa.low is None or kappa.low <= 0:
        flags.append("chance: kappa's interval reaches 0")
    return flags


def agreement(rater: str, kind_labels: Sequence[str], gold: Sequence[str],
              rated: Sequence[str | None], *, not_asked: int = 0) -> Agreement:
    """``rater``'s labels ``rated`` (None: undecided) against ``gold``, item by item;
    ``not_asked``: the items left out because the rater was not asked (reported only)."""
    numpy, cohens_kappa, krippendorff = _libraries()
    categories = (*kind_labels, UNDECIDED)
    index = {c: i for i, c in enumerate(categories)}
    labels = [UNDECIDED if r is None else r for r in rated]
    n = len(labels)
    table = numpy.zeros((len(categories), len(categories)), dtype=int)
    for g, r in zip(gold, labels, strict=True):
        table[index[g], index[r]] += 1
    if n == 0:
        empty = Interval(value=None, low=None, high=None)
        return Agreement(rater=rater, items=0, not_asked=not_asked, coverage=None, accuracy=None,
                         categories=categories, confusion=tuple(tuple(row) for row in table),
                         kappa=empty, alpha=empty, flags=("no items to compare",))
    kappa = _kappa(table, cohens_kappa)
    codes_gold = numpy.array([index[g] for g in gold])
    codes_rated = numpy.array([index[r] for r in labels])
    return Agreement(
        rater=rater,
        items=n,
        not_asked=not_asked,
        coverage=sum(1 for r in labels if r != UNDECIDED) / n,
        accuracy=int(numpy.trace(table)) / n,
        categories=categories,
        confusion=tuple(tuple(int(x) for x in row) for row in table),
        kappa=kappa,
        alpha=_alpha(codes_gold, codes_rated, numpy, krippendorff),
        flags=tuple(_flags(labels, gold, kappa)),
    )
