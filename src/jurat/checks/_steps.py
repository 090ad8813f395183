"""The static steps of the code correctness pipeline, one function each, in seed order.

Seed 000, "Code correctness pipeline": parse, imports, lint, complexity; the steps that
run the hidden tests are ``_measured``. Each step returns one gate outcome and,
when it measured something, one evidence item (kind, tool and version, digest of
the full content, short excerpt). ``_pipeline`` runs them and numbers the evidence.

Taint rule (docs/checks.md, "What crosses into a trusted output"). A gate's ``detail``,
its ``data`` and its evidence excerpt are signed into receipts, published on the board
and shown to judges, so they hold only enums, counts, range-checked numbers, the
policy's own words and digests. The candidate's text (a source line, an identifier, a
parser or linter message quoting it, an integer literal of any size) and the hidden
tests' text (node ids, parameters, assertion messages) never enter them: a test is
named by its index in collection order, a function by its line, a finding by the policy
entry it matched. These steps read the source only, never a run: the numbers they record
are the source's own, which its author knows anyway (``_measured`` says why a run's are
different).
"""

from __future__ import annotations

import ast
import platform
import re
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

from jurat.canonical import digest_json
from jurat.checks._complexity import CFG_POLICY, function_complexity
from jurat.checks._lint import ruff_binary, rule_set, rule_set_id, run_ruff
from jurat.checks._models import Step
from jurat.checks._parse import declared_version, parse_candidate
from jurat.checks._policy import finding_text, inspect_operations, policy_entry, policy_for
from jurat.errors import ConfigError, DependencyError
from jurat.models import (
    GATE_COMPLEXITY,
    GATE_LINT_RUFF,
    GATE_PYTHON_IMPORTS,
    GATE_PYTHON_PARSE,
)
from jurat.models._checks import PythonChecks
from jurat.models._evidence import EvidenceItem, GateOutcome
from jurat.models._taint import Untrusted

__all__ = [
    "PARSE_FAILED",
    "Plan",
    "evidence_item",
    "skipped",
    "step_complexity",
    "step_imports",
    "step_lint",
    "step_parse",
]

EXCERPT_CHARS = 2000
#: Why a step that needs the syntax tree was skipped.
PARSE_FAILED = f"{GATE_PYTHON_PARSE} failed"
_TEST_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.py$")
#: A ruff rule code as ruff prints it; anything else is recorded as ``other``.
_RULE_CODE = re.compile(r"^[A-Z]{1,4}[0-9]{1,4}$|^syntax$")



class Plan:
    """Validated inputs of one check (raises ConfigError before anything runs)."""

    def __init__(self, source: str, tests: Mapping[str, str] | None, config: PythonChecks) -> None:
        if not isinstance(source, str):
            raise ConfigError("candidate source must be text")
        module = config.module
        if not module.isidentifier() or module in ("conftest", "pytest"):
            raise ConfigError(
                f"checks.python.module: {module!r} is not a usable module name "
                '(fix: a Python identifier such as "solution")'
            )
        declared_version(config.version)
        policy_for(config.import_policy)
        self.selectors = rule_set(config.lint_rules)
        self.target = "py3" + config.version.split(".")[1]
        self.module = module
        self.tests = dict(tests or {})
        for name, text in self.tests.items():
            if not _TEST_NAME.match(name) or name == f"{module}.py":
                raise ConfigError(
                    f"tests: file name {name!r} is not usable (fix: a module file name like "
                    f"test_{module}.py, different from {module}.py)"
                )
            if not isinstance(text, str):
                raise ConfigError(f"tests: the source of {name} must be text")
        if self.tests and all(name == "conftest.py" for name in self.tests):
            raise ConfigError("tests: only a conftest.py was given (fix: add a test_*.py file)")
        self.test_set_sha256 = digest_json(self.tests) if self.tests else None
        self.hypothesis = any("hypothesis" in text for text in self.tests.values())


def evidence_item(
    kind: str, tool: str, version: str, gate: str, content: Any, excerpt: str
) -> EvidenceItem:
    return EvidenceItem(
        kind=kind,
        tool=tool,
        tool_version=version,
        sha256=digest_json(content),
        excerpt=excerpt[:EXCERPT_CHARS],
        gate=gate,
    )


def skipped(gate_id: str, tool: str, version: str, why: str) -> Step:
    return GateOutcome(
        id=gate_id, outcome="skip", tool=tool, tool_version=version, detail=why
    ), None


# --------------------------------------------------------------------------- steps


def step_parse(source: str, config: PythonChecks) -> tuple[ast.Module | None, Step]:
    """Seed 000, code pipeline step 1: parse under the declared grammar, never executing."""
    tree, error = parse_candidate(source, config.version, f"{config.module}.py")
    version = platform.python_version()
    data: dict[str, Any] = {"grammar": config.version, "runtime": version}
    if error is None:
        gate = GateOutcome(
            id=GATE_PYTHON_PARSE, outcome="pass", tool="python-ast", tool_version=version, data=data
        )
        item = evidence_item("parse", "python-ast", version, GATE_PYTHON_PARSE, data, "parsed")
        return tree, (gate, item)
    # The parser's message and the offending line quote the candidate: digest only.
    data |= {
        "line": error.line,
        "column": error.column,
        "message_sha256": Untrusted(error.message).sha256,
    }
    detail = f"SyntaxError at line {error.line}, column {error.column}"
    gate = GateOutcome(
        id=GATE_PYTHON_PARSE,
        outcome="fail",
        tool="python-ast",
        tool_version=version,
        detail=detail,
        data=data,
    )
    item = evidence_item("parse", "python-ast", version, GATE_PYTHON_PARSE, data, detail)
    return None, (gate, item)


def step_imports(tree: ast.Module | None, config: PythonChecks) -> Step:
    """Seed 000, code pipeline step 2: imports and operations under a versioned policy."""
    policy = policy_for(config.import_policy)
    if tree is None:
        return skipped(GATE_PYTHON_IMPORTS, "jurat", policy.id, PARSE_FAILED)
    findings = inspect_operations(tree, policy)
    denied = [f for f in findings if f.severity == "deny"]
    # A finding is named by the policy entry it matched: the candidate's own dotted name
    # (``subprocess.anything``) is its text.
    content: list[dict[str, Any]] = [
        {"rule": f.rule, "severity": f.severity, "entry": policy_entry(f.name, policy),
         "line": f.line, "col": f.col}
        for f in findings
    ]  # fmt: skip
    data = {
        "policy": policy.id,
        "denied": len(denied),
        "warnings": len(findings) - len(denied),
        "findings": content[:100],
    }
    detail = f"{len(denied)} denied, {len(findings) - len(denied)} warnings"
    gate = GateOutcome(
        id=GATE_PYTHON_IMPORTS,
        outcome="fail" if denied else "pass",
        tool="jurat",
        tool_version=policy.id,
        detail=detail,
        data=data,
    )
    lines = [
        f"{f['line']}:{f['col']} {f['rule']} {f['severity']} {finding_text(f['rule'], f['entry'])}"
        for f in content
    ]
    excerpt = "\n".join(lines) or "no findings"
    return gate, evidence_item("imports", "jurat", policy.id, GATE_PYTHON_IMPORTS, content, excerpt)


def step_lint(source: str, tree: ast.Module | None, plan: Plan) -> Step:
    """Seed 000, code pipeline step 3: pinned ruff with a named rule set."""
    set_id = rule_set_id(plan.selectors, plan.target)
    if tree is None:
        return skipped(GATE_LINT_RUFF, "ruff", "", PARSE_FAILED)
    try:
        _, version = ruff_binary()
        findings = run_ruff(
            source, selectors=plan.selectors, target=plan.target, filename=f"{plan.module}.py"
        )
    except DependencyError:
        gate = GateOutcome(
            id=GATE_LINT_RUFF,
            outcome="error",
            tool="ruff",
            detail="ruff could not run",
            data={"rule_set": set_id},
        )
        return gate, None
    # ruff's messages quote the candidate's identifiers: codes and places only.
    content = [
        {"code": _rule_code(f.code), "line": f.line, "column": f.column} for f in findings
    ]
    data = {"rule_set": set_id, "findings": len(findings), "by_code": _count_codes(findings)}
    gate = GateOutcome(
        id=GATE_LINT_RUFF,
        outcome="fail" if findings else "pass",
        tool="ruff",
        tool_version=version,
        detail=f"{len(findings)} findings",
        data=data,
    )
    lines = [f"{f['line']}:{f['column']} {f['code']}" for f in content]
    excerpt = f"rule set {set_id}\n" + ("\n".join(lines) or "no findings")
    return gate, evidence_item("lint", "ruff", version, GATE_LINT_RUFF, content, excerpt)


def _count_codes(findings: Sequence[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for finding in findings:
        code = _rule_code(finding.code)
        counts[code] = counts.get(code, 0) + 1
    return dict(sorted(counts.items()))


def _rule_code(code: str) -> str:
    return code if _RULE_CODE.match(code) else "other"


def step_complexity(tree: ast.Module | None) -> Step:
    """Seed 000, code pipeline: cyclomatic complexity M = E - N + 2P per function."""
    radon_version = metadata.version("radon")
    if tree is None:
        return skipped(GATE_COMPLEXITY, "jurat", CFG_POLICY, PARSE_FAILED)
    functions = function_complexity(tree)
    # Functions are named by their line: their names are the candidate's text.
    rows = [f.model_dump(exclude={"name"}) for f in functions]
    data = {
        "policy": CFG_POLICY,
        "radon": radon_version,
        "functions": rows,
        "max_m": max((f.m for f in functions), default=0),
    }
    detail = f"max M {data['max_m']} over {len(functions)} functions"
    gate = GateOutcome(
        id=GATE_COMPLEXITY,
        outcome="pass",
        tool="jurat",
        tool_version=CFG_POLICY,
        detail=detail,
        data=data,
    )
    lines = [
        f"function at line {f.line}: E={f.edges} N={f.nodes} P={f.components} M={f.m} "
        f"radon={f.radon_m}"
        for f in functions
    ]
    excerpt = "\n".join(lines) or "no functions"
    return gate, evidence_item("complexity", "jurat", CFG_POLICY, GATE_COMPLEXITY, data, excerpt)
