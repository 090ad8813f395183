"""Answer equivalence: the decision table and the multi-vote wrapper (seed 002 §3)."""

from __future__ import annotations

from collections.abc import Sequence

from jurat.errors import FoldInputError

_TABLE: dict[str, bool | None] = {
    "EQUIVALENT": True,
    "DIFFERENT": False,
    "ABSTAIN": None,
    "PARSE_ERROR": None,
}


def equivalence_outcome(decision: str, *, abstain_as_neither: bool = True) -> bool | None:
    """One judge decision → true, false or null; ABSTAIN → false when not abstain_as_neither."""
    if decision not in _TABLE:
        raise FoldInputError("decision", f"unknown decision {decision!r}; use {list(_TABLE)}")
    if decision == "ABSTAIN" and not abstain_as_neither:
        return False
    return _TABLE[decision]


def equivalence_verdict(
    decisions: Sequence[str], *, min_agreement: int, abstain_as_neither: bool = True
) -> bool | None:
    """A multi-vote needs ``min_agreement`` identical outcomes, else null (never a guess)."""
    if len(decisions) == 0:
        raise FoldInputError("decisions", "empty vote list")
    if isinstance(min_agreement, bool) or not isinstance(min_agreement, int):
        raise FoldInputError("min_agreement", f"must be an integer, got {min_agreement!r}")
    if not 1 <= min_agreement <= len(decisions):
        raise FoldInputError(
            "min_agreement", f"must be in 1..{len(decisions)} (the vote count), got {min_agreement}"
        )
    outcomes = []
    for i, d in enumerate(decisions):
        try:
            outcomes.append(equivalence_outcome(d, abstain_as_neither=abstain_as_neither))
        except FoldInputError as exc:
            raise FoldInputError(f"decisions[{i}]", str(exc).split(": ", 1)[1]) from exc
    yes, no = outcomes.count(True), outcomes.count(False)
    if yes >= min_agreement and yes > no:
        return True
    if no >= min_agreement and no > yes:
        return False
    return None
