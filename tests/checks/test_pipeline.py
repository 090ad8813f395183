"""run_checks end to end: gates, evidence indices, vetoes, failing closed, concurrency."""

from __future__ import annotations

import asyncio
import hashlib
import stat
from pathlib import Path
from typing import Any

import pytest

from jurat.canonical import canonical_json
from jurat.checks import GATE_IDS, CheckPool, CheckReport, run_checks, tool_versions
from jurat.checks._sandbox import runtime
from jurat.errors import ConfigError
from jurat.models._checks import Limits, PythonChecks

GOOD = '''def clamp(x, lo, hi):
    """Clamp x into [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
'''
TESTS = {
    "test_solution.py": (
        "from solution import clamp\n\n\n"
        "def test_inside():\n    assert clamp(5, 0, 10) == 5\n\n\n"
        "def test_below():\n    assert clamp(-1, 0, 10) == 0\n"
    )
}
FAST = PythonChecks(limits=Limits(wall_s=5, cpu_s=2))


def measured(report: CheckReport, what: str = "tests") -> dict[str, Any]:
    """What the operator's record holds about ``what`` (the run, coverage, mutation)."""
    assert report.record is not None
    entry: dict[str, Any] = report.record.record[what]
    return entry


@pytest.fixture(scope="module")
def good() -> CheckReport:
    return run_checks(GOOD, tests=TESTS, config=FAST)


def test_every_gate_is_emitted_in_pipeline_order(good: CheckReport) -> None:
    assert [g.id for g in good.gates] == list(GATE_IDS)
    assert good.ok and good.required_failed == ()
    assert {g.id: g.outcome for g in good.gates} == {
        "python.parse": "pass",
        "python.imports": "pass",
        "lint.ruff": "pass",
        "tests.pass": "pass",
        "coverage": "skip",
        "properties": "skip",
        "complexity": "pass",
        "mutation": "skip",
    }
    assert [g.id for g in good.gates if g.required] == ["python.parse", "tests.pass"]


def test_evidence_index_is_one_plus_position(good: CheckReport) -> None:
    cited = [g for g in good.gates if g.evidence_index is not None]
    assert len(cited) == len(good.evidence) == 5
    for gate in cited:
        assert gate.evidence_index is not None
        item = good.evidence[gate.evidence_index - 1]
        assert item.gate == gate.id
        assert item.tool == gate.tool and item.tool_version == gate.tool_version
        assert len(item.sha256) == 64 and len(item.excerpt) <= 2000


def test_coverage_and_complexity_are_measured(good: CheckReport) -> None:
    coverage = good.gate("coverage")
    assert coverage.tool == "coverage" and coverage.tool_version
    # Measured in the candidate's process: the figures are the operator's, the gate says so.
    assert (coverage.outcome, coverage.data["forgeable"]) == ("skip", True)
    assert "forgeable" in coverage.detail and "missing_lines" not in coverage.data
    figures = measured(good, "coverage")
    assert figures["covered_lines"] < figures["statements"]  # `return hi` never runs
    assert figures["missing_lines"] == [6]
    assert figures["branches"] > figures["covered_branches"]
    commitment = good.gate("tests.pass").data["record_sha256"]
    assert coverage.data["record_sha256"] == commitment
    (function,) = good.gate("complexity").data["functions"]
    # Named by its line: a function's name is the candidate's text.
    assert "name" not in function
    assert (function["line"], function["m"], function["radon_m"]) == (1, 3, 3)
    assert function["m"] == function["edges"] - function["nodes"] + 2 * function["components"]


def test_evidence_is_reproducible_and_the_record_is_committed(good: CheckReport) -> None:
    again = run_checks(GOOD, tests=TESTS, config=FAST)
    static = [e.sha256 for e in again.evidence if e.gate != "tests.pass"]
    assert static == [e.sha256 for e in good.evidence if e.gate != "tests.pass"]
    assert [(g.id, g.outcome, g.detail) for g in again.gates] == [
        (g.id, g.outcome, g.detail) for g in good.gates]
    # The commitment is salted: the same measurements never give the same digest twice, so
    # no dictionary of likely records reads one back from a receipt.
    assert again.record is not None and good.record is not None
    assert again.record.salt != good.record.salt
    assert again.gate("tests.pass").data["record_sha256"] != good.gate("tests.pass").data[
        "record_sha256"]
    assert measured(again)["cases"] == measured(good)["cases"]
    for report in (good, again):
        assert report.record is not None
        body = canonical_json({"salt": report.record.salt, "record": report.record.record})
        assert hashlib.sha256(body).hexdigest() == report.gate("tests.pass").data[
            "record_sha256"]


def test_json_document_lists_gates_tools_and_evidence(good: CheckReport) -> None:
    doc = good.to_json()
    assert doc["schema"] == "jurat.check/v1" and doc["ok"] is True
    assert doc["evidence"][0]["index"] == 0 and doc["evidence"][0]["kind"] == "artifact"
    assert [e["index"] for e in doc["evidence"]] == list(range(len(good.evidence) + 1))
    for gate in doc["gates"]:
        assert {"id", "outcome", "tool", "tool_version", "evidence_index"} <= set(gate)
    assert doc["tool_versions"] == tool_versions()
    assert {"ruff", "pytest", "coverage", "bubblewrap", "python"} <= set(doc["tool_versions"])


def test_failing_test_is_a_veto() -> None:
    report = run_checks(GOOD.replace("return lo", "return hi"), tests=TESTS, config=FAST)
    gate = report.gate("tests.pass")
    assert (gate.outcome, gate.detail) == ("fail", "did not pass")
    assert (measured(report)["passed"], measured(report)["not_passed"]) == (1, [1])
    assert report.required_failed == ("tests.pass",)
    # Which test failed, and how, is the candidate's choice while it held the hidden
    # inputs, and the assertion text quotes the hidden test: operator-only, never evidence.
    excerpt = report.evidence[gate.evidence_index - 1].excerpt  # type: ignore[operator]
    assert "test #" not in excerpt and "test_below" not in excerpt
    assert "AssertionError" not in excerpt and "assert" not in excerpt
    assert any(block.contains("assert 10 == 0") for block in report.reference_detail)


def test_syntax_error_fails_parse_and_skips_what_needs_a_tree() -> None:
    report = run_checks("def clamp(x:\n    return x\n", tests=TESTS, config=FAST)
    parse = report.gate("python.parse")
    assert parse.outcome == "fail" and parse.data["line"] == 1
    assert "SyntaxError at line 1" in parse.detail
    for gate_id in ("python.imports", "lint.ruff", "tests.pass", "complexity"):
        assert report.gate(gate_id).outcome == "skip"
    assert report.required_failed == ("python.parse", "tests.pass")


def test_timeout_is_a_resource_outcome_not_a_syntax_failure() -> None:
    looping = "def clamp(x, lo, hi):\n    while True:\n        pass\n"
    report = run_checks(looping, tests=TESTS, config=PythonChecks(limits=Limits(cpu_s=1)))
    assert report.gate("python.parse").outcome == "pass"
    assert report.gate("tests.pass").detail == "did not pass"
    assert measured(report)["outcome"] == "timeout"
    assert report.gate("coverage").outcome == "skip"
    assert measured(report, "coverage")["error"] in ("not_reported", "not_measured")


def test_no_tests_leaves_a_required_tests_gate_unpassed() -> None:
    report = run_checks(GOOD, config=FAST)
    assert report.gate("tests.pass").outcome == "skip"
    assert report.required_failed == ("tests.pass",)
    assert run_checks(GOOD, config=FAST, hard_gates=["python.parse"]).ok


def test_denied_import_vetoes_only_when_required() -> None:
    source = "import subprocess\n\n\n" + GOOD
    report = run_checks(source, tests=TESTS, config=FAST)
    assert report.gate("python.imports").outcome == "fail" and report.ok
    strict = run_checks(source, tests=TESTS, config=FAST, hard_gates=["python.imports"])
    assert strict.required_failed == ("python.imports",)


def test_a_required_gate_the_checks_do_not_know_is_never_passed() -> None:
    report = run_checks(GOOD, tests=TESTS, config=FAST, hard_gates=["tests.pass", "claims.cover"])
    assert report.required_failed == ("claims.cover",)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tests": {"../evil.py": "x = 1\n"}}, "tests: file name"),
        ({"tests": {"solution.py": "x = 1\n"}}, "tests: file name"),
        ({"tests": {"conftest.py": "x = 1\n"}}, "only a conftest.py"),
        ({"config": PythonChecks(module="not-a-module")}, "checks.python.module"),
        ({"config": PythonChecks(version="2.7")}, "checks.python.version"),
        ({"config": PythonChecks(import_policy="nope/v1")}, "import_policy"),
        ({"config": PythonChecks(lint_rules=("E;", "F"))}, "lint_rules"),
        ({"hard_gates": "tests.pass"}, "hard_gates"),
    ],
)
def test_bad_input_is_a_config_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run_checks(GOOD, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- failing closed

HOST_MARKER_SOURCE = """import pathlib

pathlib.Path({marker!r}).write_text("ran on the host")


def clamp(x, lo, hi):
    return x
"""


@pytest.fixture
def fresh_runtime() -> object:
    runtime.cache_clear()
    yield None
    runtime.cache_clear()


def test_missing_bwrap_fails_closed_and_runs_nothing_on_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_runtime: object
) -> None:
    marker = tmp_path / "marker"
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    report = run_checks(HOST_MARKER_SOURCE.format(marker=str(marker)), tests=TESTS, config=FAST)
    gate = report.gate("tests.pass")
    assert (gate.outcome, gate.detail) == ("error", "sandbox_error")
    assert "bwrap" in gate.data["message"] and "apt-get install bubblewrap" in gate.data["message"]
    assert report.required_failed == ("tests.pass",)
    assert report.gate("coverage").outcome == "skip"
    assert not marker.exists()


def test_bwrap_that_cannot_create_namespaces_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_runtime: object
) -> None:
    marker = tmp_path / "marker"
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then echo "bubblewrap 0.8.0"; exit 0; fi\n'
        'echo "bwrap: Creating new namespace failed: Operation not permitted" >&2\n'
        "exit 1\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    report = run_checks(HOST_MARKER_SOURCE.format(marker=str(marker)), tests=TESTS, config=FAST)
    gate = report.gate("tests.pass")
    assert (gate.outcome, gate.detail) == ("error", "sandbox_error")
    assert "Creating new namespace failed" in gate.data["message"]
    assert not marker.exists()


# --------------------------------------------------------------------------- properties, mutation

PROPERTY_TESTS = {
    "test_props.py": (
        "from hypothesis import given, strategies as st\n"
        "from solution import clamp\n\n\n"
        "@given(st.integers(), st.integers(0, 10))\n"
        "def test_clamp_stays_in_range(x, hi):\n"
        "    assert 0 <= clamp(x, 0, hi) <= hi\n"
    )
}


#: Hypothesis's import and its examples alone take 2-2.5 s of CPU in the sandbox on a slow
#: host (measured 2026-12-02: cpu_s=2 ends as a timeout, 3 passes): the property tests get
#: CPU headroom of their own, so what they assert does not depend on the host's speed.
PROPERTY = PythonChecks(limits=Limits(wall_s=30, cpu_s=10))


def test_property_tests_are_reported() -> None:
    report = run_checks(GOOD, tests=PROPERTY_TESTS, config=PROPERTY)
    gate = report.gate("properties")
    assert gate.outcome == "pass" and gate.tool == "hypothesis"
    assert [c["property"] for c in measured(report)["cases"]] == [True]
    broken = GOOD.replace("return hi", "return hi + 1")
    failed = run_checks(broken, tests=PROPERTY_TESTS, config=PROPERTY)
    assert failed.gate("properties").outcome == "fail"
    assert measured(failed)["outcome"] == "failed"
    excerpt = failed.evidence[failed.gate("tests.pass").evidence_index - 1].excerpt  # type: ignore[operator]
    # The shrunk, derandomised counterexample quotes the test: operator-only detail.
    detail = "\n".join(block.reveal() for block in failed.reference_detail)
    assert "x=1" in detail and "hi=0" in detail and "x=1" not in excerpt


def test_mutation_sensitivity_reports_killed_over_total() -> None:
    config = PythonChecks(mutation=True, max_mutants=4, limits=Limits(wall_s=5, cpu_s=2))
    report = run_checks(GOOD, tests=TESTS, config=config)
    gate = report.gate("mutation")
    # A candidate can tell it was mutated: the score is the operator's, the gate says so.
    assert (gate.outcome, gate.data["forgeable"]) == ("skip", True)
    assert "killed" not in gate.data and "forgeable" in gate.detail
    mutation = measured(report, "mutation")
    assert mutation["total"] == 4 and 0 < mutation["killed"] <= 4
    assert mutation["operators"] == "jurat.mutation/v1"


@pytest.mark.parametrize("gate", ["coverage", "mutation"])
def test_a_forgeable_gate_cannot_be_required(gate: str) -> None:
    with pytest.raises(ConfigError, match=f"{gate} is measured where the candidate can steer"):
        run_checks(GOOD, tests=TESTS, config=FAST, hard_gates=["tests.pass", gate])


# --------------------------------------------------------------------------- concurrency


def test_async_checks_run_concurrently_and_match_the_sync_result(good: CheckReport) -> None:
    async def many() -> tuple[list[CheckReport], CheckPool]:
        async with CheckPool(2) as pool:
            reports = await asyncio.gather(
                *[pool.run(GOOD, tests=TESTS, config=FAST) for _ in range(4)]
            )
        return reports, pool

    reports, pool = asyncio.run(many())
    # The pool is its owner's: closed when the block ends, it takes no more checks.
    with pytest.raises(RuntimeError, match="shutdown"):
        asyncio.run(pool.run(GOOD, tests=TESTS, config=FAST))
    for report in reports:
        assert [(g.id, g.outcome) for g in report.gates] == [(g.id, g.outcome) for g in good.gates]
        assert [e.sha256 for e in report.evidence if e.gate != "tests.pass"] == [
            e.sha256 for e in good.evidence if e.gate != "tests.pass"]


FEATURE_TESTS = {
    "conftest.py": ("import pytest\n\n\n@pytest.fixture\ndef bounds():\n    return (0, 10)\n"),
    "test_features.py": (
        "import unittest\n\nimport pytest\n\nfrom solution import clamp\n\n\n"
        "@pytest.mark.parametrize(('x', 'want'), [(-5, 0), (5, 5), (50, 10)])\n"
        "def test_parametrized(x, want, bounds):\n    assert clamp(x, *bounds) == want\n\n\n"
        "def test_tmp_path_and_monkeypatch(tmp_path, monkeypatch):\n"
        "    monkeypatch.setenv('X', '1')\n"
        "    (tmp_path / 'f').write_text('ok')\n"
        "    assert (tmp_path / 'f').read_text() == 'ok'\n\n\n"
        "def test_capsys(capsys):\n    print('hello')\n"
        "    assert capsys.readouterr().out == 'hello\\n'\n\n\n"
        "def test_raises():\n    with pytest.raises(TypeError):\n        clamp(None, 0, 1)\n\n\n"
        "class TestUnit(unittest.TestCase):\n"
        "    def test_lo(self):\n        self.assertEqual(clamp(-1, 0, 1), 0)\n"
    ),
}


def test_common_pytest_features_work_inside_the_sandbox() -> None:
    report = run_checks(GOOD, tests=FEATURE_TESTS, config=FAST)
    gate = report.gate("tests.pass")
    assert gate.outcome == "pass", report.evidence[gate.evidence_index - 1].excerpt  # type: ignore[operator]
    assert (measured(report)["collected"], measured(report)["passed"]) == (7, 7)


@pytest.mark.parametrize(
    ("limits", "outcome"),
    [(Limits(memory_mb=4), "memory_limit"), (Limits(wall_s=0.05), "timeout")],
)
def test_a_limit_too_small_to_start_is_that_limit_not_a_sandbox_error(
    limits: Limits, outcome: str
) -> None:
    report = run_checks(GOOD, tests=TESTS, config=PythonChecks(limits=limits))
    gate = report.gate("tests.pass")
    assert (gate.outcome, gate.detail) == ("fail", "did not pass")
    assert measured(report)["outcome"] == outcome
