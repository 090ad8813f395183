"""The host's reading of a sandboxed test run: the taint boundary of the sandbox.

Threat model. Everything in the harness's result line went through processes the host
does not trust with text: the candidate's process wrote its return values, exception
names and messages, and its coverage report, and the trusted test process quotes the
campaign's hidden tests (node ids with their parameters, assertion messages). So this
module turns the result into a ``SandboxRun`` in which every field a trusted output may
carry is an enum, a count or a range-checked number computed here:

* outcomes and reasons are checked against their closed sets (anything else is
  ``error``), exception names against the built-in ones (anything else is
  ``CandidateException``);
* the one-line ``detail`` is written here from those enums and counts, never copied;
* coverage is bounded integers (percentages recomputed here, line numbers within the
  artifact's line count, at most ``MAX_MISSING_LINES``), and any error the candidate's
  process reports is the named kind ``not_measured``, never its words;
* test node ids, failure excerpts, collection errors and the run's output are kept only
  as ``Untrusted`` (origin ``reference`` or ``candidate``), for the operator's terminal.
"""

from __future__ import annotations

import builtins
import signal
from typing import Any, cast

from jurat.checks._cgroup import GroupStats
from jurat.checks._models import (
    CASE_OUTCOMES,
    COVERAGE_ERRORS,
    RUN_REASONS,
    CaseOutcome,
    CaseResult,
    CoverageError,
    CoverageStats,
    RunOutcome,
    RunReason,
    SandboxRun,
)
from jurat.models._base import Frozen
from jurat.models._checks import Limits
from jurat.models._taint import Untrusted

__all__ = ["MAX_MISSING_LINES", "Ending", "Reading", "classify", "exception_kind"]

#: Missing line numbers kept per run: enough to point a reader at the gaps.
MAX_MISSING_LINES = 200
#: Exception names the harness itself raises (``_sandbox_proxy``, pytest's outcomes).
_HARNESS_EXCEPTIONS = frozenset(
    {"CandidateError", "CandidateGone", "NotPlainData", "Failed", "Skipped", "XFailed", "Exit",
     "OutcomeException"}
)
_BUILTIN_EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)  # fmt: skip


class Reading(Frozen):
    """What the host saw on the two output pipes."""

    output: bytes
    """Output kept (at most the cap): the tests' first, then the candidate's."""
    tests_bytes: int = 0
    """How many of ``output``'s first bytes came from the tests sandbox."""
    total: int
    """Bytes read in all."""
    over_cap: bool
    """The cap was exceeded (the run was killed)."""
    timed_out: bool
    """The wall-clock limit was reached (the run was killed)."""
    candidate_ended_first: bool
    """The candidate sandbox ended before the tests sandbox did (not killed by the host)."""


class Ending(Frozen):
    """How the two sandboxes ended, as the host saw it."""

    reading: Reading
    """Output and the host's own kills."""
    tests: GroupStats
    """The tests sandbox's cgroup counters."""
    candidate: GroupStats
    """The candidate sandbox's cgroup counters."""
    candidate_status: int | None
    """bwrap's exit status for the candidate sandbox (128 + n for signal n)."""

    @property
    def candidate_signal(self) -> str | None:
        """The signal that ended the candidate sandbox, if one did."""
        status = self.candidate_status
        if status is None:
            return None
        number = -status if status < 0 else (status - 128 if status > 128 else 0)
        return _signal_name(number) if number else None


def _signal_name(number: object) -> str | None:
    try:
        return signal.Signals(int(number)).name  # type: ignore[call-overload]
    except (ValueError, TypeError):
        return None


def exception_kind(name: object) -> str:
    """A built-in or harness exception's name; any other name was the candidate's choice."""
    text = name if isinstance(name, str) else ""
    if not text:
        return ""
    if text in _BUILTIN_EXCEPTIONS or text in _HARNESS_EXCEPTIONS:
        return text
    return "CandidateException"


def _closed(value: object, allowed: frozenset[str], default: str) -> str:
    return value if isinstance(value, str) and value in allowed else default


def _count(value: object, upper: int) -> int | None:
    if type(value) is not int or not 0 <= value <= upper:
        return None
    return value


def classify(
    ending: Ending,
    result: dict[str, Any] | None,
    wall: float,
    limits: Limits,
    cleanup_ok: bool,
    source_lines: int,
) -> SandboxRun:
    """The run as trusted records; ``source_lines`` bounds the coverage line numbers."""
    result = result or {}
    child = result.get("child") if isinstance(result.get("child"), dict) else {}
    assert isinstance(child, dict)
    tests = tuple(_case(index, t) for index, t in enumerate(_list(result.get("tests"))))
    outcome, reason = _outcome(ending, result or None, limits)
    coverage, coverage_error = _coverage(result.get("coverage"), source_lines)
    code = child.get("code")
    sig = _signal_name(_signal_number(child.get("signal")))
    exit_text = f"signal {sig}" if sig else (f"exit {code}" if type(code) is int else "unknown")
    cand_sig = ending.candidate_signal
    reading = ending.reading
    cpu = child.get("cpu_s")
    cpu_s = float(cpu) if isinstance(cpu, int | float) and cpu >= 0 else 0.0
    return SandboxRun(
        outcome=outcome,
        reason=reason,
        detail=_detail(outcome, reason, tests, limits, exit_text),
        tests=tests,
        collect_errors=tuple(
            Untrusted(f"{e.get('id', '')}: {e.get('excerpt', '')}", "reference")
            for e in _list(result.get("collect_errors"))
            if isinstance(e, dict)
        ),
        coverage=coverage,
        coverage_error=coverage_error,
        operator_note=Untrusted(str(result.get("detail", "")), "reference"),
        output=Untrusted(reading.output.decode("utf-8", "replace"), "candidate"),
        output_bytes=reading.total,
        output_truncated=reading.over_cap,
        wall_s=round(wall, 3),
        cpu_s=round(cpu_s, 3),
        exit=exit_text,
        candidate_exit=f"signal {cand_sig}" if cand_sig else f"exit {ending.candidate_status}",
        oom_kills=ending.tests.oom_kills + ending.candidate.oom_kills,
        pids_max_hits=ending.tests.pids_max_hits + ending.candidate.pids_max_hits,
        memory_peak_bytes=max(ending.tests.memory_peak_bytes, ending.candidate.memory_peak_bytes),
        cleanup_ok=cleanup_ok,
    )


def _signal_number(name: object) -> int | None:
    if not isinstance(name, str):
        return None
    member = signal.Signals.__members__.get(name)
    return int(member) if member is not None else None


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _case(index: int, entry: object) -> CaseResult:
    data = entry if isinstance(entry, dict) else {}
    return CaseResult(
        index=index,
        id=Untrusted(str(data.get("id", "")), "reference"),
        outcome=cast(CaseOutcome, _closed(data.get("outcome"), CASE_OUTCOMES, "error")),
        excerpt=Untrusted(str(data.get("excerpt", "")), "reference"),
        raised=exception_kind(data.get("raised")),
        property=data.get("property") is True,
    )


def _outcome(
    ending: Ending, result: dict[str, Any] | None, limits: Limits
) -> tuple[RunOutcome, RunReason]:
    inner = (result or {}).get("outcome")
    stats = (ending.tests, ending.candidate)
    if any(s.oom_kills for s in stats) or (result or {}).get("memory_error") is True:
        return "memory_limit", "memory_limit"
    if any(s.pids_max_hits for s in stats):
        return "process_limit", "process_limit"
    if ending.reading.over_cap:
        return "output_limit", "output_cap"
    if inner == "output_limit" or ending.candidate_signal == "SIGXFSZ":
        return "output_limit", "file_size_limit"
    if ending.reading.timed_out:
        return "timeout", "wall_limit"
    # RLIMIT_CPU sends SIGXCPU at the soft limit and SIGKILL at the hard one. Only the
    # kernel sends SIGXCPU, so it needs no order; the host kills the candidate with SIGKILL
    # only after the tests ended (OOM kills are counted above), so a SIGKILL counts only if
    # the candidate ended first. Which end is read first is a race on a loaded machine: the
    # tests can report the candidate gone before its sandbox's output closes.
    cpu_killed = ending.candidate_signal == "SIGXCPU" or (
        ending.reading.candidate_ended_first and ending.candidate_signal == "SIGKILL"
    )
    if inner == "timeout" or cpu_killed:
        return "timeout", "cpu_limit"
    if result is None:
        return "error", "no_report"
    reason = _closed(result.get("reason"), RUN_REASONS, "unknown")
    if inner == "passed" and reason == "all_passed":
        return "passed", "all_passed"
    if inner == "failed" and reason == "tests_failed":
        return "failed", "tests_failed"
    if inner == "error" and reason not in ("all_passed", "tests_failed"):
        return "error", reason  # type: ignore[return-value]
    return "error", "unknown"


_REASON_TEXT: dict[str, str] = {
    "harness_tampered": "harness_tampered: the event stream was forged or broken",
    "runner_crashed": "test runner crashed",
    "collection_error": "collection error",
    "no_tests": "no tests collected",
    "no_report": "the harness ended without reporting",
    "unknown": "unknown harness outcome",
}


def _detail(
    outcome: RunOutcome,
    reason: RunReason,
    tests: tuple[CaseResult, ...],
    limits: Limits,
    exit_text: str,
) -> str:
    # Written here from enums and counts only: the harness's own words quote test ids.
    collected = len(tests)
    if reason == "all_passed":
        passed = sum(1 for t in tests if t.outcome == "passed")
        skipped = collected - passed
        return f"{passed}/{collected} passed" + (f", {skipped} skipped" if skipped else "")
    if reason == "tests_failed":
        counts: dict[str, int] = {}
        for test in tests:
            if test.outcome != "passed":
                counts[test.outcome] = counts.get(test.outcome, 0) + 1
        passed = collected - sum(counts.values())
        summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        return f"{passed}/{collected} passed ({summary})"
    limit_text = {
        "memory_limit": f"memory limit of {limits.memory_mb} MiB reached",
        "process_limit": f"process limit of {limits.procs} reached",
        "output_cap": f"output exceeded {limits.output_kb} KiB; truncated",
        "file_size_limit": "file size limit reached",
        "wall_limit": f"wall-clock limit of {limits.wall_s:g} s reached",
        "cpu_limit": f"cpu limit of {limits.cpu_s} s reached",
        "ended_early": f"test process ended before the run completed ({exit_text})",
    }
    return limit_text.get(reason) or _REASON_TEXT.get(reason, outcome)


def _coverage(data: Any, source_lines: int) -> tuple[CoverageStats | None, CoverageError | None]:
    if data is None:
        return None, None
    if not isinstance(data, dict):
        return None, "malformed"
    if "error" in data:
        kind = _closed(data["error"], COVERAGE_ERRORS, "not_measured")
        return None, kind  # type: ignore[return-value]
    lines = max(source_lines, 0)
    statements = _count(data.get("statements"), lines)
    covered = _count(data.get("covered_lines"), statements or 0)
    branches = _count(data.get("branches"), 16 * lines)
    covered_branches = _count(data.get("covered_branches"), branches or 0)
    partial = _count(data.get("partial_branches"), lines)
    missing = data.get("missing_lines")
    if None in (statements, covered, branches, covered_branches, partial) or not isinstance(
        missing, list
    ):
        return None, "malformed"
    if not all(type(n) is int and 1 <= n <= lines for n in missing):
        return None, "malformed"
    assert statements is not None and covered is not None
    assert branches is not None and covered_branches is not None and partial is not None
    # The percentage is recomputed here (coverage.py's combined formula), not trusted.
    total = statements + branches
    percent = 100.0 * (covered + covered_branches) / total if total else 100.0
    return CoverageStats(
        statements=statements,
        covered_lines=covered,
        missing_lines=tuple(sorted(set(missing)))[:MAX_MISSING_LINES],
        missing_count=len(set(missing)),
        branches=branches,
        covered_branches=covered_branches,
        partial_branches=partial,
        percent=round(percent, 2),
    ), None

