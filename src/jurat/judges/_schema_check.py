"""The JSON Schema check of a parsed judge answer, shared by every answer kind.

Python ``jsonschema`` is the authority: every refusal and its message come from it.
``jsonschema-rs`` only answers "valid" early, and only for plain JSON values (``_plain``)
on which the two libraries were shown to agree for jurat's schemas
(tests/judges/test_schema_fast.py). Anything else, or any doubt, goes to ``jsonschema``.

Where the two differ in a way ``_plain`` does not exclude, Rust is the stricter one, which
costs only speed: its ``$`` is the end of the text, Python's also matches before a final
newline (so ``<64 hex>\\n`` is refused by Rust, then accepted by jsonschema, as before); and
jurat's patterns use ASCII classes only, never ``\\d``, whose Unicode digits Python matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jurat.errors import JudgeOutputError

if TYPE_CHECKING:
    import jsonschema_rs
    from jsonschema.protocols import Validator

__all__ = ["AnswerSchema", "answer_schema"]

# Every integer of at most this size is exactly a double. Above it jsonschema-rs compares an
# integer with a float inexactly: it finds [2**62, 2.0**62] unique, jsonschema (and Python's
# ==) does not, so uniqueItems would accept what jsonschema refuses.
_EXACT = 2**53
# Deeper than any of jurat's answer schemas reaches; bounds _plain's recursion.
_MAX_DEPTH = 16


def _plain_str(text: str) -> bool:
    # A lone surrogate has no UTF-8 form, so Rust cannot hold the text jsonschema checks;
    # what jsonschema-rs does instead (raise for an enum, count for a length) is unspecified.
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _plain(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is JSON as ``json.loads`` builds it, within the agreed domain.

    Exact types only: jsonschema-rs reads a tuple as an array and a Decimal as a number,
    where jsonschema's types refuse both, and it reads a dict or list subclass through the
    C API, past any overridden method jsonschema would call.
    """
    kind = type(value)
    if kind is str:
        return _plain_str(value)
    if kind is int or kind is float:
        # NaN fails both comparisons, so it is not plain either.
        return bool(-_EXACT <= value <= _EXACT)
    if kind is bool or value is None:
        return True
    if depth >= _MAX_DEPTH:
        return False
    if kind is list:
        return all(_plain(item, depth + 1) for item in value)
    if kind is dict:
        return all(
            type(key) is str and _plain_str(key) and _plain(item, depth + 1)
            for key, item in value.items()
        )
    return False


@dataclass(frozen=True, slots=True, eq=False)
class AnswerSchema:
    """One answer schema compiled for both libraries; build with ``answer_schema``."""

    slow: Validator
    fast: jsonschema_rs.Validator | None

    def fast_accepts(self, value: Any) -> bool:
        """Whether the fast path alone accepts ``value`` (False: ask jsonschema)."""
        if self.fast is None or not _plain(value):
            return False
        try:
            return self.fast.is_valid(value)
        except Exception:  # any conversion trouble means "not decided here", never a refusal
            return False

    def is_valid(self, value: Any) -> bool:
        """jsonschema's verdict on ``value``, reached early when the fast path accepts."""
        return self.fast_accepts(value) or self.slow.is_valid(value)

    def check(self, value: Any) -> None:
        """Raise ``JudgeOutputError`` (``schema_violation``) with jsonschema's best error."""
        if self.is_valid(value):
            return
        from jsonschema.exceptions import best_match

        error = best_match(self.slow.iter_errors(value))
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise JudgeOutputError(f"{where}: {error.message}", kind="schema_violation", path=where)


def _fast_validator(schema: dict[str, Any]) -> jsonschema_rs.Validator | None:
    import jsonschema_rs

    try:
        # The regex crate (no look-around, linear time) rather than fancy-regex: jurat's
        # patterns need nothing more. offline: a schema must never fetch a $ref.
        return jsonschema_rs.Draft202012Validator(
            schema, pattern_options=jsonschema_rs.RegexOptions(), offline=True
        )
    except Exception:  # a schema Rust cannot compile is still checked, by jsonschema
        return None


def answer_schema(schema: dict[str, Any]) -> AnswerSchema:
    """Check ``schema`` (Draft 2020-12) and compile it for both libraries; callers cache it."""
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(schema)
    return AnswerSchema(slow=Draft202012Validator(schema), fast=_fast_validator(schema))
