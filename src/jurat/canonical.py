"""RFC 8785 canonical JSON, sha256 digests, and the one strict JSON parser.

Every digest jurat records (artifacts, policies, judge configs, evidence
bundles, ledger entries) is the sha256 of bytes produced here, so two
machines always agree on it. ``rfc8785`` is the reference serialiser; the bytes
come from the standard library's C encoder wherever they provably agree with it
(see the comment above ``_ENCODER``). For verification, ``loads_candidate`` reads
bytes that must be canonical, ``same_json`` compares two values as their
serialisations would, and ``member_span`` finds a member's own canonical bytes
inside canonical bytes.

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

import dataclasses
import hashlib
import hmac
import itertools
import json
import math
import operator
import re
from collections.abc import Iterable
from typing import Any, Literal

import pydantic_core
import rfc8785
from pydantic import BaseModel

from jurat._json_spans import element_spans, member_span, member_start
from jurat.errors import ValidationError

__all__ = [
    "KEYED_DIGEST",
    "MAX_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "CanonicalCandidate",
    "StrictJSONError",
    "StrictJSONKind",
    "canonical_json",
    "canonical_json_value",
    "digest_json",
    "element_spans",
    "keyed_digest",
    "loads_candidate",
    "loads_strict",
    "member_span",
    "member_start",
    "same_json",
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
    if isinstance(obj, BaseModel):
        return canonical_json_value(obj.model_dump(mode="json"))
    return canonical_json_value(_plain(obj))


def canonical_json_value(value: Any) -> bytes:
    """RFC 8785 bytes of a JSON value whose object keys are all ``str``, as ``loads_strict``
    and ``model_dump(mode="json")`` return them; ``canonical_json`` for anything else.

    No model dumping and no key coercion, so no walk over the value in Python. Refuses what
    ``canonical_json`` refuses (a key that is not a string is the caller's error: ``json``
    would write it, RFC 8785 has no such key).
    """
    fast = _fast_canonical(value)
    if fast is not None:
        return fast
    try:
        return bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        raise ValidationError(f"cannot canonicalise value: {exc}") from exc


# Why a second serialiser beside rfc8785: rfc8785 is the reference (and the only
# maintained RFC 8785 package for Python), but it is pure Python, about eight times slower
# than the standard library's C encoder, and verification serialises every payload it
# checks. The C encoder (sorted keys, no whitespace, UTF-8 kept as is) writes exactly the
# RFC 8785 bytes except in three places, and each one is detected on its output, never
# guessed:
#
# - numbers: ints print alike up to 2**53 - 1, which RFC 8785 also refuses beyond, and a
#   float prints as Python's repr, the same shortest round-trip digits rfc8785 starts
#   from; the two differ only for a whole float ("1.0" where RFC 8785 writes "1", "-0.0"
#   for "0"), an exponent ("1e-07" for "1e-7", "1e+16" for "10000000000000000") and 16
#   or more integer digits (ints beyond 2**53 - 1). A number stands after "[", ":" or
#   "," (or a "-" after one), so ``_shaped_like`` and "-0.0" find every such number in
#   the whole text, strings included (a match inside a string only costs the slower
#   path); every other whole float loses its ".0", as RFC 8785 writes it
#   (``_without_whole_floats``): inside an array or object it is a digit, ".0" and one
#   of ",]}", and the count of unescaped quotes before it says whether those characters
#   are inside a string. A number alone (the whole text) takes the slower path too,
#   which removes the strings (``_outside_strings``) and decides on what is left;
# - key order: Python sorts by code point, RFC 8785 by UTF-16 code unit; the two orders
#   differ only between a character above U+FFFF and one in U+E000-U+FFFF, so a text that
#   does not hold both is sorted the same way;
# - a lone surrogate, which rfc8785 refuses: encoding the text to UTF-8 fails on it.
#
# Anything else the encoder cannot write (NaN, infinities, other types) raises. In every
# one of these cases ``rfc8785`` serialises (or refuses) the value instead.
# tests/receipts/test_canonical_fast.py checks the equality against rfc8785 on random JSON.
_ENCODER = json.JSONEncoder(
    ensure_ascii=False,
    allow_nan=False,
    check_circular=False,
    sort_keys=True,
    separators=(",", ":"),
)
# Patterns that start with a literal, so the regex engine skips to candidates in C.
_WHOLE_FLOAT = re.compile(r"\.0(?![0-9])")
_WHOLE_FLOAT_TOKEN = re.compile(r"\.0(?=[,\]}])(?<=[0-9]\.0)")
_NEGATIVE_ZERO = re.compile(r"-0\.0(?![0-9])")
_EXPONENT = re.compile(r"e[-+]")
_NUMBER_START = frozenset("-0123456789")
# Each byte as what it may be in a number: "0" (a digit), "." (a point), "e", "+" (a
# sign), "," (what stands before a number: "[", ":", ","), or "x" (anything else).
_SHAPE = bytes(
    48 if 48 <= b <= 57
    else 46 if b == 46
    else 101 if b == 101
    else 43 if b in b"+-"
    else 44 if b in b"[:,"
    else 120
    for b in range(256)
)
# An integer part of 16 digits or more, and an exponent, in that shape.
_SHAPES_TO_CHECK = (b",0000000000000000", b"+0000000000000000", b"0e+")
# Only brackets and quotes: the skeleton a depth is counted on.
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_ABOVE_BMP = re.compile("[\U00010000-\U0010ffff]")
_HIGH_BMP = re.compile("[\ue000-\uffff]")


def _fast_canonical(value: Any) -> bytes | None:
    """The RFC 8785 bytes of ``value`` from the C encoder, or None where they may differ."""
    try:
        text = _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError):
        return None
    if text[:1] in _NUMBER_START or "-0.0" in text or _shaped_like(text, _SHAPES_TO_CHECK):
        numbers = _numbers_outside_strings(text)
    else:
        numbers = _without_whole_floats(text)
    if numbers is None:
        return None
    if numbers.isascii():
        return numbers.encode("ascii")
    if _ABOVE_BMP.search(numbers) and _HIGH_BMP.search(numbers):
        return None
    try:
        return numbers.encode("utf-8")
    except UnicodeEncodeError:
        return None


def _shaped_like(text: str, shapes: tuple[bytes, ...]) -> bool:
    """Whether one of ``shapes`` (in ``_SHAPE``'s letters) occurs in ``text``, strings
    included: a screen, translated and searched in C."""
    shape = text.encode("utf-8", "surrogatepass").translate(_SHAPE)
    return any(s in shape for s in shapes) or shape.startswith(b"0" * 16)


def _without_whole_floats(text: str) -> str:
    """``text`` with the ".0" of every whole float outside strings removed.

    A whole float inside an array or object is a digit, ".0" and one of ",]}"; found
    with ``str.find`` (in C), each one is outside a string exactly when an even number of
    unescaped quotes comes before it.
    """
    pieces: list[str] = []
    start = 0  # text[start:] is not copied yet
    counted = quotes = 0  # quotes in the masked text before ``counted``
    masked: str | None = None
    at = text.find(".0")
    while at >= 0:
        if text[at - 1 : at] in _DIGITS and text[at + 2 : at + 3] in _AFTER_NUMBER:
            if masked is None:
                masked = _mask_escapes(text)
            quotes += masked.count('"', counted, at)
            counted = at
            if quotes % 2 == 0:  # outside a string: a number, written without its ".0"
                pieces.append(text[start:at])
                start = at + 2
        at = text.find(".0", at + 2)
    if not pieces:
        return text
    pieces.append(text[start:])
    return "".join(pieces)


_DIGITS = frozenset("0123456789")
_AFTER_NUMBER = frozenset(",]}")


def _numbers_outside_strings(text: str) -> str | None:
    """The slower path of ``_fast_canonical``: decided on the text without its strings."""
    outside = _outside_strings(text)
    if _EXPONENT.search(outside) or _long_integer(outside) or _NEGATIVE_ZERO.search(outside):
        return None
    wholes = len(_WHOLE_FLOAT.findall(outside))
    if wholes:
        text, found = _WHOLE_FLOAT_TOKEN.subn("", text)
        if found != wholes:
            return None
    return text


def _long_integer(outside: str) -> bool:
    """Whether a number outside strings has 16 or more digits before any decimal point:
    an integer part starts after a delimiter, a sign or the text's start."""
    return _shaped_like(outside, _SHAPES_TO_CHECK[:2])


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values have the same RFC 8785 serialisation, without serialising.

    Numbers compare by value (``1`` and ``1.0`` are both written ``1``), booleans only
    with booleans, strings and nulls only with their own type, so no coercion can hide in
    an equal-looking document.
    """
    ta, tb = type(a), type(b)
    if ta is dict and tb is dict:
        return a.keys() == b.keys() and _same_members(a.values(), map(b.__getitem__, a))
    if ta is list and tb is list:
        return len(a) == len(b) and _same_members(a, b)
    if isinstance(a, bool) or isinstance(b, bool):
        return ta is tb and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return bool(a == b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return ta is tb and bool(a == b)


def _same_members(xs: Iterable[Any], ys: Iterable[Any]) -> bool:
    # Step 4 compares every field of every receipt: the usual leaves (strings, nulls,
    # plain numbers) are decided in this loop, anything else by ``same_json``.
    for x, y in zip(xs, ys, strict=True):
        tx = type(x)
        if tx is str:
            if type(y) is not str or x != y:
                return False
        elif x is None:
            if y is not None:
                return False
        elif tx is int or tx is float:
            ty = type(y)
            if (ty is not int and ty is not float) or x != y:
                return False
        elif not same_json(x, y):
            return False
    return True


def sha256_digest(data: bytes | str) -> str:
    """Lower-case hex sha256 of ``data`` (str is encoded as UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def digest_json(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj``."""
    return sha256_digest(canonical_json(obj))


#: The form of a keyed digest as receipts record it (``keyed_digest``); ``.pattern`` is
#: the one the records that hold one validate with.
KEYED_DIGEST = re.compile(r"^hmac-sha256:[0-9a-f]{64}$")


def keyed_digest(key: bytes, data: bytes | str) -> str:
    """``hmac-sha256:<lower-case hex>``: HMAC-SHA256 under ``key`` of ``data`` (str is
    encoded as UTF-8). How public outputs bind reference material (docs/receipt-format.md
    §11): a short gold answer is found from its plain sha256 by hashing guesses, and from
    this only with the campaign's reference key (campaign/_reference_key.py)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return "hmac-sha256:" + hmac.new(key, data, hashlib.sha256).hexdigest()


def _refuse_constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not JSON", kind="non_finite_number")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json and pydantic keep the last duplicate, so {"disposition": "reject", "disposition":
    # "accept"} would read as accept: two readers, two documents in the same bytes.
    out = dict(pairs)  # built in C; a duplicate shows as a shorter dict
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r}", kind="duplicate_key")
            seen.add(key)
    return out


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise StrictJSONError(f"number {text} overflows a double", kind="non_finite_number")
    return value


# Escaped backslashes and quotes, masked by as many characters as JSON never holds raw (a
# control character is escaped inside a string and invalid outside one). str.replace
# reads left to right as a JSON reader does, so "\\" is taken before a quote after it
# could be: in valid JSON every quote left unmasked opens or closes a string.
_MASKS = (("\\\\", "\x01\x01"), ('\\"', "\x02\x02"))
_BYTE_MASKS = tuple((e.encode(), m.encode()) for e, m in _MASKS)
# Opening brackets become 2, closing ones 0: the running sum minus the count is the depth.
_BYTE_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _mask_escapes(text: str) -> str:
    """``text`` with escaped backslashes and quotes masked (``_MASKS``), same length.

    Split at its quotes, the pieces then alternate outside / inside a string (an
    unterminated string runs to the end): the split is done in C, where matching every
    string with a pattern is not. For valid JSON; for invalid JSON the pieces may differ
    only after the point where ``json.loads`` stops with an error.
    """
    if "\\" in text:
        for escape, mask in _MASKS:
            text = text.replace(escape, mask)
    return text


def _outside_strings(text: str) -> str:
    """The text with every string removed (quotes included), for valid JSON; NUL (never
    raw in JSON) where each one was, so no two tokens are joined."""
    return "\x00".join(_mask_escapes(text).split('"')[::2])


def _structure_depth(data: bytes) -> int:
    """The deepest bracket nesting outside strings, without recursion (linear time).

    For valid JSON this is the nesting ``json.loads`` will recurse into. For invalid
    JSON it may differ only after the point where ``json.loads`` stops with an error.

    Once escaped backslashes and quotes are masked (``_MASKS``), every quote left opens or
    closes a string, so a bracket is inside a string exactly when an odd number of quotes
    comes before it. Only brackets and quotes are kept (translated in C); two quotes with
    no bracket between them are dropped, which changes no bracket's count of quotes
    before it; the few quotes left split what remains into pieces that alternate
    outside / inside a string.
    """
    if b"\\" in data:
        for escape, mask in _BYTE_MASKS:
            data = data.replace(escape, mask)
    skeleton = data.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in skeleton:
        skeleton = b"".join(skeleton.split(b'"')[::2])
    skeleton = skeleton.translate(_BYTE_STEP)
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


def _within_depth(data: bytes, max_depth: int) -> None:
    depth = _structure_depth(data)
    if depth > max_depth:
        raise StrictJSONError(
            f"nests {depth} levels deep, more than the limit of {max_depth}", kind="too_deep"
        )


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
    raw = bytes(data) if not isinstance(data, str) else text.encode("utf-8", "surrogatepass")
    _within_depth(raw, max_depth)
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


@dataclasses.dataclass(frozen=True, slots=True)
class CanonicalCandidate:
    """Bytes that are to be RFC 8785 canonical JSON, and the value parsed from them.

    Made by ``loads_candidate``. Nothing about ``value`` is checked but the size and
    encoding of ``data``: it is to be used only once ``is_canonical_form_of`` has held.
    """

    value: Any
    """What a plain JSON parser reads in ``data``: duplicate keys, NaN, lone surrogate
    escapes and deep nesting are not refused yet."""
    data: bytes
    """The bytes."""
    max_depth: int
    """The nesting ``data`` may have (``loads_strict``'s ``max_depth``)."""

    def is_canonical_form_of(self, other: Any) -> bool:
        """Whether ``data`` is the RFC 8785 serialisation of ``other``, as written by the
        fast serialiser, within ``max_depth``; False also when only rfc8785 could say.

        When it holds, ``data`` is also the RFC 8785 serialisation of ``value``, and
        ``value`` is what ``loads_strict`` returns for ``data``: RFC 8785 writes no
        duplicate key, no NaN, no escape but its own, no whitespace, and every number it
        writes reads back as a number it writes the same way, except an integer part of
        16 digits or more, which the fast serialiser never writes. ``data`` nests as deep
        as the serialisation of ``other``, whose brackets are counted outside its strings
        before anything is compared. So ``other`` and ``value`` serialise alike, which is
        what ``same_json`` decides.
        """
        try:
            fast = _fast_canonical(other)
        except Exception:  # noqa: BLE001 - a value the fast path cannot serialise
            return False
        return fast == self.data and _structure_depth(self.data) <= self.max_depth


def loads_candidate(
    data: bytes, *, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH
) -> CanonicalCandidate:
    """Parse bytes that must be RFC 8785 canonical JSON, checking only what parsing needs.

    The size limit of ``loads_strict`` holds (its ``StrictJSONError``), and the bytes are
    parsed by pydantic-core's JSON parser (jiter, in Rust, the fastest reader at hand),
    which refuses what is not UTF-8 JSON and guards its own recursion. What else
    ``loads_strict`` refuses, nesting deeper than ``max_depth`` included, can never be in
    what ``CanonicalCandidate.is_canonical_form_of`` accepts; and once that holds, every
    number and string read here serialises back to its own bytes, so ``value`` is what
    ``json.loads`` reads. For verification (step 4), where the bytes are then compared
    with the serialisation of the records read from them.
    """
    if len(data) > max_bytes:
        raise StrictJSONError(
            f"{len(data)} bytes is more than the {max_bytes}-byte limit", kind="oversized"
        )
    try:
        value = pydantic_core.from_json(data)
    except ValueError as exc:
        raise StrictJSONError(f"not one JSON document: {exc}", kind="malformed") from exc
    return CanonicalCandidate(value, bytes(data), max_depth)


# The C readers json.loads uses, kept by its decoder as attributes: a value, (text, index)
# -> (the value starting there, its end), and a string's rest, (text, index after its
# opening quote) -> (the string, its end).
