"""Campaign orchestration: the only package that wires the stages together.

``run_campaign_async`` takes the ledger, the signing key and the telemetry sink from its
caller and opens the judge engine itself; the command line (``jurat.cli``) opens the
first three and prints what the run returns.
"""

from jurat.runner._execute import Execution
from jurat.runner._intake import check_destinations, intake, intake_artifact
from jurat.runner._job import JobResult, Progress, job_cost
from jurat.runner._replay import Replay, ReplayedReceipt, ledger_url, replay_ledger
from jurat.runner._run import RunOptions, run_campaign_async
from jurat.runner._summary import outcome_text, print_summary

__all__ = [
    "Execution",
    "JobResult",
    "Progress",
    "Replay",
    "ReplayedReceipt",
    "RunOptions",
    "check_destinations",
    "intake",
    "intake_artifact",
    "job_cost",
    "ledger_url",
    "outcome_text",
    "print_summary",
    "replay_ledger",
    "run_campaign_async",
]
