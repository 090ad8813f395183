"""A separate process appending to a ledger, for the concurrency and SIGKILL tests.

usage: ledger_child.py MODE URL SCHEMA|- CHECKPOINT KEY RUN [COUNT]

``append``: COUNT plain entries, then exit. ``fault``: simulated receipts
forever (every 5th followed by a checkpoint), printing ``<seq> <job id>
<receipt sha256>`` after each commit, until killed. ``group``: COUNT asyncio
workers appending through one group commit forever (samples from every
worker, receipts from worker 0, a checkpoint now and then from worker 1),
printing ``<S|R> <seq> <job id> <sha256> <batch>`` as each append returns.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys

from jurat.ledger import Ledger, LogSigner, job_id, load_or_create_log_key, open_ledger

POLICY = hashlib.sha256(b"policy").hexdigest()


async def group(ledger: Ledger, signer: LogSigner, run: str, workers: int) -> None:
    async with ledger.group_commit() as log:

        async def worker(w: int) -> None:
            i = 0
            while True:
                if w == 0 and i % 3 == 2:
                    receipt = f"receipt run={run} i={i} ".encode() * 20
                    subject = f"a{i % 3}"
                    job = hashlib.sha256(f"{run}-{w}-{i}".encode()).hexdigest()
                    slot = ledger.next_review("camp", subject)
                    entry = await log.append_receipt(
                        job, receipt, campaign_id="camp", artifact_id=subject, review=slot
                    )
                    digest = hashlib.sha256(receipt).hexdigest()
                    print("R", entry.seq, job, digest, log.batches, flush=True)
                else:
                    marker = f"{run}-{w}-{i}"
                    entry = await log.append("sample_recorded", f"job-{run}-{w}", {"m": marker})
                    digest = hashlib.sha256(marker.encode()).hexdigest()
                    print("S", entry.seq, entry.job_id, digest, log.batches, flush=True)
                if w == 1 and i % 25 == 24:
                    await asyncio.to_thread(ledger.checkpoint, signer)
                i += 1

        await asyncio.gather(*(worker(w) for w in range(workers)))


def main() -> None:
    mode, url, schema, checkpoint, key, run = sys.argv[1:7]
    ledger = open_ledger(url, schema=None if schema == "-" else schema, checkpoint_path=checkpoint)
    signer = load_or_create_log_key(key)
    print("ready", flush=True)
    if mode == "group":
        asyncio.run(group(ledger, signer, run, int(sys.argv[7])))
        return
    if mode == "append":
        for i in range(int(sys.argv[7])):
            entry = ledger.append("sample_recorded", f"{run}", {"run": run, "i": i})
            print(entry.seq, flush=True)
        return
    i = 0
    while True:
        artifact = hashlib.sha256(f"{run}-{i}".encode()).hexdigest()
        job = job_id(artifact, "task/1", POLICY, "jurat-test/1", 0)
        receipt = f"receipt run={run} i={i} ".encode() * 20
        subject = f"a{i % 3}"
        slot = ledger.next_review("camp", subject)
        entry = ledger.append_receipt(
            job, receipt, campaign_id="camp", artifact_id=subject, review=slot
        )
        print(entry.seq, job, hashlib.sha256(receipt).hexdigest(), flush=True)
        if i % 5 == 4:
            ledger.checkpoint(signer)
        i += 1


if __name__ == "__main__":
    main()
