"""Small-sample statistics: false-block probability and Wilson intervals (seed 001)."""

from __future__ import annotations

import math
from fractions import Fraction

from jurat.errors import FoldInputError
from jurat.fold._criterion import check_quorum


def quorum_count(samples: int, quorum: float) -> int:
    """ceil(q * N) computed exactly, so 0.7 * 10 is 7 and not 8."""
    return math.ceil(check_quorum(quorum) * samples)


def false_block_probability(samples: int, quorum: float, error_rate: float) -> float:
    """P(errors >= ceil(q N)) for X ~ Binomial(N, p): a wrong blocker clears the quorum."""
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise FoldInputError("samples", f"must be an integer >= 1, got {samples!r}")
    if not 0 <= error_rate <= 1:
        raise FoldInputError("error_rate", f"must be in [0, 1], got {error_rate!r}")
    from scipy.stats import binom

    k = quorum_count(samples, quorum)
    return float(binom.sf(k - 1, samples, error_rate))


def clean_pass_probability(reliability: float, criteria: int) -> float:
    """P(a truly passing subject survives an any-blocker AND gate) = r ** k (seed 001)."""
    if not 0 <= reliability <= 1:
        raise FoldInputError("reliability", f"must be in [0, 1], got {reliability!r}")
    if criteria < 0:
        raise FoldInputError("criteria", f"must be >= 0, got {criteria}")
    return float(Fraction(str(reliability)) ** criteria)


#: scipy's ``norm.ppf(1 - (1 - c) / 2)`` for the confidences jurat itself uses, bit for bit
#: (tests/fold/test_stats_z.py checks them against scipy): importing scipy.stats costs
#: about 1 s of CPU, which a `jurat run` paid once for its headline rate. The stdlib's
#: NormalDist differs in the last bit, which would change recorded intervals.
_Z = {0.90: 1.6448536269514722, 0.95: 1.959963984540054, 0.99: 2.5758293035489004}


def _z(confidence: float) -> float:
    known = _Z.get(confidence)
    if known is not None:
        return known
    from scipy.stats import norm

    return float(norm.ppf(1 - (1 - confidence) / 2))


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion: agreement is evidence with an interval."""
    if n < 1:
        raise FoldInputError("n", f"must be >= 1, got {n}")
    if not 0 <= successes <= n:
        raise FoldInputError("successes", f"must be in 0..{n}, got {successes}")
    if not 0 < confidence < 1:
        raise FoldInputError("confidence", f"must be in (0, 1), got {confidence}")
    z = _z(confidence)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
