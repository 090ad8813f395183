"""math-verify, the second reader of the deterministic answer pass (seed 002).

The pass settles a pair only when math-verify (``parse`` and ``verify``) agrees with an exact
rational reading; this module is the only place that calls it.

math-verify's own timeout is a SIGALRM, which works only in the main thread (and replaces,
then cancels, any alarm the caller had set); elsewhere it is disabled, and the bound is that
math-verify only ever reads a short span that already passed the strict grammar, so it cannot
be handed adversarial input.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import logging
import threading
from fractions import Fraction
from typing import Any

from jurat.errors import DependencyError

__all__ = [
    "MATH_VERIFY_TIMEOUT_S",
    "math_verify_equal",
    "math_verify_read",
    "math_verify_version",
    "sympy_rational",
]

MATH_VERIFY_TIMEOUT_S = 2
"""Seconds for each math-verify call (integer: it uses ``signal.alarm``)."""


def _math_verify() -> Any:
    try:
        import math_verify
    except ImportError as exc:  # pragma: no cover - math-verify is a pinned dependency
        raise DependencyError("the deterministic equivalence pass needs `math-verify`") from exc
    return math_verify


# sympy and math_verify.errors ship no type information and only ``math_verify`` itself is
# listed in mypy's ignore_missing_imports, so they are imported as plain modules.
def _sympy() -> Any:
    return importlib.import_module("sympy")


def _timeout_exception() -> type[BaseException]:
    # math-verify's TimeoutException derives from BaseException, so ``except Exception``
    # alone would let it escape.
    exc: type[BaseException] = importlib.import_module("math_verify.errors").TimeoutException
    return exc


def math_verify_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("math-verify")
    except PackageNotFoundError as exc:  # pragma: no cover - pinned dependency
        raise DependencyError("the deterministic equivalence pass needs `math-verify`") from exc


def _timeout() -> int | None:
    # math-verify times out with SIGALRM, which raises outside the main thread; there the
    # input bound (a short span that already passed the strict grammar) is the only bound.
    return MATH_VERIFY_TIMEOUT_S if threading.current_thread() is threading.main_thread() else None


@functools.cache
def _warmed(latex: bool) -> None:
    """Build math-verify's grammars and caches once per process on a constant input, with
    no alarm: the first parse of each kind compiles them, which took over the 2 s bound on
    a loaded machine and turned a plain ``2.0E+2`` into "could not parse it". The alarm then
    bounds only the reading of the artifact's own span."""
    mv = _math_verify()
    config = mv.LatexExtractionConfig() if latex else mv.ExprExtractionConfig()
    # Unbounded on purpose (a constant input): math-verify warns once that its timeout is
    # off, which is not news to a user, so its loggers are quiet meanwhile.
    quiet = [logging.getLogger(f"math_verify.{name}") for name in ("parser", "grader")]
    levels = [q.level for q in quiet]
    for q in quiet:
        q.setLevel(logging.ERROR)
    try:
        _first_calls(mv, config, latex)
    finally:
        for q, level in zip(quiet, levels, strict=True):
            q.setLevel(level)


def _first_calls(mv: Any, config: Any, latex: bool) -> None:
    with contextlib.suppress(Exception):
        got = mv.parse("$1$" if latex else "1", extraction_config=[config],
                       fallback_mode="no_fallback", extraction_mode="first_match",
                       parsing_timeout=None)
        mv.verify(got, got, timeout_seconds=None)


def math_verify_read(mv_input: str, latex: bool) -> Any:
    """math-verify's single numeric reading of ``mv_input``, or the reason there is none."""
    mv = _math_verify()
    timeout_exc = _timeout_exception()
    _warmed(latex)
    config = mv.LatexExtractionConfig() if latex else mv.ExprExtractionConfig()
    try:
        got = mv.parse(
            mv_input,
            extraction_config=[config],
            fallback_mode="no_fallback",
            extraction_mode="first_match",
            parsing_timeout=_timeout(),
            raise_on_error=True,
        )
    except (Exception, timeout_exc) as exc:
        return f"math-verify could not parse it ({type(exc).__name__})"
    if len(got) != 1 or not isinstance(got[0], _sympy().Basic):
        return "math-verify found no single value"
    value = got[0]
    if not value.is_number:
        return "math-verify did not read a number"
    return value


def math_verify_equal(a: Any, b: Any) -> bool | None:
    """math_verify.verify on two values; ``None`` when it errs or times out (never a guess)."""
    mv = _math_verify()
    timeout_exc = _timeout_exception()
    try:
        return bool(mv.verify(a, b, timeout_seconds=_timeout(), raise_on_error=True))
    except (Exception, timeout_exc):
        return None


def sympy_rational(x: Fraction) -> Any:
    """``x`` as a sympy Rational, the form math_verify.verify compares."""
    return _sympy().Rational(x.numerator, x.denominator)
