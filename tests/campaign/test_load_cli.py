"""Through the command line: a campaign with problems exits 3, lists every problem with its
file, line, field and fix, and nothing is evaluated or written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import invoke, isolate_homes

from .test_load_errors import RUBRIC, changed, line_of, write


def _run(tmp_path: Path, campaign: Path) -> tuple[int, str]:
    ledger = tmp_path / "ledger.db"
    result = invoke("run", str(campaign), "--out", str(tmp_path / "out"), "--ledger",
                    f"sqlite:///{ledger}", "--quiet")
    assert not ledger.exists(), "nothing may be written"
    assert not (tmp_path / "out").exists()
    return result.exit_code, result.output


def test_a_bad_truth_label_exits_3_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_homes(tmp_path, monkeypatch)
    text = changed(RUBRIC, ('truth = "reject"', 'truth = "rejected"'))
    campaign = write(tmp_path, text)
    code, output = _run(tmp_path, campaign)
    assert code == 3, output
    line = line_of(text, '"rejected"')
    assert output.splitlines()[:2] == [
        f"error: {campaign}:{line}: field `artifacts[1].truth`: truth 'rejected' is not a "
        "rubric label; did you mean 'reject'? (rubric labels: \"accept\", \"reject\")",
        '  fix: truth = one of "accept", "reject"',
    ]


def test_several_problems_exit_3_and_are_all_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_homes(tmp_path, monkeypatch)
    text = changed(RUBRIC, ("threshold = 0.75", "treshold = 0.75"),
                   ("[checks.python]", "[check.python]"),
                   ("weight = 0.10", "weight = 0.0999999"))
    campaign = write(tmp_path, text)
    code, output = _run(tmp_path, campaign)
    assert code == 3, output
    assert output.splitlines() == [
        f"error: {campaign}: 3 problems, listed by line",
        f"  [1] {campaign}:{line_of(text, 'treshold')}: field `rubric.treshold`: unknown key "
        "'treshold' in [rubric]; did you mean 'threshold'?",
        "  fix: rename it to threshold",
        f"  [2] {campaign}:{line_of(text, 'criteria = [')}: field `rubric.criteria`: weights "
        "sum to 0.9999999 (0.45 + 0.25 + 0.2 + 0.0999999), not 1 (tolerance 1e-9)",
        "  fix: make the weights add up to 1: they are short by 0.0000001, e.g. presentation "
        "weight = 0.1",
        f"  [3] {campaign}:{line_of(text, '[check.python]')}: field `check`: unknown table "
        "[check.python]; did you mean [checks.python]?",
        "  fix: rename it to [checks.python]",
    ]
