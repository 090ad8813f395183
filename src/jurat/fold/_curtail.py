"""Exact curtailment of a binary criterion (``jurat.curtail/v1``, docs/receipt-format.md §8.8).

Seed 001 §1-2 folds N planned samples of a (judge, criterion) into a verdict and a stability
gate. Once the samples drawn so far settle that pair, whatever the undrawn ones would answer,
drawing them cannot change the decision, so the engine may stop. "Whatever they would answer"
is checked exactly: every tally the undrawn samples could add (yes, no or unsure each; an
error counts as unsure, seed 001 §1) is folded with the same functions the fold uses, and
stopping is allowed only when all of them give one pair (three corner fillings decide it,
see ``_settled``). One of those
tallies is "all unsure", the v1 slot rule for a missing sample, so a curtailed group folds to
the same verdict and gate under either reading of its missing slots.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from jurat.errors import FoldInputError
from jurat.fold._criterion import fold_criterion, stability_gate

CURTAIL_RULE = "jurat.curtail/v1"


def settled(
    drawn: Sequence[str | None], planned: int, *, blocker: bool, quorum: float
) -> bool:
    """Whether no outcome of the ``planned - len(drawn)`` undrawn samples can change the
    (verdict, stability gate) of the criterion: stopping after ``drawn`` is allowed.

    ``drawn`` are the first samples in sample order (None: errored, counted as unsure).
    """
    return _settled(*_tally(drawn, planned), blocker, quorum)


def _tally(drawn: Sequence[str | None], planned: int) -> tuple[int, int, int, int]:
    """(yes, no, unsure, undrawn) of the first samples ``drawn`` of ``planned``."""
    if planned < 1 or len(drawn) > planned:
        raise FoldInputError("samples", f"{len(drawn)} drawn of {planned} planned")
    yes = sum(1 for v in drawn if v == "yes")
    no = sum(1 for v in drawn if v == "no")
    return yes, no, len(drawn) - yes - no, planned - len(drawn)


@functools.lru_cache(maxsize=65536)
def _settled(yes: int, no: int, unsure: int, rest: int, blocker: bool, quorum: float) -> bool:
    # Cached on the tally: the engine asks after every sample, and a panel repeats tallies.
    # The fillings form a simplex whose corners put all ``rest`` samples on one label, and
    # checking the three corners decides all of them: the regions "yes", "no, block" and
    # "no, warn" are each an intersection of half-planes in the final tally (strict top
    # count, quorum), so a region that holds all three corners holds every filling; and if
    # all three corners are "unsure", no filling reaches "yes" (the all-yes corner is the
    # best any filling does for yes) or "no" (likewise). tests/fold/test_curtailment.py
    # checks this against every filling, exhaustively for N <= 12.
    if rest == 0:
        return True
    corner = _outcome(yes + rest, no, unsure, blocker, quorum)
    return corner == _outcome(yes, no + rest, unsure, blocker, quorum) == _outcome(
        yes, no, unsure + rest, blocker, quorum)


def _outcome(yes: int, no: int, unsure: int, blocker: bool, quorum: float) -> tuple[str, str]:
    # The fold's own functions on one ordering of the tally (the fold reads counts only).
    result = fold_criterion(["yes"] * yes + ["no"] * no + [None] * unsure, blocker=blocker)
    return result.verdict, stability_gate(result, quorum=quorum)


def fewest_to_settle(
    drawn: Sequence[str | None], planned: int, *, blocker: bool, quorum: float
) -> int:
    """The fewest further samples after ``drawn`` whose answers could settle the criterion.

    No shorter continuation can settle it, so drawing this many at once (a wave) costs no
    call that drawing one at a time and stopping at the first settled prefix would not.
    """
    return _fewest(*_tally(drawn, planned), blocker, quorum)


@functools.lru_cache(maxsize=65536)
def _fewest(yes: int, no: int, unsure: int, rest: int, blocker: bool, quorum: float) -> int:
    for more in range(1, rest):
        if any(
            _settled(yes + a, no + b, unsure + more - a - b, rest - more, blocker, quorum)
            for a in range(more + 1)
            for b in range(more + 1 - a)
        ):
            return more
    return rest  # drawing everything settles it
