"""Pages a person reads: the self-contained HTML report."""

from jurat.report._report import (
    ReportReceipt,
    load_receipt_files,
    receipts_from_ledger,
    render_report,
)

__all__ = ["ReportReceipt", "load_receipt_files", "receipts_from_ledger", "render_report"]
