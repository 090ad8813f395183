"""One batch of receipts that exercises every rule a batch applies to them, for the tests of
each way to append one (``Ledger.group_commit`` and a worker's ``remote_group_commit``)."""

from __future__ import annotations

import asyncio
import hashlib

from jurat.errors import LedgerError
from jurat.ledger import Entry, GroupCommit, Ledger, ReviewSlot


def store_first(ledger: Ledger) -> Entry:
    """The receipt stored before the batch: job-0's, for artifact a0."""
    return ledger.append_receipt("job-0", b"r0", campaign_id="c", artifact_id="a0",
                                 review=ReviewSlot(version=1))


async def append_batch(log: GroupCommit) -> list[Entry | BaseException]:
    """A v1 and a v2 superseding it, the stored receipt again, another receipt for the job
    that has it, and a second v2: appended together, so they share one batch."""
    v1 = hashlib.sha256(b"r1").hexdigest()
    return await asyncio.gather(
        log.append_receipt("job-1", b"r1", campaign_id="c", artifact_id="a",
                           review=ReviewSlot(version=1)),
        log.append_receipt("job-2", b"r2", campaign_id="c", artifact_id="a",
                           review=ReviewSlot(version=2, supersedes=v1)),
        log.append_receipt("job-0", b"r0", campaign_id="c", artifact_id="a0",
                           review=ReviewSlot(version=1)),
        log.append_receipt("job-0", b"other", campaign_id="c", artifact_id="a0",
                           review=ReviewSlot(version=1)),
        log.append_receipt("job-3", b"r3", campaign_id="c", artifact_id="a",
                           review=ReviewSlot(version=2, supersedes=v1)),
        return_exceptions=True,
    )


def check_batch(ledger: Ledger, first: Entry, results: list[Entry | BaseException]) -> None:
    """What ``append_batch`` must have given and left in the ledger."""
    assert isinstance(results[0], Entry) and isinstance(results[1], Entry)
    assert results[1].payload["review_version"] == 2
    assert results[2] == first  # the stored entry, payload and all
    assert isinstance(results[3], LedgerError) and "different receipt" in str(results[3])
    # v2 was taken a moment earlier in the same batch: the next is v3.
    assert isinstance(results[4], LedgerError) and "expects version 3" in str(results[4])
    kinds = [e.kind for e in ledger.entries(after_seq=first.seq)]
    assert kinds == ["receipt", "supersession", "receipt"]
    assert ledger.verify().tree_size == ledger.size()  # raises on any break
