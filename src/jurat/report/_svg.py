"""Inline SVG charts for the HTML report: no JavaScript, no fonts, no URLs.

Every string that reaches the markup goes through ``html.escape``: labels come from receipts,
and receipts carry untrusted artifact ids and judge output.

Layout is computed here, without a browser, so nothing may overlap: each chart is a title
row, a plot (``g.plot``: grid, series, ticks, axis label) and a legend (``g.legend``) in rows
of its own below the axis label, wrapped to the chart's width; text is measured at a
conservative 7 px per character of the 11 px font and clipped with an ellipsis where it
would not fit (the full text stays in the element's tooltip).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pydantic import Field

from jurat.models import Frozen

__all__ = ["MAX_SERIES", "PALETTE", "Bin", "Line", "Share", "histogram", "line_chart",
           "share_chart"]

#: Okabe-Ito: distinguishable under the common colour-vision deficiencies.
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000")
#: The reference line (a quorum): grey, so it is never taken for a series.
REFERENCE = "#57606a"
#: At most this many lines in one line chart; a caller splits larger groups into several.
MAX_SERIES = 4
#: Each series also has its own dash pattern, so two lines are told apart without colour.
_DASHES = ("", "6 3", "2 3", "8 3 2 3")

_PAD_L, _PAD_R, _PAD_T = 44, 12, 28
_AXIS_BELOW = 36  # tick labels and the axis label under the plot
_ROW_H = 16  # one legend row
_CHAR_W = 7.0  # px per character of the 11 px font: wide enough for DejaVu Sans and Liberation
_TITLE_CHAR_W = 8.0  # the 13 px bold title


class Bin(Frozen):
    """One histogram bar, stacked from one count per series."""

    label: str
    """Tick label under the bar."""
    counts: tuple[int, ...]
    """Count per series, in the order of the chart's series names."""


class Line(Frozen):
    """One polyline of a line chart."""

    name: str
    """Legend entry and tooltip."""
    values: tuple[float, ...] = Field(min_length=1)
    """y at x = 1, 2, ...; each in [0, 1]."""


class Share(Frozen):
    """One horizontal bar of a share chart: ``part`` of ``whole``."""

    label: str
    """Row label."""
    part: int
    """Numerator."""
    whole: int
    """Denominator; a zero denominator draws no bar and says so."""


class _Entry(Frozen):
    """One legend entry: a name and how its series is drawn."""

    name: str
    colour: str
    dash: str = ""
    line: bool = False
    """Drawn as a short line (a line chart's series) rather than a filled square."""


def _px(x: float) -> str:
    """A coordinate in user units: one decimal keeps the markup small and deterministic."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _fit(text: str, width: float, char_w: float = _CHAR_W) -> str:
    """``text`` clipped with an ellipsis to about ``width`` px."""
    room = max(int(width // char_w), 1)
    return text if len(text) <= room else text[: max(room - 1, 0)] + "…"


def _open(
    chart_id: str, title: str, width: int, height: float, extra_class: str, subtitle: str = ""
) -> list[str]:
    """The ``svg`` element, its tooltip title (title and subtitle whole) and the title row."""
    cls = f"chart {extra_class}".strip()
    room = width - _PAD_L - _PAD_R
    whole = f"{title} · {subtitle}" if subtitle else title
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{escape(cls)}" id="{escape(chart_id)}" '
        f'viewBox="0 0 {width} {_px(height)}" width="{width}" height="{_px(height)}" role="img" '
        f'aria-labelledby="{escape(chart_id)}-title">',
        f'<title id="{escape(chart_id)}-title">{escape(whole)}</title>',
        f'<text class="chart-title" x="{_PAD_L}" y="16">'
        f"{escape(_fit(title, room, _TITLE_CHAR_W))}</text>",
    ]
    if subtitle:
        shown = escape(_fit(subtitle, room))
        out.append(f'<text class="chart-subtitle" x="{_PAD_L}" y="31">{shown}</text>')
    return out


def _legend_rows(entries: Sequence[_Entry], width: int) -> list[list[tuple[_Entry, str, float]]]:
    """Entries laid out left to right, wrapped: (entry, shown name, x) per row."""
    rows: list[list[tuple[_Entry, str, float]]] = [[]]
    room = width - _PAD_L - _PAD_R
    x = 0.0
    for entry in entries:
        name = _fit(entry.name, room - 24)
        need = 24 + _CHAR_W * len(name)
        if rows[-1] and x + need > room:
            rows.append([])
            x = 0.0
        rows[-1].append((entry, name, _PAD_L + x))
        x += need + 12
    return rows if rows[0] else []


def _legend(rows: Sequence[Sequence[tuple[_Entry, str, float]]], top: float) -> list[str]:
    out = ['<g class="legend">']
    for r, row in enumerate(rows):
        y = top + r * _ROW_H + 11
        for entry, name, x in row:
            out.append(f'<g class="legend-item"><title>{escape(entry.name)}</title>')
            if entry.line:
                dash = f' stroke-dasharray="{entry.dash}"' if entry.dash else ""
                out.append(
                    f'<line class="swatch" x1="{_px(x)}" x2="{_px(x + 18)}" y1="{_px(y - 4)}" '
                    f'y2="{_px(y - 4)}" stroke="{entry.colour}" stroke-width="2.2"{dash}/>'
                )
            else:
                out.append(
                    f'<rect class="swatch" x="{_px(x + 4)}" y="{_px(y - 9)}" width="10" '
                    f'height="10" fill="{entry.colour}"/>'
                )
            out.append(f'<text class="legend" x="{_px(x + 24)}" y="{_px(y)}">{escape(name)}</text>')
            out.append("</g>")
    out.append("</g>")
    return out


def _y_axis(
    width: int, plot_h: float, ticks: Sequence[tuple[float, str]], top: float = _PAD_T
) -> list[str]:
    """Horizontal grid lines at fractions of the plot height, labelled on the left."""
    out = []
    for frac, label in ticks:
        y = top + plot_h * (1 - frac)
        out.append(
            f'<line class="grid" x1="{_PAD_L}" x2="{width - _PAD_R}" y1="{_px(y)}" y2="{_px(y)}"/>'
        )
        out.append(
            f'<text class="tick" x="{_PAD_L - 6}" y="{_px(y + 4)}" '
            f'text-anchor="end">{escape(label)}</text>'
        )
    return out


def _axis_label(width: int, axis_y: float, label: str) -> str:
    x = _PAD_L + (width - _PAD_L - _PAD_R) / 2
    return (
        f'<text class="axis-label" x="{x:.0f}" y="{_px(axis_y + 29)}" '
        f'text-anchor="middle">{escape(label)}</text>'
    )


def histogram(
    chart_id: str,
    title: str,
    bins: Sequence[Bin],
    series: Sequence[str],
    *,
    x_label: str,
    width: int = 640,
    plot_h: int = 190,
) -> str:
    """A stacked bar chart of counts; a bar's tooltip gives its counts per series."""
    entries = [_Entry(name=s, colour=PALETTE[i % len(PALETTE)]) for i, s in enumerate(series)]
    rows = _legend_rows(entries, width)
    axis_y = _PAD_T + plot_h
    height = axis_y + _AXIS_BELOW + _ROW_H * len(rows) + 6
    top = max((sum(b.counts) for b in bins), default=0)
    scale_max = max(top, 1)
    step = (width - _PAD_L - _PAD_R) / max(len(bins), 1)
    out = _open(chart_id, title, width, height, "histogram")
    out.append('<g class="plot">')
    ticks = sorted({0, scale_max // 2, scale_max})
    # Headroom for the count printed over the tallest bar.
    bar_h = plot_h - 14
    out += _y_axis(width, plot_h, [(t / scale_max * bar_h / plot_h, str(t)) for t in ticks])
    for i, b in enumerate(bins):
        x = _PAD_L + i * step + step * 0.12
        base = float(axis_y)
        detail = ", ".join(f"{name}: {c}" for name, c in zip(series, b.counts, strict=False))
        for s, count in enumerate(b.counts):
            if count <= 0:
                continue
            h = bar_h * count / scale_max
            base -= h
            out.append(
                f'<rect class="bar" x="{_px(x)}" y="{_px(base)}" width="{_px(step * 0.76)}" '
                f'height="{_px(h)}" fill="{PALETTE[s % len(PALETTE)]}">'
                f"<title>{escape(b.label)}: {escape(detail)}</title></rect>"
            )
        total = sum(b.counts)
        if total:
            out.append(
                f'<text class="count" x="{_px(x + step * 0.38)}" y="{_px(base - 3)}" '
                f'text-anchor="middle">{total}</text>'
            )
        out.append(
            f'<text class="tick" x="{_px(x + step * 0.38)}" y="{axis_y + 14}" '
            f'text-anchor="middle">{escape(b.label)}</text>'
        )
    out.append(_axis_label(width, axis_y, x_label))
    out.append("</g>")
    out += _legend(rows, axis_y + _AXIS_BELOW)
    out.append("</svg>")
    return "\n".join(out)


def line_chart(
    chart_id: str,
    title: str,
    lines: Sequence[Line],
    *,
    subtitle: str = "",
    reference: float | None = None,
    reference_label: str = "",
    width: int = 560,
    plot_h: int = 150,
) -> str:
    """y in [0, 1] against x = 1..K, one legend entry per line; at most ``MAX_SERIES`` lines.

    An optional dashed reference line (e.g. the quorum) has its own legend entry. Lines that
    coincide (every judge unanimous) are drawn 2 px apart, so each stays visible.
    """
    if len(lines) > MAX_SERIES:
        raise ValueError(f"{len(lines)} lines in one chart; split them (at most {MAX_SERIES})")
    entries = [
        _Entry(name=line.name, colour=PALETTE[i], dash=_DASHES[i], line=True)
        for i, line in enumerate(lines)
    ]
    if reference is not None:
        entries.append(_Entry(name=reference_label, colour=REFERENCE, dash="4 4", line=True))
    rows = _legend_rows(entries, width)
    top = _PAD_T + (15 if subtitle else 0)
    axis_y = top + plot_h
    height = axis_y + _AXIS_BELOW + _ROW_H * len(rows) + 6
    k_max = max((len(line.values) for line in lines), default=1)
    plot_w = width - _PAD_L - _PAD_R

    def xy(k: int, v: float, nudge: float = 0.0) -> tuple[float, float]:
        x = _PAD_L + (plot_w * (k - 1) / (k_max - 1) if k_max > 1 else plot_w / 2)
        y = top + plot_h * (1 - min(max(v, 0.0), 1.0)) + nudge
        return x, y

    out = _open(chart_id, title, width, height, "convergence", subtitle)
    out.append('<g class="plot">')
    out += _y_axis(width, plot_h, [(0.0, "0"), (0.5, "0.5"), (1.0, "1")], top)
    if reference is not None:
        y = top + plot_h * (1 - min(max(reference, 0.0), 1.0))
        out.append(
            f'<line class="reference" x1="{_PAD_L}" x2="{width - _PAD_R}" '
            f'y1="{_px(y)}" y2="{_px(y)}"><title>{escape(reference_label)}</title></line>'
        )
    for k in sorted({1, (k_max + 1) // 2, k_max}):
        x = _px(xy(k, 0.0)[0])
        out.append(f'<text class="tick" x="{x}" y="{axis_y + 14}" text-anchor="middle">{k}</text>')
    out.append(_axis_label(width, axis_y, "sample k (dispatch order)"))
    for i, line in enumerate(lines):
        nudge = (i - (len(lines) - 1) / 2) * 2.0
        points = [xy(k, v, nudge) for k, v in enumerate(line.values, start=1)]
        dash = f' stroke-dasharray="{_DASHES[i]}"' if _DASHES[i] else ""
        tip = f"{line.name}: {line.values[-1]:.2f} after {len(line.values)}"
        coords = " ".join(f"{_px(px)},{_px(py)}" for px, py in points)
        out.append(
            f'<polyline class="series" points="{coords}" stroke="{PALETTE[i]}"{dash}>'
            f"<title>{escape(tip)}</title></polyline>"
        )
        end_x, end_y = points[-1]
        out.append(
            f'<circle class="end" cx="{_px(end_x)}" cy="{_px(end_y)}" r="2.5" '
            f'fill="{PALETTE[i]}"/>'
        )
    out.append("</g>")
    out += _legend(rows, axis_y + _AXIS_BELOW)
    out.append("</svg>")
    return "\n".join(out)


def share_chart(
    chart_id: str, title: str, rows: Sequence[Share], *, legend: str, width: int = 640
) -> str:
    """Horizontal bars of part/whole in [0, 1], labelled with the exact fraction."""
    row_h = 24
    entries = _legend_rows([_Entry(name=legend, colour=PALETTE[2])], width)
    plot_bottom = _PAD_T + row_h * max(len(rows), 1)
    height = plot_bottom + 8 + _ROW_H * len(entries) + 6
    label_w = 130
    plot_w = width - label_w - 100
    out = _open(chart_id, title, width, height, "shares")
    out.append('<g class="plot">')
    for i, row in enumerate(rows):
        y = _PAD_T + i * row_h
        out.append(
            f'<g class="row-label"><title>{escape(row.label)}</title><text class="tick" '
            f'x="{label_w - 8}" y="{y + 15}" text-anchor="end">'
            f"{escape(_fit(row.label, label_w - 12))}</text></g>"
        )
        out.append(f'<rect class="track" x="{label_w}" y="{y + 4}" width="{plot_w}" height="14"/>')
        if row.whole:
            share = row.part / row.whole
            out.append(
                f'<rect class="bar" x="{label_w}" y="{y + 4}" width="{_px(plot_w * share)}" '
                f'height="14" fill="{PALETTE[2]}"><title>{escape(row.label)}: '
                f"{row.part}/{row.whole}</title></rect>"
            )
            text = f"{row.part}/{row.whole} ({share:.0%})"
        else:
            text = "no pairs"
        out.append(
            f'<text class="count" x="{label_w + plot_w + 6}" y="{y + 15}">{escape(text)}</text>'
        )
    out.append("</g>")
    out += _legend(entries, plot_bottom + 8)
    out.append("</svg>")
    return "\n".join(out)
