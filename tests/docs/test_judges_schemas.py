"""docs/judges.md, "Answer schemas" (issue 28): every schema block is the schema the
validator checks answers against, so a model set up from the page answers what jurat
accepts; and an answer built from the documented schema alone passes validation."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from jurat.errors import JudgeOutputError
from jurat.judges._claims import CLAIM_SCHEMA, CLAIM_SCHEMA_ID
from jurat.judges._general import GENERAL_SCHEMA_ID, general_schema
from jurat.judges._validate import (
    ARCV_SCHEMA_ID,
    CRITERION_SCHEMA,
    CRITERION_SCHEMA_ID,
    arcv_schema,
    validate_answer,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "judges.md"
_BLOCK = re.compile(r"<!-- answer-schema: (\S+) -->\n```json\n(.*?)\n```", re.S)


def documented() -> dict[str, Any]:
    found = {m.group(1): json.loads(m.group(2)) for m in _BLOCK.finditer(DOC.read_text())}
    assert found, "no answer-schema block in docs/judges.md"
    return found


def test_every_documented_schema_is_the_one_answers_are_checked_against() -> None:
    expected = {
        ARCV_SCHEMA_ID: arcv_schema(),
        GENERAL_SCHEMA_ID: general_schema(("correctness", "clarity")),
        CRITERION_SCHEMA_ID: CRITERION_SCHEMA,
        CLAIM_SCHEMA_ID: CLAIM_SCHEMA,
    }
    assert documented() == expected


def test_an_answer_to_the_documented_criterion_schema_passes_and_a_wrong_one_names_its_path(
) -> None:
    schema = documented()[CRITERION_SCHEMA_ID]
    good = {"verdict": schema["properties"]["verdict"]["enum"][0], "explanation": "ok"}
    assert validate_answer("criterion", json.dumps(good), artifact_sha256="0" * 64,
                           bundle_size=1)["verdict"] == good["verdict"]
    with pytest.raises(JudgeOutputError) as refused:
        validate_answer("criterion", '{"verdict": "maybe", "explanation": ""}',
                        artifact_sha256="0" * 64, bundle_size=1)
    assert refused.value.kind == "schema_violation" and refused.value.path == "verdict"
