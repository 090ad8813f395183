"""Parse the candidate under the declared grammar (seed 000, "Code correctness pipeline", step 1).

``ast.parse`` never executes the candidate. ``feature_version`` makes the
parser reject syntax newer than the declared version (it is best effort:
CPython documents that not every newer construct is refused).

The parser is the first reader of the candidate's text, so the bounds every later walker
relies on are applied here (``_guard``): a source over ``MAX_SOURCE_BYTES`` is not parsed,
and a tree nested deeper than ``MAX_AST_DEPTH``, or too deep for CPython's own parser, is
``BeyondBounds``, never a tree a walker could recurse through.
"""

from __future__ import annotations

import ast
import re
import sys

from jurat.checks._guard import BeyondBounds, check_depth, check_size
from jurat.errors import ConfigError
from jurat.models._base import Frozen

__all__ = ["ParseError", "declared_version", "parse_candidate"]

_VERSION = re.compile(r"^3\.(\d{1,2})$")
#: CPython's messages for its tokenizer's fixed nesting limits (200 brackets, 100
#: indentation levels): the source is too deep for this parser, which says nothing of its
#: syntax.
_NESTING_LIMITS = ("too many nested parentheses", "too many levels of indentation")


class ParseError(Frozen):
    """Where and why the candidate does not parse."""

    message: str
    """The parser's message, e.g. ``invalid syntax``."""
    line: int
    """1-based line number."""
    column: int
    """1-based column, as Python reports it."""
    text: str = ""
    """The offending source line, stripped."""


def declared_version(version: str) -> tuple[int, int]:
    """``"3.11"`` -> ``(3, 11)``; ConfigError if malformed or newer than this interpreter."""
    match = _VERSION.match(version.strip())
    if match is None:
        raise ConfigError(
            f"checks.python.version: {version!r} is not a Python 3 version "
            '(fix: write it as "3.N", e.g. "3.11")'
        )
    minor = int(match.group(1))
    if minor > sys.version_info.minor:
        raise ConfigError(
            f"checks.python.version: {version} is newer than the interpreter running jurat "
            f"({sys.version_info.major}.{sys.version_info.minor}), whose parser cannot read "
            f"that grammar (fix: run jurat under Python {version} or later)"
        )
    if minor < 4:
        raise ConfigError(
            f"checks.python.version: {version} is older than the oldest grammar ast can "
            'check (fix: declare "3.4" or later)'
        )
    return 3, minor


def parse_candidate(
    source: str, version: str, filename: str = "solution.py"
) -> tuple[ast.Module | None, ParseError | None]:
    """Parse ``source``; exactly one of (tree, error) is None.

    BeyondBounds (``input_too_large``, ``input_too_deep``) when the source is beyond what
    the checks read: it is neither a tree nor a syntax error."""
    feature = declared_version(version)
    check_size(source)
    try:
        tree = ast.parse(source, filename=filename, feature_version=feature)
    except RecursionError as exc:
        # "maximum recursion depth exceeded during ast construction": a tree deeper than
        # the interpreter turns into objects.
        raise BeyondBounds("input_too_deep", "too deep for Python's parser") from exc
    except MemoryError as exc:
        # 3.11's parser reports its own stack overflowing (nesting past its MAXSTACK) as a
        # bare MemoryError; the source is within MAX_SOURCE_BYTES, so it is the nesting.
        raise BeyondBounds("input_too_deep", "too deep for Python's parser") from exc
    except SyntaxError as exc:
        if str(exc.msg) in _NESTING_LIMITS:
            raise BeyondBounds("input_too_deep", "too deep for Python's parser") from exc
        return None, ParseError(
            message=str(exc.msg),
            line=int(exc.lineno or 0),
            column=int(exc.offset or 0),
            text=(exc.text or "").strip()[:200],
        )
    except ValueError as exc:
        # 3.11 raises ValueError, not SyntaxError, for NUL bytes in the source.
        return None, ParseError(message=str(exc), line=1, column=1)
    check_depth(tree)
    return tree, None
