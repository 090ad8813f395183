"""A run's artifacts streamed through their jobs, a bounded number at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Iterator
from typing import Any

from jurat.errors import BudgetExhausted, ConfigError, IntakeError, JuratError
from jurat.models import Artifact

__all__ = ["still_as_checked", "stream_jobs"]


async def stream_jobs(artifacts: Iterable[tuple[int, Artifact]], limit: int,
                      job: Callable[[int, Artifact], Coroutine[Any, Any, None]]) -> None:
    """``job(index, artifact)`` for each (index, artifact), at most ``limit`` at once.

    The next artifact is read only when a job slot is free, so no more than ``limit``
    artifacts are held. The first job that fails stops the stream: no new job starts, the
    others are cancelled (what they recorded is durable; a rerun resumes it), and its
    exception is raised. A job stopped by the campaign's ``[budget]`` (BudgetExhausted)
    stops the stream too, but the others run on until they end: their calls in flight
    were paid for, so their answers are recorded, not cancelled. Cancelled itself (an
    interrupt), it cancels its jobs and waits for them, so none outlives the run.
    """
    slots = asyncio.Semaphore(limit)
    running: set[asyncio.Task[None]] = set()
    failed: list[BaseException] = []

    def finished(task: asyncio.Task[None]) -> None:
        running.discard(task)
        slots.release()
        error = None if task.cancelled() else task.exception()
        if error is not None:
            failed.append(error)

    try:
        for index, artifact in artifacts:
            await slots.acquire()
            if failed:
                break
            task = asyncio.create_task(job(index, artifact))
            running.add(task)
            task.add_done_callback(finished)
        while running and not _fatal(failed):
            await asyncio.wait(set(running), return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(set(running))
    if failed:
        raise _fatal(failed) or failed[0]


def _fatal(failed: list[BaseException]) -> BaseException | None:
    """The first failure that cancels the other jobs: any but the budget's."""
    return next((error for error in failed if not isinstance(error, BudgetExhausted)), None)


def still_as_checked(artifacts: Iterator[tuple[int, Artifact]]
                     ) -> Iterator[tuple[int, Artifact]]:
    """The artifacts, read again as the run goes; a file that no longer passes intake (a
    dataset edited during the run) stops the run as a failure part-way (exit 4), not as an
    input error (exit 3, which says nothing was written)."""
    try:
        yield from artifacts
    except (ConfigError, IntakeError) as exc:
        raise JuratError(
            f"{exc.diagnostics()}\nthe campaign's files changed after they were checked; what "
            "completed is in the ledger, and running the same command again resumes from it"
        ) from exc
