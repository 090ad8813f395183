"""Parse the candidate under the declared grammar (seed 000, "Code correctness pipeline", step 1).

``ast.parse`` never executes the candidate. ``feature_version`` makes the
parser reject syntax newer than the declared version (it is best effort:
CPython documents that not every newer construct is refused).
"""

from __future__ import annotations

import ast
import re
import sys

from jurat.errors import ConfigError
from jurat.models._base import Frozen

__all__ = ["ParseError", "declared_version", "parse_candidate"]

_VERSION = re.compile(r"^3\.(\d{1,2})$")


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
    """Parse ``source``; exactly one of (tree, error) is None."""
    feature = declared_version(version)
    try:
        tree = ast.parse(source, filename=filename, feature_version=feature)
    except SyntaxError as exc:
        return None, ParseError(
            message=str(exc.msg),
            line=int(exc.lineno or 0),
            column=int(exc.offset or 0),
            text=(exc.text or "").strip()[:200],
        )
    except ValueError as exc:
        # 3.11 raises ValueError, not SyntaxError, for NUL bytes in the source.
        return None, ParseError(message=str(exc), line=1, column=1)
    return tree, None
