"""Design effect, effective sample size and the error rates implied under correlation.

Seed 001: "N = 5 samples meets the false-BLOCK budget at a 0.8 agreement quorum. The
binomial majority-error works out to ≈ 0.0022 against a 0.005 budget" — for independent
samples. With intra-item correlation rho, N samples are worth
``n_eff = N / (1 + (N − 1) rho)`` independent ones (Kish's design effect ``1 + (N − 1) rho``),
and the count of wrong samples is over-dispersed: here it is modelled as beta-binomial
with mean ``e`` (the per-sample error rate) and intra-item correlation rho
(``alpha = e (1 − rho) / rho``, ``beta = (1 − e)(1 − rho) / rho``), beside the independent
binomial. rho fixes only the second moment: another shape with the same rho (the sim
judge's common-cause mixture) has other tails, so the beta-binomial figure is a model, and
``empirical_rate`` gives the model-free one from the qualification's own samples.

False block: a truly passing blocker whose wrong "no" clears the quorum, ceil(q N) wrong of
N (fold.stability_gate). False ship: a truly failing blocker whose wrong "yes" is the
plurality, more than N / 2 wrong of N (the stability gate passes a "yes" verdict).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from jurat.errors import ConfigError
from jurat.fold import quorum_count

__all__ = [
    "Model",
    "design_effect",
    "effective_n",
    "empirical_rate",
    "false_block_threshold",
    "false_ship_threshold",
    "tail",
]

Model = Literal["binomial", "beta-binomial"]


def _rho(rho: float) -> float:
    if not -1 <= rho <= 1:
        raise ConfigError(f"rho must be in [-1, 1], got {rho!r}")
    return rho


def design_effect(samples: int, rho: float) -> float:
    """Kish's design effect ``1 + (N − 1) rho`` of N samples of one item."""
    if samples < 1:
        raise ConfigError(f"samples must be >= 1, got {samples}")
    return 1 + (samples - 1) * _rho(rho)


def effective_n(samples: int, rho: float) -> float:
    """``N / (1 + (N − 1) rho)``: how many independent samples N correlated ones are worth."""
    deff = design_effect(samples, rho)
    return math.inf if deff <= 0 else samples / deff


def false_block_threshold(samples: int, quorum: float) -> int:
    """Wrong "no" samples of N that block a truly passing blocker: ceil(q N)."""
    return quorum_count(samples, quorum)


def false_ship_threshold(samples: int) -> int:
    """Wrong "yes" samples of N that pass a truly failing blocker: a strict majority."""
    return samples // 2 + 1


def tail(samples: int, threshold: int, error: float, rho: float, model: Model) -> float:
    """P(at least ``threshold`` of ``samples`` are wrong) at error rate ``error``, rho."""
    from scipy.stats import betabinom, binom

    if not 0 <= error <= 1:
        raise ConfigError(f"error rate must be in [0, 1], got {error!r}")
    if threshold <= 0:
        return 1.0
    if threshold > samples:
        return 0.0
    rho = _rho(rho)
    if model == "binomial" or rho <= 0 or error in (0.0, 1.0):
        # Negative rho (under-dispersion) is not a beta-binomial; the binomial is its
        # closest independent reading and is never the optimistic side of a positive rho.
        return float(binom.sf(threshold - 1, samples, error))
    if rho >= 1:
        return error
    scale = (1 - rho) / rho
    return float(betabinom.sf(threshold - 1, samples, error * scale, (1 - error) * scale))


def empirical_rate(clusters: Sequence[tuple[int, int]], samples: int, threshold: int) -> float:
    """Model-free: the share of N-sample draws (without replacement, per item) with at
    least ``threshold`` wrong, averaged over items; ``clusters`` are (wrong, drawn) per item.

    Needs items with at least N samples; the others are left out (none left: NaN).
    """
    from scipy.stats import hypergeom

    rates = [float(hypergeom.sf(threshold - 1, k, wrong, samples))
             for wrong, k in clusters if k >= samples]
    return sum(rates) / len(rates) if rates else math.nan
