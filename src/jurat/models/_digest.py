"""The digests a policy and a judge are pinned by (``policy_sha256``, ``config_sha256``:
docs/receipt-format.md §6).

A run's every statement pins one policy and its judges; each digest costs about a
hundredth of the run's CPU when recomputed per receipt, so it is computed once per record
and kept with it (``Frozen._sha256``, models/_base.py).
"""

from __future__ import annotations

from jurat.models._base import Frozen

__all__ = ["policy_digest", "record_digest"]


def policy_digest(policy: Frozen) -> str:
    """sha256 of the policy's canonical JSON: the digest pinned into jobs and receipts."""
    return record_digest(policy)


def record_digest(record: Frozen) -> str:
    """sha256 of a record's canonical JSON (``digest_json``), computed once per object."""
    return record._sha256
