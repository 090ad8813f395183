"""RFC 8785 canonical JSON, sha256 digests, and the one strict JSON parser.

Every digest jurat records (artifacts, policies, judge configs, evidence
bundles, ledger entries) is the sha256 of bytes produced here, so two
machines always agree on it.

Threat model of ``loads_strict``: its input may be written by anyone (a receipt
handed to ``jurat verify``, a ledger row, an inclusion proof, a judge's answer or its
provider's envelope, with the judges' own smaller size limit), who controls every
byte and wants either two readers to see two documents in the same bytes or the
reader to crash or stall (docs/receipt-format.md §2.2). So it refuses, before
``json.loads`` runs: more than ``max_bytes``, anything but UTF-8 (a byte order
mark, UTF-16/32, invalid sequences) and nesting deeper than ``max_depth``, measured
by a linear scan without recursion, because Python's json decoder recurses once
per level and would raise RecursionError; and while parsing: duplicate keys,
NaN/Infinity, numbers that overflow a double and lone surrogates (RFC 7493 §2).
Every refusal is a ``StrictJSONError`` whose ``kind`` names the reason, so the judge
validator records it as the vote's error kind without a parser of its own.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import operator
import re
from typing import Any, Literal

import rfc8785
from pydantic import BaseModel

from jurat.errors import ValidationError

__all__ = [
    "MAX_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "StrictJSONError",
    "StrictJSONKind",
    "canonical_json",
    "digest_json",
    "loads_strict",
    "sha256_digest",
]

#: Default size limit of ``loads_strict``: larger than any record jurat writes (a ledger
#: entry holding a 16 MiB receipt as base64 is about 22 MiB), small enough to parse.
MAX_JSON_BYTES = 64 * 1024 * 1024
#: Default nesting limit of ``loads_strict``: jurat's deepest record (a receipt's
#: statement) nests about ten levels; every recursive reader stays far from
#: Python's recursion limit at 64.
MAX_JSON_DEPTH = 64


#: Why ``loads_strict`` refused a document. Callers that record a refusal (a judge's vote
#: error kind) map these; every other caller only needs the message.
StrictJSONKind = Literal[
    "oversized",  # more than max_bytes
    "encoding",  # not UTF-8, a byte order mark, NUL characters (UTF-16/32 text)
    "too_deep",  # nesting deeper than max_depth
    "duplicate_key",  # an object names a key twice
    "non_finite_number",  # NaN, Infinity, or a number that overflows a double
    "lone_surrogate",  # a string escapes half a surrogate pair (RFC 7493 §2.1)
    "malformed",  # not one JSON document
]


class StrictJSONError(ValidationError, ValueError):
    """``loads_strict`` refused a document; ``kind`` says why.

    A ``ValueError`` too, so that callers which translate parse failures into their own
    errors (a receipt step, a ledger tamper error) keep catching one exception type.
    """

    def __init__(self, message: str, *, kind: StrictJSONKind) -> None:
        self.kind: StrictJSONKind = kind
        super().__init__(message)


def _plain(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    return obj


def canonical_json(obj: Any) -> bytes:
    """Serialise ``obj`` (JSON values or pydantic models) as RFC 8785 bytes.

    Refuses NaN, infinities and integers beyond 2**53, which RFC 8785 cannot
    represent exactly.
    """
    try:
        return bytes(rfc8785.dumps(_plain(obj)))
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise ValidationError(f"cannot canonicalise value: {exc}") from exc


def sha256_digest(data: bytes | str) -> str:
    """Lower-case hex sha256 of ``data`` (str is encoded as UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def digest_json(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj``."""
    return sha256_digest(canonical_json(obj))


def _refuse_constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not JSON", kind="non_finite_number")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json and pydantic keep the last duplicate, so {"disposition": "reject", "disposition":
    # "accept"} would read as accept: two readers, two documents in the same bytes.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJSONError(f"duplicate key {key!r}", kind="duplicate_key")
        out[key] = value
    return out


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(f"number {text} overflows a double", kind="non_finite_number")
    return value


# A JSON string, or an unterminated one running to the end of the text. Every match
# attempt that starts at a quote succeeds, so re.sub stays linear on hostile input
# (a pattern that could fail would be retried at every later quote: quadratic).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
# Opening brackets become 2, closing ones 0: the running sum minus the count is the depth.
_STEP = str.maketrans({"[": "\x02", "{": "\x02", "]": "\x00", "}": "\x00"})
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _depth(text: str) -> int:
    """The deepest bracket nesting outside strings, without recursion (linear time).

    For valid JSON this is the nesting ``json.loads`` will recurse into. For invalid
    JSON it may differ only after the point where ``json.loads`` stops with an error.
    """
    skeleton = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_STEP).encode("ascii")
    levels = map(operator.sub, itertools.accumulate(skeleton), itertools.count(1))
    return max(levels, default=0)


def _text(data: bytes | bytearray | str, max_bytes: int) -> str:
    """The document as text: size first, then strict UTF-8 with no BOM or NUL."""
    if isinstance(data, str):
        size = len(data) if len(data) > max_bytes else len(data.encode("utf-8", "surrogatepass"))
    else:
        size = len(data)
    if size > max_bytes:
        raise StrictJSONError(
            f"{size} bytes is more than the {max_bytes}-byte limit", kind="oversized"
        )
    if isinstance(data, str):
        text = data
    else:
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(
                f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                "JSON here is UTF-8 only, never UTF-16 or UTF-32",
                kind="encoding",
            ) from None
    if text.startswith("\ufeff"):
        raise StrictJSONError(
            "starts with a byte order mark (U+FEFF); JSON here is UTF-8 without one",
            kind="encoding",
        )
    if "\x00" in text:
        # A raw NUL is never valid JSON; it is how UTF-16/32 text looks when read as UTF-8.
        raise StrictJSONError(
            "contains a NUL character: UTF-16 or UTF-32 text is refused", kind="encoding"
        )
    return text


def _refuse_lone_surrogates(value: Any) -> None:
    # Iterative, like the depth scan: the value may be up to max_depth deep.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise StrictJSONError(
                    "a string holds a lone surrogate escape; I-JSON (RFC 7493 §2.1) has none",
                    kind="lone_surrogate",
                ) from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def loads_strict(
    data: bytes | bytearray | str,
    *,
    max_bytes: int = MAX_JSON_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
) -> Any:
    """Parse one JSON document strictly, within a size and a nesting limit.

    The whole text must be the document (surrounding whitespace aside): a fenced or
    prefixed document is malformed, never searched for. Refuses, with ``StrictJSONError``
    (a ``ValueError``) whose ``kind`` says why: more than ``max_bytes`` bytes (UTF-8 bytes
    for a str; default ``MAX_JSON_BYTES``, 64 MiB); bytes that are not UTF-8, a byte order mark,
    NUL characters (UTF-16/32 text); nesting deeper than ``max_depth`` arrays and
    objects (default ``MAX_JSON_DEPTH``, 64; ``[]`` is depth 1), checked before
    parsing; duplicate keys, NaN/Infinity, numbers that overflow a double, lone
    surrogates. Python's ``json`` alone keeps the last duplicate key and accepts NaN,
    which would let two readers see two documents in the same bytes.
    """
    text = _text(data, max_bytes)
    depth = _depth(text)
    if depth > max_depth:
        raise StrictJSONError(
            f"nests {depth} levels deep, more than the limit of {max_depth}", kind="too_deep"
        )
    try:
        value = json.loads(
            text, object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant,
            parse_float=_finite,
        )
    except StrictJSONError:
        raise
    except (ValueError, RecursionError) as exc:
        # RecursionError cannot happen below the depth limit; kept so a caller raising the
        # limit past Python's recursion limit still gets a refusal, not a crash.
        raise StrictJSONError(f"not one JSON document: {exc}", kind="malformed") from exc
    if _SURROGATE_ESCAPE.search(text):
        _refuse_lone_surrogates(value)
    return value
