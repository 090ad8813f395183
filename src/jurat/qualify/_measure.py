"""Per-judge figures of a qualification from its recorded samples (pure; re-derivable).

Every figure is a function of the samples (and gold labels, when the set has them) alone,
so ``jurat verify`` recomputes them from the signed record. docs/qualify.md says what each
figure means and what it does not: agreement is stability, not correctness.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import Field

from jurat.fold import wilson_interval
from jurat.models import Frozen
from jurat.models._truth import SIM_LABELS
from jurat.qualify._design import (
    design_effect,
    effective_n,
    empirical_rate,
    false_block_threshold,
    false_ship_threshold,
    tail,
)
from jurat.qualify._icc import Estimate, icc_binary
from jurat.qualify._plan import samples_for_budget

__all__ = ["KAPPA_TARGET", "ImpliedRate", "JudgeFigures", "Sample", "measure"]

#: Seed 001: "Cohen's κ against a human-anchored gold set, target ≥ 0.8".
KAPPA_TARGET = 0.8

Mode = Literal["burst", "spaced"]


class Sample(Frozen):
    """One recorded qualification sample, reduced to what the figures use."""

    judge: str
    """Judge id."""
    item: str
    """The artifact's sha256 (a digest, never the artifact's own text)."""
    criterion: str
    """``rubric``/``pairwise``/``equivalence`` or the binary criterion id."""
    window: int = Field(ge=0)
    """Time window index (0-based)."""
    mode: Mode
    """``burst`` (no spacing) or ``spaced`` (``spacing_ms`` apart)."""
    sample: int = Field(ge=0)
    """The engine's sample index within the (judge, criterion) plan."""
    label: str | None
    """The canonical label the sample answered; None for an errored sample."""
    dispatch_ms: int = Field(0, ge=0)
    """Milliseconds from the window's job start to the sample's dispatch."""


class ImpliedRate(Frozen):
    """An error rate of the campaign's gate implied for N samples at quorum q."""

    samples: int = Field(ge=1)
    """N."""
    threshold: int = Field(ge=1)
    """Wrong samples of N that make the error."""
    binomial: float
    """Independent samples at the measured error rate."""
    beta_binomial: Estimate
    """Beta-binomial at the measured error rate and rho, over the corners of both
    intervals."""
    empirical: Estimate
    """Model-free: N-sample draws from the qualification's own items (None when no item
    has N samples)."""


class JudgeFigures(Frozen):
    """What a qualification measured for one judge."""

    judge: str
    """Judge id."""
    items: int = Field(ge=0)
    """(item, criterion) units sampled."""
    samples: int = Field(ge=0)
    """Samples recorded, errors included."""
    errors: int = Field(ge=0)
    """Errored samples (they score as wrong: missing evidence never helps)."""
    reference: Literal["gold", "modal"]
    """What a sample is scored against: gold labels, or each item's modal label."""
    error_rate: Estimate
    """Share of samples that differ from the reference, with a Wilson interval over
    items."""
    flip_rate: Estimate
    """Mean over items of the share of sample pairs that disagree (value), and the
    largest item's (high; low is the smallest)."""
    retest: Estimate | None
    """Test-retest agreement: the share of cross-window sample pairs of one item that
    agree, with a Wilson interval over items; None with one window."""
    rho: Estimate
    """Intra-item correlation of the samples' scores, all samples (qualify/_icc.py)."""
    rho_burst: Estimate
    """rho of the burst samples only."""
    rho_spaced: Estimate
    """rho of the spaced samples only."""
    rho_difference: Estimate | None
    """rho_burst − rho_spaced; its interval treats the two as independent (conservative
    when items are shared, as here)."""
    drift: Estimate | None
    """Positive-label rate of the last window minus the first, with a paired t interval
    over items; None with one window."""
    kappa: Estimate | None
    """Cohen's kappa of the samples against gold; None without gold."""
    kappa_met: bool | None
    """kappa's value is at least the seed's 0.8 target; None without gold."""
    campaign_samples: int = Field(ge=1)
    """The campaign's N for this judge (blocker N for criteria campaigns)."""
    quorum: float
    """The campaign's blocker quorum."""
    design_effect: Estimate
    """1 + (N − 1) rho at the campaign's N."""
    effective_n: Estimate
    """N / (1 + (N − 1) rho) at the campaign's N."""
    false_block: ImpliedRate
    """A truly passing blocker blocked (ceil(q N) wrong "no")."""
    false_ship: ImpliedRate
    """A truly failing blocker passed (a wrong "yes" majority)."""
    budget: float
    """The declared false-block budget (seed 001: 0.005)."""
    budget_samples_binomial: int | None
    """The least N meeting the budget for independent samples."""
    budget_samples: int | None
    """The least N meeting the budget under the beta-binomial at the measured rho (upper
    end of its interval); None: no N up to 101 does."""


def _positive(kind: str) -> str:
    return SIM_LABELS["criterion" if kind == "criterion" else kind][0]


def _t_interval(values: Sequence[float]) -> Estimate:
    from scipy.stats import t as student

    n = len(values)
    if n == 0:
        return Estimate(value=None)
    mean = sum(values) / n
    if n < 2:
        return Estimate(value=mean, items=n)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(student.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return Estimate(value=mean, low=mean - half, high=mean + half, items=n)


def _wilson(shares: Sequence[float], samples: int) -> Estimate:
    # Each item counts once (its share of successes): its samples are not independent.
    n = len(shares)
    if n == 0:
        return Estimate(value=None)
    value = sum(shares) / n
    low, high = wilson_interval(round(value * n), n)
    return Estimate(value=value, low=min(low, value), high=max(high, value), items=n,
                    samples=samples)


def _pair_disagreement(labels: Sequence[str | None]) -> float | None:
    n = len(labels)
    if n < 2:
        return None
    counts = Counter(labels)
    return 1 - sum(c * (c - 1) for c in counts.values()) / (n * (n - 1))


def _reference(labels: Sequence[str | None], gold: str | None) -> str | None:
    if gold is not None:
        return gold
    counts = Counter(label for label in labels if label is not None)
    if not counts:
        return None
    top = max(counts.values())
    # Ties resolve to the label sorting first, so the reference is a function of the data.
    return min(label for label, c in counts.items() if c == top)


def _clusters(units: Mapping[tuple[str, str], Sequence[Sample]],
              refs: Mapping[tuple[str, str], str | None],
              mode: Mode | None = None) -> list[tuple[int, int]]:
    out = []
    for key, samples in units.items():
        chosen = [s for s in samples if mode is None or s.mode == mode]
        if chosen:
            right = sum(s.label is not None and s.label == refs[key] for s in chosen)
            out.append((right, len(chosen)))
    return out


def _difference(a: Estimate, b: Estimate) -> Estimate | None:
    if None in (a.value, a.low, a.high, b.value, b.low, b.high):
        return None
    assert a.value is not None and b.value is not None
    assert a.low is not None and a.high is not None and b.low is not None and b.high is not None
    se = math.hypot((a.high - a.low) / 3.92, (b.high - b.low) / 3.92)
    d = a.value - b.value
    return Estimate(value=d, low=d - 1.96 * se, high=d + 1.96 * se)


def _implied(n: int, threshold: int, error: Estimate, rho: Estimate,
             wrong: Sequence[tuple[int, int]]) -> ImpliedRate:
    e = error.value or 0.0
    r = rho.value or 0.0
    errors = [x for x in (error.low, e, error.high) if x is not None]
    rhos = [max(0.0, x) for x in (rho.low, r, rho.high) if x is not None]
    corners = [tail(n, threshold, x, y, "beta-binomial") for x in errors for y in rhos]
    per_item = [empirical_rate([c], n, threshold) for c in wrong if c[1] >= n]
    empirical = _t_interval(per_item)
    if empirical.value is not None:
        empirical = empirical.model_copy(update={
            "low": None if empirical.low is None else max(0.0, empirical.low),
            "high": None if empirical.high is None else min(1.0, empirical.high)})
    return ImpliedRate(
        samples=n, threshold=threshold, binomial=tail(n, threshold, e, 0.0, "binomial"),
        beta_binomial=Estimate(value=tail(n, threshold, e, max(0.0, r), "beta-binomial"),
                               low=min(corners), high=max(corners)),
        empirical=empirical,
    )


def _range(n: int, rho: Estimate, f: object) -> Estimate:
    assert callable(f)
    values = [f(n, max(-1.0, x)) for x in (rho.low, rho.value, rho.high) if x is not None]
    if rho.value is None:
        return Estimate(value=None)
    return Estimate(value=f(n, rho.value), low=min(values), high=max(values))


def measure(judge: str, kind: str, samples: Sequence[Sample],
            gold: Mapping[tuple[str, str], str], *, campaign_samples: int, quorum: float,
            budget: float) -> JudgeFigures:
    """The figures of ``judge`` from its samples; ``gold`` maps (item, criterion) → label."""
    own = [s for s in samples if s.judge == judge]
    units: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    for s in own:
        units[(s.item, s.criterion)].append(s)
    has_gold = bool(units) and all(key in gold for key in units)
    refs = {key: _reference([s.label for s in group], gold.get(key) if has_gold else None)
            for key, group in units.items()}
    right = _clusters(units, refs)
    wrong = [(k - y, k) for y, k in right]
    error = _wilson([w / k for w, k in wrong], len(own))
    flips = [d for d in (_pair_disagreement([s.label for s in g]) for g in units.values())
             if d is not None]
    flip = Estimate(value=sum(flips) / len(flips) if flips else None,
                    low=min(flips, default=None), high=max(flips, default=None),
                    items=len(flips), samples=len(own))
    windows = sorted({s.window for s in own})
    retest = drift = None
    if len(windows) >= 2:
        first, last = windows[0], windows[-1]
        agree, diffs = [], []
        positive = _positive(kind)
        for group in units.values():
            a = [s.label for s in group if s.window == first]
            b = [s.label for s in group if s.window == last]
            if a and b:
                agree.append(sum(x is not None and x == y for x in a for y in b)
                             / (len(a) * len(b)))
                diffs.append(sum(y == positive for y in b) / len(b)
                             - sum(x == positive for x in a) / len(a))
        retest = _wilson(agree, len(own))
        drift = _t_interval(diffs)
    rho = icc_binary(right)
    rho_burst = icc_binary(_clusters(units, refs, "burst"))
    rho_spaced = icc_binary(_clusters(units, refs, "spaced"))
    kappa = None
    if has_gold:
        kappa = _kappa([gold[(s.item, s.criterion)] for s in own], [s.label for s in own],
                       len(units))
    fb = false_block_threshold(campaign_samples, quorum)
    rho_high = max(0.0, rho.high if rho.high is not None else 0.0)
    return JudgeFigures(
        judge=judge, items=len(units), samples=len(own),
        errors=sum(s.label is None for s in own),
        reference="gold" if has_gold else "modal", error_rate=error, flip_rate=flip,
        retest=retest, rho=rho, rho_burst=rho_burst, rho_spaced=rho_spaced,
        rho_difference=_difference(rho_burst, rho_spaced), drift=drift, kappa=kappa,
        kappa_met=None if kappa is None or kappa.value is None else kappa.value >= KAPPA_TARGET,
        campaign_samples=campaign_samples, quorum=quorum,
        design_effect=_range(campaign_samples, rho, design_effect),
        effective_n=_range(campaign_samples, rho, effective_n),
        false_block=_implied(campaign_samples, fb, error, rho, wrong),
        false_ship=_implied(campaign_samples, false_ship_threshold(campaign_samples), error,
                            rho, wrong),
        budget=budget,
        budget_samples_binomial=samples_for_budget(budget, quorum, error.value or 0.0, 0.0,
                                                   "binomial"),
        budget_samples=samples_for_budget(budget, quorum, error.value or 0.0, rho_high,
                                          "beta-binomial"),
    )


def _kappa(gold: Sequence[str], rated: Sequence[str | None], items: int) -> Estimate:
    """Cohen's kappa (errored samples are a category of their own), with the large-sample
    standard error of Fleiss, Cohen and Everitt (1969) simplified to the null-free form
    ``sqrt(p_o (1 − p_o) / (n (1 − p_e)²))``, n taken as the item count (samples of one
    item are not independent)."""
    n = len(gold)
    if n == 0:
        return Estimate(value=None)
    labels = ["(error)" if r is None else r for r in rated]
    observed = sum(g == r for g, r in zip(gold, labels, strict=True)) / n
    gc, rc = Counter(gold), Counter(labels)
    expected = sum(gc[c] * rc[c] for c in gc) / (n * n)
    if expected >= 1:
        return Estimate(value=None, items=items, samples=n)
    k = (observed - expected) / (1 - expected)
    se = math.sqrt(observed * (1 - observed) / (items * (1 - expected) ** 2))
    return Estimate(value=k, low=max(-1.0, k - 1.96 * se), high=min(1.0, k + 1.96 * se),
                    items=items, samples=n)
