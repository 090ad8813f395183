"""What the progress bar of ``jurat run`` counts beyond ``Progress``: unpriced samples, and
the samples a campaign plans per artifact.

A sample drawn at an unknown price has an unknown cost (judges/_cost.py: a None price is
unknown, never zero), so once one is drawn the bar shows ``spend unknown`` rather than a
sum that silently left it out, as the cost table under the summary does.
"""

from __future__ import annotations

from dataclasses import dataclass

from jurat.models import Policy, Vote
from jurat.runner._job import Progress

__all__ = ["PricedProgress", "planned_per_artifact"]


@dataclass
class PricedProgress(Progress):
    """``Progress`` that also counts the samples whose price is unknown."""

    unpriced: int = 0
    """Samples drawn at an unknown price: while any, the spend so far is unknown."""

    def vote(self, vote: Vote, usd: float | None) -> None:
        self.unpriced += usd is None
        super().vote(vote, usd)


def planned_per_artifact(policy: Policy) -> int | None:
    """Samples the policy plans for one artifact (judges/_plan.py's plan, counted): the most
    a job draws. A vetoed, settled, curtailed or resumed job draws fewer. None for a grounded
    campaign, whose claims differ from artifact to artifact."""
    if policy.grounding is not None:
        return None
    total = 0
    for judge in policy.judges:
        if policy.kind in ("rubric", "pairwise"):
            total += judge.samples
        elif policy.kind == "criteria" and policy.criteria is not None:
            suite = policy.criteria
            total += sum(suite.blocker_samples if item.blocker else suite.samples
                         for item in suite.items)
        else:
            total += policy.equivalence.votes if policy.equivalence else 1
    return total
