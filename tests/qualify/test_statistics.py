"""jurat.qualify's statistics: the ANOVA rho, design effect, implied rates, budget N."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from jurat.errors import ConfigError
from jurat.qualify import (
    design_effect,
    effective_n,
    empirical_rate,
    icc_binary,
    samples_for_budget,
    tail,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from qualify import repetition  # noqa: E402  (bench/qualify.py: the sim's own sampling)


def test_icc_known_values() -> None:
    # Items all right or all wrong: every variance is between items.
    assert icc_binary([(3, 3), (0, 3), (3, 3), (0, 3)]).value == pytest.approx(1.0)
    # Identical split items: no variance between items, rho at its floor -1/(k-1).
    assert icc_binary([(1, 2), (1, 2), (1, 2)]).value == pytest.approx(-1.0)
    # Hand-computed: y = (2, 1, 0), k = 2: MSB = 1, MSW = 1/3, rho = (1 - 1/3)/(1 + 1/3).
    assert icc_binary([(2, 2), (1, 2), (0, 2)]).value == pytest.approx(0.5)
    assert icc_binary([(1, 1), (0, 1)]).value is None  # no item with two samples
    with pytest.raises(ConfigError, match="clusters"):
        icc_binary([(3, 2)])


def test_design_effect_and_neff() -> None:
    assert design_effect(11, 0.1) == pytest.approx(2.0)
    assert effective_n(11, 0.1) == pytest.approx(5.5)
    assert effective_n(5, 0.0) == 5


def test_tail_binomial_is_the_seed_figure_and_correlation_raises_it() -> None:
    # Seed 001: N = 5, quorum 0.8 (4 wrong), error 0.15 -> ~0.0022.
    assert tail(5, 4, 0.15, 0.0, "binomial") == pytest.approx(0.00223, abs=2e-5)
    assert tail(5, 4, 0.15, 0.1, "beta-binomial") > 0.01
    assert tail(5, 4, 0.15, 0.3, "beta-binomial") == pytest.approx(0.0466, abs=1e-3)


def test_empirical_rate_is_hypergeometric() -> None:
    # One item, 2 wrong of 4, draws of 2: P(both wrong) = 1/6.
    assert empirical_rate([(2, 4)], 2, 2) == pytest.approx(1 / 6)
    assert math.isnan(empirical_rate([(1, 1)], 2, 2))


def test_samples_for_budget() -> None:
    # N = 3 at quorum 0.8 needs all 3 wrong: 0.15 ** 3 = 0.0034 <= 0.005.
    assert samples_for_budget(0.005, 0.8, 0.15, 0.0, "binomial") == 3
    at_rho = samples_for_budget(0.005, 0.8, 0.15, 0.1, "beta-binomial")
    assert at_rho is not None and at_rho > 3
    assert samples_for_budget(0.005, 0.8, 0.5, 0.9, "beta-binomial") is None
    with pytest.raises(ConfigError, match="budget"):
        samples_for_budget(0.0, 0.8, 0.15, 0.0, "binomial")


def test_rho_interval_covers_the_sim_declared_correlation() -> None:
    # 14 seeded qualification runs per declared correlation, 200 items x 10 samples each
    # (bench/qualify.py runs 100 of 200 x 20 and records the coverage in bench/README.md).
    from jurat.qualify import measure

    covered = reps = 0
    for correlation in (0.0, 0.1, 0.3):
        for r in range(14):
            samples = repetition(200, correlation, seed=5000 + r, samples=10)
            gold = {(s.item, s.criterion): "yes" if int(s.item[16:], 16) % 2 == 0 else "no"
                    for s in samples}
            f = measure("S", "criterion", samples, gold, campaign_samples=5, quorum=0.8,
                        budget=0.005)
            assert f.rho.low is not None and f.rho.high is not None
            covered += f.rho.low <= correlation <= f.rho.high
            reps += 1
    assert covered / reps >= 0.85
