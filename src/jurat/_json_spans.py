"""Locating members inside canonical JSON text without parsing it again.

Receipt verification (``receipts/_verify.py``, step 7) digests the policy and judge
configurations from their slices of the already-proven canonical payload instead of
re-serialising each model; these functions find those slices. They read text that
``jurat.canonical`` has already proven to be RFC 8785 canonical JSON, and use the
standard library's own JSON scanner to step over values.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, cast

__all__ = ["element_spans", "member_span", "member_start"]

_DECODER = vars(json.JSONDecoder())
_SCAN_VALUE = cast(Callable[[str, int], tuple[Any, int]], _DECODER["scan_once"])
_SCAN_STRING = cast(Callable[[str, int], tuple[str, int]], _DECODER["parse_string"])


def _value_end(text: str, index: int) -> int:
    try:
        return int(_SCAN_VALUE(text, index)[1])
    except StopIteration:
        raise ValueError(f"no JSON value at offset {index}") from None


def _next_after(text: str, index: int) -> int:
    """The offset after the value at ``index`` and the "," that must follow it."""
    end = _value_end(text, index)
    if text[end : end + 1] != ",":
        raise ValueError(f"no ',' at offset {end}: the member or element is not there")
    return end + 1


def member_span(text: str, path: Sequence[str | int], start: int = 0) -> tuple[int, int]:
    """Where the value at ``path`` (object keys and array indices) lies in ``text``, JSON
    with nothing between its tokens, as RFC 8785 writes it: ``text[begin:end]``.

    The span of a value inside an RFC 8785 serialisation is that value's own RFC 8785
    serialisation (each value is written without regard to where it stands), so hashing
    it digests the value without serialising it again. Values passed on the way are
    parsed (in C) to be stepped over. Raises ValueError when ``path`` is not there.
    """
    begin = member_start(text, path, start)
    return begin, _value_end(text, begin)


def member_start(text: str, path: Sequence[str | int], start: int = 0) -> int:
    """Where the value at ``path`` begins in ``text`` (``member_span`` without its end)."""
    i = start
    for step in path:
        opener = "{" if isinstance(step, str) else "["
        if text[i : i + 1] != opener:
            raise ValueError(f"no {step!r} at offset {i}")
        i += 1
        if isinstance(step, str):
            while True:
                if text[i : i + 1] != '"':
                    raise ValueError(f"no key {step!r} in the object before offset {i}")
                key, i = _SCAN_STRING(text, i + 1)
                if text[i : i + 1] != ":":
                    raise ValueError(f"no ':' at offset {i}")
                i += 1
                if key == step:
                    break
                i = _next_after(text, i)
        else:
            for _ in range(step):
                i = _next_after(text, i)
    return i


def element_spans(text: str, start: int) -> list[tuple[int, int]]:
    """The spans of the elements of the array at ``start`` (see ``member_span``)."""
    if text[start : start + 1] != "[":
        raise ValueError(f"no array at offset {start}")
    spans: list[tuple[int, int]] = []
    i = start + 1
    if text[i : i + 1] == "]":
        return spans
    while True:
        end = _value_end(text, i)
        spans.append((i, end))
        if text[end : end + 1] == "]":
            return spans
        if text[end : end + 1] != ",":
            raise ValueError(f"no ',' or ']' at offset {end}")
        i = end + 1
