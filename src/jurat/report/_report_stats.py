"""Aggregates across receipts for the report: convergence, order reversal, cost per phase.

Convergence is drawn one line per judge, not per (artifact, judge): a panel of three over
eight artifacts was 24 overlapping lines in one chart. A judge's line is the mean, over the
artifacts it sampled, of the agreement so far after k samples (``mean_agreement``).

Order reversal and cost are computed by their owners (``jurat.judges.order_reversal``,
``jurat.judges.summarise``); this module groups the receipts' rows for them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pydantic

from jurat.errors import ValidationError
from jurat.judges import (
    PHASES,
    OrderedAnswer,
    OrderReversal,
    PhaseCost,
    add_phases,
    order_reversal,
    summarise,
)
from jurat.models import Frozen
from jurat.models._invalid import invalid
from jurat.report._report_data import ArtifactView


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


def mean_agreement(runs: Sequence[Sequence[str | None]]) -> tuple[float, ...]:
    """The mean over ``runs`` of ``running_agreement`` after each k, over the runs that have at
    least k samples (a run with fewer recorded samples leaves the later means)."""
    curves = [running_agreement(labels) for labels in runs if labels]
    longest = max((len(c) for c in curves), default=0)
    out = []
    for k in range(longest):
        reached = [c[k] for c in curves if len(c) > k]
        out.append(sum(reached) / len(reached))
    return tuple(out)


class OrderRow(Frozen):
    """Order-reversal consistency of one pairwise judge over all artifacts."""

    judge: str
    """Judge id."""
    reversal: OrderReversal
    """Its consistency and position bias (``jurat.judges.order_reversal``)."""


def order_rows(views: Sequence[ArtifactView]) -> list[OrderRow]:
    """Per judge that voted on a pairwise receipt: its samples grouped by artifact."""
    by_judge: dict[str, list[list[OrderedAnswer]]] = {}
    for view in views:
        if view.kind != "pairwise":
            continue
        mine: dict[str, list[OrderedAnswer]] = {}
        for v in view.votes:
            answer = OrderedAnswer(order=v.order, canonical=v.label, presented=v.presented)
            mine.setdefault(v.judge, []).append(answer)
        for judge, answers in mine.items():
            by_judge.setdefault(judge, []).append(answers)
    return [
        OrderRow(judge=judge, reversal=order_reversal(artifacts))
        for judge, artifacts in sorted(by_judge.items())
    ]


class CostRow(Frozen):
    """One row of the report's cost table."""

    phase: str
    """trigger, execution, judge, or total."""
    cost: PhaseCost | None
    """The phase's cost; None when it was not recorded."""
    source: str
    """Where the numbers come from."""


def _given(cost: Mapping[str, Any] | None) -> dict[str, PhaseCost]:
    """The caller's phases as the cost owner's rows; attempts default to the calls."""
    given: dict[str, PhaseCost] = {}
    for phase, value in (cost or {}).items():
        if phase not in PHASES:
            raise ValidationError(f"cost.{phase}: unknown phase; use one of {list(PHASES)}")
        if isinstance(value, PhaseCost):
            given[phase] = value.model_copy(update={"phase": phase})
            continue
        fields = dict(value) if isinstance(value, Mapping) else value
        if isinstance(fields, dict):
            fields = {"attempts": fields.get("calls", 0), **fields, "phase": phase}
        try:
            given[phase] = PhaseCost.model_validate(fields)
        except pydantic.ValidationError as exc:
            raise invalid(exc, PhaseCost, fields, within=("cost", phase)) from exc
    return given


def cost_rows(views: Sequence[ArtifactView], cost: Mapping[str, Any] | None) -> list[CostRow]:
    """Cost per phase from ``cost``; the judge phase, when not given, from the votes' usage.

    Only the judge phase multiplies with N (seed 001 §5), which is why it is the one phase the
    receipts themselves can account for.
    """
    phases = _given(cost)
    sources = dict.fromkeys(phases, "given")
    if "judge" not in phases:
        phases["judge"] = add_phases("judge", (view.judge_cost for view in views))
        sources["judge"] = f"summed over {sum(len(view.votes) for view in views)} recorded votes"
    summary = summarise(phases.values())
    rows = [
        CostRow(phase=name, cost=summary.phase(name), source=sources.get(name, "not recorded"))
        for name in PHASES
    ]
    recorded = " + ".join(p.phase for p in summary.phases) or "nothing recorded"
    rows.append(CostRow(phase="total", cost=summary.total, source=recorded))
    return rows
