"""Campaign orchestration: the only package that wires the stages together."""

from jurat.runner._intake import check_destinations, intake, intake_artifact
from jurat.runner._job import JobResult, Progress
from jurat.runner._run import (
    RunOptions,
    exit_code,
    run_campaign_async,
)
from jurat.runner._summary import outcome_text, print_summary

__all__ = [
    "JobResult",
    "Progress",
    "RunOptions",
    "check_destinations",
    "exit_code",
    "intake",
    "intake_artifact",
    "outcome_text",
    "print_summary",
    "run_campaign_async",
]
