"""No single input aborts a check (issue 36, item 4; docs/checks.md, "A pathological
input").

Generated sources of every kind of nesting (operators, brackets, calls, attributes,
lambdas, nested blocks), huge flat sources and pathological answer texts go through every
checker in-process, through ``run_checks`` (no tests, so no sandbox) and through ``jurat
check``: each returns, every gate has an outcome, and what is beyond the bounds is its
gate's ``error`` with a named cause, never an exception and never the input's text.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jurat.checks import (
    GATE_IDS,
    IMPORT_POLICIES,
    _answers,
    _lint,
    function_complexity,
    inspect_operations,
)
from jurat.checks._answers import MAX_TEXT_CHARS, extract_answer, no_answer_kind
from jurat.checks._equivalence import deterministic_equivalence
from jurat.checks._guard import (
    BOUNDS_POLICY,
    CAUSES,
    MAX_AST_DEPTH,
    MAX_SOURCE_BYTES,
    BeyondBounds,
    check_depth,
    guarded,
    guarded_pair,
)
from jurat.checks._mutation import mutants
from jurat.checks._parse import parse_candidate
from jurat.checks._pipeline import run_checks
from jurat.checks._steps import Plan, step_lint, step_parse
from jurat.errors import ConfigError
from jurat.models import GATE_COMPLEXITY, GATE_LINT_RUFF, GATE_PYTHON_PARSE
from jurat.models._checks import PythonChecks
from jurat.models._evidence import GateOutcome

POLICY = IMPORT_POLICIES["jurat.imports/v1"]
#: An identifier in every generated source: it must never reach a gate.
MARK = "zqxSECRETzqx"

#: Expressions nested ``n`` deep, one per kind of nesting.
EXPRESSIONS: dict[str, Callable[[int], str]] = {
    "sum": lambda n: "+".join([MARK] * n),
    "power": lambda n: "**".join(["2"] * n),
    "parentheses": lambda n: "(" * n + MARK + ")" * n,
    "lists": lambda n: "[" * n + MARK + "]" * n,
    "dicts": lambda n: "{1: " * n + MARK + "}" * n,
    "calls": lambda n: f"{MARK}(" * n + "1" + ")" * n,
    "attributes": lambda n: MARK + ".a" * n,
    "subscripts": lambda n: MARK + "[0]" * n,
    "not": lambda n: "not " * n + MARK,
    "minus": lambda n: "-" * n + MARK,
    "lambdas": lambda n: "lambda: " * n + MARK,
    "conditionals": lambda n: f"{MARK} if x else " * n + "1",
    "and": lambda n: f"({MARK} and " * n + "1" + ")" * n,
    "comparisons": lambda n: f"({MARK} < " * n + "1" + ")" * n,
    "comprehensions": lambda n: "[x for x in " * n + MARK + "]" * n,
}


def _blocks(header: str) -> Callable[[int], str]:
    def nested(n: int) -> str:
        lines = [" " * i + header.format(i=i) for i in range(n)]
        return "\n".join([*lines, " " * n + f"{MARK} = 1", ""])

    return nested


#: Statements nested ``n`` deep.
BLOCKS: dict[str, Callable[[int], str]] = {
    "functions": _blocks("def f{i}():"),
    "classes": _blocks("class C{i}:"),
    "ifs": _blocks("if x:"),
    "loops": _blocks("for x in y:"),
    "withs": _blocks("with x:"),
}


def _depth(tree: ast.AST) -> int:
    best, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        best = max(best, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return best


def _beyond(source: str) -> bool:
    """The oracle: is ``source`` beyond the bounds (or CPython's own parser's nesting)?"""
    if len(source.encode()) > MAX_SOURCE_BYTES:
        return True
    try:
        tree = ast.parse(source)
    except (RecursionError, MemoryError):
        return True
    except SyntaxError as exc:
        return "too many" in str(exc.msg)
    return _depth(tree) > MAX_AST_DEPTH


def _assert_sound(gates: tuple[GateOutcome, ...] | list[GateOutcome]) -> None:
    """Every gate decided, none carrying the input's text."""
    assert [g.id for g in gates] == list(GATE_IDS)
    for gate in gates:
        assert gate.outcome in ("pass", "fail", "skip", "error")
        assert MARK not in json.dumps(gate.model_dump(mode="json"))
        if gate.outcome == "error" and gate.tool_version == BOUNDS_POLICY:
            assert gate.detail in CAUSES and gate.data == {"cause": gate.detail,
                                                           "bounds": BOUNDS_POLICY}


def _check(source: str) -> dict[str, GateOutcome]:
    report = run_checks(source, config=PythonChecks())
    _assert_sound(report.gates)
    assert MARK not in json.dumps([e.model_dump(mode="json") for e in report.evidence])
    return {g.id: g for g in report.gates}


def _expect(source: str, gates: dict[str, GateOutcome]) -> None:
    parse = gates[GATE_PYTHON_PARSE]
    if _beyond(source):
        assert (parse.outcome, parse.detail) in (("error", "input_too_deep"),
                                                ("error", "input_too_large"))
        # Nothing walks a tree that was refused.
        assert all(g.outcome == "skip" for g in gates.values() if g.id != GATE_PYTHON_PARSE)
    else:
        assert parse.outcome == "pass", parse
        assert all(g.outcome != "error" for g in gates.values()), gates


depths = st.one_of(st.integers(1, MAX_AST_DEPTH + 20), st.integers(MAX_AST_DEPTH, 6000))


# --------------------------------------------------------------------------- run_checks


@settings(max_examples=40)
@given(kind=st.sampled_from(sorted(EXPRESSIONS)), n=depths)
def test_nested_expressions_end_as_a_gate_never_an_exception(kind: str, n: int) -> None:
    source = f"X = {EXPRESSIONS[kind](n)}\n"
    _expect(source, _check(source))


@settings(max_examples=25)
@given(kind=st.sampled_from(sorted(BLOCKS)), n=st.integers(1, 130))
def test_nested_blocks_end_as_a_gate_never_an_exception(kind: str, n: int) -> None:
    source = BLOCKS[kind](n)
    _expect(source, _check(source))


def test_the_issues_candidate_is_a_named_parse_error() -> None:
    # 2,000 terms of 1+1+…: 4 KB that ended the whole run with a RecursionError.
    gates = _check("X = " + "+".join(["1"] * 2000) + "\n")
    assert (gates[GATE_PYTHON_PARSE].outcome, gates[GATE_PYTHON_PARSE].detail) == (
        "error", "input_too_deep")


@pytest.mark.parametrize(
    ("source", "parse"),
    [
        (f"{MARK} = 1\n" * (MAX_SOURCE_BYTES // 20), "pass"),  # many statements, in bounds
        (f"X = '{'a' * (MAX_SOURCE_BYTES - 100)}'\n", "pass"),  # one long line
        (f"X = [{'1,' * 30_000}]\n", "pass"),  # a finding per element for ruff
        (f"{MARK} = 1\n" * (MAX_SOURCE_BYTES // 10), "error"),  # over the bound
    ],
    ids=["statements", "long-line", "flat-list", "too-large"],
)
def test_huge_flat_sources_are_checked_or_refused_by_size(source: str, parse: str) -> None:
    gates = _check(source)
    assert gates[GATE_PYTHON_PARSE].outcome == parse
    if parse == "error":
        assert gates[GATE_PYTHON_PARSE].detail == "input_too_large"
    else:
        assert gates[GATE_COMPLEXITY].outcome == "pass"
        assert gates[GATE_LINT_RUFF].outcome in ("pass", "fail")


# --------------------------------------------------------------------------- each checker


def _deep_tree(levels: int) -> ast.Module:
    """A tree no parser would hand over: ``levels`` nested additions inside a function."""
    node: ast.expr = ast.Constant(1)
    for _ in range(levels):
        node = ast.BinOp(left=node, op=ast.Add(), right=ast.Constant(1))
    at = {"lineno": 1, "col_offset": 0, "end_lineno": 1, "end_col_offset": 1}
    body = ast.Return(value=node, **at)
    func = ast.FunctionDef(name="f", args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                        kw_defaults=[], defaults=[]),
                           body=[body], decorator_list=[], returns=None, type_comment=None,
                           **at)
    return ast.Module(body=[func], type_ignores=[])


@pytest.mark.parametrize(
    "checker",
    [
        lambda tree: inspect_operations(tree, POLICY),
        function_complexity,
        lambda tree: mutants(tree, 3),
        check_depth,
    ],
    ids=["imports", "complexity", "mutants", "depth"],
)
def test_every_walker_refuses_a_tree_past_the_recursion_limit_by_name(
    checker: Callable[[ast.Module], object],
) -> None:
    tree = _deep_tree(sys.getrecursionlimit() * 3)
    with pytest.raises(BeyondBounds) as caught:
        checker(tree)
    assert caught.value.cause == "input_too_deep"


#: The shapes whose walkers spend the most frames per level (ast.unparse, copy.deepcopy).
_GREEDY = ["dicts", "and", "comparisons", "lists", "calls"]


@pytest.mark.parametrize("kind", _GREEDY)
def test_walkers_reach_the_bound_from_a_deep_caller(kind: str) -> None:
    # The deepest tree the parse step lets through, walked with 200 frames already used:
    # the bound leaves the caller room, whoever it is.
    n = next(n for n in range(MAX_AST_DEPTH, 0, -1)
             if _depth(ast.parse(f"X = {EXPRESSIONS[kind](n)}")) <= MAX_AST_DEPTH)
    source = f"def f():\n    return {EXPRESSIONS[kind](n - 2)}\n"
    tree, error = parse_candidate(source, "3.11")
    assert tree is not None and error is None

    def walk(frames: int) -> None:
        if frames:
            return walk(frames - 1)
        inspect_operations(tree, POLICY)
        function_complexity(tree)
        assert mutants(tree, 5)
        ast.unparse(tree)

    walk(200)


@pytest.mark.parametrize(
    "source",
    [
        "X = " + "(" * 250 + "1" + ")" * 250,  # the tokenizer's 200 brackets
        BLOCKS["ifs"](120),  # its 100 indentation levels
        "X = " + "lambda: " * 5000 + "1",  # 3.11's parser stack: a bare MemoryError
        "X = " + "-" * 100_000 + "1",
        "X = " + "+".join(["1"] * 5000),  # ast construction: RecursionError
        "X = " + "+".join(["1"] * (MAX_AST_DEPTH + 1)),  # parsed, deeper than the bound
    ],
    ids=["brackets", "indentation", "parser-stack", "unary", "ast-construction", "bound"],
)
def test_parse_names_every_way_a_source_is_too_deep(source: str) -> None:
    with pytest.raises(BeyondBounds) as caught:
        parse_candidate(source, "3.11")
    assert caught.value.cause == "input_too_deep"
    assert source[:20] not in str(caught.value)
    tree, parse = guarded_pair(GATE_PYTHON_PARSE, step_parse, source, PythonChecks())
    assert tree is None and (parse[0].outcome, parse[0].detail) == ("error", "input_too_deep")


def test_a_syntax_error_is_still_a_failure() -> None:
    tree, (gate, _) = guarded_pair(GATE_PYTHON_PARSE, step_parse, "X = (1\n", PythonChecks())
    assert tree is None and gate.outcome == "fail"


def test_mutation_leaves_the_tree_as_it_was_even_when_unparse_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tree = ast.parse("def f(a, b):\n    if a < b:\n        return a + 1\n    return b\n")
    before = ast.dump(tree, include_attributes=True)
    assert len(mutants(tree, 20)) >= 4
    assert ast.dump(tree, include_attributes=True) == before
    calls = iter(range(100))

    def unparse(node: ast.AST) -> str:
        if next(calls) == 2:
            raise RecursionError("maximum recursion depth exceeded")
        return "pass"

    monkeypatch.setattr(ast, "unparse", unparse)
    with pytest.raises(BeyondBounds):
        mutants(tree, 20)
    assert ast.dump(tree, include_attributes=True) == before


def test_ruff_over_its_budget_is_a_named_lint_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(*args: object, **kwargs: object) -> None:
        raise subprocess.TimeoutExpired(cmd="ruff", timeout=_lint.RUFF_TIMEOUT_S)

    _lint.ruff_binary()  # found (and cached) before ruff starts to "time out"
    monkeypatch.setattr(subprocess, "run", slow)
    config = PythonChecks()
    source = f"{MARK} = 1\n"
    tree = ast.parse(source)
    gate, item = guarded(GATE_LINT_RUFF, step_lint, source, tree, Plan(source, None, config))
    assert (gate.outcome, gate.detail, item) == ("error", "checker_timeout", None)


# --------------------------------------------------------------------------- the guard


@pytest.mark.parametrize(
    ("raised", "cause"),
    [
        (RecursionError(f"deep {MARK}"), "input_too_deep"),
        (MemoryError(MARK), "input_too_large"),
        (BeyondBounds("checker_timeout", "slow"), "checker_timeout"),
        (ValueError(f"radon cannot read {MARK}"), "checker_failed"),
        (KeyError(MARK), "checker_failed"),
    ],
)
def test_the_guard_names_the_cause_and_never_the_message(
    raised: Exception, cause: str
) -> None:
    def step() -> tuple[GateOutcome, None]:
        raise raised

    gate, item = guarded(GATE_COMPLEXITY, step)
    assert (gate.id, gate.outcome, gate.detail, item) == (GATE_COMPLEXITY, "error", cause, None)
    assert gate.data == {"cause": cause, "bounds": BOUNDS_POLICY}
    assert MARK not in json.dumps(gate.model_dump(mode="json"))


def test_the_guard_lets_a_configuration_error_through() -> None:
    def step() -> tuple[GateOutcome, None]:
        raise ConfigError("checks.python.import_policy: unknown policy")

    with pytest.raises(ConfigError):
        guarded(GATE_COMPLEXITY, step)


# --------------------------------------------------------------------------- answers

_TOKENS = [" ", "\t", "\n", "*", "**", "#", "####", "A", "A:", "answer", "answer is", ":",
           "\\boxed{", "\\frac{", "{", "}", "\\", "$", "1", "2,000", ".", "e5", "%", "-",
           "is", "eggs", "one", "：", "\\text{", "^{", "\\circ"]
texts = st.lists(st.sampled_from(_TOKENS), max_size=300).map("".join) | st.builds(
    lambda token, n, tail: token * n + tail,
    st.sampled_from(_TOKENS), st.integers(1, 20_000), st.sampled_from(["", "x", "5", "A: 5"]))


@settings(max_examples=60)
@given(a=texts, b=texts)
def test_answers_of_any_shape_are_read_or_left_to_the_judge(a: str, b: str) -> None:
    for text in (a, b):
        got = extract_answer(text)
        if isinstance(got, str):
            assert no_answer_kind(got)  # a kind for every reason
    check = deterministic_equivalence(a, b)
    gate = check.to_gate()
    assert gate.outcome in ("pass", "fail", "skip")
    assert check.settled == (gate.outcome != "skip")


def _pathological() -> Iterator[tuple[str, str]]:
    blanks = MAX_TEXT_CHARS - 100
    # "answer" then a run of blanks backtracked quadratically before issue 36.
    yield "answer-blanks", "The answer" + " " * blanks + "is unclear"
    yield "answer-tabs", "answer is" + " \t" * (blanks // 2)
    yield "answer-stars", "answer " + "** " * (blanks // 3)
    yield "A-line-blanks", "\n".join(["A" + " " * 1000] * 90)
    yield "hash-blanks", " " * blanks + "####"
    yield "boxed-blanks", "\\boxed" + " " * blanks
    yield "number-words", "answer: 5 " + "one " * (blanks // 4)


@pytest.mark.parametrize(("name", "text"), list(_pathological()), ids=lambda v: str(v)[:14])
def test_pathological_answer_texts_are_left_to_the_judge(name: str, text: str) -> None:
    got = extract_answer(text)
    assert isinstance(got, str), name
    check = deterministic_equivalence(text, "A: 5")
    assert (check.settled, check.to_gate().outcome) == (False, "skip")


def test_an_extractor_that_fails_leaves_the_pair_to_the_judge_with_its_cause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def deep(text: str) -> object:
        raise RecursionError(f"maximum recursion depth exceeded near {MARK}")

    monkeypatch.setattr(_answers, "_find_spans", deep)
    got = extract_answer(f"A: {MARK}")
    assert isinstance(got, str) and no_answer_kind(got) == "input_too_deep"
    check = deterministic_equivalence(f"A: {MARK}", "A: 5")
    gate = check.to_gate()
    assert (check.settled, gate.outcome) == (False, "skip")
    assert "input_too_deep" in gate.detail and MARK not in json.dumps(gate.data)


# --------------------------------------------------------------------------- jurat check

#: One source per way of being beyond the bounds, and one within them.
CORPUS: dict[str, tuple[str, str | None]] = {
    "issue-sum": ("X = " + "+".join(["1"] * 2000) + "\n", "input_too_deep"),
    "brackets": ("X = " + "[" * 300 + "1" + "]" * 300 + "\n", "input_too_deep"),
    "lambdas": ("X = " + "lambda: " * 5000 + "1\n", "input_too_deep"),
    "ifs": (BLOCKS["ifs"](120), "input_too_deep"),
    "attributes": (f"X = {EXPRESSIONS['attributes'](150)}\n", "input_too_deep"),
    "too-large": ("x = 1\n" * (MAX_SOURCE_BYTES // 6 + 1), "input_too_large"),
    "fine": ("def add(a, b):\n    return a + b\n", None),
}


@pytest.mark.parametrize("name", list(CORPUS))
def test_jurat_check_exits_with_a_decision_and_names_the_cause(
    name: str, tmp_path: Path
) -> None:
    source, cause = CORPUS[name]
    candidate = tmp_path / "candidate.py"
    candidate.write_text(source)
    r = subprocess.run([sys.executable, "-m", "jurat", "check", str(candidate), "--json"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == (0 if cause is None else 2), r.stderr
    report = json.loads(r.stdout)
    parse = next(g for g in report["gates"] if g["id"] == GATE_PYTHON_PARSE)
    if cause is None:
        assert parse["outcome"] == "pass"
    else:
        assert (parse["outcome"], parse["detail"], parse["data"]["cause"]) == (
            "error", cause, cause)
    assert "RecursionError" not in r.stdout + r.stderr
