"""``jurat report``: one self-contained HTML file over a set of receipts.

The page has inline CSS and inline SVG only: no JavaScript, fonts or URLs, and a
Content-Security-Policy that forbids fetching anything, so it opens offline and an escaping
slip could not load a script. Every text from a receipt passes through ``html.escape``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from jurat.fold import MEASURES, overall_rate
from jurat.models import MonitorBounds, tone_of
from jurat.report._bias import bias_section
from jurat.report._charts import agreement_section, convergence_section, order_section
from jurat.report._codes_html import CODES_CSS, adjudication_markup
from jurat.report._details import details
from jurat.report._operator import OperatorRecord, operator_record, operator_section
from jurat.report._report_data import ArtifactView, ReportReceipt, views_of
from jurat.report._report_html import CSS, cell, interval, review_text, table
from jurat.report._report_stats import CostRow, cost_rows
from jurat.report._rows import SEVERITY, current, display_order, tag_versions
from jurat.report._sources import load_receipt_files, receipts_from_ledger

__all__ = [
    "OperatorRecord",
    "ReportReceipt",
    "load_receipt_files",
    "operator_record",
    "receipts_from_ledger",
    "render_report",
]

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def render_report(
    receipts: Sequence[ReportReceipt],
    *,
    title: str = "jurat report",
    cost: Mapping[str, Any] | None = None,
    monitor: MonitorBounds | None = None,
    operator: OperatorRecord | None = None,
) -> str:
    """The whole report as one HTML document. Deterministic: the same input, the same bytes.

    ``monitor``: the bias monitor's bounds (a campaign's ``[monitor]``); default, its
    defaults. ``operator``: the operator section's rows (``operator_record``), shown after
    the decisions; never pass it for a page that may be shared (report/_operator.py)."""
    views = tag_versions(views_of(receipts))
    rows = display_order(views)
    latest = current(rows)
    # Every version listed was paid for, so cost reads them all; the charts read the
    # current review of each artifact (_charts).
    costs = cost_rows(views, cost)
    body = [
        f"<header><h1>{escape(title)}</h1>{_summary(views)}</header>",
        _decisions(rows),
        "" if operator is None else operator_section(operator, rows),
        agreement_section(latest),
        convergence_section(latest),
        order_section(latest),
        bias_section(latest, monitor),
        _cost_section(costs),
        _verify_section(rows),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{CSS}{CODES_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def _summary(views: Sequence[ArtifactView]) -> str:
    if not views:
        return '<p class="summary">No receipts.</p>'
    latest = current(views)
    outcomes: dict[str, int] = {}
    for v in latest:
        outcomes[v.outcome] = outcomes.get(v.outcome, 0) + 1
    # Worst first, as the rows are ordered (_rows).
    ranked = sorted(outcomes.items(), key=lambda o: (SEVERITY[tone_of(o[0])], o[0]))
    counts = " · ".join(f"{n} {escape(o)}" for o, n in ranked)
    campaigns = ", ".join(sorted({f"{v.campaign_id} ({v.kind})" for v in views}))
    levels = ", ".join(sorted({v.fidelity for v in views}))
    superseded = len(views) - len(latest)
    earlier = (f" and {superseded} superseded review{'s' if superseded != 1 else ''}"
               if superseded else "")
    return (
        f'<p class="summary">{len(latest)} artifacts: {counts}{earlier}. '
        f"Campaigns: {escape(campaigns)}. Replay fidelity: {escape(levels)}.</p>"
        + _headlines(latest)
        + '<p class="note">RF-1: the decision is replayable from the recorded votes; the votes '
        "themselves are not reproducible from scratch. RF-2: the votes are reproducible too "
        "(deterministic checks only, or a recorded replay judge). Agreement is the share of "
        "votes that agree (evidence of stability, not a calibrated confidence); the interval "
        "under it is "
        "a Wilson 95% interval, wide for few votes. This page decodes the receipts, it does "
        "not check their signatures: run the verify commands at the end.</p>"
    )


def _headlines(latest: Sequence[ArtifactView]) -> str:
    """Each campaign's headline rate over its current verdicts, as `jurat run` prints it
    (fold/_rates.py), labelled for what it measures."""
    by_campaign: dict[tuple[str, str], list[str]] = {}
    for v in latest:
        by_campaign.setdefault((v.campaign_id, v.kind), []).append(v.outcome)
    items = "".join(
        f'<li data-campaign="{escape(campaign)}">{escape(campaign)}: '
        f"{escape(overall_rate(kind, outcomes).text())}</li>"
        for (campaign, kind), outcomes in sorted(by_campaign.items()))
    return (f'<p class="summary">Headline, {escape(MEASURES)}; Wilson 95% intervals:</p>'
            f'<ul id="headline">{items}</ul>')


_HEAD = [
    "artifact",
    "kind",
    "outcome",
    "Q / pass",
    "agreement (votes)",
    "valid / samples",
    "gate failures (root cause first)",
    "review",
    "fidelity",
]
_ORDER_NOTE = (
    "Rows by campaign; then worst outcome first (reject, BLOCK, different; then escalate, "
    "WARN, undecided; then accept, SHIP, equivalent); then artifact id. An artifact's "
    "superseded reviews follow its current one, newest first."
)


def _samples(v: ArtifactView) -> str:
    if not v.votes and v.vetoed:
        return "not asked"
    return f"{v.valid_samples} / {v.samples}"


def _decision_row(v: ArtifactView) -> str:
    state = "superseded" if v.superseded else "current"
    attrs = (
        f'class="decision tone-{v.tone} {state}" id="decision-{v.index}" '
        f'data-artifact="{escape(v.artifact_id)}" data-outcome="{escape(v.outcome)}" '
        f'data-campaign="{escape(v.campaign_id)}" data-review="{v.review_version}" '
        f'data-superseded-by="{v.superseded_by or ""}" '
        f'data-vetoed-by="{escape(" ".join(v.vetoed_by))}"'
        + ("" if v.ledger_seq is None else f' data-ledger-seq="{v.ledger_seq}"')
    )
    return (
        f"<tr {attrs}>"
        + cell(f'<a href="#votes-{v.index}">{escape(v.artifact_id)}</a>', "artifact")
        + cell(escape(v.kind), "kind")
        + cell(f'<span class="badge">{escape(v.outcome)}</span>'
               + adjudication_markup(v.adjudication), "outcome")
        + cell(escape(v.score), "score")
        + cell(escape(v.agreement_text) + interval(v.agreement_text), "agreement")
        + cell(_samples(v), "samples")
        + cell(escape(v.gates_text) or "none", "gates")
        + cell(review_text(v), "review")
        + cell(escape(v.fidelity), "fidelity")
        + "</tr>"
    )


def _decisions(views: Sequence[ArtifactView]) -> str:
    rows = []
    campaign: str | None = None
    for v in views:
        if v.campaign_id != campaign:
            campaign = v.campaign_id
            rows.append(
                f'<tr class="campaign"><th colspan="{len(_HEAD)}" scope="rowgroup">campaign '
                f"{escape(v.campaign_id)} ({escape(v.kind)})</th></tr>"
            )
        rows.append(_decision_row(v))
        rows.append(f'<tr class="votes-row"><td colspan="{len(_HEAD)}">{details(v)}</td></tr>')
    if not views:
        rows.append(f'<tr><td colspan="{len(_HEAD)}">No receipts.</td></tr>')
    return (
        '<section id="decisions-section"><h2>Decisions</h2>'
        f'<p class="note">{_ORDER_NOTE}</p>'
        + table("decisions", _HEAD, rows)
        + "</section>"
    )


def _num(value: int | None) -> str:
    return "not recorded" if value is None else f"{value:,}"


def _cost_section(rows: Sequence[CostRow]) -> str:
    body = []
    for row in rows:
        c = row.cost
        money = "unknown" if c is None or c.usd is None else f"${c.usd:,.4f}"
        body.append(
            f'<tr class="phase-{row.phase}">'
            + cell(row.phase)
            + cell(_num(c.calls if c else None), "num")
            + cell(_num(c.attempts if c else None), "num")
            + cell(_num(c.input_tokens if c else None), "num")
            + cell(_num(c.output_tokens if c else None), "num")
            + cell(money, "num")
            + cell(escape(row.source))
            + "</tr>"
        )
    head = ["phase", "calls", "attempts", "tokens in", "tokens out", "USD", "source"]
    return (
        '<section id="cost-section"><h2>Cost per phase</h2>'
        '<p class="note">Calls are recorded samples, attempts include transport retries. Only '
        "the judge phase multiplies with the number of samples N. USD is unknown when a judge "
        "has no pinned price.</p>" + table("cost", head, body) + "</section>"
    )


def _verify_section(views: Sequence[ArtifactView]) -> str:
    body = [
        f'<tr data-artifact="{escape(v.artifact_id)}" data-review="{v.review_version}">'
        + cell(escape(v.artifact_id))
        + cell(f"v{v.review_version}")
        + cell(f'<code class="verify">{escape(v.verify_command)}</code>')
        + "</tr>"
        for v in views
    ]
    notes = []
    if any(v.verify_command.startswith("jurat replay") for v in views):
        notes.append(
            '<p class="note">A superseded review has no file of its own (<code>jurat run</code> '
            "writes the current review over it); <code>jurat replay</code> verifies it, with "
            "every other receipt in the ledger.</p>"
        )
    if any(not v.paths_known for v in views):
        notes.append(
            '<p class="note">Where a path was not given, replace <code>&lt;out&gt;</code> with '
            "the --out directory of <code>jurat run</code>, <code>&lt;ledger&gt;</code> with its "
            "ledger and <code>&lt;pub&gt;</code> with the public key (<code>jurat.pub</code> "
            "from <code>jurat keygen</code>).</p>"
        )
    return (
        '<section id="verify-section"><h2>Verify</h2>'
        '<p class="note">Each command checks the signature offline and re-derives the '
        "decision from the signed votes.</p>"
        + table("verify", ["artifact", "review", "command"], body)
        + "".join(notes)
        + "</section>"
    )
