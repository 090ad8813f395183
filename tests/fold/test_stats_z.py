"""The Wilson interval's z for jurat's own confidences is scipy's, bit for bit, without
importing scipy.stats (fold/_stats.py)."""

from __future__ import annotations

import math

import pytest
from scipy.stats import norm

from jurat.fold import _stats
from jurat.fold._stats import wilson_interval


@pytest.mark.parametrize("confidence", sorted(_stats._Z))
def test_the_table_is_scipys_value(confidence: float) -> None:
    assert _stats._Z[confidence] == float(norm.ppf(1 - (1 - confidence) / 2))


@pytest.mark.parametrize("confidence", [0.95, 0.8, 0.999])
def test_the_interval_is_the_same_with_or_without_the_table(confidence: float) -> None:
    z = float(norm.ppf(1 - (1 - confidence) / 2))
    low, high = wilson_interval(37, 50, confidence)
    p, n = 37 / 50, 50
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    assert (low, high) == (centre - half, centre + half)
