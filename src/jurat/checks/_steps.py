"""The steps of the code correctness pipeline, one function each, in seed order.

Seed 000, "Code correctness pipeline". Each step returns one gate outcome and,
when it measured something, one evidence item (kind, tool and version, digest of
the full content, short excerpt). ``_pipeline`` runs them and numbers the evidence.

Taint rule (docs/checks.md, "What crosses into a trusted output"). A gate's ``detail``,
its ``data`` and its evidence excerpt are signed into receipts, published on the board
and shown to judges, so they hold only enums, counts, range-checked numbers, the
policy's own words and digests. The candidate's text (a source line, an identifier, a
parser or linter message quoting it, an integer literal of any size) and the hidden
tests' text (node ids, parameters, assertion messages) never enter them: a test is
named by its index in collection order, a function by its line, a finding by the policy
entry it matched. The operator sees the rest through ``reference_detail``, marked.
"""

from __future__ import annotations

import ast
import math
import platform
import re
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

from jurat.canonical import digest_json
from jurat.checks._complexity import CFG_POLICY, function_complexity
from jurat.checks._lint import ruff_binary, rule_set, rule_set_id, run_ruff
from jurat.checks._models import CaseResult, SandboxRun
from jurat.checks._mutation import MUTATION_OPERATORS, mutants
from jurat.checks._parse import declared_version, parse_candidate
from jurat.checks._policy import finding_text, inspect_operations, policy_entry, policy_for
from jurat.checks._sandbox import SANDBOX_PROTOCOL, run_tests
from jurat.errors import ConfigError, DependencyError, SandboxError
from jurat.models import (
    GATE_COMPLEXITY,
    GATE_COVERAGE,
    GATE_LINT_RUFF,
    GATE_MUTATION,
    GATE_PROPERTIES,
    GATE_PYTHON_IMPORTS,
    GATE_PYTHON_PARSE,
    GATE_TESTS_PASS,
)
from jurat.models._checks import Limits, PythonChecks
from jurat.models._evidence import EvidenceItem, GateOutcome
from jurat.models._taint import Untrusted

__all__ = [
    "Plan",
    "reference_detail",
    "Step",
    "step_complexity",
    "step_coverage",
    "step_imports",
    "step_lint",
    "step_mutation",
    "step_parse",
    "step_properties",
    "step_tests",
]

EXCERPT_CHARS = 2000
#: Why a step that needs the syntax tree was skipped.
_PARSE_FAILED = f"{GATE_PYTHON_PARSE} failed"
_TEST_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.py$")
#: A ruff rule code as ruff prints it; anything else is recorded as ``other``.
_RULE_CODE = re.compile(r"^[A-Z]{1,4}[0-9]{1,4}$|^syntax$")
#: Failing tests named (by index) in a gate's data; the count is always exact.
_NAMED_TESTS = 50

Step = tuple[GateOutcome, EvidenceItem | None]
"""A gate outcome and the evidence supporting it (None when nothing was measured)."""


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


def _evidence(
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


def _skip(gate_id: str, tool: str, version: str, why: str) -> Step:
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
        item = _evidence("parse", "python-ast", version, GATE_PYTHON_PARSE, data, "parsed")
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
    return None, (gate, _evidence("parse", "python-ast", version, GATE_PYTHON_PARSE, data, detail))


def step_imports(tree: ast.Module | None, config: PythonChecks) -> Step:
    """Seed 000, code pipeline step 2: imports and operations under a versioned policy."""
    policy = policy_for(config.import_policy)
    if tree is None:
        return _skip(GATE_PYTHON_IMPORTS, "jurat", policy.id, _PARSE_FAILED)
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
    return gate, _evidence("imports", "jurat", policy.id, GATE_PYTHON_IMPORTS, content, excerpt)


def step_lint(source: str, tree: ast.Module | None, plan: Plan) -> Step:
    """Seed 000, code pipeline step 3: pinned ruff with a named rule set."""
    set_id = rule_set_id(plan.selectors, plan.target)
    if tree is None:
        return _skip(GATE_LINT_RUFF, "ruff", "", _PARSE_FAILED)
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
    return gate, _evidence("lint", "ruff", version, GATE_LINT_RUFF, content, excerpt)


def _count_codes(findings: Sequence[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for finding in findings:
        code = _rule_code(finding.code)
        counts[code] = counts.get(code, 0) + 1
    return dict(sorted(counts.items()))


def _rule_code(code: str) -> str:
    return code if _RULE_CODE.match(code) else "other"


def step_tests(
    source: str, tree: ast.Module | None, plan: Plan, config: PythonChecks
) -> tuple[SandboxRun | None, Step]:
    """Seed 000, code pipeline step 4: the campaign's tests in the bubblewrap sandbox."""
    pytest_version = metadata.version("pytest")
    if tree is None:
        return None, _skip(GATE_TESTS_PASS, "pytest", pytest_version, _PARSE_FAILED)
    if not plan.tests:
        return None, _skip(GATE_TESTS_PASS, "pytest", pytest_version, "no tests supplied")
    files = {f"{plan.module}.py": source, **plan.tests}
    try:
        run = run_tests(
            files,
            _test_targets(plan),
            module=plan.module,
            limits=config.limits,
            coverage=config.coverage,
            hypothesis=plan.hypothesis,
        )
    except SandboxError as exc:
        # The message is the host's own (it never quotes the sandboxes' output).
        data = {"outcome": "sandbox_error", "message": str(exc)}
        gate = GateOutcome(
            id=GATE_TESTS_PASS,
            outcome="error",
            tool="pytest",
            tool_version=pytest_version,
            detail="sandbox_error",
            data=data,
        )
        item = _evidence("tests", "pytest", pytest_version, GATE_TESTS_PASS, data, str(exc))
        return None, (gate, item)
    return run, _tests_gate(run, plan, config.limits, pytest_version)


def _test_targets(plan: Plan) -> list[str]:
    return sorted(name for name in plan.tests if name != "conftest.py")


def _tests_gate(run: SandboxRun, plan: Plan, limits: Limits, version: str) -> Step:
    failing = [t.index for t in run.tests if t.outcome != "passed"]
    data = {
        "outcome": run.outcome,
        "reason": run.reason,
        "explanation": run.detail,
        "collected": run.collected,
        "passed": run.passed,
        "not_passed": failing[:_NAMED_TESTS],
        "not_passed_count": len(failing),
        "wall_s": run.wall_s,
        "cpu_s": run.cpu_s,
        "exit": run.exit,
        "output_bytes": run.output_bytes,
        "output_truncated": run.output_truncated,
        "memory_peak_bytes": run.memory_peak_bytes,
        "cleanup_ok": run.cleanup_ok,
        "limits": limits.model_dump(),
        "test_set_sha256": plan.test_set_sha256,
        "sandbox": SANDBOX_PROTOCOL,
    }
    gate = GateOutcome(
        id=GATE_TESTS_PASS,
        outcome="pass" if run.outcome == "passed" else "fail",
        tool="pytest",
        tool_version=version,
        detail=run.outcome,
        data=data,
    )
    content = {
        "outcome": run.outcome,
        "detail": run.detail,
        "tests": [
            {"index": t.index, "outcome": t.outcome, "raised": t.raised, "property": t.property}
            for t in run.tests
        ],
        "collect_errors": len(run.collect_errors),
        "output": run.output.summary(),
        "output_truncated": run.output_truncated,
        "test_set_sha256": plan.test_set_sha256,
    }
    return gate, _evidence(
        "tests", "pytest", version, GATE_TESTS_PASS, content, _tests_excerpt(run)
    )


def _tests_excerpt(run: SandboxRun) -> str:
    """What a judge may read about the test run: outcomes by test index only.

    Test ids name the hidden tests and their parameters, failure excerpts quote their
    source and assertion text, and the run's output can echo hidden test inputs: all
    reference material (docs/receipt-format.md, "Reference material"), so they go to
    ``reference_detail`` for the operator and never into evidence.
    """
    lines = [f"{run.outcome}: {run.detail}"]
    lines += [f"test #{t.index}: {_case_summary(t)}" for t in run.tests if t.outcome != "passed"]
    if run.collect_errors:
        lines.append(f"collection errors: {len(run.collect_errors)}")
    if run.output_bytes:
        flag = ", truncated at the cap" if run.output_truncated else ""
        lines.append(f"output: {run.output_bytes} bytes (not shown{flag})")
    return "\n".join(lines)


def _case_summary(case: CaseResult) -> str:
    return f"{case.outcome} ({case.raised})" if case.raised else case.outcome


def reference_detail(run: SandboxRun | None) -> tuple[Untrusted, ...]:
    """Operator-only detail of a test run: which index is which test, failure excerpts,
    collection errors, output. Each block starts ``--- test #i`` (or ``--- collection
    error``, ``--- output``) so the operator can map the indexes a receipt names."""
    if run is None:
        return ()
    detail = [
        Untrusted(
            f"--- test #{t.index} {t.outcome} {t.id.reveal()}\n{t.excerpt.reveal()[-1200:]}",
            "reference",
        )
        for t in run.tests
        if t.outcome != "passed"
    ]
    detail += [
        Untrusted(f"--- collection error\n{e.reveal()[-1200:]}", "reference")
        for e in run.collect_errors[:3]
    ]
    if run.output:
        flag = " (truncated at the cap)" if run.output_truncated else ""
        detail.append(Untrusted(f"--- output{flag}\n{run.output.reveal()[:2000]}", "candidate"))
    return tuple(detail)


def step_coverage(run: SandboxRun | None, plan: Plan, config: PythonChecks) -> Step:
    """Seed 000, code pipeline step 5: line and branch coverage, measured in the sandbox."""
    version = metadata.version("coverage")
    if not config.coverage:
        return _skip(GATE_COVERAGE, "coverage", version, "disabled by checks.python.coverage")
    if run is None:
        return _skip(GATE_COVERAGE, "coverage", version, "tests did not run")
    if run.coverage is None:
        kind = run.coverage_error or "not_measured"
        why = f"{kind}: the test run ended with {run.outcome}"
        gate = GateOutcome(
            id=GATE_COVERAGE, outcome="error", tool="coverage", tool_version=version, detail=why
        )
        return gate, None
    cov = run.coverage
    line_pct = 100.0 * cov.covered_lines / cov.statements if cov.statements else 100.0
    branch_pct = 100.0 * cov.covered_branches / cov.branches if cov.branches else 100.0
    data = {
        "line_percent": round(line_pct, 2),
        "branch_percent": round(branch_pct, 2),
        "combined_percent": round(cov.percent, 2),
        **cov.model_dump(),
        "test_set_sha256": plan.test_set_sha256,
    }
    data["missing_lines"] = list(cov.missing_lines)
    detail = f"lines {line_pct:.1f}%, branches {branch_pct:.1f}%"
    # Every number here was range-checked by the host (checks/_sandbox_result.py).
    gate = GateOutcome(
        id=GATE_COVERAGE,
        outcome="pass",
        tool="coverage",
        tool_version=version,
        detail=detail,
        data=data,
    )
    excerpt = (
        f"{detail}; missing lines {list(cov.missing_lines)[:40]}; tests {plan.test_set_sha256}"
    )
    return gate, _evidence("coverage", "coverage", version, GATE_COVERAGE, data, excerpt)


def step_properties(run: SandboxRun | None, plan: Plan) -> Step:
    """Seed 000, code pipeline step 5: hypothesis property tests the campaign supplied."""
    version = metadata.version("hypothesis")
    props = [t for t in run.tests if t.property] if run is not None else []
    if not props:
        why = "no property tests supplied" if run is not None else "tests did not run"
        return _skip(GATE_PROPERTIES, "hypothesis", version, why)
    failed = [t for t in props if t.outcome != "passed"]
    data = {
        "properties": len(props),
        "failed": [t.index for t in failed],
        "settings": "derandomize=True, database=None, deadline=None",
    }
    gate = GateOutcome(
        id=GATE_PROPERTIES,
        outcome="fail" if failed else "pass",
        tool="hypothesis",
        tool_version=version,
        detail=f"{len(props) - len(failed)}/{len(props)} properties hold",
        data=data,
    )
    lines = [f"test #{t.index}: {_case_summary(t)}" for t in props]
    return gate, _evidence(
        "properties", "hypothesis", version, GATE_PROPERTIES, data, "\n".join(lines)
    )


def step_complexity(tree: ast.Module | None) -> Step:
    """Seed 000, code pipeline: cyclomatic complexity M = E - N + 2P per function."""
    radon_version = metadata.version("radon")
    if tree is None:
        return _skip(GATE_COMPLEXITY, "jurat", CFG_POLICY, _PARSE_FAILED)
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
    return gate, _evidence("complexity", "jurat", CFG_POLICY, GATE_COMPLEXITY, data, excerpt)


def step_mutation(
    tree: ast.Module | None, run: SandboxRun | None, plan: Plan, config: PythonChecks
) -> Step:
    """Seed 000, code pipeline step 5: mutation sensitivity, killed / total."""
    if not config.mutation:
        return _skip(
            GATE_MUTATION, "jurat", MUTATION_OPERATORS, "disabled by checks.python.mutation"
        )
    if tree is None or run is None or run.outcome != "passed":
        return _skip(
            GATE_MUTATION, "jurat", MUTATION_OPERATORS, "the original did not pass its tests"
        )
    limits = _mutant_limits(config.limits, run)
    results = []
    try:
        for mutant in mutants(tree, config.max_mutants):
            files = {f"{plan.module}.py": mutant.source, **plan.tests}
            outcome = run_tests(
                files, _test_targets(plan), module=plan.module, limits=limits, coverage=False,
                hypothesis=plan.hypothesis,
            ).outcome  # fmt: skip
            results.append({**mutant.model_dump(exclude={"source"}), "outcome": outcome})
    except SandboxError as exc:
        gate = GateOutcome(
            id=GATE_MUTATION, outcome="error", tool="jurat", tool_version=MUTATION_OPERATORS,
            detail="sandbox_error", data={"message": str(exc)},
        )  # fmt: skip
        return gate, None
    killed = sum(1 for r in results if r["outcome"] != "passed")
    survivors = [r for r in results if r["outcome"] == "passed"]
    data = {
        "operators": MUTATION_OPERATORS,
        "killed": killed,
        "total": len(results),
        "score": round(killed / len(results), 4) if results else None,
        "survivors": survivors[:50],
        "limits": limits.model_dump(),
    }
    gate = GateOutcome(
        id=GATE_MUTATION, outcome="pass", tool="jurat", tool_version=MUTATION_OPERATORS,
        detail=f"{killed}/{len(results)} mutants killed", data=data,
    )  # fmt: skip
    lines = [f"survived {r['operator']} line {r['line']}: {r['description']}" for r in survivors]
    excerpt = f"{killed}/{len(results)} killed\n" + "\n".join(lines)
    return gate, _evidence("mutation", "jurat", MUTATION_OPERATORS, GATE_MUTATION, results, excerpt)


def _mutant_limits(limits: Limits, run: SandboxRun) -> Limits:
    # A mutant that loops is killed by the limit; tying the limit to the original's
    # cost keeps one looping mutant from costing the campaign's full wall budget.
    wall = min(limits.wall_s, max(2.0, 4 * run.wall_s))
    cpu = min(limits.cpu_s, max(1, math.ceil(4 * run.cpu_s)))
    return limits.model_copy(update={"wall_s": wall, "cpu_s": cpu})
