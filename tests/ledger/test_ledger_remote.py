"""One process writes for others: ``remote_group_commit`` in a worker, ``AppendServer`` in
the writer (the shape of ``jurat run --workers``, ledger/_remote.py).

Each "worker" here is a thread with its own event loop and its own channel; the test's
main thread is the writer, serving the channels as the run's parent does.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from multiprocessing.connection import wait
from typing import Any

import pytest

from jurat.errors import LedgerError
from jurat.ledger import (
    AppendServer,
    Entry,
    GroupCommit,
    LogSigner,
    remote_group_commit,
)

from . import receipt_batch
from .conftest import Target

Work = Callable[[GroupCommit], Awaitable[Any]]


def _serve(server: AppendServer, *works: Work) -> list[Any]:
    """Run each ``work`` in a worker thread appending through its own channel, and serve
    every channel from this thread until the workers end; their results, in order."""
    results: list[Any] = [None] * len(works)

    def worker(i: int, work: Work, channel: Any) -> None:
        async def main() -> Any:
            async with remote_group_commit(channel) as log:
                return await work(log)

        try:
            results[i] = asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            results[i] = exc

    threads = [threading.Thread(target=worker, args=(i, work, server.channel()))
               for i, work in enumerate(works)]
    for thread in threads:
        thread.start()
    # Each worker closes its channel as its group commit closes: served until all have.
    while server.sockets:
        server.serve(wait(server.sockets, 0.05))  # type: ignore[arg-type]
    for thread in threads:
        thread.join()
    return results


def _appends(n: int, job: str) -> Work:
    async def work(log: GroupCommit) -> list[Entry]:
        return list(await asyncio.gather(*(
            log.append("sample_recorded", job, {"i": i, "x": 1.0}, campaign_id="c")
            for i in range(n))))

    return work


def test_two_workers_appends_commit_in_shared_transactions(target: Target,
                                                          signer: LogSigner) -> None:
    with target.open() as ledger:
        server = AppendServer(ledger)
        first, second = _serve(server, _appends(150, "job-a"), _appends(150, "job-b"))
        entries = [*first, *second]
        assert sorted(e.seq for e in entries) == list(range(300))
        assert server.batches < 300  # what arrived together shared a transaction
        for entry in entries:
            # The worker's entry, payload included, is the stored one (1.0 is stored as 1).
            assert ledger.entry(entry.seq) == entry
            assert entry.payload["x"] == 1
        ledger.checkpoint(signer)
        report = ledger.verify(public_key=signer.public_key)
        assert (report.tree_size, report.warnings) == (300, ())


def test_a_workers_append_returns_once_its_entry_is_stored(target: Target) -> None:
    with target.open() as ledger:
        seen: list[bool] = []

        async def work(log: GroupCommit) -> None:
            with target.open() as observer:  # another connection, as another process reads
                for i in range(20):
                    entry = await log.append("sample_recorded", "job", {"i": i})
                    seen.append(observer.entry(entry.seq) == entry)

        (result,) = _serve(AppendServer(ledger), work)
        assert result is None and seen == [True] * 20


def test_receipts_from_a_worker_keep_their_rules(target: Target) -> None:
    """The same batch rules as in one process: a stored receipt again is the stored entry
    (its payload sent back), another receipt for a job that has one and a stale review
    version are each refused alone."""
    with target.open() as ledger:
        first = receipt_batch.store_first(ledger)
        (results,) = _serve(AppendServer(ledger), receipt_batch.append_batch)
        receipt_batch.check_batch(ledger, first, results)


def test_a_failed_transaction_fails_every_worker_waiting_on_it(target: Target) -> None:
    with target.open() as ledger:
        def broken(requests: Any, **_: Any) -> Any:
            raise LedgerError("disk I/O error")

        ledger._commit = broken  # type: ignore[method-assign]

        async def work(log: GroupCommit) -> Entry:
            return await log.append("sample_recorded", "job", {"i": 1})

        results = _serve(AppendServer(ledger), work, work)
        for result in results:
            # The refusal as a commit thread would hand it on, word for word.
            assert isinstance(result, LedgerError) and str(result) == "disk I/O error", result
        assert ledger.size() == 0


def test_a_worker_whose_writer_is_gone_is_told_its_appends_may_not_be_in(
        target: Target) -> None:
    with target.open() as ledger:
        server = AppendServer(ledger)
        channel = server.channel()
        server.close()  # the parent went away before the worker's first batch

        async def main() -> None:
            async with remote_group_commit(channel) as log:
                await log.append("sample_recorded", "job", {"i": 1})

        with pytest.raises(LedgerError, match="ledger writer .* stopped"):
            asyncio.run(main())
        assert ledger.size() == 0


def test_a_worker_that_goes_away_is_dropped_and_the_others_go_on(target: Target) -> None:
    with target.open() as ledger:
        server = AppendServer(ledger)
        gone = server.channel()
        gone.close()
        (entries,) = _serve(server, _appends(10, "job"))
        assert sorted(e.seq for e in entries) == list(range(10))
        assert server.sockets == []


def test_a_channel_is_not_inherited_by_the_processes_a_worker_starts(target: Target) -> None:
    """A worker starts sandboxes for candidate code (checks/_sandbox.py): a channel they
    inherited would let a candidate append to the ledger. Neither end crosses an exec."""
    with target.open() as ledger:
        server = AppendServer(ledger)
        theirs = server.channel()
        try:
            assert not theirs.get_inheritable()
            assert not any(sock.get_inheritable() for sock in server.sockets)
        finally:
            theirs.close()
            server.close()
