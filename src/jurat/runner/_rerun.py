"""A new run evaluates the subject again; resuming an interrupted run is explicit (issue 27).

Seed 001 §3 pins the subject's execution to greedy decoding so that the output a judge
reads is the model's answer, not a random draw: an unchanged model gives the same output,
a changed one a different output. So every `jurat run` of a campaign with a ``[subject]``
executes it afresh, under a run id of its own, and the judging is keyed by what came out:

- the *execution job*, ``{"job": <base job>, "run": <run id>}``: its ``job_received``
  entry records the execution (``execution``, ``run_id``). ``jurat run --resume RUN_ID``
  finds it and executes nothing that run already executed;
- the *judged job*, ``{"job": <base job>, "output": <output key>}``: its samples, decision
  and receipt. An unchanged output is the same job, so its receipt (and every vote in it)
  is reused without a judge call; a changed output is a new job, whose receipt is the
  artifact's next review version and supersedes the previous one (docs/receipt-format.md
  §6.10).

The base job is ``job_identity`` (or the upstream-bound job, runner/_upstream.py). Job ids
are sha256 of RFC 8785 JSON (``digest_json``), like every other job id. Campaigns without a
``[subject]`` have neither job: rerunning the same command resumes them, as before.
"""

from __future__ import annotations

import secrets

from jurat.canonical import digest_json
from jurat.errors import ConfigError
from jurat.ledger import Ledger
from jurat.models import Campaign
from jurat.runner._execute import Execution

__all__ = ["execution_job", "judged_job", "new_run_id", "output_key", "resumable_run_id"]

#: The most characters of an unknown ``--resume`` value an error quotes back.
_SHOWN = 64


def new_run_id() -> str:
    """A fresh run id: 16 hex digits, printed at the start of the run for ``--resume``."""
    return secrets.token_hex(8)


def execution_job(base: str, run_id: str) -> str:
    """The job recording the subject's execution for ``base`` in run ``run_id``."""
    return digest_json({"job": base, "run": run_id})


def output_key(execution: Execution) -> str:
    """What the judges judge: the output's sha256, or for an execution without output
    the digest of its error kind (a failure is evidence too, and the same failure is the
    same evidence; its message, which may carry a timestamp or an address, is not)."""
    if execution.output is not None and execution.output_sha256 is not None:
        return execution.output_sha256
    return digest_json({"error": execution.error or "no output"})


def judged_job(base: str, execution: Execution) -> str:
    """The job judging ``execution``'s output: the same for the same output."""
    return digest_json({"job": base, "output": output_key(execution)})


def resumable_run_id(campaign: Campaign, ledger: Ledger, resume: str | None) -> str | None:
    """The run id a `jurat run` executes the subject under: ``resume`` when the ledger holds
    an execution of that run for this campaign, a fresh one without ``resume``; None for a
    campaign without a ``[subject]`` (nothing to execute, nothing printed).

    Raises ConfigError (exit 3, before anything is written) for an unknown ``resume`` or a
    ``--resume`` of a campaign without a ``[subject]``.
    """
    if campaign.policy.subject is None:
        if resume is not None:
            raise ConfigError(
                f"--resume: campaign {campaign.id!r} has no [subject], so its runs have no "
                "run id (fix: drop --resume; running the same command again resumes from "
                "the ledger without drawing a recorded sample again)")
        return None
    if resume is None:
        return new_run_id()
    # One scan of the campaign's received jobs, once per resumed run.
    for entry in ledger.entries(kind="job_received", campaign_id=campaign.id):
        if entry.payload.get("run_id") == resume:
            return resume
    shown = resume if len(resume) <= _SHOWN else resume[:_SHOWN] + "…"
    raise ConfigError(
        f"--resume {shown!r}: no run of campaign {campaign.id!r} with this id executed "
        f"anything in ledger {ledger.url} (fix: give the run id the interrupted run printed "
        "on this ledger ('run id: …'), or drop --resume to execute the subject again)")
