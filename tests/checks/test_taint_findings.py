"""Issue 25's sandbox findings, each reproduced as the adversary ran it.

1. A wrong candidate that also defines ``abs``, ``round`` or ``all`` rebound the builtin
   inside a test that star-imports it, and passed.
2. A candidate patched its own process's coverage reporter by name and had its text
   (the hidden test inputs it had seen) signed into the coverage gate.
4. A parametrized hidden test's node id, holding the expected value, was recorded in the
   tests gate (receipt, board and judge evidence).
"""

from __future__ import annotations

import json
import secrets

import pytest

from jurat.checks import run_checks
from jurat.checks._humaneval import humaneval_to_files
from jurat.models._checks import Limits, PythonChecks

CONFIG = PythonChecks(
    limits=Limits(wall_s=20, cpu_s=10), mutation=False, coverage=True
)


def _public(report_json: dict[str, object]) -> str:
    """Everything the checks hand to receipts, the board and judges."""
    return json.dumps(report_json, ensure_ascii=False)


# ------------------------------------------------------------------ 1. name shadowing

SHADOW_TEST = """\
from solution import *  # noqa: F403


def test_close():
    assert abs(area(2.0) - 12.566) < 1e-2


def test_rounded():
    assert round(area(1.0), 2) == 3.14


def test_all_positive():
    assert all(area(r) > 0 for r in (1, 2, 3))
"""

WRONG_AREA = """\
def area(r):
    return -1.0
"""

SHADOWING = WRONG_AREA + """
def abs(x):
    return 0


def round(x, n=0):
    return 3.14


def all(values):
    return True
"""


@pytest.mark.parametrize("source", [WRONG_AREA, SHADOWING], ids=["wrong", "wrong+shadowing"])
def test_a_candidate_cannot_shadow_the_tests_builtins(source: str) -> None:
    report = run_checks(source, tests={"test_solution.py": SHADOW_TEST}, config=CONFIG)
    gate = report.gate("tests.pass")
    assert gate.outcome == "fail", gate.detail
    assert report.record is not None
    assert report.record.record["tests"]["passed"] == 0
    assert report.record.record["tests"]["collected"] == 3


def test_a_star_import_never_rebinds_a_module_the_test_imported() -> None:
    # A wrong answer that also defines ``math`` replaced the test's own module.
    test = (
        "import math\nfrom solution import *  # noqa: F403\n\n"
        "def test_it():\n    assert math.isclose(double(2), 4)\n"
    )
    source = (
        "def double(x):\n    return 2 * x + 1\n\n\n"
        "class math:\n    isclose = staticmethod(lambda a, b: True)\n"
    )
    report = run_checks(source, tests={"test_solution.py": test}, config=CONFIG)
    assert report.gate("tests.pass").outcome == "fail"


def test_a_star_import_never_rebinds_a_name_the_test_binds() -> None:
    # The test's own helper, bound before the star import, stays the test's.
    test = (
        "def expected(x):\n    return 2 * x\n\n"
        "from solution import *  # noqa: E402, F403\n\n"
        "def test_it():\n    assert double(2) == expected(2)\n"
    )
    source = "def double(x):\n    return 5\n\n\ndef expected(x):\n    return 5\n"
    report = run_checks(source, tests={"test_solution.py": test}, config=CONFIG)
    assert report.gate("tests.pass").outcome == "fail"


def test_humaneval_helpers_come_from_the_prompt_not_the_completion() -> None:
    # HumanEval/32's check calls poly(); a completion that redefines it to 0 passed.
    problem = {
        "prompt": "import math\n\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) "
        "for i, c in enumerate(xs))\n\n\ndef find_zero(xs):\n",
        "completion": "    return 12345.0\n\n\ndef poly(xs, x):\n    return 0\n",
        "test": "def check(candidate):\n    assert abs(poly([1, 2], candidate([1, 2]))) < 1e-4\n",
        "entry_point": "find_zero",
    }
    source, tests = humaneval_to_files(problem)
    assert "import *" not in tests["test_solution.py"]
    report = run_checks(source, tests=tests, config=CONFIG)
    assert report.gate("tests.pass").outcome == "fail"


# ------------------------------------------------------------------ 2. harness patched by name

def _patching_candidate(marker: str) -> str:
    return f"""\
import sys


def add(a, b):
    seen.append(a)
    seen.append(b)
    if len(seen) >= 4:
        harness = sys.modules.get("_sandbox_candidate") or sys.modules.get("__main__")
        text = "{marker} LEAKED hidden test inputs: " + repr(seen)
        harness._coverage_summary = lambda cov: {{"error": text, "missing_lines": [text]}}
    return a + b


seen = []
"""


def test_a_candidate_patching_its_harness_writes_no_text_into_the_gates() -> None:
    marker = "CANDMARK" + secrets.token_hex(8)
    tests = {
        "test_solution.py": (
            "from solution import add\n\n"
            "def test_one():\n    assert add(31337, 3) == 31340\n\n"
            "def test_two():\n    assert add(424242, 5) == 424247\n"
        )
    }
    report = run_checks(_patching_candidate(marker), tests=tests, config=CONFIG)
    assert report.gate("tests.pass").outcome == "pass"
    coverage = report.gate("coverage")
    # Forgeable, so never shown as a figure: the same words whatever the candidate did.
    assert coverage.outcome == "skip" and "forgeable" in coverage.detail
    assert report.record is not None
    assert report.record.record["coverage"] == {"error": "not_measured"}
    public = _public(report.to_json())
    assert marker not in public and "31337" not in public and "424242" not in public


def test_out_of_range_coverage_numbers_are_refused() -> None:
    source = """\
import sys


def add(a, b):
    harness = sys.modules.get("_sandbox_candidate") or sys.modules.get("__main__")
    harness._coverage_summary = lambda cov: {
        "statements": 3, "covered_lines": 3, "missing_lines": [424242],
        "branches": 0, "covered_branches": 0, "partial_branches": 0, "percent": 100.0,
    }
    return a + b
"""
    tests = {"test_solution.py": "from solution import add\n\ndef test_one():\n"
             "    assert add(1, 2) == 3\n"}  # fmt: skip
    report = run_checks(source, tests=tests, config=CONFIG)
    assert report.record is not None
    assert report.record.record["coverage"] == {"error": "malformed"}
    assert "424242" not in _public(report.to_json(operator=True))


# ------------------------------------------------------------------ 4. parametrized ids

PARAMETRIZED = """\
import pytest

from solution import fizz


@pytest.mark.parametrize("n,expected", [(3, "Fizz"), (15, "{secret}-FizzBuzz"), (5, "Buzz")])
def test_last(n, expected):
    assert fizz(n) == expected, "expected {secret} for the hidden case"
"""


def test_hidden_test_ids_and_parameters_never_reach_the_gates() -> None:
    secret = "SECRET" + secrets.token_hex(6)
    source = "def fizz(n):\n    return 'Fizz' if n % 3 == 0 else 'Buzz'\n"
    tests = {"test_hidden_cases.py": PARAMETRIZED.format(secret=secret)}
    report = run_checks(source, tests=tests, config=CONFIG)
    gate = report.gate("tests.pass")
    assert gate.outcome == "fail"
    assert report.record is not None
    assert report.record.record["tests"]["not_passed"] == [1]
    public = _public(report.to_json(operator=True))
    for hidden in (secret, "test_last", "test_hidden_cases", "FizzBuzz"):
        assert hidden not in public, hidden
    # The operator can still map index 1 to the test, on the terminal only.
    (block,) = [b for b in report.reference_detail if b.contains("--- test #1 ")]
    assert block.origin == "reference" and block.contains(secret)
