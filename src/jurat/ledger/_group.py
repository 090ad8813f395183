"""Group commit: appends from concurrent asyncio tasks share one durable transaction.

``async with ledger.group_commit() as log: entry = await log.append(...)``

Each ``append`` is checked on the caller's task and queued. One writer task
takes everything queued so far (up to ``max_batch``), hands it to its
committer, and only after that transaction has committed resolves each
caller's future: a caller resumes once its entry is durable, exactly as with
:meth:`Ledger.append`, and the event loop never waits on the commit's fsync.
While one batch commits, the next one gathers, so under load the batch size
follows the commit latency without any timer.

Two committers: ``ThreadCommitter`` writes the transaction on a dedicated
thread of this process (``Ledger.group_commit``); ``RemoteCommitter``
(``_remote``) sends the batch to the process that writes the ledger for a
run's workers and waits for its answer (``remote_group_commit``).

A crash loses at most the batch being committed, none of whose callers has
resumed; the database's transaction makes that batch all or nothing, so
there is never a gap and never a half-written receipt.

Cancelling a waiting caller does not withdraw its entry: it may already be
in the transaction being committed, as with any write in flight.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from jurat.errors import LedgerError
from jurat.ledger._append import AppendRequest, prepare
from jurat.ledger._jobs import receipt_payload
from jurat.ledger._models import Entry, ReviewSlot

if TYPE_CHECKING:
    from jurat.ledger._store import Ledger

__all__ = ["Committer", "GroupCommit", "ThreadCommitter"]

_Pending = tuple[AppendRequest, "asyncio.Future[Entry]"]


class Committer(Protocol):
    """Writes one batch in one transaction; each request gets its entry or its refusal.

    ``commit`` is awaited by one task at a time, batch after batch; an exception fails
    the whole batch (nothing of it was committed, or its outcome is unknown).
    """

    async def commit(self, requests: list[AppendRequest]) -> list[Entry | LedgerError]: ...

    async def aclose(self) -> None:
        """Let a commit in progress finish, then release what the committer holds."""


class ThreadCommitter:
    """Commits through ``Ledger._commit`` on a thread of its own."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        # One thread: batches commit in order, and a commit never waits for
        # the default executor's threads, which the caller may keep busy.
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="jurat-ledger-commit")

    async def commit(self, requests: list[AppendRequest]) -> list[Entry | LedgerError]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._ledger._commit, requests)

    async def aclose(self) -> None:
        # The writer was cancelled while a commit ran on the thread: let that commit
        # finish before the ledger closes.
        self._executor.shutdown(wait=True)


class GroupCommit:
    """Concurrent durable appends sharing transactions; open with :meth:`Ledger.group_commit`
    (or ``remote_group_commit`` in a run's worker process)."""

    def __init__(self, committer: Committer, *, max_batch: int = 1024) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._committer = committer
        self._max_batch = max_batch
        self._queue: list[_Pending] = []
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self.batches = 0
        """Transactions committed so far."""
        self.appended = 0
        """Requests answered so far (entries, or refusals)."""

    async def __aenter__(self) -> GroupCommit:
        self._task = asyncio.create_task(self._run(), name="jurat-ledger-group-commit")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Commit everything queued, then stop the writer."""
        self._closing = True
        self._wake.set()
        task = self._task
        try:
            if task is not None:
                # wait() rather than await: a writer cancelled from outside has
                # already failed its callers; only our own cancellation raises.
                await asyncio.wait([task])
                if not task.cancelled() and task.exception() is not None:
                    raise LedgerError("group commit writer failed") from task.exception()
        finally:
            await self._committer.aclose()

    async def append(
        self,
        kind: str,
        job_id: str,
        payload: dict[str, Any],
        *,
        campaign_id: str | None = None,
        artifact_id: str | None = None,
    ) -> Entry:
        """Append one entry; return it once the transaction holding it has committed.

        Same checks and same result as :meth:`Ledger.append`.
        """
        request = prepare(kind, job_id, payload, campaign_id=campaign_id, artifact_id=artifact_id)
        if self._closing or self._task is None:
            raise LedgerError("group commit is not open (use `async with ledger.group_commit()`)")
        if self._task.done():
            cause = None if self._task.cancelled() else self._task.exception()
            raise LedgerError("group commit writer stopped") from cause
        future: asyncio.Future[Entry] = asyncio.get_running_loop().create_future()
        self._queue.append((request, future))
        self._wake.set()
        return await future

    async def append_receipt(
        self,
        job_id: str,
        receipt: bytes,
        *,
        campaign_id: str,
        artifact_id: str,
        review: ReviewSlot,
        extra: dict[str, Any] | None = None,
    ) -> Entry:
        """:meth:`Ledger.append_receipt` through the group commit."""
        payload = receipt_payload(
            receipt, review_version=review.version, supersedes=review.supersedes, extra=extra
        )
        return await self.append(
            "receipt", job_id, payload, campaign_id=campaign_id, artifact_id=artifact_id
        )

    async def _run(self) -> None:
        batch: list[_Pending] = []
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._queue:
                    batch = self._queue[: self._max_batch]
                    del self._queue[: self._max_batch]
                    requests = [request for request, _ in batch]
                    try:
                        results = await self._committer.commit(requests)
                    except Exception as exc:  # noqa: BLE001 - handed to every caller of the batch
                        results = [_batch_failed(exc) for _ in batch]
                    self.batches += 1
                    self.appended += len(batch)
                    for (_, future), result in zip(batch, results, strict=True):
                        if future.done():  # the caller was cancelled
                            continue
                        if isinstance(result, Exception):
                            future.set_exception(result)
                        else:
                            future.set_result(result)
                    batch = []
                if self._closing:
                    return
        finally:
            # Stopped from outside (cancelled): nobody may wait forever, and
            # nobody may take an unknown outcome for a refusal.
            for _, future in [*batch, *self._queue]:
                if not future.done():
                    future.set_exception(
                        LedgerError(
                            "group commit stopped before this append was confirmed; "
                            "it may or may not be in the ledger"
                        )
                    )
            self._queue.clear()


def _batch_failed(exc: Exception) -> LedgerError:
    # One exception object per caller: several tasks re-raising the same
    # object would share (and overwrite) one traceback.
    if isinstance(exc, LedgerError):
        error: LedgerError = type(exc)(str(exc))
    else:
        error = LedgerError(f"appending to the ledger failed: {exc}")
    error.__cause__ = exc
    return error
