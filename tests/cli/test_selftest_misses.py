"""A failed selftest control names the control, its input, the expected and the actual
answer (issue 29), and the selftest's help says what runs."""

from __future__ import annotations

import pytest

from tests.support.cli import invoke


def test_a_failed_canary_names_its_input_expected_and_actual_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one table row per line
    result = invoke("selftest", "--judge", "stub:always-no")
    assert result.exit_code == 1
    out = result.stdout
    failed = out[out.index("failed controls:"):]
    assert "  stub:always-no  canary: criterion met → SHIP\n" in failed
    assert ('    input:    criterion "Does the answer name Paris as the capital?", output '
            '"Paris." (sha256 ') in failed
    assert "    expected: SHIP (verdict yes)\n    actual:   BLOCK (votes no 5/5)\n" in failed
    # The control it passed (a blocker missed is a BLOCK) is not listed as failed.
    assert "blocker missed" not in failed
    row = next(line for line in out.splitlines() if "criterion met" in line)
    assert [c.strip() for c in row.strip("│").split("│")] == [
        "stub:always-no", "canary: criterion met → SHIP", "FAIL", "expected SHIP, got BLOCK"]


def test_each_missed_pair_is_listed_with_both_answers() -> None:
    result = invoke("selftest", "--judge", "stub:always-different")
    assert result.exit_code == 1
    failed = result.stdout[result.stdout.index("failed controls:"):]
    assert "stub:always-different  identity → EQUIVALENT" in failed
    assert failed.count("    expected: EQUIVALENT\n    actual:   DIFFERENT\n") == 4
    assert 'input:    a "The answer is 42.", b "The answer is 42." (sha256 ' in failed


def test_a_passing_judge_lists_no_failure_and_the_default_is_the_sim_judge() -> None:
    result = invoke("selftest")
    assert result.exit_code == 0, result.stdout
    assert "failed controls" not in result.stdout
    judges = {line.split("│")[1].strip() for line in result.stdout.splitlines()
              if line.startswith("│") and line.split("│")[1].strip()}
    assert judges == {"sim"}  # no stub runs by default
    helped = " ".join(invoke("selftest", "--help").stdout.split())
    assert "the built-in sim judge alone" in helped and "stub and sim" not in helped
