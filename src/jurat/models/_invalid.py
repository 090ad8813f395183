"""pydantic's ``ValidationError`` as jurat's error, naming the field and the fix: the one
translator.

A third-party error is translated in exactly one place (docs/design.md, "Where things
live"). Every place that validates a record from outside input converts pydantic's error
at its boundary through :func:`invalid` (``raise invalid(exc, Limits, values, ConfigError,
source="--limits") from exc``), or, where every problem is reported at once, through
:func:`translate`. No library text passes through: a message is made from the error's
kind, the field's declared type and bounds, and the value found, and its fix from the
field's declared range or default; a problem a record's own validator found
(``RecordProblems``, or a ``ValueError`` it raised) keeps its own words and fix.

How a place is named is a :class:`Words`: the plain one names fields as dotted paths
(``judges[0].provider``); the campaign loader's names them as the campaign file writes them,
with examples and table names (``campaign/_translate.py``).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import annotated_types
import pydantic
from pydantic.fields import FieldInfo

from jurat.errors import JuratError, ValidationError
from jurat.models._problems import Loc, Problem, RecordProblems, close_match, dotted

__all__ = ["Where", "Words", "invalid", "pattern_of", "shown", "translate"]

def pattern_of(loc: Loc) -> tuple[str, ...]:
    """``loc`` with every index as ``"*"``: the place any entry of a list shares."""
    return tuple("*" if isinstance(part, int) else part for part in loc)


class Where(NamedTuple):
    """Where a validation error is, read against the records' fields."""

    loc: Loc
    """The payload place of the field the error is about (a union's member tags cut off)."""
    info: FieldInfo | None
    """That field (None: the error is about a whole record, or a key it does not have)."""
    record: type[pydantic.BaseModel] | None
    """The record at the end of ``loc`` (a table), if it is one."""


class Words:
    """How messages name places, and what they offer as examples: the plain words.

    Places are named as dotted paths of the record's own fields; nothing is known beyond the
    fields' declared types, bounds and defaults. A subclass names them as its input writes
    them (the campaign file: ``campaign/_translate.py``).
    """

    docs = "the documentation"
    """Where a key's type, range and form are written down, for a fix that can say no more."""

    def place(self, loc: Loc) -> Loc:
        """A place in the validated payload as the messages name it."""
        return tuple(loc)

    def example(self, pattern: tuple[str, ...]) -> str | None:
        """An example of the key at ``pattern``, for a fix."""
        return None

    def form(self, pattern: tuple[str, ...]) -> str:
        """What a constrained string at ``pattern`` looks like, instead of its pattern."""
        return f"the form {self.docs} gives"

    def expected(self, pattern: tuple[str, ...]) -> str | None:
        """What the key at ``pattern`` takes, where its declared type does not say it."""
        return None

    def entry(self, pattern: tuple[str, ...]) -> str:
        """What one entry of the list at ``pattern`` is called."""
        return "entry"

    def table(self, holder: Loc) -> str:
        """How messages name the table (a record) at ``holder``."""
        return dotted(holder) or "the record"

    def unknown(self, loc: Loc, table: str) -> Problem | None:
        """An unknown key (``loc``, in ``table``) in words of the input's own; None: the
        plain words, naming the closest field of the record."""
        return None

    def shaped(self, kind: str, loc: Loc, key: str, value: Any) -> Problem | None:
        """A value of the wrong shape in words of the input's own (a table written as an
        array of tables); None: the plain words."""
        return None


_PLAIN = Words()


def translate(
    exc: pydantic.ValidationError,
    root: type[pydantic.BaseModel],
    payload: Any,
    *,
    at: Loc = (),
    words: Words = _PLAIN,
) -> list[Problem]:
    """Every error pydantic found validating ``payload`` as ``root``, in plain words naming
    the field and the fix, in pydantic's order.

    ``at`` is where the validated value sits in ``root`` when it is not the whole of it (a
    dataset row is validated as the campaign's ``[[artifacts]]`` entry ``("artifacts", 0)``);
    ``payload`` is None when it was JSON text. Each problem's place is named by ``words``.
    """
    found: list[Problem] = []
    for error in exc.errors():
        loc = (*at, *error["loc"])
        cause = error.get("ctx", {}).get("error")
        if isinstance(cause, RecordProblems):
            found += [Problem(words.place((*loc, *p.loc)), p.message, p.fix)
                      for p in cause.problems]
            continue
        kind = str(error["type"])
        if kind == "extra_forbidden":
            found.append(_extra(loc, root, words))
            continue
        where = _field_at(root, loc)
        # Without the payload (bytes validated as JSON), the value pydantic read.
        value = _value_at(payload, where.loc) if payload is not None else error.get("input")
        least = error.get("ctx", {}).get("min_length")
        if kind == "too_short" and isinstance(value, list) and len(value) >= int(least or 1):
            # pydantic counts only the entries that validated; the others are reported.
            continue
        if kind == "value_error" and isinstance(cause, ValueError):
            # A record's validator said what is wrong in its own words: they are jurat's.
            place = words.place(where.loc)
            found.append(Problem(place, str(cause), _fix_for(place, where, words)))
            continue
        found.append(_plain(kind, dict(error.get("ctx", {})), where, value, words))
    return found


def invalid(
    exc: pydantic.ValidationError,
    root: type[pydantic.BaseModel],
    payload: Any,
    error: Callable[[str], JuratError] = ValidationError,
    *,
    source: str | None = None,
    within: Loc = (),
    fix: str | bool = True,
    words: Words = _PLAIN,
) -> JuratError:
    """The first problem pydantic found validating ``payload`` as ``root``, as ``error``:
    ``"{source}: {field}: {message} (fix: {fix})"``. Raise it ``from exc``.

    ``within`` is where the record sits in what ``source`` names (``("campaigns", 2)``), put
    before the field; ``fix`` is the translator's fix (True), none (False), or the caller's
    own words (a command-line flag knows its own spelling); ``words`` name the places.
    """
    problems = translate(exc, root, payload, words=words) or [Problem((), "is not valid", "")]
    first = problems[0]
    field = dotted((*within, *first.loc))
    text = ": ".join(part for part in (source, field, first.message) if part)
    said = first.fix if fix is True else (fix or "")
    return error(text + (f" (fix: {said})" if said else ""))


def _field_at(root: type[pydantic.BaseModel], loc: Sequence[str | int]) -> Where:
    """Follow ``loc`` through the records' fields, from ``root`` down."""
    record: type[pydantic.BaseModel] | None = root
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
    return Where(tuple(walked), info, record)


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


def _extra(loc: Loc, root: type[pydantic.BaseModel], words: Words) -> Problem:
    """An unknown key inside a table: named with the closest key the table takes."""
    place = words.place(loc)
    table = words.table(words.place(loc[:-1]))
    said = words.unknown(place, table)
    if said is not None:
        return said
    # The keys the holding record's fields take.
    record = _field_at(root, loc[:-1]).record
    keys = tuple(record.model_fields) if record is not None else ()
    key = str(loc[-1])
    guess = close_match(key, keys)
    if guess is not None:
        return Problem(place, f"unknown key {key!r} in {table}; did you mean {guess!r}?",
                       f"rename it to {guess}")
    return Problem(place, f"unknown key {key!r} in {table}",
                   f"remove it or check the spelling; {table} takes {', '.join(keys)}")


def _key(place: Loc) -> str:
    return str(next((p for p in reversed(place) if isinstance(p, str)), ""))


def _fix_for(place: Loc, where: Where, words: Words) -> str:
    """The fix for a value a validator refused: the key's example, else its declared type."""
    info = where.info
    expected = words.expected(pattern_of(place)) or (
        _describe(info.annotation) if info is not None else "a table")
    return words.example(pattern_of(place)) or f"{_key(place)} = {expected}"


def _plain(kind: str, ctx: dict[str, Any], where: Where, value: Any, words: Words) -> Problem:
    """One validation error about one field (or one whole record), in plain words."""
    loc = words.place(where.loc)
    key = _key(loc)
    pattern = pattern_of(loc)
    example = words.example(pattern)
    info = where.info
    expected = words.expected(pattern) or (
        _describe(info.annotation) if info is not None else "a table")
    got = shown(value)
    if kind == "missing":
        return Problem(loc, "is required and missing", f"add {example or key + ' = …'}")
    if kind in ("too_short", "too_long"):
        entry = words.entry(pattern)
        if kind == "too_short":
            least = int(ctx.get("min_length", 1))
            count = "one" if least == 1 else str(least)
            return Problem(loc, f"give at least {count} {entry}",
                           example or f"add {entry} entries to {key}")
        return Problem(loc, f"has {ctx.get('actual_length')} entries; at most "
                       f"{ctx.get('max_length')} are allowed", f"remove {entry} entries")
    if kind == "string_too_short":
        return Problem(loc, "must not be empty", example or f'{key} = "…"')
    if kind == "string_too_long":
        return Problem(loc, f"is {len(value) if isinstance(value, str) else '?'} characters "
                       f"long; at most {ctx.get('max_length')} are allowed", "shorten it")
    if kind == "string_pattern_mismatch":
        return Problem(loc, f"{got} is not allowed here: use {words.form(pattern)}",
                       example or f"{key} = …")
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        bounds = _bounds(info)
        fix = f"{key} = a {_noun(info)} {bounds}"
        if _default(info) is not None:
            fix += f" (the default is {_default(info)})"
        return Problem(loc, f"must be {bounds}, got {got}", fix)
    if kind == "literal_error" and info is not None:
        options = _literal_options(info.annotation)
        guess = close_match(value, options) if isinstance(value, str) else None
        listed = ", ".join(f'"{o}"' for o in options)
        return Problem(loc, f"must be one of {listed}, got {got}"
                       + (f"; did you mean {guess!r}?" if guess else ""),
                       example or f'{key} = "{guess or options[0]}"')
    said = words.shaped(kind, loc, key, value)
    if said is not None:
        return said
    if kind == "int_from_float":
        return Problem(loc, f"must be a whole number, got {got}", f"{key} = {shown(round(value))}"
                       if isinstance(value, float) else f"{key} = 1")
    if isinstance(value, dict) and "a table of" in expected:
        got = "a table holding something else"
    if kind.endswith(("_type", "_parsing")):
        default = _default(info)
        return Problem(loc, f"must be {expected}, got {got}", example or (
            f"{key} = {default} (the default)" if default is not None else f"{key} = {expected}"))
    # Anything else pydantic may report: say what was expected, never its own text.
    return Problem(loc, f"must be {expected}, got {got}",
                   f"see {words.docs} for this key's type and range")


def _default(info: FieldInfo | None) -> str | None:
    """A field's default as TOML, if it is a short scalar worth quoting in a fix."""
    default = info.default if info is not None else None
    if default is None or not isinstance(default, bool | int | float | str):
        return None
    text = shown(default)
    return text if len(text) <= 12 else None


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


def shown(value: Any) -> str:
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
