"""The report's chart sections: agreement, vote convergence, order-reversal consistency.

They read the current review of each artifact only (``_rows.current``): a superseded
receipt is an earlier reading of an artifact that has been judged again, and counting both
would weigh that artifact twice. The agreement histogram also leaves out vetoed decisions:
their agreement decided nothing (``_why``).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from jurat.report._report_data import ArtifactView
from jurat.report._report_html import cell, table
from jurat.report._report_stats import OrderRow, mean_agreement, order_rows
from jurat.report._svg import MAX_SERIES, Bin, Line, Share, histogram, line_chart, share_chart

__all__ = ["agreement_section", "convergence_section", "order_section"]


def _bin_index(value: float) -> int:
    """Ten bins of width 0.1, then unanimity (exactly 1) on its own: it is the common case."""
    if value >= 1:
        return 10
    return min(max(int(round(value * 10, 9)), 0), 9)


def agreement_section(views: Sequence[ArtifactView]) -> str:
    """Histogram of decision and criterion-evaluation agreement."""
    counts = [[0, 0] for _ in range(11)]
    for v in views:
        if v.vetoed:
            continue
        if v.agreement is not None:
            counts[_bin_index(v.agreement)][0] += 1
        for c in v.criteria:
            if c.agreement is not None:
                counts[_bin_index(c.agreement)][1] += 1
    labels = ["0–.1"] + [f".{i}–.{i + 1}" for i in range(1, 9)] + [".9–1", "1"]
    bins = [Bin(label=label, counts=tuple(c)) for label, c in zip(labels, counts, strict=True)]
    chart = histogram(
        "agreement-histogram",
        "Agreement distribution",
        bins,
        ["decisions (judges agree)", "criterion evaluations (samples agree)"],
        x_label="agreement",
    )
    return (
        '<section id="agreement"><h2>Agreement</h2>'
        '<p class="note">How many decisions (share of independent judges carrying the '
        "consensus label) and criterion evaluations (share of the N samples carrying the "
        "majority verdict) reached each level of agreement. Current reviews only; decisions a "
        "veto made are left out, since their agreement decided nothing.</p>"
        f"{chart}</section>"
    )


#: (campaign id, kind, criterion): one judge id means one configuration only within a campaign.
_Group = tuple[str, str, str]


def _groups(
    views: Sequence[ArtifactView],
) -> tuple[dict[_Group, dict[str, list[list[str | None]]]], dict[_Group, float]]:
    """Per (campaign, kind, criterion): each judge's label sequences, one per artifact; and the
    quorum of the criteria that are blockers."""
    groups: dict[_Group, dict[str, list[list[str | None]]]] = {}
    quorum: dict[_Group, float] = {}
    for v in views:
        series: dict[tuple[str, str], list[str | None]] = {}
        for x in v.votes:
            series.setdefault((x.criterion, x.judge), []).append(x.label)
        for (criterion, judge), labels in series.items():
            key = (v.campaign_id, v.kind, criterion)
            groups.setdefault(key, {}).setdefault(judge, []).append(labels)
            if criterion in v.blockers and v.quorum is not None:
                quorum[key] = v.quorum
    return groups, quorum


def convergence_section(views: Sequence[ArtifactView]) -> str:
    """One small chart per campaign and criterion (and per ``MAX_SERIES`` judges), one line
    per judge."""
    groups, quorum = _groups(views)
    charts: list[str] = []
    for (campaign, kind, criterion), judges in groups.items():
        name = criterion if criterion == kind else f"{criterion} ({kind})"
        q = quorum.get((campaign, kind, criterion))
        names = list(judges)
        chunks = [names[i : i + MAX_SERIES] for i in range(0, len(names), MAX_SERIES)]
        for c, chunk in enumerate(chunks):
            lines = [
                Line(name=f"judge {j}", values=mean_agreement(judges[j]))
                for j in chunk
                if any(judges[j])
            ]
            if not lines:
                continue
            artifacts = max(len(judges[j]) for j in chunk)
            about = [campaign] + (["blocker"] if q is not None else [])
            about += [f"judges {c + 1}/{len(chunks)}"] if len(chunks) > 1 else []
            about.append(f"{artifacts} artifact{'s' if artifacts != 1 else ''}")
            charts.append(
                line_chart(
                    f"convergence-{len(charts)}",
                    name,
                    lines,
                    subtitle=" · ".join(about),
                    reference=q,
                    reference_label=f"blocker quorum {q:g}" if q is not None else "",
                )
            )
    return (
        '<section id="convergence"><h2>Vote convergence</h2>'
        '<p class="note">Agreement so far after each sample, in dispatch order: one chart per '
        "campaign and criterion, one line per judge, the mean over the artifacts it sampled "
        "(current reviews). Errored and abstaining samples stay in the denominator (for binary "
        "criteria they vote unsure, as in the fold), so failures pull a line down. Lines that "
        "coincide are drawn 2 px apart.</p>"
        f'<div class="grid">{"".join(charts) or "<p>No votes.</p>"}</div></section>'
    )


def _frac(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "—"


def order_section(views: Sequence[ArtifactView]) -> str:
    """Order-reversal consistency per pairwise judge, as a table and a chart."""
    rows: list[OrderRow] = order_rows(views)
    if not rows:
        return (
            '<section id="order"><h2>Order-reversal consistency</h2>'
            "<p>No pairwise receipts.</p></section>"
        )
    body = [
        f'<tr data-judge="{escape(r.judge)}">'
        + cell(escape(r.judge))
        + cell(_frac(r.reversal.consistent, r.reversal.items), "num")
        + cell(_frac(r.reversal.agreeing_pairs, r.reversal.pairs), "num")
        + cell(_frac(r.reversal.first_position, r.reversal.ab_answers), "num")
        + "</tr>"
        for r in rows
    ]
    head = [
        "judge",
        "artifacts: same majority under AB and BA",
        "sample pairs (AB × BA) agreeing",
        "picked the first-presented",
    ]
    chart = share_chart(
        "order-chart",
        "Canonical preference unchanged when the order is swapped (sample pairs)",
        [
            Share(label=f"judge {r.judge}", part=r.reversal.agreeing_pairs, whole=r.reversal.pairs)
            for r in rows
        ],
        legend="sample pairs (AB × BA) with the same canonical preference",
    )
    return (
        '<section id="order"><h2>Order-reversal consistency</h2>'
        '<p class="note">Preferences are mapped back to canonical A/B before comparing. A '
        "position-unbiased judge picks the first-presented candidate about half the time.</p>"
        + table("order-reversal", head, body)
        + chart
        + "</section>"
    )
