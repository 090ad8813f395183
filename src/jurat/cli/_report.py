"""``jurat report SOURCE --html FILE``: the HTML report over a ledger or a receipts directory.

Exit 0 written; 3 the source could not be read (or holds something that is not a jurat
receipt) or the page could not be written.
"""

from __future__ import annotations

from pathlib import Path

from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._text import err_console
from jurat.errors import ConfigError, IntakeError, JuratError
from jurat.ledger import open_ledger
from jurat.receipts import read_statement, receipt_path_for
from jurat.report import ReportReceipt, load_receipt_files, render_report
from jurat.runner import ledger_url

__all__ = ["report_command"]


def report_command(source: str, html: Path, key_path: Path | None) -> ExitCode:
    """Render the report from ``source`` (a ledger URL or file, or a receipts directory)."""
    path = Path(source)
    try:
        if path.is_dir():
            receipts = [ReportReceipt.model_validate(r)
                        for r in load_receipt_files(path, key_path=key_path)]
        else:
            receipts = _receipts_from_ledger(source, key_path)
        page = render_report(receipts)
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    try:
        html.write_text(page, encoding="utf-8")
    except OSError as exc:
        return print_error(ConfigError(f"cannot write {html}: {exc.strerror or exc}"))
    err_console().print(f"report: {html} ({len(receipts)} receipts)", markup=False)
    return ExitCode.OK


def _receipts_from_ledger(url: str, key_path: Path | None) -> list[ReportReceipt]:
    """The latest receipt of each (campaign, artifact), decoded (bounded, not verified)."""
    latest: dict[tuple[str, str], ReportReceipt] = {}
    key = str(key_path) if key_path is not None else None
    with open_ledger(ledger_url(url), create=False) as ledger:
        for entry, signed in ledger.receipts():
            try:
                statement = read_statement(signed)
            except JuratError as exc:
                raise IntakeError(f"ledger entry {entry.seq}: not a jurat receipt: {exc}") from exc
            predicate = statement["predicate"]
            campaign = predicate.get("campaign")
            artifact = predicate.get("artifact")
            campaign_id = str(campaign.get("id")) if isinstance(campaign, dict) else "None"
            artifact_id = (str(artifact.get("id", f"seq-{entry.seq}"))
                           if isinstance(artifact, dict) else f"seq-{entry.seq}")
            latest[(campaign_id, artifact_id)] = ReportReceipt(
                statement=statement,
                receipt_path=str(receipt_path_for(Path(), artifact_id)),
                key_path=key,
            )
    return list(latest.values())
