"""``jurat check CANDIDATE --campaign FILE`` requires what ``jurat run`` requires on the same
file; without ``--campaign`` it keeps its own rule and says which gates it required."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurat.cli import ExitCode
from jurat.receipts import read_statement

from .conftest import jurat

CAMPAIGN = """\
[campaign]
id = "imports"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "imports/1"
hard_gates = ["python.parse", "python.imports", "tests.pass"]
criteria = [{ id = "correctness", weight = 1.0 }]

[checks.python]
tests = "tests/test_add.py"
limits = { wall_s = 10, cpu_s = 5, memory_mb = 256 }

[[judges]]
id = "sim"
provider = "sim"
samples = 1

[[artifacts]]
id = "shell"
path = "submissions/shell.py"
truth = "accept"
"""

#: Right answers, a denied import: only the import policy stands in the way.
SHELL = """\
import subprocess


def add(a: int, b: int) -> int:
    return int(subprocess.run(["echo", str(a + b)], capture_output=True, text=True).stdout)
"""

TESTS = """\
from solution import add


def test_add() -> None:
    assert add(2, 3) == 5
"""


def _said(result: object) -> str:
    return " ".join(str(getattr(result, "output", "")).split())


@pytest.fixture
def contest(tmp_path: Path) -> Path:
    root = tmp_path / "contest"
    (root / "submissions").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "campaign.toml").write_text(CAMPAIGN)
    (root / "submissions" / "shell.py").write_text(SHELL)
    (root / "tests" / "test_add.py").write_text(TESTS)
    return root


def _gates(result: object) -> dict[str, tuple[str, bool]]:
    doc = json.loads(str(getattr(result, "stdout", "")))
    return {g["id"]: (g["outcome"], g["required"]) for g in doc["gates"]}


def test_without_campaign_a_denied_import_is_evidence_and_check_passes(contest: Path) -> None:
    candidate = str(contest / "submissions" / "shell.py")
    result = jurat("check", candidate)
    assert result.exit_code == ExitCode.OK, result.output
    said = _said(result)
    assert "python.imports evidence #2:" in said and "denied module subprocess" in said
    assert ("required gates: python.parse (without --campaign: python.parse; the others are "
            "evidence, reported, never a veto here; --campaign FILE requires what `jurat run` "
            "requires)") in said
    gates = _gates(jurat("check", candidate, "--json"))
    assert gates["python.imports"] == ("fail", False)
    assert gates["python.parse"] == ("pass", True)


def test_with_campaign_the_hard_gates_decide_as_jurat_run_does(
    contest: Path, tmp_path: Path
) -> None:
    campaign = str(contest / "campaign.toml")
    candidate = str(contest / "submissions" / "shell.py")
    result = jurat("check", candidate, "--campaign", campaign)
    assert result.exit_code == ExitCode.REJECT, result.output
    said = _said(result)
    assert (f"required gates: python.parse, python.imports, tests.pass (rubric.hard_gates of "
            f"{campaign}, as `jurat run` requires them; the candidate read as its artifact "
            "'shell'; the others are evidence)") in said
    assert "required gates not passed: python.imports" in said
    gates = _gates(jurat("check", candidate, "--campaign", campaign, "--json"))
    # The campaign's tests ran (tests.pass required and passing): not "passes with no tests".
    assert gates["python.imports"] == ("fail", True)
    assert gates["tests.pass"] == ("pass", True)
    # jurat run on the same file decides the same: a veto by python.imports.
    run = jurat("run", campaign, "--out", str(tmp_path / "out"), "--ledger",
                f"sqlite:///{tmp_path / 'j.db'}", "--quiet")
    assert run.exit_code == ExitCode.REJECT, run.output
    predicate = read_statement((tmp_path / "out" / "shell.sigstore.json").read_bytes())[
        "predicate"]
    assert predicate["decision"]["disposition"] == "reject"
    recorded = {g["id"]: (g["outcome"], g["required"]) for g in predicate["gates"]}
    assert {k: recorded[k] for k in gates} == gates


def test_a_candidate_outside_the_campaign_uses_its_checks_python(
    contest: Path, tmp_path: Path
) -> None:
    loose = tmp_path / "loose.py"
    loose.write_text(SHELL)
    result = jurat("check", str(loose), "--campaign", str(contest / "campaign.toml"))
    assert result.exit_code == ExitCode.REJECT, result.output
    assert "the candidate read as an inline artifact (not one of its artifacts)" in _said(result)
    clean = tmp_path / "clean.py"
    clean.write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    ok = jurat("check", str(clean), "--campaign", str(contest / "campaign.toml"))
    assert ok.exit_code == ExitCode.OK, ok.output
    assert "every required gate passed" in _said(ok)


def test_campaign_input_errors_exit_3(contest: Path, tmp_path: Path) -> None:
    candidate = str(contest / "submissions" / "shell.py")
    campaign = contest / "campaign.toml"
    both = jurat("check", candidate, "--campaign", str(campaign), "--tests",
                 str(contest / "tests" / "test_add.py"))
    assert both.exit_code == ExitCode.INPUT
    assert ("--tests with --campaign: the campaign's [checks.python] names the tests and "
            "limits `jurat run` uses (fix: drop --tests, or drop --campaign)") in _said(both)
    bare = contest / "bare.toml"
    bare.write_text(CAMPAIGN.replace('[checks.python]\ntests = "tests/test_add.py"\n'
                                     "limits = { wall_s = 10, cpu_s = 5, memory_mb = 256 }\n",
                                     ""))
    none = jurat("check", candidate, "--campaign", str(bare))
    assert none.exit_code == ExitCode.INPUT
    assert f"{bare}: the campaign has no [checks.python] table" in _said(none)
    (contest / "tests" / "test_add.py").unlink()
    missing = jurat("check", candidate, "--campaign", str(campaign))
    assert missing.exit_code == ExitCode.INPUT
    said = _said(missing)
    assert f"{campaign}:12: field `checks.python.tests`: cannot read 'tests/test_add.py'" in said
    typo = jurat("check", candidate, "--campaign", str(tmp_path / "nope.toml"))
    assert typo.exit_code == ExitCode.INPUT
