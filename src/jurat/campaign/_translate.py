"""Campaign-file problems in plain words: pydantic's errors translated, unknown keys named.

``translate`` is the one place a ``pydantic.ValidationError`` about a campaign file is
converted: a third-party error is translated in exactly one place. No library
text passes through: a message is made from the error's kind, the field's declared type and
bounds, and the value found, and its fix from an example of the key or its declared range.
Unknown keys get the closest key the table takes (``difflib``), or the table they belong in.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import annotated_types
import pydantic
from pydantic.fields import FieldInfo

from jurat.models._artifact import ArtifactSpec, IntakeLimits
from jurat.models._campaign import Campaign, UpstreamTrust
from jurat.models._checks import PythonChecks
from jurat.models._datasets import DatasetSpec
from jurat.models._judge import JudgeConfig
from jurat.models._monitor import MonitorBounds
from jurat.models._policy import CriteriaSuite, EquivalencePolicy, Rubric
from jurat.models._problems import Loc, RecordProblems, close_match, dotted

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
)
#: The tables a campaign file may hold.
TABLES = (
    "campaign", "intake", "rubric", "criteria", "equivalence", "checks", "subject", "judges",
    "artifacts", "datasets", "upstream", "grounding", "monitor",
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
    "[[datasets]]": tuple(DatasetSpec.model_fields),
    "[upstream]": tuple(UpstreamTrust.model_fields),
    "[monitor]": tuple(MonitorBounds.model_fields),
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
}
#: What a constrained string looks like, by TOML place, instead of the pattern itself.
_FORMS: dict[tuple[str, ...], str] = {
    ("artifacts", "*", "id"): "only letters, digits, '.', '_' and '-'",
    ("artifacts", "*", "sha256"): "64 lowercase hexadecimal digits (a sha256)",
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


class Found(NamedTuple):
    """A problem located in the file: its TOML place, message and fix."""

    loc: Loc
    """The place in the file: ``("judges", 0, "provider")``; its line is looked up last."""
    message: str
    """What is wrong, naming the value found."""
    fix: str
    """What to write instead."""


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


def _pattern(loc: Loc) -> tuple[str, ...]:
    return tuple("*" if isinstance(part, int) else part for part in loc)


class _Field(NamedTuple):
    """Where a validation error is, read against the records' fields."""

    loc: Loc
    """The payload place of the field the error is about (a union's member tags cut off)."""
    info: FieldInfo | None
    """That field (None: the error is about a whole record, or a key it does not have)."""
    record: type[pydantic.BaseModel] | None
    """The record at the end of ``loc`` (a table), if it is one."""


def _field_at(loc: Sequence[str | int]) -> _Field:
    """Follow ``loc`` through the records' fields, from ``Campaign`` down."""
    record: type[pydantic.BaseModel] | None = Campaign
    info: FieldInfo | None = None
    walked: list[str | int] = []
    for part in loc:
        if isinstance(part, int):
            walked.append(part)
            continue
        if record is None or part not in record.model_fields:
            # A key the record does not have, or a union member tag ("str", "dict[str,str]").
            if record is not None:
                walked.append(part)
                info = None
            break
        info = record.model_fields[part]
        record = _record_in(info.annotation)
        walked.append(part)
    return _Field(tuple(walked), info, record)


def _record_in(annotation: Any) -> type[pydantic.BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _record_in(arg)
        if found is not None:
            return found
    return None


def _value_at(payload: Any, loc: Loc) -> Any:
    for part in loc:
        if isinstance(part, int) and isinstance(payload, list) and 0 <= part < len(payload):
            payload = payload[part]
        elif isinstance(part, str) and isinstance(payload, dict) and part in payload:
            payload = payload[part]
        else:
            return None
    return payload


def translate(
    exc: pydantic.ValidationError, payload: Mapping[str, Any], *, at: Loc = ()
) -> list[Found]:
    """Every error pydantic found, in plain words naming the field and the fix.

    The one place a ``pydantic.ValidationError`` about a campaign file is converted. No
    library text passes through: messages are made from the error's kind, the field's
    declared type and bounds, and the value found. Problems a record's own checks raised
    (``RecordProblems``) keep their words and fixes. ``at`` is where in the campaign the
    validated record sits when it is not the whole campaign (a dataset row is validated
    as the ``[[artifacts]]`` entry ``("artifacts", 0)``).
    """
    found: list[Found] = []
    for error in exc.errors():
        loc = (*at, *error["loc"])
        cause = error.get("ctx", {}).get("error")
        if isinstance(cause, RecordProblems):
            found += [Found(toml_loc((*loc, *p.loc)), p.message, p.fix)
                      for p in cause.problems]
            continue
        kind = str(error["type"])
        if kind == "extra_forbidden":
            found.append(_extra(loc))
            continue
        where = _field_at(loc)
        value = _value_at(payload, where.loc)
        least = error.get("ctx", {}).get("min_length")
        if kind == "too_short" and isinstance(value, list) and len(value) >= int(least or 1):
            # pydantic counts only the entries that validated; the others are reported.
            continue
        found.append(_plain(kind, dict(error.get("ctx", {})), where, value))
    return found


def _extra(loc: Sequence[str | int]) -> Found:
    """An unknown key inside a table: named with the closest key the table takes."""
    toml = toml_loc(loc)
    holder = toml_loc(loc[:-1])
    pattern = _pattern(holder)
    table = _TABLE_NAMES.get(pattern, f"[{dotted(holder)}]")
    if table in _KEYS:
        return unknown_key(toml, table)
    # An inline table (a criterion, limits, risk_tier): the keys are its record's fields.
    record = _field_at(loc[:-1]).record
    keys = tuple(record.model_fields) if record is not None else ()
    key = str(loc[-1])
    guess = close_match(key, keys)
    if guess is not None:
        return Found(toml, f"unknown key {key!r} in {table}; did you mean {guess!r}?",
                     f"rename it to {guess}")
    return Found(toml, f"unknown key {key!r} in {table}",
                 f"remove it or check the spelling; {table} takes {', '.join(keys)}")


def _plain(kind: str, ctx: dict[str, Any], where: _Field, value: Any) -> Found:
    """One validation error about one field (or one whole record), in plain words."""
    loc = toml_loc(where.loc)
    key = str(next((p for p in reversed(loc) if isinstance(p, str)), ""))
    pattern = _pattern(loc)
    example = _EXAMPLES.get(pattern)
    info = where.info
    expected = _EXPECTED.get(pattern) or (
        _describe(info.annotation) if info is not None else "a table")
    got = _shown(value)
    if kind == "missing":
        return Found(loc, "is required and missing", f"add {example or key + ' = …'}")
    if kind in ("too_short", "too_long"):
        entry = _ENTRY.get(pattern, "entry")
        if kind == "too_short":
            least = int(ctx.get("min_length", 1))
            count = "one" if least == 1 else str(least)
            return Found(loc, f"give at least {count} {entry}",
                         example or f"add {entry} entries to {key}")
        return Found(loc, f"has {ctx.get('actual_length')} entries; at most "
                     f"{ctx.get('max_length')} are allowed", f"remove {entry} entries")
    if kind == "string_too_short":
        return Found(loc, "must not be empty", example or f'{key} = "…"')
    if kind == "string_too_long":
        return Found(loc, f"is {len(value) if isinstance(value, str) else '?'} characters "
                     f"long; at most {ctx.get('max_length')} are allowed", "shorten it")
    if kind == "string_pattern_mismatch":
        form = _FORMS.get(pattern, "the form docs/campaign-format.md gives")
        return Found(loc, f"{got} is not allowed here: use {form}", example or f"{key} = …")
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        bounds = _bounds(info)
        fix = f"{key} = a {_noun(info)} {bounds}"
        if _default(info) is not None:
            fix += f" (the default is {_default(info)})"
        return Found(loc, f"must be {bounds}, got {got}", fix)
    if kind == "literal_error" and info is not None:
        options = _literal_options(info.annotation)
        guess = close_match(value, options) if isinstance(value, str) else None
        shown = ", ".join(f'"{o}"' for o in options)
        return Found(loc, f"must be one of {shown}, got {got}"
                     + (f"; did you mean {guess!r}?" if guess else ""),
                     example or f'{key} = "{guess or options[0]}"')
    if kind in ("tuple_type", "list_type") and isinstance(value, dict) and pattern in (
            ("judges",), ("artifacts",), ("datasets",)):
        return Found(loc, f"each entry is its own [[{key}]] table, not one [{key}] table",
                     f"write [[{key}]] (double brackets) above each entry")
    if kind in ("model_type", "model_attributes_type", "dict_type") and isinstance(value, list):
        return Found(loc, "must be one table, not an array of tables",
                     f"write [{dotted(loc)}] (single brackets), once")
    if kind == "int_from_float":
        return Found(loc, f"must be a whole number, got {got}", f"{key} = {_shown(round(value))}"
                     if isinstance(value, float) else f"{key} = 1")
    if isinstance(value, dict) and "a table of" in expected:
        got = "a table holding something else"
    if kind.endswith(("_type", "_parsing")):
        default = _default(info)
        return Found(loc, f"must be {expected}, got {got}", example or (
            f"{key} = {default} (the default)" if default is not None else f"{key} = {expected}"))
    # Anything else pydantic may report: say what was expected, never its own text.
    return Found(loc, f"must be {expected}, got {got}",
                 "see docs/campaign-format.md for this key's type and range")


def _default(info: FieldInfo | None) -> str | None:
    """A field's default as TOML, if it is a short scalar worth quoting in a fix."""
    default = info.default if info is not None else None
    if default is None or not isinstance(default, bool | int | float | str):
        return None
    shown = _shown(default)
    return shown if len(shown) <= 12 else None


def _describe(annotation: Any) -> str:
    """A declared type in words: "a number", "a list of strings", "one of …"."""
    if annotation is None or annotation is type(None):
        return "nothing"
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if origin is typing.Literal:
        return "one of " + ", ".join(f'"{a}"' for a in typing.get_args(annotation))
    if origin in (tuple, list):
        return f"a list of {_plural(_describe(args[0]))}" if args else "a list"
    if origin is dict:
        return f"a table of {_plural(_describe(args[1]))}" if len(args) == 2 else "a table"
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return "a table"
    return {bool: "true or false", int: "a whole number", float: "a number",
            str: "a string (in quotes)"}.get(annotation, "a value of another type")


def _plural(text: str) -> str:
    return {"a string (in quotes)": "strings (in quotes)", "a table": "tables",
            "a number": "numbers", "a whole number": "whole numbers"}.get(text, text)


def _noun(info: FieldInfo | None) -> str:
    kinds = (info.annotation, *typing.get_args(info.annotation)) if info is not None else ()
    return "whole number" if int in kinds and float not in kinds else "number"


def _bounds(info: FieldInfo | None) -> str:
    """A field's declared range: "from 0 to 1", "above 0 and at most 3600", "at least 1"."""
    ge = gt = le = lt = None
    for item in info.metadata if info is not None else ():
        if isinstance(item, annotated_types.Ge):
            ge = item.ge
        elif isinstance(item, annotated_types.Gt):
            gt = item.gt
        elif isinstance(item, annotated_types.Le):
            le = item.le
        elif isinstance(item, annotated_types.Lt):
            lt = item.lt
    if ge is not None and le is not None:
        return f"from {ge} to {le}"
    lower = f"at least {ge}" if ge is not None else (f"above {gt}" if gt is not None else "")
    upper = f"at most {le}" if le is not None else (f"below {lt}" if lt is not None else "")
    return " and ".join(part for part in (lower, upper) if part) or "in its range"


def _literal_options(annotation: Any) -> list[str]:
    for arg in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(arg) is typing.Literal:
            return [str(a) for a in typing.get_args(arg)]
    return []


def _shown(value: Any) -> str:
    """A value as TOML would spell it, shortened: "vibes", 1.75, true, a table, a list."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        short = value if len(value) <= 60 else value[:57] + "…"
        return '"' + short.replace('"', '\\"') + '"'
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return "nothing" if value is None else "a value of another type"
