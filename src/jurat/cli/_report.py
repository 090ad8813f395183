"""``jurat report SOURCE --html FILE``: the HTML report over a ledger or a receipts directory.

``--operator`` adds the operator section (report/_operator.py), read from a ledger: a
receipts directory holds no judge answer, subject output or record of the hidden tests'
run, which is what it shows (with what a reviewer reads over HTTP, docs/service.md).

Exit 0 written; 3 the source could not be read (or holds something that is not a jurat
receipt), ``--operator`` was given a receipts directory, or the page could not be written.
"""

from __future__ import annotations

from pathlib import Path

from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._text import err_console
from jurat.errors import ConfigError, JuratError
from jurat.ledger import open_ledger
from jurat.report import (
    OperatorRecord,
    ReportReceipt,
    load_receipt_files,
    operator_record,
    receipts_from_ledger,
    render_report,
)
from jurat.runner import ledger_url

__all__ = ["report_command"]


def report_command(source: str, html: Path, key_path: Path | None, *,
                   operator: bool = False) -> ExitCode:
    """Render the report from ``source`` (a ledger URL or file, or a receipts directory)."""
    path = Path(source)
    record: OperatorRecord | None = None
    try:
        if path.is_dir():
            if operator:
                raise ConfigError(
                    f"--operator: {source} is a receipts directory, and receipts hold no judge "
                    "answer, subject output or record of the hidden tests' run (fix: give "
                    "the ledger of the run, e.g. sqlite:///jurat.db)")
            receipts = load_receipt_files(path, key_path=key_path)
        else:
            receipts, record = _receipts_from_ledger(source, key_path, operator=operator)
        page = render_report(receipts, operator=record)
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    try:
        html.write_text(page, encoding="utf-8")
    except OSError as exc:
        return print_error(ConfigError(f"cannot write {html}: {exc.strerror or exc}"))
    err_console().print(f"report: {html} ({len(receipts)} receipts)", markup=False)
    return ExitCode.OK


def _receipts_from_ledger(url: str, key_path: Path | None, *, operator: bool
                          ) -> tuple[list[ReportReceipt], OperatorRecord | None]:
    """Every review version of every receipt in the ledger (the report tags superseded
    ones), and the operator section's rows when asked for."""
    with open_ledger(ledger_url(url), create=False) as ledger:
        receipts = receipts_from_ledger(ledger, source=url, key_path=key_path)
        return receipts, operator_record(ledger) if operator else None
