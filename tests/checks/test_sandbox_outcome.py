"""How the host names a run's outcome from what it saw (checks/_sandbox_result.py)."""

from __future__ import annotations

import signal

import pytest

from jurat.checks._cgroup import GroupStats
from jurat.checks._sandbox_result import Ending, Reading, _outcome
from jurat.models._checks import Limits

_QUIET = GroupStats(oom_kills=0, pids_max_hits=0, memory_peak_bytes=0, pids_peak=0)
_FAILED = {"outcome": "failed", "reason": "tests_failed"}


def _ending(signal_number: int | None, candidate_first: bool) -> Ending:
    reading = Reading(output=b"", total=0, over_cap=False, timed_out=False,
                      candidate_ended_first=candidate_first)
    status = None if signal_number is None else 128 + signal_number
    return Ending(reading=reading, tests=_QUIET, candidate=_QUIET, candidate_status=status)


@pytest.mark.parametrize("candidate_first", [True, False])
def test_sigxcpu_is_the_cpu_limit_whichever_end_is_read_first(candidate_first: bool) -> None:
    # A loaded machine can show the tests' end (they saw the candidate gone) before the
    # candidate sandbox's own: the kernel's SIGXCPU still names the limit.
    got = _outcome(_ending(signal.SIGXCPU, candidate_first), _FAILED, Limits())
    assert got == ("timeout", "cpu_limit")


def test_sigkill_is_the_cpu_limit_only_if_the_candidate_ended_first() -> None:
    # The host SIGKILLs the candidate once the tests ended; that is not a limit.
    assert _outcome(_ending(signal.SIGKILL, True), _FAILED, Limits()) == ("timeout", "cpu_limit")
    assert _outcome(_ending(signal.SIGKILL, False), _FAILED, Limits()) == (
        "failed", "tests_failed")
    assert _outcome(_ending(None, False), _FAILED, Limits()) == ("failed", "tests_failed")
