"""``jurat check CANDIDATE --campaign FILE [--task ID]`` on a campaign `jurat serve` serves
(no ``[[artifacts]]``; issue 37, item 5): the candidate is checked as a submission, with the
campaign's ``[checks.python]`` and hard gates, for the task ``--task`` names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurat.cli import ExitCode
from tests.support.cli import invoke

SERVED = """\
[campaign]
id = "served"
kind = "rubric"
allowed_destinations = ["stub"]

[rubric]
version = "square/1"
hard_gates = ["python.parse", "tests.pass"]
criteria = [ { id = "correctness", weight = 1.0 } ]

[checks.python]
tests = "tests/test_square.py"
limits = { wall_s = 20, cpu_s = 10, memory_mb = 256 }

[[judges]]
id = "stand-in"
provider = "stub:always-accept"
samples = 1
"""

TASKS = """
[[tasks]]
id = "square"
statement = "Write square(x)."

[[tasks]]
id = "cube"
statement = "Write cube(x)."
"""

TESTS = "from solution import square\n\n\ndef test_square():\n    assert square(3) == 9\n"
GOOD = "def square(x):\n    return x * x\n"
BAD = "def square(x):\n    return x + x\n"


@pytest.fixture
def served(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_square.py").write_text(TESTS)
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    path = tmp_path / "served.toml"
    path.write_text(SERVED)
    return path


def _said(result: object) -> str:
    return " ".join(getattr(result, "output", "").split())


def test_a_served_campaign_checks_the_file_as_a_submission(served: Path) -> None:
    good = invoke("check", str(served.parent / "good.py"), "--campaign", str(served))
    assert good.exit_code == ExitCode.OK, good.output
    said = _said(good)
    assert "the candidate read as a submission (the campaign lists no artifacts)" in said
    assert "required gates: python.parse, tests.pass" in said
    bad = invoke("check", str(served.parent / "bad.py"), "--campaign", str(served), "--json")
    assert bad.exit_code == ExitCode.REJECT, bad.output
    assert "tests.pass" in bad.output and "the campaign has no artifacts" not in bad.output


def test_task_picks_one_of_the_campaigns_tasks(served: Path) -> None:
    served.write_text(SERVED + TASKS)
    good = str(served.parent / "good.py")
    unpicked = invoke("check", good, "--campaign", str(served))
    assert unpicked.exit_code == ExitCode.INPUT
    assert ("the campaign has 2 tasks, and a candidate answers one of them (fix: add --task "
            "ID, one of square, cube)") in _said(unpicked)
    typo = invoke("check", good, "--campaign", str(served), "--task", "sqare")
    assert typo.exit_code == ExitCode.INPUT
    assert "--task 'sqare' is not one of the campaign's tasks; did you mean 'square'?" in (
        _said(typo))
    picked = invoke("check", good, "--campaign", str(served), "--task", "square")
    assert picked.exit_code == ExitCode.OK, picked.output
    assert "as a submission (the campaign lists no artifacts), for task 'square'" in (
        _said(picked))


def test_task_without_tasks_or_without_a_campaign_exits_3(served: Path) -> None:
    good = str(served.parent / "good.py")
    no_tasks = invoke("check", good, "--campaign", str(served), "--task", "square")
    assert no_tasks.exit_code == ExitCode.INPUT
    assert "--task 'square': the campaign declares no [[tasks]] (fix: drop --task)" in (
        _said(no_tasks))
    alone = invoke("check", good, "--task", "square")
    assert alone.exit_code == ExitCode.INPUT
    assert "--task picks one of a campaign's [[tasks]]" in _said(alone)


def test_a_campaign_with_other_problems_still_says_them(served: Path) -> None:
    served.write_text(SERVED.replace('kind = "rubric"', 'kind = "rubrik"'))
    result = invoke("check", str(served.parent / "good.py"), "--campaign", str(served))
    assert result.exit_code == ExitCode.INPUT
    assert "rubrik" in result.output and "the campaign has no artifacts" not in result.output


def test_each_task_runs_its_own_tests(served: Path) -> None:
    root = served.parent
    (root / "tests" / "test_cube.py").write_text(
        "from solution import cube\n\n\ndef test_cube():\n    assert cube(2) == 8\n")
    (root / "cube.py").write_text("def cube(x):\n    return x ** 3\n")
    tasks = TASKS.replace('statement = "Write square(x)."',
                          'statement = "Write square(x)."\ntests = "tests/test_square.py"')
    tasks = tasks.replace('statement = "Write cube(x)."',
                          'statement = "Write cube(x)."\ntests = "tests/test_cube.py"\n'
                          "limits = { wall_s = 15, cpu_s = 5, memory_mb = 256 }")
    served.write_text(SERVED + tasks)
    campaign = str(served)
    walls = {}
    for candidate, task in (("good.py", "square"), ("cube.py", "cube")):
        done = invoke("check", str(root / candidate), "--campaign", campaign, "--task", task,
                      "--json")
        assert done.exit_code == ExitCode.OK, (task, done.output)
        [gate] = [g for g in json.loads(done.stdout)["gates"] if g["id"] == "tests.pass"]
        walls[task] = gate["data"]["limits"]["wall_s"]
    assert walls == {"square": 20, "cube": 15}  # the task's own limits, as a run's
    # The square is right for its task and not for the other's tests.
    wrong = invoke("check", str(root / "good.py"), "--campaign", campaign, "--task", "cube",
                   "--json")
    assert wrong.exit_code == ExitCode.REJECT, wrong.output
