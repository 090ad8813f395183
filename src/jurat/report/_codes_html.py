"""Markup of reason codes, gate-failure counts and an adjudication (``_codes``), shared by the
public board, the HTML report and ``jurat diff --html``. Every text passes ``html.escape``."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from jurat.report._codes import AdjudicationNote, GateFailure, Reason

__all__ = ["CODES_CSS", "adjudication_markup", "codes_markup"]

CODES_CSS = """
ul.codes { list-style: none; margin: 0; padding: 0; }
ul.codes li { display: inline-block; margin: 0 4px 2px 0; padding: 0 5px; font-size: 11.5px;
  border: 1px solid var(--line); border-radius: 8px; overflow-wrap: anywhere;
  font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
ul.codes li.gate-failure { color: var(--bad); border-color: var(--bad); }
p.adjudication { margin: 4px 0 0; font-size: 12px; }
p.rationale { margin: 2px 0 0; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere;
  max-width: 40em; }
p.rationale.private { color: var(--muted); font-style: italic; }
"""


def codes_markup(reasons: Sequence[Reason], failures: Sequence[GateFailure]) -> str:
    """``ul.codes``: one ``li.reason`` per code, then one ``li.gate-failure`` per kind;
    nothing when there are neither."""
    items = [f'<li class="reason" data-code="{escape(r.code)}">{escape(r.text())}</li>'
             for r in reasons]
    items += [f'<li class="gate-failure" data-kind="{escape(f.kind)}" data-count="{f.count}">'
              f"{escape(f.text)}</li>" for f in failures]
    return f'<ul class="codes">{"".join(items)}</ul>' if items else ""


def adjudication_markup(note: AdjudicationNote | None) -> str:
    """``p.adjudication`` (what the panel said, who decided what, when) and the rationale
    where the reviewer marked it public; nothing without an adjudication."""
    if note is None:
        return ""
    why = (f'<p class="rationale public">rationale: {escape(note.rationale)}</p>'
           if note.rationale is not None else
           '<p class="rationale private">rationale not published by the reviewer</p>')
    return (f'<p class="adjudication" data-reviewer="{escape(note.reviewer)}" '
            f'data-at="{escape(note.at)}" data-panel="{escape(note.panel)}">'
            f"{escape(note.text)}</p>{why}")
