"""Group commit: concurrent asyncio appends share transactions, and each waits for its commit."""

from __future__ import annotations

import asyncio
import threading

import pytest

from jurat.errors import LedgerError
from jurat.ledger import Entry, Ledger, LogSigner, ReviewSlot

from . import receipt_batch
from .conftest import Target


async def _append_all(ledger: Ledger, n: int, *, max_batch: int = 1024) -> tuple[list[Entry], int]:
    async with ledger.group_commit(max_batch=max_batch) as log:
        entries = await asyncio.gather(
            *(
                log.append("sample_recorded", f"job-{i % 7}", {"i": i}, campaign_id="c")
                for i in range(n)
            )
        )
        return list(entries), log.batches


def test_concurrent_appends_share_transactions_and_all_commit(
    target: Target, signer: LogSigner
) -> None:
    with target.open() as ledger:
        entries, batches = asyncio.run(_append_all(ledger, 300))
        assert sorted(e.seq for e in entries) == list(range(300))
        assert batches < 300  # appends that arrived together shared a commit
        for entry in entries:
            assert ledger.entry(entry.seq) == entry
        ledger.checkpoint(signer)
        report = ledger.verify(public_key=signer.public_key)
        assert (report.tree_size, report.warnings) == (300, ())
        assert sorted(p["i"] for p in ledger.samples_for_job("job-3")) == list(range(3, 300, 7))


def test_max_batch_bounds_a_transaction(target: Target) -> None:
    with target.open() as ledger:
        entries, batches = asyncio.run(_append_all(ledger, 50, max_batch=4))
        assert len(entries) == 50 and batches >= 13


def test_a_caller_resumes_only_once_its_entry_is_committed(target: Target) -> None:
    with target.open() as ledger, target.open() as observer:
        loop_thread: list[int] = []
        commit_threads: set[int] = set()
        real_commit = ledger._commit

        def commit(requests):  # type: ignore[no-untyped-def]
            commit_threads.add(threading.get_ident())
            return real_commit(requests)

        ledger._commit = commit  # type: ignore[method-assign]

        async def run() -> None:
            loop_thread.append(threading.get_ident())
            async with ledger.group_commit() as log:

                async def one(i: int) -> None:
                    entry = await log.append("decision", f"job-{i}", {"i": i})
                    # Another connection sees it: it was committed before we resumed.
                    assert observer.entry(entry.seq).payload == {"i": i}

                await asyncio.gather(*(one(i) for i in range(40)))

        asyncio.run(run())
        # The commit (and its fsync) never ran on the event loop's thread.
        assert commit_threads and loop_thread[0] not in commit_threads


def test_a_refused_receipt_fails_alone(target: Target) -> None:
    with target.open() as ledger:

        async def run() -> list[Entry | BaseException]:
            async with ledger.group_commit() as log:
                return await asyncio.gather(
                    log.append("decision", "job-1", {"n": 1}),
                    log.append_receipt(
                        "job-2",
                        b"r",
                        campaign_id="c",
                        artifact_id="a",
                        review=ReviewSlot(version=2, supersedes="0" * 64),
                    ),
                    log.append_receipt(
                        "job-3",
                        b"r3",
                        campaign_id="c",
                        artifact_id="a",
                        review=ReviewSlot(version=1),
                    ),
                    log.append("decision", "job-4", {"n": 4}),
                    return_exceptions=True,
                )

        results = asyncio.run(run())
        assert isinstance(results[1], LedgerError) and "review version" in str(results[1])
        ok = [r for r in results if isinstance(r, Entry)]
        assert [e.job_id for e in ok] == ["job-1", "job-3", "job-4"]
        assert ledger.size() == 3 and ledger.receipt_for_job("job-3") == b"r3"

        # A second receipt for the same artifact supersedes the first, in one batch too.
        async def again() -> Entry:
            async with ledger.group_commit() as log:
                slot = ledger.next_review("c", "a")
                return await log.append_receipt(
                    "job-5", b"r5", campaign_id="c", artifact_id="a", review=slot
                )

        entry = asyncio.run(again())
        assert entry.payload["review_version"] == 2
        assert [e.kind for e in ledger.entries(after_seq=2)] == ["supersession", "receipt"]


def test_bad_appends_fail_at_the_caller_and_closed_writers_refuse(target: Target) -> None:
    with target.open() as ledger:

        async def run() -> None:
            async with ledger.group_commit() as log:
                with pytest.raises(LedgerError, match="unknown entry kind"):
                    await log.append("nonsense", "j", {})
                with pytest.raises(LedgerError, match="cannot be stored"):
                    await log.append("decision", "j", {"x": float("nan")})
            with pytest.raises(LedgerError, match="not open"):
                await log.append("decision", "j", {})

        asyncio.run(run())
        assert ledger.size() == 0


def test_a_cancelled_writer_leaves_no_caller_waiting(target: Target) -> None:
    with target.open() as ledger:

        async def run() -> list[Entry | BaseException]:
            log = ledger.group_commit()
            await log.__aenter__()
            calls = [asyncio.create_task(log.append("decision", f"j{i}", {})) for i in range(20)]
            await asyncio.sleep(0)
            assert log._task is not None
            log._task.cancel()
            results = await asyncio.gather(*calls, return_exceptions=True)
            await log.aclose()
            return results

        results = asyncio.run(run())
        committed = [r for r in results if isinstance(r, Entry)]
        failed = [r for r in results if isinstance(r, LedgerError)]
        assert len(committed) + len(failed) == 20
        assert all("may or may not" in str(f) for f in failed)
        # Whatever was acknowledged is there; nothing beyond a whole batch is.
        assert ledger.size() >= len(committed)
        assert ledger.verify().tree_size == ledger.size()


def test_receipts_of_one_batch_see_each_other_and_what_is_stored(target: Target) -> None:
    """The batch reads the stored receipts once; later receipts of the same batch see the
    earlier ones: a v2 superseding a v1 of the same batch is accepted, the same receipt
    again is the stored entry, another receipt for a job that has one is refused."""
    with target.open() as ledger:
        first = receipt_batch.store_first(ledger)

        async def run() -> list[Entry | BaseException]:
            async with ledger.group_commit() as log:
                return await receipt_batch.append_batch(log)

        receipt_batch.check_batch(ledger, first, asyncio.run(run()))


def test_campaign_history_names_the_jobs_and_the_receipted_artifacts(target: Target) -> None:
    with target.open() as ledger:
        assert ledger.campaign_history("c").jobs == frozenset()
        ledger.append("job_received", "job-1", {}, campaign_id="c", artifact_id="a1")
        ledger.append("job_received", "job-9", {}, campaign_id="other", artifact_id="a1")
        ledger.append_receipt("job-2", b"r", campaign_id="c", artifact_id="a2",
                              review=ReviewSlot(version=1))
        history = ledger.campaign_history("c")
        assert history.jobs == {"job-1", "job-2"}
        assert history.receipted == {"a2"}
