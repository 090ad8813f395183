"""HumanEval problems as a candidate module plus a pytest file.

The candidate is ``prompt + completion`` (the canonical solution when the
problem carries no ``completion``), placed as the module ``solution``; the
problem's ``check(candidate)`` becomes the body of one pytest test.

The test imports the entry point from the candidate by name, and nothing else. Helpers
some checks call (``poly`` in HumanEval/32, ``encode_cyclic`` in /38) are defined in the
test file from the *prompt's* text, with the prompt's own imports: the completion is the
contributor's and may redefine them (a ``poly`` returning 0 passes /32's check for any
answer), and a star import would let a completion defining ``abs`` or ``round`` rebind
the builtin inside the trusted check (docs/checks.md, "The tests' view").
"""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path
from typing import Any

from jurat.errors import ConfigError

__all__ = ["humaneval_to_files", "load_humaneval"]

_REQUIRED = ("prompt", "test", "entry_point")


def humaneval_to_files(
    problem: dict[str, Any], *, module: str = "solution"
) -> tuple[str, dict[str, str]]:
    """(solution source, {test file name: test source}) for one HumanEval problem."""
    missing = [key for key in _REQUIRED if not isinstance(problem.get(key), str)]
    if missing:
        raise ConfigError(f"HumanEval problem lacks string field(s): {', '.join(missing)}")
    completion = problem.get("completion", problem.get("canonical_solution"))
    if not isinstance(completion, str):
        raise ConfigError("HumanEval problem has neither `completion` nor `canonical_solution`")
    entry = problem["entry_point"]
    if not entry.isidentifier():
        raise ConfigError(f"HumanEval entry_point {entry!r} is not an identifier")
    solution = problem["prompt"] + completion
    helpers = _prompt_helpers(problem["prompt"], entry)
    test = (
        f"{helpers}\n\nfrom {module} import {entry}\n\n"
        f"{problem['test']}\n\n"
        "def test_check():\n"
        f"    check({entry})\n"
    )
    return solution, {f"test_{module}.py": test}


def _prompt_helpers(prompt: str, entry: str) -> str:
    """The prompt's top-level imports and definitions other than the entry point, as
    source (trusted text: the prompt is the problem's, not the contributor's)."""
    try:
        tree = ast.parse(prompt)
    except SyntaxError:
        # A prompt may stop at the entry point's signature, before any body.
        try:
            tree = ast.parse(prompt + "    ...\n")
        except SyntaxError as exc:
            raise ConfigError(f"HumanEval prompt does not parse: {exc.msg}") from exc
    kept = [
        node
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        or (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name != entry
        )
    ]
    return "\n\n".join(ast.unparse(node) for node in kept)


def load_humaneval(path: str | Path) -> list[dict[str, Any]]:
    """The problems of a ``HumanEval.jsonl[.gz]`` file, in file order."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read HumanEval problems from {path}: {exc}") from exc
