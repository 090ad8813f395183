"""The generalised judge decision: the ARCV v1 answer over a campaign's own criterion ids.

Seed 000's ARCV Judge Decision v1 schema scores exactly four keys (correctness, reasoning,
adherence, presentation); its reasoning-depth table (assumptions, logical validity,
mathematics, complexity, correction quality, calibration) needs others. A rubric whose ids
are all ARCV keys keeps the seed's schema and templates, byte for byte; any other rubric is
answered in ``jurat-judge-decision-general/v1``: the seed's schema with ``scores`` holding
exactly the rubric's ids, each an integer 1-5, every other field and rule unchanged.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from jurat.judges._validate import arcv_schema
from jurat.models import ARCV_SCORE_KEYS, Rubric

__all__ = [
    "GENERAL_DECISION_TEMPLATE",
    "GENERAL_PAIRWISE_TEMPLATE",
    "GENERAL_SCHEMA_ID",
    "general_ids",
    "general_schema",
]

GENERAL_SCHEMA_ID = "jurat-judge-decision-general/v1"
#: The decision templates for a general rubric (id, version): the same instructions, the
#: schema named for what it is. Version 2 as the ARCV templates' (judges/_prompts.py): gate
#: details and evidence metadata inside data blocks, the call's tag named.
GENERAL_DECISION_TEMPLATE = ("jurat/judge-decision-general", "2")
GENERAL_PAIRWISE_TEMPLATE = ("jurat/pairwise-decision-general", "2")


def general_ids(rubric: Rubric | None) -> tuple[str, ...] | None:
    """The rubric's criterion ids when it needs the general schema; None when every id is an
    ARCV v1 score key (the seed's schema, as before) or there is no rubric."""
    if rubric is None:
        return None
    ids = tuple(c.id for c in rubric.criteria)
    return None if set(ids) <= set(ARCV_SCORE_KEYS) else ids


@cache
def general_schema(ids: tuple[str, ...]) -> dict[str, Any]:
    """The seed's schema with ``scores`` over exactly ``ids`` (integers 1-5), retitled."""
    schema = copy.deepcopy(arcv_schema())
    schema["title"] = "jurat Judge Decision (general criteria) v1"
    schema["properties"]["scores"] = {
        "type": "object",
        "additionalProperties": False,
        "required": list(ids),
        "properties": {cid: {"type": "integer", "minimum": 1, "maximum": 5} for cid in ids},
    }
    return schema
