"""Mutation sensitivity (seed 000, "Code correctness pipeline", step 5).

A fixed, versioned set of AST mutation operators (``jurat.mutation/v1``).
Sites are enumerated in source order; when there are more sites than the
campaign's ``max_mutants``, an evenly spaced, deterministic subset is taken,
so the same candidate always yields the same mutants.

Operators:

``AOR``  arithmetic operator replacement (``+ -> -``, ``* -> //`` ...)
``ROR``  relational operator replacement (``< -> <=``, ``== -> !=`` ...)
``LCR``  logical connector replacement (``and <-> or``)
``NEG``  negate the condition of ``if``, ``while`` and conditional expressions
``CRP``  integer constant ``n -> n + 1``, ``True <-> False``
``RVR``  ``return <expr>`` becomes ``return None``
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from jurat.checks._guard import bounded
from jurat.models._base import Frozen

__all__ = ["MUTATION_OPERATORS", "Mutant", "mutants"]

MUTATION_OPERATORS = "jurat.mutation/v1"

_AOR: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
}
_ROR: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_SYMBOL = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.FloorDiv: "//",
    ast.Div: "/",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}


class Mutant(Frozen):
    """One mutated version of the candidate."""

    operator: str
    """Operator id (``AOR``, ``ROR``, ``LCR``, ``NEG``, ``CRP``, ``RVR``)."""
    line: int
    """Line of the mutated node."""
    col: int
    """Column of the mutated node."""
    description: str
    """What changed."""
    source: str
    """The mutant's full source (``ast.unparse`` of the mutated tree)."""


# A site is (operator, node position in walk order, applier, description).
_QUOTED_INT = 1_000_000
_Applier = Callable[[ast.AST], None]


def _walk(tree: ast.AST) -> list[ast.AST]:
    """Every node, depth-first in source order (a stable numbering for the copies)."""
    out: list[ast.AST] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return out


def _sites(node: ast.AST) -> Iterator[tuple[str, _Applier, str]]:
    if isinstance(node, ast.BinOp) and type(node.op) in _AOR:
        new = _AOR[type(node.op)]
        yield "AOR", _set_attr("op", new), f"{_SYMBOL[type(node.op)]} -> {_SYMBOL[new]}"
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _ROR:
        new_cmp = _ROR[type(node.ops[0])]
        yield (
            "ROR",
            _set_attr("ops", new_cmp, as_list=True),
            f"{_SYMBOL[type(node.ops[0])]} -> {_SYMBOL[new_cmp]}",
        )
    elif isinstance(node, ast.BoolOp):
        new_bool: type[ast.boolop] = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield "LCR", _set_attr("op", new_bool), "and <-> or"
    elif isinstance(node, ast.If | ast.While | ast.IfExp):
        yield "NEG", _negate, "condition negated"
    elif isinstance(node, ast.Constant):
        yield from _constant_sites(node)
    elif isinstance(node, ast.Return) and node.value is not None:
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):
            yield "RVR", _return_none, "return value -> None"


def _constant_sites(node: ast.Constant) -> Iterator[tuple[str, _Applier, str]]:
    value = node.value
    if isinstance(value, bool):
        yield "CRP", _set_attr("value", not value), f"{value} -> {not value}"
    elif isinstance(value, int):
        # A literal's digits are the candidate's to choose (text spelled as a number):
        # only small ones are quoted in the description a receipt carries.
        text = f"{value} -> {value + 1}" if abs(value) < _QUOTED_INT else "integer + 1"
        yield "CRP", _set_attr("value", value + 1), text


def _set_attr(name: str, value: object, as_list: bool = False) -> _Applier:
    def apply(node: ast.AST) -> None:
        new = value() if isinstance(value, type) else value
        setattr(node, name, [new] if as_list else new)

    return apply


def _negate(node: ast.AST) -> None:
    assert isinstance(node, ast.If | ast.While | ast.IfExp)
    node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)


def _return_none(node: ast.AST) -> None:
    assert isinstance(node, ast.Return)
    node.value = ast.Constant(value=None)


def _is_docstring(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    parent = parents.get(id(node))
    return isinstance(node, ast.Constant) and isinstance(parent, ast.Expr)


@bounded
def mutants(tree: ast.Module, limit: int) -> tuple[Mutant, ...]:
    """Up to ``limit`` mutants of ``tree``, deterministically chosen and ordered.

    Each mutant is one node changed in place, unparsed, and changed back (``tree`` is as
    given when this returns or raises; no other thread may read it meanwhile): a copy of
    the whole tree per mutant cost a large flat candidate minutes. ``ast.unparse``
    recurses up to six frames per level: the parse step's depth bound (``_guard``) keeps
    its trees within reach; a deeper tree from another caller is BeyondBounds.
    """
    nodes = _walk(tree)
    parents = {id(c): p for p in nodes for c in ast.iter_child_nodes(p)}
    sites = [
        (index, op, apply, text)
        for index, node in enumerate(nodes)
        if not _is_docstring(node, parents)
        for op, apply, text in _sites(node)
    ]
    if len(sites) > limit:
        sites = [sites[i * len(sites) // limit] for i in range(limit)] if limit else []
    out: list[Mutant] = []
    for index, op, apply, text in sites:
        target = nodes[index]
        # Every applier replaces fields of the target node only: their old values restore it.
        saved = {name: getattr(target, name) for name in target._fields if hasattr(target, name)}
        try:
            apply(target)
            source = ast.unparse(tree) + "\n"
        finally:
            for name, value in saved.items():
                setattr(target, name, value)
        out.append(
            Mutant(
                operator=op,
                line=getattr(target, "lineno", 0),
                col=getattr(target, "col_offset", 0),
                description=text,
                source=source,
            )
        )
    return tuple(out)
