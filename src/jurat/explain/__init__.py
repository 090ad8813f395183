"""The evidence behind a decision: in the operator's words, root cause first (``_lines``),
and as reason codes for trusted outputs (``_codes``). Below the runner and the report, so
neither imports the other."""

from jurat.explain._codes import REASON_CODES, Reason, reason_codes
from jurat.explain._lines import Line, gate_lines, not_passed, record_lines, root_causes

__all__ = ["REASON_CODES", "Line", "Reason", "gate_lines", "not_passed", "reason_codes",
           "record_lines", "root_causes"]
