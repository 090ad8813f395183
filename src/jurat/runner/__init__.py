"""Campaign orchestration: the only package that wires the stages together.

``run_campaign_async`` takes the ledger, the signing key and the telemetry sink from its
caller and opens the judge engine itself unless given one; the command line
(``jurat.cli``) runs ``preflight`` before it opens anything, opens the rest and prints
the summary (``runner/_summary.py`` computes it) of what the run returns.
"""

from jurat.runner._budget import check_budget_executor, recorded_spend
from jurat.runner._captures import Captured, capture_references, record_captures
from jurat.runner._datasets import Inventory, check_artifacts, intake, iter_artifacts
from jurat.runner._execute import Execution
from jurat.runner._intake import (
    EXPLAINED_KINDS,
    check_destinations,
    intake_artifact,
    intake_spec,
)
from jurat.runner._job import JobResult, Progress, check_pool, context_digests, job_cost
from jurat.runner._live import refuse_changed_policy
from jurat.runner._proofs import write_proofs
from jurat.runner._ray import TASK_NAME, check_ray_options, import_ray, run_on_ray
from jurat.runner._ray_jobs import RayJobs
from jurat.runner._replay import Replay, ReplayedReceipt, ledger_url, replay_ledger
from jurat.runner._rerun import resumable_run_id
from jurat.runner._run import (
    JobRunner,
    RunOptions,
    artifacts_in_flight,
    preflight,
    run_campaign_async,
)
from jurat.runner._selection import Selection, not_selected_line, plan_line
from jurat.runner._selftest import (
    ALL_CONTROLS,
    CONTROLS_FOR,
    Check,
    Miss,
    selftest_judge,
    selftest_preflight,
)
from jurat.runner._shards import (
    SWITCH_INTERVAL_S,
    Gathered,
    start_workers,
    tuned_for_jobs,
    workers_for,
)
from jurat.runner._summary import JudgeHealth, RunTally, outcome_text, wide_console
from jurat.runner._upstream import (
    UPSTREAM_BYTES,
    KnownUpstream,
    StageKey,
    UpstreamRefused,
    check_upstream,
    known_from_ledger,
    stage_keys,
)
from jurat.runner._work import (
    WORK_RULES,
    Work,
    duplicate_of,
    same_work,
    work_claim,
    work_key,
    work_of,
)

__all__ = [
    "EXPLAINED_KINDS",
    "context_digests",
    "UPSTREAM_BYTES",
    "ALL_CONTROLS",
    "CONTROLS_FOR",
    "SWITCH_INTERVAL_S",
    "TASK_NAME",
    "Captured",
    "Check",
    "Miss",
    "Execution",
    "Gathered",
    "Inventory",
    "JobRunner",
    "JobResult",
    "JudgeHealth",
    "KnownUpstream",
    "Progress",
    "RayJobs",
    "Replay",
    "ReplayedReceipt",
    "RunOptions",
    "RunTally",
    "Selection",
    "StageKey",
    "UpstreamRefused",
    "artifacts_in_flight",
    "capture_references",
    "check_budget_executor",
    "check_artifacts",
    "check_pool",
    "check_destinations",
    "check_ray_options",
    "check_upstream",
    "import_ray",
    "intake",
    "intake_artifact",
    "intake_spec",
    "iter_artifacts",
    "job_cost",
    "known_from_ledger",
    "ledger_url",
    "not_selected_line",
    "plan_line",
    "outcome_text",
    "preflight",
    "record_captures",
    "recorded_spend",
    "refuse_changed_policy",
    "tuned_for_jobs",
    "replay_ledger",
    "resumable_run_id",
    "run_campaign_async",
    "run_on_ray",
    "selftest_judge",
    "selftest_preflight",
    "stage_keys",
    "start_workers",
    "wide_console",
    "write_proofs",
    "workers_for",
    "WORK_RULES",
    "Work",
    "duplicate_of",
    "same_work",
    "work_claim",
    "work_key",
    "work_of",
]
