"""Markup helpers and the stylesheet of the HTML report."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from jurat.fold import wilson_interval
from jurat.style import TONE_HEX

if TYPE_CHECKING:
    from jurat.report._report_data import ArtifactView


def interval(text: str) -> str:
    """The Wilson 95% interval of a trailing ``top/n`` fraction, as markup; or nothing."""
    top, _, n = text.rpartition(" ")[2].partition("/")
    # isdecimal, not isdigit: int() refuses superscripts; the length cap keeps int() cheap.
    if not all(x.isdecimal() and len(x) < 10 for x in (top, n)):
        return ""
    successes, total = int(top), int(n)
    if not 0 <= successes <= total or total < 1:
        return ""
    low, high = wilson_interval(successes, total)
    return f'<span class="ci">{low:.2f}–{high:.2f}</span>'


def cell(inner: str, cls: str | None = None) -> str:
    """A table cell; ``inner`` is markup the caller has already escaped."""
    return f'<td class="{escape(cls)}">{inner}</td>' if cls else f"<td>{inner}</td>"


def table(
    table_id: str | None, head: Sequence[str], rows: Sequence[str], cls: str | None = None
) -> str:
    """A table with an escaped header row and pre-rendered body rows."""
    attrs = (f' id="{escape(table_id)}"' if table_id else "") + (
        f' class="{escape(cls)}"' if cls else ""
    )
    header = "".join(f'<th scope="col">{escape(h)}</th>' for h in head)
    return f"<table{attrs}><thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


# The tone colours come from jurat.style, which the terminal tables read too.
_ROOT = (
    f":root {{ --good: {TONE_HEX['good']}; --bad: {TONE_HEX['bad']}; --hold: {TONE_HEX['hold']}; "
    f"--ink: #1f2328; --muted: {TONE_HEX['none']};\n"
    "  --line: #d0d7de; --bg: #ffffff; --band: #f6f8fa; }\n"
)

# System fonts only: the page must render identically with no network.
CSS = (
    "\n"
    + _ROOT
    + """* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1200px; padding: 24px; color: var(--ink); background: var(--bg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
h1 { font-size: 24px; margin: 0 0 8px; }
h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid var(--line);
  padding-bottom: 4px; }
p.summary { font-size: 15px; margin: 4px 0; }
p.note { color: var(--muted); margin: 4px 0 12px; max-width: 75em; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px;
  border-bottom: 1px solid var(--line); }
th { background: var(--band); font-weight: 600; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.votes-row > td { padding: 0 8px 6px 24px; border-bottom: 2px solid var(--line); }
tr.decision > td { border-bottom: none; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600;
  color: #fff; background: var(--muted); }
.tone-good .badge { background: var(--good); }
.tone-bad .badge { background: var(--bad); }
.tone-hold .badge { background: var(--hold); }
.tag { font-size: 11px; color: var(--muted); border: 1px solid var(--line); border-radius: 8px;
  padding: 0 5px; white-space: nowrap; }
.tag.current { color: var(--good); border-color: var(--good); }
tr.superseded > td { color: var(--muted); }
tr.superseded .badge { opacity: 0.6; }
tr.campaign > th { background: #fff; font-size: 15px; padding-top: 18px;
  border-bottom: 2px solid var(--ink); }
.said { font-weight: 600; white-space: nowrap; }
.said-good { color: var(--good); }
.said-bad { color: var(--bad); }
.said-hold { color: var(--hold); }
td.considered { color: var(--muted); font-style: italic; white-space: nowrap; }
p.why { margin: 6px 0 0; font-weight: 600; font-size: 13px; }
p.note.veto { color: var(--bad); }
.ci { display: block; font-size: 11px; color: var(--muted); }
details.votes > summary { cursor: pointer; color: var(--muted); font-size: 13px; }
details.votes[open] > summary { margin-bottom: 6px; }
details table { font-size: 12.5px; width: auto; min-width: 60%; }
p.meta { color: var(--muted); font-size: 12px; margin: 2px 0 6px; overflow-wrap: anywhere; }
ul.reasons { margin: 4px 0 8px; padding-left: 20px; }
tr.errored td { background: #fff4f4; }
.error { color: var(--bad); font-weight: 600; }
.explanation { color: var(--muted); font-size: 12px; max-width: 60em; white-space: pre-wrap;
  overflow-wrap: anywhere; }
td.verdicts { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11.5px; }
tr.gate-block td, tr.gate-fail td { color: var(--bad); }
tr.gate-warn td { color: var(--hold); }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
code.verify { background: var(--band); padding: 2px 6px; border-radius: 4px;
  overflow-wrap: anywhere; }
div.grid { display: flex; flex-wrap: wrap; gap: 12px; }
svg.chart { background: #fff; border: 1px solid var(--line); border-radius: 6px;
  max-width: 100%; height: auto; }
svg.chart text { font-size: 11px; fill: var(--ink); }
svg.chart text.chart-title { font-size: 13px; font-weight: 600; }
svg.chart text.chart-subtitle { fill: var(--muted); }
svg.chart text.tick, svg.chart text.axis-label { fill: var(--muted); }
svg.chart line.grid { stroke: #e5e8eb; stroke-width: 1; }
svg.chart line.reference { stroke: #57606a; stroke-width: 1.4; stroke-dasharray: 4 4; }
svg.chart polyline.series { fill: none; stroke-width: 2; stroke-opacity: 0.9;
  stroke-linejoin: round; }
svg.chart text.legend { fill: var(--ink); }
svg.chart rect.track { fill: #eef1f4; }
"""
)


def review_text(v: ArtifactView) -> str:
    """The review cell: the version, tagged superseded or current when there are several."""
    shown = f"v{v.review_version}"
    if v.superseded_by is not None:
        return shown + f' <span class="tag superseded">superseded by v{v.superseded_by}</span>'
    if v.versions > 1:
        return shown + ' <span class="tag current">current</span>'
    return shown
