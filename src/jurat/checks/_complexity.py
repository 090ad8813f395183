"""Cyclomatic complexity per function (seed 000, "Code correctness pipeline", step 5).

The seed asks for E, N, P and M = E - N + 2P, with the analyzer and its
counting policy pinned. radon (pinned in the project) reports only M, as a
count of decision points, and never exposes a graph; so we build each
function's control-flow graph from the AST ourselves and record radon's M
next to ours as a cross-check from an independent pinned tool.

Counting policy ``jurat.cfg/v1``:

* a node per statement (compound statements: one node for the header), plus
  an entry and an exit node; nested functions and classes are one node in
  the enclosing graph and get their own graph;
* ``if``/``elif``: the header branches to the body and to the else part (or
  the next statement); loops branch to the body and past it, and the body
  returns to the header; ``break``/``continue``/``return``/``raise`` jump;
* ``try``: the header branches to the body and to each handler; ``finally``
  follows the joined paths (a ``return`` inside ``try`` goes straight to the
  exit, a simplification); ``match``: the subject branches to each case, and
  past them unless a case is a bare wildcard;
* ``assert`` branches to the exit (the raise path);
* each expression-level decision (an extra ``and``/``or`` operand, a
  conditional expression, a comprehension loop or filter) adds a side node
  with an edge out of and back into its statement: one more independent path.

For code without ``for``/``while``/``try`` ``else`` blocks this gives the
same M as radon; radon counts those blocks as decisions, the graph does not.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from radon.complexity import cc_visit_ast

from jurat.checks._guard import bounded
from jurat.checks._models import FunctionComplexity

__all__ = ["CFG_POLICY", "function_complexity"]

CFG_POLICY = "jurat.cfg/v1"

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class _Loop:
    header: int
    breaks: list[int] = field(default_factory=list)


@dataclass
class _Graph:
    """A multigraph built statement by statement; node 0 is entry, node 1 is exit."""

    nodes: int = 2
    edges: list[tuple[int, int]] = field(default_factory=list)
    loops: list[_Loop] = field(default_factory=list)

    def node(self, preds: list[int], expressions: list[ast.expr]) -> int:
        index = self.nodes
        self.nodes += 1
        for pred in preds:
            self.edges.append((pred, index))
        for _ in range(sum(_decisions(e) for e in expressions)):
            side = self.nodes
            self.nodes += 1
            self.edges += [(index, side), (side, index)]
        return index

    def seq(self, body: list[ast.stmt], preds: list[int]) -> list[int]:
        for stmt in body:
            preds = self.stmt(stmt, preds)
        return preds

    def stmt(self, stmt: ast.stmt, preds: list[int]) -> list[int]:
        handler = _HANDLERS.get(type(stmt))
        if handler is not None:
            return handler(self, stmt, preds)
        if isinstance(stmt, FunctionNode | ast.ClassDef):
            return [self.node(preds, [])]
        return [self.node(preds, _own_expressions(stmt))]


def _decisions(expr: ast.expr) -> int:
    count = 0
    for node in ast.walk(expr):
        if isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
        elif isinstance(node, ast.IfExp):
            count += 1
        elif isinstance(node, ast.comprehension):
            count += 1 + len(node.ifs)
    return count


def _own_expressions(stmt: ast.stmt) -> list[ast.expr]:
    return [child for child in ast.iter_child_nodes(stmt) if isinstance(child, ast.expr)]


def _if(g: _Graph, stmt: ast.If, preds: list[int]) -> list[int]:
    head = g.node(preds, [stmt.test])
    body = g.seq(stmt.body, [head])
    other = g.seq(stmt.orelse, [head]) if stmt.orelse else [head]
    return body + other


def _loop(g: _Graph, stmt: ast.For | ast.AsyncFor | ast.While, preds: list[int]) -> list[int]:
    head_expr = stmt.test if isinstance(stmt, ast.While) else stmt.iter
    head = g.node(preds, [head_expr])
    g.loops.append(_Loop(head))
    for end in g.seq(stmt.body, [head]):
        g.edges.append((end, head))
    loop = g.loops.pop()
    after = g.seq(stmt.orelse, [head]) if stmt.orelse else [head]
    return after + loop.breaks


def _break(g: _Graph, stmt: ast.Break, preds: list[int]) -> list[int]:
    node = g.node(preds, [])
    if g.loops:
        g.loops[-1].breaks.append(node)
    return []


def _continue(g: _Graph, stmt: ast.Continue, preds: list[int]) -> list[int]:
    node = g.node(preds, [])
    if g.loops:
        g.edges.append((node, g.loops[-1].header))
    return []


def _exit(g: _Graph, stmt: ast.Return | ast.Raise, preds: list[int]) -> list[int]:
    node = g.node(preds, _own_expressions(stmt))
    g.edges.append((node, 1))
    return []


def _assert(g: _Graph, stmt: ast.Assert, preds: list[int]) -> list[int]:
    node = g.node(preds, _own_expressions(stmt))
    g.edges.append((node, 1))
    return [node]


def _try(g: _Graph, stmt: ast.Try | ast.TryStar, preds: list[int]) -> list[int]:
    head = g.node(preds, [])
    body = g.seq(stmt.body, [head])
    handlers: list[int] = []
    for handler in stmt.handlers:
        entry = g.node([head], [handler.type] if handler.type else [])
        handlers += g.seq(handler.body, [entry])
    joined = (g.seq(stmt.orelse, body) if stmt.orelse else body) + handlers
    if stmt.finalbody:
        return g.seq(stmt.finalbody, joined or [head])
    return joined


def _with(g: _Graph, stmt: ast.With | ast.AsyncWith, preds: list[int]) -> list[int]:
    head = g.node(preds, [item.context_expr for item in stmt.items])
    return g.seq(stmt.body, [head])


def _match(g: _Graph, stmt: ast.Match, preds: list[int]) -> list[int]:
    head = g.node(preds, [stmt.subject])
    outs: list[int] = []
    wildcard = False
    for case in stmt.cases:
        pattern = case.pattern
        if isinstance(pattern, ast.MatchAs) and pattern.pattern is None and case.guard is None:
            wildcard = True
        entry = g.node([head], [case.guard] if case.guard else [])
        outs += g.seq(case.body, [entry])
    return outs if wildcard else outs + [head]


_HANDLERS: dict[type[ast.stmt], Callable[[_Graph, Any, list[int]], list[int]]] = {
    ast.If: _if,
    ast.For: _loop,
    ast.AsyncFor: _loop,
    ast.While: _loop,
    ast.Break: _break,
    ast.Continue: _continue,
    ast.Return: _exit,
    ast.Raise: _exit,
    ast.Assert: _assert,
    ast.Try: _try,
    ast.TryStar: _try,
    ast.With: _with,
    ast.AsyncWith: _with,
    ast.Match: _match,
}


def _components(nodes: int, edges: list[tuple[int, int]]) -> int:
    parent = list(range(nodes))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent[find(a)] = find(b)
    return len({find(x) for x in range(nodes)})


def _graph_of(func: FunctionNode) -> FunctionComplexity:
    graph = _Graph()
    for end in graph.seq(func.body, [0]):
        graph.edges.append((end, 1))
    edges, nodes = len(graph.edges), graph.nodes
    components = _components(nodes, graph.edges)
    return FunctionComplexity(
        name=func.name,
        line=func.lineno,
        edges=edges,
        nodes=nodes,
        components=components,
        m=edges - nodes + 2 * components,
    )


def _functions(tree: ast.AST) -> list[tuple[str, FunctionNode]]:
    """Every function and method below ``tree`` with its qualified name, in source order;
    an explicit stack, not recursion: it visits every node of the tree."""
    found: list[tuple[str, FunctionNode]] = []
    # (node, the prefix of the names defined directly in it)
    stack = [(child, "") for child in reversed(list(ast.iter_child_nodes(tree)))]
    while stack:
        node, prefix = stack.pop()
        inner = prefix
        if isinstance(node, FunctionNode):
            found.append((prefix + node.name, node))
            inner = prefix + node.name + ".<locals>."
        elif isinstance(node, ast.ClassDef):
            inner = prefix + node.name + "."
        stack.extend((child, inner) for child in reversed(list(ast.iter_child_nodes(node))))
    return found


def _radon_by_line(tree: ast.Module) -> dict[int, int]:
    by_line: dict[int, int] = {}
    pending = list(cc_visit_ast(tree))
    while pending:
        block = pending.pop()
        for attribute in ("methods", "inner_classes", "closures"):
            pending += list(getattr(block, attribute, None) or [])
        if not hasattr(block, "methods"):
            by_line[int(block.lineno)] = int(block.complexity)
    return by_line


@bounded
def function_complexity(tree: ast.Module) -> tuple[FunctionComplexity, ...]:
    """E, N, P and M for every function and method, in source order.

    radon's visitor recurses about three frames per level and the graph builder once per
    nested block: the parse step's depth bound (``_guard``) keeps its trees within reach;
    a deeper tree from another caller is BeyondBounds."""
    radon = _radon_by_line(tree)
    results = []
    for name, func in _functions(tree):
        measured = _graph_of(func)
        results.append(
            measured.model_copy(update={"name": name, "radon_m": radon.get(func.lineno)})
        )
    return tuple(sorted(results, key=lambda r: (r.line, r.name)))
