"""The 164 HumanEval problems: every canonical solution passes; broken variants fail right.

Data: ``data/HumanEval.jsonl.gz`` (OpenAI, MIT licence, see ``data/HumanEval.LICENSE``).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from jurat.checks import (
    CheckPool,
    CheckReport,
    cores,
    humaneval_to_files,
    load_humaneval,
    run_tests,
)
from jurat.models._checks import Limits
from tests.support.scale import FULL, scaled

DATA = Path(__file__).parent / "data" / "HumanEval.jsonl.gz"
PROBLEMS = load_humaneval(DATA)

# Wraps the correct entry point and returns a value that is off by one: one more
# for numbers, one element shorter (or longer, when empty) for sequences.
OFF_BY_ONE = """

_correct = {entry}


def {entry}(*args, **kwargs):
    result = _correct(*args, **kwargs)
    if isinstance(result, bool):
        return not result
    if isinstance(result, (int, float)):
        return result + 1
    if isinstance(result, (str, list, tuple)):
        if result:
            return result[:-1]
        return result + type(result)("x" if isinstance(result, str) else [None])
    return [result]
"""

VARIANTS: dict[str, tuple[str, str]] = {
    # name: (outcome, how the completion is replaced)
    "wrong_return": ("failed", "    return None\n"),
    "exception": ("failed", "    raise ValueError('broken variant')\n"),
    "infinite_loop": ("timeout", "    while True:\n        pass\n"),
    "off_by_one": ("failed", ""),
}
VARIANT_LIMITS = Limits(wall_s=4, cpu_s=1)
# The variants that end by themselves get a wall limit with headroom (a loaded machine
# must not turn "failed" into "timeout"); the infinite loop keeps 4 s, and its cpu limit
# is 1 s for all.
ENDING_LIMITS = VARIANT_LIMITS.model_copy(update={"wall_s": 30})


def _variant(problem: dict[str, Any], name: str) -> str:
    if name == "off_by_one":
        canonical = problem["prompt"] + problem["canonical_solution"]
        return canonical + OFF_BY_ONE.format(entry=problem["entry_point"])
    return problem["prompt"] + VARIANTS[name][1]


def test_the_data_set_is_complete() -> None:
    assert len(PROBLEMS) == 164
    assert len({p["task_id"] for p in PROBLEMS}) == 164


def test_conversion_places_the_candidate_as_a_module() -> None:
    source, tests = humaneval_to_files(PROBLEMS[32])
    assert source.startswith(PROBLEMS[32]["prompt"])
    ((name, text),) = tests.items()
    assert name == "test_solution.py"
    # The entry point by name; the prompt's helper (poly) from the prompt's own text.
    assert "import *" not in text and "check(find_zero)" in text
    assert "from solution import find_zero\n" in text and "def poly(" in text


@pytest.mark.slow
def test_canonical_solutions_pass_the_full_pipeline() -> None:
    # All 164 under JURAT_TEST_SCALE=full; by default every 3rd and HumanEval/160, the one
    # whose solution the import policy flags (tests/support/scale.py).
    step = scaled(3, 1)
    chosen = [p for i, p in enumerate(PROBLEMS) if i % step == 0 or i == 160]

    async def all_problems() -> list[CheckReport]:
        async with CheckPool() as pool:
            jobs = [
                pool.run(*humaneval_to_files(p)[:1], tests=humaneval_to_files(p)[1])
                for p in chosen
            ]
            return await asyncio.gather(*jobs)

    reports = asyncio.run(all_problems())
    outcomes = {
        p["task_id"]: r.gate("tests.pass").detail for p, r in zip(chosen, reports, strict=True)
    }
    assert Counter(outcomes.values()) == {"passed": len(chosen)}, outcomes
    assert not FULL or len(chosen) == 164
    assert all(r.ok for r in reports)
    # Coverage is the operator's (measured in the candidate's process): recorded for all.
    assert all(r.record is not None and "percent" in r.record.record["coverage"]
               for r in reports)
    # HumanEval/160's canonical solution calls eval(): reported, but not a hard gate.
    denied = [
        p["task_id"]
        for p, r in zip(chosen, reports, strict=True)
        if r.gate("python.imports").outcome == "fail"
    ]
    assert denied == ["HumanEval/160"]


@pytest.mark.slow
def test_broken_variants_fail_with_the_right_outcome() -> None:
    # Every 4th problem for the quick variants and every 8th for the infinite loop under
    # JURAT_TEST_SCALE=full; every 8th and every 32nd by default (tests/support/scale.py).
    quick, looping = scaled(8, 4), scaled(32, 8)
    jobs = [
        (p, name)
        for i, p in enumerate(PROBLEMS)
        for name in VARIANTS
        if i % (looping if name == "infinite_loop" else quick) == 0
    ]

    def run(job: tuple[dict[str, Any], str]) -> tuple[str, str, str]:
        problem, name = job
        _, tests = humaneval_to_files(problem)
        files = {"solution.py": _variant(problem, name), **tests}
        limits = VARIANT_LIMITS if VARIANTS[name][0] == "timeout" else ENDING_LIMITS
        run = run_tests(files, list(tests), limits=limits, coverage=False)
        return problem["task_id"], name, run.outcome

    with ThreadPoolExecutor(cores()) as pool:
        results = list(pool.map(run, jobs))
    wrong = [(task, name, got) for task, name, got in results if got != VARIANTS[name][0]]
    assert wrong == []
    each, loops = -(-len(PROBLEMS) // quick), -(-len(PROBLEMS) // looping)
    assert Counter(name for _, name, _ in results) == {
        "wrong_return": each,
        "exception": each,
        "off_by_one": each,
        "infinite_loop": loops,
    }
    assert not FULL or (each, loops) == (41, 21)
