"""Bounds on what jurat's own checkers read, and the one place a checker's failure on its
input becomes a gate outcome (issue 36, "No single input aborts a run").

Threat model. Everything the checkers read on the host is the judged party's text: a
candidate's source (parse, import policy, lint, complexity, mutant generation) and the
answers of an equivalence pair. None of it runs here, but every reader can be made to
work in proportion to something the author chose. Python's parser, ``ast.NodeVisitor``,
``ast.unparse``, ``copy.deepcopy`` and radon recurse once or several times per level of
nesting, so 2,000 terms of ``1+1+…`` (4 KB) raise ``RecursionError`` in the middle of a
check; a regular expression with two adjacent unbounded runs backtracks quadratically; a
large flat file costs memory and time in every pass, once per mutant in mutation.
Unchecked, one such artifact ends the whole ``jurat run`` with an internal error, on
every re-run, and no other artifact gets its receipt.

So the bounds hold by construction, in two layers:

1. **Bounded input.** The parse step refuses a source over ``MAX_SOURCE_BYTES`` before
   parsing it, and a syntax tree deeper than ``MAX_AST_DEPTH`` (measured without
   recursion) before any walker sees it. A walker spends at most about six frames a
   level, so every later step fits in Python's default recursion limit with room for
   whoever calls it, and the same source gets the same gates from ``jurat check``, a
   run's thread pool or the service. The answer extractor has its own caps
   (``_answers``) and only linear patterns.
2. **One guard around every step.** ``guarded`` runs a step and turns what a checker can
   raise on its input into that gate's ``error`` with a named ``cause`` (``CAUSES``):
   ``BeyondBounds`` (a bound above, or a checker's time budget), ``RecursionError``,
   ``MemoryError``, and any other exception from a checker (``checker_failed``: a bug
   one input triggers must not stop the others' checks). Only ``JuratError``s that are
   not about the input (a bad configuration) pass through. The gate records the cause as
   an enum and the bounds policy's id, never the exception's text, which can quote the
   candidate (docs/checks.md, "What crosses into a trusted output").

Recursion limits are process-wide and the checks run in a thread pool, so nothing here
raises one: depth comes from bounding the input, not from a deeper stack.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import Literal, ParamSpec, TypeVar, get_args

from jurat.checks._models import Step
from jurat.errors import JuratError, ValidationError
from jurat.models._evidence import GateOutcome

__all__ = [
    "BOUNDS_POLICY",
    "CAUSES",
    "MAX_AST_DEPTH",
    "MAX_SOURCE_BYTES",
    "BeyondBounds",
    "Cause",
    "bounded",
    "cause_of",
    "check_depth",
    "check_size",
    "guarded",
    "guarded_pair",
    "refused",
]

BOUNDS_POLICY = "jurat.bounds/v1"
"""Id of the bounds below, recorded in every gate they decide; new bounds get a new id."""

MAX_SOURCE_BYTES = 256 * 1024
"""Largest candidate source the checks read, in UTF-8 bytes: above the largest hand-written
module of CPython's standard library (``_pydecimal.py``, 229 KB), a fraction of what a flat
file of that size costs ruff's findings and mutant generation to read."""

MAX_AST_DEPTH = 100
"""Deepest syntax tree the checks walk (the module is level 1). Hand-written code stays
under about 60 (the deepest module in this interpreter's library and site-packages,
outside generated tables); the greediest walker (``ast.unparse`` or ``copy.deepcopy`` of
nested dictionaries, comparisons or definitions) uses about six frames a level, so 100
levels leave a third of the default recursion limit of 1,000 to the caller."""

Cause = Literal["input_too_deep", "input_too_large", "checker_timeout", "checker_failed"]
"""Why a checker gave no outcome: nested deeper than it reads, larger than it reads, over
its time budget, or it failed on this input."""
CAUSES: tuple[Cause, ...] = get_args(Cause)

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


class BeyondBounds(ValidationError):
    """A checker's input is beyond the bound it reads to; ``cause`` names which.

    The message names the bound, never the input."""

    def __init__(self, cause: Cause, what: str) -> None:
        self.cause: Cause = cause
        super().__init__(f"{cause}: {what}")


def check_size(source: str) -> None:
    """BeyondBounds(``input_too_large``) when ``source`` is over ``MAX_SOURCE_BYTES``."""
    # Four bytes a character at most: a short text needs no encoding to be measured.
    if len(source) > MAX_SOURCE_BYTES // 4 and (
        len(source.encode("utf-8", "surrogatepass")) > MAX_SOURCE_BYTES
    ):
        raise BeyondBounds(
            "input_too_large", f"the source is larger than {MAX_SOURCE_BYTES} bytes"
        )


def check_depth(tree: ast.AST, limit: int = MAX_AST_DEPTH) -> None:
    """BeyondBounds(``input_too_deep``) when ``tree`` is nested deeper than ``limit``
    levels; measured with an explicit stack, so it never recurses itself."""
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise BeyondBounds(
                "input_too_deep", f"the syntax tree is nested deeper than {limit} levels"
            )
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def cause_of(exc: Exception) -> Cause | None:
    """The cause a checker's exception stands for; None for a ``JuratError`` that is not
    about the input (a bad configuration, a missing tool), which its caller must see."""
    if isinstance(exc, BeyondBounds):
        return exc.cause
    if isinstance(exc, JuratError):
        return None
    if isinstance(exc, RecursionError):
        return "input_too_deep"
    if isinstance(exc, MemoryError):
        return "input_too_large"
    return "checker_failed"


def bounded(checker: Callable[P, R]) -> Callable[P, R]:
    """``checker`` with ``RecursionError`` and ``MemoryError`` raised as ``BeyondBounds``:
    the bound a public checker gives its direct callers, whatever tree they pass it."""

    @functools.wraps(checker)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return checker(*args, **kwargs)
        except RecursionError as exc:
            raise BeyondBounds("input_too_deep", "a checker recursed too deep") from exc
        except MemoryError as exc:
            raise BeyondBounds("input_too_large", "a checker ran out of memory") from exc

    return run


def refused(gate_id: str, cause: Cause) -> Step:
    """Gate ``gate_id`` as ``error`` for ``cause``: decided by these bounds, so its tool is
    jurat's bounds policy; its detail and data are the enum, nothing of the input."""
    gate = GateOutcome(
        id=gate_id,
        outcome="error",
        tool="jurat",
        tool_version=BOUNDS_POLICY,
        detail=cause,
        data={"cause": cause, "bounds": BOUNDS_POLICY},
    )
    return gate, None


def guarded(gate_id: str, step: Callable[P, Step], /, *args: P.args, **kwargs: P.kwargs) -> Step:
    """``step(*args, **kwargs)``, or gate ``gate_id`` as ``error`` with the cause of what it
    raised (``cause_of``)."""
    try:
        return step(*args, **kwargs)
    except Exception as exc:
        return _refusal(gate_id, exc)


def guarded_pair(
    gate_id: str, step: Callable[P, tuple[T | None, Step]], /, *args: P.args, **kwargs: P.kwargs
) -> tuple[T | None, Step]:
    """``guarded`` for a step that also returns what later steps read (the parse step's
    syntax tree): None with the ``error`` gate, so those steps skip."""
    try:
        return step(*args, **kwargs)
    except Exception as exc:
        return None, _refusal(gate_id, exc)


def _refusal(gate_id: str, exc: Exception) -> Step:
    """The gate for what a step raised; an error not about the input goes on up."""
    cause = cause_of(exc)
    if cause is None:
        raise exc
    return refused(gate_id, cause)
