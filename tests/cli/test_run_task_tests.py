"""Per-task hidden tests (issue 37): a task's artifacts run only their task's tests, with the
task's limits and declared classes; a test the test file skips is reported as skipped, not
failed, unless the campaign requires it; a skip raised in a test's body is a failure.

Before, one campaign-wide test file held every task's tests: a correct ``median`` failed
because the ``to_roman`` test beside it could not pass (or was skipped, which counted as
not passed).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurat.receipts import read_statement
from tests.support.cli import invoke, isolate_homes

CAMPAIGN = """\
[campaign]
id = "two-tasks"
kind = "rubric"
risk_tier = {{ votes = 1, min_agreement = 1.0 }}
allowed_destinations = ["stub"]

[rubric]
version = "r/1"
hard_gates = ["python.parse", "tests.pass"]
criteria = [ {{ id = "correctness", weight = 1.0 }} ]

[checks.python]
coverage = false
{skips}

[[tasks]]
id = "median"
statement = "Write median(values)."
tests = "tests/test_median.py"

[[tasks]]
id = "roman"
statement = "Write to_roman(n) and a Numeral class."
tests = "tests/test_roman.py"
objects = ["Numeral"]
limits = {{ wall_s = 30, cpu_s = 10 }}

[[judges]]
id = "A"
provider = "stub:always-accept"
samples = 1

[[artifacts]]
id = "median-right"
path = "median_right.py"
task = "median"

[[artifacts]]
id = "median-wrong"
path = "median_wrong.py"
task = "median"

[[artifacts]]
id = "roman-right"
path = "roman_right.py"
task = "roman"

[[artifacts]]
id = "roman-skips-in-body"
path = "roman_body_skip.py"
task = "roman"
"""

MEDIAN_TESTS = """\
import pytest

from solution import median


def test_odd():
    assert median([3, 1, 2]) == 2


def test_sorts_in_place():
    values = [5, 1, 3]
    median(values)
    assert values == [1, 3, 5]


@pytest.mark.skip(reason="even-length lists are not part of this task")
def test_even():
    assert median([1, 2, 3, 4]) == 2.5
"""

ROMAN_TESTS = """\
import pytest

import solution
from solution import Numeral, to_roman


def test_small():
    assert to_roman(4) == "IV" and to_roman(9) == "IX"


def test_numeral_object():
    n = Numeral(14)
    assert str(n) == "XIV" and len(n) == 3 and "X" in n


def test_optional_extension():
    if not getattr(solution, "HAS_EXTENSION", False):
        pytest.skip("the extension was not attempted")
    assert to_roman(3999) == "MMMCMXCIX"
"""

MEDIAN_RIGHT = "def median(values):\n    values.sort()\n    return values[len(values) // 2]\n"
MEDIAN_WRONG = "def median(values):\n    return sorted(values)[len(values) // 2]\n"
ROMAN = """\
_TABLE = {table}
HAS_EXTENSION = {extension}


def to_roman(n):
    out = ""
    for value, letters in _TABLE:
        while n >= value:
            out += letters
            n -= value
    return out


class Numeral:
    def __init__(self, n):
        self.text = to_roman(n)

    def __str__(self):
        return self.text

    def __len__(self):
        return len(self.text)

    def __contains__(self, letter):
        return letter in self.text
"""


def _campaign(root: Path, skips: str = "") -> Path:
    (root / "tests").mkdir(parents=True, exist_ok=True)
    (root / "tests" / "test_median.py").write_text(MEDIAN_TESTS)
    (root / "tests" / "test_roman.py").write_text(ROMAN_TESTS)
    (root / "median_right.py").write_text(MEDIAN_RIGHT)
    (root / "median_wrong.py").write_text(MEDIAN_WRONG)
    full = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
            (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    (root / "roman_right.py").write_text(ROMAN.format(table=full, extension="True"))
    # No extension: the hidden test skips in its body, on what the candidate said: a skip
    # the candidate caused, so a failure.
    (root / "roman_body_skip.py").write_text(ROMAN.format(table=full[8:], extension="False"))
    path = root / "campaign.toml"
    path.write_text(CAMPAIGN.format(skips=skips))
    return path


def _run(root: Path, campaign: Path) -> dict[str, str]:
    result = invoke("run", str(campaign), "--out", str(root / "out"), "--ledger",
                    f"sqlite:///{root / 'l.db'}", "--quiet", "--json", str(root / "r.json"))
    assert result.exit_code in (0, 1, 2), result.output
    doc = json.loads((root / "r.json").read_text())
    return {a["id"]: a["decision"] for a in doc["artifacts"]}


def _gate(root: Path, artifact: str) -> dict[str, object]:
    predicate = read_statement((root / "out" / f"{artifact}.sigstore.json").read_bytes())[
        "predicate"]
    gate: dict[str, object] = next(g for g in predicate["gates"] if g["id"] == "tests.pass")
    return gate


def test_each_task_runs_its_own_tests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_homes(tmp_path, monkeypatch)
    decisions = _run(tmp_path, _campaign(tmp_path))
    assert decisions == {"median-right": "accept", "median-wrong": "reject",
                         "roman-right": "accept", "roman-skips-in-body": "reject"}
    # The task's limits and declared classes are what its tests ran under.
    roman = _gate(tmp_path, "roman-right")
    assert roman["data"]["limits"]["wall_s"] == 30  # type: ignore[index]
    assert roman["data"]["objects"] == ["Numeral"]  # type: ignore[index]
    assert _gate(tmp_path, "median-right")["data"]["limits"]["wall_s"] == 10  # type: ignore[index]


def test_a_campaign_may_require_that_nothing_is_skipped(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_homes(tmp_path, monkeypatch)
    decisions = _run(tmp_path, _campaign(tmp_path, skips="skips_fail = true"))
    # The median tests skip their even-length case: with skips_fail that is a failure.
    assert decisions["median-right"] == "reject"
    # The roman tests skip nothing for a full answer; a skip in the body fails either way.
    assert decisions["roman-right"] == "accept"
    assert decisions["roman-skips-in-body"] == "reject"


def test_task_tests_need_python_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                       ) -> None:
    isolate_homes(tmp_path, monkeypatch)
    campaign = _campaign(tmp_path)
    text = campaign.read_text()
    campaign.write_text(text.replace("[checks.python]\ncoverage = false\n", ""))
    result = invoke("run", str(campaign), "--out", str(tmp_path / "out"), "--ledger",
                    f"sqlite:///{tmp_path / 'l.db'}", "--quiet")
    assert result.exit_code == 3, result.output
    assert "tasks[0].tests" in result.output and "[checks.python]" in result.output
