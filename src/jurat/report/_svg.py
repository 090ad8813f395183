"""Inline SVG charts for the HTML report: no JavaScript, no fonts, no URLs.

Every string that reaches the markup goes through ``html.escape``: labels come from receipts,
and receipts carry untrusted artifact ids and judge output.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pydantic import Field

from jurat.models import Frozen

#: Okabe-Ito: distinguishable under the common colour-vision deficiencies.
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000")

_PAD_L, _PAD_R, _PAD_T, _PAD_B = 44, 12, 28, 40
_LEGEND_H = 18


class Bin(Frozen):
    """One histogram bar, stacked from one count per series."""

    label: str
    """Tick label under the bar."""
    counts: tuple[int, ...]
    """Count per series, in the order of the chart's series names."""


class Line(Frozen):
    """One polyline of a line chart."""

    name: str
    """Shown in the line's tooltip."""
    values: tuple[float, ...] = Field(min_length=1)
    """y at x = 1, 2, ...; each in [0, 1]."""
    colour: int = 0
    """Index into the palette (the same index means the same legend entry)."""


class Share(Frozen):
    """One horizontal bar of a share chart: ``part`` of ``whole``."""

    label: str
    """Row label."""
    part: int
    """Numerator."""
    whole: int
    """Denominator; a zero denominator draws no bar and says so."""


def _px(x: float) -> str:
    """A coordinate in user units: one decimal keeps the markup small and deterministic."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _open(chart_id: str, title: str, width: int, height: int, extra_class: str = "") -> list[str]:
    cls = f"chart {extra_class}".strip()
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{escape(cls)}" id="{escape(chart_id)}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-labelledby="{escape(chart_id)}-title">',
        f'<title id="{escape(chart_id)}-title">{escape(title)}</title>',
        f'<text class="chart-title" x="{_PAD_L}" y="16">{escape(title)}</text>',
    ]


def _y_axis(width: int, plot_h: float, ticks: Sequence[tuple[float, str]]) -> list[str]:
    """Horizontal grid lines at fractions of the plot height, labelled on the left."""
    out = []
    for frac, label in ticks:
        y = _PAD_T + plot_h * (1 - frac)
        out.append(
            f'<line class="grid" x1="{_PAD_L}" x2="{width - _PAD_R}" y1="{_px(y)}" y2="{_px(y)}"/>'
        )
        out.append(
            f'<text class="tick" x="{_PAD_L - 6}" y="{_px(y + 4)}" '
            f'text-anchor="end">{escape(label)}</text>'
        )
    return out


def _legend(names: Sequence[str], x: float, y: float) -> list[str]:
    out = []
    lx = x
    for i, name in enumerate(names):
        colour = PALETTE[i % len(PALETTE)]
        out.append(
            f'<rect class="swatch" x="{_px(lx)}" y="{_px(y - 9)}" width="10" height="10" '
            f'fill="{colour}"/>'
        )
        out.append(f'<text class="legend" x="{_px(lx + 14)}" y="{_px(y)}">{escape(name)}</text>')
        # No font metrics without a browser: 7 px per character fits the 11 px legend font.
        lx += 30 + 7 * len(name)
    return out


def histogram(
    chart_id: str,
    title: str,
    bins: Sequence[Bin],
    series: Sequence[str],
    *,
    x_label: str,
    width: int = 640,
    height: int = 280,
) -> str:
    """A stacked bar chart of counts; a bar's tooltip gives its counts per series."""
    top = max((sum(b.counts) for b in bins), default=0)
    scale_max = max(top, 1)
    plot_w = width - _PAD_L - _PAD_R
    plot_h = height - _PAD_T - _PAD_B - _LEGEND_H
    axis_y = _PAD_T + plot_h
    step = plot_w / max(len(bins), 1)
    out = _open(chart_id, title, width, height, "histogram")
    ticks = sorted({0, scale_max // 2, scale_max})
    out += _y_axis(width, plot_h, [(t / scale_max, str(t)) for t in ticks])
    for i, b in enumerate(bins):
        x = _PAD_L + i * step + step * 0.12
        base = float(axis_y)
        detail = ", ".join(f"{name}: {c}" for name, c in zip(series, b.counts, strict=False))
        for s, count in enumerate(b.counts):
            if count <= 0:
                continue
            h = plot_h * count / scale_max
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
    out.append(
        f'<text class="axis-label" x="{_PAD_L + plot_w / 2:.0f}" y="{axis_y + 29}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
    )
    out += _legend(series, _PAD_L, height - 6)
    out.append("</svg>")
    return "\n".join(out)


def line_chart(
    chart_id: str,
    title: str,
    lines: Sequence[Line],
    legend: Sequence[str],
    *,
    reference: float | None = None,
    reference_label: str = "",
    width: int = 380,
    height: int = 250,
) -> str:
    """y in [0, 1] against x = 1..K; an optional dashed reference line (e.g. the quorum)."""
    k_max = max((len(line.values) for line in lines), default=1)
    plot_w = width - _PAD_L - _PAD_R
    plot_h = height - _PAD_T - _PAD_B - _LEGEND_H
    axis_y = _PAD_T + plot_h

    def xy(k: int, v: float) -> str:
        x = _PAD_L + (plot_w * (k - 1) / (k_max - 1) if k_max > 1 else plot_w / 2)
        y = _PAD_T + plot_h * (1 - min(max(v, 0.0), 1.0))
        return f"{_px(x)},{_px(y)}"

    out = _open(chart_id, title, width, height, "convergence")
    out += _y_axis(width, plot_h, [(0.0, "0"), (0.5, "0.5"), (1.0, "1")])
    if reference is not None:
        y = _PAD_T + plot_h * (1 - reference)
        out.append(
            f'<line class="reference" x1="{_PAD_L}" x2="{width - _PAD_R}" '
            f'y1="{_px(y)}" y2="{_px(y)}"/>'
        )
        out.append(
            f'<text class="tick" x="{width - _PAD_R}" y="{_px(y - 4)}" '
            f'text-anchor="end">{escape(reference_label)}</text>'
        )
    for k in sorted({1, (k_max + 1) // 2, k_max}):
        x = xy(k, 0.0).split(",")[0]
        out.append(f'<text class="tick" x="{x}" y="{axis_y + 14}" text-anchor="middle">{k}</text>')
    out.append(
        f'<text class="axis-label" x="{_PAD_L + plot_w / 2:.0f}" y="{axis_y + 29}" '
        f'text-anchor="middle">sample k (dispatch order)</text>'
    )
    for line in lines:
        colour = PALETTE[line.colour % len(PALETTE)]
        points = " ".join(xy(k, v) for k, v in enumerate(line.values, start=1))
        last = xy(len(line.values), line.values[-1]).split(",")
        tip = f"{line.name}: {line.values[-1]:.2f} after {len(line.values)}"
        out.append(
            f'<polyline class="series" points="{points}" stroke="{colour}">'
            f"<title>{escape(tip)}</title></polyline>"
        )
        out.append(f'<circle class="end" cx="{last[0]}" cy="{last[1]}" r="2.5" fill="{colour}"/>')
    out += _legend(legend, _PAD_L, height - 6)
    out.append("</svg>")
    return "\n".join(out)


def share_chart(chart_id: str, title: str, rows: Sequence[Share], *, width: int = 640) -> str:
    """Horizontal bars of part/whole in [0, 1], labelled with the exact fraction."""
    row_h = 24
    height = _PAD_T + row_h * max(len(rows), 1) + 28
    label_w = 120
    plot_w = width - label_w - 90
    out = _open(chart_id, title, width, height, "shares")
    for i, row in enumerate(rows):
        y = _PAD_T + i * row_h
        out.append(
            f'<text class="tick" x="{label_w - 8}" y="{y + 15}" '
            f'text-anchor="end">{escape(row.label)}</text>'
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
    out.append("</svg>")
    return "\n".join(out)
