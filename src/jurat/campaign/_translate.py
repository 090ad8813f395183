"""Campaign-file problems in plain words: pydantic's errors translated, unknown keys named.

``translate`` is where a ``pydantic.ValidationError`` about a campaign file is converted:
the one translator (``models/_invalid.py``) in the campaign file's words. A place is named
as the file writes it (``checks.python.tests``, not the payload's ``policy.python.tests``),
a fix gives an example of the key where one is known, and a table is named as it is written
(``[[judges]]``, ``[checks.python]``). Unknown keys get the closest key the table takes
(``difflib``), or the table they belong in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pydantic

from jurat.models._artifact import ArtifactSpec, IntakeLimits
from jurat.models._budget import Budget
from jurat.models._campaign import Campaign, UpstreamTrust
from jurat.models._checks import PythonChecks
from jurat.models._datasets import DatasetSpec
from jurat.models._invalid import Words, pattern_of
from jurat.models._invalid import translate as translate_problems
from jurat.models._judge import JudgeConfig
from jurat.models._monitor import MonitorBounds
from jurat.models._policy import CriteriaSuite, EquivalencePolicy, Rubric
from jurat.models._problems import Loc, Problem, close_match, dotted
from jurat.models._suite_gate import SuiteGate
from jurat.models._task import TaskSpec

__all__ = ["CAMPAIGN_KEYS", "TABLES", "Found", "keys_of", "home_of", "toml_loc", "translate",
           "unknown_key"]

#: The keys of ``[campaign]``: the policy's own fields (the other fields are tables).
CAMPAIGN_KEYS = (
    "id",
    "kind",
    "risk_tier",
    "allowed_destinations",
    "task_version",
    "min_valid_fraction",
    "judge_after_veto",
    "same_work",
)
#: The tables a campaign file may hold.
TABLES = (
    "campaign", "intake", "rubric", "criteria", "equivalence", "checks", "subject", "judges",
    "artifacts", "datasets", "upstream", "grounding", "monitor", "tasks", "budget",
    "gate",
)
#: Where each table's keys are listed, for "did you mean" and "belongs in".
_KEYS: dict[str, tuple[str, ...]] = {
    "[campaign]": CAMPAIGN_KEYS,
    "[intake]": tuple(IntakeLimits.model_fields),
    "[rubric]": tuple(Rubric.model_fields),
    "[criteria]": tuple(CriteriaSuite.model_fields),
    "[equivalence]": tuple(EquivalencePolicy.model_fields),
    "[checks.python]": tuple(PythonChecks.model_fields),
    "[subject]": (*JudgeConfig.model_fields, "prompt"),
    "[[judges]]": tuple(JudgeConfig.model_fields),
    "[[artifacts]]": tuple(ArtifactSpec.model_fields),
    "[[tasks]]": tuple(TaskSpec.model_fields),
    "[[datasets]]": tuple(DatasetSpec.model_fields),
    "[upstream]": tuple(UpstreamTrust.model_fields),
    "[monitor]": tuple(MonitorBounds.model_fields),
    "[budget]": tuple(Budget.model_fields),
    "[gate]": tuple(SuiteGate.model_fields),
}
#: Examples of fields users most often leave out or get wrong, by TOML place ("*": any index).
_EXAMPLES: dict[tuple[str, ...], str] = {
    ("campaign", "id"): 'id = "fizzbuzz"',
    ("campaign", "kind"): 'kind = "rubric" (or "pairwise", "criteria", "equivalence")',
    ("rubric", "version"): 'version = "code-review/1"',
    ("rubric", "criteria"): 'criteria = [{ id = "correctness", weight = 1.0 }]',
    ("rubric", "criteria", "*", "id"): 'id = "correctness"',
    ("criteria", "items"): 'items = [{ id = "cites-source", text = "Does it cite a source?" }]',
    ("criteria", "items", "*", "id"): 'id = "cites-source"',
    ("judges", "*", "id"): 'id = "judge-a"',
    ("judges", "*", "provider"): 'provider = "sim"',
    ("subject", "prompt"): 'prompt = "Answer briefly: {input}"',
    ("artifacts",): 'add an [[artifacts]] table with id = "c1" and path = "submission.py"',
    ("datasets", "*", "path"): 'path = "items.jsonl" (or a .csv file with a header row)',
    ("artifacts", "*", "id"): 'id = "c1"',
    ("campaign", "risk_tier"): 'risk_tier = "standard"',
    ("artifacts", "*", "sha256"): "sha256 = the artifact's sha256 in hex, or remove the key",
    ("artifacts", "*", "truth"): 'truth = "accept" (a label of the campaign\'s kind; see '
    'docs/campaign-format.md, "truth labels")',
    ("upstream", "keys"): 'keys = [{ path = "keys/stage1.pub", stage = "stage1" }]',
    ("upstream", "keys", "*", "stage"): 'stage = "stage1"',
    ("artifacts", "*", "upstream"): 'upstream = ["receipts/c1.stage1.json"]',
}
#: What a constrained string looks like, by TOML place, instead of the pattern itself.
_FORMS: dict[tuple[str, ...], str] = {
    ("artifacts", "*", "id"): "only letters, digits, '.', '_' and '-'",
    ("artifacts", "*", "sha256"): "64 lowercase hexadecimal digits (a sha256)",
    ("upstream", "keys", "*", "stage"): "lowercase letters, digits, '.', '_' and '-', at "
    "most 64, starting with a letter or digit",
}
#: How messages name a table or an inline table, by TOML place.
_TABLE_NAMES: dict[tuple[str, ...], str] = {
    ("judges", "*"): "[[judges]]",
    ("artifacts", "*"): "[[artifacts]]",
    ("datasets", "*"): "[[datasets]]",
    ("checks", "python"): "[checks.python]",
    ("rubric", "criteria", "*"): "a [rubric] criterion",
    ("criteria", "items", "*"): "a [criteria] item",
    ("checks", "python", "limits"): "[checks.python] limits",
    ("grounding", "references", "*"): "[[grounding.references]]",
    ("grounding", "claims", "*"): "[[grounding.claims]]",
    ("campaign", "risk_tier"): "risk_tier",
}
#: What a key takes, where its declared type does not say it (a name is resolved first).
_EXPECTED: dict[tuple[str, ...], str] = {
    ("campaign", "risk_tier"): 'a tier name ("standard", "elevated", "critical") or a table '
    "{ votes = 3, min_agreement = 0.67 }",
}
#: What one entry of a list is called, by TOML place.
_ENTRY: dict[tuple[str, ...], str] = {
    ("rubric", "criteria"): "criterion",
    ("criteria", "items"): "criterion",
    ("artifacts",): "artifact",
    ("datasets",): "dataset",
    ("judges",): "judge",
}


Found = Problem
"""A problem located in the file: its TOML place (``("judges", 0, "provider")``, whose line
is looked up last), message and fix."""


def unknown_key(loc: Loc, table: str) -> Found:
    """``loc`` ends with a key ``table`` does not take: the closest known key, or the table
    it belongs in, or the keys ``table`` takes."""
    key = str(loc[-1])
    known = _KEYS[table]
    guess = close_match(key, known)
    if guess is not None:
        return Found(loc, f"unknown key {key!r} in {table}; did you mean {guess!r}?",
                     f"rename it to {guess}")
    home = home_of(key, besides=table)
    if home:
        return Found(loc, f"unknown key {key!r} in {table}; it is a key of {home}",
                     f"move it to {home}")
    return Found(loc, f"unknown key {key!r} in {table}",
                 f"remove it or check the spelling; {table} takes {keys_of(table)}")


def home_of(key: str, *, besides: str = "") -> str | None:
    """The tables (other than ``besides``) that take ``key``: "[rubric]", or None."""
    homes = [table for table, keys in _KEYS.items() if key in keys and table != besides]
    return " or ".join(homes) if homes else None


def keys_of(table: str) -> str:
    """The keys ``table`` takes, for a fix that lists them."""
    return ", ".join(_KEYS[table])


def toml_loc(loc: Sequence[str | int]) -> Loc:
    """A place in the validated payload (``policy.python.tests``) as a place in the file
    (``checks.python.tests``)."""
    if not loc or loc[0] != "policy":
        return tuple(loc)
    rest = tuple(loc[1:])
    if not rest:
        return ("campaign",)
    field, tail = rest[0], rest[1:]
    if field == "python":
        return ("checks", "python", *tail)
    if field == "subject_prompt":
        return ("subject", "prompt")
    if field in ("rubric", "criteria", "equivalence", "judges", "subject", "grounding"):
        return (field, *tail)
    return ("campaign", field, *tail)


class _CampaignWords(Words):
    """The campaign file's words: TOML places, examples of keys, tables as written."""

    docs = "docs/campaign-format.md"

    def place(self, loc: Loc) -> Loc:
        return toml_loc(loc)

    def example(self, pattern: tuple[str, ...]) -> str | None:
        return _EXAMPLES.get(pattern)

    def form(self, pattern: tuple[str, ...]) -> str:
        return _FORMS.get(pattern) or super().form(pattern)

    def expected(self, pattern: tuple[str, ...]) -> str | None:
        return _EXPECTED.get(pattern)

    def entry(self, pattern: tuple[str, ...]) -> str:
        return _ENTRY.get(pattern, "entry")

    def table(self, holder: Loc) -> str:
        return _TABLE_NAMES.get(pattern_of(holder), f"[{dotted(holder)}]")

    def unknown(self, loc: Loc, table: str) -> Problem | None:
        return unknown_key(loc, table) if table in _KEYS else None

    def shaped(self, kind: str, loc: Loc, key: str, value: Any) -> Problem | None:
        if kind in ("tuple_type", "list_type") and isinstance(value, dict) and pattern_of(
                loc) in (("judges",), ("artifacts",), ("datasets",)):
            return Problem(loc, f"each entry is its own [[{key}]] table, not one [{key}] table",
                           f"write [[{key}]] (double brackets) above each entry")
        if kind in ("model_type", "model_attributes_type", "dict_type") and isinstance(
                value, list):
            return Problem(loc, "must be one table, not an array of tables",
                           f"write [{dotted(loc)}] (single brackets), once")
        return None


_WORDS = _CampaignWords()


def translate(
    exc: pydantic.ValidationError, payload: Mapping[str, Any], *, at: Loc = ()
) -> list[Found]:
    """Every error pydantic found validating ``payload`` as a ``Campaign``, in plain words
    naming the field (its place in the file) and the fix.

    Problems a record's own checks raised (``RecordProblems``) keep their words and fixes.
    ``at`` is where in the campaign the validated record sits when it is not the whole
    campaign (a dataset row is validated as the ``[[artifacts]]`` entry ``("artifacts", 0)``).
    """
    return translate_problems(exc, Campaign, payload, at=at, words=_WORDS)
