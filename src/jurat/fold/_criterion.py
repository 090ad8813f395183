"""Binary criteria: N-sample majority, the stability gate and the rollout (seed 001 §1-2)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from fractions import Fraction
from typing import cast, get_args

from jurat.errors import FoldInputError
from jurat.models import Frozen, Rollout, StabilityGate, Verdict

_LABELS: tuple[Verdict, ...] = get_args(Verdict)
_GATES: tuple[StabilityGate, ...] = get_args(StabilityGate)


class CriterionResult(Frozen):
    """One binary criterion folded over its N samples."""

    verdict: Verdict
    """The majority label; a plurality tie gives ``unsure``."""
    agreement: float
    """Top count / N, errored samples included in N."""
    top: int
    """The top count."""
    samples: int
    """N: every sample, errored ones included."""
    tally: dict[str, int]
    """Counts of yes, no and unsure (errored samples count as unsure)."""
    blocker: bool = False
    """Whether the criterion is a blocker."""


def check_quorum(quorum: float, field: str = "quorum") -> Fraction:
    """A quorum is a share in (0, 1], returned exactly as written (0.8 is 4/5)."""
    if isinstance(quorum, bool) or not isinstance(quorum, int | float):
        raise FoldInputError(field, f"must be a number in (0, 1], got {quorum!r}")
    if not 0 < quorum <= 1:
        raise FoldInputError(field, f"must be in (0, 1], got {quorum!r}")
    return _decimal(quorum)


@functools.lru_cache(maxsize=1024, typed=True)
def _decimal(share: float) -> Fraction:
    # Cached: a verification asks the same quorum and tier shares for every criterion.
    return Fraction(str(share))


def meets(top: int, n: int, share: float | Fraction) -> bool:
    """top/n >= share, decided on exact fractions so 2/3 meets 2/3 and 4/5 meets 0.8."""
    exact = share if isinstance(share, Fraction) else _decimal(share)
    if n > 0:
        # Cross-multiplied on the integers: the same comparison, without making a Fraction.
        return top * exact.denominator >= exact.numerator * n
    return Fraction(top, n) >= exact  # n <= 0: Fraction's own answer (or its error)


def plurality(votes: Sequence[str | None], labels: Sequence[str], *, errored: str,
              what: str) -> tuple[dict[str, int], int, str | None]:
    """Tally N samples over ``labels`` (an errored sample, None, counts as ``errored`` and
    stays in N): (tally, top count, the one label with it, or None on a tie)."""
    if len(votes) == 0:
        raise FoldInputError("votes", f"empty vote list; {what} needs at least one sample")
    tally = dict.fromkeys(labels, 0)
    for i, vote in enumerate(votes):
        if vote is None:
            tally[errored] += 1
        elif vote in tally:
            tally[vote] += 1
        else:
            raise FoldInputError(
                f"votes[{i}]", f"unknown label {vote!r}; use {', '.join(labels)}, or None for "
                "an error"
            )
    top = max(tally.values())
    leaders = [label for label in labels if tally[label] == top]
    return tally, top, leaders[0] if len(leaders) == 1 else None


def fold_criterion(votes: Sequence[str | None], *, blocker: bool = False) -> CriterionResult:
    """Fold N samples of one criterion: errored (None) samples vote unsure and stay in N."""
    tally, top, leader = plurality(votes, _LABELS, errored="unsure", what="a criterion")
    n = len(votes)
    verdict = cast(Verdict, leader or "unsure")
    return CriterionResult(
        verdict=verdict, agreement=top / n, top=top, samples=n, tally=tally, blocker=blocker
    )


def stability_gate(result: CriterionResult, *, quorum: float) -> StabilityGate:
    """Seed 001 §2: a blocker "no" blocks only when its agreement clears the quorum."""
    exact = check_quorum(quorum)
    if result.samples == 1:
        return _legacy_gate(result)
    if result.blocker and result.verdict == "no":
        return "block" if meets(result.top, result.samples, exact) else "warn"
    return "pass" if result.verdict == "yes" else "warn"


def _legacy_gate(result: CriterionResult) -> StabilityGate:
    # One draw carries no stability evidence, so the N = 1 rule is the legacy one.
    if result.blocker and result.verdict == "no":
        return "block"
    return "pass" if result.verdict == "yes" else "warn"


def rollout(gates: Sequence[str]) -> Rollout:
    """Any block → BLOCK, else any warn → WARN, else SHIP. Nothing evaluated is not a SHIP."""
    if len(gates) == 0:
        raise FoldInputError("gates", "empty gate list; nothing was evaluated")
    for i, gate in enumerate(gates):
        if gate not in _GATES:
            raise FoldInputError(f"gates[{i}]", f"unknown gate {gate!r}; use pass, warn, block")
    if "block" in gates:
        return "BLOCK"
    if "warn" in gates:
        return "WARN"
    return "SHIP"
