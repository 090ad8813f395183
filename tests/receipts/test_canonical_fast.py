"""The fast canonicaliser writes rfc8785's bytes, or falls back to rfc8785 (canonical.py).

``rfc8785`` is the reference: on any JSON value, ``canonical_json_value`` either returns the
same bytes or raises where rfc8785 raises. Strategies reach every place where the C encoder
and RFC 8785 differ: whole floats, exponents, -0.0, integers around 2**53, control
characters, quotes and backslashes, lone surrogates, keys above U+FFFF next to keys in
U+E000-U+FFFF. The strict parser's depth scan is checked against a plain recursive count.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from typing import Any

import pytest
import rfc8785
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jurat.canonical import (
    MAX_JSON_DEPTH,
    StrictJSONError,
    canonical_json,
    canonical_json_value,
    element_spans,
    loads_candidate,
    loads_strict,
    member_span,
    same_json,
)
from jurat.canonical import _fast_canonical as fast_path
from jurat.errors import ValidationError
from tests.support.scale import examples

# Characters that matter to RFC 8785 beside ordinary text: controls, quote, backslash, DEL,
# U+2028, the edges of the BMP's private and surrogate-free high range, and astral ones.
SPECIAL = "\x00\x01\x08\t\n\x0c\r\x1f\"\\/\x7f\u0080\u2028\u2029\ud7ff\ue000\uffef\uffff"
ASTRAL = "\U00010000\U0001f600\U0010ffff"
text = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(SPECIAL + ASTRAL),
        st.sampled_from("0123456789.e+-:,[]{}"),  # JSON punctuation inside strings
    ),
    max_size=12,
)
floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e16, 1e15, 1e21, 1e-7, 1e-6, 5e-324, 0.1, 1e308,
                     2.0**53, 9007199254740993.0, 123456789012345.6, 0.30000000000000004]),
    st.integers(-(2**60), 2**60).map(float),
)
integers = st.one_of(
    st.integers(-(2**53) + 1, 2**53 - 1),
    st.sampled_from([2**53 - 1, 2**53, -(2**53) + 1, -(2**53), 10**15, 10**16, 2**64]),
    st.integers(),
)
scalars = st.one_of(st.none(), st.booleans(), integers, floats, text)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(text, inner, max_size=5),
    ),
    max_leaves=30,
)


def reference(value: Any) -> bytes | None:
    """rfc8785's bytes, or None where it refuses the value."""
    try:
        return bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, ValueError, TypeError):
        return None


def fast(value: Any) -> bytes | None:
    try:
        return canonical_json_value(value)
    except ValidationError:
        return None


@settings(max_examples=examples(3000))  # tests/support/scale.py
@given(json_values)
@example({"\ue000": 1, "\U00010000": 2})  # code point order differs from UTF-16 order
@example([1.0, -0.0, 1e16, 1e-7, 0.5, 100.0])
@example({"a": 'say "1.0", \\"x\\" and \\\\'})  # escaped quotes and backslashes
@example({"k": [-5.0, 10.0], "s": "v1.0", "t": "\\"})
@example({"a": ",1.0]", "b": 1.0, "c": 'x\\"2.0}', "d": [3.0], "e": "\\\\4.0,"})
@example({"a": '"', "b": 5.0, "c": "[{", "d": {"e": 0.0}})
@example(2**53)
@example("\ud800")
@example({"\ud800": 1})
def test_fast_path_writes_rfc8785_bytes(value: Any) -> None:
    assert fast(value) == reference(value)


@given(json_values)
def test_canonical_json_agrees_with_the_reference(value: Any) -> None:
    # The public entry point, after its own conversion of the value (tuples, keys).
    try:
        got: bytes | None = canonical_json(value)
    except ValidationError:
        got = None
    assert got == reference(value)


@given(json_values)
def test_parsing_canonical_bytes_gives_them_back(value: Any) -> None:
    # What step 4 relies on: canonical bytes parse to a value whose canonical form is
    # those bytes again. (A whole float from 2**53 up is written without an exponent and
    # parses back as an int, which rfc8785 refuses: then both refuse.)
    data = reference(value)
    if data is None or not isinstance(value, dict | list):
        return
    try:
        parsed = loads_strict(data)
    except StrictJSONError:
        return  # deeper than the limit, or a lone surrogate escape the parser refuses
    assert fast(parsed) == reference(parsed)
    assert reference(parsed) in (data, None)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@given(json_values, st.booleans())
def test_the_depth_scan_counts_what_the_parser_nests(value: Any, ascii_only: bool) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only)
    depth = _depth(value)
    if depth > 3:
        with pytest.raises(StrictJSONError) as info:
            loads_strict(data, max_depth=depth - 1)
        assert info.value.kind == "too_deep"
    if not any(isinstance(x, float) and math.isinf(x) for x in [value]):
        try:
            loads_strict(data, max_depth=max(depth, 1))
        except StrictJSONError as exc:
            assert exc.kind in ("lone_surrogate", "encoding")  # never too_deep


@pytest.mark.parametrize(
    ("data", "depth"),
    [
        ('["\\"[[[[", [1]]', 2),
        ('{"a\\\\": [[["\\\\\\"]"]]]}', 4),
        ('["[\\\\]", "x\\\\\\\\"]', 1),
    ],
)
def test_brackets_in_strings_next_to_escapes_are_not_nesting(data: str, depth: int) -> None:
    assert loads_strict(data, max_depth=depth) == json.loads(data)
    with pytest.raises(StrictJSONError):
        loads_strict(data, max_depth=depth - 1)


def test_depth_limit_still_refuses_deep_nesting() -> None:
    deep = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(StrictJSONError) as info:
        loads_strict(deep)
    assert info.value.kind == "too_deep"


# -- same_json: the normal-form comparison, against its first, plainly recursive version ------


def _reference_same_json(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return bool(a == b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_reference_same_json(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(
            _reference_same_json(x, y) for x, y in zip(a, b, strict=True)
        )
    return type(a) is type(b) and bool(a == b)


class _Str(str):
    pass


def _perturb(value: Any, rnd: random.Random) -> Any:
    """``value`` with a few leaves swapped for look-alikes (True for 1, 1.0 for 1, ...)."""
    if isinstance(value, dict):
        out = {k: _perturb(v, rnd) for k, v in value.items()}
        if out and rnd.random() < 0.1:
            out.pop(next(iter(out)))
        return out
    if isinstance(value, list):
        return [_perturb(v, rnd) for v in value] + ([None] if rnd.random() < 0.05 else [])
    if rnd.random() > 0.3:
        return value
    swaps: dict[Any, list[Any]] = {True: [1, 1.0, "true"], False: [0, 0.0, None]}
    if isinstance(value, bool):
        return rnd.choice(swaps[value])
    if isinstance(value, int | float):
        return rnd.choice([float(value) if abs(value) < 2**53 else value, int(value) == value,
                           value, -value, math.nan, (value,)])
    if isinstance(value, str):
        return rnd.choice([_Str(value), value + "x", value, None])
    return rnd.choice([0, False, "", [], {}])


@settings(max_examples=examples(2000))
@given(json_values, st.randoms(use_true_random=False))
def test_same_json_is_the_recursive_rule(value: Any, rnd: random.Random) -> None:
    other = _perturb(value, rnd)
    assert same_json(value, other) == _reference_same_json(value, other)
    assert same_json(other, value) == _reference_same_json(other, value)
    assert same_json(value, value) == _reference_same_json(value, value)


@given(json_values)
def test_same_json_means_the_same_rfc8785_bytes(value: Any) -> None:
    data = reference(value)
    if data is None:
        return
    parsed = json.loads(data)
    if reference(parsed) is None:
        return  # a whole float from 2**53 up reads back as an int rfc8785 refuses
    assert reference(parsed) == data
    assert same_json(value, parsed)


# -- spans of members inside canonical bytes ----------------------------------------------


def _paths(value: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, member in value.items():
            yield from _paths(member, (*prefix, key))
    elif isinstance(value, list):
        for index, element in enumerate(value):
            yield from _paths(element, (*prefix, index))


@given(json_values)
def test_a_members_span_is_its_own_canonical_form(value: Any) -> None:
    data = reference(value)
    if data is None:
        return
    text = data.decode("utf-8")
    for path in _paths(value):
        member = value
        for step in path:
            member = member[step]
        begin, end = member_span(text, path)
        assert text[begin:end].encode("utf-8") == reference(member)
        if isinstance(member, list):
            spans = element_spans(text, begin)
            assert [text[a:b].encode() for a, b in spans] == [reference(x) for x in member]


@pytest.mark.parametrize(
    "path", [("missing",), ("a", 5), ("a", "key"), ("s", 0), (0,), ("a", 1, "x")]
)
def test_a_member_that_is_not_there_raises(path: tuple[str | int, ...]) -> None:
    text = canonical_json({"a": [1, {"b": '}],\\"'}], "s": "[x]"}).decode()
    with pytest.raises(ValueError):
        member_span(text, path)


# -- the candidate bytes of step 4 ----------------------------------------------------------


@given(json_values)
def test_a_candidate_holds_exactly_for_its_fast_canonical_form(value: Any) -> None:
    data = reference(value)
    if data is None or not isinstance(value, dict | list):
        return
    try:
        candidate = loads_candidate(data)
    except StrictJSONError:
        return  # deeper than Python's own recursion limit allows the parser
    held = candidate.is_canonical_form_of(value)
    if held:
        assert loads_strict(data) == candidate.value
        assert same_json(value, candidate.value)
    # It may only decline what rfc8785 alone writes or orders, or what nests too deep.
    fast = fast_path(value)
    assert held == (fast is not None and _depth(value) <= MAX_JSON_DEPTH)


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":1,"a":1}',
        b'{"a":NaN}',
        b'{"a":"\\ud800"}',
        b'{"a":1.0}',
        b'{"a": 1}',
        b'{"b":1,"a":2}',
        b'{"a":"\\u0041"}',
        b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1),
    ],
)
def test_a_candidate_never_holds_for_bytes_that_are_not_canonical(data: bytes) -> None:
    try:
        candidate = loads_candidate(data)
    except StrictJSONError:
        return  # refused while parsing: verification then reads it check by check
    assert not candidate.is_canonical_form_of(candidate.value)
