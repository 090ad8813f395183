"""Deterministic code checks and the bubblewrap sandbox (seed 000, "Code correctness pipeline").

``run_checks`` parses the candidate, applies the versioned import policy,
lints it with the pinned ruff, runs the campaign's pytest files inside
bubblewrap, measures coverage, complexity, property tests and (optionally)
mutation sensitivity, and returns one gate outcome per step plus the
evidence items a judge cites by index. A failed required gate is a veto.

The deterministic answer-equivalence pass of seed 002 (``_answers``,
``_equivalence`` and ``_mathverify``) is re-exported here too, so the runner
finds every deterministic check in one package.
"""

from jurat.checks._answers import Extracted, extract_final_answer
from jurat.checks._complexity import CFG_POLICY, function_complexity
from jurat.checks._equivalence import (
    EQUIVALENCE_RULE,
    AnswerCheck,
    InvarianceVerdict,
    deterministic_equivalence,
    invariance_verdict,
)
from jurat.checks._humaneval import humaneval_to_files, load_humaneval
from jurat.checks._lint import rule_set_id
from jurat.checks._measured import RECORD_SCHEMA
from jurat.checks._models import (
    CaseResult,
    CheckRecord,
    CheckReport,
    CoverageStats,
    Finding,
    FunctionComplexity,
    MutantResult,
    RunOutcome,
    SandboxRun,
)
from jurat.checks._mutation import MUTATION_OPERATORS, Mutant, mutants
from jurat.checks._pipeline import (
    DEFAULT_HARD_GATES,
    GATE_IDS,
    CheckPool,
    cores,
    forgeable_refusal,
    run_checks,
    tool_versions,
)
from jurat.checks._policy import IMPORT_POLICIES, ImportPolicy, inspect_operations
from jurat.checks._sandbox import SANDBOX_PROTOCOL, run_tests

__all__ = [
    "CFG_POLICY",
    "DEFAULT_HARD_GATES",
    "EQUIVALENCE_RULE",
    "GATE_IDS",
    "IMPORT_POLICIES",
    "MUTATION_OPERATORS",
    "RECORD_SCHEMA",
    "SANDBOX_PROTOCOL",
    "AnswerCheck",
    "CaseResult",
    "CheckPool",
    "CheckRecord",
    "CheckReport",
    "CoverageStats",
    "Extracted",
    "Finding",
    "FunctionComplexity",
    "ImportPolicy",
    "InvarianceVerdict",
    "Mutant",
    "MutantResult",
    "RunOutcome",
    "SandboxRun",
    "cores",
    "deterministic_equivalence",
    "extract_final_answer",
    "forgeable_refusal",
    "function_complexity",
    "humaneval_to_files",
    "inspect_operations",
    "invariance_verdict",
    "load_humaneval",
    "mutants",
    "rule_set_id",
    "run_checks",
    "run_tests",
    "tool_versions",
]
