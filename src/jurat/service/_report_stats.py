"""Aggregates across receipts for the report: convergence, order reversal, cost per phase."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pydantic
from pydantic import Field

from jurat.errors import ValidationError
from jurat.models import Frozen
from jurat.service._report_data import ArtifactView

PHASES = ("trigger", "execution", "judge")


def running_agreement(labels: Sequence[str | None]) -> tuple[float, ...]:
    """Agreement so far after each sample: the top label's count over k, unlabelled samples
    (errors, abstentions) staying in k so that failures weaken agreement, never raise it."""
    counts: Counter[str] = Counter()
    out = []
    for k, label in enumerate(labels, start=1):
        if label is not None:
            counts[label] += 1
        out.append(max(counts.values(), default=0) / k)
    return tuple(out)


class OrderRow(Frozen):
    """Order-reversal consistency of one pairwise judge over all artifacts."""

    judge: str
    """Judge id."""
    items: int
    """Artifacts where the judge answered under both AB and BA."""
    consistent: int
    """Of those, artifacts whose majority canonical preference is the same under both orders."""
    pairs: int
    """(AB sample, BA sample) pairs with a label on both sides."""
    agreeing_pairs: int
    """Of those, pairs with the same canonical preference."""
    first_position: int
    """A/B answers that picked the candidate presented first."""
    ab_answers: int
    """A/B answers (ties, abstentions and errors excluded)."""


def _plurality(labels: Counter[str]) -> str | None:
    ranked = labels.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def order_reversal(views: Sequence[ArtifactView]) -> list[OrderRow]:
    """Per judge: does the canonical preference survive swapping the presentation order?"""
    acc: dict[str, Counter[str]] = {}
    for view in views:
        if view.kind != "pairwise":
            continue
        sides: dict[str, dict[str, Counter[str]]] = {}
        for v in view.votes:
            row = acc.setdefault(v.judge, Counter())
            if v.presented in ("A", "B"):
                row["ab_answers"] += 1
                row["first_position"] += v.presented == "A"
            if v.label is not None and v.order in ("AB", "BA"):
                sides.setdefault(v.judge, {"AB": Counter(), "BA": Counter()})[v.order][v.label] += 1
        for judge, side in sides.items():
            ab, ba = side["AB"], side["BA"]
            if not ab or not ba:
                continue
            row = acc[judge]
            row["items"] += 1
            top = _plurality(ab)
            row["consistent"] += top is not None and top == _plurality(ba)
            row["pairs"] += ab.total() * ba.total()
            row["agreeing_pairs"] += sum(n * ba[label] for label, n in ab.items())
    fields = ("items", "consistent", "pairs", "agreeing_pairs", "first_position", "ab_answers")
    return [OrderRow(judge=j, **{f: row[f] for f in fields}) for j, row in sorted(acc.items())]


class PhaseInput(Frozen):
    """What a caller reports for one phase in the ``cost`` argument."""

    calls: int = Field(ge=0)
    """Calls made (transport attempts included)."""
    tokens_in: int = Field(0, ge=0)
    """Input tokens."""
    tokens_out: int = Field(0, ge=0)
    """Output tokens."""
    usd: float | None = Field(None, ge=0)
    """Spend in USD; None when unknown."""


class PhaseCost(Frozen):
    """One row of the cost table."""

    phase: str
    """trigger, execution, judge, or total."""
    calls: int | None
    """Calls; None when the phase was not recorded."""
    tokens_in: int | None
    """Input tokens; None when not recorded."""
    tokens_out: int | None
    """Output tokens; None when not recorded."""
    usd: float | None
    """USD; None when unknown."""
    source: str
    """Where the numbers come from."""


def phase_costs(views: Sequence[ArtifactView], cost: Mapping[str, Any] | None) -> list[PhaseCost]:
    """Cost per phase from ``cost``; the judge phase, when not given, from the votes' usage.

    Only the judge phase multiplies with N (seed 001 §5), which is why it is the one phase the
    receipts themselves can account for.
    """
    given: dict[str, PhaseInput] = {}
    for phase, value in (cost or {}).items():
        if phase not in PHASES:
            raise ValidationError(f"cost.{phase}: unknown phase; use one of {list(PHASES)}")
        try:
            given[phase] = PhaseInput.model_validate(value)
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValidationError(f"cost.{phase}.{where}: {first['msg']}") from exc
    rows = []
    for phase in PHASES:
        if phase in given:
            g = given[phase]
            rows.append(PhaseCost(phase=phase, **g.model_dump(), source="given"))
        elif phase == "judge":
            votes = [v for view in views for v in view.votes]
            spends = [view.judge_usd for view in views]
            rows.append(
                PhaseCost(
                    phase=phase,
                    calls=sum(v.attempts for v in votes),
                    tokens_in=sum(v.tokens_in for v in votes),
                    tokens_out=sum(v.tokens_out for v in votes),
                    usd=None if None in spends else sum(s or 0.0 for s in spends),
                    source=f"summed over {len(votes)} recorded votes",
                )
            )
        else:
            rows.append(
                PhaseCost(
                    phase=phase,
                    calls=None,
                    tokens_in=None,
                    tokens_out=None,
                    usd=None,
                    source="not recorded",
                )
            )
    known = [r for r in rows if r.calls is not None]
    rows.append(
        PhaseCost(
            phase="total",
            calls=sum(r.calls or 0 for r in known),
            tokens_in=sum(r.tokens_in or 0 for r in known),
            tokens_out=sum(r.tokens_out or 0 for r in known),
            usd=None if any(r.usd is None for r in known) else sum(r.usd or 0.0 for r in known),
            source=" + ".join(r.phase for r in known) or "nothing recorded",
        )
    )
    return rows
