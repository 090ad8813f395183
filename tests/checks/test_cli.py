"""``jurat check`` as check_command and as ``python -m jurat check``: output and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jurat.cli._check import check_command, parse_limits
from jurat.errors import ConfigError

GOOD = "def add(a, b):\n    return a + b\n"
TEST = "from solution import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    candidate = tmp_path / "solution.py"
    candidate.write_text(GOOD)
    tests = tmp_path / "test_solution.py"
    tests.write_text(TEST)
    return candidate, tests


def test_passing_candidate_exits_0_with_a_table(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert check_command(files[0], files[1], None, False) == 0
    out = capsys.readouterr().out
    assert "tests.pass" in out and "every required gate passed" in out


def test_json_lists_every_gate_with_tool_and_version(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert check_command(files[0], files[1], "wall_s=5,memory_mb=256", True) == 0
    doc = json.loads(capsys.readouterr().out)
    gates = {g["id"]: g for g in doc["gates"]}
    for gate_id in ("python.parse", "python.imports", "lint.ruff", "tests.pass", "coverage"):
        assert gate_id in gates
    assert "complexity" in gates
    assert gates["tests.pass"]["outcome"] == "pass"
    assert gates["tests.pass"]["data"]["limits"]["memory_mb"] == 256
    assert gates["lint.ruff"]["tool"] == "ruff" and gates["lint.ruff"]["tool_version"]
    assert doc["evidence"][0]["sha256"] == doc["artifact_sha256"]


def test_failing_required_gate_exits_2(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    files[0].write_text("def add(a, b):\n    return a - b\n")
    assert check_command(files[0], files[1], None, True) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["required_failed"] == ["tests.pass"] and doc["ok"] is False


def test_timeout_is_reported_in_json(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    files[0].write_text("def add(a, b):\n    while True:\n        pass\n")
    assert check_command(files[0], files[1], "cpu_s=1,wall_s=5", True) == 2
    doc = json.loads(capsys.readouterr().out)
    gates = {g["id"]: g for g in doc["gates"]}
    # The gate says only that the tests did not pass; the record (the caller's own tests,
    # so shown) says how.
    assert gates["tests.pass"]["detail"] == "did not pass"
    assert doc["record"]["record"]["tests"]["outcome"] == "timeout"
    assert gates["python.parse"]["outcome"] == "pass"


def test_without_tests_only_parsing_is_required(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert check_command(files[0], None, None, True) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {g["id"]: g["outcome"] for g in doc["gates"]}["tests.pass"] == "skip"
    files[0].write_text("def add(a, b)\n    return a\n")
    assert check_command(files[0], None, None, True) == 2


def test_tests_may_import_the_candidate_by_its_file_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    candidate = tmp_path / "mymath.py"
    candidate.write_text(GOOD)
    tests = tmp_path / "test_mymath.py"
    tests.write_text(TEST.replace("from solution", "from mymath"))
    assert check_command(candidate, tests, None, False) == 0


@pytest.mark.parametrize(
    ("limits", "field"),
    [
        ("wall_s=0", "wall_s"),
        ("memory_mb=lots", "memory_mb"),
        ("bananas=3", "bananas"),
        ("procs", "procs"),
        ("procs=-1", "procs"),
    ],
)
def test_bad_limits_exit_3_naming_the_field(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], limits: str, field: str
) -> None:
    assert check_command(files[0], files[1], limits, False) == 3
    err = capsys.readouterr().err
    assert field in err and "fix" in err


def test_missing_or_unreadable_input_exits_3(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert check_command(tmp_path / "nope.py", None, None, False) == 3
    assert "CANDIDATE" in capsys.readouterr().err
    assert check_command(files[0], tmp_path / "missing_test.py", None, False) == 3
    assert "--tests" in capsys.readouterr().err
    binary = tmp_path / "bin.py"
    binary.write_bytes(b"\xff\xfe\x00")
    assert check_command(binary, None, None, False) == 3
    assert "UTF-8" in capsys.readouterr().err


def test_parse_limits_keeps_defaults_for_unnamed_limits() -> None:
    limits = parse_limits("wall_s=2.5, procs=8")
    assert (limits.wall_s, limits.procs, limits.memory_mb) == (2.5, 8, 512)
    with pytest.raises(ConfigError, match="cpu_s"):
        parse_limits("cpu_s=1.5")


def test_module_entry_point(files: tuple[Path, Path]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jurat", "check", str(files[0]), "--tests", str(files[1]), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True
    usage = subprocess.run(
        [sys.executable, "-m", "jurat", "check", "--bogus"], capture_output=True, timeout=60
    )
    assert usage.returncode == 3
