"""The collapsed block under each decision row: digests, why, gates, criteria and every vote.

Each vote row says what *that* sample said (``_votes``), never the decision's word. Under a
veto the votes decided nothing, and every row says so: "not considered: veto" (``_why``).
"""

from __future__ import annotations

from html import escape

from jurat.report._report_data import ArtifactView, VoteRow
from jurat.report._report_html import cell, interval, table

__all__ = ["details"]

_NOT_CONSIDERED = "not considered: veto"


def _meta(v: ArtifactView) -> str:
    review = "" if v.supersedes is None else f"; supersedes receipt {escape(v.supersedes)}"
    seq = "" if v.ledger_seq is None else f"; ledger entry {v.ledger_seq}"
    return (
        f'<p class="meta">artifact sha256 <code>{escape(v.artifact_sha256)}</code>; policy '
        f"sha256 <code>{escape(v.policy_sha256)}</code>{review}{seq}</p>"
    )


def _gates(v: ArtifactView) -> str:
    return table(
        None,
        ["gate", "outcome", "required", "tool", "detail"],
        [
            f'<tr class="gate-{escape(g.outcome)}" data-gate="{escape(g.id)}">'
            + "".join(
                cell(escape(x))
                for x in (g.id, g.outcome, "yes" if g.required else "no", g.tool, g.detail)
            )
            + "</tr>"
            for g in v.gates
        ],
        "gates",
    )


def _criteria(v: ArtifactView) -> str:
    return table(
        None,
        ["judge", "criterion", "blocker", "verdict", "agreement", "gate", "samples"],
        [
            f'<tr class="gate-{escape(c.gate)}">'
            + "".join(
                cell(escape(x)) for x in (c.judge, c.criterion_id, "blocker" if c.blocker else "")
            )
            + cell(escape(c.verdict))
            + cell(escape(c.agreement_votes) + interval(c.agreement_votes))
            + cell(escape(c.gate))
            + cell(" ".join(escape(s) for s in c.sample_verdicts), "verdicts")
            + "</tr>"
            for c in v.criteria
        ],
        "criteria",
    )


def _vote_row(x: VoteRow, vetoed: bool) -> str:
    said = f'<span class="said said-{x.said_tone}">{escape(x.said)}</span>'
    answer = escape(x.summary)
    if x.explanation:
        answer += f'<div class="explanation">{escape(x.explanation)}</div>'
    sample = "" if x.sample is None else str(x.sample)
    return (
        f'<tr class="{"errored" if x.error is not None else "vote"}" '
        f'data-judge="{escape(x.judge)}" data-sample="{escape(sample)}" '
        f'data-said="{escape(x.said)}" data-considered="{"no" if vetoed else "yes"}">'
        + cell(escape(x.judge))
        + cell(escape(x.criterion))
        + cell(sample or "—")
        + cell(escape(x.order or "—"))
        + cell(said, "said")
        + cell(answer, "answer")
        + (cell(_NOT_CONSIDERED, "considered") if vetoed else "")
        + cell("—" if x.latency_ms is None else f"{x.latency_ms:,}", "num")
        + cell(str(x.attempts), "num")
        + "</tr>"
    )


def _votes(v: ArtifactView) -> str:
    head = ["judge", "criterion", "sample", "order", "this sample said", "its answer"]
    head += ["counted"] if v.vetoed else []
    head += ["latency ms", "attempts"]
    rows = [_vote_row(x, v.vetoed) for x in v.votes]
    if not rows:
        asked = "judges not asked" if v.vetoed else "no votes"
        rows = [f'<tr><td colspan="{len(head)}">{asked}</td></tr>']
    note = ""
    if v.vetoed and v.votes:
        note = (
            f'<p class="note veto">{_NOT_CONSIDERED} by {escape(", ".join(v.vetoed_by))}: '
            "these votes are recorded, but the failed gate decided the outcome whatever "
            "they said.</p>"
        )
    return note + table(None, head, rows, "votes")


def details(v: ArtifactView) -> str:
    """The ``details.votes#votes-<index>`` block of one receipt."""
    errored = sum(1 for x in v.votes if x.error is not None)
    counted = (
        "judges not asked" if v.vetoed and not v.votes
        else f"{len(v.votes)} votes" + (f", {errored} errored" if errored else "")
    )
    parts = [
        f'<details class="votes" id="votes-{v.index}"><summary>{counted} · '
        f"{escape(v.artifact_id)} · {escape(v.campaign_id)}</summary>",
        _meta(v),
    ]
    if v.reasons:
        items = "".join(f"<li>{escape(r)}</li>" for r in v.reasons)
        head = "Why, root cause first:" if v.gates_failed else "Why:"
        parts.append(f'<p class="why">{head}</p><ul class="reasons">{items}</ul>')
    if v.gates:
        parts.append(_gates(v))
    if v.criteria:
        parts.append(_criteria(v))
    parts.append(_votes(v))
    parts.append("</details>")
    return "".join(parts)
