"""The circuit breaker: a judge whose first calls all get no answer stops being dispatched.

An endpoint that is down answers nothing, however often it is asked: without a breaker a
run of 48 samples against a closed port made 192 attempts before it ended (issue 27).
Only the first calls count: once a judge has answered (validly or not), a later outage is
caught job by job instead (a job where a judge answered none of its samples is
incomplete, runner/_run.py). The breaker belongs to one ``Engine``, so to one run (one
worker process of it); the next run starts closed.
"""

from __future__ import annotations

from collections import Counter

from jurat.errors import JobIncomplete, JuratError, TransportError
from jurat.judges._protocol import NO_ANSWER_KINDS

__all__ = ["BREAKER_CALLS", "Breaker", "no_answer"]

#: Calls in a row without an answer, before the judge's first answer, that open the
#: breaker: three samples' worth at the default ``retries = 3``.
BREAKER_CALLS = 12


def no_answer(error: JuratError | str | None) -> bool:
    """Whether a call's error (or a vote's error kind) means no answer came at all."""
    if isinstance(error, TransportError):
        return error.kind in NO_ANSWER_KINDS
    return isinstance(error, str) and error in NO_ANSWER_KINDS


class Breaker:
    """Counts each judge's calls without an answer until its first answer."""

    def __init__(self, calls: int = BREAKER_CALLS) -> None:
        self._calls = calls
        self._answered: set[str] = set()
        self._failed: dict[str, Counter[str]] = {}

    def check(self, judge: str) -> None:
        """Raise JobIncomplete when ``judge`` may not be dispatched any more."""
        failed = self._failed.get(judge)
        if failed is None or judge in self._answered or failed.total() < self._calls:
            return
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(failed.items()))
        raise JobIncomplete(
            f"judge {judge} got no answer to its first {failed.total()} calls ({kinds}), so "
            "it is not called again in this run and nothing it was to judge is signed "
            "(fix: check its endpoint, then run the same command again: only the samples "
            "without an answer are asked again)", judge=judge)

    def record(self, judge: str, error: JuratError | None) -> None:
        """Count one finished call of ``judge``."""
        if judge in self._answered:
            return
        if isinstance(error, TransportError) and no_answer(error):
            self._failed.setdefault(judge, Counter())[error.kind] += 1
        else:
            self._answered.add(judge)
