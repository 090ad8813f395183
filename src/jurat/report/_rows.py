"""Which receipts the report lists, how their review versions relate, and in what order.

Every review version is listed (docs/design.md: each (job, review version) ends with exactly
one receipt; a changed artifact or policy gets the next version, which ``supersedes`` the
previous one). Versions are grouped by (campaign id, artifact id), the key the ledger gives
review versions by (``Ledger.next_review``); within a group the highest version is current
and every other one is superseded by the next higher version listed.

The order (docs/report.md, "Order of the rows"): by campaign id; then by how the current
version's decision reads, worst first (``jurat.models.tone_of``: reject, BLOCK, different;
then escalate, WARN, undecided and unreadable decisions; then accept, SHIP, equivalent);
then by artifact id; an artifact's superseded versions right after its current one, newest
first. Ties keep the input order, so the page stays deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

from jurat.models import Tone
from jurat.report._report_data import ArtifactView

__all__ = ["SEVERITY", "current", "display_order", "tag_versions"]

#: Rank of a decision's tone in the listing: what needs a person first.
SEVERITY: dict[Tone, int] = {"bad": 0, "hold": 1, "none": 1, "good": 2}


def _key(view: ArtifactView) -> tuple[str, str]:
    return view.campaign_id, view.artifact_id


def tag_versions(views: Sequence[ArtifactView]) -> list[ArtifactView]:
    """Each view with ``superseded_by`` (the next higher version listed) and ``versions``."""
    groups: dict[tuple[str, str], list[int]] = {}
    for v in views:
        groups.setdefault(_key(v), []).append(v.review_version)
    out = []
    for v in views:
        versions = sorted(set(groups[_key(v)]))
        later = [n for n in versions if n > v.review_version]
        out.append(v.model_copy(update={
            "superseded_by": later[0] if later else None,
            "versions": len(groups[_key(v)]),
        }))
    return out


def current(views: Sequence[ArtifactView]) -> list[ArtifactView]:
    """The current version of each artifact: what the aggregates (charts) read."""
    return [v for v in views if not v.superseded]


def display_order(views: Sequence[ArtifactView]) -> list[ArtifactView]:
    """The rows in the documented order (module docstring)."""
    severity: dict[tuple[str, str], int] = {}
    for v in current(views):
        severity.setdefault(_key(v), SEVERITY[v.tone])
    return sorted(views, key=lambda v: (
        v.campaign_id,
        severity.get(_key(v), SEVERITY[v.tone]),
        v.artifact_id,
        -v.review_version,
        v.index,
    ))
