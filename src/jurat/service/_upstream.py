"""A job's ``upstream_receipts`` checked as `jurat run` checks an artifact's receipt files
(runner/_upstream.py: stage keys, expiry, supersession, required stages, the threat
model) and refused in HTTP: 422 naming ``upstream_receipts[i]`` (or the list, for a
missing stage) with jurat's own reason, never the bundle's text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import JsonValue

from jurat.canonical import canonical_json
from jurat.errors import JuratError
from jurat.models import Campaign
from jurat.runner import KnownUpstream, StageKey, UpstreamRefused, check_upstream, stage_keys
from jurat.service._errors import ServiceRefusal

__all__ = ["stage_keys", "verify_upstream"]


def _refuse(index: int | None, why: str) -> ServiceRefusal:
    field = "upstream_receipts" if index is None else f"upstream_receipts[{index}]"
    return ServiceRefusal(
        422, f"{field}: {why}; the job was refused and nothing was sampled", field=field,
        fix="submit the current receipt of every stage this campaign requires, of exactly "
            "this artifact, as their signers issued them")


def verify_upstream(bundles: Sequence[dict[str, Any]], campaign: Campaign,
                    keys: Sequence[StageKey], artifact_sha256: str, *,
                    known: KnownUpstream | None = None) -> tuple[dict[str, JsonValue], ...]:
    """Each bundle checked and bound (``check_upstream``), or ServiceRefusal (422) naming
    the first that is not acceptable, or the list when a required stage is missing. A
    campaign without ``[upstream]`` refuses any bundle."""
    if bundles and campaign.upstream is None:
        raise ServiceRefusal(
            422, "this campaign trusts no upstream keys, so it cannot check "
            "upstream receipts; the job was refused", field="upstream_receipts",
            fix="submit without upstream_receipts, or ask the operator to list the "
                "signers' keys in the campaign's [upstream] keys")
    raws = []
    for i, bundle in enumerate(bundles):
        try:
            raws.append(canonical_json(bundle))
        except (JuratError, ValueError, TypeError) as exc:
            raise _refuse(i, "not a JSON bundle jurat can read") from exc
    required = campaign.upstream.stages if campaign.upstream is not None else ()
    try:
        return check_upstream(raws, keys, required, artifact_sha256, known=known)
    except UpstreamRefused as exc:
        raise _refuse(exc.index, exc.reason) from exc
