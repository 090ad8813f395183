"""``jurat report``: one self-contained HTML file over a set of receipts.

The page has inline CSS and inline SVG only: no JavaScript, fonts or URLs, and a
Content-Security-Policy that forbids fetching anything, so it opens offline and an escaping
slip could not load a script. Every text from a receipt passes through ``html.escape``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from jurat.errors import IntakeError, JuratError
from jurat.fold import wilson_interval
from jurat.receipts import read_statement
from jurat.report._report_data import ArtifactView, ReportReceipt, artifact_views, coerce_receipts
from jurat.report._report_html import CSS, cell, table
from jurat.report._report_stats import (
    CostRow,
    OrderRow,
    cost_rows,
    order_rows,
    running_agreement,
)
from jurat.report._svg import Bin, Line, Share, histogram, line_chart, share_chart

__all__ = ["ReportReceipt", "load_receipt_files", "render_report"]

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def load_receipt_files(out_dir: Path, *, key_path: Path | None = None) -> list[dict[str, Any]]:
    """Read every ``*.sigstore.json`` bundle in ``out_dir`` and decode its statement.

    This decodes, it does not verify: the report prints the command that verifies.
    """
    if not out_dir.is_dir():
        raise IntakeError(f"{out_dir}: not a directory (give the --out directory of `jurat run`)")
    out = []
    for path in sorted(out_dir.glob("*.sigstore.json")):
        try:
            statement = read_statement(path.read_bytes())
        except OSError as exc:
            raise IntakeError(f"{path}: unreadable: {exc.strerror}") from exc
        except JuratError as exc:
            raise IntakeError(f"{path}: not a jurat receipt: {exc}") from exc
        out.append(
            {
                "statement": statement,
                "receipt_path": str(path),
                "key_path": str(key_path) if key_path is not None else None,
            }
        )
    return out


def render_report(
    receipts: Sequence[ReportReceipt] | Sequence[Mapping[str, Any]],
    *,
    title: str = "jurat report",
    cost: Mapping[str, Any] | None = None,
) -> str:
    """The whole report as one HTML document. Deterministic: the same input, the same bytes."""
    views = artifact_views(coerce_receipts(receipts))
    costs = cost_rows(views, cost)
    body = [
        f"<header><h1>{escape(title)}</h1>{_summary(views)}</header>",
        _decisions(views),
        _agreement_section(views),
        _convergence_section(views),
        _order_section(order_rows(views)),
        _cost_section(costs),
        _verify_section(views),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def _summary(views: Sequence[ArtifactView]) -> str:
    if not views:
        return '<p class="summary">No receipts.</p>'
    outcomes: dict[str, int] = {}
    for v in views:
        outcomes[v.outcome] = outcomes.get(v.outcome, 0) + 1
    counts = " · ".join(f"{n} {escape(o)}" for o, n in sorted(outcomes.items()))
    campaigns = ", ".join(sorted({f"{v.campaign_id} ({v.kind})" for v in views}))
    levels = ", ".join(sorted({v.fidelity for v in views}))
    return (
        f'<p class="summary">{len(views)} receipts: {counts}. '
        f"Campaigns: {escape(campaigns)}. Replay fidelity: {escape(levels)}.</p>"
        '<p class="note">RF-1: the decision is replayable from the recorded votes; the votes '
        "themselves are not reproducible from scratch. RF-2: the votes are reproducible too "
        "(deterministic checks only, or a recorded replay judge). Agreement is the share of "
        "votes that agree (evidence of stability, not a calibrated confidence); the interval "
        "under it is "
        "a Wilson 95% interval, wide for few votes. This page decodes the receipts, it does "
        "not check their signatures: run the verify commands at the end.</p>"
    )


def _interval(text: str) -> str:
    """The Wilson interval of a trailing ``top/n`` fraction, or nothing."""
    top, _, n = text.rpartition(" ")[2].partition("/")
    # isdecimal, not isdigit: int() refuses superscripts; the length cap keeps int() cheap.
    if not all(x.isdecimal() and len(x) < 10 for x in (top, n)):
        return ""
    successes, total = int(top), int(n)
    if not 0 <= successes <= total or total < 1:
        return ""
    low, high = wilson_interval(successes, total)
    return f'<span class="ci">{low:.2f}–{high:.2f}</span>'


def _decisions(views: Sequence[ArtifactView]) -> str:
    head = [
        "artifact",
        "kind",
        "outcome",
        "Q / pass",
        "agreement (votes)",
        "valid / samples",
        "gate failures",
        "review",
        "fidelity",
    ]
    rows = []
    for v in views:
        share = "—" if v.samples is None else f"{v.valid_samples or 0} / {v.samples}"
        review = "—" if v.review_version is None else f"v{v.review_version}"
        if v.superseded:
            review += ' <span class="tag">superseded</span>'
        rows.append(
            f'<tr class="decision tone-{v.tone}" id="decision-{v.index}" '
            f'data-artifact="{escape(v.artifact_id)}" data-outcome="{escape(v.outcome)}">'
            + cell(f'<a href="#votes-{v.index}">{escape(v.artifact_id)}</a>', "artifact")
            + cell(escape(v.kind), "kind")
            + cell(f'<span class="badge">{escape(v.outcome)}</span>', "outcome")
            + cell(escape(v.score), "score")
            + cell(escape(v.agreement_text) + _interval(v.agreement_text), "agreement")
            + cell(share, "samples")
            + cell(escape(", ".join(v.gates_failed)) or "none", "gates")
            + cell(review, "review")
            + cell(escape(v.fidelity), "fidelity")
            + "</tr>"
        )
        rows.append(f'<tr class="votes-row"><td colspan="{len(head)}">{_details(v)}</td></tr>')
    if not views:
        rows.append(f'<tr><td colspan="{len(head)}">No receipts.</td></tr>')
    return (
        '<section id="decisions-section"><h2>Decisions</h2>'
        + table("decisions", head, rows)
        + "</section>"
    )


def _details(v: ArtifactView) -> str:
    errored = sum(1 for x in v.votes if x.error is not None)
    parts = [
        f'<details class="votes" id="votes-{v.index}"><summary>{len(v.votes)} votes'
        f"{f', {errored} errored' if errored else ''} · {escape(v.artifact_id)} · "
        f"{escape(v.campaign_id)}</summary>"
    ]
    review = "" if v.supersedes is None else f"; supersedes receipt {escape(v.supersedes)}"
    parts.append(
        f'<p class="meta">artifact sha256 <code>{escape(v.artifact_sha256)}</code>; policy '
        f"sha256 <code>{escape(v.policy_sha256)}</code>{review}</p>"
    )
    if v.reasons:
        items = "".join(f"<li>{escape(r)}</li>" for r in v.reasons)
        parts.append(f'<ul class="reasons">{items}</ul>')
    if v.gates:
        parts.append(
            table(
                None,
                ["gate", "outcome", "required", "tool", "detail"],
                [
                    f'<tr class="gate-{escape(g.outcome)}">'
                    + "".join(
                        cell(escape(x))
                        for x in (g.id, g.outcome, "yes" if g.required else "no", g.tool, g.detail)
                    )
                    + "</tr>"
                    for g in v.gates
                ],
                "gates",
            )
        )
    if v.criteria:
        parts.append(
            table(
                None,
                ["judge", "criterion", "blocker", "verdict", "agreement", "gate", "samples"],
                [
                    f'<tr class="gate-{escape(c.gate)}">'
                    + "".join(
                        cell(escape(x))
                        for x in (c.judge, c.criterion_id, "blocker" if c.blocker else "")
                    )
                    + cell(escape(c.verdict))
                    + cell(escape(c.agreement_votes) + _interval(c.agreement_votes))
                    + cell(escape(c.gate))
                    + cell(" ".join(escape(s) for s in c.sample_verdicts), "verdicts")
                    + "</tr>"
                    for c in v.criteria
                ],
                "criteria",
            )
        )
    vote_rows = []
    for x in v.votes:
        if x.error is not None:
            answer = f'<span class="error">error: {escape(x.error)}</span>'
        else:
            answer = escape(x.summary)
            if x.explanation:
                answer += f'<div class="explanation">{escape(x.explanation)}</div>'
        vote_rows.append(
            f'<tr class="{"errored" if x.error is not None else "vote"}">'
            + cell(escape(x.judge))
            + cell(escape(x.criterion))
            + cell("—" if x.sample is None else str(x.sample))
            + cell(escape(x.order or "—"))
            + cell(answer, "answer")
            + cell("—" if x.latency_ms is None else f"{x.latency_ms:,}", "num")
            + cell(str(x.attempts), "num")
            + "</tr>"
        )
    head = ["judge", "criterion", "sample", "order", "answer or error", "latency ms", "attempts"]
    parts.append(
        table(None, head, vote_rows or ['<tr><td colspan="7">no votes</td></tr>'], "votes")
    )
    parts.append("</details>")
    return "".join(parts)


def _bin_index(value: float) -> int:
    """Ten bins of width 0.1, then unanimity (exactly 1) on its own: it is the common case."""
    if value >= 1:
        return 10
    return min(max(int(round(value * 10, 9)), 0), 9)


def _agreement_section(views: Sequence[ArtifactView]) -> str:
    counts = [[0, 0] for _ in range(11)]
    for v in views:
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
        "majority verdict) reached each level of agreement.</p>"
        f"{chart}</section>"
    )


def _convergence_section(views: Sequence[ArtifactView]) -> str:
    groups: dict[tuple[str, str], list[tuple[str, str, list[str | None]]]] = {}
    quorum: dict[tuple[str, str], float] = {}
    judges: list[str] = []
    for v in views:
        series: dict[tuple[str, str], list[str | None]] = {}
        for x in v.votes:
            series.setdefault((x.criterion, x.judge), []).append(x.label)
            if x.judge not in judges:
                judges.append(x.judge)
        for (criterion, judge), labels in series.items():
            key = (v.kind, criterion)
            groups.setdefault(key, []).append((v.artifact_id, judge, labels))
            if criterion in v.blockers and v.quorum is not None:
                quorum[key] = v.quorum
    charts = []
    for i, ((kind, criterion), members) in enumerate(groups.items()):
        used = sorted({judge for _, judge, _ in members}, key=judges.index)
        lines = [
            Line(
                name=f"{artifact} / judge {judge}",
                values=running_agreement(labels),
                colour=used.index(judge),
            )
            for artifact, judge, labels in members
        ]
        name = criterion if criterion == kind else f"{criterion} ({kind})"
        q = quorum.get((kind, criterion))
        charts.append(
            line_chart(
                f"convergence-{i}",
                name + (" · blocker" if q is not None else ""),
                lines,
                [f"judge {j}" for j in used],
                reference=q,
                reference_label=f"quorum {q:g}" if q is not None else "",
            )
        )
    return (
        '<section id="convergence"><h2>Vote convergence</h2>'
        '<p class="note">Agreement so far after each sample, in dispatch order, one line per '
        "artifact and judge. Errored and abstaining samples stay in the denominator (for "
        "binary criteria they vote unsure, as in the fold), so failures pull a line down.</p>"
        f'<div class="grid">{"".join(charts) or "<p>No votes.</p>"}</div></section>'
    )


def _frac(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "—"


def _order_section(rows: Sequence[OrderRow]) -> str:
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
    )
    return (
        '<section id="order"><h2>Order-reversal consistency</h2>'
        '<p class="note">Preferences are mapped back to canonical A/B before comparing. A '
        "position-unbiased judge picks the first-presented candidate about half the time.</p>"
        + table("order-reversal", head, body)
        + chart
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
        f'<tr data-artifact="{escape(v.artifact_id)}">'
        + cell(escape(v.artifact_id))
        + cell(f'<code class="verify">{escape(v.verify_command)}</code>')
        + "</tr>"
        for v in views
    ]
    note = ""
    if any(not v.paths_known for v in views):
        note = (
            '<p class="note">Where a path was not given, replace <code>&lt;out&gt;</code> with '
            "the --out directory of <code>jurat run</code> and <code>&lt;pub&gt;</code> with "
            "the public key (<code>jurat.pub</code> from <code>jurat keygen</code>).</p>"
        )
    return (
        '<section id="verify-section"><h2>Verify</h2>'
        '<p class="note">Each command checks the signature offline and re-derives the '
        "decision from the signed votes.</p>"
        + table("verify", ["artifact", "command"], body)
        + note
        + "</section>"
    )
