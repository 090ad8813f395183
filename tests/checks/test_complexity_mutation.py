"""Cyclomatic complexity from our CFG (E, N, P, M) and the mutation operators."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from jurat.checks import (
    MUTATION_OPERATORS,
    function_complexity,
    humaneval_to_files,
    load_humaneval,
    mutants,
)

DATA = Path(__file__).parent / "data"


def _one(source: str) -> tuple[int, int, int, int]:
    (fc,) = [f for f in function_complexity(ast.parse(source)) if f.name == "f"]
    assert fc.m == fc.edges - fc.nodes + 2 * fc.components
    return fc.edges, fc.nodes, fc.components, fc.m


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # entry -> return -> exit
        ("def f():\n    return 1\n", (2, 3, 1, 1)),
        # entry -> if -> {a, b} -> exit
        (
            "def f(x):\n    if x:\n        a = 1\n    else:\n        a = 2\n    return a\n",
            (6, 6, 1, 2),
        ),
        # loop header -> body -> header, header -> exit
        ("def f(xs):\n    for x in xs:\n        print(x)\n", (4, 4, 1, 2)),
        # try with two handlers: header -> body | h1 | h2
        (
            "def f():\n    try:\n        g()\n    except KeyError:\n        pass\n"
            "    except ValueError:\n        pass\n",
            (9, 8, 1, 3),
        ),
        # `a and b or c`: two extra operands, two side nodes
        ("def f(a, b, c):\n    return a and b or c\n", (6, 5, 1, 3)),
        # assert: the raise path is an edge to exit
        ("def f(x):\n    assert x\n", (3, 3, 1, 2)),
        # comprehension with one filter: loop + filter
        ("def f(xs):\n    return [x for x in xs if x]\n", (6, 5, 1, 3)),
        # code after return is unreachable but flows into exit: still one component
        ("def f():\n    return 1\n    x = 2\n", (3, 4, 1, 1)),
        # match with a wildcard: three cases, two extra paths
        (
            "def f(x):\n    match x:\n        case 1:\n            return 'a'\n"
            "        case 2:\n            return 'b'\n        case _:\n            return 'c'\n",
            (10, 9, 1, 3),
        ),
    ],
)
def test_cfg_counts_edges_nodes_and_components(
    source: str, expected: tuple[int, int, int, int]
) -> None:
    assert _one(source) == expected


def test_nested_functions_and_methods_get_their_own_graph() -> None:
    source = (
        "class Stack:\n    def push(self, x):\n        if x:\n            self.items.append(x)\n\n"
        "def outer(xs):\n    def inner(y):\n        return y or 0\n"
        "    return [inner(x) for x in xs]\n"
    )
    found = {f.name: (f.m, f.radon_m) for f in function_complexity(ast.parse(source))}
    assert found == {"Stack.push": (2, 2), "outer": (2, 2), "outer.<locals>.inner": (2, 2)}


def test_cfg_agrees_with_radon_except_for_loop_and_try_else() -> None:
    # radon counts `for/while/try ... else` as a decision; the graph does not.
    disagreements = []
    for problem in load_humaneval(DATA / "HumanEval.jsonl.gz"):
        source, _ = humaneval_to_files(problem)
        tree = ast.parse(source)
        has_else = any(
            isinstance(n, ast.For | ast.While | ast.Try) and n.orelse for n in ast.walk(tree)
        )
        for fc in function_complexity(tree):
            if fc.m != fc.radon_m:
                disagreements.append((problem["task_id"], fc.name, has_else))
    assert disagreements == [("HumanEval/150", "x_or_y", True)]


def test_mutants_are_deterministic_and_each_changes_the_program() -> None:
    source = "def f(a, b):\n    if a < b and a > 0:\n        return a + 1\n    return b\n"
    tree = ast.parse(source)
    first, second = mutants(tree, 50), mutants(tree, 50)
    assert first == second
    assert {m.operator for m in first} == {"ROR", "LCR", "NEG", "AOR", "CRP", "RVR"}
    original = ast.unparse(tree)
    for mutant in first:
        ast.parse(mutant.source)
        assert ast.unparse(ast.parse(mutant.source)) != original
    assert MUTATION_OPERATORS == "jurat.mutation/v1"


def test_mutant_limit_samples_evenly_and_deterministically() -> None:
    source = "def f(x):\n" + "".join(f"    x = x + {i}\n" for i in range(30)) + "    return x\n"
    tree = ast.parse(source)
    chosen = mutants(tree, 5)
    assert len(chosen) == 5
    assert chosen == mutants(tree, 5)
    assert [m.line for m in chosen] == sorted(m.line for m in chosen)
    assert chosen[-1].line > chosen[0].line + 10
    assert mutants(tree, 0) == ()


def test_docstrings_are_not_mutated() -> None:
    tree = ast.parse('def f():\n    """Doc."""\n    return 1\n')
    assert [m.description for m in mutants(tree, 10)] == ["return value -> None", "1 -> 2"]
