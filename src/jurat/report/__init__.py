"""Pages a person reads: the self-contained HTML report and the public board."""

from jurat.report._board import BOARD_CSP, BoardSummary, write_board
from jurat.report._report import (
    OperatorRecord,
    ReportReceipt,
    load_receipt_files,
    operator_record,
    receipts_from_ledger,
    render_report,
)

__all__ = [
    "BOARD_CSP",
    "BoardSummary",
    "OperatorRecord",
    "ReportReceipt",
    "load_receipt_files",
    "operator_record",
    "receipts_from_ledger",
    "render_report",
    "write_board",
]
