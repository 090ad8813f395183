"""Hostile candidates end in their expected outcome and nothing escapes the sandbox.

All cases run once (module fixture), concurrently on the machine's cores,
with tight limits; each case is then asserted on its own, and a final test
asserts that the host is unchanged: no stray processes or cgroups, the
canary untouched, no file written outside the sandbox, no connection made.
"""

from __future__ import annotations

import os
import secrets
import socket
import string
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from jurat.checks import SandboxRun, cores, run_tests
from jurat.models._checks import Limits
from tests.checks.host_state import (
    cgroups_of,
    children_of,
    processes_with,
)
from tests.checks.hostile_cases import CASES, Case

LIMITS = Limits(
    wall_s=4, cpu_s=2, memory_mb=160, procs=16, output_kb=64, file_mb=8, nofile=128, tmpfs_mb=32
)
# The wall clock is what ends these: they sleep, or spin until a limit stops them (a busy
# loop meets its cpu limit, or on a loaded machine the wall clock first: a timeout either
# way). They keep the 4 s wall limit.
WALL_ENDED = frozenset({"busy_loop", "sleep_forever", "ignore_sigxcpu",
                        "swallow_systemexit_and_interrupt", "steal_nonce_and_forge_result"})
# These spin until the wall clock too, but their outcome needs the kernel's first refused
# fork or clone before it: 8 s leave a loaded machine time to start the interpreter.
BOMBS = frozenset({"fork_bomb", "thread_bomb"})
# Every other case ends by itself or by a limit the kernel enforces (memory, processes,
# output, file size, cpu_s, all as tight as above): a wall limit with headroom keeps a
# loaded machine from turning its outcome into a timeout, which no case of them expects.
ROOMY = LIMITS.model_copy(update={"wall_s": 30})


def limits_for(case: Case) -> Limits:
    if case.name in WALL_ENDED:
        return LIMITS
    if case.name in BOMBS:
        return LIMITS.model_copy(update={"wall_s": 8})
    return ROOMY
SECRET = "jurat-canary-" + secrets.token_hex(12)


@dataclass
class Hostile:
    runs: dict[str, SandboxRun]
    canary_dir: Path
    canary_file: Path
    token: str
    listener: socket.socket


def _fill(text: str, values: dict[str, str]) -> str:
    return string.Template(text).substitute(values)


def _run(case: Case, values: dict[str, str]) -> SandboxRun:
    files = {
        "solution.py": _fill(case.solution, values),
        "test_solution.py": _fill(case.test, values),
    }
    return run_tests(files, ["test_solution.py"], limits=limits_for(case), coverage=False)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    canary_dir = tmp_path_factory.mktemp("canary")
    canary_file = canary_dir / "secret.txt"
    canary_file.write_text(SECRET)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    # A decimal so the daemon can pass it to sleep(1) and we can find it in /proc.
    token = f"3600.{secrets.randbelow(10**9):09d}"
    values = {
        "canary_dir": str(canary_dir),
        "canary_file": str(canary_file),
        "secret": SECRET,
        "port": str(listener.getsockname()[1]),
        "token": token,
    }
    previous = os.environ.get("JURAT_HOSTILE_SECRET")
    os.environ["JURAT_HOSTILE_SECRET"] = SECRET
    try:
        with ThreadPoolExecutor(cores()) as pool:
            futures = {case.name: pool.submit(_run, case, values) for case in CASES}
            runs = {name: future.result() for name, future in futures.items()}
        yield Hostile(runs, canary_dir, canary_file, token, listener)
    finally:
        listener.close()
        if previous is None:
            os.environ.pop("JURAT_HOSTILE_SECRET", None)
        else:
            os.environ["JURAT_HOSTILE_SECRET"] = previous


def test_the_suite_is_large_enough() -> None:
    assert len(CASES) >= 20
    assert len({c.name for c in CASES}) == len(CASES)
    names = {c.name for c in CASES}
    assert WALL_ENDED | BOMBS <= names
    # Only the cases the wall clock ends may end in a timeout.
    assert {c.name for c in CASES if "timeout" in c.expected} == WALL_ENDED


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_candidate_ends_as_expected(hostile: Hostile, case: Case) -> None:
    run = hostile.runs[case.name]
    output = run.output.reveal()
    assert run.outcome in case.expected, (run.outcome, run.detail, output[-800:])
    assert run.outcome != "passed" or case.expected == {"passed"}
    assert SECRET not in output
    assert all(not t.excerpt.contains(SECRET) for t in run.tests)
    assert run.cleanup_ok
    assert run.output_bytes <= LIMITS.output_kb * 1024 or run.outcome == "output_limit"
    assert len(output.encode()) <= LIMITS.output_kb * 1024


def test_output_is_truncated_and_flagged(hostile: Hostile) -> None:
    run = hostile.runs["print_gigabytes"]
    assert run.output_truncated
    assert run.output_bytes > LIMITS.output_kb * 1024


def test_limits_are_reported_by_the_kernel_counters(hostile: Hostile) -> None:
    assert hostile.runs["fork_bomb"].pids_max_hits > 0
    assert hostile.runs["thread_bomb"].pids_max_hits > 0
    assert hostile.runs["memory_bomb"].memory_peak_bytes <= LIMITS.memory_mb * 1024 * 1024


def test_forged_passes_fail_on_the_trusted_side(hostile: Hostile) -> None:
    # The candidate's tampering stays in its own process: the tests still ran and
    # saw the wrong answer (AssertionError), not a harness error.
    for name in (
        "rewrite_reports_via_gc",
        "attrgetter_reaches_modules",
        "always_equal_object",
        "always_equal_int_subclass",
        "always_equal_inside_container",
        "always_equal_str_subclass",
        "patch_builtins_and_assertion",
        "patch_pytest_reports",
        "register_plugin_via_gc",
        "fake_passed_output",
    ):
        run = hostile.runs[name]
        assert run.collected >= 1 and run.passed == 0, name
        # An object of the candidate's own class is not plain data: the call itself fails
        # (NotPlainData) before any comparison; plain values fail the assertion.
        assert {t.raised for t in run.tests} <= {"AssertionError", "NotPlainData"}, (
            name, run.tests)


def test_the_protocol_breakers_end_the_candidate_not_the_tests(hostile: Hostile) -> None:
    for name in ("raw_frame_deep_nesting", "raw_frame_claims_huge_length"):
        run = hostile.runs[name]
        assert [t.raised for t in run.tests] == ["CandidateGone"], (name, run.tests)
    forged = hostile.runs["raw_frame_forged_handle_and_tag"]
    assert forged.tests[0].raised in ("CandidateError", "CandidateGone"), forged.tests
    skips = hostile.runs["raise_skip_like_exception"]
    assert [t.outcome for t in skips.tests] == ["failed", "failed"]


def test_the_candidate_cannot_read_the_tests(hostile: Hostile) -> None:
    run = hostile.runs["read_hidden_tests"]
    assert run.outcome == "passed", (run.detail, run.tests)


def test_host_is_unchanged(hostile: Hostile) -> None:
    assert hostile.canary_file.read_text() == SECRET
    assert sorted(p.name for p in hostile.canary_dir.iterdir()) == ["secret.txt"]
    for path in (
        Path(f"/tmp/jurat-escape-{hostile.token}"),
        Path(f"/root/escape-{hostile.token}"),
        hostile.canary_dir / f"escaped-{hostile.token}",
    ):
        assert not path.exists(), path
    with pytest.raises(BlockingIOError):
        hostile.listener.accept()
    assert processes_with(hostile.token) == []
    assert children_of(os.getpid()) == []
    # Every sandbox process starts inside its run's cgroups and cannot leave them
    # (no cgroupfs in the sandbox); groups that no longer exist held no process.
    assert cgroups_of(os.getpid()) == []
    assert all(run.cleanup_ok for run in hostile.runs.values())
    assert Path("/opt/jurat").exists() is False
