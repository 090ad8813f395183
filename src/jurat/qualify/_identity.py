"""A judge's identity: what a qualification record names it by (``_record``) and a campaign
requiring the record matches it against (``_require``)."""

from __future__ import annotations

from jurat.canonical import digest_json
from jurat.models import JudgeConfig

__all__ = ["judge_identity"]

#: What does not change a judge's answers: its name in a campaign, how many samples a
#: campaign asks of it, its limits, prices and spacing, and the requirement itself.
_NOT_IDENTITY = frozenset({
    "id", "samples", "max_concurrency", "retries", "rpm", "tpm", "timeout_s",
    "price_in_per_mtok", "price_out_per_mtok", "spacing_ms", "qualification",
    "api_key_env", "model_family", "latency_ms",
})


def judge_identity(judge: JudgeConfig) -> str:
    """sha256 of the judge's configuration that makes its answers (``_NOT_IDENTITY`` out)."""
    return digest_json(judge.model_dump(mode="json", exclude=set(_NOT_IDENTITY)))
