"""Judge qualification (``jurat qualify``): repeatability, vote correlation, n_eff.

Seed 001 ("Vote correlation is real and unquantified"): before a judge's N samples are
trusted as N witnesses, measure how often it gives the same answer twice, how correlated
its samples of one item are (rho), what the campaign's N is worth (n_eff), and which
false-block and false-ship rates that implies. docs/qualify.md explains each figure.
"""

from jurat.qualify._design import (
    design_effect,
    effective_n,
    empirical_rate,
    false_block_threshold,
    false_ship_threshold,
    tail,
)
from jurat.qualify._icc import Estimate, icc_binary
from jurat.qualify._measure import KAPPA_TARGET, ImpliedRate, JudgeFigures, Sample, measure
from jurat.qualify._plan import MAX_SAMPLES, samples_for_budget

__all__ = [
    "KAPPA_TARGET",
    "MAX_SAMPLES",
    "Estimate",
    "ImpliedRate",
    "JudgeFigures",
    "Sample",
    "design_effect",
    "effective_n",
    "empirical_rate",
    "false_block_threshold",
    "false_ship_threshold",
    "icc_binary",
    "measure",
    "samples_for_budget",
    "tail",
]
