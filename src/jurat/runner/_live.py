"""A live campaign never changes (seed 000: "Do not lower the threshold after observing an
inconvenient result").

Once a ledger holds a job of a campaign, that campaign id is bound to the policy the job
was judged under. ``jurat run`` and ``jurat serve`` refuse a campaign file whose policy
digests otherwise, before anything is sent or written: a changed rubric, threshold,
panel or test file is a new campaign, with a new ``[campaign] id``, or a new version of
it (``task_version``), never the same verdicts re-decided.
"""

from __future__ import annotations

from jurat.errors import ConfigError
from jurat.ledger import Ledger
from jurat.models import Campaign, policy_digest

__all__ = ["refuse_changed_policy"]


def refuse_changed_policy(campaign: Campaign, ledger: Ledger) -> None:
    """ConfigError (exit 3) when ``ledger`` holds ``campaign``'s id under another policy."""
    mine = policy_digest(campaign.policy)
    # Every job of a campaign is received under one policy (this rule), so the first
    # one recorded stands for all: one indexed read, whatever the campaign's size.
    first = next(ledger.entries(kind="job_received", campaign_id=campaign.id), None)
    theirs = None if first is None else first.payload.get("policy_sha256")
    if theirs is None or theirs == mine:
        return
    raise ConfigError(
        f"campaign {campaign.id!r} is in the ledger under another policy (sha256 {theirs}); "
        f"this file's policy is {mine}. A live campaign never changes (fix: give the changed "
        "campaign a new [campaign] id, or raise its task_version, or use another ledger)"
    )
