"""Pairwise presentation order: the seeded draw, order-reversal consistency and position bias.

Seed 000: "Randomize candidate presentation order and map results back to canonical A/B
identifiers ... Monitor order reversal consistency." The HTML report and ``jurat selftest``
both measure a judge with ``order_reversal``; neither counts on its own.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence

from jurat.fold import canonical_preference
from jurat.models import Frozen, Vote

__all__ = ["OrderReversal", "OrderedAnswer", "order_reversal", "presentation_order"]


def presentation_order(seed: int, artifact_sha256: str, sample: int) -> str:
    """The presentation order of one pairwise sample, ``AB`` or ``BA``.

    ``random.Random`` seeded with a string hashes it with SHA-512, so the draw is the same on
    every machine and Python process for the same (judge seed, artifact, k).
    """
    rng = random.Random(f"jurat.order/v1:{seed}:{artifact_sha256}:{sample}")
    return "AB" if rng.random() < 0.5 else "BA"


class OrderedAnswer(Frozen):
    """One pairwise sample as order reversal reads it."""

    order: str | None
    """Presentation order, ``AB`` or ``BA``."""
    canonical: str | None
    """The canonical preference (A, B or tie); None for an abstention or an error."""
    presented: str | None
    """The preference as presented, before the order was restored."""

    @classmethod
    def of(cls, vote: Vote) -> OrderedAnswer:
        """Read a recorded vote, through the fold's own mapping back to canonical A/B."""
        canonical = canonical_preference(vote)
        presented = vote.answer.get("preference") if vote.answer else None
        return cls(
            order=vote.order,
            canonical=None if canonical == "abstain" else canonical,
            presented=presented if isinstance(presented, str) else None,
        )


class OrderReversal(Frozen):
    """How one judge's canonical preference survives swapping the presentation order."""

    items: int = 0
    """Artifacts the judge answered (with a preference) under both AB and BA."""
    consistent: int = 0
    """Of those, artifacts whose plurality canonical preference is the same under both."""
    pairs: int = 0
    """(AB sample, BA sample) pairs of one artifact with a preference on both sides."""
    agreeing_pairs: int = 0
    """Of those, pairs with the same canonical preference."""
    first_position: int = 0
    """A/B answers that picked the candidate presented first."""
    ab_answers: int = 0
    """A/B answers (ties, abstentions and errors excluded)."""

    @property
    def consistency(self) -> float | None:
        """Share of sample pairs that agree; None without a pair."""
        return self.agreeing_pairs / self.pairs if self.pairs else None

    @property
    def first_position_rate(self) -> float | None:
        """Share of A/B answers for the first-shown candidate (0.5 without position bias)."""
        return self.first_position / self.ab_answers if self.ab_answers else None


def _plurality(labels: Counter[str]) -> str | None:
    ranked = labels.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None  # a tie has no plurality, so it never counts as consistent
    return ranked[0][0]


def order_reversal(artifacts: Iterable[Sequence[OrderedAnswer]]) -> OrderReversal:
    """One judge's order-reversal consistency and position bias, over its samples per artifact.

    Pairs are every AB sample against every BA sample of the same artifact; a judge's
    samples are not independent witnesses (seed 000), so this is reported per judge, never
    pooled into a panel figure.
    """
    counts: Counter[str] = Counter()
    for answers in artifacts:
        sides: dict[str, Counter[str]] = {"AB": Counter(), "BA": Counter()}
        for answer in answers:
            if answer.presented in ("A", "B"):
                counts["ab_answers"] += 1
                counts["first_position"] += answer.presented == "A"
            if answer.canonical is not None and answer.order in sides:
                sides[answer.order][answer.canonical] += 1
        ab, ba = sides["AB"], sides["BA"]
        if not ab or not ba:
            continue
        counts["items"] += 1
        top = _plurality(ab)
        counts["consistent"] += top is not None and top == _plurality(ba)
        counts["pairs"] += ab.total() * ba.total()
        counts["agreeing_pairs"] += sum(n * ba[label] for label, n in ab.items())
    return OrderReversal(**counts)
