"""Pages a person reads: the self-contained HTML report and the public board; and the
reader of one job's operator record (``job_record``), which the report's operator section
and the service's reviewer view share."""

from jurat.report._board import BOARD_CSP, BoardSummary, write_board
from jurat.report._job_record import (
    JobRecord,
    JudgeAnswer,
    RecordedChecks,
    ReviewStep,
    artifact_reviews,
    job_record,
)
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
    "JobRecord",
    "JudgeAnswer",
    "OperatorRecord",
    "RecordedChecks",
    "ReportReceipt",
    "ReviewStep",
    "artifact_reviews",
    "job_record",
    "load_receipt_files",
    "operator_record",
    "receipts_from_ledger",
    "render_report",
    "write_board",
]
