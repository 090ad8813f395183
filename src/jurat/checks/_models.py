"""Records produced by the deterministic checks."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any, Literal, get_args

from jurat.canonical import canonical_json
from jurat.models._base import Frozen
from jurat.models._evidence import EvidenceItem, GateOutcome
from jurat.models._taint import Untrusted

__all__ = [
    "CASE_OUTCOMES",
    "COVERAGE_ERRORS",
    "RUN_REASONS",
    "CaseOutcome",
    "CheckRecord",
    "CheckReport",
    "CoverageError",
    "RunReason",
    "CoverageStats",
    "Finding",
    "FunctionComplexity",
    "MutantResult",
    "CaseResult",
    "RunOutcome",
    "SandboxRun",
    "Step",
]

RunOutcome = Literal[
    "passed",
    "failed",
    "error",
    "timeout",
    "memory_limit",
    "output_limit",
    "process_limit",
    "sandbox_error",
]
"""The fine outcome of one sandboxed test run; only ``passed`` lets ``tests.pass`` pass."""

RunReason = Literal[
    "all_passed",
    "tests_failed",
    "no_tests",
    "collection_error",
    "runner_crashed",
    "harness_tampered",
    "ended_early",
    "no_report",
    "cpu_limit",
    "wall_limit",
    "memory_limit",
    "process_limit",
    "output_cap",
    "file_size_limit",
    "unknown",
]
"""Why a run ended as it did: a closed set, so no harness or candidate words leave."""
RUN_REASONS: frozenset[str] = frozenset(get_args(RunReason))

CaseOutcome = Literal["passed", "failed", "error", "skipped", "incomplete", "not_run"]
"""The outcome of one collected test."""
CASE_OUTCOMES: frozenset[str] = frozenset(get_args(CaseOutcome))

CoverageError = Literal["not_measured", "not_imported", "not_reported", "malformed"]
"""Why coverage is missing: the candidate's process may report an error, never its text."""
COVERAGE_ERRORS: frozenset[str] = frozenset(get_args(CoverageError))

CHECK_SCHEMA = "jurat.check/v1"

Step = tuple[GateOutcome, EvidenceItem | None]
"""A gate outcome and the evidence supporting it (None when nothing was measured)."""


class Finding(Frozen):
    """One import or operation the policy reports, with its location."""

    rule: str
    """Stable rule id, e.g. ``JI001`` (denied import)."""
    severity: Literal["deny", "warn"]
    """``deny`` fails ``python.imports``; ``warn`` is reported only."""
    name: str
    """The resolved module, call or attribute, e.g. ``os.system``."""
    message: str
    """What was found and why the policy cares."""
    line: int
    """1-based line of the finding."""
    col: int
    """0-based column of the finding."""


class CaseResult(Frozen):
    """The outcome of one collected test."""

    index: int
    """Place in collection order: how receipts, prompts and the board name the test."""
    id: Untrusted
    """pytest node id, e.g. ``test_solution.py::test_check[15-SECRET]``: it holds the
    hidden test's file name, function name and parameters, so it is reference material,
    shown only on the operator's terminal."""
    outcome: CaseOutcome
    """``passed``, ``failed``, ``error``, ``skipped``, ``incomplete`` or ``not_run``."""
    excerpt: Untrusted = Untrusted("", "reference")
    """Tail of the failure report (empty when passed). It quotes the test's source and the
    candidate's values: reference material, for the operator's terminal only."""
    raised: str = ""
    """Name of the exception that ended the test: a built-in one, a harness one
    (``CandidateGone``), or ``CandidateException`` for a class the candidate named."""
    property: bool = False
    """Whether this is a hypothesis property test."""


class CoverageStats(Frozen):
    """Line and branch coverage of the candidate module while the tests ran."""

    statements: int
    """Executable statements in the candidate module."""
    covered_lines: int
    """Statements executed at least once."""
    missing_lines: tuple[int, ...]
    """Line numbers never executed, within the artifact's line count, at most 200."""
    missing_count: int = 0
    """How many lines were never executed (``missing_lines`` may be cut)."""
    branches: int
    """Branch destinations in the module."""
    covered_branches: int
    """Branch destinations taken."""
    partial_branches: int
    """Branch points where only some destinations were taken."""
    percent: float
    """The combined line+branch percentage, recomputed by the host from the counts."""


class SandboxRun(Frozen):
    """Everything the host learned from one sandboxed test run."""

    outcome: RunOutcome
    """Fine outcome; decided by the harness, never by the candidate's output."""
    reason: RunReason = "unknown"
    """Why the run ended so, from a closed set."""
    detail: str = ""
    """One line explaining the outcome, written by the host from enums and counts."""
    tests: tuple[CaseResult, ...] = ()
    """Per-test outcomes, in collection order."""
    collect_errors: tuple[Untrusted, ...] = ()
    """Excerpts of collection errors (reference material: they quote the tests)."""
    coverage: CoverageStats | None = None
    """Coverage of the candidate module, when measured."""
    coverage_error: CoverageError | None = None
    """Why coverage could not be measured, if it was requested."""
    operator_note: Untrusted = Untrusted("", "reference")
    """The harness's own one-line explanation: it may name tests, so operator only."""
    output: Untrusted = Untrusted("", "candidate")
    """Captured stdout+stderr (candidate-controlled), cut at the cap."""
    output_bytes: int = 0
    """Bytes of output read before the run ended."""
    output_truncated: bool = False
    """Whether the output cap was reached."""
    wall_s: float = 0.0
    """Wall-clock duration of the sandboxed run."""
    cpu_s: float = 0.0
    """CPU time of the test process as reported by the supervisor."""
    exit: str = ""
    """How the test process ended, e.g. ``exit 0`` or ``signal SIGKILL``."""
    candidate_exit: str = ""
    """How the candidate sandbox ended, e.g. ``exit 0`` or ``signal SIGXCPU``."""
    oom_kills: int = 0
    """Processes killed by the memory controller."""
    pids_max_hits: int = 0
    """Forks refused by the pids controller."""
    memory_peak_bytes: int = 0
    """Peak memory charged to the run's cgroup."""
    cleanup_ok: bool = True
    """Whether every process of the run was gone and its cgroup removed afterwards."""

    @property
    def collected(self) -> int:
        """Number of collected tests."""
        return len(self.tests)

    @property
    def passed(self) -> int:
        """Number of tests that passed."""
        return sum(1 for t in self.tests if t.outcome == "passed")


class FunctionComplexity(Frozen):
    """Cyclomatic complexity of one function from its control-flow graph."""

    name: str
    """Qualified name, e.g. ``Stack.push`` or ``outer.<locals>.inner``."""
    line: int
    """Line of the ``def``."""
    edges: int
    """E: edges of the function's control-flow graph."""
    nodes: int
    """N: nodes of the graph (statements, entry, exit, expression decisions)."""
    components: int
    """P: connected components (1 for an ordinary function)."""
    m: int
    """M = E - N + 2P."""
    radon_m: int | None = None
    """radon's decision-count complexity of the same function, as a cross-check."""


class MutantResult(Frozen):
    """One mutant of the candidate and whether the tests noticed it."""

    operator: str
    """Mutation operator id, e.g. ``ROR`` (relational operator replacement)."""
    line: int
    """Line of the mutated node."""
    col: int
    """Column of the mutated node."""
    description: str
    """What changed, e.g. ``< -> <=``."""
    killed: bool
    """True when the test run did not pass (any outcome other than ``passed``)."""
    outcome: str
    """The fine outcome of the mutant's test run."""


class CheckRecord(Frozen):
    """The operator's record of what the sandboxed gates measured, and its commitment."""

    salt: str
    """32 random hex digits: what makes ``sha256`` a commitment no dictionary can reverse."""
    record: dict[str, Any]
    """The measurements (schema ``jurat.check-record/v1``): per-test outcomes by index,
    counts, the run's fine outcome and reason, resource use, coverage, mutants. Numbers and
    enums only, never the tests' text; operator-only (docs/ledger-format.md)."""

    @property
    def sha256(self) -> str:
        """The commitment the public gates carry: sha256 of the RFC 8785 JSON of
        ``{"salt": salt, "record": record}``, lowercase hex."""
        return hashlib.sha256(canonical_json({"salt": self.salt, "record": self.record})
                              ).hexdigest()

    @classmethod
    def seal(cls, record: dict[str, Any]) -> CheckRecord:
        """A fresh salt for ``record``."""
        return cls(salt=secrets.token_hex(16), record=record)


class CheckReport(Frozen):
    """The result of the deterministic checks for one candidate."""

    gates: tuple[GateOutcome, ...]
    """One outcome per gate, in pipeline order."""
    evidence: tuple[EvidenceItem, ...]
    """The checks' evidence; item i is cited as index i + 1 (index 0 is the artifact)."""
    required_failed: tuple[str, ...]
    """Ids of required gates whose outcome is not ``pass`` (each one is a veto)."""
    artifact_sha256: str | None = None
    """sha256 of the candidate source, when known."""
    tool_versions: dict[str, str] = {}
    """Versions of every tool and policy the checks used."""
    reference_detail: tuple[Untrusted, ...] = ()
    """Operator-only detail that quotes the campaign's tests and the candidate's output
    (failure excerpts, test names, the run's output). Never in evidence, judge prompts,
    receipts or anything a contributor reads, nor persisted; ``jurat check`` prints it,
    marked, for the operator who holds the tests."""
    record: CheckRecord | None = None
    """Operator-only: what the sandboxed gates measured (checks/_measured.py). The ledger
    keeps it (``checks_recorded``); the public gates carry only its commitment."""

    @property
    def ok(self) -> bool:
        """True when every required gate passed."""
        return not self.required_failed

    def gate(self, gate_id: str) -> GateOutcome:
        """The gate with this id; KeyError if the checks did not emit it."""
        for gate in self.gates:
            if gate.id == gate_id:
                return gate
        raise KeyError(gate_id)

    def to_json(self, *, operator: bool = False) -> dict[str, Any]:
        """The ``jurat check --json`` document; ``operator`` adds the measurements'
        record (it holds what the candidate chose while it saw the hidden inputs)."""
        evidence: list[dict[str, Any]] = []
        if self.artifact_sha256 is not None:
            evidence.append(
                {
                    "index": 0,
                    "kind": "artifact",
                    "tool": "jurat",
                    "tool_version": "",
                    "sha256": self.artifact_sha256,
                    "excerpt": "",
                    "gate": None,
                }
            )
        for position, item in enumerate(self.evidence):
            evidence.append({"index": position + 1, **item.model_dump(mode="json")})
        return {
            "schema": CHECK_SCHEMA,
            "artifact_sha256": self.artifact_sha256,
            "ok": self.ok,
            "required_gates": [gate.id for gate in self.gates if gate.required],
            "required_failed": list(self.required_failed),
            "gates": [gate.model_dump(mode="json") for gate in self.gates],
            "evidence": evidence,
            "tool_versions": dict(self.tool_versions),
            **({"record": self.record.model_dump(mode="json")}
               if operator and self.record is not None else {}),
        }
