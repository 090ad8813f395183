"""Drawing a criterion's samples with exact curtailment (``[criteria] curtail = true``).

The plan stays the seed 001 plan (N samples per judge and criterion); what changes is when a
(judge, criterion) stops: after each wave of samples, in sample order, the drawn ones are
checked with ``jurat.fold.settled``, the very rule the fold and a verifier re-check
(docs/receipt-format.md §8.5). A wave is ``fewest_to_settle`` samples, the fewest that could
settle it, so waves cost no call that one-at-a-time drawing would not, in fewer round trips.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from jurat.fold import fewest_to_settle, settled
from jurat.judges._plan import PlannedSample
from jurat.models import Policy, Vote

Key = tuple[str, str, int]

__all__ = ["curtailed_groups", "draw_curtailed"]


def curtailed_groups(
    policy: Policy, plan: Sequence[PlannedSample]
) -> tuple[list[list[PlannedSample]], list[PlannedSample]]:
    """Split the plan into the (judge, criterion) groups drawn with curtailment, each in
    sample order, and the samples drawn all at once (everything when the policy does not
    curtail, and every sample that is not a binary criterion's)."""
    if policy.kind != "criteria" or policy.criteria is None or not policy.criteria.curtail:
        return [], list(plan)
    groups: dict[tuple[str, str], list[PlannedSample]] = {}
    rest: list[PlannedSample] = []
    for planned in plan:
        if planned.kind == "criterion" and planned.item is not None:
            groups.setdefault((planned.judge.id, planned.criterion), []).append(planned)
        else:
            rest.append(planned)
    return [sorted(g, key=lambda p: p.sample) for g in groups.values()], rest


def _verdict(vote: Vote | None) -> str | None:
    # Seed 001 §1: an errored sample (no answer) votes unsure, as the fold reads it.
    if vote is None or vote.error is not None or vote.answer is None:
        return None
    return str(vote.answer.get("verdict"))


async def draw_curtailed(
    group: Sequence[PlannedSample],
    recorded: Callable[[Key], Vote | None],
    draw: Callable[[PlannedSample], Awaitable[None]],
    *,
    quorum: float,
) -> None:
    """Draw one group's samples wave by wave until the drawn ones settle it.

    ``recorded(key)`` is the vote already recorded for a sample (from the ledger, or drawn
    here), ``draw`` draws and records one sample. Recorded samples are never drawn again.
    """
    n = group[0].of
    item = group[0].item
    assert item is not None
    k = 0
    while k < n:
        prefix = [_verdict(recorded(p.key)) for p in group[:k]]
        if k and settled(prefix, n, blocker=item.blocker, quorum=quorum):
            return
        more = fewest_to_settle(prefix, n, blocker=item.blocker, quorum=quorum)
        wave = [p for p in group[k:k + more] if recorded(p.key) is None]
        await asyncio.gather(*(draw(p) for p in wave))
        k += more
