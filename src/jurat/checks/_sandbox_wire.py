"""The wire between the trusted test process and the candidate process (``jurat.sandbox/v2``).

Threat model. The candidate process runs contributor code and controls
everything inside its own sandbox: its memory, modules, builtins, ``gc``, the
copy of this file it was given, and every byte it writes to its end of the
pipe. The test process (the campaign's tests, pytest, and the verdict) must
not be influenced by the candidate except through the *values* its code
returns. So only plain data crosses: ``None``, ``bool``, ``int``, ``float``,
``complex``, ``str``, ``bytes``, ``bytearray``, ``list``, ``tuple``, ``dict``,
``set``, ``frozenset``, and opaque handles to candidate objects. The trusted
side decodes frames into fresh built-in objects with bounded size, depth and
node count; comparisons (``==`` in an ``assert``) therefore run built-in code
on the trusted side, and an object that "equals anything" arrives as a handle
that equals only itself.

This file is stdlib-only: it is bound read-only into both sandboxes next to
the program that imports it, and jurat imports it on the host for tests.
The encoder is generous (subclasses of plain types are sent as their base
type, read through the base type's own methods) because it runs where the
candidate is in control anyway; the decoder is strict because it runs where
the verdict is made.

Frame: 4-byte big-endian length, then UTF-8 JSON. A value is JSON ``null``,
``true``/``false``, an integer, a finite float, a string, or a tagged array
``[tag, ...]``: ``l`` list, ``t`` tuple, ``s`` set, ``S`` frozenset, ``d``
dict (items as ``[key, value]`` pairs), ``b`` bytes (base64), ``B``
bytearray, ``c`` complex, ``f`` non-finite float, ``r`` handle (``[r, ref,
type name]``), ``x`` exception class defined by the candidate (``[x, ref,
name, builtin base]``), ``m`` a module (``[m, ref, name]``; the trusted side
imports its own copy of a few standard-library modules, the rest stay handles).
"""

from __future__ import annotations

import base64
import json
import math
import os
import struct
from collections.abc import Callable
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_FRAME_BYTES",
    "MAX_NODES",
    "Resolver",
    "WireError",
    "decode",
    "encode",
    "read_frame",
    "write_frame",
]

MAX_FRAME_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 1_000_000
_HEADER = struct.Struct(">I")
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class WireError(Exception):
    """A frame or value that breaks the protocol (too big, too deep, malformed)."""


# --------------------------------------------------------------------------- frames


def write_frame(fd: int, message: Any) -> None:
    """Send one JSON message."""
    body = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if len(body) > MAX_FRAME_BYTES:
        raise WireError(f"message of {len(body)} bytes exceeds the {MAX_FRAME_BYTES}-byte frame")
    data = memoryview(_HEADER.pack(len(body)) + body)
    while data:
        data = data[os.write(fd, data) :]


def _read_exact(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the peer closed the channel")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _refuse_constant(name: str) -> Any:
    raise WireError(f"non-standard JSON constant {name}")


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise WireError("duplicate key in a message")
    return result


def read_frame(fd: int) -> Any:
    """Receive one JSON message; EOFError when the peer is gone, WireError when it is bad."""
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size))
    if size > MAX_FRAME_BYTES:
        raise WireError(f"frame of {size} bytes exceeds {MAX_FRAME_BYTES}")
    body = _read_exact(fd, size)
    try:
        return json.loads(
            body.decode("utf-8"),
            parse_constant=_refuse_constant,
            object_pairs_hook=_refuse_duplicates,
        )
    except (ValueError, RecursionError) as exc:
        raise WireError(f"malformed frame: {type(exc).__name__}") from None


# --------------------------------------------------------------------------- encode (either side)


def encode(value: Any, register: Callable[[Any], list[Any]], depth: int = 0) -> Any:
    """Plain data as wire values; anything else through ``register`` (a handle or a refusal)."""
    if depth > MAX_DEPTH:
        raise WireError(f"value nested deeper than {MAX_DEPTH}")
    if value is None or isinstance(value, bool):
        return bool(value) if value is not None else None
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        number = float.__float__(value)
        if math.isfinite(number):
            return number
        return ["f", "nan" if math.isnan(number) else ("inf" if number > 0 else "-inf")]
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, complex):
        real, imag = complex.__complex__(value).real, complex.__complex__(value).imag
        return ["c", encode(real, register, depth + 1), encode(imag, register, depth + 1)]
    if isinstance(value, bytes | bytearray):
        tag = "B" if isinstance(value, bytearray) else "b"
        return [tag, base64.b64encode(bytes(memoryview(value))).decode("ascii")]
    sequence = _sequence_tag(value)
    if sequence is not None:
        tag, items = sequence
        return [tag, *(encode(item, register, depth + 1) for item in items)]
    if isinstance(value, dict):
        return [
            "d",
            *(
                [encode(k, register, depth + 1), encode(v, register, depth + 1)]
                for k, v in dict.items(value)
            ),
        ]
    return register(value)


def _sequence_tag(value: Any) -> tuple[str, list[Any]] | None:
    if isinstance(value, list):
        return "l", list.copy(value)
    if isinstance(value, tuple):
        return "t", list(tuple.__iter__(value))
    if isinstance(value, frozenset):
        return "S", list(frozenset.__iter__(value))
    if isinstance(value, set):
        return "s", list(set.__iter__(value))
    return None


# --------------------------------------------------------------------------- decode (trusted side)


class _Budget:
    __slots__ = ("nodes",)

    def __init__(self) -> None:
        self.nodes = 0


class Resolver:
    """How the trusted side turns handles into objects; the default refuses them all."""

    def handle(self, ref: int, type_name: str) -> Any:
        raise WireError("a handle where plain data was required")

    def exception_class(self, ref: int, name: str, base: str) -> Any:
        raise WireError("an exception class where plain data was required")

    def module(self, ref: int, name: str) -> Any:
        raise WireError("a module where plain data was required")


def decode(wire: Any, resolver: Resolver | None = None) -> Any:
    """Wire value -> fresh built-in objects; handles go through ``resolver``."""
    return _decode(wire, resolver or Resolver(), 0, _Budget())


def _decode(wire: Any, resolver: Resolver, depth: int, budget: _Budget) -> Any:
    budget.nodes += 1
    if budget.nodes > MAX_NODES:
        raise WireError(f"value has more than {MAX_NODES} parts")
    if depth > MAX_DEPTH:
        raise WireError(f"value nested deeper than {MAX_DEPTH}")
    kind = type(wire)
    if wire is None or kind is bool or kind is str:
        return wire
    if kind is int:
        return wire
    if kind is float:
        if not math.isfinite(wire):
            raise WireError("non-finite float outside its tag")
        return wire
    if kind is not list or not wire or type(wire[0]) is not str:
        raise WireError(f"unexpected wire value of type {kind.__name__}")
    tag, rest = wire[0], wire[1:]

    def inner(item: Any) -> Any:
        return _decode(item, resolver, depth + 1, budget)

    if tag == "l":
        return [inner(item) for item in rest]
    if tag == "t":
        return tuple(inner(item) for item in rest)
    if tag in ("s", "S"):
        items = [inner(item) for item in rest]
        try:
            return set(items) if tag == "s" else frozenset(items)
        except TypeError:
            raise WireError("unhashable member in a set") from None
    if tag == "d":
        return _decode_dict(rest, inner)
    if tag in ("b", "B"):
        data = _decode_bytes(rest)
        return data if tag == "b" else bytearray(data)
    if tag == "c" and len(rest) == 2:
        real, imag = inner(rest[0]), inner(rest[1])
        if type(real) is not float or type(imag) is not float:
            raise WireError("complex parts must be floats")
        return complex(real, imag)
    if tag == "f" and len(rest) == 1 and rest[0] in _NON_FINITE:
        return _NON_FINITE[rest[0]]
    if tag == "r" and len(rest) == 2 and type(rest[0]) is int and type(rest[1]) is str:
        return resolver.handle(rest[0], rest[1][:200])
    if tag == "x" and _is_exception_ref(rest):
        return resolver.exception_class(rest[0], rest[1][:200], rest[2][:200])
    if tag == "m" and len(rest) == 2 and type(rest[0]) is int and type(rest[1]) is str:
        return resolver.module(rest[0], rest[1][:200])
    raise WireError(f"unknown or malformed tag {tag[:20]!r}")


def _decode_dict(pairs: list[Any], inner: Callable[[Any], Any]) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for pair in pairs:
        if type(pair) is not list or len(pair) != 2:
            raise WireError("dict item is not a [key, value] pair")
        key = inner(pair[0])
        try:
            result[key] = inner(pair[1])
        except TypeError:
            raise WireError("unhashable dict key") from None
    return result


def _decode_bytes(rest: list[Any]) -> bytes:
    if len(rest) != 1 or type(rest[0]) is not str:
        raise WireError("bytes value is not one base64 string")
    try:
        return base64.b64decode(rest[0].encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise WireError("bytes value is not valid base64") from None


def _is_exception_ref(rest: list[Any]) -> bool:
    return len(rest) == 3 and type(rest[0]) is int and type(rest[1]) is str and type(rest[2]) is str
