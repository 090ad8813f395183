"""``jurat diff BASE NEW``: artifacts whose decision or reasons changed (report/_diff.py).

Prints a table of the changed artifacts (decision changes first) and a count line;
``--json FILE`` writes ``jurat.diff/v1`` and ``--html FILE`` a page. Exit 0 when the diff
was made, whether or not anything changed (``--fail-on-change``: 2 when a decision
changed, for a CI step that must not let one through); 3 when a side could not be read or
a file not written.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._text import shown
from jurat.errors import ConfigError, JuratError
from jurat.report._diff import (
    Diff,
    DiffEntry,
    compare,
    diff_html,
    diff_json,
    read_side,
    reason_text,
)

__all__ = ["diff_command"]


def _write(path: Path, text: str, option: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot write: {exc.strerror or exc}") from exc


def _side(e: DiffEntry | None) -> str:
    return "—" if e is None else f"{e.decision or 'none'} ({reason_text(e.reasons)})"


def _print(diff: Diff) -> None:
    out = Console(emoji=False, highlight=False)
    if diff.rows:
        table = Table(title=f"{shown(diff.base.source)} → {shown(diff.new.source)}",
                      title_justify="left")
        for name in ("artifact", "change", "base", "new", "new receipt"):
            # A receipt path folds rather than being cut: it is what the reader copies.
            table.add_column(name, overflow="fold")
        for r in diff.rows:
            latest = r.new or r.base
            receipt = latest.receipt if latest is not None else None
            table.add_row(shown(r.artifact), r.change, shown(_side(r.base)),
                          shown(_side(r.new)), shown(receipt or "unknown"))
        out.print(table)
    counts = ", ".join(f"{diff.count(c)} {c}" for c in ("decision", "reasons", "added",
                                                         "removed"))
    out.print(f"diff: {diff.compared} artifacts on both sides; changed: {counts}",
              markup=False, highlight=False, soft_wrap=True)


def diff_command(base: str, new: str, *, campaign: str | None, base_campaign: str | None,
                 json_path: Path | None, html_path: Path | None,
                 fail_on_change: bool = False) -> ExitCode:
    """Compare two sides and report what changed (module docstring)."""
    try:
        diff = compare(read_side(base), read_side(new), campaign=campaign,
                       base_campaign=base_campaign)
        if json_path is not None:
            _write(json_path, json.dumps(diff_json(diff), indent=2) + "\n", "--json")
        if html_path is not None:
            _write(html_path, diff_html(diff), "--html")
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    _print(diff)
    if fail_on_change and diff.count("decision"):
        return ExitCode.REJECT
    return ExitCode.OK
