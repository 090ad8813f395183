"""Pages a person reads: the self-contained HTML report."""

from jurat.report._report import ReportReceipt, load_receipt_files, render_report

__all__ = ["ReportReceipt", "load_receipt_files", "render_report"]
