"""What the report must show, computed from the receipts and docs/report.md alone.

Independent of the code under test: no ``jurat.fold`` and no ``jurat.report``, so a bug in
either cannot make its own expectation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

#: docs/report.md, "Order of the rows": worst first.
SEVERITY = {
    "reject": 0, "BLOCK": 0, "different": 0,
    "escalate": 1, "WARN": 1, "undecided": 1, "missing": 1,
    "accept": 2, "SHIP": 2, "equivalent": 2,
}


def documented_order(rows: Sequence[Mapping[str, str]]) -> list[tuple[str, str, str]]:
    """(campaign, artifact, review) of ``rows`` in the documented order. Each row has the
    decision row's ``data-campaign``, ``data-artifact``, ``data-review``,
    ``data-superseded-by`` and ``data-outcome``."""
    current = {
        (r["data-campaign"], r["data-artifact"]): SEVERITY[r["data-outcome"]]
        for r in rows
        if not r["data-superseded-by"]
    }
    ordered = sorted(rows, key=lambda r: (
        r["data-campaign"],
        current[(r["data-campaign"], r["data-artifact"])],
        r["data-artifact"],
        -int(r["data-review"] or 0),
    ))
    return [(r["data-campaign"], r["data-artifact"], r["data-review"]) for r in ordered]


def rubric_label(scores: Mapping[str, int], rubric: Mapping[str, Any]) -> str:
    """accept when Q = Σ w (s − 1)/4 reaches the threshold (exactly) and no criterion is below
    its minimum (docs/design.md, "Fold rules", rubric), else reject."""
    q = Fraction(0)
    for c in rubric["criteria"]:
        s = scores[c["id"]]
        if c.get("minimum") is not None and s < c["minimum"]:
            return "reject"
        q += Fraction(str(c["weight"])) * Fraction(s - 1, 4)
    return "accept" if q >= Fraction(str(rubric["threshold"])) else "reject"


def said(kind: str, vote: Mapping[str, Any], policy: Mapping[str, Any]) -> str:
    """What one sample said, as docs/report.md defines the per-sample label."""
    if vote.get("error") is not None or vote.get("answer") is None:
        return f"error: {vote.get('error') or 'missing answer'}"
    answer = vote["answer"]
    if kind == "rubric":
        return rubric_label(answer["scores"], policy["rubric"])
    if kind == "pairwise":
        pref = answer["preference"]
        if vote.get("order") == "BA" and pref in ("A", "B"):
            return "B" if pref == "A" else "A"
        return str(pref)
    if kind == "criteria":
        return str(answer["verdict"])
    return str(answer["decision"])


def overlap(a: Any, b: Any) -> bool:
    """Whether two bounding boxes ({x, y, width, height}, as Playwright gives them) share
    any area."""
    return bool(
        a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]
    )


def inside(inner: Any, outer: Any, slack: float = 0.5) -> bool:
    """Whether ``inner`` lies within ``outer``."""
    return bool(
        inner["x"] >= outer["x"] - slack and inner["y"] >= outer["y"] - slack
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack
    )
