"""The N that meets a declared false-block budget (seed 001: 0.005) under measured rho."""

from __future__ import annotations

from jurat.errors import ConfigError
from jurat.qualify._design import Model, false_block_threshold, tail

__all__ = ["MAX_SAMPLES", "samples_for_budget"]

#: The largest N searched: beyond it a budget is reported as not met by any N.
MAX_SAMPLES = 101


def samples_for_budget(budget: float, quorum: float, error: float, rho: float, model: Model,
                       *, most: int = MAX_SAMPLES) -> int | None:
    """The least N (1..``most``) whose false-block rate is at most ``budget``, or None.

    Under correlation the rate need not fall with N (a common cause makes all N wrong at
    once), so a budget some N cannot meet is reported as None, never as the largest N.
    """
    if not 0 < budget < 1:
        raise ConfigError(f"budget must be in (0, 1), got {budget!r}; seed 001 uses 0.005")
    for n in range(1, most + 1):
        if tail(n, false_block_threshold(n, quorum), error, rho, model) <= budget:
            return n
    return None
