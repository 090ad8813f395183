"""The deterministic checks for one Python candidate, in seed order.

Seed 000, "Code correctness pipeline": parse, import policy, lint, sandboxed
tests, then coverage, complexity, property tests and mutation sensitivity.
Every step yields one gate outcome and, when it measured something, one
evidence item; a judge only ever sees a candidate these steps have measured.

``run_checks`` runs them in the calling thread; ``CheckPool`` runs them off an event loop,
at most one per core, and is owned by whoever opens it (``with`` / ``async with``): its
threads are shut down when that block ends. The versions the checks record are facts of
the process (``tool_versions``), cached once.
"""

from __future__ import annotations

import asyncio
import functools
import os
import platform
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from types import TracebackType
from typing import TypedDict, Unpack

from jurat.canonical import sha256_digest
from jurat.checks._complexity import CFG_POLICY
from jurat.checks._guard import guarded, guarded_pair
from jurat.checks._lint import ruff_binary
from jurat.checks._measured import (
    FORGEABLE_GATES,
    check_record,
    measure,
    measured_gates,
    reference_detail,
)
from jurat.checks._models import CheckRecord, CheckReport, Step
from jurat.checks._mutation import MUTATION_OPERATORS
from jurat.checks._policy import IMPORT_POLICIES
from jurat.checks._sandbox import SANDBOX_PROTOCOL, runtime
from jurat.checks._steps import (
    Plan,
    step_complexity,
    step_imports,
    step_lint,
    step_parse,
)
from jurat.errors import ConfigError, DependencyError, SandboxError
from jurat.models import (
    DEFAULT_HARD_GATES,
    GATE_COMPLEXITY,
    GATE_LINT_RUFF,
    GATE_PYTHON_IMPORTS,
    GATE_PYTHON_PARSE,
    PYTHON_GATES,
)
from jurat.models._checks import PythonChecks
from jurat.models._evidence import EvidenceItem, GateOutcome
from jurat.models._taint import Untrusted

__all__ = [
    "DEFAULT_HARD_GATES",
    "forgeable_refusal",
    "GATE_IDS",
    "CheckPool",
    "cores",
    "run_checks",
    "tool_versions",
]

#: The gates ``run_checks`` reports, in step order (ids spelled once, in jurat.models).
GATE_IDS = PYTHON_GATES


# --------------------------------------------------------------------------- assembly


def _report(
    steps: Sequence[Step],
    hard_gates: Sequence[str],
    artifact_sha256: str,
    detail: tuple[Untrusted, ...] = (),
    record: CheckRecord | None = None,
) -> CheckReport:
    hard = list(dict.fromkeys(hard_gates))
    gates: list[GateOutcome] = []
    evidence: list[EvidenceItem] = []
    for gate, item in steps:
        index = None
        if item is not None:
            evidence.append(item)
            index = len(evidence)  # index 0 of the bundle is the artifact itself
        gates.append(gate.model_copy(update={"required": gate.id in hard, "evidence_index": index}))
    emitted = {g.id for g in gates}
    required_failed = [g.id for g in gates if g.required and g.outcome != "pass"]
    # A required gate these checks do not know can never be shown to pass.
    required_failed += [h for h in hard if h not in emitted]
    return CheckReport(
        gates=tuple(gates),
        evidence=tuple(evidence),
        required_failed=tuple(required_failed),
        artifact_sha256=artifact_sha256,
        tool_versions=tool_versions(),
        reference_detail=detail,
        record=record,
    )


class CheckOptions(TypedDict, total=False):
    """``run_checks``'s keywords, for ``CheckPool.run`` to pass on."""

    tests: Mapping[str, str] | None
    config: PythonChecks
    hard_gates: Sequence[str]
    artifact_sha256: str | None


def run_checks(
    source: str,
    *,
    tests: Mapping[str, str] | None = None,
    config: PythonChecks = PythonChecks(),  # noqa: B008 - frozen, shared safely
    hard_gates: Sequence[str] = DEFAULT_HARD_GATES,
    artifact_sha256: str | None = None,
) -> CheckReport:
    """Run every deterministic check on one candidate, in the calling thread.

    ``tests`` maps file names (``test_solution.py``) to pytest sources that
    import the candidate as ``config.module``. Raises ConfigError for bad
    input before anything runs; a sandbox that cannot be created is reported
    as ``tests.pass`` = error / ``sandbox_error`` and nothing runs on the host.

    What the hidden tests' run measured is the report's ``record`` (operator-only);
    its gates show only what the candidate cannot choose (checks/_measured.py).
    """
    plan = Plan(source, tests, config)
    if isinstance(hard_gates, str):
        raise ConfigError("hard_gates must be a list of gate ids, not one string")
    forgeable = [gate for gate in hard_gates if gate in FORGEABLE_GATES]
    if forgeable:
        raise ConfigError(forgeable_refusal(forgeable[0]))
    # A checker's failure on this input is its gate's error, never the run's (_guard).
    tree, parse = guarded_pair(GATE_PYTHON_PARSE, step_parse, source, config)
    imports = guarded(GATE_PYTHON_IMPORTS, step_imports, tree, config)
    lint = guarded(GATE_LINT_RUFF, step_lint, source, tree, plan)
    measured = measure(source, tree, plan, config)
    record = check_record(measured, plan)
    tested, coverage, properties, mutation = measured_gates(measured, record, plan, config)
    complexity = guarded(GATE_COMPLEXITY, step_complexity, tree)
    steps = [parse, imports, lint, tested, coverage, properties, complexity, mutation]
    return _report(steps, hard_gates, artifact_sha256 or sha256_digest(source),
                   reference_detail(measured.run), record)


def forgeable_refusal(gate: str) -> str:
    """Why ``gate`` cannot be a hard gate, and the fix (docs/checks.md)."""
    return (f"{gate} is measured where the candidate can steer it (its own process, or "
            "mutants it can tell apart), so it cannot be a hard gate: a candidate would "
            "pass it by reporting what it likes (fix: remove it from hard_gates; its "
            "figures stay in the operator's record)")


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class CheckPool:
    """Where ``run_checks`` runs for callers on an event loop: a pool of threads, one per
    core by default, which is the semaphore that bounds how many checks run at once (each
    check's sandboxes keep a core busy).

    Owned by whoever opens it: ``with CheckPool() as checks:`` (or ``async with``), shared
    by that owner's jobs, and shut down when the block ends (checks not yet started are
    dropped, a running one is waited for). A run opens one for its jobs
    (runner/_run.py), as do a Ray task and the service.
    """

    def __init__(self, workers: int | None = None) -> None:
        self._threads = ThreadPoolExecutor(workers or cores(), thread_name_prefix="jurat-checks")

    async def run(self, source: str, **options: Unpack[CheckOptions]) -> CheckReport:
        """``run_checks(source, **options)`` in the pool, off the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._threads, functools.partial(run_checks, source, **options))

    def close(self) -> None:
        """Stop the threads; a check running in one is waited for."""
        self._threads.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> CheckPool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    async def __aenter__(self) -> CheckPool:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        # Waiting for a running check (its sandbox's wall clock at most) must not stall the
        # event loop the owner's other tasks still run on.
        await asyncio.to_thread(self.close)


def tool_versions() -> dict[str, str]:
    """Every tool and policy version the checks record (``missing`` for absent tools)."""
    return dict(_tool_versions())


@functools.cache
def _tool_versions() -> dict[str, str]:
    # Facts of this process and its tools: read once (a second read at worst, from two
    # threads at once, gives the same facts).
    versions = {
        "python": platform.python_version(),
        "pytest": metadata.version("pytest"),
        "coverage": metadata.version("coverage"),
        "hypothesis": metadata.version("hypothesis"),
        "radon": metadata.version("radon"),
        "import_policies": ",".join(sorted(IMPORT_POLICIES)),
        "complexity": CFG_POLICY,
        "mutation": MUTATION_OPERATORS,
        "sandbox": SANDBOX_PROTOCOL,
    }
    try:
        versions["ruff"] = ruff_binary()[1]
    except DependencyError:
        versions["ruff"] = "missing"
    try:
        versions["bubblewrap"] = runtime().bwrap_version.removeprefix("bubblewrap ")
    except SandboxError:
        versions["bubblewrap"] = "missing"
    return versions
