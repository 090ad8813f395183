"""A live campaign never changes (seed 000: "Do not lower the threshold after observing an
inconvenient result").

Once a ledger holds a job of a campaign, that campaign id and ``task_version`` are bound
to the policy the job was judged under. ``jurat run`` and ``jurat serve`` refuse a
campaign file whose policy digests otherwise, before anything is sent or written: a
changed rubric, threshold, panel or test file is a new campaign, with a new ``[campaign]
id``, or a new version of it (``task_version``), never the same verdicts re-decided.
"""

from __future__ import annotations

from jurat.errors import ConfigError
from jurat.ledger import Ledger
from jurat.models import Campaign, policy_digest

__all__ = ["refuse_changed_policy"]


def refuse_changed_policy(campaign: Campaign, ledger: Ledger) -> None:
    """ConfigError (exit 3) when ``ledger`` holds ``campaign``'s id and task_version under
    another policy."""
    mine = policy_digest(campaign.policy)
    version = campaign.policy.task_version
    # Every job of a campaign version is received under one policy (this rule), so the
    # first one recorded stands for all. Jobs of other task_versions come first in the
    # log only while a new version has none yet: the read stops at the first job of this
    # version, or reads the older versions' jobs once, on the new version's first run.
    first = next((e for e in ledger.entries(kind="job_received", campaign_id=campaign.id)
                  if e.payload.get("task_version", "1") == version), None)
    theirs = None if first is None else first.payload.get("policy_sha256")
    if theirs is None or theirs == mine:
        return
    raise ConfigError(
        f"campaign {campaign.id!r} (task_version {version!r}) is in the ledger under another "
        f"policy (sha256 {theirs}); "
        f"this file's policy is {mine}. A live campaign never changes (fix: give the changed "
        "campaign a new [campaign] id, or raise its task_version, or use another ledger)"
    )
