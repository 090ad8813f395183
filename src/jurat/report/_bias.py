"""The report's bias monitor: the live monitor's readings and alarms, from the receipts.

The statistics and the alarms are ``jurat.judges``' (judges/_bias.py), as ``jurat run``
prints them; this module only groups the receipts' vote rows per judge. Receipts record
digests, not the artifacts' texts, so the verbosity reading (a correlation with answer
length) is ``jurat run``'s alone; the report says so rather than leave it out silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from jurat.judges import BiasReading, equivalent_share
from jurat.models import MonitorBounds
from jurat.report._report_data import ArtifactView
from jurat.report._report_html import cell, table
from jurat.report._report_stats import order_rows

__all__ = ["bias_readings", "bias_section"]


def bias_readings(views: Sequence[ArtifactView]) -> list[BiasReading]:
    """Per judge (sorted by id): always-equivalent counts over equivalence receipts, position
    and order consistency over pairwise ones (``order_rows``)."""
    decisions: dict[str, list[str | None]] = {}
    for view in views:
        if view.kind != "equivalence":
            continue
        for v in view.votes:
            # An errored sample is no answer: it is not counted as either word.
            decisions.setdefault(v.judge, []).append(v.label if v.error is None else None)
    orders = {row.judge: row.reversal for row in order_rows(views)}
    out = []
    for judge in sorted(set(decisions) | set(orders)):
        equivalent, answers = equivalent_share(decisions.get(judge, ()))
        reading = BiasReading(judge=judge, equivalent=equivalent, equivalence_answers=answers)
        if judge in orders:
            reading = reading.model_copy(update={"order": orders[judge]})
        out.append(reading)
    return out


def _frac(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "—"


def bias_section(views: Sequence[ArtifactView], bounds: MonitorBounds | None = None) -> str:
    """Readings per judge and the alarms against ``bounds`` (default: ``[monitor]``'s
    defaults, since a receipt does not carry the campaign's table)."""
    bounds = bounds or MonitorBounds()
    readings = bias_readings(views)
    head = '<section id="bias"><h2>Bias monitor</h2>'
    if not readings:
        return head + "<p>No equivalence or pairwise receipts.</p></section>"
    rows = [
        f'<tr data-judge="{escape(r.judge)}">'
        + cell(escape(r.judge))
        + cell(_frac(r.equivalent, r.equivalence_answers), "num")
        + cell(_frac(r.order.first_position, r.order.ab_answers), "num")
        + cell(_frac(r.order.consistent, r.order.items), "num")
        + "</tr>"
        for r in readings
    ]
    alarms = [alarm for r in readings for alarm in r.alarms(bounds)]
    listed = "".join(f'<li class="bad">{escape(a.text)}</li>' for a in alarms)
    verdict = (f'<ul id="bias-alarms">{listed}</ul>' if alarms
               else f'<p id="bias-alarms">No alarm (readings on fewer than {bounds.min_votes} '
                    "answers raise none).</p>")
    return (
        head
        + '<p class="note">Per judge, never pooled: a judge\'s samples are not independent '
        "witnesses. An alarm changes no decision. Bounds: "
        + escape(", ".join(f"{k} {v}" for k, v in bounds.model_dump().items()))
        + ". Verbosity (a correlation with answer length) is in <code>jurat run</code>'s "
        "summary: receipts hold the artifacts' digests, not their texts.</p>"
        + table("bias-monitor", ["judge", "EQUIVALENT answers", "picked the first-presented",
                                 "artifacts: same majority under AB and BA"], rows)
        + verdict
        + "</section>"
    )
